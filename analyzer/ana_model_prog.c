/* ana_model_prog.c — the kernel analysis applied to a model: each distinct
 * program source (with its build options) analyzed once; each launch's
 * byte ranges per argument from ana_kernel_region() over all its
 * work-groups; memory objects labelled with the argument names they are
 * bound to. */
#include "analyzer/ana_model_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ programs */

static uint64_t ana_fnv(const void *p, size_t n, uint64_t h)
{
    const unsigned char *s = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ s[i]) * 0x100000001b3ULL;
    return h;
}

static const char *ana_pool_fmt(ana_model *m, const char *prefix, const char *msg)
{
    size_t n = strlen(prefix) + strlen(msg);
    char *s = ana_pool_alloc(&m->pool, n + 1);
    if (!s)
        return prefix;
    snprintf(s, n + 1, "%s%s", prefix, msg);
    for (char *p = s; *p; p++)
        if ((unsigned char)*p < 0x20)
            *p = ' ';
    return s;
}

/* Analyzes program object @p i (once per distinct source and options). */
static ana_status ana_analyze_program(ana_model *m, size_t i)
{
    ana_object *o = &m->objs[i];
    ana_obj_x *x = &m->xo[i];
    const char *src = o->text, *opts = o->options;   /* headers inlined */
    uint64_t len = o->text_len;
    if (!src && x->inputs == 1 && x->input0) {   /* a link of one compiled program */
        const ana_object *in = ana_model_find(m, x->input0);
        if (in && in->text) {
            src = in->text;
            len = in->text_len;
            opts = in->options;
        }
    } else if (!src && x->inputs > 1) {
        x->why = "linked from several programs (not analyzed)";
    }
    if (!src) {
        if (!x->why)
            x->why = "no source";
        return ANA_OK;
    }
    uint64_t h = ana_fnv(src, (size_t)len, 0xcbf29ce484222325ULL);
    h = ana_fnv(opts ? opts : "", opts ? strlen(opts) + 1 : 0, h);
    for (size_t p = 0; p < m->nprogs; p++) {
        if (m->progs[p].hash == h) {
            x->an = (uint32_t)p + 1;
            x->why = m->progs[p].why;
            return ANA_OK;
        }
    }
    if (ana_grow((void **)&m->progs, &m->capprogs, m->nprogs + 1, sizeof *m->progs))
        return ANA_ERR_NOMEM;
    ana_prog_an *a = &m->progs[m->nprogs];
    memset(a, 0, sizeof *a);
    a->hash = h;
    a->program = o->id;
    if (m->unavailable) {
        a->why = m->unavailable;
    } else {
        char err[ANA_ERR_CAP];
        ana_status st = ana_program_analyze(src, (size_t)len, opts, &a->p, err, sizeof err);
        if (st == ANA_ERR_NOMEM)
            return st;
        if (st == ANA_ERR_UNAVAILABLE) {
            m->unavailable = ana_pool_fmt(m, "kernel analysis unavailable: ", err);
            a->why = m->unavailable;
        } else if (st == ANA_ERR_COMPILE) {
            a->why = ana_pool_fmt(m, "does not compile: ", err);
        } else if (st != ANA_OK) {
            a->why = ana_pool_fmt(m, "not analyzed: ", err[0] ? err : ana_strerror(st));
        }
        if (st != ANA_OK) {
            ana_program_free(a->p);
            a->p = NULL;
        }
    }
    x->an = (uint32_t)++m->nprogs;
    x->why = a->why;
    return ANA_OK;
}

const ana_program *ana_model_program(const ana_model *m, uint64_t program_id, const char **why)
{
    static const char *dummy;
    const char **w = why ? why : &dummy;
    uint32_t i;
    if (!m || !ana_idmap_get(&m->objmap, program_id, &i)) {
        *w = "no such program";
        return NULL;
    }
    const ana_obj_x *x = &m->xo[i];
    if (!m->analyzed) {
        *w = "not analyzed";
        return NULL;
    }
    if (!x->an || !m->progs[x->an - 1].p) {
        *w = x->why ? x->why : "not analyzed";
        return NULL;
    }
    *w = NULL;
    return m->progs[x->an - 1].p;
}

