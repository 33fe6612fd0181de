/*
 * model.h - what the model files share (private to cost-model/): the
 * model object, its backend vtable (XGBoost in xgb.c, uniform random in
 * random_model.c), the training data it holds (model.c) and its files
 * (model_io.c).
 */
#ifndef MLC_COST_MODEL_MODEL_H
#define MLC_COST_MODEL_MODEL_H

#include "cost-model/cost_model.h"

/* The XGBoost model scores randomly until it holds this many samples. */
#define CM_MIN_TRAIN_SAMPLES 100
/* ... and retrains when its data has grown by this factor since. */
#define CM_RETRAIN_GROWTH 1.2

/* One measured candidate. */
typedef struct {
  uint64_t group;          /* task id: labels are normalised per group */
  double secs;             /* median run time; <= 0 for a failure */
  int64_t row;             /* its first row in cm_data_t.rows */
  int32_t nrows;
} cm_sample_t;

/* Training data: samples and their feature rows, appended in arrival order. */
typedef struct {
  MLC_VEC(cm_sample_t) samples;
  MLC_VEC(float) rows;     /* nrows * CM_FEATURE_DIM floats */
} cm_data_t;

typedef struct {
  const char *name;        /* "xgb", "random": meta.json's kind */
  /* Trains on m->data (MLC_OK or an error with a detail). NULL: never trains. */
  int (*train)(cm_model_t *m);
  /* Scores with the trained model (only called once m->ntrained > 0). */
  int (*predict)(cm_model_t *m, const cm_features_t *features, int n, double *scores);
  /* Writes / reads the backend's own files in dir (NULL: none). */
  int (*save)(const cm_model_t *m, const char *dir);
  int (*load)(cm_model_t *m, const char *dir);
  void (*free_impl)(cm_model_t *m);
} cm_model_ops_t;

struct cm_model {
  cm_model_kind_t kind;
  const cm_model_ops_t *ops;
  uint64_t seed;
  mlc_rng_t rng;           /* random scores (and the validation split) */
  cm_data_t data;
  int64_t ntrained;        /* samples at the last training, 0 = never */
  int rounds;              /* boosting rounds the trained model has */
  void *impl;              /* the backend's state (a BoosterHandle) */
};

extern const cm_model_ops_t cm_xgb_ops;
extern const cm_model_ops_t cm_random_ops;

/* Labels of every sample: best secs of its group / secs, 0 for failures
 * (or a group with no success). labels has data.samples.len entries.
 * MLC_OK or MLC_ENOMEM. */
int cm_data_labels(const cm_data_t *d, float *labels);

/* data.bin and meta.json (model_io.c). Errors name the file. */
int cm_data_save(const cm_data_t *d, const char *path);
int cm_data_load(cm_data_t *d, const char *path);
int cm_meta_save(const cm_model_t *m, const char *path);
/* Reads meta.json into a fresh model's fields (kind, ops, seed, rng,
 * ntrained, rounds) and the sample count it promises. */
int cm_meta_load(cm_model_t *m, int64_t *nsamples, const char *path);

/* "dir/name" into buf; MLC_EINVAL when it does not fit. */
int cm_path_join(char *buf, size_t len, const char *dir, const char *name);

#endif /* MLC_COST_MODEL_MODEL_H */
