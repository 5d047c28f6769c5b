/* costs/cdb_store.c — samples in memory: interned strings, series, points
 * and their rings of latest samples; cdb_add_kernel and cdb_add_xfer. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "costs/cdb_int.h"

uint64_t cdb_hash(const void *p, size_t n, uint64_t h)
{
    const unsigned char *b = p;
    if (!h)
        h = 0xcbf29ce484222325ull;  /* FNV-1a */
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 0x100000001b3ull;
    return h ^ (h >> 29);
}

/* Makes room for @p need elements of @p elem bytes (doubling). 0, or -1 on overflow or no memory. */
int cdb_grow(void **p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return 0;
    size_t c = *cap ? *cap : 8;
    while (c < need) {
        if (c > SIZE_MAX / 2)
            return -1;
        c *= 2;
    }
    if (c > SIZE_MAX / elem)
        return -1;
    void *q = realloc(*p, c * elem);
    if (!q)
        return -1;
    *p = q;
    *cap = c;
    return 0;
}

/* cdb_grow for a uint32_t capacity (ids stay below UINT32_MAX) */
static int cdb_grow32(void **p, uint32_t *cap, size_t need, size_t elem)
{
    if (need >= UINT32_MAX)
        return -1;
    size_t c = *cap;
    if (cdb_grow(p, &c, need, elem))
        return -1;
    *cap = c > UINT32_MAX - 1 ? UINT32_MAX - 1 : (uint32_t)c;
    return 0;
}

int cdb_buf_add(cdb_buf *b, const char *s, size_t n)
{
    if (n > SIZE_MAX - b->len - 1 || cdb_grow((void **)&b->p, &b->cap, b->len + n + 1, 1))
        return -1;
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = 0;
    return 0;
}

int cdb_buf_printf(cdb_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n > SIZE_MAX - b->len - 1 || cdb_grow((void **)&b->p, &b->cap, b->len + (size_t)n + 1, 1))
        return -1;
    va_start(ap, fmt);
    vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
    return 0;
}

/* ------------------------------------------------------------ hash tables */
typedef int (*cdb_eq_fn)(const cdb *db, uint32_t id, const void *key);

/* The slot holding the id equal to @p key, or the empty slot where it goes. */
static uint32_t *tab_slot(const cdb *db, const cdb_tab *t, uint64_t h, cdb_eq_fn eq, const void *key)
{
    size_t mask = t->cap - 1;
    for (size_t i = (size_t)h & mask;; i = (i + 1) & mask)
        if (!t->slot[i] || eq(db, t->slot[i] - 1, key))
            return &t->slot[i];
}

/* Entry @p id's hash (to place it in a grown table). */
typedef uint64_t (*cdb_hash_of_fn)(const cdb *db, uint32_t id);

/* Room for one more entry (load at most 1/2). */
static int tab_reserve(const cdb *db, cdb_tab *t, cdb_hash_of_fn hash_of)
{
    if (t->cap && (t->used + 1) * 2 <= t->cap)
        return 0;
    size_t nc = t->cap ? t->cap * 2 : 64;
    if (nc > SIZE_MAX / sizeof(uint32_t))
        return -1;
    uint32_t *ns = calloc(nc, sizeof *ns);
    if (!ns)
        return -1;
    for (size_t i = 0; i < t->cap; i++) {
        if (!t->slot[i])
            continue;
        size_t j = (size_t)hash_of(db, t->slot[i] - 1) & (nc - 1);
        while (ns[j])
            j = (j + 1) & (nc - 1);
        ns[j] = t->slot[i];
    }
    free(t->slot);
    t->slot = ns;
    t->cap = nc;
    return 0;
}

/* ------------------------------------------------------------ strings */
typedef struct { const char *s; size_t n; } strkey;

static int str_eq(const cdb *db, uint32_t id, const void *key)
{
    const strkey *k = key;
    return !strncmp(db->strs[id], k->s, k->n) && db->strs[id][k->n] == 0;
}

static uint64_t str_hash_of(const cdb *db, uint32_t id)
{
    return db->strh[id];
}

