/* opt_spec.c — the specialize pass's search (PLAN.md, "Specializations"):
 * scalar arguments that every launch of a kernel sets to the same bytes,
 * where they bound one of the kernel's loops.
 *
 * Per kernel object, over its launches that no other pass took (dropped,
 * fused, split): a scalar argument qualifies when
 *   - the kernel analysis puts it in the start, end or step of a loop
 *     (ana_loop; a copy's bytes loop does not count): as a compile-time
 *     constant it gives the loop a constant trip count the compiler can
 *     unroll, or a constant bound it can fold;
 *   - its type is an integer type, float or double, of its own size;
 *   - every such launch set it, by value, to the same bytes.
 * The rewriter (rw_specialize) then makes the kernel with those arguments
 * as constants; the pattern of each launch (which names scalar values)
 * makes a run with other values fall back to the original kernel. */
#include "optimizer/opt_int.h"

#include "analyzer/ana.h"

#include <stdlib.h>
#include <string.h>

/* The scalar types a specialization spells as a literal. */
static int sp_type_ok(const char *type, unsigned size)
{
    static const struct {
        const char *name;
        unsigned size;
    } ok[] = {{"char", 1}, {"uchar", 1}, {"unsigned char", 1}, {"short", 2}, {"ushort", 2}, {"unsigned short", 2},
              {"int", 4}, {"uint", 4}, {"unsigned int", 4}, {"long", 8}, {"ulong", 8}, {"unsigned long", 8},
              {"float", 4}, {"double", 8}};
    if (!type)
        return 0;
    if (!strncmp(type, "const ", 6))
        type += 6;
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++)
        if (!strcmp(type, ok[i].name))
            return ok[i].size == size;
    return 0;
}

/* Marks in @p bound (one bit per argument, up to 256) the arguments that
 * form @p e. */
static void sp_args_of(const ana_expr *e, uint8_t bound[32])
{
    if (!e->known)
        return;
    for (unsigned t = 0; t < e->nterms; t++) {
        const ana_sym s[2] = {e->terms[t].a, e->terms[t].b};
        for (int i = 0; i < 2; i++)
            if (s[i].kind == ANA_SYM_ARG)   /* (an index is at most 255) */
                bound[s[i].index / 8] |= (uint8_t)(1u << s[i].index % 8);
    }
}

static int sp_bit(const uint8_t bound[32], unsigned a)
{
    return a < 256 && (bound[a / 8] >> a % 8 & 1);
}

/* The loop whose range names argument @p a, for the reason line. */
static const ana_loop *sp_loop_of(const ana_kernel *k, unsigned a)
{
    for (unsigned l = 0; l < k->nloops; l++) {
        uint8_t b[32] = {0};
        if (k->loops[l].bytes)
            continue;
        sp_args_of(&k->loops[l].start, b);
        sp_args_of(&k->loops[l].end, b);
        sp_args_of(&k->loops[l].step_expr, b);
        if (sp_bit(b, a))
            return &k->loops[l];
    }
    return NULL;
}

plan_status opt_spec_find(const ana_model *m, int (*taken)(void *user, uint64_t seq), void *user,
                         opt_spec_cand **out, size_t *nout)
{
    *out = NULL;
    *nout = 0;
    size_t cap = 0, n = ana_model_command_count(m);
    for (size_t i = 0; i < n; i++) {
        const ana_cmd *c = ana_model_command(m, i);
        if (c->kind != ANA_CMD_KERNEL || taken(user, c->seq))
            continue;
        size_t j = 0;
        while (j < *nout && (*out)[j].kernel != c->kernel)
            j++;
        if (j < *nout) {   /* another launch of a kernel seen: drop what it sets otherwise */
            opt_spec_cand *s = &(*out)[j];
            unsigned w = 0;
            for (unsigned k = 0; k < s->nconsts; k++) {
                const plan_const *q = &s->consts[k];
                const ana_karg *g = q->index < c->nargs ? &c->args[q->index] : NULL;
                uint64_t v = 0;
                memcpy(&v, q->value, q->size);
                if (g && g->kind == ANA_KARG_BYTES && g->size == q->size && g->value == v)
                    s->consts[w++] = *q;
            }
            s->nconsts = w;
            continue;
        }
        const char *why = NULL;
        const ana_kernel *k = ana_model_kernel(m, c->kernel, &why);
        if (!k || k->unsupported || !k->nloops)
            continue;
        uint8_t bound[32] = {0};
        for (unsigned l = 0; l < k->nloops; l++)
            if (!k->loops[l].bytes) {
                sp_args_of(&k->loops[l].start, bound);
                sp_args_of(&k->loops[l].end, bound);
                sp_args_of(&k->loops[l].step_expr, bound);
            }
        if (plan_grow((void **)out, &cap, *nout + 1, sizeof **out)) {
            free(*out);
            *out = NULL;
            *nout = 0;
            return PLAN_ERR_NOMEM;
        }
        opt_spec_cand *s = &(*out)[(*nout)++];
        memset(s, 0, sizeof *s);
        s->kernel = c->kernel;
        for (unsigned a = 0; a < k->nargs && a < c->nargs && s->nconsts < PLAN_SPEC_MAX_CONSTS; a++) {
            const ana_arg *g = &k->args[a];
            const ana_karg *v = &c->args[a];
            if (!sp_bit(bound, a) || g->kind != ANA_ARG_SCALAR || !sp_type_ok(g->type, g->elem_size) ||
                v->kind != ANA_KARG_BYTES || v->size != g->elem_size || v->size > 8)
                continue;
            plan_const *q = &s->consts[s->nconsts++];
            q->index = a;
            q->size = v->size;
            memcpy(q->value, &v->value, v->size);   /* little-endian: the first size bytes */
        }
    }
    /* keep those with a constant left, and say which loop each bounds */
    size_t w = 0;
    for (size_t i = 0; i < *nout; i++) {
        opt_spec_cand *s = &(*out)[i];
        if (!s->nconsts)
            continue;
        const char *why = NULL;
        const ana_kernel *k = ana_model_kernel(m, s->kernel, &why);
        size_t len = 0;
        for (unsigned q = 0; q < s->nconsts && k && len + 1 < sizeof s->why; q++) {
            const ana_loop *l = sp_loop_of(k, s->consts[q].index);
            const char *an = s->consts[q].index < k->nargs ? k->args[s->consts[q].index].name : "";
            uint64_t v = 0;
            memcpy(&v, s->consts[q].value, s->consts[q].size);
            int r = snprintf(s->why + len, sizeof s->why - len, "%s%s (argument %u) = 0x%llx bounds the loop over %s",
                             q ? "; " : "", an && *an ? an : "?", s->consts[q].index, (unsigned long long)v,
                             l && l->name && *l->name ? l->name : "a counter");
            if (r < 0)
                break;
            len += (size_t)r < sizeof s->why - len ? (size_t)r : sizeof s->why - len - 1;
        }
        (*out)[w++] = *s;
    }
    *nout = w;
    return PLAN_OK;
}
