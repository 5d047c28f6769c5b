/* cmd_model.c — `clrr model`: the learned device-selection model
 * (model/model.h). train: from this machine's cost database (launch
 * shapes measured on every device by `clrr profile`, with their features)
 * to a model file; eval: k-fold cross-validation grouped by kernel, with
 * the baseline and the time lost against the oracle; predict: the device
 * the model picks for each launch shape of a trace; features: records a
 * trace's launch features in the database (`clrr profile` does it too). */
#include "tools/clrr/cli.h"
#include "tools/clrr/cli_ana.h"
#include "tools/clrr/cli_model.h"

#include <dlfcn.h>
#include <getopt.h>
#include <inttypes.h>
#include <jansson.h>
#include <libgen.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model/model.h"

static const char cli_model_usage[] =
    "Usage: clrr model train [--costs PATH] [-o MODEL] [--forest] [--json]\n"
    "       clrr model eval [--costs PATH] [--folds K] [--forest] [--json]\n"
    "       clrr model predict TRACE [--model MODEL] [--costs PATH] [--json]\n"
    "       clrr model features TRACE... [--costs PATH]\n"
    "A learned model of the fastest device for a kernel launch shape, for the\n"
    "shapes nobody measured (a new input size). Its samples are the cost\n"
    "database's launch shapes that 'clrr profile' measured on every device of\n"
    "this machine, with the features the kernel analysis gives them (instruction\n"
    "mix, memory accesses by stride class, loop trip counts, work sizes, bytes\n"
    "in and out; 'clrr profile' records them); the label is the device with the\n"
    "least device time at the launch's full size. XGBoost trains a classifier\n"
    "over the devices (gradient-boosted trees; --forest: its random-forest mode).\n"
    "\n"
    "'train' trains on every sample and writes MODEL. 'eval' reports K-fold\n"
    "cross-validated accuracy, grouped by kernel (all shapes of a kernel are in\n"
    "one fold, never in their own training set), beside the baseline of always\n"
    "taking the device fastest most often in the training folds, and the time the\n"
    "choices lose against the oracle (the measured fastest): their sum, and the\n"
    "geometric mean of chosen/best time. 'predict' lists each launch shape of\n"
    "TRACE with the device the model picks (and the measured fastest, where the\n"
    "database has it). 'features' records the features of TRACE's launch shapes.\n"
    "\n"
    "Options:\n"
    "  --costs PATH   the cost database (default: $CLRR_COSTS, else\n"
    "                 $XDG_CACHE_HOME/clrr/costs or ~/.cache/clrr/costs)\n"
    "  --db PATH      the same as --costs\n"
    "  -o, --model MODEL  the model file (default: $CLRR_MODEL, else model.json in\n"
    "                 the cost database's folder)\n"
    "  --folds K      eval: folds, 2 to 100 (default 5; at most one per kernel)\n"
    "  --forest       train, eval: XGBoost's random-forest mode (100 trees in one\n"
    "                 round) instead of gradient boosting (60 rounds)\n"
    "  --json         one JSON object on stdout\n"
    "\n"
    "Exit status: 0 done, 2 usage error, 3 failed (the cost database or TRACE\n"
    "unreadable, too few samples to train or evaluate: fewer than 2 devices or 2\n"
    "kernels, a model file that is missing or not one of ours, MODEL not\n"
    "writable).\n";

typedef struct cli_model_opts {
    const char *costs, *model;
    unsigned folds;
    int forest, json;
} cli_model_opts;

/* ------------------------------------------------------------ a trace's shapes */

typedef struct cli_mshape {
    cdb_key key;              /* key.kernel owned */
    char vec[2048];
    uint64_t launches;
} cli_mshape;

static int cli_mkey_eq(const cdb_key *a, const cdb_key *b)
{
    return a->dim == b->dim && !memcmp(a->program, b->program, 16) && !strcmp(a->kernel, b->kernel) &&
           !memcmp(a->gsz, b->gsz, sizeof a->gsz) && !memcmp(a->lsz, b->lsz, sizeof a->lsz);
}

/* The distinct launch shapes of @p path with an analyzed kernel and a
 * program from source (*out malloc'ed). @return the count, or -1 after
 * one error line when @p loud (else silently). */
