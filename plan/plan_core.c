/* plan_core.c — the plan in memory: header, pass results, kernel facts and
 * transformations, with accessors. Strings live in the plan's arena. */
#include "plan/plan_int.h"

#include <stdlib.h>
#include <string.h>

plan_file *plan_new(void)
{
    plan_file *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->info.major = PLAN_MAJOR;
    p->info.minor = PLAN_MINOR;
    p->info.generator = "";
    p->info.trace_file = "";
    for (unsigned i = 0; i < PLAN_PASS_COUNT; i++)
        p->passes[i].pass = (uint8_t)i;
    return p;
}

void plan_free(plan_file *p)
{
    if (!p)
        return;
    free(p->xf);
    free(p->kf);
    free(p->fz);
    free(p->sp);
    free(p->sz);
    free(p->sc);
    free(p->lz);
    free(p->cz);
    free(p->st);
    free(p->un);
    free(p->programs);
    plan_arena_free(&p->arena);
    free(p);
}

static const char *plan_str(plan_file *p, const char *s)
{
    return s ? plan_arena_strndup(&p->arena, s, strlen(s)) : "";
}

plan_status plan_set_strings(plan_file *p, const char *generator, const char *trace_file)
{
    const char *g = plan_str(p, generator), *t = plan_str(p, trace_file);
    if (!g || !t)
        return PLAN_ERR_NOMEM;
    p->info.generator = g;
    p->info.trace_file = t;
    return PLAN_OK;
}

plan_status plan_add_xform(plan_file *p, const plan_xform *x)
{
    if (p->nxf >= PLAN_MAX_XFORMS)
        return PLAN_ERR_LIMIT;
    if (plan_grow((void **)&p->xf, &p->capxf, p->nxf + 1, sizeof *p->xf))
        return PLAN_ERR_NOMEM;
    plan_xform *d = &p->xf[p->nxf];
    *d = *x;
    d->function = plan_str(p, x->function);
    d->pattern = plan_str(p, x->pattern);
    d->reason = plan_str(p, x->reason);
    if (!d->function || !d->pattern || !d->reason)
        return PLAN_ERR_NOMEM;
    d->id = (uint32_t)++p->nxf;
    return PLAN_OK;
}

plan_status plan_add_fused(plan_file *p, const plan_fused *f, uint32_t *id)
{
    if (p->nfz >= PLAN_MAX_FUSED || f->nparams > PLAN_FUSED_MAX_PARAMS || f->launches > PLAN_CHAIN_MAX)
        return PLAN_ERR_LIMIT;
    if (plan_grow((void **)&p->fz, &p->capfz, p->nfz + 1, sizeof *p->fz))
        return PLAN_ERR_NOMEM;
    plan_fused *d = &p->fz[p->nfz];
    *d = *f;
    if (d->launches < 2)
        d->launches = 2;
    for (unsigned i = 0; !d->gather && i + 1 < d->launches; i++)
        d->into[i] = (uint8_t)(i + 1);
    d->name = plan_str(p, f->name);
    d->producer = plan_str(p, f->producer);
    d->consumer = plan_str(p, f->consumer);
    d->source = plan_str(p, f->source);
    d->options = plan_str(p, f->options);
    uint8_t (*pr)[2] = plan_arena_alloc(&p->arena, (f->nparams ? f->nparams : 1) * sizeof *pr);
    if (!d->name || !d->producer || !d->consumer || !d->source || !d->options || !pr)
        return PLAN_ERR_NOMEM;
    if (f->nparams)
        memcpy(pr, f->params, f->nparams * sizeof *pr);
    d->params = (const uint8_t(*)[2])pr;
    d->id = (uint32_t)++p->nfz;
    if (id)
        *id = d->id;
    return PLAN_OK;
}