const ana_kernel *ana_model_kernel(const ana_model *m, uint64_t kernel_id, const char **why)
{
    static const char *dummy;
    const char **w = why ? why : &dummy;
    const ana_object *k = ana_model_find(m, kernel_id);
    if (!k || k->kind != ANA_OBJ_KERNEL) {
        *w = "no such kernel";
        return NULL;
    }
    const ana_program *p = ana_model_program(m, k->parent, w);
    if (!p)
        return NULL;
    if (!k->name || !k->name[0]) {
        *w = "kernel name unknown";
        return NULL;
    }
    const ana_kernel *ak = ana_program_find(p, k->name);
    if (!ak)
        *w = "kernel not found in its program's analysis";
    else if (ak->unsupported)
        *w = ak->unsupported;
    return ak;
}

/* ------------------------------------------------------------ launches */

/* Signedness of an OpenCL C scalar type: 1 unsigned, 0 signed, -1 not an
 * integer (floats, vectors, structs). */
static int ana_type_unsigned(const char *t)
{
    if (!t)
        return -1;
    for (;;) {
        while (*t == ' ')
            t++;
        if (!strncmp(t, "const ", 6))
            t += 6;
        else if (!strncmp(t, "__private ", 10))
            t += 10;
        else
            break;
    }
    size_t n = strlen(t);
    if (!n || (t[n - 1] >= '0' && t[n - 1] <= '9') || strchr(t, '*'))
        return -1;   /* vector types (int4, float2), pointers */
    static const char *const uns[] = { "uchar", "ushort", "uint", "ulong", "unsigned", "size_t",
                                       "bool", "uintptr_t", "uint8_t", "uint16_t", "uint32_t",
                                       "uint64_t" };
    static const char *const sig[] = { "char", "short", "int", "long", "signed", "ptrdiff_t",
                                       "intptr_t", "int8_t", "int16_t", "int32_t", "int64_t" };
    for (size_t i = 0; i < sizeof uns / sizeof uns[0]; i++)
        if (!strncmp(t, uns[i], strlen(uns[i])))
            return 1;
    for (size_t i = 0; i < sizeof sig / sizeof sig[0]; i++)
        if (!strncmp(t, sig[i], strlen(sig[i])))
            return 0;
    return -1;
}

ana_status ana_model_launch(const ana_model *m, const ana_cmd *c, const ana_kernel *k,
                            ana_launch *l, ana_argval *vals, unsigned vals_cap)
{
    if (!m || !c || !l || c->kind != ANA_CMD_KERNEL)
        return ANA_ERR_ARG;
    unsigned n = k ? k->nargs : c->nargs;
    if (n > vals_cap || (n && !vals))
        return ANA_ERR_ARG;
    memset(l, 0, sizeof *l);
    l->work_dim = c->work_dim;
    for (int d = 0; d < 3; d++) {
        l->offset[d] = c->goff[d];
        l->global[d] = c->global[d];
        l->local[d] = c->local[d];
    }
    l->nargs = n;
    l->args = vals;
    for (unsigned i = 0; i < n; i++) {
        ana_argval *v = &vals[i];
        memset(v, 0, sizeof *v);
        if (i >= c->nargs)
            continue;
        const ana_karg *a = &c->args[i];
        uint8_t kind = k ? k->args[i].kind : ANA_ARG_OTHER;
        if (a->kind == ANA_KARG_LOCAL) {
            v->size = a->size;
        } else if (a->kind == ANA_KARG_MEM) {
            const ana_object *o = ana_model_find(m, a->value);
            v->size = o ? o->size : 0;
        } else if (a->kind == ANA_KARG_SVM) {
            uint32_t s;
            if (ana_idmap_get(&m->svmmap, a->value, &s))
                v->size = m->objs[s].size;
            else {
                long si = ana_svm_find(m, a->value);
                if (si >= 0)
                    v->size = m->objs[si].size - (a->value - m->objs[si].id);
            }
        } else if (a->kind == ANA_KARG_BYTES && kind == ANA_ARG_SCALAR && a->size >= 1 &&
                   a->size <= 8 && !(a->size & (a->size - 1))) {
            int u = ana_type_unsigned(k->args[i].type);
            if (u < 0)
                continue;
            uint64_t raw = a->value;
            unsigned bits = a->size * 8;
            if (bits < 64) {
                raw &= (1ULL << bits) - 1;
                if (!u && (raw >> (bits - 1)))
                    raw |= ~((1ULL << bits) - 1);
            }
            v->known = 1;
            v->value = (int64_t)raw;
        }
    }
    return ANA_OK;
}

/* ------------------------------------------------------------ ranges of a launch */

#define ANA_LAUNCH_MAXREF 64

typedef struct ana_lb {
    ana_model *m;
    ana_memref refs[ANA_LAUNCH_MAXREF];
    unsigned n;
} ana_lb;

