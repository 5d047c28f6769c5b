/* rwp.c — the partition tests' oracle, test side (tests/rw/rwp.h): the
 * parts of a split launch, the full launch and the parts run by rwp-run,
 * what they leave in the buffers compared. */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/rw/rwp.h"
#include "tests/rw/rwt.h"

/* Command-line words of one run of rwp-run. */
typedef struct rwp_argv {
    char words[600][48];
    char *v[608];
    unsigned n;
} rwp_argv;

static void rwp_word(rwp_argv *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void rwp_word(rwp_argv *a, const char *fmt, ...)
{
    va_list ap;

    if (a->n >= 600)
        return;
    va_start(ap, fmt);
    vsnprintf(a->words[a->n], sizeof a->words[a->n], fmt, ap);
    va_end(ap);
    a->v[a->n] = a->words[a->n];
    a->n++;
}

static void rwp_arg_word(rwp_argv *a, const rwp_arg *x)
{
    uint32_t bits;

    switch (x->kind) {
    case RWP_BUF: rwp_word(a, "b%zu", x->n); break;
    case RWP_LOCAL: rwp_word(a, "s%zu", x->n); break;
    case RWP_INT: rwp_word(a, "i%lld", x->i); break;
    case RWP_UINT: rwp_word(a, "u%lld", x->i); break;
    case RWP_ULONG: rwp_word(a, "l%lld", x->i); break;
    case RWP_FLOAT:
        memcpy(&bits, &x->f, sizeof bits);
        rwp_word(a, "f%08x", bits);
        break;
    case RWP_RAW: rwp_word(a, "x%zu:%llx", x->n, (unsigned long long)x->i); break;
    default: rwp_word(a, "?"); break;
    }
}

/* Placeholders for the paths (rwt_spawn fills them), the options, the buffers. */
static void rwp_head(const rwp_case *cs, rwp_argv *a)
{
    unsigned i;

    a->n = 0;
    rwp_word(a, "rwp-run");
    rwp_word(a, "SOURCE");
    rwp_word(a, "OUT");
    rwp_word(a, "OPTIONS");
    for (i = 0; i < cs->nbufs; i++)
        rwp_word(a, "%s:%zu", cs->bufs[i].fill == RWP_I32 ? "i32" : "f32", cs->bufs[i].bytes);
}

/* One launch: kernel, shape, K's arguments, and with @p extra the nine
 * values of the full launch. */
static void rwp_launch(const rwp_case *cs, rwp_argv *a, const char *kernel, const size_t off[3],
                       const size_t global[3], int extra)
{
    unsigned d, i;

    rwp_word(a, "--");
    rwp_word(a, "%s", kernel);
    rwp_word(a, "%u", cs->dims);
    for (d = 0; d < 3; d++)
        rwp_word(a, "%zu", off[d]);
    for (d = 0; d < 3; d++)
        rwp_word(a, "%zu", global[d]);
    for (d = 0; d < 3; d++)
        rwp_word(a, "%zu", cs->local[0] ? cs->local[d] : (size_t)0);
    for (i = 0; i < cs->nargs; i++)
        rwp_arg_word(a, &cs->args[i]);
    if (!extra)
        return;
    for (d = 0; d < 3; d++)
        rwp_word(a, "l%zu", d < cs->dims ? cs->global[d] : (size_t)1);
    for (d = 0; d < 3; d++)
        rwp_word(a, "l%zu", d < cs->dims ? cs->offset[d] : (size_t)0);
    for (d = 0; d < 3; d++)
        rwp_word(a, "l%zu", d < cs->dims ? cs->local[d] : (size_t)1);
}

static int rwp_run(const rwp_case *cs, const char *src, size_t len, rwp_argv *a,
                   unsigned char **out, char *err, size_t cap)
{
    size_t total = 0;
    unsigned i;

    for (i = 0; i < cs->nbufs; i++)
        total += cs->bufs[i].bytes;
    a->v[3] = (char *)(cs->options ? cs->options : "");
    a->v[a->n] = NULL;
    return rwt_spawn("rwp-run", src, len, a->v, total, out, err, cap);
}

int rwp_parts(const rwp_case *cs, const char *src, size_t len, const char *name, int extra,
              const rwp_split *sp, unsigned char **out, char *err, size_t cap)
{
    static rwp_argv a;
    size_t unit, units, off[3], global[3];
    unsigned d = sp->dim, i, k;

    *out = NULL;
    if (d >= cs->dims || sp->nparts < 1 || sp->nparts > RWP_MAX_PARTS || sp->first[0] != 0) {
        snprintf(err, cap, "bad split");
        return -1;
    }
    unit = cs->local[0] ? cs->local[d] : 1;
    units = (cs->global[d] + unit - 1) / unit;
    for (i = 1; i < sp->nparts; i++)
        if (sp->first[i] <= sp->first[i - 1] || sp->first[i] >= units) {
            snprintf(err, cap, "bad split: part %u", i);
            return -1;
        }
    rwp_head(cs, &a);
    for (i = 0; i < sp->nparts; i++) {
        size_t first = sp->first[i] * unit;
        size_t end = i + 1 < sp->nparts ? sp->first[i + 1] * unit : cs->global[d];
        memcpy(off, cs->offset, sizeof off);
        memcpy(global, cs->global, sizeof global);
        for (k = cs->dims; k < 3; k++)
            global[k] = 1;
        off[d] += first;
        global[d] = (end < cs->global[d] ? end : cs->global[d]) - first;
        rwp_launch(cs, &a, name, off, global, extra);
    }
    return rwp_run(cs, src, len, &a, out, err, cap);
}

/* Every buffer of @p a against @p b (as rwp_run lays them out): 0 equal,
 * 1 with the first difference in err. */
static int rwp_diff(const rwp_case *cs, const unsigned char *a, const unsigned char *b, char *err, size_t cap)
{
    size_t at, pos = 0;
    for (unsigned i = 0; i < cs->nbufs; pos += cs->bufs[i].bytes, i++) {
        for (at = 0; at < cs->bufs[i].bytes && a[pos + at] == b[pos + at]; at++)
            ;
        if (at < cs->bufs[i].bytes) {
            snprintf(err, cap, "buffer %u differs at byte %zu", i, at);
            return 1;
        }
    }
    return 0;
}

int rwp_full(const rwp_case *cs, unsigned char **out, char *err, size_t cap)
{
    static const rwp_split whole = { 0, 1, { 0 } };
    return rwp_parts(cs, cs->src, cs->len, cs->kernel, 0, &whole, out, err, cap);
}

int rwp_compare_coarse(const rwp_case *cs, const unsigned char *full, const char *src, size_t len,
                       const char *name, unsigned dim, unsigned f, char *err, size_t cap)
{
    static const rwp_split whole = { 0, 1, { 0 } };
    rwp_case c2 = *cs;
    unsigned char *co = NULL;
    c2.global[dim] = cs->global[dim] / f;
    while (c2.local[0] && c2.global[dim] % c2.local[dim])
        c2.local[dim] /= 2;   /* the other dimensions' stay: K may ask for them */
    int rc = rwp_parts(&c2, src, len, name, 0, &whole, &co, err, cap) < 0 ? -1 : rwp_diff(cs, full, co, err, cap);
    free(co);
    return rc;
}

int rwp_compare_group(const rwp_case *cs, const unsigned char *full, const char *src, size_t len,
                      const char *name, unsigned dim, unsigned f, char *err, size_t cap)
{
    static const rwp_split whole = { 0, 1, { 0 } };
    rwp_case c2 = *cs;
    unsigned char *co = NULL;
    if (!f || !cs->local[dim] || cs->local[dim] % f || cs->global[dim] % f) {
        snprintf(err, cap, "the case's local size %zu is not a multiple of %u", cs->local[dim], f);
        return -1;
    }
    c2.global[dim] = cs->global[dim] / f;
    c2.local[dim] = cs->local[dim] / f;
    int rc = rwp_parts(&c2, src, len, name, 0, &whole, &co, err, cap) < 0 ? -1 : rwp_diff(cs, full, co, err, cap);
    free(co);
    return rc;
}

int rwp_compare(const rwp_case *cs, const char *src, size_t len, const char *name, int extra,
                const rwp_split *sp, char *err, size_t cap)
{
    static rwp_argv a;
    unsigned char *full = NULL, *parts = NULL;
    int rc = -1;

    rwp_head(cs, &a);
    rwp_launch(cs, &a, cs->kernel, cs->offset, cs->global, 0);
    if (rwp_run(cs, cs->src, cs->len, &a, &full, err, cap) < 0)
        goto out;
    if (rwp_parts(cs, src, len, name, extra, sp, &parts, err, cap) < 0)
        goto out;
    rc = rwp_diff(cs, full, parts, err, cap);
out:
    free(full);
    free(parts);
    return rc;
}
