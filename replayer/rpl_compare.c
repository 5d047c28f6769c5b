/* rpl_compare.c — comparison of read-back bytes (rpl.h, "comparison"):
 * parsing of tolerance specs, exact comparison (memcmp fast path, then a
 * count of differing bytes) and element-wise float comparison.
 *
 * Float semantics: elements are read with memcpy (no aliasing), two elements
 * are equal when bit-identical, both NaN (any payload), or within one of the
 * criteria; +0 and -0 are 0 apart; an infinity equals only the same infinity;
 * the ULP distance is taken on the ordered integer representation (so it
 * crosses zero correctly). Everything here is thread-safe (no state). */
#include "replayer/rpl.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ parsing */

static int rpl_tol_err(char *err, size_t cap, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int rpl_tol_err(char *err, size_t cap, const char *fmt, ...)
{
    if (err && cap) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, cap, fmt, ap);
        va_end(ap);
    }
    return -1;
}

/* Parses a non-negative finite double filling all of [p, end). */
static int rpl_tol_double(const char *p, const char *end, double *out)
{
    char buf[64];
    size_t n = (size_t)(end - p);
    if (n == 0 || n >= sizeof buf || !((*p >= '0' && *p <= '9') || *p == '.' || *p == '+'))
        return -1;
    memcpy(buf, p, n);
    buf[n] = 0;
    char *e = NULL;
    errno = 0;
    double v = strtod(buf, &e);
    if (e != buf + n || errno == ERANGE || !isfinite(v))
        return -1;
    *out = v;
    return 0;
}

/* Parses decimal digits only (no sign, no spaces) filling all of [p, end). */
static int rpl_tol_u64(const char *p, const char *end, uint64_t *out)
{
    uint64_t v = 0;
    if (p == end)
        return -1;
    for (; p < end; p++) {
        if (*p < '0' || *p > '9')
            return -1;
        uint64_t d = (uint64_t)(*p - '0');
        if (v > (UINT64_MAX - d) / 10)
            return -1;
        v = v * 10 + d;
    }
    *out = v;
    return 0;
}

int rpl_tolerance_parse(const char *spec, rpl_tolerance *out, char *err, size_t err_cap)
{
    rpl_tolerance t = { 0, 0, 0, RPL_ELEM_F32 };
    if (err && err_cap)
        err[0] = 0;
    if (!spec || !out)
        return rpl_tol_err(err, err_cap, "no tolerance given");
    if (!strcmp(spec, "exact")) {
        *out = t;
        return 0;
    }
    if (!*spec)
        return rpl_tol_err(err, err_cap,
                           "empty tolerance (expected \"exact\" or rel=X,abs=X,ulp=N,f32,f64)");
    const char *p = spec;
    for (;;) {
        const char *end = strchr(p, ',');
        if (!end)
            end = p + strlen(p);
        int n = (int)(end - p);
        const char *eq = memchr(p, '=', (size_t)n);
        size_t klen = eq ? (size_t)(eq - p) : (size_t)n;
        if (n == 0)
            return rpl_tol_err(err, err_cap, "empty item in tolerance '%s'", spec);
        if (!eq && klen == 3 && !memcmp(p, "f32", 3)) {
            t.elem = RPL_ELEM_F32;
        } else if (!eq && klen == 3 && !memcmp(p, "f64", 3)) {
            t.elem = RPL_ELEM_F64;
        } else if (eq && ((klen == 3 && !memcmp(p, "rel", 3)) || (klen == 3 && !memcmp(p, "abs", 3)))) {
            double v;
            if (eq + 1 < end && eq[1] == '-')
                return rpl_tol_err(err, err_cap, "negative value in '%.*s' (tolerances are >= 0)", n, p);
            if (rpl_tol_double(eq + 1, end, &v))
                return rpl_tol_err(err, err_cap,
                                   "bad number in '%.*s' (expected a finite number >= 0)", n, p);
            if (v < 0)
                return rpl_tol_err(err, err_cap, "negative value in '%.*s' (tolerances are >= 0)", n, p);
            if (p[0] == 'r')
                t.rel = v + 0.0;   /* -0 becomes +0 */
            else
                t.abs = v + 0.0;
        } else if (eq && klen == 3 && !memcmp(p, "ulp", 3)) {
            if (eq + 1 < end && eq[1] == '-')
                return rpl_tol_err(err, err_cap, "negative value in '%.*s' (tolerances are >= 0)", n, p);
            if (rpl_tol_u64(eq + 1, end, &t.ulp))
                return rpl_tol_err(err, err_cap, "bad number in '%.*s' (expected an integer >= 0)", n, p);
        } else {
            return rpl_tol_err(err, err_cap, "unknown tolerance item '%.*s' (expected exact, "
                               "rel=X, abs=X, ulp=N, f32 or f64)", n, p);
        }
        if (!*end)
            break;
        p = end + 1;
    }
    *out = t;
    return 0;
}

