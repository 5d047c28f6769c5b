/* opt_dead.c — dead command elimination (Helium's dead task elimination)
 * on the analyzer's model. A backward liveness pass over the commands in
 * call order: per memory object, the bytes that something later reads
 * before they are overwritten are live. A kernel launch, write, copy or
 * fill is dead when none of the bytes it may write is live, and each byte
 * that a later command overwrites is overwritten by a command that runs
 * after it (same in-order queue, or the host waited for it first). A dead
 * command's reads do not make anything live, so whole chains of unobserved
 * work die together.
 *
 * Conservative choices (optimizer/README.md): reads are what the model says
 * a command may read; a kernel argument whose access is unknown reads and
 * writes the whole object, whatever its memory flags say: every memory
 * argument of a kernel without an analysis (a program from a binary or IL,
 * one that does not compile here, an unsupported kernel), and every one the
 * analysis did not classify as a buffer, image or pipe parameter; a launch
 * that names an object the trace never made is never dropped; only clEnqueueWriteBuffer, clEnqueueFillBuffer
 * and clEnqueueCopyBuffer overwrite for sure (a kernel's write region is a
 * hull of what it may write); memory the host can see outside the API
 * (USE_HOST_PTR, SVM, pipes, images over buffers, objects the trace never
 * created) is never dropped; kernels whose program calls printf are kept,
 * and so are commands whose event the application asks the profiling times
 * of (clGetEventProfilingInfo: it measures them, as benchmarks do; dropped,
 * their times are meaningless, and live the layer has to run them after
 * all when the times are asked: SHOC BusSpeedDownload ran 2.1x slower);
 * a command of unknown effect reads everything; at the end of a trace
 * that was cut short, everything not released is read. */
#include "optimizer/opt_int.h"

#include "analyzer/ana.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CL_MEM_USE_HOST_PTR_ (1u << 3)
#define OPT_NONE UINT32_MAX

/* ------------------------------------------------------------ interval sets */

typedef struct opt_iv {
    uint64_t lo, hi;
    uint32_t tag;             /* kill labels: the killing command; live set: unused */
} opt_iv;

typedef struct opt_ivs {
    opt_iv *v;
    size_t n, cap;
} opt_ivs;

/* Removes [lo, hi) from @p s (splitting an interval that straddles it). */
static int opt_ivs_sub(opt_ivs *s, uint64_t lo, uint64_t hi)
{
    for (size_t i = 0; i < s->n;) {
        opt_iv *x = &s->v[i];
        if (x->hi <= lo || x->lo >= hi) {
            i++;
        } else if (x->lo < lo && x->hi > hi) {
            if (plan_grow((void **)&s->v, &s->cap, s->n + 1, sizeof *s->v))
                return -1;
            x = &s->v[i];
            memmove(&s->v[i + 2], &s->v[i + 1], (s->n - i - 1) * sizeof *s->v);
            s->v[i + 1] = (opt_iv){hi, x->hi, x->tag};
            x->hi = lo;
            s->n++;
            i += 2;
        } else if (x->lo < lo) {
            x->hi = lo;
            i++;
        } else if (x->hi > hi) {
            x->lo = hi;
            i++;
        } else {
            memmove(x, x + 1, (s->n - i - 1) * sizeof *s->v);
            s->n--;
        }
    }
    return 0;
}

/* Puts [lo, hi) with @p tag into @p s (what it covered is replaced). */
static int opt_ivs_set(opt_ivs *s, uint64_t lo, uint64_t hi, uint32_t tag)
{
    if (lo >= hi)
        return 0;
    if (opt_ivs_sub(s, lo, hi) || plan_grow((void **)&s->v, &s->cap, s->n + 1, sizeof *s->v))
        return -1;
    size_t i = 0;
    while (i < s->n && s->v[i].lo < lo)
        i++;
    memmove(&s->v[i + 1], &s->v[i], (s->n - i) * sizeof *s->v);
    s->v[i] = (opt_iv){lo, hi, tag};
    s->n++;
    /* merge with neighbours of the same tag */
    if (i + 1 < s->n && s->v[i + 1].lo == hi && s->v[i + 1].tag == tag) {
        s->v[i].hi = s->v[i + 1].hi;
        memmove(&s->v[i + 1], &s->v[i + 2], (s->n - i - 2) * sizeof *s->v);
        s->n--;
    }
    if (i > 0 && s->v[i - 1].hi == lo && s->v[i - 1].tag == tag) {
        s->v[i - 1].hi = s->v[i].hi;
        memmove(&s->v[i], &s->v[i + 1], (s->n - i - 1) * sizeof *s->v);
        s->n--;
    }
    return 0;
}