int64_t cdb_str_find(const cdb *db, const char *s, size_t n)
{
    if (!db->strtab.cap)
        return -1;
    strkey k = {s, n};
    uint32_t *sl = tab_slot(db, &db->strtab, cdb_hash(s, n, 0), str_eq, &k);
    return *sl ? (int64_t)*sl - 1 : -1;
}

int64_t cdb_str_intern(cdb *db, const char *s, size_t n)
{
    int64_t id = cdb_str_find(db, s, n);
    if (id >= 0)
        return id;
    uint32_t cap = db->cap_strs, cap2 = db->cap_strs;
    if (cdb_grow32((void **)&db->strs, &cap, (size_t)db->nstrs + 1, sizeof *db->strs) ||
        cdb_grow32((void **)&db->strh, &cap2, (size_t)db->nstrs + 1, sizeof *db->strh))
        return -2;
    db->cap_strs = cap < cap2 ? cap : cap2;
    if (tab_reserve(db, &db->strtab, str_hash_of))
        return -2;
    char *c = malloc(n + 1);
    if (!c)
        return -2;
    memcpy(c, s, n);
    c[n] = 0;
    uint64_t h = cdb_hash(s, n, 0);
    strkey k = {s, n};
    uint32_t *sl = tab_slot(db, &db->strtab, h, str_eq, &k);
    db->strs[db->nstrs] = c;
    db->strh[db->nstrs] = h;
    *sl = ++db->nstrs;
    db->strtab.used++;
    return (int64_t)db->nstrs - 1;
}

/* ------------------------------------------------------------ series and points */
void cdb_skey_kernel(cdb_skey *sk, uint32_t ident, uint32_t kernel, const cdb_key *k)
{
    memset(sk, 0, sizeof *sk);
    sk->kind = CDB_SER_KERNEL;
    sk->ident = ident;
    sk->kernel = kernel;
    sk->dim = k->dim;
    memcpy(sk->program, k->program, 16);
    int lzero = 1;
    for (unsigned d = 0; d < k->dim && d < 3; d++)
        lzero &= k->lsz[d] == 0;
    for (unsigned d = 0; d < 3; d++) {
        sk->gsz[d] = d < k->dim ? k->gsz[d] : 1;
        sk->lsz[d] = d < k->dim ? k->lsz[d] : lzero ? 0 : 1;
    }
}

void cdb_skey_xfer(cdb_skey *sk, uint32_t ident, int dir)
{
    memset(sk, 0, sizeof *sk);
    sk->kind = dir == CDB_D2H ? CDB_SER_D2H : CDB_SER_H2D;
    sk->ident = ident;
}

static int ser_eq(const cdb *db, uint32_t id, const void *key)
{
    return !memcmp(&db->ser[id].key, key, sizeof(cdb_skey));
}

static uint64_t ser_hash_of(const cdb *db, uint32_t id)
{
    return db->ser[id].hash;
}

int64_t cdb_series_find(const cdb *db, const cdb_skey *sk)
{
    if (!db->sertab.cap)
        return -1;
    uint32_t *sl = tab_slot(db, &db->sertab, cdb_hash(sk, sizeof *sk, 0), ser_eq, sk);
    return *sl ? (int64_t)*sl - 1 : -1;
}

static int64_t series_make(cdb *db, const cdb_skey *sk)
{
    int64_t id = cdb_series_find(db, sk);
    if (id >= 0)
        return id;
    if (cdb_grow32((void **)&db->ser, &db->cap_ser, (size_t)db->nser + 1, sizeof *db->ser) ||
        tab_reserve(db, &db->sertab, ser_hash_of))
        return -2;
    cdb_series *s = &db->ser[db->nser];
    memset(s, 0, sizeof *s);
    s->key = *sk;
    s->hash = cdb_hash(sk, sizeof *sk, 0);
    *tab_slot(db, &db->sertab, s->hash, ser_eq, sk) = ++db->nser;
    db->sertab.used++;
    return (int64_t)db->nser - 1;
}

