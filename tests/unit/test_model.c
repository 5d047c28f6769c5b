/* test_model.c — the learned device-selection model (model/model.h) and
 * the cost database's features records (costs/cdb.h, `f`): records read
 * back after a flush and a reopen, malformed ones refused; feature
 * vectors formatted and parsed (derived features, unknown names ignored,
 * missing ones NaN); samples taken only where every device measured the
 * shape and its features exist; a model trained with XGBoost picks, for
 * kernels it never saw (cross-validated by kernel), the device that a
 * cost rule of their features makes fastest, better than the baseline;
 * saved and loaded it predicts the same; a corrupt, foreign or missing
 * model file is refused. The real measurements (PoCL's two devices,
 * profiled) are tests/e2e/model.sh's. */
#include <CUnit/Basic.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "costs/cdb.h"
#include "model/model.h"

static char dir[] = "/tmp/test_model.XXXXXX";

static const char *ID0 = "basic | PoCL | 3.1 | 1 CU", *ID1 = "pthread | PoCL | 3.1 | 2 CU";

static cdb *open_db(const char *name)
{
    char p[256], err[256];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    cdb *db = NULL;
    CU_ASSERT_EQUAL_FATAL(cdb_open(p, &db, err, sizeof err), CDB_OK);
    return db;
}