static int opt_ivs_overlaps(const opt_ivs *s, uint64_t lo, uint64_t hi)
{
    for (size_t i = 0; i < s->n; i++)
        if (s->v[i].lo < hi && s->v[i].hi > lo)
            return 1;
    return 0;
}

/* ------------------------------------------------------------ the pass */

typedef struct opt_mstate {
    opt_ivs live;             /* bytes read later before being overwritten */
    opt_ivs kill;             /* bytes overwritten later, by which command */
} opt_mstate;

typedef struct opt_dead {
    const ana_model *m;
    plan_map mem;              /* root id -> opt_mstate */
    opt_mstate **all;
    size_t nall, capall;
    uint32_t *done_at;        /* per command: index of the host sync after which it is complete */
    plan_map parents;          /* buffers that images are made from */
    int has_svm;
    int (*excluded)(void *user, uint64_t seq);   /* kept whatever they do; may be NULL */
    void *user;
    /* the memory of the command at hand (opt_view): the model's ranges, or
     * for arguments of unknown access their objects read and written whole */
    const ana_memref *refs;
    unsigned nrefs;
    int opaque;               /* it names memory the model does not know */
    ana_memref *own;          /* scratch for refs */
    size_t capown;
} opt_dead;

static opt_mstate *opt_ms(opt_dead *d, uint64_t root)
{
    opt_mstate *s = plan_map_get(&d->mem, root);
    if (s || !root)
        return s;
    s = calloc(1, sizeof *s);
    if (!s || plan_grow((void **)&d->all, &d->capall, d->nall + 1, sizeof *d->all) || plan_map_put(&d->mem, root, s)) {
        free(s);
        return NULL;
    }
    d->all[d->nall++] = s;
    return s;
}

static void opt_range(const ana_model *m, const ana_memref *r, uint64_t *lo, uint64_t *hi)
{
    const ana_object *o = ana_model_find(m, r->root);
    if (r->whole) {
        *lo = 0;
        *hi = o && o->size ? o->size : UINT64_MAX;
    } else {
        *lo = r->lo;
        *hi = r->hi;
    }
}

/* Launch argument @p i of @p c (a memory object) as a reference that
 * reads and writes its object whole; 0, or 1 when the object is not memory
 * the model knows (d->opaque is set), -1 out of memory. */
static int opt_whole_arg(opt_dead *d, const ana_cmd *c, unsigned i)
{
    const ana_object *o = ana_model_find(d->m, c->args[i].value);
    if (o && (o->kind == ANA_OBJ_SAMPLER || o->kind == ANA_OBJ_QUEUE || o->kind == ANA_OBJ_EVENT ||
              o->kind == ANA_OBJ_USER_EVENT))
        return 0;   /* not memory */
    if (!o || !(o->kind == ANA_OBJ_BUFFER || o->kind == ANA_OBJ_SUBBUFFER || o->kind == ANA_OBJ_IMAGE ||
                o->kind == ANA_OBJ_PIPE)) {
        d->opaque = 1;
        return 1;
    }
    if (plan_grow((void **)&d->own, &d->capown, d->nrefs + 1, sizeof *d->own))
        return -1;
    ana_memref *r = &d->own[d->nrefs++];
    memset(r, 0, sizeof *r);
    r->object = r->root = o->id;
    if (o->kind == ANA_OBJ_SUBBUFFER && o->parent)
        r->root = o->parent;
    r->access = ANA_ACC_RW;
    r->whole = 1;
    r->arg = (int16_t)i;
    r->why = "access unknown";
    return 0;
}

/* Sets d->refs, d->nrefs and d->opaque to what command @p c touches. A launch
 * keeps the model's ranges only for arguments the kernel analysis
 * classified (a __global or __constant pointer, an image, a pipe); every
 * other memory argument reads and writes its object whole (the fallback
 * ranges before the analysis follow the memory flags, which a kernel
 * without an analysis need not respect). @return 0, -1 out of memory. */
