/* model/model.h — the learned device-selection model (model/README.md).
 *
 * For a kernel launch shape that nobody measured, which device of this
 * machine runs it fastest? A classifier answers from the launch's dynamic
 * features (the kernel analysis' instruction mix, memory accesses by
 * stride class, loop trip counts, and the launch's sizes and bytes; the
 * dynamic-features device-selection paper's set plus a few derived ones).
 * It is trained with XGBoost (C API, gradient-boosted trees, multi-class
 * softprob; a random-forest mode on request) on the cost database
 * (costs/cdb.h): every launch shape measured on every device of the
 * machine, with its features recorded (`f` records, written by `clrr
 * profile`), is one sample whose label is the device with the least time.
 *
 * One model per machine: its classes are the devices of the cost
 * database's snapshot, by identity, stored in the model file beside the
 * trees (XGBoost's JSON model, attributes clrr_*).
 *
 * Uses costs/ and analyzer/'s feature types (no LLVM: the analysis is run
 * by the caller); links libxgboost. Not thread-safe: one model per thread. */
#ifndef CLRR_MODEL_H
#define CLRR_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "analyzer/ana.h"
#include "costs/cdb.h"

#define MODEL_FORMAT 1            /* the clrr_model attribute of a model file */
#define MODEL_MAX_DEVICES 16      /* classes, at most */
#define MODEL_NFEAT 33            /* features per sample (model_feature_name) */
#define MODEL_NSTORED 28          /* of which stored in `f` records; the rest derived */

typedef enum model_status {
    MODEL_OK = 0,
    MODEL_ERR_IO = -1,        /* a file cannot be read or written */
    MODEL_ERR_FORMAT = -2,    /* a model file that is not one of ours (err says why) */
    MODEL_ERR_NOMEM = -3,
    MODEL_ERR_ARG = -4,
    MODEL_ERR_DATA = -5,      /* too few samples, kernels or devices to train (err says) */
    MODEL_ERR_LIB = -6,       /* XGBoost failed (its message in err) */
} model_status;

/*! model_strerror() : a static description of @p s. */
const char *model_strerror(model_status s);

/*! model_feature_name() : the name of feature @p i (< MODEL_NFEAT), static;
 *  NULL past the end. */
const char *model_feature_name(unsigned i);

/* ------------------------------------------------------------ features */

/* What a launch's memory arguments move: bytes of the buffer regions it
 * reads and writes (the analysis' regions; whole buffers when unknown). */
typedef struct model_launch_bytes {
    uint64_t in, out;
} model_launch_bytes;

/*! model_features_format() : the `f` record vector (cdb_add_features) of
 *  a launch: the stored features of @p f (ana_kernel_features of the
 *  launch), its local size @p lsz (NULL or all 0: the driver's) and
 *  @p bytes, written into @p buf (@p cap bytes). @return 0, or -1 when it
 *  does not fit. Thread-safe. */
int model_features_format(const ana_features *f, unsigned dim, const uint64_t lsz[3], const model_launch_bytes *bytes,
                          char *buf, size_t cap);
/*! model_features_parse() : the MODEL_NFEAT features of vector @p vec
 *  (the stored ones by name, unknown names ignored, missing ones NaN; the
 *  derived ones computed) into @p x. @return 0, or -1 when @p vec is
 *  malformed. Thread-safe. */
int model_features_parse(const char *vec, float x[MODEL_NFEAT]);

/* ------------------------------------------------------------ samples */

typedef struct model_sample {
    cdb_key key;              /* key.kernel owned by the data set */
    uint64_t group;           /* the kernel (program + name) it belongs to */
    float x[MODEL_NFEAT];
    double ns[MODEL_MAX_DEVICES];  /* full-size time per device (model_data.devs order) */
    unsigned best;            /* the device with the least time */
} model_sample;

typedef struct model_data {
    unsigned ndevs;
    char *devs[MODEL_MAX_DEVICES];  /* identities, in the snapshot's order (owned) */
    char *specs[MODEL_MAX_DEVICES]; /* "cpu0", "gpu1", ... as `clrr devices` names them (owned) */
    model_sample *s;
    size_t n;
    size_t ngroups;           /* distinct kernels among the samples */
    size_t no_features;       /* shapes measured everywhere but with no `f` record */
    size_t partial;           /* shapes with features not measured on every device */
} model_data;