static long cli_model_shapes(const char *path, int loud, cli_mshape **out)
{
    *out = NULL;
    if (dlsym(RTLD_DEFAULT, "LLVMContextCreate"))
        return loud ? cli_err("%s: another LLVM is loaded in this process: no kernel analysis", path), -1 : -1;
    tf_reader *r = NULL;
    ana_model *m = NULL;
    if (loud) {
        if (cli_ana_load(path, 1, &r, &m) != CLI_EXIT_OK)
            return -1;
    } else {
        char err[256];
        if (tf_reader_open(&r, path, NULL) != TF_OK)
            return -1;
        if (ana_model_build(r, &m, err, sizeof err) != ANA_OK || ana_model_analyze(m) != ANA_OK) {
            ana_model_free(m);
            tf_reader_close(r);
            return -1;
        }
    }
    cli_mshape *v = NULL;
    size_t n = 0, cap = 0;
    long rc = 0;
    static ana_argval vals[1024];
    size_t nc = ana_model_command_count(m);
    for (size_t i = 0; i < nc; i++) {
        const ana_cmd *c = ana_model_command(m, i);
        if (c->kind != ANA_CMD_KERNEL || c->work_dim < 1 || c->work_dim > 3)
            continue;
        const char *why = NULL;
        const ana_kernel *k = ana_model_kernel(m, c->kernel, &why);
        const ana_object *ko = ana_model_find(m, c->kernel);
        const ana_object *po = ko ? ana_model_find(m, ko->parent) : NULL;
        if (!k || !ko || !po || !po->source || !ko->name || !*ko->name)
            continue;
        cdb_key key;
        memset(&key, 0, sizeof key);
        tf_blobref h;
        tf_hash(po->source, (size_t)po->source_len, &h);
        memcpy(key.program, h.hash, 16);
        key.kernel = ko->name;
        key.dim = c->work_dim;
        int lzero = 1;
        for (unsigned d = 0; d < c->work_dim; d++)
            lzero &= c->local[d] == 0;
        for (unsigned d = 0; d < 3; d++) {
            key.gsz[d] = d < c->work_dim ? c->global[d] : 1;
            key.lsz[d] = d < c->work_dim ? c->local[d] : lzero ? 0 : 1;
        }
        size_t j = 0;
        while (j < n && !cli_mkey_eq(&v[j].key, &key))
            j++;
        if (j < n) {
            v[j].launches++;
            continue;
        }
        ana_launch l;
        ana_features f;
        if (ana_model_launch(m, c, k, &l, vals, sizeof vals / sizeof vals[0]) != ANA_OK ||
            ana_kernel_features(k, &l, &f) != ANA_OK)
            continue;
        model_launch_bytes b = {0, 0};
        for (unsigned a = 0; a < c->nmem; a++) {
            const ana_memref *mr = &c->mem[a];
            uint64_t len = mr->hi > mr->lo ? mr->hi - mr->lo : 0;
            if (mr->access & ANA_ACC_READ)
                b.in += len;
            if (mr->access & ANA_ACC_WRITE)
                b.out += len;
        }
        if (n == cap) {
            size_t c2 = cap ? cap * 2 : 16;
            cli_mshape *a = realloc(v, c2 * sizeof *a);
            if (!a)
                goto nomem;
            v = a;
            cap = c2;
        }
        cli_mshape *s = &v[n];
        s->key = key;
        s->launches = 1;
        if (model_features_format(&f, c->work_dim, key.lsz, &b, s->vec, sizeof s->vec) < 0)
            continue;
        if (!(s->key.kernel = strdup(ko->name)))
            goto nomem;
        n++;
    }
    rc = (long)n;
    *out = v;
    goto done;
nomem:
    for (size_t j = 0; j < n; j++)
        free((char *)v[j].key.kernel);
    free(v);
    if (loud)
        cli_err("out of memory");
    rc = -1;
done:
    ana_model_free(m);
    tf_reader_close(r);
    return rc;
}

static void cli_mshapes_free(cli_mshape *v, long n)
{
    for (long i = 0; i < n; i++)
        free((char *)v[i].key.kernel);
    free(v);
}

long cli_model_note_features(const char *path, cdb *db)
{
    cli_mshape *v;
    long n = cli_model_shapes(path, 0, &v);
    for (long i = 0; i < n; i++)
        if (cdb_add_features(db, &v[i].key, v[i].vec) != CDB_OK) {
            n = -1;
            break;
        }
    if (n >= 0 || v)
        cli_mshapes_free(v, n < 0 ? 0 : n);
    return n;
}

