/*
 * cost_model.h - what the search asks before it measures (DESIGN.md, Cost
 * model): features of a lowered candidate, one row per buffer store, and a
 * model that scores candidates from them (XGBoost through its C API, or a
 * random model). docs/cost-model.md lists every feature.
 *
 * Errors: functions return an mlc status (support.h); the detail is in
 * mlc_error_last(). Nothing here aborts on bad input.
 */
#ifndef MLC_COST_MODEL_H
#define MLC_COST_MODEL_H

#include "tir/tir.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* Features                                                                  */
/* ------------------------------------------------------------------------ */

/* The width of a feature row (fixed: a model trained with one width cannot
 * read another; cm_model_load checks it). */
#define CM_FEATURE_DIM 164

/* Features of one candidate: nrows rows of CM_FEATURE_DIM floats, one per
 * buffer store in its lowered program (a program with no store has one row of
 * zeros). Values are log2(1 + |x|) scaled. `data` is owned (cm_features_free). */
typedef struct {
  int nrows;
  float *data; /* nrows * CM_FEATURE_DIM, row-major */
} cm_features_t;

/* Extracts the features of `lowered` (the output of mlc_lower for `target`:
 * flattened buffers, vectorized and unrolled loops). Thread-safe. */
int cm_extract(cm_features_t *out, const tir_func_t *lowered, const mlc_target_t *target);
void cm_features_free(cm_features_t *f); /* NULL or empty is fine */
/* "float_mad", "B0.bytes", ... (index < CM_FEATURE_DIM); NULL otherwise. */
const char *cm_feature_name(int index);

/* ------------------------------------------------------------------------ */
/* Models                                                                    */
/* ------------------------------------------------------------------------ */

typedef enum { CM_MODEL_XGB, CM_MODEL_RANDOM } cm_model_kind_t;

typedef struct cm_model cm_model_t;

/* A new, empty model. seed makes the random scores (and XGBoost's own
 * sampling) reproducible. */
int cm_model_create(cm_model_t **out, cm_model_kind_t kind, uint64_t seed);
void cm_model_free(cm_model_t *m); /* NULL is fine */
cm_model_kind_t cm_model_kind(const cm_model_t *m);

/* Adds n measured candidates of one task (`group`: the task's id, e.g. its
 * workload key mixed with its target; labels are normalised per group).
 * secs[i] is the candidate's median run time, or <= 0 for a failed one.
 * features[i] is borrowed. The XGBoost model retrains when its data has grown
 * by 20% since the last training (and at the first 100 samples); labels are
 * best-time-of-the-group / time (1.0 = the best seen, failures 0), the loss the
 * label-weighted squared error of each candidate's summed row predictions. */
int cm_model_update(cm_model_t *m, uint64_t group, const cm_features_t *features, const double *secs,
                    int n);

/* scores[i] for features[i]: higher is faster. A candidate's score is the
 * sum of its rows' predictions. Before the model has trained (fewer than 100
 * samples) and for the random model, scores are uniform random numbers. */
int cm_model_predict(cm_model_t *m, const cm_features_t *features, int n, double *scores);

/* Samples the model holds, and how many it was last trained on. */
int64_t cm_model_nsamples(const cm_model_t *m);
int64_t cm_model_ntrained(const cm_model_t *m);

/* Saves into directory `dir` (created if missing): the booster
 * (`model.json`, XGBoost's own format), the training data (`data.bin`) and
 * a `meta.json` (kind, feature width, counts), so a loaded model predicts
 * identically and keeps learning. Load checks all three and refuses a width
 * other than CM_FEATURE_DIM with MLC_EINVAL naming the file. */
int cm_model_save(const cm_model_t *m, const char *dir);
int cm_model_load(cm_model_t **out, const char *dir);

/* ------------------------------------------------------------------------ */
/* Quality (bench/, tests)                                                   */
/* ------------------------------------------------------------------------ */

/* Over pairs (i, j) with different measured times (failures count as
 * slowest), the fraction the scores order like the times. */
double cm_pairwise_accuracy(const double *scores, const double *secs, int n);
/* Of the k truly fastest, how many are among the k best scored, over k. */
double cm_top_k_recall(const double *scores, const double *secs, int n, int k);

#ifdef __cplusplus
}
#endif
#endif /* MLC_COST_MODEL_H */