plan_status plan_add_spec(plan_file *p, const plan_spec *z, uint32_t *id)
{
    if (p->nsz >= PLAN_MAX_SPECS || !z->nargs || z->nargs > PLAN_FUSED_MAX_PARAMS || !z->nconsts ||
        z->nconsts > PLAN_SPEC_MAX_CONSTS)
        return PLAN_ERR_LIMIT;
    if (plan_grow((void **)&p->sz, &p->capsz, p->nsz + 1, sizeof *p->sz))
        return PLAN_ERR_NOMEM;
    plan_spec *d = &p->sz[p->nsz];
    *d = *z;
    d->name = plan_str(p, z->name);
    d->kernel = plan_str(p, z->kernel);
    d->source = plan_str(p, z->source);
    d->options = plan_str(p, z->options);
    plan_const *k = plan_arena_alloc(&p->arena, z->nconsts * sizeof *k);
    uint8_t (*pr)[2] = plan_arena_alloc(&p->arena, z->nargs * sizeof *pr);
    if (!d->name || !d->kernel || !d->source || !d->options || !k || !pr)
        return PLAN_ERR_NOMEM;
    memcpy(k, z->consts, z->nconsts * sizeof *k);
    d->consts = k;
    for (unsigned i = 0; i < z->nargs; i++) {   /* every parameter: the launch's own argument */
        pr[i][0] = 0;
        pr[i][1] = (uint8_t)i;
    }
    d->id = (uint32_t)++p->nsz;
    memset(&d->as, 0, sizeof d->as);
    d->as = (plan_fused){.id = PLAN_SPEC_ID_BASE + d->id, .name = d->name, .producer = d->kernel,
                        .consumer = d->kernel, .launches = 1, .source = d->source, .options = d->options,
                        .keep_store = 1, .nparams = z->nargs, .params = (const uint8_t(*)[2])pr};
    memcpy(d->as.program, z->program, sizeof d->as.program);
    if (id)
        *id = d->id;
    return PLAN_OK;
}

plan_status plan_add_local(plan_file *p, const plan_local *l, uint32_t *id)
{
    if (p->nlz >= PLAN_MAX_LOCALS || !l->ntuned || l->ntuned > PLAN_LOCAL_MAX_TUNED)
        return PLAN_ERR_LIMIT;
    if (!l->dim || l->dim > 3)
        return PLAN_ERR_ARG;
    for (unsigned t = 0; t < l->ntuned; t++) {
        uint64_t items = 1;
        const plan_tuned *tt = &l->tuned[t];
        const plan_coarse *co = tt->coarsen ? plan_get_coarse(p, tt->coarsen - 1) : NULL;
        if (tt->coarsen && (!co || co->dim >= l->dim || l->global[co->dim] % co->factor))
            return PLAN_ERR_ARG;
        int none = co && !tt->local[0] && !tt->local[1] && !tt->local[2];   /* coarsened, no local size */
        if (co && co->form >= 3) {   /* a group form: the recorded work-groups, each F times fewer work-items */
            if (!l->has_recorded || none)
                return PLAN_ERR_ARG;
            for (unsigned d = 0; d < l->dim; d++) {
                uint64_t r = l->recorded[d];
                if (!r || l->global[d] % r || tt->local[d] != (d == co->dim ? r / co->factor : r) ||
                    (d == co->dim && r % co->factor))
                    return PLAN_ERR_ARG;
            }
        }
        for (unsigned d = 0; d < l->dim && !none; d++) {
            uint64_t v = tt->local[d], g = co && co->dim == d ? l->global[d] / co->factor : l->global[d];
            if (!v || v > PLAN_LOCAL_MAX_ITEMS || !g || v > g || (co && g % v))
                return PLAN_ERR_ARG;
            items *= v;
        }
        if (items > PLAN_LOCAL_MAX_ITEMS)
            return PLAN_ERR_ARG;
    }
    if (plan_grow((void **)&p->lz, &p->caplz, p->nlz + 1, sizeof *p->lz))
        return PLAN_ERR_NOMEM;
    plan_local *d = &p->lz[p->nlz];
    *d = *l;
    d->kernel = plan_str(p, l->kernel);
    plan_tuned *t = plan_arena_alloc(&p->arena, l->ntuned * sizeof *t);
    if (!d->kernel || !t)
        return PLAN_ERR_NOMEM;
    for (unsigned i = 0; i < l->ntuned; i++) {
        t[i] = l->tuned[i];
        t[i].device = plan_str(p, l->tuned[i].device);
        t[i].driver = plan_str(p, l->tuned[i].driver);
        if (!t[i].device || !t[i].driver)
            return PLAN_ERR_NOMEM;
    }
    d->tuned = t;
    d->id = (uint32_t)++p->nlz;
    if (id)
        *id = d->id;
    return PLAN_OK;
}

