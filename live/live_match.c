/* opt_exec.c — applying a plan to a run: every call of the run goes
 * through the same tracker as when the plan was made; a droppable call
 * gets its pattern and occurrence, which name at most one transformation.
 * A dead command is dropped when the run has the structure the plan was
 * made for (same fingerprint); a redundant transfer when the memory holds
 * its bytes right now. Anything else runs as recorded, and the reason is
 * counted. */
#include "live/live_int.h"
#include "replayer/rpl.h"

#include <stdlib.h>
#include <string.h>

#include <jansson.h>

/* The split engine's view of a split (opt_exec_split_rpl). */
struct opt_rpl_conv {
    rpl_split_part parts[OPT_SPLIT_MAX_PARTS];
    rpl_split_region *rg;
    size_t caprg;
    rpl_split_model *models;
    size_t capmodels;
};

static int opt_cmp_key(const void *a, const void *b)
{
    const opt_xform *x = *(const opt_xform *const *)a, *y = *(const opt_xform *const *)b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return x->occurrence < y->occurrence ? -1 : x->occurrence > y->occurrence;
}

static int opt_cmp_seq(const void *a, const void *b)
{
    const opt_xform *x = *(const opt_xform *const *)a, *y = *(const opt_xform *const *)b;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

opt_status opt_trace_fingerprint(const char *path, size_t max_memory, uint64_t *fp, uint64_t *calls, char *err,
                                 size_t err_cap)
{
    tf_reader *r = NULL;
    tf_status ts;
    opt_status st = opt_open_trace(path, max_memory, &r, err, err_cap);
    if (st != OPT_OK)
        return st;
    opt_track t;
    opt_track_init(&t, NULL);
    t.fp_on = 1;
    tf_item it;
    while (st == OPT_OK && (ts = tf_reader_next(r, &it)) == TF_OK)
        if (it.type == TF_ITEM_CALL)
            st = opt_track_call(&t, &it.u.call, OPT_FATE_RUN);
    if (st == OPT_OK && ts != TF_END)
        st = opt_seterr(err, err_cap, OPT_ERR_TRACE, "%s%s%s", tf_strerror(ts), *tf_reader_error(r) ? ": " : "",
                        tf_reader_error(r));
    else if (st != OPT_OK)
        opt_seterr(err, err_cap, st, "%s", opt_strerror(st));
    *fp = opt_track_fingerprint(&t);
    if (calls)
        *calls = t.calls;
    opt_track_free(&t);
    tf_reader_close(r);
    return st;
}

/* The matcher without its run: transformations sorted for lookup. */
static opt_status opt_exec_new(const opt_plan *p, opt_exec **out, char *err, size_t err_cap)
{
    *out = NULL;
    opt_exec *x = calloc(1, sizeof *x);
    if (!x)
        return opt_seterr(err, err_cap, OPT_ERR_NOMEM, "out of memory");
    x->p = p;
    x->n = opt_plan_xform_count(p);
    size_t n = x->n ? x->n : 1;
    x->by_key = malloc(n * sizeof *x->by_key);
    x->by_seq = malloc(n * sizeof *x->by_seq);
    x->state = calloc(n, 1);
    opt_track_init(&x->t, p);
    if (!x->by_key || !x->by_seq || !x->state) {
        opt_exec_close(x);
        return opt_seterr(err, err_cap, OPT_ERR_NOMEM, "out of memory");
    }
    for (size_t i = 0; i < x->n; i++)
        x->by_key[i] = x->by_seq[i] = opt_plan_xform(p, i);
    for (size_t i = 0; i < x->n; i++)
        x->nspec_xf += x->by_key[i]->action == OPT_ACT_SPECIALIZE;
    qsort(x->by_key, x->n, sizeof *x->by_key, opt_cmp_key);
    qsort(x->by_seq, x->n, sizeof *x->by_seq, opt_cmp_seq);
    *out = x;
    return OPT_OK;
}

opt_status opt_exec_open(const opt_plan *p, const char *path, size_t max_memory, opt_exec **out, char *err,
                         size_t err_cap)
{
    opt_exec *x;
    opt_status st = opt_exec_new(p, &x, err, err_cap);
    if (st != OPT_OK)
        return st;
    st = opt_trace_fingerprint(path, max_memory, &x->fp, NULL, err, err_cap);
    if (st != OPT_OK) {
        opt_exec_close(x);
        return st;
    }
    x->same_trace = x->fp == opt_plan_get_info(p)->fingerprint;
    *out = x;
    return OPT_OK;
}

static int opt_is_launch(const char *fn)
{
    return !strcmp(fn, "clEnqueueNDRangeKernel") || !strcmp(fn, "clEnqueueTask");
}

static int opt_name_in(char *const *names, size_t n, const char *s)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(names[i], s))
            return 1;
    return 0;
}

