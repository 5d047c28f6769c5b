/* model/model_eval.c — k-fold cross-validation grouped by kernel: the
 * kernels are dealt to folds in the order of their hash (a fixed shuffle),
 * each fold predicted by a model trained on the others; accuracy against
 * the oracle (the measured fastest device), the baseline of always taking
 * the device fastest most often in the training folds, and the time lost
 * when the choice is wrong. */
#include "model/model.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int model_u64_cmp(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

model_status model_cross_validate(const model_data *d, unsigned k, const model_params *p, model_eval *out,
                                  unsigned *fold_of, unsigned *pick, char *err, size_t cap)
{
    memset(out, 0, sizeof *out);
    if (k < 2) {
        snprintf(err, cap, "cross-validation needs at least 2 folds");
        return MODEL_ERR_ARG;
    }
    if (d->ndevs < 2 || d->ngroups < 2) {
        snprintf(err, cap, "%s", d->ndevs < 2 ? "fewer than 2 devices have samples: nothing to choose"
                                              : "fewer than 2 kernels have samples: nothing to hold out");
        return MODEL_ERR_DATA;
    }
    model_status st = MODEL_OK;
    uint64_t *g = malloc(d->n * sizeof *g);
    unsigned *fold = malloc(d->n * sizeof *fold);
    size_t *tr = malloc(d->n * sizeof *tr);
    if (!g || !fold || !tr) {
        st = MODEL_ERR_NOMEM;
        snprintf(err, cap, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < d->n; i++)
        g[i] = d->s[i].group;
    qsort(g, d->n, sizeof *g, model_u64_cmp);
    size_t ng = 0;
    for (size_t i = 0; i < d->n; i++)
        if (!ng || g[ng - 1] != g[i])
            g[ng++] = g[i];
    out->folds = k < ng ? k : (unsigned)ng;
    out->n = d->n;
    out->ngroups = ng;
    for (size_t i = 0; i < d->n; i++) {
        uint64_t *at = bsearch(&d->s[i].group, g, ng, sizeof *g, model_u64_cmp);
        fold[i] = (unsigned)((size_t)(at - g) % out->folds);
    }
    double lsum = 0, lwrong = 0, lbase = 0;
    size_t nwrong = 0;
    out->max_ratio = 1;
    for (unsigned f = 0; f < out->folds; f++) {
        size_t nt = 0;
        unsigned wins[MODEL_MAX_DEVICES] = {0};
        for (size_t i = 0; i < d->n; i++)
            if (fold[i] != f) {
                tr[nt++] = i;
                wins[d->s[i].best]++;
            }
        unsigned base = 0;
        for (unsigned j = 1; j < d->ndevs; j++)
            if (wins[j] > wins[base])
                base = j;
        model *m = NULL;
        if ((st = model_train(d, tr, nt, p, &m, err, cap)) != MODEL_OK)
            goto out;
        for (size_t i = 0; i < d->n; i++) {
            if (fold[i] != f)
                continue;
            const model_sample *s = &d->s[i];
            unsigned c = 0;
            if ((st = model_predict(m, s->x, &c, NULL)) != MODEL_OK) {
                snprintf(err, cap, "xgboost: prediction failed");
                model_free(m);
                goto out;
            }
            double best = s->ns[s->best], r = s->ns[c] / best, rb = s->ns[base] / best;
            out->correct += c == s->best;
            out->baseline_correct += base == s->best;
            out->best_ns += best;
            out->chosen_ns += s->ns[c];
            out->baseline_ns += s->ns[base];
            lsum += log(r);
            lbase += log(rb);
            if (c != s->best) {
                lwrong += log(r);
                nwrong++;
            }
            if (r > out->max_ratio)
                out->max_ratio = r;
            if (fold_of)
                fold_of[i] = f;
            if (pick)
                pick[i] = c;
        }
        model_free(m);
    }
    out->geomean_ratio = exp(lsum / (double)d->n);
    out->baseline_geomean_ratio = exp(lbase / (double)d->n);
    out->geomean_ratio_wrong = nwrong ? exp(lwrong / (double)nwrong) : 1;
out:
    free(g);
    free(fold);
    free(tr);
    return st;
}