size_t plan_coarse_count(const plan_file *p)
{
    return p->ncz;
}

const plan_coarse *plan_get_coarse(const plan_file *p, size_t i)
{
    return i < p->ncz ? &p->cz[i] : NULL;
}

plan_status plan_add_coarse(plan_file *p, const plan_coarse *c, uint32_t *id)
{
    if (p->ncz >= PLAN_MAX_COARSE)
        return PLAN_ERR_LIMIT;
    if (c->dim > 2 || (c->factor != 2 && c->factor != 4 && c->factor != 8 && (c->factor != 16 || c->form != 2)) ||
        c->form >= PLAN_COARSE_FORMS || (c->form == 2 && c->dim) || !c->nargs ||
        c->nargs > PLAN_FUSED_MAX_PARAMS || !c->name || !c->kernel || !c->source)
        return PLAN_ERR_ARG;
    if (plan_grow((void **)&p->cz, &p->capcz, p->ncz + 1, sizeof *p->cz))
        return PLAN_ERR_NOMEM;
    plan_coarse *d = &p->cz[p->ncz];
    *d = *c;
    d->name = plan_str(p, c->name);
    d->kernel = plan_str(p, c->kernel);
    d->source = plan_str(p, c->source);
    d->options = plan_str(p, c->options ? c->options : "");
    if (!d->name || !d->kernel || !d->source || !d->options)
        return PLAN_ERR_NOMEM;
    d->id = (uint32_t)++p->ncz;
    if (id)
        *id = d->id;
    return PLAN_OK;
}

size_t plan_stage_count(const plan_file *p)
{
    return p->nst;
}

const plan_stage *plan_get_stage(const plan_file *p, size_t i)
{
    return i < p->nst ? &p->st[i] : NULL;
}

/* The entry of @p a[0..n) for @p device and @p driver, or NULL. */
static const plan_stage *plan_decision_in(const plan_stage *a, size_t n, const char *device, const char *driver)
{
    for (size_t i = 0; device && driver && i < n; i++)
        if (!strcmp(a[i].device, device) && !strcmp(a[i].driver, driver))
            return &a[i];
    return NULL;
}

const plan_stage *plan_stage_for(const plan_file *p, const char *device, const char *driver)
{
    return plan_decision_in(p->st, p->nst, device, driver);
}

size_t plan_unstaged_count(const plan_file *p)
{
    return p->nun;
}

const plan_stage *plan_get_unstaged(const plan_file *p, size_t i)
{
    return i < p->nun ? &p->un[i] : NULL;
}

const plan_stage *plan_unstaged_for(const plan_file *p, const char *device, const char *driver)
{
    return plan_decision_in(p->un, p->nun, device, driver);
}

/* Appends @p s to staging (@p kept) or unstaged: one entry per device
 * and driver across both, each within the members' ranges. */