static int opt_view(opt_dead *d, const ana_cmd *c)
{
    d->refs = c->mem;
    d->nrefs = c->nmem;
    d->opaque = 0;
    if (c->kind != ANA_CMD_KERNEL)
        return 0;
    const char *why = NULL;
    const ana_kernel *k = ana_model_kernel(d->m, c->kernel, &why);
    if (k && k->unsupported)
        k = NULL;
    unsigned n = 0;
    for (unsigned j = 0; j < c->nmem; j++) {   /* the model's ranges of classified arguments */
        const ana_memref *r = &c->mem[j];
        int known = k && r->arg >= 0 && (unsigned)r->arg < k->nargs && (unsigned)r->arg < c->nargs &&
                    c->args[r->arg].kind == ANA_KARG_MEM;
        if (known) {
            uint8_t kind = k->args[r->arg].kind;
            known = kind == ANA_ARG_GLOBAL || kind == ANA_ARG_CONSTANT || kind == ANA_ARG_IMAGE || kind == ANA_ARG_PIPE;
        }
        if (!known && r->arg >= 0 && (unsigned)r->arg < c->nargs && c->args[r->arg].kind == ANA_KARG_MEM)
            continue;   /* replaced below */
        if (plan_grow((void **)&d->own, &d->capown, n + 1, sizeof *d->own))
            return -1;
        d->own[n++] = *r;
    }
    d->nrefs = n;
    for (unsigned i = 0; i < c->nargs; i++) {
        if (c->args[i].kind != ANA_KARG_MEM || !c->args[i].value)
            continue;
        int known = k && i < k->nargs;
        if (known) {
            uint8_t kind = k->args[i].kind;
            known = kind == ANA_ARG_GLOBAL || kind == ANA_ARG_CONSTANT || kind == ANA_ARG_IMAGE ||
                    kind == ANA_ARG_PIPE || kind == ANA_ARG_SAMPLER;
        }
        const ana_object *o = ana_model_find(d->m, c->args[i].value);
        if (!o || o->kind == ANA_OBJ_UNKNOWN)
            d->opaque = 1;   /* an object the trace never made */
        else if (!known && opt_whole_arg(d, c, i) < 0)
            return -1;
    }
    d->refs = d->own;
    return 0;
}

/* The host can see this memory outside the API, or we do not know it. */
static int opt_visible(const opt_dead *d, const ana_memref *r)
{
    const ana_object *o = ana_model_find(d->m, r->object), *root = ana_model_find(d->m, r->root);
    if (!o || !root || !o->create_seq || !root->create_seq)
        return 1;
    if ((o->flags | root->flags) & CL_MEM_USE_HOST_PTR_)
        return 1;
    if (root->kind == ANA_OBJ_IMAGE)
        return root->parent != 0;
    return root->kind != ANA_OBJ_BUFFER || plan_map_get(&d->parents, root->id) != NULL;
}

/* Only these overwrite every byte of their range for sure. */
static int opt_must_write(const ana_cmd *c, const ana_memref *r)
{
    if (r->whole || !(r->access & ANA_ACC_WRITE))
        return 0;
    return !strcmp(c->fn, "clEnqueueWriteBuffer") || !strcmp(c->fn, "clEnqueueFillBuffer") ||
           !strcmp(c->fn, "clEnqueueCopyBuffer");
}

static int opt_printf_kernel(const ana_model *m, const ana_cmd *c)
{
    const ana_object *k = ana_model_find(m, c->kernel);
    const ana_object *p = k ? ana_model_find(m, k->parent) : NULL;
    if (!p || !p->source)
        return 0;
    return memmem(p->text, (size_t)p->text_len, "printf", 6) != NULL;
}

/* A command we may drop at all (its deadness is decided by the bytes). */
static int opt_candidate(const opt_dead *d, const ana_cmd *c)
{
    if (!plan_droppable(c->fn) || d->opaque || (d->excluded && d->excluded(d->user, c->seq)))
        return 0;
    if (c->timed)   /* the application measures it: what it prints of it is its result */
        return 0;
    if (c->kind == ANA_CMD_KERNEL && (d->has_svm || opt_printf_kernel(d->m, c)))
        return 0;
    for (unsigned i = 0; i < d->nrefs; i++)
        if ((d->refs[i].access & ANA_ACC_WRITE) && opt_visible(d, &d->refs[i]))
            return 0;
    return 1;
}

/* When the host knew each command complete: the index of the first host
 * synchronization after it that waited for it (OPT_NONE: never). */
