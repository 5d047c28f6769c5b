/* opt_split_cost.c — the split pass's proportions from measured costs
 * (costs/cdb.h, filled by `clrr profile` and by split replays): per device,
 * the launch's kernel curve and its transfer latency and bandwidth; per
 * slice (work-group along the split dimension), the bytes a part reads and
 * writes, from the kernel analysis. The partitioner (opt_part.c) then
 * picks the devices and their shares, or decides that no split pays.
 *
 * A part on another device than the queue's is read from the queue's
 * device (its d2h), sent (its own h2d), run, read back (its d2h) and
 * written into the application's buffer (the queue's device's h2d), one
 * transfer per buffer each way; a diff merge also compares its bytes on
 * the host. The queue's own part runs in place, after reading the bytes
 * the others are sent. Inputs are counted as sent at every launch (the
 * replay does not resend bytes a device still holds: the prediction errs
 * on the side of not splitting, and adaptive runs correct the shares). */
#include "optimizer/opt_int.h"

#include "analyzer/ana.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

/* what launching a part on another device costs beyond its transfers
 * (own queue, events, the merge's bookkeeping) */
#define OPT_PART_OVERHEAD_NS 20000.0
/* comparing bytes with their previous contents on the host (diff merge) */
#define OPT_DIFF_NS_PER_BYTE 0.5
/* a split (or another device) must be predicted this much faster than the
 * queue's device alone: measurements vary by a few percent */
#define OPT_PART_MARGIN 0.05

static uint64_t opt_span(uint64_t alo, uint64_t ahi, uint64_t blo, uint64_t bhi)
{
    if (alo >= ahi)
        return blo < bhi ? bhi - blo : 0;
    if (blo >= bhi)
        return ahi - alo;
    if (alo < bhi && blo < ahi)   /* overlapping: their hull */
        return (ahi > bhi ? ahi : bhi) - (alo < blo ? alo : blo);
    return (ahi - alo) + (bhi - blo);
}

/* Bytes sent to (in) and back from (out) a part of slices [0, n), and how
 * many buffers move each way; diff: bytes back that are merged by diff. */
static int opt_cost_bytes(const opt_cost_launch *in, uint64_t n, double *bin, double *bout, double *bdiff,
                          unsigned *nin, unsigned *nout)
{
    uint64_t glo[3] = {0, 0, 0}, ghi[3] = {in->g[0], in->g[1], in->g[2]};
    ghi[in->dim] = n;
    *bin = *bout = *bdiff = 0;
    *nin = *nout = 0;
    for (unsigned a = 0; a < in->k->nargs; a++) {
        if (in->args[a] != PLAN_SPLIT_ARG_MEM)
            continue;
        ana_region rd, wr;
        if (ana_kernel_region(in->k, in->l, a, glo, ghi, &rd, &wr) != ANA_OK)
            return -1;
        uint64_t size = in->sizes[a];
        uint64_t rlo = 0, rhi = 0, wlo = 0, whi = 0;
        if (!rd.empty) {
            rlo = rd.whole ? 0 : rd.lo;
            rhi = rd.whole ? size : rd.hi > size ? size : rd.hi;
        }
        if (!wr.empty) {
            wlo = wr.whole ? 0 : wr.lo;
            whi = wr.whole ? size : wr.hi > size ? size : wr.hi;
        }
        uint64_t s = opt_span(rlo, rhi, wlo, whi);
        if (s) {
            *bin += (double)s;
            (*nin)++;
        }
        if (wlo < whi) {
            *bout += (double)(whi - wlo);
            (*nout)++;
            if (in->diff)
                *bdiff += (double)(whi - wlo);
        }
    }
    return 0;
}

typedef struct opt_xf {
    double lat[2], nspb[2];   /* CDB_H2D, CDB_D2H */
} opt_xf;

static int opt_xf_of(cdb *db, const char *id, opt_xf *x)
{
    return cdb_xfer(db, id, CDB_H2D, &x->lat[CDB_H2D], &x->nspb[CDB_H2D]) &&
           cdb_xfer(db, id, CDB_D2H, &x->lat[CDB_D2H], &x->nspb[CDB_D2H]);
}

