/* opt_plan.c — the plan in memory: header, pass results, kernel facts and
 * transformations, with accessors. Strings live in the plan's arena. */
#include "plan/plan_int.h"

#include <stdlib.h>
#include <string.h>

opt_plan *opt_plan_new(void)
{
    opt_plan *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->info.major = OPT_PLAN_MAJOR;
    p->info.minor = OPT_PLAN_MINOR;
    p->info.generator = "";
    p->info.trace_file = "";
    for (unsigned i = 0; i < OPT_PASS_COUNT; i++)
        p->passes[i].pass = (uint8_t)i;
    return p;
}

void opt_plan_free(opt_plan *p)
{
    if (!p)
        return;
    free(p->xf);
    free(p->kf);
    free(p->fz);
    free(p->sp);
    free(p->sz);
    free(p->sc);
    free(p->programs);
    opt_arena_free(&p->arena);
    free(p);
}

static const char *opt_plan_str(opt_plan *p, const char *s)
{
    return s ? opt_arena_strndup(&p->arena, s, strlen(s)) : "";
}

opt_status opt_plan_set_strings(opt_plan *p, const char *generator, const char *trace_file)
{
    const char *g = opt_plan_str(p, generator), *t = opt_plan_str(p, trace_file);
    if (!g || !t)
        return OPT_ERR_NOMEM;
    p->info.generator = g;
    p->info.trace_file = t;
    return OPT_OK;
}

opt_status opt_plan_add_xform(opt_plan *p, const opt_xform *x)
{
    if (p->nxf >= OPT_PLAN_MAX_XFORMS)
        return OPT_ERR_LIMIT;
    if (opt_grow((void **)&p->xf, &p->capxf, p->nxf + 1, sizeof *p->xf))
        return OPT_ERR_NOMEM;
    opt_xform *d = &p->xf[p->nxf];
    *d = *x;
    d->function = opt_plan_str(p, x->function);
    d->pattern = opt_plan_str(p, x->pattern);
    d->reason = opt_plan_str(p, x->reason);
    if (!d->function || !d->pattern || !d->reason)
        return OPT_ERR_NOMEM;
    d->id = (uint32_t)++p->nxf;
    return OPT_OK;
}

opt_status opt_plan_add_fused(opt_plan *p, const opt_fused *f, uint32_t *id)
{
    if (p->nfz >= OPT_PLAN_MAX_FUSED || f->nparams > OPT_FUSED_MAX_PARAMS || f->launches > OPT_CHAIN_MAX)
        return OPT_ERR_LIMIT;
    if (opt_grow((void **)&p->fz, &p->capfz, p->nfz + 1, sizeof *p->fz))
        return OPT_ERR_NOMEM;
    opt_fused *d = &p->fz[p->nfz];
    *d = *f;
    if (d->launches < 2)
        d->launches = 2;
    for (unsigned i = 0; !d->gather && i + 1 < d->launches; i++)
        d->into[i] = (uint8_t)(i + 1);
    d->name = opt_plan_str(p, f->name);
    d->producer = opt_plan_str(p, f->producer);
    d->consumer = opt_plan_str(p, f->consumer);
    d->source = opt_plan_str(p, f->source);
    d->options = opt_plan_str(p, f->options);
    uint8_t (*pr)[2] = opt_arena_alloc(&p->arena, (f->nparams ? f->nparams : 1) * sizeof *pr);
    if (!d->name || !d->producer || !d->consumer || !d->source || !d->options || !pr)
        return OPT_ERR_NOMEM;
    if (f->nparams)
        memcpy(pr, f->params, f->nparams * sizeof *pr);
    d->params = (const uint8_t(*)[2])pr;
    d->id = (uint32_t)++p->nfz;
    if (id)
        *id = d->id;
    return OPT_OK;
}

