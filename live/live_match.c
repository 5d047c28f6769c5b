/* live_match.c — applying a plan to a run: every call of the run goes
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

/* The split engine's view of a split (live_exec_split_rpl). */
struct live_rpl_conv {
    rpl_split_part parts[PLAN_SPLIT_MAX_PARTS];
    rpl_split_region *rg;
    size_t caprg;
    rpl_split_model *models;
    size_t capmodels;
};

static int live_cmp_key(const void *a, const void *b)
{
    const plan_xform *x = *(const plan_xform *const *)a, *y = *(const plan_xform *const *)b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return x->occurrence < y->occurrence ? -1 : x->occurrence > y->occurrence;
}

static int live_cmp_seq(const void *a, const void *b)
{
    const plan_xform *x = *(const plan_xform *const *)a, *y = *(const plan_xform *const *)b;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

plan_status live_trace_fingerprint(const char *path, size_t max_memory, uint64_t *fp, uint64_t *calls, char *err,
                                 size_t err_cap)
{
    tf_reader *r = NULL;
    tf_status ts;
    plan_status st = plan_open_trace(path, max_memory, &r, err, err_cap);
    if (st != PLAN_OK)
        return st;
    plan_track t;
    plan_track_init(&t, NULL);
    t.fp_on = 1;
    tf_item it;
    while (st == PLAN_OK && (ts = tf_reader_next(r, &it)) == TF_OK)
        if (it.type == TF_ITEM_CALL)
            st = plan_track_call(&t, &it.u.call, PLAN_FATE_RUN);
    if (st == PLAN_OK && ts != TF_END)
        st = plan_seterr(err, err_cap, PLAN_ERR_TRACE, "%s%s%s", tf_strerror(ts), *tf_reader_error(r) ? ": " : "",
                        tf_reader_error(r));
    else if (st != PLAN_OK)
        plan_seterr(err, err_cap, st, "%s", plan_strerror(st));
    *fp = plan_track_fingerprint(&t);
    if (calls)
        *calls = t.calls;
    plan_track_free(&t);
    tf_reader_close(r);
    return st;
}

/* The matcher without its run: transformations sorted for lookup. */
static plan_status live_exec_new(const plan_file *p, live_exec **out, char *err, size_t err_cap)
{
    *out = NULL;
    live_exec *x = calloc(1, sizeof *x);
    if (!x)
        return plan_seterr(err, err_cap, PLAN_ERR_NOMEM, "out of memory");
    x->p = p;
    x->n = plan_xform_count(p);
    size_t n = x->n ? x->n : 1;
    x->by_key = malloc(n * sizeof *x->by_key);
    x->by_seq = malloc(n * sizeof *x->by_seq);
    x->state = calloc(n, 1);
    plan_track_init(&x->t, p);
    if (!x->by_key || !x->by_seq || !x->state) {
        live_exec_close(x);
        return plan_seterr(err, err_cap, PLAN_ERR_NOMEM, "out of memory");
    }
    for (size_t i = 0; i < x->n; i++)
        x->by_key[i] = x->by_seq[i] = plan_get_xform(p, i);
    for (size_t i = 0; i < x->n; i++)
        x->nspec_xf += x->by_key[i]->action == PLAN_ACT_SPECIALIZE;
    if (plan_local_count(p) && !(x->local_xf = calloc(plan_local_count(p), sizeof *x->local_xf))) {
        live_exec_close(x);
        return plan_seterr(err, err_cap, PLAN_ERR_NOMEM, "out of memory");
    }
    for (size_t i = 0; i < x->n; i++)
        if ((x->by_key[i]->action == PLAN_ACT_LOCAL_SIZE || x->by_key[i]->action == PLAN_ACT_COARSEN) &&
            x->by_key[i]->local &&
            x->by_key[i]->local <= plan_local_count(p) && !x->local_xf[x->by_key[i]->local - 1])
            x->local_xf[x->by_key[i]->local - 1] = x->by_key[i];
    qsort(x->by_key, x->n, sizeof *x->by_key, live_cmp_key);
    qsort(x->by_seq, x->n, sizeof *x->by_seq, live_cmp_seq);
    *out = x;
    return PLAN_OK;
}

plan_status live_exec_open(const plan_file *p, const char *path, size_t max_memory, live_exec **out, char *err,
                         size_t err_cap)
{
    live_exec *x;
    plan_status st = live_exec_new(p, &x, err, err_cap);
    if (st != PLAN_OK)
        return st;
    st = live_trace_fingerprint(path, max_memory, &x->fp, NULL, err, err_cap);
    if (st != PLAN_OK) {
        live_exec_close(x);
        return st;
    }
    x->same_trace = x->fp == plan_get_info(p)->fingerprint;
    *out = x;
    return PLAN_OK;
}

static int live_is_launch(const char *fn)
{
    return !strcmp(fn, "clEnqueueNDRangeKernel") || !strcmp(fn, "clEnqueueTask");
}

static int live_name_in(char *const *names, size_t n, const char *s)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(names[i], s))
            return 1;
    return 0;
}