typedef struct { uint32_t series; uint64_t x; } ptkey;

static uint64_t pt_hash(uint32_t series, uint64_t x)
{
    ptkey k;
    memset(&k, 0, sizeof k);
    k.series = series;
    k.x = x;
    return cdb_hash(&k, sizeof k, 0);
}

static int pt_eq(const cdb *db, uint32_t id, const void *key)
{
    const ptkey *k = key;
    return db->pt[id].series == k->series && db->pt[id].x == k->x;
}

static uint64_t pt_hash_of(const cdb *db, uint32_t id)
{
    return pt_hash(db->pt[id].series, db->pt[id].x);
}

cdb_status cdb_sample(cdb *db, const cdb_skey *sk, uint64_t x, uint64_t ns)
{
    int64_t sid = series_make(db, sk);
    if (sid < 0)
        return CDB_ERR_NOMEM;
    cdb_series *s = &db->ser[sid];
    ptkey k = {(uint32_t)sid, x};
    if (tab_reserve(db, &db->pttab, pt_hash_of))
        return CDB_ERR_NOMEM;
    uint32_t *sl = tab_slot(db, &db->pttab, pt_hash(k.series, x), pt_eq, &k);
    if (!*sl) {
        if (cdb_grow32((void **)&db->pt, &db->cap_pt, (size_t)db->npt + 1, sizeof *db->pt) ||
            cdb_grow32((void **)&s->pts, &s->cap_pts, (size_t)s->npts + 1, sizeof *s->pts))
            return CDB_ERR_NOMEM;
        cdb_point *p = &db->pt[db->npt];
        memset(p, 0, sizeof *p);
        p->x = x;
        p->series = k.series;
        s->pts[s->npts++] = db->npt;
        *sl = ++db->npt;
        db->pttab.used++;
    }
    cdb_point *p = &db->pt[*sl - 1];
    if (p->n < CDB_KEEP && p->n == p->cap) {
        /* the ring is not full yet, so it is in order from 0: grow it (4, 8, ... CDB_KEEP) */
        uint32_t nc = p->cap ? p->cap * 2 : 4;
        if (nc > CDB_KEEP)
            nc = CDB_KEEP;
        uint64_t *r = realloc(p->ring, nc * sizeof *r);
        if (!r)
            return CDB_ERR_NOMEM;
        p->ring = r;
        p->cap = nc;
        p->head = p->n;   /* it wrapped to 0 when the smaller ring filled */
    }
    p->ring[p->head] = ns;
    p->head = (p->head + 1) % p->cap;
    if (p->n < p->cap)
        p->n++;
    s->dirty = 1;
    return CDB_OK;
}

void cdb_store_free(cdb *db)
{
    for (uint32_t i = 0; i < db->nstrs; i++)
        free(db->strs[i]);
    free(db->strs);
    free(db->strh);
    free(db->strtab.slot);
    for (uint32_t i = 0; i < db->nser; i++) {
        free(db->ser[i].pts);
        free(db->ser[i].cx);
        free(db->ser[i].cy);
        free(db->ser[i].cn);
    }
    free(db->ser);
    free(db->sertab.slot);
    for (uint32_t i = 0; i < db->npt; i++)
        free(db->pt[i].ring);
    free(db->pt);
    free(db->pttab.slot);
    free(db->tuned);
    cdb_feat_free(db);
}

/* ------------------------------------------------------------ adding */
void cdb_hex16(char out[33], const uint8_t b[16])
{
    static const char d[] = "0123456789abcdef";
    for (int i = 0; i < 16; i++) {
        out[2 * i] = d[b[i] >> 4];
        out[2 * i + 1] = d[b[i] & 15];
    }
    out[32] = 0;
}