/* ------------------------------------------------------------ helpers */

static int cli_model_open_db(const cli_model_opts *o, cdb **db)
{
    char dflt[1024], err[1024];
    const char *path = o->costs;
    *db = NULL;
    if (!path && !(path = cdb_default_path(dflt, sizeof dflt))) {
        cli_err("no cost database path: set CLRR_COSTS or HOME, or give --costs");
        return CLI_EXIT_ERROR;
    }
    cdb_status cs = cdb_open(path, db, err, sizeof err);
    if (cs != CDB_OK) {
        cli_err("%s", cs == CDB_ERR_FORMAT ? err : cdb_strerror(cs));
        return CLI_EXIT_ERROR;
    }
    return CLI_EXIT_OK;
}

/* the model's path: --model, $CLRR_MODEL, or model.json beside the database */
static const char *cli_model_path(const cli_model_opts *o, char *buf, size_t cap)
{
    if (o->model)
        return o->model;
    const char *e = getenv("CLRR_MODEL");
    if (e && *e)
        return e;
    char dflt[1024];
    const char *db = o->costs ? o->costs : cdb_default_path(dflt, sizeof dflt);
    if (!db)
        return NULL;
    char tmp[1024];
    snprintf(tmp, sizeof tmp, "%s", db);
    int w = snprintf(buf, cap, "%s/model.json", dirname(tmp));
    return w > 0 && (size_t)w < cap ? buf : NULL;
}

struct model *cli_model_open_beside(const char *costs)
{
    cli_model_opts o = {costs, NULL, 5, 0, 0};
    char pbuf[1100], err[1024];
    const char *path = cli_model_path(&o, pbuf, sizeof pbuf);
    if (!path || access(path, F_OK))
        return NULL;
    model *m = NULL;
    if (model_load(path, &m, err, sizeof err) != MODEL_OK) {
        cli_err("warning: %s (launches nobody measured run as recorded)", err);
        return NULL;
    }
    return m;
}

static int cli_model_data(cdb *db, model_data **d)
{
    char err[512];
    model_status st = model_data_from_cdb(db, d, err, sizeof err);
    if (st != MODEL_OK) {
        cli_err("%s", st == MODEL_ERR_NOMEM ? "out of memory" : err);
        return CLI_EXIT_ERROR;
    }
    return CLI_EXIT_OK;
}

static void cli_model_method(const cli_model_opts *o, char *buf, size_t cap)
{
    snprintf(buf, cap, "%s", o->forest ? "XGBoost random forest (multi:softprob, 100 trees in one round, depth 6, "
                                         "rows and columns subsampled 0.8)"
                                       : "XGBoost gradient-boosted trees (multi:softprob, 60 rounds, depth 4, eta 0.3)");
}

static const char *cli_model_pct(size_t a, size_t b, char *buf, size_t cap)
{
    snprintf(buf, cap, "%.1f%%", b ? 100.0 * (double)a / (double)b : 0.0);
    return buf;
}

/* ------------------------------------------------------------ train */