static int live_name_add(char ***names, size_t *n, const char *s)
{
    if (live_name_in(*names, *n, s))
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
static int live_filter_init(live_exec *x)
{
    for (size_t i = 0; i < x->n; i++) {
        const plan_xform *f = plan_get_xform(x->p, i);
        if (live_name_add(&x->fns, &x->nfns, f->function))
            return -1;
        if (!live_is_launch(f->function))
            continue;
        json_t *pat = json_loads(f->pattern, 0, NULL);
        const char *k = json_string_value(json_object_get(json_object_get(pat, "kernel"), "kernel"));
        int rc = k ? live_name_add(&x->knames, &x->nknames, k) : 0;
        if (!k)
            x->any_kernel = 1;   /* no name to go by: every launch is looked at */
        json_decref(pat);
        if (rc)
            return -1;
    }
    return 0;
}

static int live_may_match(const live_exec *x, const tf_call *c)
{
    if (!live_name_in(x->fns, x->nfns, c->sig->name))
        return 0;
    if (!live_is_launch(c->sig->name) || x->any_kernel)
        return 1;
    uint64_t kid = 0;
    plan_arg_u64(c, "kernel", &kid);
    const plan_obj *k = plan_track_obj(&x->t, kid);
    return !k || k->kind != PLAN_OBJ_KERNEL || !k->name || live_name_in(x->knames, x->nknames, k->name);
}

plan_status live_exec_open_live(const plan_file *p, live_exec **out, char *err, size_t err_cap)
{
    plan_status st = live_exec_new(p, out, err, err_cap);
    if (st != PLAN_OK)
        return st;
    (*out)->live = 1;
    if (live_filter_init(*out)) {
        live_exec_close(*out);
        *out = NULL;
        return plan_seterr(err, err_cap, PLAN_ERR_NOMEM, "out of memory");
    }
    size_t nf = plan_fused_count(p);
    if (nf && !((*out)->fz_forced = calloc(nf, sizeof *(*out)->fz_forced))) {
        live_exec_close(*out);
        *out = NULL;
        return plan_seterr(err, err_cap, PLAN_ERR_NOMEM, "out of memory");
    }
    return PLAN_OK;
}

void live_exec_close(live_exec *x)
{
    if (!x)
        return;
    live_free(x);
    if (x->conv)
        free(x->conv->rg);
    free(x->conv);
    for (size_t i = 0; i < x->nfns; i++)
        free(x->fns[i]);
    for (size_t i = 0; i < x->nknames; i++)
        free(x->knames[i]);
    free(x->fns);
    free(x->knames);
    plan_track_free(&x->t);
    plan_map_free(&x->occ);
    free(x->by_key);
    free(x->by_seq);
    free(x->state);
    free(x->local_xf);
    free(x);
}

void live_exec_rewind(live_exec *x)
{
    plan_map_free(&x->occ);
    x->nheld = 0;
    x->hold_new = NULL;
}

const plan_fused *live_exec_fused(const live_exec *x)
{
    return x->fused;
}

const plan_local *live_exec_local(const live_exec *x)
{
    return x->local;
}

const plan_split *live_exec_split(const live_exec *x)
{
    return x->split;
}

unsigned live_exec_lanes(const live_exec *x, uint64_t queue)
{
    for (size_t i = 0; i < plan_sched_count(x->p); i++) {
        const plan_sched *sc = plan_get_sched(x->p, i);
        if (sc->queue == queue)
            return sc->lanes;
    }
    return 0;
}

int live_exec_split_rpl(live_exec *x, rpl_split *out)
{
    return live_exec_split_conv(x, x->split, out);
}

int live_exec_split_of(live_exec *x, const uint8_t program[16], size_t i, rpl_split *out)
{
    for (size_t k = 0, seen = 0; k < plan_split_count(x->p); k++) {
        const plan_split *z = plan_get_split(x->p, k);
        if (!memcmp(z->program, program, sizeof z->program) && seen++ == i)
            return live_exec_split_conv(x, z, out);
    }
    return -1;
}

int live_exec_split_conv(live_exec *x, const plan_split *z, rpl_split *out)
{
    if (!z || z->nparts > PLAN_SPLIT_MAX_PARTS || (!x->conv && !(x->conv = calloc(1, sizeof *x->conv))))
        return -1;
    struct live_rpl_conv *v = x->conv;
    size_t need = (size_t)z->nparts * (z->nargs ? z->nargs : 1);
    if (plan_grow((void **)&v->rg, &v->caprg, need, sizeof *v->rg) ||
        plan_grow((void **)&v->models, &v->capmodels, z->nargs ? z->nargs : 1, sizeof *v->models))
        return -1;
    for (unsigned i = 0; i < z->nparts; i++) {
        rpl_split_region *rg = v->rg + (size_t)i * z->nargs;
        for (unsigned a = 0; a < z->nargs; a++) {
            const plan_split_region *q = &z->parts[i].regions[a];
            rg[a] = (rpl_split_region){q->read, q->write, q->rlo, q->rhi, q->wlo, q->whi};
        }
        v->parts[i] = (rpl_split_part){z->parts[i].device, z->parts[i].lo, z->parts[i].hi, rg};
    }
    int adaptive = z->adaptive && z->models;
    for (unsigned a = 0; adaptive && a < z->nargs; a++) {
        const plan_split_model *m = &z->models[a];
        v->models[a] = (rpl_split_model){m->read, m->write, {m->r[0], m->r[1], m->r[2], m->r[3]},
                                         {m->w[0], m->w[1], m->w[2], m->w[3]}};
    }
    *out = (rpl_split){z->id, z->kernel, {0}, z->name, z->source, z->options, z->dim, z->groups, z->nargs, z->args,
                       z->merge, z->nparts, v->parts, adaptive, adaptive ? v->models : NULL};
    memcpy(out->program, z->program, sizeof out->program);
    return 0;
}

/* The first entry of pattern key @p key at occurrence @p occ or after. */
static size_t live_key_first(const live_exec *x, uint64_t key, uint64_t occ)
{
    size_t lo = 0, hi = x->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const plan_xform *f = x->by_key[mid];
        if (f->key < key || (f->key == key && f->occurrence < occ))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The transformation of occurrence @p occ of the pattern @p canon: one
 * whose occurrence is @p occ, or (1.11) whose repeat covers it: the nearest
 * of the pattern at or before it (a pattern's ranges never overlap). */
static const plan_xform *live_find_key(const live_exec *x, uint64_t key, uint64_t occ, const char *canon)
{
    size_t lo = live_key_first(x, key, occ);
    for (size_t i = lo; i < x->n && x->by_key[i]->key == key && x->by_key[i]->occurrence == occ; i++)
        if (!strcmp(x->by_key[i]->pattern, canon))
            return x->by_key[i];
    for (size_t i = lo; i-- > 0 && x->by_key[i]->key == key;) {
        const plan_xform *f = x->by_key[i];
        if (strcmp(f->pattern, canon))
            continue;   /* another pattern of the same key */
        return f->repeat > 1 && occ - f->occurrence < f->repeat ? f : NULL;
    }
    return NULL;
}

/* Live: a call past the recording's calls of its pattern (a run longer than
 * the recording; 1.3 plans say how many there were) gets the pattern's last
 * transformation: the steady state of a loop. Nothing a live run does depends on it being
 * right: deferred work still runs when a later call needs it, a held
 * producer still runs when its consumer does not come, a redundant
 * transfer is still checked by hash. */
static const plan_xform *live_find_steady(const live_exec *x, uint64_t key, uint64_t occ, const char *canon)
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
static int live_spec_passes(const live_exec *x, const tf_call *c, const plan_spec *z)
{
    uint64_t kid = 0;
    plan_arg_u64(c, "kernel", &kid);
    const plan_obj *k = plan_track_obj(&x->t, kid);
    if (!k || k->kind != PLAN_OBJ_KERNEL || k->nargs != z->nargs)
        return 0;
    for (unsigned i = 0; i < z->nconsts; i++) {
        const plan_const *q = &z->consts[i];
        const plan_karg *g = &k->args[q->index];
        char hex[17];
        for (unsigned b = 0; b < q->size; b++)
            snprintf(hex + 2 * b, 3, "%02x", q->value[b]);
        if (g->kind != PLAN_KARG_BYTES || g->size != q->size || !g->bytes || strcmp(g->bytes, hex))
            return 0;
    }
    return 1;
}

/* A launch that no transformation names exactly: the specialization of
 * its shape (its pattern with by-value arguments by size, as the
 * optimizer names specialized launches), when it passes the constants;
 * wherever it comes in the run (a specialization does not depend on what
 * comes before or after). @return 0 (*out: NULL when none) or
 * PLAN_ERR_NOMEM. */
static int live_find_spec(live_exec *x, const tf_call *c, const plan_xform **out)
{
    char *canon = NULL;
    uint64_t key = 0;
    *out = NULL;
    plan_status st = plan_track_pattern(&x->t, c, 1, &canon, &key);
    if (st == PLAN_ERR_LIMIT)
        return 0;
    if (st != PLAN_OK)
        return PLAN_ERR_NOMEM;
    for (size_t i = live_key_first(x, key, 0); i < x->n && x->by_key[i]->key == key && !*out; i++) {
        const plan_xform *f = x->by_key[i];
        const plan_spec *z = f->action == PLAN_ACT_SPECIALIZE ? plan_get_spec(x->p, f->spec - 1) : NULL;
        if (z && !strcmp(f->pattern, canon) && live_spec_passes(x, c, z))
            *out = f;
    }
    free(canon);
    return 0;
}

static const plan_xform *live_find_seq(const live_exec *x, uint64_t seq)
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

void live_exec_fell_back(live_exec *x, const plan_xform *f, uint64_t seq, const char *why)
{
    if (x->state[f->id - 1] != LIVE_X_PENDING)
        return;
    x->state[f->id - 1] = LIVE_X_FELL_BACK;
    if (x->nfb < LIVE_MAX_FALLBACKS) {
        x->fb[x->nfb++] = (live_fallback){f->id, seq, why};
        x->nfb_calls = x->nfb;
    }
}

/* The decision for one droppable call; *fate for the tracker. */
/* Live: whether the pairs of fused kernel @p z run as its storing twin. Once
 * one of its producers had to run after all (the run reads, or overwrites
 * the inputs of, what @p z does not store), the rest of the run fuses with
 * the twin, whose producer need not be kept. */
static int live_twin_on(const live_exec *x, const plan_fused *z)
{
    return x->live && z && !z->keep_store && z->storing && x->fz_forced && x->fz_forced[z->id - 1] >= 1;
}

int live_exec_decide(live_exec *x, const tf_call *c, plan_fate *fate)
{
    char *canon = NULL;
    uint64_t key = 0, holds = 0;
    int nomem = 0;
    if (x->live && !live_may_match(x, c))
        return LIVE_RUN;
    plan_status st = plan_track_pattern(&x->t, c, 0, &canon, &key);
    if (st == PLAN_ERR_LIMIT)
        return LIVE_RUN;
    if (st != PLAN_OK)
        return PLAN_ERR_NOMEM;
    uint64_t occ = plan_occurrence_next(&x->occ, key, &nomem);
    const plan_xform *f = nomem ? NULL : live_find_key(x, key, occ, canon);
    if (!f && !nomem && x->live && (f = live_find_steady(x, key, occ, canon)) != NULL)
        x->steady++;
    free(canon);
    if (nomem)
        return PLAN_ERR_NOMEM;
    if (!f && x->nspec_xf && live_is_launch(c->sig->name) && live_find_spec(x, c, &f) < 0)
        return PLAN_ERR_NOMEM;
    if (!f && x->local_xf && !strcmp(c->sig->name, "clEnqueueNDRangeKernel")) {
        /* a tuned shape (1.10): kernel, program and NDRange, whatever the
         * buffers and values, wherever the launch comes */
        plan_shape sh;
        const plan_local *l = plan_launch_shape(&x->t, c, &sh) ? plan_local_match(x->p, &sh) : NULL;
        if (l)
            f = x->local_xf[l->id - 1];
    }
    if (!f) {
        const plan_xform *s = live_find_seq(x, c->seq);
        if (s)
            live_exec_fell_back(x, s, c->seq, "the call at its recorded position has another pattern");
        return LIVE_RUN;
    }
    if (f->pass == PLAN_PASS_DEAD && !x->same_trace && !x->live) {
        live_exec_fell_back(x, f, c->seq, "the trace's structure is not the one the plan was made for");
        return LIVE_RUN;
    }
    if (f->pass == PLAN_PASS_REDUNDANT && !plan_track_redundant(&x->t, c, &holds)) {
        live_exec_fell_back(x, f, c->seq, "the memory does not hold the call's bytes here");
        return LIVE_RUN;
    }
    if (f->action == PLAN_ACT_SPECIALIZE) {
        /* the launch runs the specialized kernel with its own arguments:
         * a fused launch of one (the pattern saw to the constants) */
        const plan_spec *z = plan_get_spec(x->p, f->spec - 1);
        if (!z || x->nheld) {
            live_exec_fell_back(x, f, c->seq, "launches held for a fusion came before it");
            return LIVE_RUN;
        }
        /* the rule applies: every transformation of that pattern and
         * specialization (one per recorded launch) counts as applied */
        for (size_t i = live_key_first(x, f->key, 0); i < x->n && x->by_key[i]->key == f->key; i++)
            if (x->by_key[i]->spec == f->spec && !strcmp(x->by_key[i]->pattern, f->pattern))
                x->state[x->by_key[i]->id - 1] = LIVE_X_APPLIED;   /* (f among them) */
        x->fused = &z->as;
        x->specs++;
        return LIVE_FUSE;
    }
    if (f->action == PLAN_ACT_LOCAL_SIZE || f->action == PLAN_ACT_COARSEN) {   /* per device: the executor's */
        const plan_local *l = plan_get_local(x->p, f->local - 1);
        if (!l || x->nheld) {
            live_exec_fell_back(x, f, c->seq, "launches held for a fusion came before it");
            return LIVE_RUN;
        }
        x->state[f->id - 1] = LIVE_X_APPLIED;
        x->local = l;
        x->locals++;
        return LIVE_LOCAL;
    }
    if (f->action == PLAN_ACT_SPLIT) {
        x->state[f->id - 1] = LIVE_X_APPLIED;
        x->split = plan_get_split(x->p, f->split - 1);
        x->splits++;
        return LIVE_SPLIT;
    }
    if (f->action == PLAN_ACT_HOLD) {
        const plan_fused *z = plan_get_fused(x->p, f->fused - 1);
        if (!z || (!z->keep_store && !x->same_trace && !x->live)) {
            live_exec_fell_back(x, f, c->seq, "the fused kernel does not store the intermediate buffer, and the trace's "
                                        "structure is not the one the plan was made for");
            return LIVE_RUN;
        }
        if (x->nheld && x->held[0]->fused == f->fused && x->nheld + 1 < z->launches &&
            f->id == x->held[x->nheld - 1]->id + 1) {
            /* the next launch of the chain being held (its launches are
             * adjacent commands: their transformations follow each other,
             * which tells a chain's next launch from its first) */
            x->held[x->nheld++] = f;
            return LIVE_LINK;
        }
        if (live_twin_on(x, z)) {   /* the pair will run as the storing twin */
            x->hold_new = f;
            return LIVE_HOLD;
        }
        if (x->live && !z->keep_store && x->fz_forced && x->fz_forced[z->id - 1] >= 2) {
            /* the run keeps reading (or overwriting the inputs of) what the
             * fused kernel does not store: its producer runs anyway, so the
             * fusion only costs; off for the rest of the run */
            live_exec_fell_back(x, f, c->seq, "the producer had to run after all twice: fusion off for this run");
            return LIVE_RUN;
        }
        x->hold_new = f;
        return LIVE_HOLD;
    }
    if (f->action == PLAN_ACT_FUSE) {
        const plan_fused *z = plan_get_fused(x->p, f->fused - 1);
        if (!z || !x->nheld || x->held[0]->fused != f->fused || x->nheld + 1 != z->launches ||
            (z->launches > 2 && f->id != x->held[x->nheld - 1]->id + 1)) {
            live_exec_fell_back(x, f, c->seq, z && z->launches > 2 ? "the chain's launches did not come right before"
                                                                   : "the producer launch did not come right before");
            return LIVE_RUN;
        }
        for (unsigned i = 0; i < x->nheld; i++)
            x->state[x->held[i]->id - 1] = LIVE_X_APPLIED;
        x->state[f->id - 1] = LIVE_X_APPLIED;
        x->nheld = 0;
        x->fused = z;
        if (live_twin_on(x, x->fused))
            x->fused = plan_get_fused(x->p, x->fused->storing - 1);
        x->fusions++;
        return LIVE_FUSE;
    }
    if (x->live && f->pass == PLAN_PASS_DEAD) {
        /* a live run keeps dead work, in case the run reads it after all */
        static const char *const keepable[] = {"clEnqueueNDRangeKernel", "clEnqueueTask", "clEnqueueWriteBuffer",
                                               "clEnqueueFillBuffer", "clEnqueueCopyBuffer"};
        size_t i = 0;
        while (i < sizeof keepable / sizeof keepable[0] && strcmp(c->sig->name, keepable[i]))
            i++;
        if (i == sizeof keepable / sizeof keepable[0]) {
            live_exec_fell_back(x, f, c->seq, "a live run keeps only launches and buffer writes, fills and copies");
            return LIVE_RUN;
        }
        x->state[f->id - 1] = LIVE_X_APPLIED;
        x->deferred = f;
        *fate = PLAN_FATE_DEAD;
        return LIVE_DEFER;
    }
    x->state[f->id - 1] = LIVE_X_APPLIED;
    x->drops++;
    *fate = f->pass == PLAN_PASS_DEAD ? PLAN_FATE_DEAD : PLAN_FATE_REDUNDANT;
    return LIVE_DROP;
}

/* Calls that may come between a held launch and its fusion (the replayer's
 * rpl_plan_passive keeps the same list): creates, queries, retains, kernel
 * arguments. */
int live_exec_passive(const char *n)
{
    return !strncmp(n, "clCreate", 8) || !strncmp(n, "clGet", 5) || !strncmp(n, "clRetain", 8) ||
           !strcmp(n, "clReleaseMemObject") || !strcmp(n, "clSetKernelArg");
}

unsigned live_exec_unhold(live_exec *x, int v, const char *fn)
{
    unsigned n = 0;
    if (x->nheld && v != LIVE_FUSE && v != LIVE_LINK && !live_exec_passive(fn)) {
        /* the chain did not go on: the held launches run as recorded, first */
        n = x->nheld;
        for (unsigned i = 0; i < n; i++)
            live_exec_fell_back(x, x->held[i], x->held[i]->seq,
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

int live_exec_item(live_exec *x, const tf_item *it)
{
    if (it->type == TF_ITEM_DATA) {
        plan_track_data(&x->t, &it->u.data);
        return LIVE_RUN;
    }
    if (it->type != TF_ITEM_CALL)
        return LIVE_RUN;
    if (x->live)
        return live_item(x, it);
    const tf_call *c = &it->u.call;
    plan_fate fate = PLAN_FATE_RUN;
    int v = LIVE_RUN;
    x->hold_new = NULL;
    if (x->n && plan_droppable(c->sig->name) && plan_call_ok(c))
        v = live_exec_decide(x, c, &fate);
    if (v < 0)
        return v;
    live_exec_unhold(x, v, c->sig->name);   /* (the caller runs what it holds first) */
    if (plan_track_call(&x->t, c, fate) != PLAN_OK)
        return PLAN_ERR_NOMEM;
    return v;
}

void live_exec_get_stats(const live_exec *x, live_exec_stats *out)
{
    memset(out, 0, sizeof *out);
    out->same_trace = x->same_trace;
    out->fingerprint = x->fp;
    out->transformations = x->n;
    out->drops = x->drops;
    out->fusions = x->fusions;
    out->splits = x->splits;
    out->specs = x->specs;
    out->locals = x->locals;
    out->kept = x->nkept_total;
    out->forced = x->nforced;
    out->freed = x->nfreed;
    out->steady = x->steady;
    for (size_t i = 0; i < x->n; i++) {
        const plan_xform *f = plan_get_xform(x->p, i);
        switch (x->state[i]) {
        case LIVE_X_APPLIED:
            out->applied++;
            out->effect.commands += f->effect.commands;
            out->effect.kernels += f->effect.kernels;
            out->effect.bytes += f->effect.bytes;
            out->effect.device_ns += f->effect.device_ns;
            out->effect.timed += f->effect.timed;
            break;
        case LIVE_X_FELL_BACK: out->fell_back++; break;
        default: out->unmatched++; break;
        }
    }
}

size_t live_exec_fallback_count(live_exec *x)
{
    x->nfb = x->nfb_calls;
    for (size_t i = 0; i < x->n && x->nfb < LIVE_MAX_FALLBACKS; i++)
        if (x->state[i] == LIVE_X_PENDING)
            x->fb[x->nfb++] = (live_fallback){(uint32_t)(i + 1), 0, "no call of the run matched its pattern"};
    return x->nfb;
}

const live_fallback *live_exec_fallback(live_exec *x, size_t i)
{
    return i < x->nfb ? &x->fb[i] : NULL;
}