static plan_status plan_add_decision(plan_file *p, const plan_stage *s, int kept)
{
    plan_stage **a = kept ? &p->st : &p->un;
    size_t *n = kept ? &p->nst : &p->nun, *cap = kept ? &p->capst : &p->capun;
    if (*n >= PLAN_MAX_STAGES)
        return PLAN_ERR_LIMIT;
    if (!s->device || !s->driver || s->min_bytes < PLAN_STAGE_MIN_BYTES || !s->reps || s->reps > 1000 ||
        (kept && s->after_ns > s->before_ns) || s->transfers > s->bytes / s->min_bytes ||
        plan_stage_for(p, s->device, s->driver) || plan_unstaged_for(p, s->device, s->driver))
        return PLAN_ERR_ARG;
    if (plan_grow((void **)a, cap, *n + 1, sizeof **a))
        return PLAN_ERR_NOMEM;
    plan_stage *d = &(*a)[*n];
    *d = *s;
    d->device = plan_str(p, s->device);
    d->driver = plan_str(p, s->driver);
    if (!d->device || !d->driver)
        return PLAN_ERR_NOMEM;
    (*n)++;
    return PLAN_OK;
}

plan_status plan_add_stage(plan_file *p, const plan_stage *s)
{
    return plan_add_decision(p, s, 1);
}

plan_status plan_add_unstaged(plan_file *p, const plan_stage *s)
{
    return plan_add_decision(p, s, 0);
}

void plan_remove_stages(plan_file *p)
{
    p->nst = p->nun = 0;
}

void plan_remove_locals(plan_file *p)
{
    size_t k = 0;
    p->ncz = 0;
    for (size_t i = 0; i < p->nxf; i++)
        if (p->xf[i].action != PLAN_ACT_LOCAL_SIZE && p->xf[i].action != PLAN_ACT_COARSEN) {
            p->xf[k] = p->xf[i];
            p->xf[k].id = (uint32_t)(k + 1);
            k++;
        }
    p->nxf = k;
    p->nlz = 0;
    p->passes[PLAN_PASS_WGSIZE].transformations = 0;
    memset(&p->passes[PLAN_PASS_WGSIZE].effect, 0, sizeof p->passes[PLAN_PASS_WGSIZE].effect);
}

/* An array of at most 3 integers (a NULL array: 0). @return the count, or -1. */
static int plan_dims_of(const tf_value *v, uint64_t out[3])
{
    if (!v || v->type == TF_NIL)
        return 0;
    if (v->type != TF_ARRAY || v->v.arr.n > 3)
        return -1;
    for (uint32_t i = 0; i < v->v.arr.n; i++)
        if (!tf_value_u64(&v->v.arr.items[i], &out[i]))
            return -1;
    return (int)v->v.arr.n;
}

int plan_launch_shape(struct plan_track *t, const tf_call *c, plan_shape *out)
{
    uint64_t kid = 0, dim = 0;
    memset(out, 0, sizeof *out);
    if (!plan_arg_u64(c, "kernel", &kid) || !plan_arg_u64(c, "work_dim", &dim) || dim < 1 || dim > 3)
        return 0;
    const plan_obj *k = plan_track_obj(t, kid);
    const plan_obj *pr = k && k->kind == PLAN_OBJ_KERNEL ? plan_track_obj(t, k->program) : NULL;
    if (!k || !k->name || !pr || !pr->has_src)
        return 0;
    uint64_t g[3] = {1, 1, 1}, l[3] = {0, 0, 0};
    int ng = plan_dims_of(plan_arg(c, "global_work_size"), g), nl = plan_dims_of(plan_arg(c, "local_work_size"), l);
    if (ng < (int)dim || nl < 0 || (nl && nl < (int)dim))
        return 0;
    out->kernel = k->name;
    memcpy(out->program, pr->src, 16);
    out->dim = (unsigned)dim;
    for (unsigned d = 0; d < 3; d++) {
        out->global[d] = d < dim ? g[d] : 1;
        out->local[d] = nl && d < dim ? l[d] : 0;
    }
    out->has_local = nl > 0;
    return 1;
}