static int opt_name_add(char ***names, size_t *n, const char *s)
{
    if (opt_name_in(*names, *n, s))
        return 0;
    char **p = realloc(*names, (*n + 1) * sizeof *p), *d = strdup(s);
    if (p)
        *names = p;
    if (!p || !d) {
        free(d);
        return -1;
    }
    p[(*n)++] = d;
    return 0;
}

/* Live: the functions and, for launches, the kernel names of the plan's
 * transformations. A call outside them cannot match any: it needs no
 * pattern (the costly part of a call), and its pattern's occurrences,
 * which only the plan's patterns need, are not counted. */
static int opt_filter_init(opt_exec *x)
{
    for (size_t i = 0; i < x->n; i++) {
        const opt_xform *f = opt_plan_xform(x->p, i);
        if (opt_name_add(&x->fns, &x->nfns, f->function))
            return -1;
        if (!opt_is_launch(f->function))
            continue;
        json_t *pat = json_loads(f->pattern, 0, NULL);
        const char *k = json_string_value(json_object_get(json_object_get(pat, "kernel"), "kernel"));
        int rc = k ? opt_name_add(&x->knames, &x->nknames, k) : 0;
        if (!k)
            x->any_kernel = 1;   /* no name to go by: every launch is looked at */
        json_decref(pat);
        if (rc)
            return -1;
    }
    return 0;
}

static int opt_may_match(const opt_exec *x, const tf_call *c)
{
    if (!opt_name_in(x->fns, x->nfns, c->sig->name))
        return 0;
    if (!opt_is_launch(c->sig->name) || x->any_kernel)
        return 1;
    uint64_t kid = 0;
    opt_arg_u64(c, "kernel", &kid);
    const opt_obj *k = opt_track_obj(&x->t, kid);
    return !k || k->kind != OPT_OBJ_KERNEL || !k->name || opt_name_in(x->knames, x->nknames, k->name);
}

opt_status opt_exec_open_live(const opt_plan *p, opt_exec **out, char *err, size_t err_cap)
{
    opt_status st = opt_exec_new(p, out, err, err_cap);
    if (st != OPT_OK)
        return st;
    (*out)->live = 1;
    if (opt_filter_init(*out)) {
        opt_exec_close(*out);
        *out = NULL;
        return opt_seterr(err, err_cap, OPT_ERR_NOMEM, "out of memory");
    }
    size_t nf = opt_plan_fused_count(p);
    if (nf && !((*out)->fz_forced = calloc(nf, sizeof *(*out)->fz_forced))) {
        opt_exec_close(*out);
        *out = NULL;
        return opt_seterr(err, err_cap, OPT_ERR_NOMEM, "out of memory");
    }
    return OPT_OK;
}

void opt_exec_close(opt_exec *x)
{
    if (!x)
        return;
    opt_live_free(x);
    if (x->conv)
        free(x->conv->rg);
    free(x->conv);
    for (size_t i = 0; i < x->nfns; i++)
        free(x->fns[i]);
    for (size_t i = 0; i < x->nknames; i++)
        free(x->knames[i]);
    free(x->fns);
    free(x->knames);
    opt_track_free(&x->t);
    opt_map_free(&x->occ);
    free(x->by_key);
    free(x->by_seq);
    free(x->state);
    free(x);
}

void opt_exec_rewind(opt_exec *x)
{
    opt_map_free(&x->occ);
    x->nheld = 0;
    x->hold_new = NULL;
}

const opt_fused *opt_exec_fused(const opt_exec *x)
{
    return x->fused;
}

const opt_split *opt_exec_split(const opt_exec *x)
{
    return x->split;
}

unsigned opt_exec_lanes(const opt_exec *x, uint64_t queue)
{
    for (size_t i = 0; i < opt_plan_sched_count(x->p); i++) {
        const opt_sched *sc = opt_plan_sched(x->p, i);
        if (sc->queue == queue)
            return sc->lanes;
    }
    return 0;
}

int opt_exec_split_rpl(opt_exec *x, rpl_split *out)
{
    return opt_exec_split_conv(x, x->split, out);
}