/*! model_data_from_cdb() : the samples of @p db: every launch shape with a
 *  features record and a trusted time at its full number of work-groups
 *  on every device of the snapshot that has kernel samples (devices with
 *  none are left out of the classes). *out is the caller's
 *  (model_data_free). @return MODEL_OK (possibly with no samples),
 *  MODEL_ERR_DATA (no snapshot, more than MODEL_MAX_DEVICES devices),
 *  MODEL_ERR_NOMEM; @p err says why. */
model_status model_data_from_cdb(cdb *db, model_data **out, char *err, size_t cap);
/*! model_data_free() : frees @p d. Accepts NULL. */
void model_data_free(model_data *d);

/* ------------------------------------------------------------ the model */

typedef struct model model;

typedef struct model_params {
    int forest;               /* 1: XGBoost's random-forest mode (one round of
                                 num_parallel_tree trees, row and column
                                 subsampling); 0: gradient boosting */
    unsigned rounds;          /* boosting rounds (0: 60) or forest trees (0: 100) */
    unsigned depth;           /* max tree depth (0: 4; forest 6) */
} model_params;

/*! model_train() : trains a model on the samples @p idx[0..n) of @p d
 *  (all of them when @p idx is NULL, @p n ignored). Samples weigh
 *  1 + log2(slowest / fastest) (shapes where the choice matters most count
 *  most). Deterministic (seed 0, one thread). @return MODEL_OK with *out
 *  the caller's (model_free); MODEL_ERR_DATA (no sample, fewer than 2
 *  devices), MODEL_ERR_LIB, MODEL_ERR_NOMEM. */
model_status model_train(const model_data *d, const size_t *idx, size_t n, const model_params *p, model **out,
                         char *err, size_t cap);
/*! model_save() / model_load() : XGBoost's JSON model file at @p path,
 *  with the classes and feature names as attributes. load refuses
 *  (MODEL_ERR_FORMAT, err says why) a file XGBoost cannot read or one
 *  without our attributes (format, features, devices); MODEL_ERR_IO when
 *  it cannot be opened. */
model_status model_save(const model *m, const char *path, char *err, size_t cap);
model_status model_load(const char *path, model **out, char *err, size_t cap);
/*! model_free() : accepts NULL. */
void model_free(model *m);
/*! model_device_count() / model_device() : the classes (identities, owned
 *  by @p m). */
unsigned model_device_count(const model *m);
const char *model_device(const model *m, unsigned i);
/*! model_predict() : the device (class index) predicted fastest for
 *  features @p x, and its probability (@p prob may be NULL). @return
 *  MODEL_OK or MODEL_ERR_LIB. */
model_status model_predict(const model *m, const float x[MODEL_NFEAT], unsigned *best, double *prob);

/* ------------------------------------------------------------ evaluation */

typedef struct model_eval {
    unsigned folds;           /* folds used (min(K, kernels)) */
    size_t n, ngroups;        /* samples, kernels */
    size_t correct;           /* the model picked the fastest device */
    size_t baseline_correct;  /* always the device fastest most often in the training folds */
    double best_ns;           /* sum over samples: the oracle's time */
    double chosen_ns;         /* ... the model's choices */
    double baseline_ns;       /* ... the baseline's */
    double geomean_ratio;     /* geomean over samples of chosen / best (1: perfect) */
    double geomean_ratio_wrong; /* ... over the wrong choices only (1 when none) */
    double max_ratio;         /* the worst choice */
    double baseline_geomean_ratio;
} model_eval;

/*! model_cross_validate() : @p k-fold cross-validation grouped by kernel:
 *  the kernels (program and name) are dealt to the folds, so a kernel's
 *  shapes are all in one fold and never in its own training set; each
 *  fold is predicted by a model trained on the others. @return MODEL_OK;
 *  MODEL_ERR_DATA (fewer than 2 kernels or 2 devices), MODEL_ERR_ARG (k < 2),
 *  what model_train returns. @p fold_of (may be NULL; n entries) gets each
 *  sample's fold and @p pick (may be NULL) each sample's predicted device. */
model_status model_cross_validate(const model_data *d, unsigned k, const model_params *p, model_eval *out,
                                  unsigned *fold_of, unsigned *pick, char *err, size_t cap);

#endif
