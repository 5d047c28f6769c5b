/* model/model_xgb.c — the classifier, through XGBoost's C API: training
 * (multi:softprob over the devices, gradient-boosted trees or the
 * random-forest mode), prediction, and the model file (XGBoost's JSON with
 * clrr_* attributes for the classes and the feature names).
 *
 * libxgboost is loaded on first use (dlopen), not linked: clrr runs on
 * machines without it (the GPU machine), where only `clrr model` fails,
 * with one line saying so. */
#include "model/model.h"

#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xgboost/c_api.h>

/* the functions of XGBoost's C API used here, resolved by name */
#define MODEL_XGB_FNS(X)                                                                               \
    X(XGBGetLastError) X(XGBSetGlobalConfig) X(XGDMatrixCreateFromMat) X(XGDMatrixSetFloatInfo)        \
    X(XGDMatrixFree) X(XGBoosterCreate) X(XGBoosterFree) X(XGBoosterSetParam) X(XGBoosterUpdateOneIter) \
    X(XGBoosterPredict) X(XGBoosterSaveModel) X(XGBoosterLoadModel) X(XGBoosterSetAttr) X(XGBoosterGetAttr)
static struct {
#define MODEL_XGB_FIELD(f) __typeof__(&f) f;
    MODEL_XGB_FNS(MODEL_XGB_FIELD)
#undef MODEL_XGB_FIELD
} xgb;

