/* live_rpl.c — the matcher as a replay session's plan hook
 * (replayer/rpl.h, rpl_plan_hook): the one adapter that `clrr replay
 * --plan`, `clrr optimize`'s verifying replays and `clrr plan verify`
 * hand to the replayer, so that the three replay a plan alike. */
#include "live/live.h"
#include "live/live_int.h"
#include "replayer/rpl.h"

#include <string.h>

static int live_rpl_item(void *user, const tf_item *it)
{
    int v = live_exec_item(user, it);
    return v < 0 ? v : v == LIVE_DROP ? RPL_PLAN_DROP : v == LIVE_HOLD ? RPL_PLAN_HOLD : v == LIVE_LINK ? RPL_PLAN_LINK
                     : v == LIVE_FUSE ? RPL_PLAN_FUSE : v == LIVE_SPLIT ? RPL_PLAN_SPLIT
                     : v == LIVE_LOCAL ? RPL_PLAN_LOCAL : RPL_PLAN_RUN;
}

/* The tuned local size of the last LIVE_LOCAL answer, for this device (plan 1.10). */
static int live_rpl_local(void *user, const char *device, const char *driver, size_t lsz[3])
{
    const plan_local *l = live_exec_local(user);
    const plan_tuned *t = plan_local_for(l, device, driver);
    if (!t)
        return 0;
    for (unsigned d = 0; d < 3; d++)
        lsz[d] = d < l->dim ? (size_t)t->local[d] : 1;
    return 1;
}

/* The coarsened kernel of the last LIVE_LOCAL answer, for this device
 * (plan 1.12). */
static int live_rpl_coarsen(void *user, const char *device, const char *driver, rpl_coarse *out)
{
    const live_exec *x = user;
    const plan_local *l = live_exec_local(x);
    const plan_tuned *t = plan_local_for(l, device, driver);
    const plan_coarse *c = t && t->coarsen ? plan_get_coarse(x->p, t->coarsen - 1) : NULL;
    if (!c)
        return 0;
    memset(out, 0, sizeof *out);
    out->id = PLAN_COARSE_ID_BASE + c->id;
    out->name = c->name;
    out->source = c->source;
    out->options = c->options;
    out->dim = c->dim;
    out->factor = c->factor;
    out->has_local = t->local[0] != 0;
    for (unsigned d = 0; d < 3; d++)
        out->local[d] = d < l->dim ? (size_t)t->local[d] : 1;
    return 1;
}

/* The plan's staging on this device (plan 1.13): its least bytes, 0 none. */
static uint64_t live_rpl_stage_min(void *user, const char *device, const char *driver)
{
    const live_exec *x = user;
    const plan_stage *s = plan_stage_for(x->p, device, driver);
    return s ? s->min_bytes : 0;
}

/* The split handed to the session (valid until the next one). */
static int live_rpl_split(void *user, rpl_split *out)
{
    return live_exec_split_rpl(user, out);
}

static int live_rpl_split_of(void *user, const uint8_t program[16], size_t i, rpl_split *out)
{
    return live_exec_split_of(user, program, i, out);
}

static int live_rpl_fused(void *user, rpl_fused_kernel *out)
{
    const plan_fused *f = live_exec_fused(user);
    if (!f)
        return -1;
    *out = (rpl_fused_kernel){f->id, f->name, f->source, f->options, f->nparams, f->params, f->launches};
    return 0;
}

static unsigned live_rpl_lanes(void *user, uint64_t queue)
{
    return live_exec_lanes(user, queue);
}

static void live_rpl_rewind(void *user)
{
    live_exec_rewind(user);
}

void live_exec_replay_hook(live_exec *x, struct rpl_plan_hook *out)
{
    *out = (rpl_plan_hook){x, live_rpl_item, live_rpl_rewind, live_rpl_fused, live_rpl_split, live_rpl_split_of,
                           live_rpl_lanes, live_rpl_local, live_rpl_coarsen, live_rpl_stage_min};
}