static int opt_completion(opt_dead *d)
{
    size_t n = ana_model_command_count(d->m);
    d->done_at = malloc((n ? n : 1) * sizeof *d->done_at);
    uint32_t *pend = malloc((n ? n : 1) * sizeof *pend);
    if (!d->done_at || !pend) {
        free(pend);
        return -1;
    }
    size_t npend = 0;
    for (size_t i = 0; i < n; i++) {
        const ana_cmd *c = ana_model_command(d->m, i);
        d->done_at[i] = OPT_NONE;
        int host = ana_cmd_kind_is_host((ana_cmd_kind)c->kind);
        if (!host)
            pend[npend++] = (uint32_t)i;
        int fin = c->kind == ANA_CMD_FINISH, wait = c->kind == ANA_CMD_WAIT, blk = !host && c->blocking;
        if (!fin && !wait && !blk)
            continue;
        /* what the host waited for here: a queue (clFinish; a blocking
         * command on an in-order queue), the command itself, or events */
        for (size_t j = 0; j < npend;) {
            const ana_cmd *p = ana_model_command(d->m, pend[j]);
            int done = 0;
            if (fin)
                done = p->queue == c->queue;
            else if (blk)
                done = pend[j] == i || (c->in_order && p->queue == c->queue);
            for (unsigned w = 0; wait && w < c->nwait && !done; w++)
                done = p->event && p->event == c->wait[w];
            if (done) {
                d->done_at[pend[j]] = (uint32_t)i;
                pend[j] = pend[--npend];
            } else {
                j++;
            }
        }
    }
    free(pend);
    return 0;
}

/* Command @p k (an overwrite) runs after command @p c for sure. */
static int opt_ordered(const opt_dead *d, size_t ci, size_t ki)
{
    const ana_cmd *c = ana_model_command(d->m, ci), *k = ana_model_command(d->m, ki);
    if (c->queue == k->queue && c->in_order && k->in_order)
        return 1;
    if (d->done_at[ci] != OPT_NONE && d->done_at[ci] < ki)
        return 1;
    for (unsigned w = 0; c->event && w < k->nwait; w++)
        if (k->wait[w] == c->event)
            return 1;
    return 0;
}

/* Whether candidate @p ci is dead; *killer: a command that overwrites its
 * output (OPT_NONE when nothing does: it is never read at all). */
static int opt_is_dead(opt_dead *d, size_t ci, uint32_t *killer)
{
    *killer = OPT_NONE;
    for (unsigned i = 0; i < d->nrefs; i++) {
        const ana_memref *r = &d->refs[i];
        uint64_t lo, hi;
        if (!(r->access & ANA_ACC_WRITE))
            continue;
        opt_range(d->m, r, &lo, &hi);
        opt_mstate *s = plan_map_get(&d->mem, r->root);
        if (!s)
            continue;
        if (opt_ivs_overlaps(&s->live, lo, hi))
            return 0;
        for (size_t j = 0; j < s->kill.n; j++) {
            const opt_iv *x = &s->kill.v[j];
            if (x->lo >= hi || x->hi <= lo)
                continue;
            if (!opt_ordered(d, ci, x->tag))
                return 0;
            if (*killer == OPT_NONE || x->tag < *killer)
                *killer = x->tag;
        }
    }
    return 1;
}

/* A command that stays: its overwrites kill, its reads make bytes live. */
static int opt_keep(opt_dead *d, size_t ci)
{
    const ana_cmd *c = ana_model_command(d->m, ci);
    if (!d->nrefs && (c->kind == ANA_CMD_NATIVE || c->kind == ANA_CMD_OTHER)) {   /* unknown: reads everything */
        for (size_t i = 0; i < ana_model_object_count(d->m); i++) {
            const ana_object *o = ana_model_object(d->m, i);
            opt_mstate *s = o->kind == ANA_OBJ_BUFFER || o->kind == ANA_OBJ_IMAGE ? opt_ms(d, o->id) : NULL;
            if (s && opt_ivs_set(&s->live, 0, UINT64_MAX, 0))
                return -1;
        }
        return 0;
    }
    for (unsigned i = 0; i < d->nrefs; i++) {
        const ana_memref *r = &d->refs[i];
        uint64_t lo, hi;
        opt_range(d->m, r, &lo, &hi);
        opt_mstate *s = opt_ms(d, r->root);
        if (!s)
            return -1;
        if (opt_must_write(c, r) && (opt_ivs_sub(&s->live, lo, hi) || opt_ivs_set(&s->kill, lo, hi, (uint32_t)ci)))
            return -1;
    }
    for (unsigned i = 0; i < d->nrefs; i++) {
        const ana_memref *r = &d->refs[i];
        uint64_t lo, hi;
        int reads = (r->access & ANA_ACC_READ) || (r->whole && c->kind == ANA_CMD_KERNEL);
        opt_range(d->m, r, &lo, &hi);
        opt_mstate *s = opt_ms(d, r->root);
        if (reads && (!s || opt_ivs_set(&s->live, lo, hi, 0)))
            return -1;
    }
    return 0;
}