/* The reason of the first unknown access of argument @p arg. */
static const char *ana_unknown_why(const ana_kernel *k, unsigned arg)
{
    for (unsigned i = 0; i < k->naccesses; i++)
        if (k->accesses[i].arg == arg && !k->accesses[i].offset.known)
            return k->accesses[i].offset.reason ? k->accesses[i].offset.reason : "unknown access";
    return "unknown access";
}

/* Adds [lo, hi) of object @p id (SVM: the allocation holding address id + base). */
static void ana_lref(ana_lb *b, uint64_t id, int svm, uint64_t base, uint64_t lo, uint64_t hi,
                     int access, int whole, const char *why, unsigned arg)
{
    ana_model *m = b->m;
    if (b->n == ANA_LAUNCH_MAXREF)
        return;
    uint32_t oi;
    const ana_object *o;
    if (svm) {
        long s = ana_svm_find(m, id);
        uint32_t si;
        if (s < 0 && ana_idmap_get(&m->svmmap, id, &si))
            s = si;
        if (s < 0)
            return;
        o = &m->objs[s];
        base += id - o->id;
    } else {
        if (!ana_idmap_get(&m->objmap, id, &oi))
            return;
        o = &m->objs[oi];
    }
    uint64_t size = svm ? (o->size > base ? o->size - base : 0) : o->size;
    if (whole) {
        lo = 0;
        hi = size;
    }
    if (hi > size && size)
        hi = size;
    if (lo > hi)
        lo = hi;
    ana_memref *r = &b->refs[b->n++];
    memset(r, 0, sizeof *r);
    r->object = o->id;
    r->root = o->id;
    r->lo = lo + base;
    r->hi = hi + base;
    r->access = (uint8_t)access;
    r->whole = (uint8_t)whole;
    r->why = whole ? why : NULL;
    r->arg = (int16_t)arg;
    if (o->kind == ANA_OBJ_SUBBUFFER && o->parent) {
        r->root = o->parent;
        r->lo += o->origin;
        r->hi += o->origin;
    }
}

static void ana_launch_refs(ana_lb *b, const ana_cmd *c, const ana_kernel *k)
{
    ana_model *m = b->m;
    ana_argval vals[ANA_MAX_KARGS];
    ana_launch l;
    if (ana_model_launch(m, c, k, &l, vals, ANA_MAX_KARGS) != ANA_OK)
        return;
    uint64_t glo[3] = { 0, 0, 0 }, ghi[3] = { 1, 1, 1 };
    for (unsigned d = 0; d < c->work_dim; d++) {
        uint64_t g = c->global[d], ls = c->local[d];
        ghi[d] = ls ? g / ls + (g % ls != 0) : g;
    }
    for (unsigned i = 0; i < k->nargs && i < c->nargs; i++) {
        const ana_arg *a = &k->args[i];
        const ana_karg *ka = &c->args[i];
        int svm = ka->kind == ANA_KARG_SVM;
        if (!(ka->kind == ANA_KARG_MEM || svm) || !ka->value)
            continue;
        if (a->kind == ANA_ARG_IMAGE || a->kind == ANA_ARG_PIPE) {
            int acc = a->access ? a->access : ANA_ACC_RW;
            ana_lref(b, ka->value, svm, 0, 0, 0, acc, 1,
                     a->kind == ANA_ARG_IMAGE ? "image: whole" : "pipe: whole", i);
            continue;
        }
        if (a->kind != ANA_ARG_GLOBAL && a->kind != ANA_ARG_CONSTANT)
            continue;
        if (a->access == ANA_ACC_NONE)
            continue;
        ana_region rd, wr;
        if (ana_kernel_region(k, &l, i, glo, ghi, &rd, &wr) != ANA_OK) {
            ana_lref(b, ka->value, svm, 0, 0, 0, a->access, 1, "region not computable", i);
            continue;
        }
        const char *why = ana_unknown_why(k, i);
        if (!rd.empty && !wr.empty && rd.whole == wr.whole && rd.lo == wr.lo && rd.hi == wr.hi) {
            ana_lref(b, ka->value, svm, 0, rd.lo, rd.hi, ANA_ACC_RW, rd.whole, why, i);
            continue;
        }
        if (!rd.empty)
            ana_lref(b, ka->value, svm, 0, rd.lo, rd.hi, ANA_ACC_READ, rd.whole, why, i);
        if (!wr.empty)
            ana_lref(b, ka->value, svm, 0, wr.lo, wr.hi, ANA_ACC_WRITE, wr.whole, why, i);
    }
}