const plan_local *plan_local_match(const plan_file *p, const plan_shape *s)
{
    for (size_t i = 0; i < p->nlz; i++) {
        const plan_local *l = &p->lz[i];
        int same = l->dim == s->dim && l->has_recorded == s->has_local && !strcmp(l->kernel, s->kernel) &&
                   !memcmp(l->program, s->program, 16);
        for (unsigned d = 0; same && d < l->dim; d++)
            same = l->global[d] == s->global[d] && (!l->has_recorded || l->recorded[d] == s->local[d]);
        if (same)
            return l;
    }
    return NULL;
}

size_t plan_local_count(const plan_file *p)
{
    return p->nlz;
}

const plan_local *plan_get_local(const plan_file *p, size_t i)
{
    return i < p->nlz ? &p->lz[i] : NULL;
}

const plan_tuned *plan_local_for(const plan_local *l, const char *device, const char *driver)
{
    for (unsigned i = 0; l && device && driver && i < l->ntuned; i++)
        if (!strcmp(l->tuned[i].device, device) && !strcmp(l->tuned[i].driver, driver))
            return &l->tuned[i];
    return NULL;
}

plan_status plan_add_sched(plan_file *p, const plan_sched *s)
{
    if (p->nsc >= PLAN_MAX_SCHEDS)
        return PLAN_ERR_LIMIT;
    if (plan_grow((void **)&p->sc, &p->capsc, p->nsc + 1, sizeof *p->sc))
        return PLAN_ERR_NOMEM;
    plan_sched *d = &p->sc[p->nsc];
    *d = *s;
    d->reason = plan_str(p, s->reason);
    if (!d->reason)
        return PLAN_ERR_NOMEM;
    d->id = (uint32_t)++p->nsc;
    return PLAN_OK;
}

size_t plan_sched_count(const plan_file *p)
{
    return p->nsc;
}

const plan_sched *plan_get_sched(const plan_file *p, size_t i)
{
    return i < p->nsc ? &p->sc[i] : NULL;
}

size_t plan_spec_count(const plan_file *p)
{
    return p->nsz;
}

const plan_spec *plan_get_spec(const plan_file *p, size_t i)
{
    return i < p->nsz ? &p->sz[i] : NULL;
}

size_t plan_fused_count(const plan_file *p)
{
    return p->nfz;
}

const plan_fused *plan_get_fused(const plan_file *p, size_t i)
{
    return i < p->nfz ? &p->fz[i] : NULL;
}

plan_status plan_add_kernel(plan_file *p, const char *name, const uint8_t program[16], unsigned nargs,
                               const uint8_t *access)
{
    if (p->nkf >= PLAN_MAX_KERNELS)
        return PLAN_ERR_LIMIT;
    if (plan_grow((void **)&p->kf, &p->capkf, p->nkf + 1, sizeof *p->kf))
        return PLAN_ERR_NOMEM;
    plan_kernel_facts *k = &p->kf[p->nkf];
    memset(k, 0, sizeof *k);
    k->name = plan_str(p, name);
    uint8_t *acc = plan_arena_alloc(&p->arena, nargs ? nargs : 1);
    if (!k->name || !acc)
        return PLAN_ERR_NOMEM;
    if (nargs)
        memcpy(acc, access, nargs);
    k->access = acc;
    k->nargs = nargs;
    memcpy(k->program, program, 16);
    p->nkf++;
    return PLAN_OK;
}

plan_status plan_add_program(plan_file *p, const uint8_t hash[16])
{
    for (unsigned i = 0; i < p->info.nprograms; i++)
        if (!memcmp(p->programs[i], hash, 16))
            return PLAN_OK;
    if (p->info.nprograms >= PLAN_MAX_KERNELS)
        return PLAN_ERR_LIMIT;
    if (plan_grow((void **)&p->programs, &p->capprograms, p->info.nprograms + 1, sizeof *p->programs))
        return PLAN_ERR_NOMEM;
    memcpy(p->programs[p->info.nprograms++], hash, 16);
    p->info.programs = (const uint8_t(*)[16])p->programs;
    return PLAN_OK;
}

