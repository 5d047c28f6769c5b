/* costs/cdb_stats.c — what a reader trusts: per point a robust median of
 * the latest samples (outliers rejected by median absolute deviation),
 * kernel curves (time against work-groups) and the transfer fit
 * (latency + bytes x time per byte). Results are cached per series and
 * made again after a sample is added to it. */
#include <stdlib.h>
#include <string.h>

#include "costs/cdb_int.h"

static void sort_d(double *a, unsigned n)
{
    for (unsigned i = 1; i < n; i++) {
        double v = a[i];
        unsigned j = i;
        for (; j && a[j - 1] > v; j--)
            a[j] = a[j - 1];
        a[j] = v;
    }
}

static double median_sorted(const double *a, unsigned n)
{
    return n % 2 ? a[n / 2] : (a[n / 2 - 1] + a[n / 2]) / 2;
}

static double dabs(double x)
{
    return x < 0 ? -x : x;
}

/* The point's robust median into *ns; @return the samples left after outliers are rejected. */
static unsigned point_stat(const cdb_point *p, double *ns)
{
    double x[CDB_KEEP], dev[CDB_KEEP];
    unsigned n = p->n, kept = 0;
    if (!n)
        return 0;
    for (unsigned i = 0; i < n; i++)
        x[i] = (double)p->ring[i];
    sort_d(x, n);
    double m = median_sorted(x, n);
    if (n < CDB_MIN_REJECT) {   /* too few for a deviation to mean much: the median alone */
        *ns = m;
        return n;
    }
    for (unsigned i = 0; i < n; i++)
        dev[i] = dabs(x[i] - m);
    sort_d(dev, n);
    double mad = median_sorted(dev, n), floor = 0.01 * m;
    double lim = CDB_MAD_K * (mad > floor ? mad : floor);
    for (unsigned i = 0; i < n; i++)
        if (dabs(x[i] - m) <= lim)
            x[kept++] = x[i];   /* still sorted */
    *ns = kept ? median_sorted(x, kept) : m;
    return kept;
}

typedef struct { uint64_t x; double y; unsigned n; } cpoint;

static int cpoint_cmp(const void *a, const void *b)
{
    const cpoint *p = a, *q = b;
    return (p->x > q->x) - (p->x < q->x);
}

/* Makes the series' cache (its trusted points, x ascending) when a sample came since. 0 or -1. */
static int series_cache(cdb *db, cdb_series *s)
{
    if (!s->dirty)
        return 0;
    cpoint *c = malloc((size_t)(s->npts ? s->npts : 1) * sizeof *c);
    uint64_t *cx = realloc(s->cx, (size_t)(s->npts ? s->npts : 1) * sizeof *cx);
    if (cx)
        s->cx = cx;
    double *cy = realloc(s->cy, (size_t)(s->npts ? s->npts : 1) * sizeof *cy);
    if (cy)
        s->cy = cy;
    unsigned *cn = realloc(s->cn, (size_t)(s->npts ? s->npts : 1) * sizeof *cn);
    if (cn)
        s->cn = cn;
    if (!c || !cx || !cy || !cn) {
        free(c);
        s->ncache = 0;   /* the arrays may have moved: nothing cached, made again next time */
        return -1;
    }
    unsigned m = 0;
    for (uint32_t i = 0; i < s->npts; i++) {
        double y;
        unsigned k = point_stat(&db->pt[s->pts[i]], &y);
        if (k >= CDB_MIN_SAMPLES)
            c[m++] = (cpoint){db->pt[s->pts[i]].x, y, k};
    }
    qsort(c, m, sizeof *c, cpoint_cmp);
    for (unsigned i = 0; i < m; i++) {
        s->cx[i] = c[i].x;
        s->cy[i] = c[i].y;
        s->cn[i] = c[i].n;
    }
    free(c);
    s->ncache = m;
    s->dirty = 0;
    return 0;
}