opt_status opt_plan_add_spec(opt_plan *p, const opt_spec *z, uint32_t *id)
{
    if (p->nsz >= OPT_PLAN_MAX_SPECS || !z->nargs || z->nargs > OPT_FUSED_MAX_PARAMS || !z->nconsts ||
        z->nconsts > OPT_SPEC_MAX_CONSTS)
        return OPT_ERR_LIMIT;
    if (opt_grow((void **)&p->sz, &p->capsz, p->nsz + 1, sizeof *p->sz))
        return OPT_ERR_NOMEM;
    opt_spec *d = &p->sz[p->nsz];
    *d = *z;
    d->name = opt_plan_str(p, z->name);
    d->kernel = opt_plan_str(p, z->kernel);
    d->source = opt_plan_str(p, z->source);
    d->options = opt_plan_str(p, z->options);
    opt_const *k = opt_arena_alloc(&p->arena, z->nconsts * sizeof *k);
    uint8_t (*pr)[2] = opt_arena_alloc(&p->arena, z->nargs * sizeof *pr);
    if (!d->name || !d->kernel || !d->source || !d->options || !k || !pr)
        return OPT_ERR_NOMEM;
    memcpy(k, z->consts, z->nconsts * sizeof *k);
    d->consts = k;
    for (unsigned i = 0; i < z->nargs; i++) {   /* every parameter: the launch's own argument */
        pr[i][0] = 0;
        pr[i][1] = (uint8_t)i;
    }
    d->id = (uint32_t)++p->nsz;
    memset(&d->as, 0, sizeof d->as);
    d->as = (opt_fused){.id = OPT_SPEC_ID_BASE + d->id, .name = d->name, .producer = d->kernel,
                        .consumer = d->kernel, .launches = 1, .source = d->source, .options = d->options,
                        .keep_store = 1, .nparams = z->nargs, .params = (const uint8_t(*)[2])pr};
    memcpy(d->as.program, z->program, sizeof d->as.program);
    if (id)
        *id = d->id;
    return OPT_OK;
}

opt_status opt_plan_add_sched(opt_plan *p, const opt_sched *s)
{
    if (p->nsc >= OPT_PLAN_MAX_SCHEDS)
        return OPT_ERR_LIMIT;
    if (opt_grow((void **)&p->sc, &p->capsc, p->nsc + 1, sizeof *p->sc))
        return OPT_ERR_NOMEM;
    opt_sched *d = &p->sc[p->nsc];
    *d = *s;
    d->reason = opt_plan_str(p, s->reason);
    if (!d->reason)
        return OPT_ERR_NOMEM;
    d->id = (uint32_t)++p->nsc;
    return OPT_OK;
}

size_t opt_plan_sched_count(const opt_plan *p)
{
    return p->nsc;
}

const opt_sched *opt_plan_sched(const opt_plan *p, size_t i)
{
    return i < p->nsc ? &p->sc[i] : NULL;
}

size_t opt_plan_spec_count(const opt_plan *p)
{
    return p->nsz;
}

const opt_spec *opt_plan_spec(const opt_plan *p, size_t i)
{
    return i < p->nsz ? &p->sz[i] : NULL;
}

size_t opt_plan_fused_count(const opt_plan *p)
{
    return p->nfz;
}

const opt_fused *opt_plan_fused(const opt_plan *p, size_t i)
{
    return i < p->nfz ? &p->fz[i] : NULL;
}

opt_status opt_plan_add_kernel(opt_plan *p, const char *name, const uint8_t program[16], unsigned nargs,
                               const uint8_t *access)
{
    if (p->nkf >= OPT_PLAN_MAX_KERNELS)
        return OPT_ERR_LIMIT;
    if (opt_grow((void **)&p->kf, &p->capkf, p->nkf + 1, sizeof *p->kf))
        return OPT_ERR_NOMEM;
    opt_kernel_facts *k = &p->kf[p->nkf];
    memset(k, 0, sizeof *k);
    k->name = opt_plan_str(p, name);
    uint8_t *acc = opt_arena_alloc(&p->arena, nargs ? nargs : 1);
    if (!k->name || !acc)
        return OPT_ERR_NOMEM;
    if (nargs)
        memcpy(acc, access, nargs);
    k->access = acc;
    k->nargs = nargs;
    memcpy(k->program, program, 16);
    p->nkf++;
    return OPT_OK;
}