static int ana_same_launch(const ana_cmd *a, const ana_cmd *b)
{
    if (a->args != b->args || a->nargs != b->nargs || a->work_dim != b->work_dim)
        return 0;
    for (int d = 0; d < 3; d++)
        if (a->goff[d] != b->goff[d] || a->global[d] != b->global[d] || a->local[d] != b->local[d])
            return 0;
    return 1;
}

/* A label for memory object @p id from argument name @p name, unique. */
static ana_status ana_label(ana_model *m, uint64_t id, const char *name)
{
    uint32_t oi;
    if (!name || !name[0] || !ana_idmap_get(&m->objmap, id, &oi) || m->objs[oi].name ||
        m->objs[oi].kind == ANA_OBJ_SUBBUFFER)   /* labelled after their buffer */
        return ANA_OK;
    size_t n = strlen(name);
    uint64_t h = ana_fnv(name, n, 0xcbf29ce484222325ULL);
    uint32_t dummy;
    int taken = ana_idmap_get(&m->labels, h, &dummy);   /* a hash collision only adds "#id" */
    if (!taken && ana_idmap_put(&m->labels, h, 1))
        return ANA_ERR_NOMEM;
    char *s = ana_pool_alloc(&m->pool, n + 24);
    if (!s)
        return ANA_ERR_NOMEM;
    if (taken)
        snprintf(s, n + 24, "%s#%llu", name, (unsigned long long)id);
    else
        memcpy(s, name, n);
    m->objs[oi].name = s;
    return ANA_OK;
}

ana_status ana_model_analyze(ana_model *m)
{
    if (!m)
        return ANA_ERR_ARG;
    if (m->analyzed)
        return ANA_OK;
    for (size_t i = 0; i < m->nobjs; i++) {
        if (m->objs[i].kind != ANA_OBJ_PROGRAM)
            continue;
        ana_status st = ana_analyze_program(m, i);
        if (st != ANA_OK)
            return st;
    }
    m->analyzed = 1;
    /* kernels made by clCreateKernelsInProgram: their names in source order */
    for (size_t i = 0; i < m->nobjs; i++) {
        ana_object *o = &m->objs[i];
        if (o->kind != ANA_OBJ_KERNEL || (o->name && o->name[0]) || !m->xo[i].kip_index)
            continue;
        const ana_program *p = ana_model_program(m, o->parent, NULL);
        const ana_kernel *k = ana_program_kernel(p, m->xo[i].kip_index - 1);
        if (k && k->name)
            o->name = ana_pool_strndup(&m->pool, k->name, strlen(k->name));
    }
    for (size_t ci = 0; ci < m->ncmds; ci++) {
        ana_cmd *c = &m->cmds[ci];
        if (c->kind != ANA_CMD_KERNEL)
            continue;
        uint32_t ki;
        if (!ana_idmap_get(&m->objmap, c->kernel, &ki))
            continue;
        const char *why;
        const ana_kernel *k = ana_model_kernel(m, c->kernel, &why);
        ana_obj_x *x = &m->xo[ki];
        if (x->last_launch && ana_same_launch(&m->cmds[x->last_launch - 1], c)) {
            c->mem = m->cmds[x->last_launch - 1].mem;
            c->nmem = m->cmds[x->last_launch - 1].nmem;
        } else if (!k || k->unsupported) {
            /* keep the whole-buffer ranges; say why */
            if (c->nmem) {
                ana_memref *r = ana_pool_dup(&m->pool, c->mem, c->nmem * sizeof *r);
                if (!r)
                    return ANA_ERR_NOMEM;
                for (unsigned j = 0; j < c->nmem; j++)
                    r[j].why = m->unavailable ? "kernel analysis unavailable" : why ? why : "kernel not analyzed";
                c->mem = r;
            }
        } else {
            ana_lb b;
            b.m = m;
            b.n = 0;
            ana_launch_refs(&b, c, k);
            c->mem = b.n ? ana_pool_dup(&m->pool, b.refs, b.n * sizeof b.refs[0]) : NULL;
            if (b.n && !c->mem)
                return ANA_ERR_NOMEM;
            c->nmem = b.n;
            for (unsigned j = 0; j < b.n; j++) {
                ana_status st = ana_label(m, b.refs[j].object, k->args[b.refs[j].arg].name);
                if (st != ANA_OK)
                    return st;
            }
        }
        x->last_launch = (uint32_t)ci + 1;
    }
    return ANA_OK;
}
