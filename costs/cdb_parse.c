/* costs/cdb_parse.c — reading the file's records (COSTS.md) into a cdb.
 * The file is untrusted: every field is checked, numbers for overflow, and
 * nothing is allocated beyond what the records hold. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "costs/cdb_int.h"

#define MAX_FIELDS 12   /* the most a known record has (w) */

typedef struct pstate {
    cdb *db;
    size_t line;
    char *err;
    size_t cap;
    int header;               /* the header was read */
    cdb_device *snap;         /* the snapshot being read */
    unsigned snap_want, snap_n, snap_cap;
    size_t snap_line;
} pstate;

#define PERR(ps, ...)                                                                                  \
    do {                                                                                               \
        perr(ps, __VA_ARGS__);                                                                         \
        return CDB_ERR_FORMAT;                                                                         \
    } while (0)

static void __attribute__((format(printf, 2, 3))) perr(pstate *ps, const char *fmt, ...)
{
    char what[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    cdb_errf(ps->err, ps->cap, "%s:%zu: %s", ps->db->path, ps->line, what);
}

static void snap_drop(pstate *ps)
{
    for (unsigned i = 0; i < ps->snap_n; i++)
        cdb_dev_free(&ps->snap[i]);
    free(ps->snap);
    ps->snap = NULL;
    ps->snap_want = ps->snap_n = ps->snap_cap = 0;
}

/* A decimal number: digits only, no sign, no spaces, no overflow. */
static int num(const char *s, uint64_t *v)
{
    uint64_t x = 0;
    if (!*s)
        return 0;
    for (; *s; s++) {
        if (*s < '0' || *s > '9' || x > (UINT64_MAX - (uint64_t)(*s - '0')) / 10)
            return 0;
        x = x * 10 + (uint64_t)(*s - '0');
    }
    *v = x;
    return 1;
}

/* "A,B,C": three numbers. */
static int triple(char *s, uint64_t v[3])
{
    for (int i = 0; i < 3; i++) {
        char *c = strchr(s, ',');
        if ((i < 2) != (c != NULL))
            return 0;
        if (c)
            *c = 0;
        if (!num(s, &v[i]))
            return 0;
        s = c ? c + 1 : s;
    }
    return 1;
}

static int hexval(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

static int hex16(const char *s, uint8_t out[16])
{
    if (strlen(s) != 32)
        return 0;
    for (int i = 0; i < 16; i++) {
        int a = hexval(s[2 * i]), b = hexval(s[2 * i + 1]);
        if (a < 0 || b < 0)
            return 0;
        out[i] = (uint8_t)(a << 4 | b);
    }
    return 1;
}

/* The header "clrr-costs<TAB>MAJOR[.MINOR]": a major version other than ours is refused. */
static cdb_status header(pstate *ps, char **f, unsigned nf)
{
    if (nf != 2 || strcmp(f[0], CDB_HEADER))
        PERR(ps, "not a clrr cost database (the first line is not '%s<TAB>VERSION')", CDB_HEADER);
    const char *v = f[1];
    size_t dl = strspn(v, "0123456789");
    uint64_t major;
    char mj[24];
    if (!dl || dl >= sizeof mj || (v[dl] && (v[dl] != '.' || !v[dl + 1] || strspn(v + dl + 1, "0123456789") != strlen(v + dl + 1))))
        PERR(ps, "bad format version in the header");
    memcpy(mj, v, dl);
    mj[dl] = 0;
    if (!num(mj, &major) || major != CDB_FORMAT_VERSION)
        PERR(ps, "cost database format version %s; this clrr reads version %d", strlen(v) < 40 ? v : mj,
             CDB_FORMAT_VERSION);
    ps->header = 1;
    return CDB_OK;
}

#define NUMF(ps, s, v, what)                                                                           \
    do {                                                                                               \
        if (!num(s, v))                                                                                \
            PERR(ps, "%s is not a number", what);                                                      \
    } while (0)

static cdb_status rec_kernel(pstate *ps, char **f, unsigned nf)
{
    cdb_key k;
    uint64_t dim, groups, ns, t;
    if (nf != 10)
        PERR(ps, "kernel record: 10 fields expected, %u found", nf);
    if (!*f[1])
        PERR(ps, "kernel record: empty device identity");
    if (!hex16(f[2], k.program))
        PERR(ps, "kernel record: the program hash is not 32 hexadecimal digits");
    if (!*f[3])
        PERR(ps, "kernel record: empty kernel name");
    NUMF(ps, f[4], &dim, "kernel record: DIM");
    if (dim < 1 || dim > 3)
        PERR(ps, "kernel record: DIM %llu is not 1, 2 or 3", (unsigned long long)dim);
    if (!triple(f[5], k.gsz))
        PERR(ps, "kernel record: the global size is not three numbers");
    if (!triple(f[6], k.lsz))
        PERR(ps, "kernel record: the local size is not three numbers");
    NUMF(ps, f[7], &groups, "kernel record: GROUPS");
    NUMF(ps, f[8], &ns, "kernel record: NS");
    NUMF(ps, f[9], &t, "kernel record: UNIXTIME");
    if (!groups || !ns)
        PERR(ps, "kernel record: %s is 0", groups ? "NS" : "GROUPS");
    k.dim = (unsigned)dim;
    k.kernel = f[3];
    int64_t id = cdb_str_intern(ps->db, f[1], strlen(f[1]));
    int64_t kn = id < 0 ? id : cdb_str_intern(ps->db, f[3], strlen(f[3]));
    if (kn < 0)
        return CDB_ERR_NOMEM;
    cdb_skey sk;
    cdb_skey_kernel(&sk, (uint32_t)id, (uint32_t)kn, &k);
    return cdb_sample(ps->db, &sk, groups, ns);
}

/* w: a tuned local size (optimizer/opt_wg.c). */
static cdb_status rec_tuned(pstate *ps, char **f, unsigned nf)
{
    cdb_key k;
    cdb_tuned t;
    uint64_t dim, reps, tm;
    if (nf != 12)
        PERR(ps, "tuned record: 12 fields expected, %u found", nf);
    if (!*f[1])
        PERR(ps, "tuned record: empty device identity");
    if (!hex16(f[2], k.program))
        PERR(ps, "tuned record: the program hash is not 32 hexadecimal digits");
    if (!*f[3])
        PERR(ps, "tuned record: empty kernel name");
    NUMF(ps, f[4], &dim, "tuned record: DIM");
    if (dim < 1 || dim > 3)
        PERR(ps, "tuned record: DIM %llu is not 1, 2 or 3", (unsigned long long)dim);
    if (!triple(f[5], k.gsz) || !triple(f[6], k.lsz) || !triple(f[7], t.local))
        PERR(ps, "tuned record: a size is not three numbers");
    for (unsigned d = 0; d < dim; d++)
        if (!t.local[d])
            PERR(ps, "tuned record: a tuned local size is 0");
    NUMF(ps, f[8], &t.before_ns, "tuned record: BEFORE_NS");
    NUMF(ps, f[9], &t.after_ns, "tuned record: AFTER_NS");
    NUMF(ps, f[10], &reps, "tuned record: REPS");
    NUMF(ps, f[11], &tm, "tuned record: UNIXTIME");
    if (!reps || reps > 1000000)
        PERR(ps, "tuned record: REPS %llu is not 1..1000000", (unsigned long long)reps);
    t.reps = (unsigned)reps;
    k.dim = (unsigned)dim;
    k.kernel = f[3];
    int64_t id = cdb_str_intern(ps->db, f[1], strlen(f[1]));
    int64_t kn = id < 0 ? id : cdb_str_intern(ps->db, f[3], strlen(f[3]));
    if (kn < 0)
        return CDB_ERR_NOMEM;
    return cdb_tuned_store(ps->db, (uint32_t)id, (uint32_t)kn, &k, &t);
}

/* l: what the layer cost in one live run (live/live_layer.c). */
static cdb_status rec_layer(pstate *ps, char **f, unsigned nf)
{
    uint64_t calls, call_ns, fixed_ns, tm;
    if (nf != 6)
        PERR(ps, "layer record: 6 fields expected, %u found", nf);
    if (!*f[1])
        PERR(ps, "layer record: empty device identity");
    NUMF(ps, f[2], &calls, "layer record: CALLS");
    NUMF(ps, f[3], &call_ns, "layer record: CALL_NS");
    NUMF(ps, f[4], &fixed_ns, "layer record: FIXED_NS");
    NUMF(ps, f[5], &tm, "layer record: UNIXTIME");
    if (!calls)
        PERR(ps, "layer record: CALLS is 0");
    cdb_layer_store(ps->db, calls, call_ns, fixed_ns);
    return CDB_OK;
}

/* f: a launch shape's features (cdb_feat.c). */
static cdb_status rec_features(pstate *ps, char **f, unsigned nf)
{
    cdb_key k;
    uint64_t dim, tm;
    if (nf != 8)
        PERR(ps, "features record: 8 fields expected, %u found", nf);
    if (!hex16(f[1], k.program))
        PERR(ps, "features record: the program hash is not 32 hexadecimal digits");
    if (!*f[2])
        PERR(ps, "features record: empty kernel name");
    NUMF(ps, f[3], &dim, "features record: DIM");
    if (dim < 1 || dim > 3)
        PERR(ps, "features record: DIM %llu is not 1, 2 or 3", (unsigned long long)dim);
    if (!triple(f[4], k.gsz) || !triple(f[5], k.lsz))
        PERR(ps, "features record: a size is not three numbers");
    if (!cdb_feat_vec_ok(f[6]))
        PERR(ps, "features record: the vector is not name=value,...");
    NUMF(ps, f[7], &tm, "features record: UNIXTIME");
    k.dim = (unsigned)dim;
    k.kernel = f[2];
    int64_t kn = cdb_str_intern(ps->db, f[2], strlen(f[2]));
    if (kn < 0)
        return CDB_ERR_NOMEM;
    return cdb_feat_store(ps->db, (uint32_t)kn, &k, f[6]);
}

static cdb_status rec_xfer(pstate *ps, char **f, unsigned nf)
{
    uint64_t bytes, ns, t;
    if (nf != 6)
        PERR(ps, "transfer record: 6 fields expected, %u found", nf);
    if (!*f[1])
        PERR(ps, "transfer record: empty device identity");
    int dir = !strcmp(f[2], "h2d") ? CDB_H2D : !strcmp(f[2], "d2h") ? CDB_D2H : -1;
    if (dir < 0)
        PERR(ps, "transfer record: the direction is not h2d or d2h");
    NUMF(ps, f[3], &bytes, "transfer record: BYTES");
    NUMF(ps, f[4], &ns, "transfer record: NS");
    NUMF(ps, f[5], &t, "transfer record: UNIXTIME");
    if (!bytes || !ns)
        PERR(ps, "transfer record: %s is 0", bytes ? "NS" : "BYTES");
    int64_t id = cdb_str_intern(ps->db, f[1], strlen(f[1]));
    if (id < 0)
        return CDB_ERR_NOMEM;
    cdb_skey sk;
    cdb_skey_xfer(&sk, (uint32_t)id, dir);
    return cdb_sample(ps->db, &sk, bytes, ns);
}

static cdb_status rec_snapshot(pstate *ps, char **f, unsigned nf)
{
    uint64_t t, n;
    if (nf != 3)
        PERR(ps, "snapshot record: 3 fields expected, %u found", nf);
    NUMF(ps, f[1], &t, "snapshot record: UNIXTIME");
    NUMF(ps, f[2], &n, "snapshot record: N");
    if (!n || n > CDB_MAX_DEVICES)
        PERR(ps, "snapshot record: %llu devices (1 to %d)", (unsigned long long)n, CDB_MAX_DEVICES);
    ps->snap_want = (unsigned)n;
    ps->snap_line = ps->line;
    return CDB_OK;
}

static cdb_status rec_device(pstate *ps, char **f, unsigned nf)
{
    uint64_t idx;
    if (!ps->snap_want)
        PERR(ps, "device record outside a snapshot");
    if (nf != 6)
        PERR(ps, "device record: 6 fields expected, %u found", nf);
    NUMF(ps, f[1], &idx, "device record: INDEX");
    if (idx != ps->snap_n)
        PERR(ps, "device record: index %llu, %u expected", (unsigned long long)idx, ps->snap_n);
    if (!*f[2])
        PERR(ps, "device record: empty type");
    if (!*f[3])
        PERR(ps, "device record: empty device identity");
    size_t cap = ps->snap_cap;
    if (cdb_grow((void **)&ps->snap, &cap, (size_t)ps->snap_n + 1, sizeof *ps->snap))
        return CDB_ERR_NOMEM;
    ps->snap_cap = (unsigned)cap;
    if (cdb_dev_copy(&ps->snap[ps->snap_n], f[3], f[2], f[4], f[5]))
        return CDB_ERR_NOMEM;
    if (++ps->snap_n == ps->snap_want) {
        cdb_devs_replace(ps->db, ps->snap, ps->snap_n);   /* complete: the latest snapshot */
        ps->snap = NULL;
        ps->snap_want = ps->snap_n = ps->snap_cap = 0;
    }
    return CDB_OK;
}

/* One complete line (NUL-terminated at @p n, no NUL inside). */
static cdb_status record(pstate *ps, char *l, size_t n)
{
    char *f[MAX_FIELDS + 1];
    unsigned nf = 0;
    if (!n)
        PERR(ps, "empty line");
    if (l[0] == '#')
        return CDB_OK;
    for (char *p = l;;) {
        if (nf < MAX_FIELDS + 1)
            f[nf] = p;
        nf += nf <= MAX_FIELDS;   /* MAX_FIELDS + 1: too many, whatever the count */
        char *t = strchr(p, '\t');
        if (!t)
            break;
        *t = 0;
        p = t + 1;
    }
    if (!ps->header)
        return header(ps, f, nf);
    if (!strcmp(f[0], CDB_HEADER))
        return header(ps, f, nf);   /* a second header: two appenders created the file at once */
    int letter = f[0][0] >= 'a' && f[0][0] <= 'z' && !f[0][1];
    if (ps->snap_want && !(letter && f[0][0] == 'd'))
        PERR(ps, "the snapshot of line %zu announces %u devices, %u found", ps->snap_line, ps->snap_want,
             ps->snap_n);
    if (!letter)
        PERR(ps, "not a record (records start with a lowercase letter and a tab)");
    switch (f[0][0]) {
    case 'k': return rec_kernel(ps, f, nf);
    case 'x': return rec_xfer(ps, f, nf);
    case 'w': return rec_tuned(ps, f, nf);
    case 'l': return rec_layer(ps, f, nf);
    case 'f': return rec_features(ps, f, nf);
    case 's': return rec_snapshot(ps, f, nf);
    case 'd': return rec_device(ps, f, nf);
    default: return CDB_OK;   /* a record of a later minor version: ignored */
    }
}

cdb_status cdb_parse(cdb *db, char *text, size_t len, char *err, size_t err_cap)
{
    pstate ps = {.db = db, .err = err, .cap = err_cap};
    cdb_status st = CDB_OK;
    int cut = 0;
    for (size_t p = 0; p < len && st == CDB_OK;) {
        ps.line++;
        char *l = text + p, *nl = memchr(l, '\n', len - p);
        if (!nl) {
            cut = 1;   /* the last line, without its newline: an append cut short */
            break;
        }
        size_t n = (size_t)(nl - l);
        p += n + 1;
        *nl = 0;
        if (n && l[n - 1] == CDB_CAN) {
            /* a line cut short, closed by a later append: its write is lost,
             * whatever bytes it left (a crash can leave NULs) */
            snap_drop(&ps);
        } else if (memchr(l, 0, n)) {
            perr(&ps, "NUL byte");
            st = CDB_ERR_FORMAT;
        } else {
            st = record(&ps, l, n);
        }
    }
    if (st == CDB_OK && ps.snap_want && !cut) {
        ps.line = ps.snap_line;
        perr(&ps, "the snapshot announces %u devices, %u found", ps.snap_want, ps.snap_n);
        st = CDB_ERR_FORMAT;
    }
    if (st == CDB_ERR_NOMEM)
        cdb_errf(err, err_cap, "%s:%zu: out of memory", db->path, ps.line);
    snap_drop(&ps);
    return st;
}
