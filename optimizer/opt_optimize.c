/* opt_optimize.c — `clrr optimize`: the trace into the analyzer's model
 * (with the kernel analysis), the dead command pass on the model, then one
 * stream of the trace through the call tracker, which gives every dropped
 * call its pattern and occurrence, finds the redundant transfers (the
 * memory already holds their bytes), and folds the trace's fingerprint.
 * The dead pass runs first: a write both dead and redundant is reported
 * once, as dead, and a redundant transfer never relies on bytes left by a
 * dropped command. The schedule pass (opt_sched.c) works on the model
 * alone. */
#include "optimizer/opt_int.h"

#include "analyzer/ana.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef CLRR_VERSION
#define CLRR_VERSION "?"
#endif

/* A launch the fuse pass takes: the producer (hold) or consumer (fuse). */
typedef struct opt_fuse_role {
    uint64_t seq, partner;
    uint8_t action;           /* PLAN_ACT_HOLD, PLAN_ACT_FUSE */
    uint32_t fused;
} opt_fuse_role;

/* A fused kernel made once for every pair (chain) of the same kind. */
typedef struct opt_fuse_made {
    uint64_t program;         /* program object */
    unsigned n;
    const char *names[PLAN_CHAIN_MAX];   /* the launches' kernels */
    unsigned out[PLAN_CHAIN_MAX], to[PLAN_CHAIN_MAX], in[PLAN_CHAIN_MAX];
    int keep_store, horizontal;
    uint32_t id;              /* 0: refused */
} opt_fuse_made;

typedef struct opt_run {
    const opt_options *o;
    tf_reader *r;
    ana_model *m;
    plan_file *p;
    opt_dead_cmd *dead;
    size_t ndead;
    plan_map occ;              /* pattern key -> occurrences so far */
    plan_map socc;             /* shape pattern key -> specialized launches so far */
    plan_map last;             /* pattern key -> 1 + index of its last drop (1.11 repeat) */
    opt_fuse_role *roles;     /* by seq */
    size_t nroles;
    char fuse_note[512];      /* the first pair the rewriter refused */
    opt_split_role *sroles;   /* the split pass's launches, by seq */
    size_t nsroles;
    opt_spec_cand *specs;     /* the specialize pass's kernel objects */
    uint32_t *spec_ids;       /* ... and the specialization each runs (0: refused) */
    size_t nspecs;
    char spec_note[512];      /* the first kernel the rewriter refused */
    char *err;
    size_t err_cap;
} opt_run;

