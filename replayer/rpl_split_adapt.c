/* rpl_split_adapt.c — adaptive proportions (rpl.h, rpl_split_refine):
 * each split's proportions, refined launch by launch from each part's
 * measured time; the parts' regions at any proportions, from the plan's
 * models. */
#include "replayer/rpl_split_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

rpl_split_adapt *rpl_split_adapt_of(rpl_splitter *x, const rpl_split *sp)
{
    for (size_t i = 0; i < x->nadapt; i++)
        if (x->adapt[i].id == sp->id)
            return &x->adapt[i];
    rpl_split_adapt *a = realloc(x->adapt, (x->nadapt + 1) * sizeof *a);
    if (!a)
        return NULL;
    x->adapt = a;
    a = &x->adapt[x->nadapt++];
    memset(a, 0, sizeof *a);
    a->id = sp->id;
    a->nparts = sp->nparts;
    for (unsigned p = 0; p < sp->nparts; p++)
        a->bound[p] = sp->parts[p].lo;
    a->bound[sp->nparts] = sp->groups;
    return a;
}

static uint64_t rpl_model_at(int64_t c, int64_t k, uint64_t g, uint64_t size)
{
    int64_t v = c + k * (int64_t)g;
    return v < 0 ? 0 : (uint64_t)v > size ? size : (uint64_t)v;
}

/* The regions of the parts [bound[p], bound[p+1]) from the split's models
 * (@p sizes: each argument's buffer size) into @p rg (nparts x nargs). */
void rpl_split_regions(const rpl_split *sp, const uint64_t *bound, const uint64_t *sizes,
                              rpl_split_region *rg)
{
    for (unsigned p = 0; p < sp->nparts; p++)
        for (unsigned a = 0; a < sp->nargs; a++) {
            rpl_split_region *r = &rg[(size_t)p * sp->nargs + a];
            const rpl_split_model *m = &sp->models[a];
            memset(r, 0, sizeof *r);
            if (sp->args[a] != RPL_SPLIT_ARG_MEM)
                continue;
            if (m->read) {
                r->rlo = rpl_model_at(m->r[0], m->r[1], bound[p], sizes[a]);
                r->rhi = rpl_model_at(m->r[2], m->r[3], bound[p + 1], sizes[a]);
                r->read = r->rlo < r->rhi;
            }
            if (m->write) {
                r->wlo = rpl_model_at(m->w[0], m->w[1], bound[p], sizes[a]);
                r->whi = rpl_model_at(m->w[2], m->w[3], bound[p + 1], sizes[a]);
                r->write = r->wlo < r->whi;
            }
        }
}

/* The next proportions from each part's measured time @p ns, unchanged
 * while the parts took within 5% of each other (the refinement would
 * chase launch-to-launch noise).
 *
 * Huchant et al.'s fixed point (RPL_SPLIT_FIXED_POINT): each part's share
 * in proportion to the rate (work-groups per ns) it ran at.
 *
 * Broyden (RPL_SPLIT_BROYDEN): Newton's method on "every part takes the
 * same time", the sum of the shares fixed, with the Jacobian learned from
 * the measurements. A part's time depends only on its own share, so the
 * Jacobian is diagonal and Broyden's update is, per part, the secant
 * through its last two measurements (dT/dn); where it has none (the first
 * refinement, an unchanged share, a secant not within 4x of T/n: the load
 * moved, a drifting window's, rather than the share's cost) the slope is
 * T/n, which makes the step the fixed point's. The secant sees what
 * the rate does not: time that does not grow with the share (a launch's
 * latency, transfers' fixed costs, a load that sits in one place).
 *
 * Each part keeps at least one work-group. */
void rpl_split_refine(uint64_t *bound, unsigned nparts, uint64_t groups, const double *ns, int method,
                      rpl_split_history *h)
{
    uint64_t n[RPL_SPLIT_MAX_PARTS];
    double fast = ns[0], slow = ns[0];
    if (nparts < 2 || nparts > RPL_SPLIT_MAX_PARTS)
        return;
    for (unsigned p = 0; p < nparts; p++) {
        n[p] = bound[p + 1] - bound[p];
        fast = ns[p] < fast ? ns[p] : fast;
        slow = ns[p] > slow ? ns[p] : slow;
    }
    int prev = h->have;
    double pns[RPL_SPLIT_MAX_PARTS];
    uint64_t pn[RPL_SPLIT_MAX_PARTS];
    memcpy(pns, h->ns, sizeof pns);
    memcpy(pn, h->n, sizeof pn);
    for (unsigned p = 0; p < nparts; p++) {
        h->n[p] = n[p];
        h->ns[p] = ns[p];
    }
    h->have = 1;
    if (fast > 0 && slow <= fast * RPL_SPLIT_SETTLED)
        return;
    double want[RPL_SPLIT_MAX_PARTS];   /* each part's next share, not yet whole */
    if (method == RPL_SPLIT_BROYDEN) {
        double slope[RPL_SPLIT_MAX_PARTS], num = 0, den = 0;
        for (unsigned p = 0; p < nparts; p++) {
            double t = ns[p] > 1 ? ns[p] : 1, dn = (double)n[p] - (double)(prev ? pn[p] : n[p]);
            slope[p] = t / (double)n[p];
            if (prev && dn != 0) {
                /* a secant far from the rate says the load moved rather
                 * than what the share costs: the rate's slope stays */
                double sec = (ns[p] - pns[p]) / dn;
                if (sec > slope[p] / 4 && sec < slope[p] * 4)
                    slope[p] = sec;
            }
            num += t / slope[p];
            den += 1 / slope[p];
        }
        double level = num / den;   /* the time every part would take */
        for (unsigned p = 0; p < nparts; p++) {
            want[p] = (double)n[p] + (level - (ns[p] > 1 ? ns[p] : 1)) / slope[p];
            if (want[p] < 1)
                want[p] = 1;
        }
    } else {
        for (unsigned p = 0; p < nparts; p++)
            want[p] = (double)n[p] / (ns[p] > 1 ? ns[p] : 1);
    }
    double total = 0;
    for (unsigned p = 0; p < nparts; p++)
        total += want[p];
    uint64_t at = 0;
    for (unsigned p = 0; p < nparts; p++) {
        uint64_t left = groups - at, rest = nparts - p - 1;
        uint64_t k = p + 1 == nparts ? left : (uint64_t)((double)groups * want[p] / total + 0.5);
        if (k < 1)
            k = 1;
        if (k > left - rest)
            k = left - rest;
        bound[p] = at;
        at += k;
    }
    bound[nparts] = groups;
}
