/* costs/cdb_int.h — the cost database's internals, shared by costs/cdb_*.c.
 *
 * Samples live in series: one per kernel launch shape on a device (points
 * keyed by the number of work-groups) and one per device and transfer
 * direction (points keyed by bytes). A point keeps its most recent CDB_KEEP
 * samples in a ring. Strings (identities, kernel names) are interned; the
 * three hash tables hold ids + 1 (0: empty slot). */
#ifndef CLRR_CDB_INT_H
#define CLRR_CDB_INT_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "costs/cdb.h"

#define CDB_HEADER "clrr-costs"
#define CDB_CAN '\x18'        /* last byte of a line cut short and closed by a later appender */

enum { CDB_SER_KERNEL = 0, CDB_SER_H2D = 1, CDB_SER_D2H = 2 };

/* A growable byte buffer. */
typedef struct cdb_buf {
    char *p;
    size_t len, cap;
} cdb_buf;

/* An open-addressing table of ids (slot: id + 1, 0 empty); capacity a power of two. */
typedef struct cdb_tab {
    uint32_t *slot;
    size_t cap, used;
} cdb_tab;

/* What a series is of; memset to 0 before filling so that it compares with memcmp. */
typedef struct cdb_skey {
    uint32_t kind;            /* CDB_SER_* */
    uint32_t ident;           /* interned identity */
    uint32_t kernel;          /* interned kernel name (kernels only) */
    uint32_t dim;
    uint8_t program[16];
    uint64_t gsz[3], lsz[3];
} cdb_skey;

typedef struct cdb_series {
    cdb_skey key;
    uint64_t hash;
    uint32_t *pts;            /* its points, in the order first seen */
    uint32_t npts, cap_pts;
    int dirty;                /* a sample was added since the cache was made */
    /* cache: the trusted points, x ascending (what cdb_curve points into) */
    uint64_t *cx;
    double *cy;
    unsigned *cn;
    unsigned ncache;
} cdb_series;

typedef struct cdb_point {
    uint64_t x;               /* work-groups or bytes */
    uint32_t series;
    uint32_t n, head, cap;    /* ring of the latest samples: n used, head = next to write */
    uint64_t *ring;
} cdb_point;

struct cdb {
    char *path;
    char **strs;              /* interned strings */
    uint64_t *strh;
    uint32_t nstrs, cap_strs;
    cdb_tab strtab;
    cdb_series *ser;
    uint32_t nser, cap_ser;
    cdb_tab sertab;
    cdb_point *pt;
    uint32_t npt, cap_pt;
    cdb_tab pttab;
    cdb_device *devs;         /* the latest snapshot (strings owned, one block per device) */
    unsigned ndevs;
    struct cdb_wrec *tuned;   /* tuned local sizes (`w` records), in file order */
    size_t ntuned, cap_tuned;
    double layer_call[CDB_KEEP], layer_fixed[CDB_KEEP];   /* `l` records: a ring of the latest */
    unsigned nlayer;          /* records seen (the ring holds the latest CDB_KEEP) */
    struct cdb_frec *feats;   /* launch features (`f` records), in file order */
    size_t nfeats, cap_feats;
    cdb_buf pend;             /* lines added, not yet flushed */
    int cancel_next;          /* a flush failed within its lines: the next one starts with CAN '\n' */
};

/* A tuned local size as stored: the launch's series key and the decision. */
typedef struct cdb_wrec {
    cdb_skey key;             /* kind CDB_SER_KERNEL */
    cdb_tuned t;
} cdb_wrec;
/* A launch's features as stored (cdb_feat.c): its series key (ident 0) and the vector. */
typedef struct cdb_frec {
    cdb_skey key;             /* kind CDB_SER_KERNEL, ident 0 */
    char *vec;                /* "name=value,..." (owned) */
} cdb_frec;
/* cdb_feat.c: one features record in memory (CDB_OK or CDB_ERR_NOMEM); frees them all */
cdb_status cdb_feat_store(cdb *db, uint32_t kernel, const cdb_key *k, const char *vec);
void cdb_feat_free(cdb *db);
/* cdb_feat.c: whether @p vec is a well-formed vector (COSTS.md, `f`) */
int cdb_feat_vec_ok(const char *vec);

/* cdb_store.c: one tuned record in memory (CDB_OK or CDB_ERR_NOMEM). */
cdb_status cdb_tuned_store(cdb *db, uint32_t ident, uint32_t kernel, const cdb_key *k, const cdb_tuned *t);

/* cdb_store.c: one layer record in memory. */
void cdb_layer_store(cdb *db, uint64_t calls, uint64_t call_ns, uint64_t fixed_ns);

/* cdb_store.c */
uint64_t cdb_hash(const void *p, size_t n, uint64_t h);
int cdb_grow(void **p, size_t *cap, size_t need, size_t elem);
int cdb_buf_add(cdb_buf *b, const char *s, size_t n);
int cdb_buf_printf(cdb_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* the interned string's id, or -1 (find) / -2 (out of memory, intern) */
int64_t cdb_str_find(const cdb *db, const char *s, size_t n);
int64_t cdb_str_intern(cdb *db, const char *s, size_t n);
/* fills @p sk for launch @p k (sizes beyond dim normalized) */
void cdb_skey_kernel(cdb_skey *sk, uint32_t ident, uint32_t kernel, const cdb_key *k);
void cdb_skey_xfer(cdb_skey *sk, uint32_t ident, int dir);
/* the series' index, or -1 (find) / -2 (out of memory, make) */
int64_t cdb_series_find(const cdb *db, const cdb_skey *sk);
/* one sample into the point (series, x), made when new: CDB_OK or CDB_ERR_NOMEM */
cdb_status cdb_sample(cdb *db, const cdb_skey *sk, uint64_t x, uint64_t ns);
void cdb_store_free(cdb *db);
/* 32 lowercase hex digits of @p b */
void cdb_hex16(char out[33], const uint8_t b[16]);

/* cdb_dev.c */
int cdb_str_ok(const char *s, int may_be_empty);
/* a snapshot device whose strings are copied into one block; 0 or -1 */
int cdb_dev_copy(cdb_device *dst, const char *identity, const char *type, const char *name, const char *platform);
void cdb_dev_free(cdb_device *d);
void cdb_devs_replace(cdb *db, cdb_device *devs, unsigned n);

/* cdb_parse.c: reads @p len bytes of @p text (NUL-terminated at len, modified in place) into @p db */
cdb_status cdb_parse(cdb *db, char *text, size_t len, char *err, size_t err_cap);

/* cdb_file.c */
void cdb_errf(char *err, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
