/* replay_hints.c — what each kernel launch of a trace may write, from the
 * kernel analysis (analyzer/ana.h), for the replayer's defined-byte
 * tracking (rpl.h, rpl_write_hint): the replayer does not link the
 * analyzer, so clrr replay computes this first and hands it over. */
#include "tools/clrr/cli_ana.h"
#include "replayer/rpl.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

/* The scalar size of the 3-component vector type @p type ("float3*")
 * points to, 0 when it is no such pointer. */
static uint32_t cli_hint_pad3(const char *type)
{
    static const struct { const char *name; uint32_t size; } t[] = {
        {"char3*", 1}, {"uchar3*", 1}, {"short3*", 2}, {"ushort3*", 2}, {"half3*", 2}, {"int3*", 4},
        {"uint3*", 4}, {"float3*", 4}, {"long3*", 8}, {"ulong3*", 8}, {"double3*", 8},
    };
    for (size_t i = 0; type && i < sizeof t / sizeof *t; i++)
        if (!strcmp(type, t[i].name))
            return t[i].size;
    return 0;
}

static int cli_hint_cmp(const void *pa, const void *pb)
{
    const rpl_write_hint *a = pa, *b = pb;
    if (a->seq != b->seq)
        return a->seq < b->seq ? -1 : 1;
    if (a->mem != b->mem)
        return a->mem < b->mem ? -1 : 1;
    return 0;
}

/* Appends one hint; a buffer named twice by a launch gets the hull, and a
 * whole (unknown) range drops the hint (marked by lo = UINT64_MAX). */
static int cli_hint_add(rpl_write_hint **v, size_t *n, size_t *cap, const rpl_write_hint *h)
{
    if (*n == *cap) {
        size_t c = *cap ? *cap * 2 : 64;
        rpl_write_hint *a = realloc(*v, c * sizeof *a);
        if (!a)
            return -1;
        *v = a;
        *cap = c;
    }
    (*v)[(*n)++] = *h;
    return 0;
}

int cli_replay_hints(const char *path, rpl_write_hint **out, size_t *nout)
{
    *out = NULL;
    *nout = 0;
    /* Another LLVM already in the process (`oclgrind clrr replay`: Oclgrind
     * preloads its LLVM 14): the analysis' LLVM would clash with it, so no
     * hints, and launches define their buffers whole. */
    if (dlsym(RTLD_DEFAULT, "LLVMContextCreate"))
        return -1;
    tf_reader *r = NULL;
    ana_model *m = NULL;
    char err[256];
    if (tf_reader_open(&r, path, NULL) != TF_OK)
        return -1;
    int rc = -1;
    if (ana_model_build(r, &m, err, sizeof err) != ANA_OK || ana_model_analyze(m) != ANA_OK)
        goto out;
    rpl_write_hint *v = NULL;
    size_t n = 0, cap = 0;
    size_t nc = ana_model_command_count(m);
    for (size_t i = 0; i < nc; i++) {
        const ana_cmd *c = ana_model_command(m, i);
        if (c->kind != ANA_CMD_KERNEL)
            continue;
        const char *why = NULL;
        const ana_kernel *ak = ana_model_kernel(m, c->kernel, &why);
        for (unsigned k = 0; k < c->nmem; k++) {
            const ana_memref *mr = &c->mem[k];
            rpl_write_hint h = {c->seq, mr->object, 0, 0, 0};
            if (mr->object != mr->root || mr->whole)
                h.lo = UINT64_MAX;   /* unknown: the replayer's rule (whole) */
            else if (mr->access & ANA_ACC_WRITE) {
                h.lo = mr->lo;
                h.hi = mr->hi;
                if (ak && mr->arg >= 0 && (unsigned)mr->arg < ak->nargs)
                    h.pad3 = cli_hint_pad3(ak->args[mr->arg].type);
            }
            if (cli_hint_add(&v, &n, &cap, &h) < 0) {
                free(v);
                goto out;
            }
        }
    }
    if (n)
        qsort(v, n, sizeof *v, cli_hint_cmp);
    /* one per (launch, buffer): the hull of its writes; unknown wins */
    size_t w = 0;
    for (size_t i = 0; i < n;) {
        rpl_write_hint h = v[i];
        size_t j = i + 1;
        for (; j < n && v[j].seq == h.seq && v[j].mem == h.mem; j++) {
            if (h.lo == UINT64_MAX || v[j].lo == UINT64_MAX) {
                h.lo = UINT64_MAX;
            } else if (v[j].lo < v[j].hi) {
                if (h.lo >= h.hi) {
                    h.lo = v[j].lo;
                    h.hi = v[j].hi;
                    h.pad3 = v[j].pad3;
                } else {
                    h.lo = v[j].lo < h.lo ? v[j].lo : h.lo;
                    h.hi = v[j].hi > h.hi ? v[j].hi : h.hi;
                    if (v[j].pad3 != h.pad3)   /* written as two types: every byte counts */
                        h.pad3 = 0;
                }
            }
        }
        if (h.lo != UINT64_MAX)
            v[w++] = h;
        i = j;
    }
    *out = v;
    *nout = w;
    rc = 0;
out:
    ana_model_free(m);
    tf_reader_close(r);
    return rc;
}
