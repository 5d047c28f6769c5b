/* model/model_feat.c — the features of a launch: what is stored in the
 * cost database's `f` records and the vector the trees see (the stored
 * ones, by name, plus derived ratios and totals). */
#include "model/model.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* stored (MODEL_NSTORED), then derived; the order is the trees' */
static const char *const model_names[MODEL_NFEAT] = {
    "dim", "work_items", "work_groups", "local_items",
    "int_ops", "float_ops", "loads", "stores", "global_loads", "global_stores", "local_loads", "local_stores",
    "branches", "barriers", "atomics", "calls", "loops",
    "stride_invariant", "stride_unit", "stride_strided", "stride_unknown",
    "dyn_ops", "dyn_loads", "dyn_stores", "loops_known", "max_trip",
    "bytes_in", "bytes_out",
    /* derived */
    "total_ops", "total_mem", "intensity", "bytes_per_item", "float_frac",
};

const char *model_feature_name(unsigned i)
{
    return i < MODEL_NFEAT ? model_names[i] : NULL;
}

int model_features_format(const ana_features *f, unsigned dim, const uint64_t lsz[3], const model_launch_bytes *bytes,
                          char *buf, size_t cap)
{
    double v[MODEL_NSTORED];
    const ana_static_features *s = &f->stat;
    uint64_t li = 0;
    if (lsz && lsz[0]) {
        li = 1;
        for (unsigned d = 0; d < dim && d < 3; d++)
            li *= lsz[d];
    }
    unsigned i = 0;
    v[i++] = dim;
    v[i++] = (double)f->work_items;
    v[i++] = (double)f->work_groups;
    v[i++] = (double)li;
    v[i++] = s->int_ops;
    v[i++] = s->float_ops;
    v[i++] = s->loads;
    v[i++] = s->stores;
    v[i++] = s->global_loads;
    v[i++] = s->global_stores;
    v[i++] = s->local_loads;
    v[i++] = s->local_stores;
    v[i++] = s->branches;
    v[i++] = s->barriers;
    v[i++] = s->atomics;
    v[i++] = s->calls;
    v[i++] = s->loops;
    for (unsigned c = 0; c < ANA_STRIDE_COUNT; c++)
        v[i++] = f->accesses_by_stride[c];
    v[i++] = f->dyn_ops;
    v[i++] = f->dyn_loads;
    v[i++] = f->dyn_stores;
    v[i++] = f->loops_known;
    v[i++] = (double)f->max_trip_count;
    v[i++] = bytes ? (double)bytes->in : 0;
    v[i++] = bytes ? (double)bytes->out : 0;
    size_t n = 0;
    for (i = 0; i < MODEL_NSTORED; i++) {
        double x = isfinite(v[i]) ? v[i] : 0;
        int w = snprintf(buf + n, n < cap ? cap - n : 0, "%s%s=%.6g", i ? "," : "", model_names[i], x);
        if (w < 0 || (size_t)w >= (n < cap ? cap - n : 0))
            return -1;
        n += (size_t)w;
    }
    return 0;
}

int model_features_parse(const char *vec, float x[MODEL_NFEAT])
{
    for (unsigned i = 0; i < MODEL_NFEAT; i++)
        x[i] = NAN;
    if (!vec || !*vec)
        return -1;
    for (const char *p = vec; *p;) {
        const char *eq = strchr(p, '=');
        if (!eq)
            return -1;
        char *end;
        double v = strtod(eq + 1, &end);
        if (end == eq + 1 || (*end && *end != ','))
            return -1;
        for (unsigned i = 0; i < MODEL_NSTORED; i++)
            if (strlen(model_names[i]) == (size_t)(eq - p) && !memcmp(model_names[i], p, (size_t)(eq - p)))
                x[i] = (float)v;
        p = *end ? end + 1 : end;
    }
    /* derived: what the trees could not form from the stored ones alone */
    double wi = x[1], ops = x[21], lds = x[22], sts = x[23], io = (double)x[26] + x[27];
    double iops = x[4], fops = x[5];
    unsigned i = MODEL_NSTORED;
    x[i++] = (float)(ops * wi);
    x[i++] = (float)((lds + sts) * wi);
    x[i++] = (float)(ops / (lds + sts + 1.0));
    x[i++] = (float)(wi > 0 ? io / wi : NAN);
    x[i++] = (float)(iops + fops > 0 ? fops / (iops + fops) : 0);
    return 0;
}