static const ana_cmd *opt_cmd_of(const ana_model *m, uint64_t seq)
{
    size_t lo = 0, hi = ana_model_command_count(m);
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const ana_cmd *c = ana_model_command(m, mid);
        if (c->seq == seq)
            return c;
        if (c->seq < seq)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

static const opt_dead_cmd *opt_dead_of(const opt_run *x, uint64_t seq)
{
    size_t lo = 0, hi = x->ndead;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (x->dead[mid].seq == seq)
            return &x->dead[mid];
        if (x->dead[mid].seq < seq)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

static const opt_fuse_role *opt_role_of(const opt_run *x, uint64_t seq)
{
    size_t lo = 0, hi = x->nroles;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (x->roles[mid].seq == seq)
            return &x->roles[mid];
        if (x->roles[mid].seq < seq)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

static const opt_split_role *opt_srole_of(const opt_run *x, uint64_t seq)
{
    size_t lo = 0, hi = x->nsroles;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (x->sroles[mid].seq == seq)
            return &x->sroles[mid];
        if (x->sroles[mid].seq < seq)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

/* A call the options say no pass may change (opt_options.keep). */
static int opt_kept(void *user, uint64_t seq)
{
    const opt_run *x = user;
    size_t lo = 0, hi = x->o->keep ? x->o->nkeep : 0;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (x->o->keep[mid] == seq)
            return 1;
        if (x->o->keep[mid] < seq)
            lo = mid + 1;
        else
            hi = mid;
    }
    return 0;
}

/* The split pass leaves alone launches another pass took (or kept ones). */
static int opt_taken(void *user, uint64_t seq)
{
    const opt_run *x = user;
    return opt_dead_of(x, seq) || opt_role_of(x, seq) || opt_kept(user, seq);
}

/* ... and the specialize pass those the split pass took too. */
static int opt_taken_all(void *user, uint64_t seq)
{
    const opt_run *x = user;
    return opt_taken(user, seq) || opt_srole_of(x, seq);
}

/* The specialization launch @p c runs, or NULL (*why: its reason). */
static const plan_spec *opt_spec_of(const opt_run *x, const tf_call *c, const char **why)
{
    const ana_cmd *a = opt_cmd_of(x->m, c->seq);
    for (size_t i = 0; a && a->kind == ANA_CMD_KERNEL && i < x->nspecs; i++)
        if (x->specs[i].kernel == a->kernel && x->spec_ids[i]) {
            *why = x->specs[i].why;
            return plan_get_spec(x->p, x->spec_ids[i] - 1);
        }
    return NULL;
}

/* The specialize pass, before the stream: per candidate kernel object, the
 * specialized kernel from the rewriter (one per program, kernel and
 * constants; those it refuses stay as they are). */
static plan_status opt_spec_plan(opt_run *x)
{
    plan_status st = opt_spec_find(x->m, opt_taken_all, x, &x->specs, &x->nspecs);
    if (st == PLAN_OK && x->nspecs && !(x->spec_ids = calloc(x->nspecs, sizeof *x->spec_ids)))
        st = PLAN_ERR_NOMEM;
    for (size_t i = 0; st == PLAN_OK && i < x->nspecs; i++) {
        const opt_spec_cand *s = &x->specs[i];
        const ana_object *k = ana_model_find(x->m, s->kernel);
        const ana_object *prog = k ? ana_model_find(x->m, k->parent) : NULL;
        if (!k || !k->name || !prog || !prog->source)
            continue;
        tf_blobref h;
        tf_hash(prog->source, (size_t)prog->source_len, &h);
        for (size_t j = 0; j < plan_spec_count(x->p) && !x->spec_ids[i]; j++) {
            const plan_spec *z = plan_get_spec(x->p, j);   /* the same specialization, made before */
            /* the same source built with other options (SHOC's Spmv: -DUSE_TEXTURE, or not) is another
             * kernel: its parameters may differ (an image, or a buffer) */
            if (!strcmp(z->kernel, k->name) && !memcmp(z->program, h.hash, 16) && z->nconsts == s->nconsts &&
                !strcmp(z->options ? z->options : "", prog->options ? prog->options : "") &&
                !memcmp(z->consts, s->consts, s->nconsts * sizeof *s->consts))
                x->spec_ids[i] = z->id;
        }
        if (x->spec_ids[i])
            continue;
        rw_const cs[RW_MAX_CONSTS];
        memset(cs, 0, sizeof cs);
        for (unsigned q = 0; q < s->nconsts; q++) {
            cs[q].index = s->consts[q].index;
            cs[q].size = s->consts[q].size;
            memcpy(cs[q].value, s->consts[q].value, sizeof cs[q].value);
        }
        char name[64], why[512] = "";
        snprintf(name, sizeof name, "__clrr_spec_%zu", plan_spec_count(x->p) + 1);
        rw_spec_req req = {prog->text, (size_t)prog->text_len, prog->options, k->name, name, s->nconsts, cs};
        rw_spec_out rout;
        rw_status rs = opt_rw_specialize(&req, &rout, why, sizeof why);
        if (rs == RW_ERR_NOMEM) {
            st = PLAN_ERR_NOMEM;
            break;
        }
        if (rs != RW_OK) {
            if (!x->spec_note[0])
                snprintf(x->spec_note, sizeof x->spec_note, "%s not specialized: %s", k->name, why);
            continue;
        }
        plan_spec z = {.name = name, .kernel = k->name, .source = rout.source,
                      .options = prog->options ? prog->options : "", .nargs = rout.nparams, .nconsts = s->nconsts,
                      .consts = s->consts};
        memcpy(z.program, h.hash, 16);
        st = plan_add_spec(x->p, &z, &x->spec_ids[i]);
        opt_rw_specialize_free(&rout);
        if (st == PLAN_ERR_LIMIT) {
            x->spec_ids[i] = 0;
            st = PLAN_OK;
        }
    }
    return st == PLAN_OK ? PLAN_OK : plan_seterr(x->err, x->err_cap, st, "specialize: %s", plan_strerror(st));
}

static int opt_role_cmp(const void *a, const void *b)
{
    const opt_fuse_role *x = a, *y = b;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int opt_made_is(const opt_fuse_made *m, uint64_t program, const ana_object *const *ks,
                       const opt_fuse_pair *f, int keep_store)
{
    if (m->program != program || m->n != f->n || m->keep_store != keep_store || m->horizontal != f->horizontal)
        return 0;
    for (unsigned j = 0; j < f->n; j++)
        if (strcmp(m->names[j], ks[j]->name) ||
            (j + 1 < f->n && (m->out[j] != f->out[j] || m->to[j] != f->to[j] || m->in[j] != f->in[j])))
            return 0;
    return 1;
}

/* The fused kernel of pair (chain) @p f, made by the rewriter once for
 * every pair of the same kind, stored or not (@p keep_store). A kernel
 * that does not store the intermediate buffers names its storing twin
 * (plan_fused.storing: every intermediate stored), made first, for live
 * runs that read them after all or overwrite the inputs of the launches
 * it holds. A group (chain, gather) is fused one launch at a time, from
 * the back: the last launch with the one before it, then the launch before
 * that into this kernel (as its producer, through the parameter its
 * consumer's argument became), ...; the fused kernel runs the launches'
 * bodies in command order whatever the group's shape. Each step's kernel
 * stays in the source (only the last is launched), and its parameters are
 * traced back to the launches. *out: the entry (its id 0 when the
 * rewriter refused). */
static plan_status opt_fuse_make(opt_run *x, const ana_object *prog, const ana_object *const *ks,
                                const opt_fuse_pair *f, int keep_store, opt_fuse_made **made, size_t *nmade,
                                size_t *capmade, opt_fuse_made **out)
{
    for (size_t k = 0; k < *nmade; k++)
        if (opt_made_is(&(*made)[k], prog->id, ks, f, keep_store)) {
            *out = &(*made)[k];
            return PLAN_OK;
        }
    uint32_t storing = 0;
    if (!keep_store) {
        opt_fuse_made *twin;
        plan_status st = opt_fuse_make(x, prog, ks, f, 1, made, nmade, capmade, &twin);
        if (st != PLAN_OK)
            return st;
        storing = twin->id;
    }
    if (plan_grow((void **)made, capmade, *nmade + 1, sizeof **made))
        return PLAN_ERR_NOMEM;
    opt_fuse_made *m = &(*made)[(*nmade)++];
    memset(m, 0, sizeof *m);
    m->program = prog->id;
    m->n = f->n;
    m->keep_store = keep_store;
    m->horizontal = f->horizontal;
    for (unsigned j = 0; j < f->n; j++) {
        m->names[j] = ks[j]->name;
        m->out[j] = j + 1 < f->n ? f->out[j] : 0;
        m->to[j] = j + 1 < f->n ? f->to[j] : 0;
        m->in[j] = j + 1 < f->n ? f->in[j] : 0;
    }
    *out = m;
    char name[64], step[64], cstep[64], why[512] = "";
    size_t no = plan_fused_count(x->p) + 1;
    snprintf(name, sizeof name, "__clrr_fused_%zu", no);
    /* map[k]: the launch and argument parameter k of the kernel so far
     * (the consumer side) comes from */
    uint8_t map[PLAN_FUSED_MAX_PARAMS][2], next[PLAN_FUSED_MAX_PARAMS][2];
    unsigned nmap = 0;
    const char *cname = ks[f->n - 1]->name;
    rw_fuse_out prev, rout;
    memset(&prev, 0, sizeof prev);
    memset(&rout, 0, sizeof rout);
    const char *src = prog->text;   /* headers inlined: the fused program builds anywhere */
    size_t len = (size_t)prog->text_len;
    for (unsigned s = f->n - 1; s-- > 0;) {
        /* launch s into the kernel of the launches after it: its
         * intermediate is the parameter that launch to[s]'s argument in[s]
         * became (launch to[s] itself, before the first step) */
        int last = s == 0, first = s + 2 == f->n;
        unsigned cbuf = f->horizontal ? RW_NO_BUF : f->in[s], pbuf = f->horizontal ? RW_NO_BUF : f->out[s];
        const char *into = ks[f->horizontal ? s + 1 : f->to[s]]->name;   /* for the notes */
        if (!first && !f->horizontal) {
            for (cbuf = 0; cbuf < nmap && !(map[cbuf][0] == f->to[s] && map[cbuf][1] == f->in[s]); cbuf++)
                ;
            if (cbuf == nmap) {
                opt_rw_fuse_free(&prev);
                if (!x->fuse_note[0])
                    snprintf(x->fuse_note, sizeof x->fuse_note, "%s -> %s not fused: a step's parameters do not "
                             "trace back to the launches", ks[s]->name, into);
                return PLAN_OK;   /* refused: m->id stays 0 */
            }
        }
        if (!last)
            snprintf(step, sizeof step, "__clrr_fused_%zu_step%u", no, f->n - 1 - s);
        rw_fuse_req req = {src, len, prog->options, ks[s]->name, cname, pbuf, cbuf, keep_store,
                           last ? name : step};
        rw_status rs = opt_rw_fuse(&req, &rout, why, sizeof why);
        opt_rw_fuse_free(&prev);
        if (rs == RW_ERR_NOMEM)
            return PLAN_ERR_NOMEM;
        if (rs == RW_OK && rout.nparams > PLAN_FUSED_MAX_PARAMS)
            snprintf(why, sizeof why, "%u parameters", rout.nparams);
        if (rs != RW_OK || rout.nparams > PLAN_FUSED_MAX_PARAMS) {
            opt_rw_fuse_free(&rout);
            if (!x->fuse_note[0])
                snprintf(x->fuse_note, sizeof x->fuse_note, "%s -> %s not fused: %s", ks[s]->name, into,
                         why);
            return PLAN_OK;
        }
        /* where each parameter comes from: a launch of the group, and its argument */
        for (unsigned k = 0; k < rout.nparams; k++) {
            unsigned idx = rout.params[k].index;
            if (rout.params[k].from == RW_FROM_PRODUCER) {
                next[k][0] = (uint8_t)s;
                next[k][1] = (uint8_t)idx;
            } else if (first) {
                next[k][0] = (uint8_t)(f->n - 1);
                next[k][1] = (uint8_t)idx;
            } else if (idx < nmap) {
                next[k][0] = map[idx][0];
                next[k][1] = map[idx][1];
            } else {
                opt_rw_fuse_free(&rout);
                if (!x->fuse_note[0])
                    snprintf(x->fuse_note, sizeof x->fuse_note, "%s -> %s not fused: a step's parameters do not "
                             "trace back to the launches", ks[s]->name, into);
                return PLAN_OK;
            }
        }
        memcpy(map, next, rout.nparams * sizeof map[0]);
        nmap = rout.nparams;
        if (!last) {
            prev = rout;
            memset(&rout, 0, sizeof rout);
            src = prev.source;
            len = prev.len;
            memcpy(cstep, step, sizeof cstep);
            cname = cstep;   /* the next step fuses a launch into this step's kernel */
        }
    }
    tf_blobref h;
    tf_hash(prog->source, (size_t)prog->source_len, &h);
    plan_fused z = {.name = name, .producer = ks[0]->name, .consumer = ks[f->n - 1]->name, .launches = f->n,
                   .source = rout.source, .options = prog->options ? prog->options : "", .keep_store = keep_store,
                   .nparams = nmap, .params = (const uint8_t(*)[2])map, .storing = storing};
    for (unsigned j = 0; j + 1 < f->n && !f->horizontal; j++) {
        z.into[j] = (uint8_t)f->to[j];
        z.gather |= f->to[j] != j + 1;
    }
    z.horizontal = f->horizontal;
    memcpy(z.program, h.hash, 16);
    plan_status st = plan_add_fused(x->p, &z, &m->id);
    opt_rw_fuse_free(&rout);
    if (st == PLAN_ERR_LIMIT) {
        m->id = 0;
        return PLAN_OK;
    }
    return st;
}

/* The fuse pass, before the stream: the pairs and chains of the model,
 * each kind made into one fused kernel by the rewriter (those it refuses
 * stay as they are). */
static plan_status opt_fuse_plan(opt_run *x)
{
    opt_fuse_pair *pairs = NULL;
    size_t npairs = 0, nmade = 0, capmade = 0, caproles = 0;
    opt_fuse_made *made = NULL;
    plan_status st = opt_fuse_find(x->m, x->o->horizontal, &pairs, &npairs);
    for (size_t i = 0; st == PLAN_OK && i < npairs; i++) {
        const opt_fuse_pair *f = &pairs[i];
        const ana_object *ks[PLAN_CHAIN_MAX];
        unsigned j;
        for (j = 0; j < f->n; j++) {
            ks[j] = ana_model_find(x->m, f->kernel[j]);
            if (opt_dead_of(x, f->seq[j]) || opt_kept(x, f->seq[j]) || !ks[j] || !ks[j]->name || ks[j]->parent != ks[0]->parent)
                break;   /* one program: the rewriter fuses kernels of one source */
        }
        if (j < f->n)
            continue;
        const ana_object *prog = ana_model_find(x->m, ks[0]->parent);
        if (!prog || !prog->source)
            continue;
        opt_fuse_made *m = NULL;
        if ((st = opt_fuse_make(x, prog, ks, f, f->keep_store, &made, &nmade, &capmade, &m)) != PLAN_OK)
            break;
        if (!m->id)
            continue;
        if (plan_grow((void **)&x->roles, &caproles, x->nroles + f->n, sizeof *x->roles)) {
            st = PLAN_ERR_NOMEM;
            break;
        }
        for (j = 0; j + 1 < f->n; j++)
            x->roles[x->nroles++] = (opt_fuse_role){f->seq[j], f->seq[f->n - 1], PLAN_ACT_HOLD, m->id};
        x->roles[x->nroles++] = (opt_fuse_role){f->seq[f->n - 1], f->seq[0], PLAN_ACT_FUSE, m->id};
    }
    free(pairs);
    free(made);
    if (st == PLAN_OK && x->nroles)
        qsort(x->roles, x->nroles, sizeof *x->roles, opt_role_cmp);
    return st == PLAN_OK ? PLAN_OK : plan_seterr(x->err, x->err_cap, st, "fuse: %s", plan_strerror(st));
}

static void opt_effect_of(const ana_cmd *c, plan_effect *e)
{
    memset(e, 0, sizeof *e);
    if (!c)
        return;
    e->commands = 1;
    e->kernels = c->kind == ANA_CMD_KERNEL;
    e->bytes = c->kind == ANA_CMD_KERNEL ? 0 : c->bytes;
    if (c->has_devtime && c->dev_end >= c->dev_start) {
        e->timed = 1;
        e->device_ns = c->dev_end - c->dev_start;
    }
}

static void opt_effect_add(plan_effect *a, const plan_effect *b)
{
    a->commands += b->commands;
    a->kernels += b->kernels;
    a->bytes += b->bytes;
    a->device_ns += b->device_ns;
    a->timed += b->timed;
}

/* Per kernel of the trace: how it accesses its arguments (the plan's
 * kernel facts), and the hashes of the program sources. */
static plan_status opt_facts(opt_run *x)
{
    const ana_model *m = x->m;
    for (size_t i = 0; i < ana_model_object_count(m); i++) {
        const ana_object *o = ana_model_object(m, i);
        tf_blobref h;
        if (o->kind == ANA_OBJ_PROGRAM && o->source) {
            tf_hash(o->source, (size_t)o->source_len, &h);
            if (plan_add_program(x->p, h.hash) != PLAN_OK)
                return PLAN_ERR_NOMEM;
        }
        if (o->kind != ANA_OBJ_KERNEL || !o->name || !o->name[0])
            continue;
        const ana_object *prog = ana_model_find(m, o->parent);
        const char *why = NULL;
        const ana_kernel *k = ana_model_kernel(m, o->id, &why);
        if (!prog || !prog->source || !k || k->unsupported)
            continue;
        tf_hash(prog->source, (size_t)prog->source_len, &h);
        if (plan_find_kernel(x->p, o->name, h.hash))
            continue;
        uint8_t acc[256];
        unsigned n = k->nargs < 256 ? k->nargs : 256;
        for (unsigned a = 0; a < n; a++) {
            const ana_arg *g = &k->args[a];
            int mem = g->kind == ANA_ARG_GLOBAL || g->kind == ANA_ARG_CONSTANT || g->kind == ANA_ARG_IMAGE ||
                      g->kind == ANA_ARG_PIPE || g->kind == ANA_ARG_OTHER;
            acc[a] = !mem ? PLAN_ACC_NONE : g->kind == ANA_ARG_PIPE || g->kind == ANA_ARG_OTHER ? PLAN_ACC_UNKNOWN
                                                                                             : (uint8_t)g->access;
        }
        plan_status st = plan_add_kernel(x->p, o->name, h.hash, n, acc);
        if (st != PLAN_OK)
            return st;
    }
    return PLAN_OK;
}

static plan_status opt_add(opt_run *x, const tf_call *c, plan_pass pass, const char *canon, uint64_t key,
                          uint64_t occ, uint64_t holds, const char *reason)
{
    plan_xform t;
    memset(&t, 0, sizeof t);
    t.pass = (uint8_t)pass;
    t.action = PLAN_ACT_DROP;
    t.seq = c->seq;
    t.function = c->sig->name;
    t.pattern = canon;
    t.key = key;
    t.occurrence = occ;
    t.holds_seq = holds;
    t.reason = reason;
    opt_effect_of(opt_cmd_of(x->m, c->seq), &t.effect);
    plan_pass_result *r = plan_pass_mut(x->p, pass);
    opt_effect_add(&r->effect, &t.effect);
    int drop = pass == PLAN_PASS_DEAD || pass == PLAN_PASS_REDUNDANT;
    if (drop && !x->o->no_repeat) {
        /* the same decision as for the pattern's occurrence before: the
         * same transformation, one occurrence more (plan 1.11 repeat) */
        uintptr_t i = (uintptr_t)plan_map_get(&x->last, key ? key : 1);
        plan_xform *f = i ? plan_xform_mut(x->p, i - 1) : NULL;
        uint64_t n = f && f->repeat > 1 ? f->repeat : 1;
        if (f && f->pass == pass && f->action == PLAN_ACT_DROP && f->occurrence + n == occ && !strcmp(f->pattern, canon)) {
            f->repeat = n + 1;
            opt_effect_add(&f->effect, &t.effect);
            return PLAN_OK;
        }
    }
    r->transformations++;
    plan_status st = plan_add_xform(x->p, &t);
    if (st == PLAN_OK && drop && !x->o->no_repeat &&
        plan_map_put(&x->last, key ? key : 1, (void *)(uintptr_t)plan_xform_count(x->p)))
        st = PLAN_ERR_NOMEM;
    return st;
}

/* One call of the stream: pattern, decision, tracker. */
static plan_status opt_stream_call(opt_run *x, plan_track *t, const tf_call *c)
{
    plan_fate fate = PLAN_FATE_RUN;
    plan_status st = PLAN_OK;
    if (plan_droppable(c->sig->name) && plan_call_ok(c)) {
        char *canon = NULL;
        uint64_t key = 0, holds = 0;
        int nomem = 0;
        st = plan_track_pattern(t, c, 0, &canon, &key);
        if (st == PLAN_ERR_LIMIT)   /* too long to name: never dropped */
            return plan_track_call(t, c, PLAN_FATE_RUN);
        if (st != PLAN_OK)
            return st;
        uint64_t occ = plan_occurrence_next(&x->occ, key, &nomem);
        const opt_dead_cmd *d = opt_dead_of(x, c->seq);
        const opt_fuse_role *fr = opt_role_of(x, c->seq);
        const opt_split_role *sr = opt_srole_of(x, c->seq);
        const plan_spec *z = NULL;
        const char *swhy = "";
        if (nomem) {
            st = PLAN_ERR_NOMEM;
        } else if (opt_kept(x, c->seq)) {
            /* runs as recorded */
        } else if (sr && !fr && !d) {
            const plan_split *z = plan_get_split(x->p, sr->split - 1);
            char why[1024];
            int n = snprintf(why, sizeof why, "runs as %u parts along dimension %u:", z->nparts, z->dim);
            for (unsigned i = 0; i < z->nparts && n > 0 && (size_t)n < sizeof why; i++)
                n += snprintf(why + n, sizeof why - (size_t)n, "%s %.40s %llu-%llu", i ? "," : "", z->parts[i].device,
                              (unsigned long long)z->parts[i].lo, (unsigned long long)z->parts[i].hi);
            int diff = 0, cat = 0;
            for (unsigned a = 0; a < z->nargs; a++) {
                diff |= z->merge[a] == PLAN_MERGE_DIFF;
                cat |= z->merge[a] == PLAN_MERGE_CONCAT;
            }
            if (n > 0 && (size_t)n < sizeof why)
                snprintf(why + n, sizeof why - (size_t)n, "; each part gets only the bytes it reads, outputs %s",
                         diff ? "merged against the previous contents" : cat ? "concatenated" : "none");
            st = opt_add(x, c, PLAN_PASS_SPLIT, canon, key, occ, 0, why);
            if (st == PLAN_OK) {
                plan_xform *t = plan_xform_mut(x->p, plan_xform_count(x->p) - 1);
                plan_pass_result *r = plan_pass_mut(x->p, PLAN_PASS_SPLIT);
                t->action = PLAN_ACT_SPLIT;
                t->split = sr->split;
                r->effect.commands -= t->effect.commands;   /* the launch still runs, in parts */
                r->effect.kernels -= t->effect.kernels;
                r->effect.device_ns -= t->effect.device_ns;
                r->effect.timed -= t->effect.timed;
                memset(&t->effect, 0, sizeof t->effect);
            }
        } else if (fr && !d) {
            char why[384];
            const plan_fused *z = plan_get_fused(x->p, fr->fused - 1);
            if (fr->action == PLAN_ACT_HOLD && z && z->horizontal)
                snprintf(why, sizeof why, "runs inside %s, beside the %u launches up to #%llu: launches of one "
                         "NDRange, independent of each other, that read the same memory; every store kept",
                         z->name, z->launches - 1, (unsigned long long)fr->partner);
            else if (fr->action == PLAN_ACT_HOLD && z && z->launches > 2)
                snprintf(why, sizeof why, "runs inside %s, a %s of %u launches ending with launch #%llu: each "
                         "work-item of the %s reads only what the same work-item of this launch wrote; the "
                         "buffer is not read later and is no longer stored", z->name, z->gather ? "gather" : "chain",
                         z->launches, (unsigned long long)fr->partner,
                         z->gather ? "launch that reads its output" : "next launch");
            else if (fr->action == PLAN_ACT_HOLD)
                snprintf(why, sizeof why, "runs inside %s with launch #%llu: each of its work-items reads only what the "
                         "same work-item of this launch wrote%s", z ? z->name : "?", (unsigned long long)fr->partner,
                         z && !z->keep_store ? "; the buffer is not read later and is no longer stored" : "");
            else if (z && z->launches > 2)
                snprintf(why, sizeof why, "runs as %s, with the %u launches from #%llu", z->name, z->launches - 1,
                         (unsigned long long)fr->partner);
            else
                snprintf(why, sizeof why, "runs as %s, with launch #%llu", z ? z->name : "?",
                         (unsigned long long)fr->partner);
            st = opt_add(x, c, PLAN_PASS_FUSE, canon, key, occ, 0, why);
            if (st == PLAN_OK) {
                plan_xform *t = plan_xform_mut(x->p, plan_xform_count(x->p) - 1);
                t->action = fr->action;
                t->fused = fr->fused;
                if (fr->action == PLAN_ACT_FUSE) {   /* the fused launch still runs */
                    plan_pass_result *r = plan_pass_mut(x->p, PLAN_PASS_FUSE);
                    r->effect.commands -= t->effect.commands;
                    r->effect.kernels -= t->effect.kernels;
                    r->effect.device_ns -= t->effect.device_ns;
                    r->effect.timed -= t->effect.timed;
                    memset(&t->effect, 0, sizeof t->effect);
                }
            }
        } else if (d) {
            fate = PLAN_FATE_DEAD;
            st = opt_add(x, c, PLAN_PASS_DEAD, canon, key, occ, 0, d->reason);
        } else if (!sr && !fr && (z = opt_spec_of(x, c, &swhy)) != NULL) {
            /* named by its shape (by-value arguments by size): the
             * specialization applies to every launch of that shape that
             * sets the constants, whatever its other scalars */
            char why[448], *scanon = NULL;
            uint64_t skey = 0;
            snprintf(why, sizeof why, "runs as %s: %s, as in every launch of %s in the recording", z->name, swhy,
                     z->kernel);
            st = plan_track_pattern(t, c, 1, &scanon, &skey);
            if (st == PLAN_OK) {
                /* the decision is the pattern's, wherever its launches come
                 * (live_match.c): written once, for its first launch;
                 * occurrences says how many there were */
                uint64_t socc = plan_occurrence_next(&x->socc, skey, &nomem);
                if (!nomem && socc)
                    z = NULL;
                else
                    st = nomem ? PLAN_ERR_NOMEM : opt_add(x, c, PLAN_PASS_SPECIALIZE, scanon, skey, socc, 0, why);
            } else if (st == PLAN_ERR_LIMIT) {
                st = PLAN_OK;   /* too long to name: not specialized */
                z = NULL;
            }
            free(scanon);
            if (st == PLAN_OK && z) {   /* the launch still runs, specialized */
                plan_xform *t = plan_xform_mut(x->p, plan_xform_count(x->p) - 1);
                plan_pass_result *r = plan_pass_mut(x->p, PLAN_PASS_SPECIALIZE);
                t->action = PLAN_ACT_SPECIALIZE;
                t->spec = z->id;
                r->effect.commands -= t->effect.commands;
                r->effect.kernels -= t->effect.kernels;
                r->effect.device_ns -= t->effect.device_ns;
                r->effect.timed -= t->effect.timed;
                memset(&t->effect, 0, sizeof t->effect);
            }
        } else if ((x->o->passes & (1u << PLAN_PASS_REDUNDANT)) && plan_track_redundant(t, c, &holds)) {
            char why[160];
            snprintf(why, sizeof why,
                     "the memory already holds these bytes: left by call #%llu and not written since",
                     (unsigned long long)holds);
            fate = PLAN_FATE_REDUNDANT;
            st = opt_add(x, c, PLAN_PASS_REDUNDANT, canon, key, occ, holds, why);
        }
        free(canon);
        if (st != PLAN_OK)
            return st;
    }
    return plan_track_call(t, c, fate);
}

static plan_status opt_stream(opt_run *x)
{
    plan_track t;
    plan_track_init(&t, x->p);
    t.fp_on = 1;
    plan_status st = PLAN_OK;
    tf_status ts = tf_reader_rewind(x->r);
    tf_item it;
    while (ts == TF_OK && st == PLAN_OK && (ts = tf_reader_next(x->r, &it)) == TF_OK) {
        if (it.type == TF_ITEM_CALL)
            st = opt_stream_call(x, &t, &it.u.call);
        else if (it.type == TF_ITEM_DATA)
            plan_track_data(&t, &it.u.data);
    }
    if (st == PLAN_OK && ts != TF_END)
        st = plan_seterr(x->err, x->err_cap, PLAN_ERR_TRACE, "%s%s%s", tf_strerror(ts), *tf_reader_error(x->r) ? ": " : "",
                        tf_reader_error(x->r));
    else if (st != PLAN_OK && st != PLAN_ERR_TRACE)
        plan_seterr(x->err, x->err_cap, st, "%s", plan_strerror(st));
    plan_info_mut(x->p)->fingerprint = plan_track_fingerprint(&t);
    plan_track_free(&t);
    return st;
}

static plan_status opt_optimize_once(const char *path, const opt_options *o, plan_file **out, char *err,
                                     size_t err_cap)
{
    opt_run x;
    memset(&x, 0, sizeof x);
    x.o = o;
    x.err = err;
    x.err_cap = err_cap;
    *out = NULL;
    plan_status st = plan_open_trace(path, o->max_memory, &x.r, err, err_cap);
    if (st != PLAN_OK)
        goto out;
    char aerr[512] = "";
    ana_status as = ana_model_build(x.r, &x.m, aerr, sizeof aerr);
    if (as == ANA_OK)
        as = ana_model_analyze(x.m);
    if (as != ANA_OK) {
        st = as == ANA_ERR_NOMEM ? PLAN_ERR_NOMEM : PLAN_ERR_TRACE;
        plan_seterr(err, err_cap, st, "%s", aerr[0] ? aerr : ana_strerror(as));
        goto out;
    }
    const ana_model_info *mi = ana_model_get_info(x.m);
    if (!mi->calls && mi->truncated) {
        st = plan_seterr(err, err_cap, PLAN_ERR_TRACE,
                        "truncated before its first complete chunk: nothing to optimize");
        goto out;
    }
    st = PLAN_ERR_NOMEM;
    x.p = plan_new();
    if (!x.p || plan_set_strings(x.p, "clrr " CLRR_VERSION, o->trace_name ? o->trace_name : path) != PLAN_OK ||
        opt_facts(&x) != PLAN_OK) {
        plan_seterr(err, err_cap, st, "out of memory");
        goto out;
    }
    plan_info_mut(x.p)->trace_calls = ana_model_get_info(x.m)->calls;
    for (unsigned i = 0; i < PLAN_PASS_COUNT; i++)
        plan_pass_mut(x.p, (plan_pass)i)->enabled = (o->passes >> i) & 1;
    if ((o->passes & (1u << PLAN_PASS_DEAD)) && (st = opt_dead_find(x.m, opt_kept, &x, &x.dead, &x.ndead, err, err_cap)) != PLAN_OK)
        goto out;
    if ((o->passes & (1u << PLAN_PASS_FUSE)) && (st = opt_fuse_plan(&x)) != PLAN_OK)
        goto out;
    if (o->note && o->note_cap)
        o->note[0] = 0;
    if (o->passes & (1u << PLAN_PASS_SPLIT)) {
        if (!o->split) {
            st = plan_seterr(err, err_cap, PLAN_ERR_ARG, "the split pass needs the devices to split over (--split)");
            goto out;
        }
        if ((st = opt_split_plan(x.m, x.p, o, opt_taken, &x, &x.sroles, &x.nsroles, o->note, o->note_cap, err,
                                 err_cap)) != PLAN_OK)
            goto out;
    }
    if ((o->passes & (1u << PLAN_PASS_SPECIALIZE)) && (st = opt_spec_plan(&x)) != PLAN_OK)
        goto out;
    /* the queues as recorded: a schedule keeps every conflicting pair's
     * order, so what the other passes leave out does not make it wrong */
    if ((o->passes & (1u << PLAN_PASS_SCHEDULE)) && (st = opt_sched_plan(x.m, x.p)) != PLAN_OK) {
        plan_seterr(err, err_cap, st, "schedule: %s", plan_strerror(st));
        goto out;
    }
    if ((st = opt_stream(&x)) != PLAN_OK)
        goto out;
    if (o->rw_note && o->rw_note_cap)
        snprintf(o->rw_note, o->rw_note_cap, "%s%s%s", x.fuse_note, x.fuse_note[0] && x.spec_note[0] ? "; " : "",
                 x.spec_note);
    for (size_t i = 0; i < plan_xform_count(x.p); i++) {   /* 1.3: how often the recording met each pattern */
        plan_xform *f = plan_xform_mut(x.p, i);
        f->occurrences = plan_occurrence_count(f->action == PLAN_ACT_SPECIALIZE ? &x.socc : &x.occ, f->key);
    }
    *out = x.p;
    x.p = NULL;
out:
    for (size_t i = 0; i < x.ndead; i++)
        free((char *)x.dead[i].reason);
    free(x.dead);
    plan_map_free(&x.occ);
    plan_map_free(&x.socc);
    plan_map_free(&x.last);
    free(x.roles);
    free(x.sroles);
    free(x.specs);
    free(x.spec_ids);
    plan_free(x.p);
    ana_model_free(x.m);
    tf_reader_close(x.r);
    return st;
}

/* fopencookie's write: counts the bytes. */
static ssize_t opt_count_write(void *cookie, const char *buf, size_t n)
{
    (void)buf;
    *(uint64_t *)cookie += n;
    return (ssize_t)n;
}

/* The size of @p p as plan_write() writes it (0: could not tell). */
static uint64_t opt_plan_bytes(const plan_file *p)
{
    uint64_t n = 0;
    cookie_io_functions_t io = {NULL, opt_count_write, NULL, NULL};
    FILE *f = fopencookie(&n, "w", io);
    if (!f)
        return 0;
    plan_status st = plan_write(p, f);
    fclose(f);
    return st == PLAN_OK ? n : 0;
}

plan_status opt_optimize(const char *path, const opt_options *o, plan_file **out, char *err, size_t err_cap)
{
    opt_options z = *o;
    for (;;) {
        plan_status st = opt_optimize_once(path, &z, out, err, err_cap);
        if (st != PLAN_OK || o->no_repeat)
            return st;
        size_t nx = plan_xform_count(*out);
        uint64_t bytes = opt_plan_bytes(*out);
        if (nx <= PLAN_MAX_XFORMS && bytes <= PLAN_MAX_BYTES)   /* (0: not measured) */
            return PLAN_OK;
        /* over the reader's limits: the pass with the most transformations goes */
        unsigned worst = PLAN_PASS_COUNT;
        uint64_t most = 0;
        for (unsigned i = 0; i < PLAN_PASS_COUNT; i++) {
            const plan_pass_result *r = plan_get_pass(*out, (plan_pass)i);
            if (((z.passes >> i) & 1) && r->transformations > most) {
                most = r->transformations;
                worst = i;
            }
        }
        plan_free(*out);
        *out = NULL;
        if (worst == PLAN_PASS_COUNT)
            return plan_seterr(err, err_cap, PLAN_ERR_LIMIT, "the plan would be over the reader's limits (%llu bytes, "
                               "%zu transformations) with no pass to leave out", (unsigned long long)bytes, nx);
        if (o->limit_note && o->limit_note_cap && !o->limit_note[0])
            snprintf(o->limit_note, o->limit_note_cap,
                     "pass %s left out: its %llu transformations make a plan of %llu bytes, over the reader's "
                     "limits (%zu bytes, %u transformations)", plan_pass_name((plan_pass)worst),
                     (unsigned long long)most, (unsigned long long)bytes, PLAN_MAX_BYTES, PLAN_MAX_XFORMS);
        z.passes &= ~(1u << worst);
    }
}