static int cli_model_train(const cli_model_opts *o)
{
    cdb *db = NULL;
    model_data *d = NULL;
    model *m = NULL;
    char err[1024], pbuf[1100], method[256];
    int rc = cli_model_open_db(o, &db);
    if (rc != CLI_EXIT_OK || (rc = cli_model_data(db, &d)) != CLI_EXIT_OK)
        goto out;
    const char *path = cli_model_path(o, pbuf, sizeof pbuf);
    if (!path) {
        cli_err("no model path: give -o MODEL");
        rc = CLI_EXIT_ERROR;
        goto out;
    }
    model_params p = {o->forest, 0, 0};
    model_status st = model_train(d, NULL, 0, &p, &m, err, sizeof err);
    if (st == MODEL_OK)
        st = model_save(m, path, err, sizeof err);
    if (st != MODEL_OK) {
        if (st == MODEL_ERR_DATA)
            cli_err("%s: %s (%zu samples: %zu shapes without features, %zu not measured on every device)",
                    cdb_path(db), err, d->n, d->no_features, d->partial);
        else
            cli_err("%s", err);
        rc = CLI_EXIT_ERROR;
        goto out;
    }
    cli_model_method(o, method, sizeof method);
    if (o->json) {
        json_t *j = json_object(), *devs = json_array();
        json_object_set_new(j, "schema", json_string("clrr-model-train/1"));
        json_object_set_new(j, "costs", cli_json_ctext(cdb_path(db)));
        json_object_set_new(j, "model", cli_json_ctext(path));
        json_object_set_new(j, "method", json_string(method));
        json_object_set_new(j, "samples", cli_json_u64(d->n));
        json_object_set_new(j, "kernels", cli_json_u64(d->ngroups));
        json_object_set_new(j, "without_features", cli_json_u64(d->no_features));
        json_object_set_new(j, "partial", cli_json_u64(d->partial));
        for (unsigned i = 0; i < d->ndevs; i++) {
            json_t *x = json_object();
            json_object_set_new(x, "spec", cli_json_ctext(d->specs[i]));
            json_object_set_new(x, "identity", cli_json_ctext(d->devs[i]));
            json_array_append_new(devs, x);
        }
        json_object_set_new(j, "devices", devs);
        cli_json_put(stdout, j);
        putchar('\n');
    } else {
        printf("trained   %s on %zu launch shapes of %zu kernels from %s\n", path, d->n, d->ngroups, cdb_path(db));
        printf("method    %s\n", method);
        for (unsigned i = 0; i < d->ndevs; i++)
            printf("device    %s = %s\n", d->specs[i], d->devs[i]);
        if (d->no_features || d->partial)
            printf("skipped   %zu shapes without features, %zu not measured on every device\n", d->no_features,
                   d->partial);
    }
out:
    model_free(m);
    model_data_free(d);
    cdb_close(db);
    return rc;
}

/* ------------------------------------------------------------ eval */

static int cli_model_eval(const cli_model_opts *o)
{
    cdb *db = NULL;
    model_data *d = NULL;
    char err[1024], method[256], a[32], b[32], t1[CLI_FMT_CAP], t2[CLI_FMT_CAP];
    int rc = cli_model_open_db(o, &db);
    if (rc != CLI_EXIT_OK || (rc = cli_model_data(db, &d)) != CLI_EXIT_OK)
        goto out;
    model_params p = {o->forest, 0, 0};
    model_eval e;
    model_status st = model_cross_validate(d, o->folds, &p, &e, NULL, NULL, err, sizeof err);
    if (st != MODEL_OK) {
        if (st == MODEL_ERR_DATA)
            cli_err("%s: %s (%zu samples of %zu kernels on %u devices)", cdb_path(db), err, d->n, d->ngroups,
                    d->ndevs);
        else
            cli_err("%s", err);
        rc = CLI_EXIT_ERROR;
        goto out;
    }
    cli_model_method(o, method, sizeof method);
    size_t wrong = e.n - e.correct;
    if (o->json) {
        json_t *j = json_object(), *devs = json_array();
        json_object_set_new(j, "schema", json_string("clrr-model-eval/1"));
        json_object_set_new(j, "costs", cli_json_ctext(cdb_path(db)));
        json_object_set_new(j, "method", json_string(method));
        json_object_set_new(j, "folds", json_integer(e.folds));
        json_object_set_new(j, "grouped_by", json_string("kernel"));
        json_object_set_new(j, "samples", cli_json_u64(e.n));
        json_object_set_new(j, "kernels", cli_json_u64(e.ngroups));
        for (unsigned i = 0; i < d->ndevs; i++) {
            json_t *x = json_object();
            json_object_set_new(x, "spec", cli_json_ctext(d->specs[i]));
            json_object_set_new(x, "identity", cli_json_ctext(d->devs[i]));
            json_array_append_new(devs, x);
        }
        json_object_set_new(j, "devices", devs);
        json_object_set_new(j, "correct", cli_json_u64(e.correct));
        json_object_set_new(j, "accuracy", cli_json_f64((double)e.correct / (double)e.n));
        json_object_set_new(j, "baseline_correct", cli_json_u64(e.baseline_correct));
        json_object_set_new(j, "baseline_accuracy", cli_json_f64((double)e.baseline_correct / (double)e.n));
        json_object_set_new(j, "oracle_ns", cli_json_f64(e.best_ns));
        json_object_set_new(j, "chosen_ns", cli_json_f64(e.chosen_ns));
        json_object_set_new(j, "baseline_ns", cli_json_f64(e.baseline_ns));
        json_object_set_new(j, "lost_ns", cli_json_f64(e.chosen_ns - e.best_ns));
        json_object_set_new(j, "geomean_ratio", cli_json_f64(e.geomean_ratio));
        json_object_set_new(j, "geomean_ratio_wrong", cli_json_f64(e.geomean_ratio_wrong));
        json_object_set_new(j, "max_ratio", cli_json_f64(e.max_ratio));
        json_object_set_new(j, "baseline_geomean_ratio", cli_json_f64(e.baseline_geomean_ratio));
        cli_json_put(stdout, j);
        putchar('\n');
        goto out;
    }
    printf("samples   %zu launch shapes of %zu kernels, measured on %u devices (%s)\n", e.n, e.ngroups, d->ndevs,
           cdb_path(db));
    for (unsigned i = 0; i < d->ndevs; i++)
        printf("device    %s = %s\n", d->specs[i], d->devs[i]);
    printf("method    %s; %u-fold cross-validation grouped by kernel (a kernel's shapes never in its own "
           "training folds)\n", method, e.folds);
    printf("accuracy  %s (%zu of %zu); baseline (the device fastest most often in the training folds) %s (%zu)\n",
           cli_model_pct(e.correct, e.n, a, sizeof a), e.correct, e.n,
           cli_model_pct(e.baseline_correct, e.n, b, sizeof b), e.baseline_correct);
    printf("time      the choices take %.3fx the oracle's in sum (%s lost of %s); geomean chosen/best %.3f, over the "
           "%zu wrong %.3f, worst %.2fx\n", e.best_ns > 0 ? e.chosen_ns / e.best_ns : 1.0,
           cli_fmt_ns((int64_t)(e.chosen_ns - e.best_ns), t1), cli_fmt_ns((int64_t)e.best_ns, t2), e.geomean_ratio,
           wrong, e.geomean_ratio_wrong, e.max_ratio);
    printf("baseline  takes %.3fx the oracle's in sum; geomean %.3f\n", e.best_ns > 0 ? e.baseline_ns / e.best_ns : 1.0,
           e.baseline_geomean_ratio);
out:
    model_data_free(d);
    cdb_close(db);
    return rc;
}