static void write_file(const char *name, const char *text)
{
    char p[256];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    FILE *f = fopen(p, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fputs(text, f);
    fclose(f);
}

static cdb_key key_of(unsigned kern, uint64_t n)
{
    static char names[16][16];
    cdb_key k;
    memset(&k, 0, sizeof k);
    k.program[0] = (uint8_t)(kern + 1);
    snprintf(names[kern], sizeof names[kern], "k%u", kern);
    k.kernel = names[kern];
    k.dim = 1;
    k.gsz[0] = n;
    k.gsz[1] = k.gsz[2] = 1;
    k.lsz[0] = 64;
    k.lsz[1] = k.lsz[2] = 1;
    return k;
}

static void features_of(unsigned kern, uint64_t n, char *buf, size_t cap)
{
    ana_features f;
    memset(&f, 0, sizeof f);
    f.work_items = n;
    f.work_groups = (n + 63) / 64;
    f.stat.float_ops = 4 + 12 * kern;
    f.stat.int_ops = 3 + kern % 3;
    f.stat.loads = 2;
    f.stat.stores = 1;
    f.accesses_by_stride[ANA_STRIDE_UNIT] = 3;
    f.dyn_ops = f.stat.float_ops + f.stat.int_ops;
    f.dyn_loads = 2;
    f.dyn_stores = 1;
    uint64_t lsz[3] = {64, 1, 1};
    model_launch_bytes b = {n * 8, n * 4};
    CU_ASSERT_EQUAL_FATAL(model_features_format(&f, 1, lsz, &b, buf, cap), 0);
}

static void test_records(void)
{
    char vec[2048], err[256];
    cdb *db = open_db("rec.costs");
    cdb_key k = key_of(2, 4096);
    features_of(2, 4096, vec, sizeof vec);
    CU_ASSERT_PTR_NULL(cdb_get_features(db, &k));
    CU_ASSERT_EQUAL(cdb_add_features(db, &k, vec), CDB_OK);
    CU_ASSERT_EQUAL(cdb_add_features(db, &k, vec), CDB_OK);   /* the same again: nothing new */
    CU_ASSERT_EQUAL(cdb_add_features(db, &k, "a=1,b"), CDB_ERR_ARG);
    CU_ASSERT_EQUAL(cdb_add_features(db, &k, "A=1"), CDB_ERR_ARG);
    CU_ASSERT_EQUAL(cdb_add_features(db, &k, ""), CDB_ERR_ARG);
    CU_ASSERT_EQUAL(cdb_flush(db, err, sizeof err), CDB_OK);
    cdb_close(db);
    db = open_db("rec.costs");
    const char *got = cdb_get_features(db, &k);
    CU_ASSERT_PTR_NOT_NULL_FATAL(got);
    CU_ASSERT_STRING_EQUAL(got, vec);
    cdb_key other = key_of(2, 8192);
    CU_ASSERT_PTR_NULL(cdb_get_features(db, &other));
    cdb_close(db);
    /* one f line only: the repeated add wrote nothing */
    char p[256], line[4096];
    snprintf(p, sizeof p, "%s/rec.costs", dir);
    FILE *f = fopen(p, "r");
    unsigned nf = 0;
    while (f && fgets(line, sizeof line, f))
        nf += line[0] == 'f';
    if (f)
        fclose(f);
    CU_ASSERT_EQUAL(nf, 1);
    /* malformed records: path:line */
    static const char *bad[] = {
        "clrr-costs\t1\nf\t00000000000000000000000000000001\tk\t1\t4,1,1\t0,0,0\tdim=1\n",
        "clrr-costs\t1\nf\t0001\tk\t1\t4,1,1\t0,0,0\tdim=1\t1\n",
        "clrr-costs\t1\nf\t00000000000000000000000000000001\tk\t4\t4,1,1\t0,0,0\tdim=1\t1\n",
        "clrr-costs\t1\nf\t00000000000000000000000000000001\tk\t1\t4,1,1\t0,0,0\tdim=x\t1\n",
    };
    for (unsigned i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        write_file("bad.costs", bad[i]);
        snprintf(p, sizeof p, "%s/bad.costs", dir);
        cdb *b = NULL;
        CU_ASSERT_EQUAL(cdb_open(p, &b, err, sizeof err), CDB_ERR_FORMAT);
        CU_ASSERT_PTR_NOT_NULL(strstr(err, "bad.costs:2: features record"));
        cdb_close(b);
    }
}

static void test_features(void)
{
    char vec[2048];
    float x[MODEL_NFEAT];
    features_of(1, 1000, vec, sizeof vec);
    CU_ASSERT_EQUAL(model_features_parse(vec, x), 0);
    CU_ASSERT_EQUAL(x[1], 1000.0f);                        /* work_items */
    CU_ASSERT_EQUAL(x[3], 64.0f);                          /* local_items */
    CU_ASSERT_DOUBLE_EQUAL(x[28], 1000.0 * 20, 1e-3);      /* total_ops = dyn_ops x work-items */
    CU_ASSERT_DOUBLE_EQUAL(x[31], 12.0, 1e-6);             /* bytes per item */
    CU_ASSERT_STRING_EQUAL(model_feature_name(28), "total_ops");
    CU_ASSERT_PTR_NULL(model_feature_name(MODEL_NFEAT));
    CU_ASSERT_EQUAL(model_features_parse("work_items=5,later_feature=3", x), 0);
    CU_ASSERT_EQUAL(x[1], 5.0f);
    CU_ASSERT(isnan(x[4]));
    CU_ASSERT_EQUAL(model_features_parse("work_items", x), -1);
    CU_ASSERT_EQUAL(model_features_parse("work_items=z", x), -1);
    char small[16];
    ana_features f;
    memset(&f, 0, sizeof f);
    CU_ASSERT_EQUAL(model_features_format(&f, 1, NULL, NULL, small, sizeof small), -1);
}

/* The cost rule of the synthetic machine: device 0 runs one work-item at a
 * time with little start-up cost, device 1 two at a time after a large one
 * (a thread pool): heavy launches go to 1, light ones to 0. */
static double cost_ns(unsigned dev, unsigned kern, uint64_t n)
{
    double work = (double)n * (7 + 12 * kern + kern % 3);
    return dev == 0 ? 2000 + work : 150000 + work / 2;
}

static cdb *fill_db(const char *name, unsigned nkern)
{
    char vec[2048], err[256];
    cdb *db = open_db(name);
    cdb_device devs[2] = {{ID0, "cpu", "basic", "PoCL"}, {ID1, "cpu", "pthread", "PoCL"}};
    CU_ASSERT_EQUAL_FATAL(cdb_set_devices(db, devs, 2), CDB_OK);
    for (unsigned kern = 0; kern < nkern; kern++)
        for (uint64_t n = 64; n <= 262144; n *= 4) {
            cdb_key k = key_of(kern, n);
            features_of(kern, n, vec, sizeof vec);
            CU_ASSERT_EQUAL_FATAL(cdb_add_features(db, &k, vec), CDB_OK);
            for (unsigned d = 0; d < 2; d++)
                for (unsigned r = 0; r < 3; r++)
                    CU_ASSERT_EQUAL_FATAL(cdb_add_kernel(db, d ? ID1 : ID0, &k, (n + 63) / 64,
                                                         (uint64_t)cost_ns(d, kern, n) + r), CDB_OK);
        }
    /* measured on one device only: not a sample; measured without features: not one either */
    cdb_key lone = key_of(nkern, 4096);
    features_of(nkern, 4096, vec, sizeof vec);
    CU_ASSERT_EQUAL(cdb_add_features(db, &lone, vec), CDB_OK);
    for (unsigned r = 0; r < 3; r++)
        CU_ASSERT_EQUAL(cdb_add_kernel(db, ID0, &lone, 64, 1000), CDB_OK);
    cdb_key bare = key_of(nkern + 1, 4096);
    for (unsigned d = 0; d < 2; d++)
        for (unsigned r = 0; r < 3; r++)
            CU_ASSERT_EQUAL(cdb_add_kernel(db, d ? ID1 : ID0, &bare, 64, 1000), CDB_OK);
    CU_ASSERT_EQUAL(cdb_flush(db, err, sizeof err), CDB_OK);
    return db;
}

static void test_data(void)
{
    char err[256];
    cdb *db = fill_db("data.costs", 6);
    model_data *d = NULL;
    CU_ASSERT_EQUAL_FATAL(model_data_from_cdb(db, &d, err, sizeof err), MODEL_OK);
    CU_ASSERT_EQUAL(d->ndevs, 2);
    CU_ASSERT_STRING_EQUAL(d->specs[0], "cpu0");
    CU_ASSERT_STRING_EQUAL(d->specs[1], "cpu1");
    CU_ASSERT_EQUAL(d->n, 6 * 7);
    CU_ASSERT_EQUAL(d->ngroups, 6);
    CU_ASSERT_EQUAL(d->partial, 1);
    CU_ASSERT_EQUAL(d->no_features, 1);
    for (size_t i = 0; i < d->n; i++) {
        const model_sample *s = &d->s[i];
        unsigned kern = (unsigned)(s->key.program[0] - 1);
        unsigned want = cost_ns(1, kern, s->key.gsz[0]) < cost_ns(0, kern, s->key.gsz[0]);
        CU_ASSERT_EQUAL(s->best, want);
    }
    model_data_free(d);
    cdb_close(db);
    /* no snapshot: refused with why */
    cdb *e = open_db("empty.costs");
    CU_ASSERT_EQUAL(model_data_from_cdb(e, &d, err, sizeof err), MODEL_ERR_DATA);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "no device snapshot"));
    cdb_close(e);
}