int opt_split_cost(const opt_cost_launch *in, uint64_t *count, opt_partition_info *info, char *why, size_t cap)
{
    char err[256];
    int pidx = cdb_resolve(in->db, in->primary, err, sizeof err);
    if (pidx < 0) {
        snprintf(why, cap, "costs: %s", err);
        return 0;
    }
    const char *pid = cdb_device_at(in->db, (unsigned)pidx)->identity;
    opt_xf pxf;
    int have_pxf = opt_xf_of(in->db, pid, &pxf);
    /* the curves are copied: the database's may move on the next query */
    static uint64_t cg[PLAN_SPLIT_MAX_PARTS][64];
    static double cn[PLAN_SPLIT_MAX_PARTS][64];
    static unsigned cs[PLAN_SPLIT_MAX_PARTS][64];
    cdb_curve curves[PLAN_SPLIT_MAX_PARTS];
    opt_part_dev devs[PLAN_SPLIT_MAX_PARTS];
    memset(devs, 0, sizeof devs);
    uint64_t slices = in->g[in->dim], half = slices > 1 ? slices / 2 : slices;
    double per_slice = 1;
    for (unsigned d = 0; d < 3; d++)
        if (d != in->dim)
            per_slice *= (double)in->g[d];
    double in_all, out_all, diff_all, in_half, out_half, diff_half;
    unsigned nin, nout;
    if (opt_cost_bytes(in, slices, &in_all, &out_all, &diff_all, &nin, &nout) < 0 ||
        opt_cost_bytes(in, half, &in_half, &out_half, &diff_half, &nin, &nout) < 0) {
        snprintf(why, cap, "the analysis gives no region for an argument");
        return 0;
    }
    /* bytes as a + b * slices */
    double span = slices > half ? (double)(slices - half) : 1;
    double b_in = slices > half ? (in_all - in_half) / span : 0, b_out = slices > half ? (out_all - out_half) / span : 0,
           b_diff = slices > half ? (diff_all - diff_half) / span : 0;
    b_in = b_in < 0 ? 0 : b_in;
    b_out = b_out < 0 ? 0 : b_out;
    b_diff = b_diff < 0 ? 0 : b_diff;
    double a_in = fmax(0, in_all - b_in * (double)slices), a_out = fmax(0, out_all - b_out * (double)slices),
           a_diff = fmax(0, diff_all - b_diff * (double)slices);
    int primary_in = 0;
    for (unsigned i = 0; i < in->ndevs; i++) {
        opt_part_dev *d = &devs[i];
        int idx = cdb_resolve(in->db, in->specs[i], err, sizeof err);
        if (idx < 0) {
            snprintf(why, cap, "costs: %s", err);
            return 0;
        }
        const char *id = cdb_device_at(in->db, (unsigned)idx)->identity;
        cdb_curve c;
        if (!cdb_kernel_curve(in->db, id, &in->key, &c)) {
            if (idx == pidx) {
                snprintf(why, cap, "no costs for this launch on %.64s (run clrr profile)", in->specs[i]);
                return 0;
            }
            continue;   /* not measured there: not used */
        }
        unsigned np = c.n < 64 ? c.n : 64;
        memcpy(cg[i], c.groups, np * sizeof cg[i][0]);
        memcpy(cn[i], c.ns, np * sizeof cn[i][0]);
        memcpy(cs[i], c.samples, np * sizeof cs[i][0]);
        curves[i] = (cdb_curve){np, cg[i], cn[i], cs[i]};
        d->curve = &curves[i];
        d->per_slice = per_slice;
        if (idx == pidx) {
            if (primary_in) {   /* the queue's device named twice: once is enough */
                d->curve = NULL;
                continue;
            }
            d->primary = primary_in = 1;
            d->usable = 1;
            continue;
        }
        opt_xf x;
        if (!have_pxf || !opt_xf_of(in->db, id, &x))
            continue;   /* its transfers (or the queue's device's) were not measured */
        double in_ns = pxf.nspb[CDB_D2H] + x.nspb[CDB_H2D], out_ns = x.nspb[CDB_D2H] + pxf.nspb[CDB_H2D];
        d->fixed_ns = OPT_PART_OVERHEAD_NS + nin * (pxf.lat[CDB_D2H] + x.lat[CDB_H2D]) +
                      nout * (x.lat[CDB_D2H] + pxf.lat[CDB_H2D]) + a_in * in_ns + a_out * out_ns +
                      a_diff * OPT_DIFF_NS_PER_BYTE;
        d->slice_ns = b_in * in_ns + b_out * out_ns + b_diff * OPT_DIFF_NS_PER_BYTE;
        d->feed_fixed_ns = nin * pxf.lat[CDB_D2H] + a_in * pxf.nspb[CDB_D2H];
        d->feed_slice_ns = b_in * pxf.nspb[CDB_D2H];
        d->usable = 1;
    }
    if (!primary_in) {
        snprintf(why, cap, "the queue's device %.64s is not among the split's devices", in->primary);
        return 0;
    }
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    double t = opt_partition(devs, in->ndevs, slices, count);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    memset(info, 0, sizeof *info);
    info->solve_ns = (double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec);
    info->predicted_ns = t;
    info->slices = slices;
    info->best_single_ns = INFINITY;
    for (unsigned i = 0; i < in->ndevs; i++) {
        if (!devs[i].usable)
            continue;
        double ti = opt_part_time(&devs[i], slices);
        if (devs[i].primary)
            info->alone_ns = ti;
        if (ti < info->best_single_ns) {
            info->best_single_ns = ti;
            info->best_single = i;
        }
    }
    unsigned used = 0, only = 0;
    for (unsigned i = 0; i < in->ndevs; i++)
        if (count[i]) {
            used++;
            only = i;
        }
    /* not worth it: the queue's device alone runs the launch whole */
    if (!isfinite(t) || !used || (used == 1 && devs[only].primary) ||
        t > info->alone_ns * (1 - OPT_PART_MARGIN)) {
        memset(count, 0, in->ndevs * sizeof *count);
        for (unsigned i = 0; i < in->ndevs; i++)
            if (devs[i].primary)
                count[i] = slices;
        info->verdict = "whole";
        info->predicted_ns = info->alone_ns;
        return 1;
    }
    info->verdict = used == 1 ? "device" : "split";
    return 1;
}