const plan_kernel_facts *plan_find_kernel(const plan_file *p, const char *name, const uint8_t program[16])
{
    for (size_t i = 0; i < p->nkf; i++)
        if (!strcmp(p->kf[i].name, name) && !memcmp(p->kf[i].program, program, 16))
            return &p->kf[i];
    return NULL;
}

const plan_info *plan_get_info(const plan_file *p)
{
    return &p->info;
}

size_t plan_xform_count(const plan_file *p)
{
    return p->nxf;
}

const plan_xform *plan_get_xform(const plan_file *p, size_t i)
{
    return i < p->nxf ? &p->xf[i] : NULL;
}

size_t plan_kernel_count(const plan_file *p)
{
    return p->nkf;
}

const plan_kernel_facts *plan_kernel(const plan_file *p, size_t i)
{
    return i < p->nkf ? &p->kf[i] : NULL;
}

plan_status plan_add_split(plan_file *p, const plan_split *sp, uint32_t *id)
{
    if (p->nsp >= PLAN_MAX_SPLITS || sp->nargs > PLAN_SPLIT_MAX_ARGS || !sp->nparts ||
        sp->nparts > PLAN_SPLIT_MAX_PARTS)
        return PLAN_ERR_LIMIT;
    if (plan_grow((void **)&p->sp, &p->capsp, p->nsp + 1, sizeof *p->sp))
        return PLAN_ERR_NOMEM;
    plan_split *d = &p->sp[p->nsp];
    *d = *sp;
    d->kernel = plan_str(p, sp->kernel);
    d->name = plan_str(p, sp->name);
    d->source = plan_str(p, sp->source);
    d->options = plan_str(p, sp->options);
    unsigned na = sp->nargs ? sp->nargs : 1;
    uint8_t *args = plan_arena_alloc(&p->arena, na), *merge = plan_arena_alloc(&p->arena, na);
    plan_split_part *parts = plan_arena_alloc(&p->arena, sp->nparts * sizeof *parts);
    if (!d->kernel || !d->name || !d->source || !d->options || !args || !merge || !parts)
        return PLAN_ERR_NOMEM;
    memcpy(args, sp->args, sp->nargs);
    memcpy(merge, sp->merge, sp->nargs);
    for (unsigned i = 0; i < sp->nparts; i++) {
        plan_split_region *rg = plan_arena_alloc(&p->arena, na * sizeof *rg);
        parts[i] = sp->parts[i];
        parts[i].device = plan_str(p, sp->parts[i].device);
        if (!rg || !parts[i].device)
            return PLAN_ERR_NOMEM;
        memcpy(rg, sp->parts[i].regions, sp->nargs * sizeof *rg);
        parts[i].regions = rg;
    }
    d->args = args;
    d->merge = merge;
    d->parts = parts;
    d->models = NULL;
    if (sp->adaptive && sp->models) {
        plan_split_model *md = plan_arena_alloc(&p->arena, na * sizeof *md);
        if (!md)
            return PLAN_ERR_NOMEM;
        memcpy(md, sp->models, sp->nargs * sizeof *md);
        d->models = md;
    }
    d->adaptive = d->models != NULL;
    d->id = (uint32_t)++p->nsp;
    if (id)
        *id = d->id;
    return PLAN_OK;
}