cdb_status cdb_add_kernel(cdb *db, const char *identity, const cdb_key *k, uint64_t groups, uint64_t ns)
{
    if (!db || !k || !groups || !ns || k->dim < 1 || k->dim > 3 || !cdb_str_ok(identity, 0) ||
        !cdb_str_ok(k->kernel, 0))
        return CDB_ERR_ARG;
    int64_t id = cdb_str_intern(db, identity, strlen(identity));
    int64_t kn = id < 0 ? id : cdb_str_intern(db, k->kernel, strlen(k->kernel));
    if (kn < 0)
        return CDB_ERR_NOMEM;
    cdb_skey sk;
    cdb_skey_kernel(&sk, (uint32_t)id, (uint32_t)kn, k);
    char hex[33];
    cdb_hex16(hex, k->program);
    size_t mark = db->pend.len;
    if (cdb_buf_printf(&db->pend,
                       "k\t%s\t%s\t%s\t%u\t%llu,%llu,%llu\t%llu,%llu,%llu\t%llu\t%llu\t%llu\n", identity, hex,
                       k->kernel, k->dim, (unsigned long long)sk.gsz[0], (unsigned long long)sk.gsz[1],
                       (unsigned long long)sk.gsz[2], (unsigned long long)sk.lsz[0],
                       (unsigned long long)sk.lsz[1], (unsigned long long)sk.lsz[2],
                       (unsigned long long)groups, (unsigned long long)ns, (unsigned long long)time(NULL)))
        return CDB_ERR_NOMEM;
    if (cdb_sample(db, &sk, groups, ns) != CDB_OK) {
        db->pend.len = mark;
        return CDB_ERR_NOMEM;
    }
    return CDB_OK;
}

cdb_status cdb_add_xfer(cdb *db, const char *identity, int dir, uint64_t bytes, uint64_t ns)
{
    if (!db || (dir != CDB_H2D && dir != CDB_D2H) || !bytes || !ns || !cdb_str_ok(identity, 0))
        return CDB_ERR_ARG;
    int64_t id = cdb_str_intern(db, identity, strlen(identity));
    if (id < 0)
        return CDB_ERR_NOMEM;
    cdb_skey sk;
    cdb_skey_xfer(&sk, (uint32_t)id, dir);
    size_t mark = db->pend.len;
    if (cdb_buf_printf(&db->pend, "x\t%s\t%s\t%llu\t%llu\t%llu\n", identity, dir == CDB_H2D ? "h2d" : "d2h",
                       (unsigned long long)bytes, (unsigned long long)ns, (unsigned long long)time(NULL)))
        return CDB_ERR_NOMEM;
    if (cdb_sample(db, &sk, bytes, ns) != CDB_OK) {
        db->pend.len = mark;
        return CDB_ERR_NOMEM;
    }
    return CDB_OK;
}

/* ------------------------------------------------------------ tuned local sizes */

cdb_status cdb_tuned_store(cdb *db, uint32_t ident, uint32_t kernel, const cdb_key *k, const cdb_tuned *t)
{
    if (cdb_grow((void **)&db->tuned, &db->cap_tuned, db->ntuned + 1, sizeof *db->tuned))
        return CDB_ERR_NOMEM;
    cdb_wrec *w = &db->tuned[db->ntuned++];
    memset(w, 0, sizeof *w);
    cdb_skey_kernel(&w->key, ident, kernel, k);
    w->t = *t;
    for (unsigned d = k->dim; d < 3; d++)
        w->t.local[d] = 1;
    return CDB_OK;
}