int opt_exec_split_of(opt_exec *x, const uint8_t program[16], size_t i, rpl_split *out)
{
    for (size_t k = 0, seen = 0; k < opt_plan_split_count(x->p); k++) {
        const opt_split *z = opt_plan_split(x->p, k);
        if (!memcmp(z->program, program, sizeof z->program) && seen++ == i)
            return opt_exec_split_conv(x, z, out);
    }
    return -1;
}

int opt_exec_split_conv(opt_exec *x, const opt_split *z, rpl_split *out)
{
    if (!z || z->nparts > OPT_SPLIT_MAX_PARTS || (!x->conv && !(x->conv = calloc(1, sizeof *x->conv))))
        return -1;
    struct opt_rpl_conv *v = x->conv;
    size_t need = (size_t)z->nparts * (z->nargs ? z->nargs : 1);
    if (opt_grow((void **)&v->rg, &v->caprg, need, sizeof *v->rg) ||
        opt_grow((void **)&v->models, &v->capmodels, z->nargs ? z->nargs : 1, sizeof *v->models))
        return -1;
    for (unsigned i = 0; i < z->nparts; i++) {
        rpl_split_region *rg = v->rg + (size_t)i * z->nargs;
        for (unsigned a = 0; a < z->nargs; a++) {
            const opt_split_region *q = &z->parts[i].regions[a];
            rg[a] = (rpl_split_region){q->read, q->write, q->rlo, q->rhi, q->wlo, q->whi};
        }
        v->parts[i] = (rpl_split_part){z->parts[i].device, z->parts[i].lo, z->parts[i].hi, rg};
    }
    int adaptive = z->adaptive && z->models;
    for (unsigned a = 0; adaptive && a < z->nargs; a++) {
        const opt_split_model *m = &z->models[a];
        v->models[a] = (rpl_split_model){m->read, m->write, {m->r[0], m->r[1], m->r[2], m->r[3]},
                                         {m->w[0], m->w[1], m->w[2], m->w[3]}};
    }
    *out = (rpl_split){z->id, z->kernel, {0}, z->name, z->source, z->options, z->dim, z->groups, z->nargs, z->args,
                       z->merge, z->nparts, v->parts, adaptive, adaptive ? v->models : NULL};
    memcpy(out->program, z->program, sizeof out->program);
    return 0;
}