/* ------------------------------------------------------------ predict */

/* "1024x768/16x16", "4096/-" */
static void cli_model_shape(const cdb_key *k, char *buf, size_t cap)
{
    size_t n = 0;
    for (unsigned d = 0; d < k->dim && n < cap; d++)
        n += (size_t)snprintf(buf + n, cap - n, "%s%" PRIu64, d ? "x" : "", k->gsz[d]);
    for (unsigned d = 0; d < k->dim && n < cap; d++)
        n += (size_t)(k->lsz[0] ? snprintf(buf + n, cap - n, "%s%" PRIu64, d ? "x" : "/", k->lsz[d])
                                : snprintf(buf + n, cap - n, "%s", d ? "" : "/-"));
}

static int cli_model_predict(const cli_model_opts *o, const char *trace)
{
    cdb *db = NULL;
    model *m = NULL;
    cli_mshape *v = NULL;
    long n = -1;
    char err[1024], pbuf[1100], shape[128];
    int rc = cli_model_open_db(o, &db);
    if (rc != CLI_EXIT_OK)
        goto out;
    const char *path = cli_model_path(o, pbuf, sizeof pbuf);
    if (!path) {
        cli_err("no model path: give --model MODEL");
        rc = CLI_EXIT_ERROR;
        goto out;
    }
    model_status st = model_load(path, &m, err, sizeof err);
    if (st != MODEL_OK) {
        cli_err("%s", st == MODEL_ERR_NOMEM ? "out of memory" : err);
        rc = CLI_EXIT_ERROR;
        goto out;
    }
    if ((n = cli_model_shapes(trace, 1, &v)) < 0) {
        rc = CLI_EXIT_ERROR;
        goto out;
    }
    /* the model's classes as this database's snapshot names them */
    const char *specs[MODEL_MAX_DEVICES];
    model_data *d = NULL;
    if (model_data_from_cdb(db, &d, err, sizeof err) != MODEL_OK)
        d = NULL;
    for (unsigned i = 0; i < model_device_count(m); i++) {
        specs[i] = model_device(m, i);
        for (unsigned j = 0; d && j < d->ndevs; j++)
            if (!strcmp(d->devs[j], specs[i]))
                specs[i] = d->specs[j];
    }
    json_t *j = NULL, *arr = NULL;
    if (o->json) {
        j = json_object();
        arr = json_array();
        json_object_set_new(j, "schema", json_string("clrr-model-predict/1"));
        json_object_set_new(j, "trace", cli_json_ctext(trace));
        json_object_set_new(j, "model", cli_json_ctext(path));
        json_object_set_new(j, "shapes", arr);
    } else {
        printf("model     %s\n", path);
        printf("%-24s %-20s %8s  %-10s %6s  %s\n", "kernel", "shape", "launches", "predicted", "prob", "measured fastest");
    }
    size_t agree = 0, measured = 0;
    for (long i = 0; i < n && rc == CLI_EXIT_OK; i++) {
        float x[MODEL_NFEAT];
        unsigned best = 0;
        double prob = 0;
        if (model_features_parse(v[i].vec, x) < 0 || model_predict(m, x, &best, &prob) != MODEL_OK) {
            cli_err("%s: prediction failed for kernel %s", trace, v[i].key.kernel);
            rc = CLI_EXIT_ERROR;
            break;
        }
        /* the measured fastest, when every class has a curve for the shape */
        int meas = -1;
        double bns = 0, tns[MODEL_MAX_DEVICES];
        for (unsigned k = 0; k < model_device_count(m); k++) {
            cdb_curve c;
            uint64_t full = 1;
            for (unsigned dd = 0; dd < v[i].key.dim; dd++)
                full *= v[i].key.lsz[0] ? (v[i].key.gsz[dd] + v[i].key.lsz[dd] - 1) / v[i].key.lsz[dd]
                                        : v[i].key.gsz[dd];
            if (!cdb_kernel_curve(db, model_device(m, k), &v[i].key, &c) || !c.n) {
                meas = -2;
                break;
            }
            double t = tns[k] = cdb_curve_at(&c, (double)full);
            if (meas < 0 || t < bns) {
                meas = (int)k;
                bns = t;
            }
        }
        if (meas >= 0) {
            measured++;
            agree += (unsigned)meas == best;
        }
        cli_model_shape(&v[i].key, shape, sizeof shape);
        if (o->json) {
            json_t *s = json_object();
            json_object_set_new(s, "kernel", cli_json_ctext(v[i].key.kernel));
            json_object_set_new(s, "shape", json_string(shape));
            json_object_set_new(s, "launches", cli_json_u64(v[i].launches));
            json_object_set_new(s, "predicted", cli_json_ctext(specs[best]));
            json_object_set_new(s, "identity", cli_json_ctext(model_device(m, best)));
            json_object_set_new(s, "probability", cli_json_f64(prob));
            json_object_set_new(s, "measured_fastest", meas >= 0 ? cli_json_ctext(specs[meas]) : json_null());
            json_t *mn = meas >= 0 ? json_object() : json_null();
            for (unsigned k = 0; meas >= 0 && k < model_device_count(m); k++)
                json_object_set_new(mn, specs[k], cli_json_f64(tns[k]));
            json_object_set_new(s, "measured_ns", mn);
            json_array_append_new(arr, s);
        } else {
            printf("%-24.24s %-20s %8" PRIu64 "  %-10s %5.0f%%  %s\n", v[i].key.kernel, shape, v[i].launches,
                   specs[best], 100 * prob, meas >= 0 ? specs[meas] : "not measured");
        }
    }
    if (rc == CLI_EXIT_OK) {
        if (o->json) {
            json_object_set_new(j, "measured", cli_json_u64(measured));
            json_object_set_new(j, "agree", cli_json_u64(agree));
            cli_json_put(stdout, j);
            j = NULL;
            putchar('\n');
        } else {
            printf("%ld launch shapes; %zu measured, the model agrees on %zu\n", n, measured, agree);
        }
    }
    json_decref(j);
    model_data_free(d);
out:
    if (v)
        cli_mshapes_free(v, n);
    model_free(m);
    cdb_close(db);
    return rc;
}