int rpl_tolerance_is_exact(const rpl_tolerance *t)
{
    return !t || (t->rel == 0 && t->abs == 0 && t->ulp == 0);
}

/* ------------------------------------------------------------ comparing */

/* Exact: first differing byte and number of differing bytes. */
static int rpl_cmp_exact(const unsigned char *a, const unsigned char *b, size_t len, rpl_cmp *c)
{
    c->elems = len;
    c->elem_size = 1;
    if (len == 0 || !memcmp(a, b, len))
        return 1;
    size_t i = 0;
    for (; i + 8 <= len; i += 8) {
        uint64_t x, y;
        memcpy(&x, a + i, 8);
        memcpy(&y, b + i, 8);
        if (x == y)
            continue;
        for (size_t k = i; k < i + 8; k++) {
            if (a[k] != b[k]) {
                if (!c->differ)
                    c->first = k;
                c->differ++;
            }
        }
    }
    for (; i < len; i++) {
        if (a[i] != b[i]) {
            if (!c->differ)
                c->first = i;
            c->differ++;
        }
    }
    return c->differ == 0;
}

/* Maps the bits of a float (sign-magnitude) onto an unsigned order in which
 * adjacent floats are adjacent integers; +0 and -0 map to the same value.
 * @p sign is the sign bit, @p bias 2^(bits-1). */
static uint64_t rpl_ordered(uint64_t bits, uint64_t sign, uint64_t bias)
{
    uint64_t mag = bits & (sign - 1);
    return (bits & sign) ? bias - mag : bias + mag;
}

/* Compares one element pair (already known to differ bitwise) of values
 * @p a, @p b (as double) and ordered integers @p oa, @p ob. Updates max_abs.
 * @return 1 when equal within @p t. */
static int rpl_elem_eq(double a, double b, uint64_t oa, uint64_t ob, const rpl_tolerance *t,
                       rpl_cmp *c)
{
    if (isnan(a) && isnan(b))
        return 1;
    if (isnan(a) || isnan(b) || isinf(a) || isinf(b)) {
        /* a different infinity, or NaN against a number: never equal */
        c->max_abs = INFINITY;
        return 0;
    }
    double d = fabs(a - b);
    if (d > c->max_abs)
        c->max_abs = d;
    if (d <= t->abs)
        return 1;
    if (d <= t->rel * fmax(fabs(a), fabs(b)))
        return 1;
    uint64_t dist = oa > ob ? oa - ob : ob - oa;
    return dist <= t->ulp;
}

static void rpl_note_diff(rpl_cmp *c, uint64_t off)
{
    if (!c->differ)
        c->first = off;
    c->differ++;
}

int rpl_compare(const void *expected, const void *actual, size_t len, const rpl_tolerance *t,
                rpl_cmp *out)
{
    rpl_cmp c;
    memset(&c, 0, sizeof c);
    const unsigned char *a = expected, *b = actual;
    if (rpl_tolerance_is_exact(t)) {
        int eq = rpl_cmp_exact(a, b, len, &c);
        if (out)
            *out = c;
        return eq;
    }
    size_t es = t->elem == RPL_ELEM_F64 ? 8 : 4;
    size_t n = len / es, i;
    c.elem_size = es;
    c.elems = n;
    if (es == 4) {
        for (i = 0; i < n; i++) {
            uint32_t ua, ub;
            float fa, fb;
            memcpy(&ua, a + i * 4, 4);
            memcpy(&ub, b + i * 4, 4);
            if (ua == ub)
                continue;
            memcpy(&fa, &ua, 4);
            memcpy(&fb, &ub, 4);
            if (!rpl_elem_eq((double)fa, (double)fb, rpl_ordered(ua, 1ull << 31, 1ull << 31),
                             rpl_ordered(ub, 1ull << 31, 1ull << 31), t, &c))
                rpl_note_diff(&c, (uint64_t)i * 4);
        }
    } else {
        for (i = 0; i < n; i++) {
            uint64_t ua, ub;
            double fa, fb;
            memcpy(&ua, a + i * 8, 8);
            memcpy(&ub, b + i * 8, 8);
            if (ua == ub)
                continue;
            memcpy(&fa, &ua, 8);
            memcpy(&fb, &ub, 8);
            if (!rpl_elem_eq(fa, fb, rpl_ordered(ua, 1ull << 63, 1ull << 63),
                             rpl_ordered(ub, 1ull << 63, 1ull << 63), t, &c))
                rpl_note_diff(&c, (uint64_t)i * 8);
        }
    }
    size_t tail = len - n * es;
    if (tail) {   /* a part shorter than one element: one element, exact */
        c.elems++;
        if (memcmp(a + n * es, b + n * es, tail))
            rpl_note_diff(&c, (uint64_t)(n * es));
    }
    if (out)
        *out = c;
    return c.differ == 0;
}