static void test_train_eval(void)
{
    char err[512], p[256];
    cdb *db = fill_db("train.costs", 10);
    model_data *d = NULL;
    CU_ASSERT_EQUAL_FATAL(model_data_from_cdb(db, &d, err, sizeof err), MODEL_OK);
    size_t ones = 0;
    for (size_t i = 0; i < d->n; i++)
        ones += d->s[i].best;
    CU_ASSERT(ones > d->n / 4 && ones < 3 * d->n / 4);   /* both devices win somewhere */
    for (int forest = 0; forest < 2; forest++) {
        model_params mp = {forest, 0, 0};
        model_eval e;
        unsigned fold[128], pick[128];
        CU_ASSERT_FATAL(d->n <= 128);
        CU_ASSERT_EQUAL_FATAL(model_cross_validate(d, 5, &mp, &e, fold, pick, err, sizeof err), MODEL_OK);
        CU_ASSERT_EQUAL(e.folds, 5);
        CU_ASSERT_EQUAL(e.n, d->n);
        /* kernels never in their own training folds: a kernel's samples share a fold */
        for (size_t i = 0; i < d->n; i++)
            for (size_t j = 0; j < d->n; j++)
                if (d->s[i].group == d->s[j].group)
                    CU_ASSERT_EQUAL(fold[i], fold[j]);
        double acc = (double)e.correct / (double)e.n, base = (double)e.baseline_correct / (double)e.n;
        printf("\n    %s: accuracy %.3f, baseline %.3f, geomean %.3f ", forest ? "forest" : "boost", acc, base,
               e.geomean_ratio);
        CU_ASSERT(acc >= 0.85);
        CU_ASSERT(acc > base);
        CU_ASSERT(e.geomean_ratio >= 1.0 && e.geomean_ratio < 1.1);
        CU_ASSERT(e.chosen_ns >= e.best_ns && e.chosen_ns < e.baseline_ns);
    }
    CU_ASSERT_EQUAL(model_cross_validate(d, 1, NULL, &(model_eval){0}, NULL, NULL, err, sizeof err), MODEL_ERR_ARG);
    /* train on all, save, load: the same predictions */
    model *m = NULL, *l = NULL;
    CU_ASSERT_EQUAL_FATAL(model_train(d, NULL, 0, NULL, &m, err, sizeof err), MODEL_OK);
    snprintf(p, sizeof p, "%s/model.json", dir);
    CU_ASSERT_EQUAL_FATAL(model_save(m, p, err, sizeof err), MODEL_OK);
    CU_ASSERT_EQUAL_FATAL(model_load(p, &l, err, sizeof err), MODEL_OK);
    CU_ASSERT_EQUAL(model_device_count(l), 2);
    CU_ASSERT_STRING_EQUAL(model_device(l, 1), ID1);
    for (size_t i = 0; i < d->n; i++) {
        unsigned a, b;
        double pa, pb;
        CU_ASSERT_EQUAL(model_predict(m, d->s[i].x, &a, &pa), MODEL_OK);
        CU_ASSERT_EQUAL(model_predict(l, d->s[i].x, &b, &pb), MODEL_OK);
        CU_ASSERT_EQUAL(a, b);
        CU_ASSERT_DOUBLE_EQUAL(pa, pb, 1e-6);
    }
    model_free(m);
    model_free(l);
    /* refused: missing, empty, not JSON, JSON without our attributes */
    CU_ASSERT_EQUAL(model_load("/nonexistent/model.json", &l, err, sizeof err), MODEL_ERR_IO);
    write_file("empty.json", "");
    snprintf(p, sizeof p, "%s/empty.json", dir);
    CU_ASSERT_EQUAL(model_load(p, &l, err, sizeof err), MODEL_ERR_FORMAT);
    write_file("junk.json", "{\"learner\": 3, garbage");
    snprintf(p, sizeof p, "%s/junk.json", dir);
    CU_ASSERT_EQUAL(model_load(p, &l, err, sizeof err), MODEL_ERR_FORMAT);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "junk.json: "));
    CU_ASSERT_PTR_NULL(strchr(err, '\n'));
    model_data one = *d;
    one.ndevs = 1;
    CU_ASSERT_EQUAL(model_train(&one, NULL, 0, NULL, &m, err, sizeof err), MODEL_ERR_DATA);
    model_data_free(d);
    cdb_close(db);
}

int main(void)
{
    if (!mkdtemp(dir))
        return 1;
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("model", NULL, NULL);
    CU_add_test(s, "features records: round trip, repeated, malformed", test_records);
    CU_add_test(s, "feature vectors: format, parse, derived", test_features);
    CU_add_test(s, "samples: every device measured, features present", test_data);
    CU_add_test(s, "train, cross-validate by kernel, save, load, refuse", test_train_eval);
    CU_basic_set_mode(CU_BRM_VERBOSE);
    CU_basic_run_tests();
    unsigned failed = CU_get_number_of_failures() + CU_get_number_of_tests_failed();
    CU_cleanup_registry();
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd))
        failed++;
    return failed ? 1 : 0;
}