/* The first entry of pattern key @p key at occurrence @p occ or after. */
static size_t opt_key_first(const opt_exec *x, uint64_t key, uint64_t occ)
{
    size_t lo = 0, hi = x->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const opt_xform *f = x->by_key[mid];
        if (f->key < key || (f->key == key && f->occurrence < occ))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static const opt_xform *opt_find_key(const opt_exec *x, uint64_t key, uint64_t occ, const char *canon)
{
    size_t lo = opt_key_first(x, key, occ);
    for (; lo < x->n && x->by_key[lo]->key == key && x->by_key[lo]->occurrence == occ; lo++)
        if (!strcmp(x->by_key[lo]->pattern, canon))
            return x->by_key[lo];
    return NULL;
}

/* Live: a call past the recording's calls of its pattern (a run longer than
 * the recording; 1.3 plans say how many there were) gets the pattern's last
 * transformation: the steady state of a loop. Nothing a live run does depends on it being
 * right: deferred work still runs when a later call needs it, a held
 * producer still runs when its consumer does not come, a redundant
 * transfer is still checked by hash. */
static const opt_xform *opt_find_steady(const opt_exec *x, uint64_t key, uint64_t occ, const char *canon)
{
    size_t lo = 0, hi = x->n;
    while (lo < hi) {   /* the first entry past the key's */
        size_t mid = lo + (hi - lo) / 2;
        if (x->by_key[mid]->key <= key)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t i = lo; i-- > 0 && x->by_key[i]->key == key;)
        if (!strcmp(x->by_key[i]->pattern, canon))
            return x->by_key[i]->occurrences && x->by_key[i]->occurrences <= occ ? x->by_key[i] : NULL;
    return NULL;
}

/* 1 when launch @p c passes the constants of specialization @p z (its
 * kernel's by-value arguments as set, bytes for bytes). */
static int opt_spec_passes(const opt_exec *x, const tf_call *c, const opt_spec *z)
{
    uint64_t kid = 0;
    opt_arg_u64(c, "kernel", &kid);
    const opt_obj *k = opt_track_obj(&x->t, kid);
    if (!k || k->kind != OPT_OBJ_KERNEL || k->nargs != z->nargs)
        return 0;
    for (unsigned i = 0; i < z->nconsts; i++) {
        const opt_const *q = &z->consts[i];
        const opt_karg *g = &k->args[q->index];
        char hex[17];
        for (unsigned b = 0; b < q->size; b++)
            snprintf(hex + 2 * b, 3, "%02x", q->value[b]);
        if (g->kind != OPT_KARG_BYTES || g->size != q->size || !g->bytes || strcmp(g->bytes, hex))
            return 0;
    }
    return 1;
}

/* A launch that no transformation names exactly: the specialization of
 * its shape (its pattern with by-value arguments by size, as the
 * optimizer names specialized launches), when it passes the constants;
 * wherever it comes in the run (a specialization does not depend on what
 * comes before or after). @return 0 (*out: NULL when none) or
 * OPT_ERR_NOMEM. */
static int opt_find_spec(opt_exec *x, const tf_call *c, const opt_xform **out)
{
    char *canon = NULL;
    uint64_t key = 0;
    *out = NULL;
    opt_status st = opt_track_pattern(&x->t, c, 1, &canon, &key);
    if (st == OPT_ERR_LIMIT)
        return 0;
    if (st != OPT_OK)
        return OPT_ERR_NOMEM;
    for (size_t i = opt_key_first(x, key, 0); i < x->n && x->by_key[i]->key == key && !*out; i++) {
        const opt_xform *f = x->by_key[i];
        const opt_spec *z = f->action == OPT_ACT_SPECIALIZE ? opt_plan_spec(x->p, f->spec - 1) : NULL;
        if (z && !strcmp(f->pattern, canon) && opt_spec_passes(x, c, z))
            *out = f;
    }
    free(canon);
    return 0;
}

static const opt_xform *opt_find_seq(const opt_exec *x, uint64_t seq)
{
    size_t lo = 0, hi = x->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (x->by_seq[mid]->seq < seq)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < x->n && x->by_seq[lo]->seq == seq ? x->by_seq[lo] : NULL;
}

void opt_exec_fell_back(opt_exec *x, const opt_xform *f, uint64_t seq, const char *why)
{
    if (x->state[f->id - 1] != OPT_X_PENDING)
        return;
    x->state[f->id - 1] = OPT_X_FELL_BACK;
    if (x->nfb < OPT_MAX_FALLBACKS) {
        x->fb[x->nfb++] = (opt_fallback){f->id, seq, why};
        x->nfb_calls = x->nfb;
    }
}

/* The decision for one droppable call; *fate for the tracker. */
/* Live: whether the pairs of fused kernel @p z run as its storing twin. Once
 * one of its producers had to run after all (the run reads, or overwrites
 * the inputs of, what @p z does not store), the rest of the run fuses with
 * the twin, whose producer need not be kept. */
static int opt_twin_on(const opt_exec *x, const opt_fused *z)
{
    return x->live && z && !z->keep_store && z->storing && x->fz_forced && x->fz_forced[z->id - 1] >= 1;
}

int opt_exec_decide(opt_exec *x, const tf_call *c, opt_fate *fate)
{
    char *canon = NULL;
    uint64_t key = 0, holds = 0;
    int nomem = 0;
    if (x->live && !opt_may_match(x, c))
        return OPT_RUN;
    opt_status st = opt_track_pattern(&x->t, c, 0, &canon, &key);
    if (st == OPT_ERR_LIMIT)
        return OPT_RUN;
    if (st != OPT_OK)
        return OPT_ERR_NOMEM;
    uint64_t occ = opt_occurrence_next(&x->occ, key, &nomem);
    const opt_xform *f = nomem ? NULL : opt_find_key(x, key, occ, canon);
    if (!f && !nomem && x->live && (f = opt_find_steady(x, key, occ, canon)) != NULL)
        x->steady++;
    free(canon);
    if (nomem)
        return OPT_ERR_NOMEM;
    if (!f && x->nspec_xf && opt_is_launch(c->sig->name) && opt_find_spec(x, c, &f) < 0)
        return OPT_ERR_NOMEM;
    if (!f) {
        const opt_xform *s = opt_find_seq(x, c->seq);
        if (s)
            opt_exec_fell_back(x, s, c->seq, "the call at its recorded position has another pattern");
        return OPT_RUN;
    }
    if (f->pass == OPT_PASS_DEAD && !x->same_trace && !x->live) {
        opt_exec_fell_back(x, f, c->seq, "the trace's structure is not the one the plan was made for");
        return OPT_RUN;
    }
    if (f->pass == OPT_PASS_REDUNDANT && !opt_track_redundant(&x->t, c, &holds)) {
        opt_exec_fell_back(x, f, c->seq, "the memory does not hold the call's bytes here");
        return OPT_RUN;
    }
    if (f->action == OPT_ACT_SPECIALIZE) {
        /* the launch runs the specialized kernel with its own arguments:
         * a fused launch of one (the pattern saw to the constants) */
        const opt_spec *z = opt_plan_spec(x->p, f->spec - 1);
        if (!z || x->nheld) {
            opt_exec_fell_back(x, f, c->seq, "launches held for a fusion came before it");
            return OPT_RUN;
        }
        /* the rule applies: every transformation of that pattern and
         * specialization (one per recorded launch) counts as applied */
        for (size_t i = opt_key_first(x, f->key, 0); i < x->n && x->by_key[i]->key == f->key; i++)
            if (x->by_key[i]->spec == f->spec && !strcmp(x->by_key[i]->pattern, f->pattern))
                x->state[x->by_key[i]->id - 1] = OPT_X_APPLIED;   /* (f among them) */
        x->fused = &z->as;
        x->specs++;
        return OPT_FUSE;
    }
    if (f->action == OPT_ACT_SPLIT) {
        x->state[f->id - 1] = OPT_X_APPLIED;
        x->split = opt_plan_split(x->p, f->split - 1);
        x->splits++;
        return OPT_SPLIT;
    }
    if (f->action == OPT_ACT_HOLD) {
        const opt_fused *z = opt_plan_fused(x->p, f->fused - 1);
        if (!z || (!z->keep_store && !x->same_trace && !x->live)) {
            opt_exec_fell_back(x, f, c->seq, "the fused kernel does not store the intermediate buffer, and the trace's "
                                        "structure is not the one the plan was made for");
            return OPT_RUN;
        }
        if (x->nheld && x->held[0]->fused == f->fused && x->nheld + 1 < z->launches &&
            f->id == x->held[x->nheld - 1]->id + 1) {
            /* the next launch of the chain being held (its launches are
             * adjacent commands: their transformations follow each other,
             * which tells a chain's next launch from its first) */
            x->held[x->nheld++] = f;
            return OPT_LINK;
        }
        if (opt_twin_on(x, z)) {   /* the pair will run as the storing twin */
            x->hold_new = f;
            return OPT_HOLD;
        }
        if (x->live && !z->keep_store && x->fz_forced && x->fz_forced[z->id - 1] >= 2) {
            /* the run keeps reading (or overwriting the inputs of) what the
             * fused kernel does not store: its producer runs anyway, so the
             * fusion only costs; off for the rest of the run */
            opt_exec_fell_back(x, f, c->seq, "the producer had to run after all twice: fusion off for this run");
            return OPT_RUN;
        }
        x->hold_new = f;
        return OPT_HOLD;
    }
    if (f->action == OPT_ACT_FUSE) {
        const opt_fused *z = opt_plan_fused(x->p, f->fused - 1);
        if (!z || !x->nheld || x->held[0]->fused != f->fused || x->nheld + 1 != z->launches ||
            (z->launches > 2 && f->id != x->held[x->nheld - 1]->id + 1)) {
            opt_exec_fell_back(x, f, c->seq, z && z->launches > 2 ? "the chain's launches did not come right before"
                                                                   : "the producer launch did not come right before");
            return OPT_RUN;
        }
        for (unsigned i = 0; i < x->nheld; i++)
            x->state[x->held[i]->id - 1] = OPT_X_APPLIED;
        x->state[f->id - 1] = OPT_X_APPLIED;
        x->nheld = 0;
        x->fused = z;
        if (opt_twin_on(x, x->fused))
            x->fused = opt_plan_fused(x->p, x->fused->storing - 1);
        x->fusions++;
        return OPT_FUSE;
    }
    if (x->live && f->pass == OPT_PASS_DEAD) {
        /* a live run keeps dead work, in case the run reads it after all */
        static const char *const keepable[] = {"clEnqueueNDRangeKernel", "clEnqueueTask", "clEnqueueWriteBuffer",
                                               "clEnqueueFillBuffer", "clEnqueueCopyBuffer"};
        size_t i = 0;
        while (i < sizeof keepable / sizeof keepable[0] && strcmp(c->sig->name, keepable[i]))
            i++;
        if (i == sizeof keepable / sizeof keepable[0]) {
            opt_exec_fell_back(x, f, c->seq, "a live run keeps only launches and buffer writes, fills and copies");
            return OPT_RUN;
        }
        x->state[f->id - 1] = OPT_X_APPLIED;
        x->deferred = f;
        *fate = OPT_FATE_DEAD;
        return OPT_DEFER;
    }
    x->state[f->id - 1] = OPT_X_APPLIED;
    x->drops++;
    *fate = f->pass == OPT_PASS_DEAD ? OPT_FATE_DEAD : OPT_FATE_REDUNDANT;
    return OPT_DROP;
}

/* Calls that may come between a held launch and its fusion (the replayer's
 * rpl_plan_passive keeps the same list): creates, queries, retains, kernel
 * arguments. */
int opt_exec_passive(const char *n)
{
    return !strncmp(n, "clCreate", 8) || !strncmp(n, "clGet", 5) || !strncmp(n, "clRetain", 8) ||
           !strcmp(n, "clReleaseMemObject") || !strcmp(n, "clSetKernelArg");
}

unsigned opt_exec_unhold(opt_exec *x, int v, const char *fn)
{
    unsigned n = 0;
    if (x->nheld && v != OPT_FUSE && v != OPT_LINK && !opt_exec_passive(fn)) {
        /* the chain did not go on: the held launches run as recorded, first */
        n = x->nheld;
        for (unsigned i = 0; i < n; i++)
            opt_exec_fell_back(x, x->held[i], x->held[i]->seq,
                               n > 1 || i ? "the chain's next launch did not follow right after"
                                          : "the consumer launch did not follow right after");
        x->nheld = 0;
    }
    if (x->hold_new) {
        x->held[0] = x->hold_new;
        x->nheld = 1;
        x->hold_new = NULL;
    }
    return n;
}

int opt_exec_item(opt_exec *x, const tf_item *it)
{
    if (it->type == TF_ITEM_DATA) {
        opt_track_data(&x->t, &it->u.data);
        return OPT_RUN;
    }
    if (it->type != TF_ITEM_CALL)
        return OPT_RUN;
    if (x->live)
        return opt_live_item(x, it);
    const tf_call *c = &it->u.call;
    opt_fate fate = OPT_FATE_RUN;
    int v = OPT_RUN;
    x->hold_new = NULL;
    if (x->n && opt_droppable(c->sig->name) && opt_call_ok(c))
        v = opt_exec_decide(x, c, &fate);
    if (v < 0)
        return v;
    opt_exec_unhold(x, v, c->sig->name);   /* (the caller runs what it holds first) */
    if (opt_track_call(&x->t, c, fate) != OPT_OK)
        return OPT_ERR_NOMEM;
    return v;
}

void opt_exec_get_stats(const opt_exec *x, opt_exec_stats *out)
{
    memset(out, 0, sizeof *out);
    out->same_trace = x->same_trace;
    out->fingerprint = x->fp;
    out->transformations = x->n;
    out->drops = x->drops;
    out->fusions = x->fusions;
    out->splits = x->splits;
    out->specs = x->specs;
    out->kept = x->nkept_total;
    out->forced = x->nforced;
    out->freed = x->nfreed;
    out->steady = x->steady;
    for (size_t i = 0; i < x->n; i++) {
        const opt_xform *f = opt_plan_xform(x->p, i);
        switch (x->state[i]) {
        case OPT_X_APPLIED:
            out->applied++;
            out->effect.commands += f->effect.commands;
            out->effect.kernels += f->effect.kernels;
            out->effect.bytes += f->effect.bytes;
            out->effect.device_ns += f->effect.device_ns;
            out->effect.timed += f->effect.timed;
            break;
        case OPT_X_FELL_BACK: out->fell_back++; break;
        default: out->unmatched++; break;
        }
    }
}

size_t opt_exec_fallback_count(opt_exec *x)
{
    x->nfb = x->nfb_calls;
    for (size_t i = 0; i < x->n && x->nfb < OPT_MAX_FALLBACKS; i++)
        if (x->state[i] == OPT_X_PENDING)
            x->fb[x->nfb++] = (opt_fallback){(uint32_t)(i + 1), 0, "no call of the run matched its pattern"};
    return x->nfb;
}

const opt_fallback *opt_exec_fallback(opt_exec *x, size_t i)
{
    return i < x->nfb ? &x->fb[i] : NULL;
}