int cdb_kernel_curve(cdb *db, const char *identity, const cdb_key *k, cdb_curve *out)
{
    if (!db || !identity || !k || !k->kernel || !out || k->dim < 1 || k->dim > 3)
        return 0;
    memset(out, 0, sizeof *out);
    int64_t id = cdb_str_find(db, identity, strlen(identity));
    int64_t kn = cdb_str_find(db, k->kernel, strlen(k->kernel));
    if (id < 0 || kn < 0)
        return 0;
    cdb_skey sk;
    cdb_skey_kernel(&sk, (uint32_t)id, (uint32_t)kn, k);
    int64_t si = cdb_series_find(db, &sk);
    if (si < 0)
        return 0;
    cdb_series *s = &db->ser[si];
    if (series_cache(db, s) || !s->ncache)
        return 0;
    out->n = s->ncache;
    out->groups = s->cx;
    out->ns = s->cy;
    out->samples = s->cn;
    return 1;
}

/* The running maximum of the curve's times up to point @p i (never decreasing with groups). */
static double mono(const cdb_curve *c, unsigned i)
{
    double m = c->ns[0];
    for (unsigned j = 1; j <= i; j++)
        if (c->ns[j] > m)
            m = c->ns[j];
    return m;
}

double cdb_curve_at(const cdb_curve *c, double groups)
{
    if (!c || !c->n)
        return 0;
    double y;
    if (c->n == 1) {
        y = c->ns[0] / (double)c->groups[0] * groups;
    } else if (groups <= (double)c->groups[0]) {
        double y0 = mono(c, 0), y1 = mono(c, 1);
        y = y0 + (groups - (double)c->groups[0]) * (y1 - y0) / (double)(c->groups[1] - c->groups[0]);
    } else {
        unsigned i = 1;
        while (i < c->n - 1 && groups > (double)c->groups[i])
            i++;
        /* between points i-1 and i, or beyond the last along its segment */
        double y0 = c->ns[0], y1;
        for (unsigned j = 1; j < i; j++)
            if (c->ns[j] > y0)
                y0 = c->ns[j];
        y1 = c->ns[i] > y0 ? c->ns[i] : y0;
        double x0 = (double)c->groups[i - 1], x1 = (double)c->groups[i];
        y = y0 + (groups - x0) * (y1 - y0) / (x1 - x0);
    }
    return y > 0 ? y : 0;
}

int cdb_xfer(cdb *db, const char *identity, int dir, double *lat_ns, double *ns_per_byte)
{
    if (!db || !identity || (dir != CDB_H2D && dir != CDB_D2H))
        return 0;
    int64_t id = cdb_str_find(db, identity, strlen(identity));
    if (id < 0)
        return 0;
    cdb_skey sk;
    cdb_skey_xfer(&sk, (uint32_t)id, dir);
    int64_t si = cdb_series_find(db, &sk);
    if (si < 0)
        return 0;
    cdb_series *s = &db->ser[si];
    if (series_cache(db, s) || s->ncache < 2)
        return 0;
    /* least squares, centred for precision */
    unsigned n = s->ncache;
    double mx = 0, my = 0, sxx = 0, sxy = 0;
    for (unsigned i = 0; i < n; i++) {
        mx += (double)s->cx[i];
        my += s->cy[i];
    }
    mx /= n;
    my /= n;
    for (unsigned i = 0; i < n; i++) {
        double dx = (double)s->cx[i] - mx;
        sxx += dx * dx;
        sxy += dx * (s->cy[i] - my);
    }
    double b = sxx > 0 ? sxy / sxx : 0, a = my - b * mx;
    if (!(b > 0)) {
        /* no bandwidth in the fit (noise at small sizes): the largest size's time per byte */
        b = s->cy[n - 1] / (double)s->cx[n - 1];
        a = s->cy[0];
    }
    if (!(a > 0))
        a = 0;
    if (lat_ns)
        *lat_ns = a;
    if (ns_per_byte)
        *ns_per_byte = b;
    return 1;
}