cdb_status cdb_add_tuned(cdb *db, const char *identity, const cdb_key *k, const cdb_tuned *t)
{
    if (!db || !k || !t || !t->reps || k->dim < 1 || k->dim > 3 || !cdb_str_ok(identity, 0) ||
        !cdb_str_ok(k->kernel, 0))
        return CDB_ERR_ARG;
    for (unsigned d = 0; d < k->dim; d++)
        if (!t->local[d])
            return CDB_ERR_ARG;
    int64_t id = cdb_str_intern(db, identity, strlen(identity));
    int64_t kn = id < 0 ? id : cdb_str_intern(db, k->kernel, strlen(k->kernel));
    if (kn < 0)
        return CDB_ERR_NOMEM;
    cdb_skey sk;
    cdb_skey_kernel(&sk, (uint32_t)id, (uint32_t)kn, k);
    char hex[33];
    cdb_hex16(hex, k->program);
    uint64_t l[3] = {t->local[0], k->dim > 1 ? t->local[1] : 1, k->dim > 2 ? t->local[2] : 1};
    size_t mark = db->pend.len;
    if (cdb_buf_printf(&db->pend,
                       "w\t%s\t%s\t%s\t%u\t%llu,%llu,%llu\t%llu,%llu,%llu\t%llu,%llu,%llu\t%llu\t%llu\t%u\t%llu\n",
                       identity, hex, k->kernel, k->dim, (unsigned long long)sk.gsz[0], (unsigned long long)sk.gsz[1],
                       (unsigned long long)sk.gsz[2], (unsigned long long)sk.lsz[0], (unsigned long long)sk.lsz[1],
                       (unsigned long long)sk.lsz[2], (unsigned long long)l[0], (unsigned long long)l[1],
                       (unsigned long long)l[2], (unsigned long long)t->before_ns, (unsigned long long)t->after_ns,
                       t->reps, (unsigned long long)time(NULL)))
        return CDB_ERR_NOMEM;
    if (cdb_tuned_store(db, (uint32_t)id, (uint32_t)kn, k, t) != CDB_OK) {
        db->pend.len = mark;
        return CDB_ERR_NOMEM;
    }
    return CDB_OK;
}

int cdb_get_tuned(const cdb *db, const char *identity, const cdb_key *k, cdb_tuned *out)
{
    if (!db || !identity || !k || !k->kernel || k->dim < 1 || k->dim > 3)
        return 0;
    int64_t id = cdb_str_find(db, identity, strlen(identity));
    int64_t kn = id < 0 ? -1 : cdb_str_find(db, k->kernel, strlen(k->kernel));
    if (kn < 0)
        return 0;
    cdb_skey sk;
    cdb_skey_kernel(&sk, (uint32_t)id, (uint32_t)kn, k);
    for (size_t i = db->ntuned; i-- > 0;)
        if (!memcmp(&db->tuned[i].key, &sk, sizeof sk)) {
            *out = db->tuned[i].t;
            return 1;
        }
    return 0;
}

/* ------------------------------------------------------------ the layer's cost */

void cdb_layer_store(cdb *db, uint64_t calls, uint64_t call_ns, uint64_t fixed_ns)
{
    unsigned i = db->nlayer++ % CDB_KEEP;
    db->layer_call[i] = (double)call_ns / (double)calls;
    db->layer_fixed[i] = (double)fixed_ns;
}

cdb_status cdb_add_layer(cdb *db, const char *identity, uint64_t calls, uint64_t call_ns, uint64_t fixed_ns)
{
    if (!db || !calls || !cdb_str_ok(identity, 0))
        return CDB_ERR_ARG;
    if (cdb_buf_printf(&db->pend, "l\t%s\t%llu\t%llu\t%llu\t%llu\n", identity, (unsigned long long)calls,
                       (unsigned long long)call_ns, (unsigned long long)fixed_ns, (unsigned long long)time(NULL)))
        return CDB_ERR_NOMEM;
    cdb_layer_store(db, calls, call_ns, fixed_ns);
    return CDB_OK;
}

static int cdb_dcmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double cdb_dmedian(const double *v, unsigned n)
{
    double s[CDB_KEEP];
    memcpy(s, v, n * sizeof *s);
    qsort(s, n, sizeof *s, cdb_dcmp);
    return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

void cdb_get_layer(const cdb *db, cdb_layer_cost *out)
{
    out->call_ns = CDB_LAYER_CALL_NS;
    out->fixed_ns = CDB_LAYER_FIXED_NS;
    out->runs = 0;
    if (!db || !db->nlayer)
        return;
    unsigned n = db->nlayer < CDB_KEEP ? db->nlayer : CDB_KEEP;
    out->call_ns = cdb_dmedian(db->layer_call, n);
    out->fixed_ns = cdb_dmedian(db->layer_fixed, n);
    out->runs = n;
}