/* ------------------------------------------------------------ features */

static int cli_model_features(const cli_model_opts *o, int argc, char **argv)
{
    cdb *db = NULL;
    char err[1024];
    int rc = cli_model_open_db(o, &db);
    for (int i = 0; i < argc && rc == CLI_EXIT_OK; i++) {
        cli_mshape *v;
        long n = cli_model_shapes(argv[i], 1, &v);
        if (n < 0) {
            rc = CLI_EXIT_ERROR;
            break;
        }
        for (long s = 0; s < n; s++)
            if (cdb_add_features(db, &v[s].key, v[s].vec) != CDB_OK) {
                cli_err("%s: kernel %s: cannot record its features", argv[i], v[s].key.kernel);
                rc = CLI_EXIT_ERROR;
                break;
            }
        cli_mshapes_free(v, n);
        if (rc == CLI_EXIT_OK)
            printf("features  %s: %ld launch shapes\n", argv[i], n);
    }
    if (db && rc == CLI_EXIT_OK) {
        err[0] = 0;
        cdb_status cs = cdb_flush(db, err, sizeof err);
        if (cs != CDB_OK) {
            cli_err("%s", err[0] ? err : cdb_strerror(cs));
            rc = CLI_EXIT_ERROR;
        }
    }
    cdb_close(db);
    return rc;
}

