/* model/model_data.c — samples from the cost database: per launch shape
 * with a features record, its full-size time on every device of the
 * machine's snapshot (the curve at the launch's own number of
 * work-groups), and the fastest of them as the label. */
#include "model/model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* the shape part of a key, for comparing (sizes beyond dim normalized as the database does) */
static int model_key_eq(const cdb_key *a, const cdb_key *b)
{
    return a->dim == b->dim && !memcmp(a->program, b->program, 16) && !strcmp(a->kernel, b->kernel) &&
           !memcmp(a->gsz, b->gsz, sizeof a->gsz) && !memcmp(a->lsz, b->lsz, sizeof a->lsz);
}

/* work-groups of the whole launch (work-items when the driver chose the local size) */
static uint64_t model_full_groups(const cdb_key *k)
{
    uint64_t g = 1;
    for (unsigned d = 0; d < k->dim && d < 3; d++)
        g *= k->lsz[0] ? (k->gsz[d] + k->lsz[d] - 1) / (k->lsz[d] ? k->lsz[d] : 1) : k->gsz[d];
    return g;
}

/* FNV-1a over the program hash and the kernel name: the sample's group */
static uint64_t model_group_of(const cdb_key *k)
{
    uint64_t h = 1469598103934665603ull;
    for (unsigned i = 0; i < 16; i++)
        h = (h ^ k->program[i]) * 1099511628211ull;
    for (const char *p = k->kernel; *p; p++)
        h = (h ^ (unsigned char)*p) * 1099511628211ull;
    return h;
}

void model_data_free(model_data *d)
{
    if (!d)
        return;
    for (unsigned i = 0; i < d->ndevs; i++) {
        free(d->devs[i]);
        free(d->specs[i]);
    }
    for (size_t i = 0; i < d->n; i++)
        free((char *)d->s[i].key.kernel);
    free(d->s);
    free(d);
}

/* the snapshot's devices that have kernel samples, with their specs */
static model_status model_data_devices(cdb *db, model_data *d, char *err, size_t cap)
{
    unsigned nd = cdb_device_count(db), nt[8] = {0};
    static const char *const types[] = { "cpu", "gpu", "accelerator", "custom" };
    if (!nd) {
        snprintf(err, cap, "no device snapshot in %s (run clrr profile on the machine)", cdb_path(db));
        return MODEL_ERR_DATA;
    }
    size_t ns = cdb_kernel_series_count(db);
    for (unsigned i = 0; i < nd; i++) {
        const cdb_device *dv = cdb_device_at(db, i);
        unsigned t = 4;
        for (unsigned j = 0; j < 4; j++)
            if (!strcmp(dv->type, types[j]))
                t = j;
        char spec[64];
        if (t < 4)
            snprintf(spec, sizeof spec, "%s%u", types[t], nt[t]++);
        else
            snprintf(spec, sizeof spec, "%u", i);
        int has = 0;
        for (size_t s = 0; s < ns && !has; s++) {
            const char *id;
            cdb_key k;
            has = cdb_kernel_series_at(db, s, &id, &k) && !strcmp(id, dv->identity);
        }
        if (!has)
            continue;
        if (d->ndevs == MODEL_MAX_DEVICES) {
            snprintf(err, cap, "more than %d devices with samples in %s", MODEL_MAX_DEVICES, cdb_path(db));
            return MODEL_ERR_DATA;
        }
        d->devs[d->ndevs] = strdup(dv->identity);
        d->specs[d->ndevs] = strdup(spec);
        if (!d->devs[d->ndevs] || !d->specs[d->ndevs++])
            return MODEL_ERR_NOMEM;
    }
    return MODEL_OK;
}

model_status model_data_from_cdb(cdb *db, model_data **out, char *err, size_t cap)
{
    *out = NULL;
    model_data *d = calloc(1, sizeof *d);
    if (!d)
        return MODEL_ERR_NOMEM;
    model_status st = model_data_devices(db, d, err, cap);
    size_t ns = cdb_kernel_series_count(db), cap_s = 0;
    uint64_t *groups = NULL;
    size_t ngroups = 0;
    cdb_key *done = NULL;     /* every shape looked at (a shape has one series per device) */
    size_t ndone = 0;
    for (size_t s = 0; s < ns && st == MODEL_OK; s++) {
        const char *id;
        cdb_key k;
        if (!cdb_kernel_series_at(db, s, &id, &k))
            continue;
        int seen = 0;
        for (size_t j = 0; j < ndone && !seen; j++)
            seen = model_key_eq(&done[j], &k);
        if (seen)
            continue;
        cdb_key *dk = realloc(done, (ndone + 1) * sizeof *dk);
        if (!dk) {
            st = MODEL_ERR_NOMEM;
            break;
        }
        done = dk;
        done[ndone++] = k;   /* its kernel name is the database's, valid while it is open */
        /* every device's full-size time; one missing: not a sample */
        model_sample smp;
        memset(&smp, 0, sizeof smp);
        uint64_t full = model_full_groups(&k);
        unsigned have = 0;
        for (unsigned i = 0; i < d->ndevs; i++) {
            cdb_curve c;
            if (cdb_kernel_curve(db, d->devs[i], &k, &c) && c.n) {
                smp.ns[i] = cdb_curve_at(&c, (double)full);
                have += smp.ns[i] > 0;
            }
        }
        const char *vec = cdb_get_features(db, &k);
        if (have < d->ndevs || !d->ndevs) {
            d->partial += vec != NULL;
            continue;
        }
        if (!vec || model_features_parse(vec, smp.x) < 0) {
            d->no_features++;
            continue;
        }
        smp.key = k;
        smp.group = model_group_of(&k);
        for (unsigned i = 1; i < d->ndevs; i++)
            if (smp.ns[i] < smp.ns[smp.best])
                smp.best = i;
        if (d->n == cap_s) {
            size_t c2 = cap_s ? cap_s * 2 : 64;
            model_sample *a = realloc(d->s, c2 * sizeof *a);
            if (!a) {
                st = MODEL_ERR_NOMEM;
                break;
            }
            d->s = a;
            cap_s = c2;
        }
        if (!(smp.key.kernel = strdup(k.kernel))) {
            st = MODEL_ERR_NOMEM;
            break;
        }
        d->s[d->n++] = smp;
        int gseen = 0;
        for (size_t j = 0; j < ngroups && !gseen; j++)
            gseen = groups[j] == smp.group;
        if (!gseen) {
            uint64_t *g = realloc(groups, (ngroups + 1) * sizeof *g);
            if (!g) {
                st = MODEL_ERR_NOMEM;
                break;
            }
            groups = g;
            groups[ngroups++] = smp.group;
        }
    }
    free(groups);
    free(done);
    d->ngroups = ngroups;
    if (st != MODEL_OK) {
        if (st == MODEL_ERR_NOMEM)
            snprintf(err, cap, "out of memory");
        model_data_free(d);
        return st;
    }
    *out = d;
    return MODEL_OK;
}