int plan_split_same(const plan_split *a, const plan_split *b)
{
    if (strcmp(a->kernel, b->kernel) || memcmp(a->program, b->program, 16) || strcmp(a->name, b->name) ||
        strcmp(a->source, b->source) || strcmp(a->options, b->options) || a->dim != b->dim ||
        a->groups != b->groups || a->nargs != b->nargs || a->nparts != b->nparts ||
        memcmp(a->args, b->args, a->nargs) || memcmp(a->merge, b->merge, a->nargs) || a->adaptive != b->adaptive)
        return 0;
    for (unsigned k = 0; a->adaptive && k < a->nargs; k++) {
        const plan_split_model *x = &a->models[k], *y = &b->models[k];
        if (x->read != y->read || x->write != y->write || (x->read && memcmp(x->r, y->r, sizeof x->r)) ||
            (x->write && memcmp(x->w, y->w, sizeof x->w)))
            return 0;
    }
    for (unsigned i = 0; i < a->nparts; i++) {
        const plan_split_part *x = &a->parts[i], *y = &b->parts[i];
        if (strcmp(x->device, y->device) || x->lo != y->lo || x->hi != y->hi)
            return 0;
        for (unsigned k = 0; k < a->nargs; k++) {
            const plan_split_region *r = &x->regions[k], *q = &y->regions[k];
            if (r->read != q->read || r->write != q->write || (r->read && (r->rlo != q->rlo || r->rhi != q->rhi)) ||
                (r->write && (r->wlo != q->wlo || r->whi != q->whi)))
                return 0;
        }
    }
    return 1;
}

size_t plan_split_count(const plan_file *p)
{
    return p->nsp;
}

const plan_split *plan_get_split(const plan_file *p, size_t i)
{
    return i < p->nsp ? &p->sp[i] : NULL;
}

const plan_pass_result *plan_get_pass(const plan_file *p, plan_pass pass)
{
    return (unsigned)pass < PLAN_PASS_COUNT ? &p->passes[pass] : NULL;
}

plan_info *plan_info_mut(plan_file *p)
{
    return &p->info;
}

plan_pass_result *plan_pass_mut(plan_file *p, plan_pass pass)
{
    return (unsigned)pass < PLAN_PASS_COUNT ? &p->passes[pass] : NULL;
}

plan_xform *plan_xform_mut(plan_file *p, size_t i)
{
    return i < p->nxf ? &p->xf[i] : NULL;
}

static const char *const plan_feature_names[PLAN_FEAT_COUNT] = {"fuse", "split", "chain", "specialize", "schedule",
                                                                       "local_size", "coarsen"};

const char *plan_feature_name(plan_feature f)
{
    return (unsigned)f < PLAN_FEAT_COUNT ? plan_feature_names[f] : NULL;
}

unsigned plan_features(const plan_file *p)
{
    unsigned m = 0;
    for (size_t i = 0; i < p->nxf; i++) {
        unsigned a = p->xf[i].action;
        if (a == PLAN_ACT_HOLD || a == PLAN_ACT_FUSE)
            m |= 1u << PLAN_FEAT_FUSE;
        else if (a == PLAN_ACT_SPLIT)
            m |= 1u << PLAN_FEAT_SPLIT;
        else if (a == PLAN_ACT_SPECIALIZE)
            m |= 1u << PLAN_FEAT_SPECIALIZE;
        else if (a == PLAN_ACT_LOCAL_SIZE)
            m |= 1u << PLAN_FEAT_LOCAL_SIZE;
        else if (a == PLAN_ACT_COARSEN)
            m |= 1u << PLAN_FEAT_LOCAL_SIZE | 1u << PLAN_FEAT_COARSEN;
    }
    if (p->ncz)
        m |= 1u << PLAN_FEAT_COARSEN;
    if (p->nlz)
        m |= 1u << PLAN_FEAT_LOCAL_SIZE;
    if (p->nfz)
        m |= 1u << PLAN_FEAT_FUSE;
    for (size_t i = 0; i < p->nfz; i++)
        if (p->fz[i].launches > 2)
            m |= 1u << PLAN_FEAT_CHAIN;
    if (p->nsp)
        m |= 1u << PLAN_FEAT_SPLIT;
    if (p->nsz)
        m |= 1u << PLAN_FEAT_SPECIALIZE;
    if (p->nsc)
        m |= 1u << PLAN_FEAT_SCHEDULE;
    return m;
}