static int cli_model_run(int argc, char **argv)
{
    enum { O_COSTS = 256, O_FOLDS, O_FOREST, O_JSON };
    static const struct option opts[] = {
        {"costs", required_argument, NULL, O_COSTS}, {"db", required_argument, NULL, O_COSTS},
        {"model", required_argument, NULL, 'o'}, {"folds", required_argument, NULL, O_FOLDS},
        {"forest", no_argument, NULL, O_FOREST}, {"json", no_argument, NULL, O_JSON},
        {"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0},
    };
    static const char subs[] = "clrr model train, eval, predict TRACE or features TRACE...";
    if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
        fputs(cli_model_usage, stdout);
        return CLI_EXIT_OK;
    }
    if (argc < 2 || argv[1][0] == '-')
        return cli_usage_err("missing the subcommand: %s", subs);
    const char *sub = argv[1];
    if (strcmp(sub, "train") && strcmp(sub, "eval") && strcmp(sub, "predict") && strcmp(sub, "features"))
        return cli_usage_err("unknown subcommand '%s' (%s)", sub, subs);
    argc--;
    argv++;
    cli_model_opts o = {NULL, NULL, 5, 0, 0};
    int c;
    uint64_t v;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":ho:", opts, NULL)) != -1) {
        switch (c) {
        case O_COSTS:
            if (!*optarg)
                return cli_usage_err("--costs takes a path, not ''");
            o.costs = optarg;
            break;
        case 'o':
            if (!*optarg)
                return cli_usage_err("--model takes a path, not ''");
            o.model = optarg;
            break;
        case O_FOLDS:
            if (cli_parse_u64(optarg, &v, 0) < 0 || v < 2 || v > 100)
                return cli_usage_err("--folds takes a count from 2 to 100, not '%s'", optarg);
            o.folds = (unsigned)v;
            break;
        case O_FOREST: o.forest = 1; break;
        case O_JSON: o.json = 1; break;
        case 'h': fputs(cli_model_usage, stdout); return CLI_EXIT_OK;
        default: return cli_opt_err(argv, c);
        }
    }
    int nops = argc - optind;
    if (!strcmp(sub, "train") || !strcmp(sub, "eval")) {
        if (nops)
            return cli_usage_err("clrr model %s takes no operand ('%s')", sub, argv[optind]);
        return !strcmp(sub, "train") ? cli_model_train(&o) : cli_model_eval(&o);
    }
    if (!strcmp(sub, "predict")) {
        if (nops != 1)
            return cli_usage_err("clrr model predict takes one TRACE");
        return cli_model_predict(&o, argv[optind]);
    }
    if (!nops)
        return cli_usage_err("clrr model features takes one TRACE or more");
    for (int i = optind; i < argc; i++)
        if ((o.costs && cli_same_file(o.costs, argv[i])))
            return cli_usage_err("%s: the cost database is a TRACE", argv[i]);
    return cli_model_features(&o, argc - optind, argv + optind);
}

const cli_command cli_cmd_model = {
    "model", "train, evaluate and use the learned device-selection model", cli_model_usage, cli_model_run, NULL,
};