opt_status opt_plan_add_program(opt_plan *p, const uint8_t hash[16])
{
    for (unsigned i = 0; i < p->info.nprograms; i++)
        if (!memcmp(p->programs[i], hash, 16))
            return OPT_OK;
    if (p->info.nprograms >= OPT_PLAN_MAX_KERNELS)
        return OPT_ERR_LIMIT;
    if (opt_grow((void **)&p->programs, &p->capprograms, p->info.nprograms + 1, sizeof *p->programs))
        return OPT_ERR_NOMEM;
    memcpy(p->programs[p->info.nprograms++], hash, 16);
    p->info.programs = (const uint8_t(*)[16])p->programs;
    return OPT_OK;
}

const opt_kernel_facts *opt_plan_find_kernel(const opt_plan *p, const char *name, const uint8_t program[16])
{
    for (size_t i = 0; i < p->nkf; i++)
        if (!strcmp(p->kf[i].name, name) && !memcmp(p->kf[i].program, program, 16))
            return &p->kf[i];
    return NULL;
}

const opt_plan_info *opt_plan_get_info(const opt_plan *p)
{
    return &p->info;
}

size_t opt_plan_xform_count(const opt_plan *p)
{
    return p->nxf;
}

const opt_xform *opt_plan_xform(const opt_plan *p, size_t i)
{
    return i < p->nxf ? &p->xf[i] : NULL;
}

size_t opt_plan_kernel_count(const opt_plan *p)
{
    return p->nkf;
}

const opt_kernel_facts *opt_plan_kernel(const opt_plan *p, size_t i)
{
    return i < p->nkf ? &p->kf[i] : NULL;
}

opt_status opt_plan_add_split(opt_plan *p, const opt_split *sp, uint32_t *id)
{
    if (p->nsp >= OPT_PLAN_MAX_SPLITS || sp->nargs > OPT_SPLIT_MAX_ARGS || !sp->nparts ||
        sp->nparts > OPT_SPLIT_MAX_PARTS)
        return OPT_ERR_LIMIT;
    if (opt_grow((void **)&p->sp, &p->capsp, p->nsp + 1, sizeof *p->sp))
        return OPT_ERR_NOMEM;
    opt_split *d = &p->sp[p->nsp];
    *d = *sp;
    d->kernel = opt_plan_str(p, sp->kernel);
    d->name = opt_plan_str(p, sp->name);
    d->source = opt_plan_str(p, sp->source);
    d->options = opt_plan_str(p, sp->options);
    unsigned na = sp->nargs ? sp->nargs : 1;
    uint8_t *args = opt_arena_alloc(&p->arena, na), *merge = opt_arena_alloc(&p->arena, na);
    opt_split_part *parts = opt_arena_alloc(&p->arena, sp->nparts * sizeof *parts);
    if (!d->kernel || !d->name || !d->source || !d->options || !args || !merge || !parts)
        return OPT_ERR_NOMEM;
    memcpy(args, sp->args, sp->nargs);
    memcpy(merge, sp->merge, sp->nargs);
    for (unsigned i = 0; i < sp->nparts; i++) {
        opt_split_region *rg = opt_arena_alloc(&p->arena, na * sizeof *rg);
        parts[i] = sp->parts[i];
        parts[i].device = opt_plan_str(p, sp->parts[i].device);
        if (!rg || !parts[i].device)
            return OPT_ERR_NOMEM;
        memcpy(rg, sp->parts[i].regions, sp->nargs * sizeof *rg);
        parts[i].regions = rg;
    }
    d->args = args;
    d->merge = merge;
    d->parts = parts;
    d->models = NULL;
    if (sp->adaptive && sp->models) {
        opt_split_model *md = opt_arena_alloc(&p->arena, na * sizeof *md);
        if (!md)
            return OPT_ERR_NOMEM;
        memcpy(md, sp->models, sp->nargs * sizeof *md);
        d->models = md;
    }
    d->adaptive = d->models != NULL;
    d->id = (uint32_t)++p->nsp;
    if (id)
        *id = d->id;
    return OPT_OK;
}