/* Loads libxgboost once. @return 0, or -1 with why in @p err. */
static int model_xgb_load(char *err, size_t cap)
{
    static int state;   /* 0 not tried, 1 loaded, -1 failed */
    static char why[256];
    if (state == 0) {
        const char *env = getenv("CLRR_XGBOOST");
        const char *names[] = { env && *env ? env : "libxgboost.so.0", "libxgboost.so" };
        void *h = NULL;
        for (unsigned i = 0; i < 2 && !h; i++)
            h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
        state = h ? 1 : -1;
        if (!h)
            snprintf(why, sizeof why, "libxgboost cannot be loaded (install libxgboost-dev, or set CLRR_XGBOOST): %s",
                     dlerror());
#define MODEL_XGB_SYM(f)                                                                               \
        if (state == 1 && !(*(void **)&xgb.f = dlsym(h, #f))) {                                        \
            snprintf(why, sizeof why, "libxgboost has no %s", #f);                                     \
            state = -1;                                                                                \
        }
        MODEL_XGB_FNS(MODEL_XGB_SYM)
#undef MODEL_XGB_SYM
        if (state == 1)
            xgb.XGBSetGlobalConfig("{\"verbosity\": 0}");
    }
    if (state < 0) {
        snprintf(err, cap, "%s", why);
        return -1;
    }
    return 0;
}

struct model {
    BoosterHandle b;
    unsigned ndevs;
    char *devs[MODEL_MAX_DEVICES];
};

/* XGBoost's last error into err; MODEL_ERR_LIB */
#define MODEL_XGB(call, err, cap, label)                                                               \
    do {                                                                                               \
        if ((call) != 0) {                                                                             \
            snprintf(err, cap, "xgboost: %s", xgb.XGBGetLastError());                                      \
            st = MODEL_ERR_LIB;                                                                        \
            goto label;                                                                                \
        }                                                                                              \
    } while (0)

const char *model_strerror(model_status s)
{
    switch (s) {
    case MODEL_OK: return "ok";
    case MODEL_ERR_IO: return "cannot read or write the file";
    case MODEL_ERR_FORMAT: return "not a clrr model file";
    case MODEL_ERR_NOMEM: return "out of memory";
    case MODEL_ERR_ARG: return "bad argument";
    case MODEL_ERR_DATA: return "not enough samples";
    case MODEL_ERR_LIB: return "xgboost failed";
    }
    return "unknown error";
}

void model_free(model *m)
{
    if (!m)
        return;
    if (m->b)
        xgb.XGBoosterFree(m->b);
    for (unsigned i = 0; i < m->ndevs; i++)
        free(m->devs[i]);
    free(m);
}

unsigned model_device_count(const model *m)
{
    return m ? m->ndevs : 0;
}

const char *model_device(const model *m, unsigned i)
{
    return m && i < m->ndevs ? m->devs[i] : NULL;
}

model_status model_train(const model_data *d, const size_t *idx, size_t n, const model_params *p, model **out,
                         char *err, size_t cap)
{
    model_status st = MODEL_OK;
    model_params dp = {0, 0, 0};
    *out = NULL;
    if (!p)
        p = &dp;
    if (!idx)
        n = d->n;
    if (!n || d->ndevs < 2) {
        snprintf(err, cap, "%s", !n ? "no sample to train on (run clrr profile on traces first)"
                                    : "fewer than 2 devices have samples: nothing to choose");
        return MODEL_ERR_DATA;
    }
    if (model_xgb_load(err, cap) < 0)
        return MODEL_ERR_LIB;
    float *x = malloc(n * MODEL_NFEAT * sizeof *x), *y = malloc(n * sizeof *y), *w = malloc(n * sizeof *w);
    model *m = calloc(1, sizeof *m);
    DMatrixHandle dm = NULL;
    if (!x || !y || !w || !m) {
        st = MODEL_ERR_NOMEM;
        snprintf(err, cap, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        const model_sample *s = &d->s[idx ? idx[i] : i];
        memcpy(x + i * MODEL_NFEAT, s->x, sizeof s->x);
        y[i] = (float)s->best;
        double lo = s->ns[0], hi = s->ns[0];
        for (unsigned j = 1; j < d->ndevs; j++) {
            lo = s->ns[j] < lo ? s->ns[j] : lo;
            hi = s->ns[j] > hi ? s->ns[j] : hi;
        }
        w[i] = (float)(1.0 + log2(hi / lo));
    }
    MODEL_XGB(xgb.XGDMatrixCreateFromMat(x, n, MODEL_NFEAT, NAN, &dm), err, cap, out);
    MODEL_XGB(xgb.XGDMatrixSetFloatInfo(dm, "label", y, n), err, cap, out);
    MODEL_XGB(xgb.XGDMatrixSetFloatInfo(dm, "weight", w, n), err, cap, out);
    MODEL_XGB(xgb.XGBoosterCreate(&dm, 1, &m->b), err, cap, out);
    char num[32];
    snprintf(num, sizeof num, "%u", d->ndevs);
    unsigned rounds = p->rounds ? p->rounds : p->forest ? 100 : 60;
    unsigned depth = p->depth ? p->depth : p->forest ? 6 : 4;
    char dep[32], trees[32];
    snprintf(dep, sizeof dep, "%u", depth);
    snprintf(trees, sizeof trees, "%u", rounds);
    const char *kv[][2] = {
        {"objective", "multi:softprob"}, {"num_class", num}, {"max_depth", dep}, {"seed", "0"},
        {"nthread", "1"}, {"min_child_weight", "0"}, {"tree_method", "exact"},
    };
    for (size_t i = 0; i < sizeof kv / sizeof kv[0]; i++)
        MODEL_XGB(xgb.XGBoosterSetParam(m->b, kv[i][0], kv[i][1]), err, cap, out);
    if (p->forest) {   /* XGBoost's random forest: one round of many subsampled trees, no shrinkage */
        const char *rf[][2] = {
            {"num_parallel_tree", trees}, {"subsample", "0.8"}, {"colsample_bynode", "0.8"}, {"eta", "1"},
        };
        for (size_t i = 0; i < sizeof rf / sizeof rf[0]; i++)
            MODEL_XGB(xgb.XGBoosterSetParam(m->b, rf[i][0], rf[i][1]), err, cap, out);
        rounds = 1;
    } else {
        MODEL_XGB(xgb.XGBoosterSetParam(m->b, "eta", "0.3"), err, cap, out);
    }
    for (unsigned it = 0; it < rounds; it++)
        MODEL_XGB(xgb.XGBoosterUpdateOneIter(m->b, (int)it, dm), err, cap, out);
    m->ndevs = d->ndevs;
    for (unsigned i = 0; i < d->ndevs; i++)
        if (!(m->devs[i] = strdup(d->devs[i]))) {
            st = MODEL_ERR_NOMEM;
            snprintf(err, cap, "out of memory");
            goto out;
        }
out:
    if (dm)
        xgb.XGDMatrixFree(dm);
    free(x);
    free(y);
    free(w);
    if (st != MODEL_OK)
        model_free(m);
    else
        *out = m;
    return st;
}

model_status model_predict(const model *m, const float x[MODEL_NFEAT], unsigned *best, double *prob)
{
    model_status st = MODEL_OK;
    char err[256];
    DMatrixHandle dm = NULL;
    bst_ulong len = 0;
    const float *r = NULL;
    MODEL_XGB(xgb.XGDMatrixCreateFromMat(x, 1, MODEL_NFEAT, NAN, &dm), err, sizeof err, out);
    MODEL_XGB(xgb.XGBoosterPredict(m->b, dm, 0, 0, 0, &len, &r), err, sizeof err, out);
    if (len != m->ndevs) {
        st = MODEL_ERR_LIB;
        goto out;
    }
    *best = 0;
    for (unsigned i = 1; i < m->ndevs; i++)
        if (r[i] > r[*best])
            *best = i;
    if (prob)
        *prob = r[*best];
out:
    if (dm)
        xgb.XGDMatrixFree(dm);
    return st;
}

/* "name,name,..." of the features, as the clrr_features attribute */
static void model_feature_list(char *buf, size_t cap)
{
    size_t n = 0;
    buf[0] = 0;
    for (unsigned i = 0; i < MODEL_NFEAT && n < cap; i++)
        n += (size_t)snprintf(buf + n, cap - n, "%s%s", i ? "," : "", model_feature_name(i));
}

model_status model_save(const model *m, const char *path, char *err, size_t cap)
{
    model_status st = MODEL_OK;
    char feats[1024], fmt[16], *devs = NULL;
    size_t len = 0;
    for (unsigned i = 0; i < m->ndevs; i++)
        len += strlen(m->devs[i]) + 1;
    if (!(devs = calloc(1, len + 1)))
        return MODEL_ERR_NOMEM;
    for (unsigned i = 0; i < m->ndevs; i++) {
        if (i)
            strcat(devs, "\t");
        strcat(devs, m->devs[i]);
    }
    model_feature_list(feats, sizeof feats);
    snprintf(fmt, sizeof fmt, "%d", MODEL_FORMAT);
    MODEL_XGB(xgb.XGBoosterSetAttr(m->b, "clrr_model", fmt), err, cap, out);
    MODEL_XGB(xgb.XGBoosterSetAttr(m->b, "clrr_features", feats), err, cap, out);
    MODEL_XGB(xgb.XGBoosterSetAttr(m->b, "clrr_devices", devs), err, cap, out);
    /* XGBoost writes JSON for a name ending in .json, its binary format otherwise */
    if (xgb.XGBoosterSaveModel(m->b, path) != 0) {
        snprintf(err, cap, "%s: %s", path, xgb.XGBGetLastError());
        st = MODEL_ERR_IO;
    }
out:
    free(devs);
    return st;
}

model_status model_load(const char *path, model **out, char *err, size_t cap)
{
    model_status st = MODEL_OK;
    *out = NULL;
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, cap, "%s: cannot open the model (run clrr model train)", path);
        return MODEL_ERR_IO;
    }
    int c = fgetc(f);
    fclose(f);
    if (c == EOF) {
        snprintf(err, cap, "%s: empty, not a model file", path);
        return MODEL_ERR_FORMAT;
    }
    if (model_xgb_load(err, cap) < 0)
        return MODEL_ERR_LIB;
    model *m = calloc(1, sizeof *m);
    if (!m)
        return MODEL_ERR_NOMEM;
    if (xgb.XGBoosterCreate(NULL, 0, &m->b) != 0) {
        snprintf(err, cap, "xgboost: %s", xgb.XGBGetLastError());
        st = MODEL_ERR_LIB;
        goto out;
    }
    if (xgb.XGBoosterLoadModel(m->b, path) != 0) {
        const char *e = xgb.XGBGetLastError(), *nl = strchr(e, '\n');
        snprintf(err, cap, "%s: not a model file XGBoost can read (%.*s)", path, nl ? (int)(nl - e) : 200, e);
        st = MODEL_ERR_FORMAT;
        goto out;
    }
    const char *v = NULL;
    int ok = 0;
    char feats[1024];
    model_feature_list(feats, sizeof feats);
    if (xgb.XGBoosterGetAttr(m->b, "clrr_model", &v, &ok) != 0 || !ok || atoi(v) != MODEL_FORMAT) {
        snprintf(err, cap, "%s: not a clrr model (no clrr_model attribute %d)", path, MODEL_FORMAT);
        st = MODEL_ERR_FORMAT;
        goto out;
    }
    if (xgb.XGBoosterGetAttr(m->b, "clrr_features", &v, &ok) != 0 || !ok || strcmp(v, feats)) {
        snprintf(err, cap, "%s: made with other features than this clrr's (train it again)", path);
        st = MODEL_ERR_FORMAT;
        goto out;
    }
    if (xgb.XGBoosterGetAttr(m->b, "clrr_devices", &v, &ok) != 0 || !ok || !*v) {
        snprintf(err, cap, "%s: the model names no device", path);
        st = MODEL_ERR_FORMAT;
        goto out;
    }
    for (const char *p = v; *p;) {
        size_t n = strcspn(p, "\t");
        if (!n || m->ndevs == MODEL_MAX_DEVICES) {
            snprintf(err, cap, "%s: a bad device list", path);
            st = MODEL_ERR_FORMAT;
            goto out;
        }
        if (!(m->devs[m->ndevs++] = strndup(p, n))) {
            st = MODEL_ERR_NOMEM;
            goto out;
        }
        p += n + (p[n] == '\t');
    }
    if (m->ndevs < 2) {
        snprintf(err, cap, "%s: the model names fewer than 2 devices", path);
        st = MODEL_ERR_FORMAT;
    }
out:
    if (st != MODEL_OK)
        model_free(m);
    else
        *out = m;
    return st;
}