static char *opt_dead_reason(const opt_dead *d, uint32_t killer)
{
    char buf[320], name[64] = "its output";
    for (unsigned i = 0; i < d->nrefs; i++)
        if (d->refs[i].access & ANA_ACC_WRITE) {
            char l[48];
            snprintf(name, sizeof name, "%s", ana_model_label(d->m, d->refs[i].root, l, sizeof l));
            break;
        }
    if (killer != OPT_NONE) {
        const ana_cmd *k = ana_model_command(d->m, killer);
        snprintf(buf, sizeof buf, "what it writes to %s is overwritten by call #%llu %s before anything reads it",
                 name, (unsigned long long)k->seq, k->fn);
    } else {
        int any = 0;
        for (unsigned i = 0; i < d->nrefs; i++)
            any |= (d->refs[i].access & ANA_ACC_WRITE) != 0;
        if (any)
            snprintf(buf, sizeof buf, "what it writes to %s is never read (nor read by a command that is kept)", name);
        else
            snprintf(buf, sizeof buf, "it writes no memory");
    }
    return strdup(buf);
}

static void opt_dead_free(opt_dead *d)
{
    for (size_t i = 0; i < d->nall; i++) {
        free(d->all[i]->live.v);
        free(d->all[i]->kill.v);
        free(d->all[i]);
    }
    free(d->all);
    free(d->done_at);
    free(d->own);
    plan_map_free(&d->mem);
    plan_map_free(&d->parents);
}

plan_status opt_dead_find(const ana_model *m, int (*excluded)(void *user, uint64_t seq), void *user,
                          opt_dead_cmd **out, size_t *nout, char *err, size_t err_cap)
{
    opt_dead d;
    memset(&d, 0, sizeof d);
    d.m = m;
    d.excluded = excluded;
    d.user = user;
    *out = NULL;
    *nout = 0;
    opt_dead_cmd *res = NULL;
    size_t nres = 0, capres = 0;
    plan_status st = PLAN_ERR_NOMEM;
    const ana_model_info *info = ana_model_get_info(m);
    for (size_t i = 0; i < ana_model_object_count(m); i++) {
        const ana_object *o = ana_model_object(m, i);
        if (o->kind == ANA_OBJ_SVM)
            d.has_svm = 1;
        if (o->kind == ANA_OBJ_IMAGE && o->parent && plan_map_put(&d.parents, o->parent, (void *)o))
            goto out;
        /* a trace cut short: whatever was not released may still be read */
        if ((info->truncated || info->incomplete) && !o->release_seq &&
            (o->kind == ANA_OBJ_BUFFER || o->kind == ANA_OBJ_IMAGE)) {
            opt_mstate *s = opt_ms(&d, o->id);
            if (!s || opt_ivs_set(&s->live, 0, UINT64_MAX, 0))
                goto out;
        }
    }
    if (opt_completion(&d))
        goto out;
    for (size_t i = ana_model_command_count(m); i-- > 0;) {
        const ana_cmd *c = ana_model_command(m, i);
        uint32_t killer;
        if (opt_view(&d, c))
            goto out;
        if (opt_candidate(&d, c) && opt_is_dead(&d, i, &killer)) {
            if (plan_grow((void **)&res, &capres, nres + 1, sizeof *res))
                goto out;
            res[nres].seq = c->seq;
            res[nres].reason = opt_dead_reason(&d, killer);
            if (!res[nres++].reason)
                goto out;
            continue;
        }
        if (opt_keep(&d, i))
            goto out;
    }
    /* found last to first: give them in call order */
    for (size_t i = 0; i < nres / 2; i++) {
        opt_dead_cmd t = res[i];
        res[i] = res[nres - 1 - i];
        res[nres - 1 - i] = t;
    }
    *out = res;
    *nout = nres;
    res = NULL;
    nres = 0;
    st = PLAN_OK;
out:
    for (size_t i = 0; i < nres; i++)
        free((char *)res[i].reason);
    free(res);
    opt_dead_free(&d);
    if (st != PLAN_OK)
        plan_seterr(err, err_cap, st, "dead command elimination: out of memory");
    return st;
}