int opt_split_same(const opt_split *a, const opt_split *b)
{
    if (strcmp(a->kernel, b->kernel) || memcmp(a->program, b->program, 16) || strcmp(a->name, b->name) ||
        strcmp(a->source, b->source) || strcmp(a->options, b->options) || a->dim != b->dim ||
        a->groups != b->groups || a->nargs != b->nargs || a->nparts != b->nparts ||
        memcmp(a->args, b->args, a->nargs) || memcmp(a->merge, b->merge, a->nargs) || a->adaptive != b->adaptive)
        return 0;
    for (unsigned k = 0; a->adaptive && k < a->nargs; k++) {
        const opt_split_model *x = &a->models[k], *y = &b->models[k];
        if (x->read != y->read || x->write != y->write || (x->read && memcmp(x->r, y->r, sizeof x->r)) ||
            (x->write && memcmp(x->w, y->w, sizeof x->w)))
            return 0;
    }
    for (unsigned i = 0; i < a->nparts; i++) {
        const opt_split_part *x = &a->parts[i], *y = &b->parts[i];
        if (strcmp(x->device, y->device) || x->lo != y->lo || x->hi != y->hi)
            return 0;
        for (unsigned k = 0; k < a->nargs; k++) {
            const opt_split_region *r = &x->regions[k], *q = &y->regions[k];
            if (r->read != q->read || r->write != q->write || (r->read && (r->rlo != q->rlo || r->rhi != q->rhi)) ||
                (r->write && (r->wlo != q->wlo || r->whi != q->whi)))
                return 0;
        }
    }
    return 1;
}

size_t opt_plan_split_count(const opt_plan *p)
{
    return p->nsp;
}

const opt_split *opt_plan_split(const opt_plan *p, size_t i)
{
    return i < p->nsp ? &p->sp[i] : NULL;
}

const opt_pass_result *opt_plan_pass(const opt_plan *p, opt_pass pass)
{
    return (unsigned)pass < OPT_PASS_COUNT ? &p->passes[pass] : NULL;
}

opt_plan_info *opt_plan_info_mut(opt_plan *p)
{
    return &p->info;
}

opt_pass_result *opt_plan_pass_mut(opt_plan *p, opt_pass pass)
{
    return (unsigned)pass < OPT_PASS_COUNT ? &p->passes[pass] : NULL;
}

opt_xform *opt_plan_xform_mut(opt_plan *p, size_t i)
{
    return i < p->nxf ? &p->xf[i] : NULL;
}

static const char *const opt_feature_names[OPT_FEAT_COUNT] = {"fuse", "split", "chain", "specialize", "schedule"};

const char *opt_feature_name(opt_feature f)
{
    return (unsigned)f < OPT_FEAT_COUNT ? opt_feature_names[f] : NULL;
}

unsigned opt_plan_features(const opt_plan *p)
{
    unsigned m = 0;
    for (size_t i = 0; i < p->nxf; i++) {
        unsigned a = p->xf[i].action;
        if (a == OPT_ACT_HOLD || a == OPT_ACT_FUSE)
            m |= 1u << OPT_FEAT_FUSE;
        else if (a == OPT_ACT_SPLIT)
            m |= 1u << OPT_FEAT_SPLIT;
        else if (a == OPT_ACT_SPECIALIZE)
            m |= 1u << OPT_FEAT_SPECIALIZE;
    }
    if (p->nfz)
        m |= 1u << OPT_FEAT_FUSE;
    for (size_t i = 0; i < p->nfz; i++)
        if (p->fz[i].launches > 2)
            m |= 1u << OPT_FEAT_CHAIN;
    if (p->nsp)
        m |= 1u << OPT_FEAT_SPLIT;
    if (p->nsz)
        m |= 1u << OPT_FEAT_SPECIALIZE;
    if (p->nsc)
        m |= 1u << OPT_FEAT_SCHEDULE;
    return m;
}
