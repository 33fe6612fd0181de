/*
 * xgb.c - the XGBoost cost model through XGBoost's C API, trained the way
 * MetaSchedule's xgb_model.py does: gradient-boosted trees over feature
 * rows, with the "pack-sum" objective computed here. A candidate's score is
 * the sum of its rows' predictions; its label is best time of its group /
 * its time; the loss is sum over candidates of label * (score - label)^2,
 * so each row of a candidate gets gradient (score - label) * label and
 * hessian label (XGBoosterBoostOneIter).
 *
 * Training (every CM_RETRAIN_GROWTH of new data, from scratch): a seeded
 * 20% of the candidates is held out; boosting runs up to XGB_MAX_ROUNDS
 * rounds and stops when the held-out label-weighted RMSE has not improved
 * for XGB_EARLY_STOP rounds; then a fresh booster is trained on all the
 * data for the best number of rounds. Parameters are MetaSchedule's
 * (max_depth 10, gamma 0.001, min_child_weight 0, eta 0.2) with 2 threads.
 * XGBoost's logging is silenced and routed to mlc's debug log; its errors
 * become mlc errors.
 */
#include <math.h>
#include <pthread.h>
#include <string.h>

#include <xgboost/c_api.h>

#include "cost-model/model.h"

#define XGB_MAX_ROUNDS 300
#define XGB_EARLY_STOP 30
#define XGB_VALID_PERCENT 20
#define XGB_NTHREAD 1

static const char *const XGB_PARAMS[][2] = {
    {"booster", "gbtree"},      {"objective", "reg:squarederror"}, {"base_score", "0"},
    {"tree_method", "hist"},    {"max_depth", "10"},               {"gamma", "0.001"},
    {"min_child_weight", "0"},  {"eta", "0.2"},                    {"nthread", "1"},
    {"verbosity", "0"},         {"disable_default_eval_metric", "1"},
};

static const char *const PREDICT_MARGIN =
    "{\"type\": 1, \"training\": false, \"iteration_begin\": 0, \"iteration_end\": 0, \"strict_shape\": false}";

static pthread_once_t xgb_once = PTHREAD_ONCE_INIT;

static void xgb_log(const char *msg) { MLC_DEBUG("xgboost: %s", msg); }

static void xgb_init(void) {
  XGBSetGlobalConfig("{\"verbosity\": 0}");
  XGBRegisterLogCallback(xgb_log);
}

static int xgb_error(int code, const char *what) {
  const char *detail = XGBGetLastError();
  return mlc_error_set(code, "xgboost: %s: %s", what, detail && *detail ? detail : "failed");
}

static int set_params(BoosterHandle b, uint64_t seed) {
  for (size_t i = 0; i < sizeof XGB_PARAMS / sizeof XGB_PARAMS[0]; i++)
    if (XGBoosterSetParam(b, XGB_PARAMS[i][0], XGB_PARAMS[i][1]) != 0) return xgb_error(MLC_EINTERNAL, "set_param");
  char buf[32];
  snprintf(buf, sizeof buf, "%llu", (unsigned long long)(seed & 0x7fffffff));
  if (XGBoosterSetParam(b, "seed", buf) != 0) return xgb_error(MLC_EINTERNAL, "set_param");
  return MLC_OK;
}

/* ------------------------------------------------------------------------ */
/* Row sets                                                                  */
/* ------------------------------------------------------------------------ */

/* Candidates as one DMatrix of their rows, each row knowing its candidate. */
typedef struct {
  DMatrixHandle dm;
  int ncand;
  int64_t nrows;
  int *row_cand;           /* nrows: index into labels */
  float *labels;           /* ncand */
  double *sums;            /* ncand: scratch for summed predictions */
} row_set_t;

static void set_free(row_set_t *s) {
  if (s->dm) XGDMatrixFree(s->dm);
  mlc_free(s->row_cand);
  mlc_free(s->labels);
  mlc_free(s->sums);
  memset(s, 0, sizeof *s);
}

/* Rows of features[0..n) (feats) or of samples idx[0..n) of d. */
static int set_build(row_set_t *s, const cm_data_t *d, const int *idx, const float *labels,
                     const cm_features_t *feats, int n) {
  memset(s, 0, sizeof *s);
  s->ncand = n;
  for (int c = 0; c < n; c++) s->nrows += feats ? feats[c].nrows : d->samples.data[idx[c]].nrows;
  float *rows = mlc_malloc(sizeof(float) * (size_t)(s->nrows ? s->nrows : 1) * CM_FEATURE_DIM);
  s->row_cand = mlc_malloc(sizeof(int) * (size_t)(s->nrows ? s->nrows : 1));
  s->labels = mlc_calloc((size_t)(n ? n : 1), sizeof(float));
  s->sums = mlc_calloc((size_t)(n ? n : 1), sizeof(double));
  if (!rows || !s->row_cand || !s->labels || !s->sums) {
    mlc_free(rows);
    set_free(s);
    return mlc_error_set(MLC_ENOMEM, "xgboost: out of memory for %lld feature rows", (long long)s->nrows);
  }
  int64_t r = 0;
  for (int c = 0; c < n; c++) {
    int nr = feats ? feats[c].nrows : d->samples.data[idx[c]].nrows;
    const float *src = feats ? feats[c].data : d->rows.data + d->samples.data[idx[c]].row * CM_FEATURE_DIM;
    memcpy(rows + r * CM_FEATURE_DIM, src, sizeof(float) * (size_t)nr * CM_FEATURE_DIM);
    for (int k = 0; k < nr; k++) s->row_cand[r + k] = c;
    r += nr;
    if (labels) s->labels[c] = labels[idx[c]];
  }
  int rc = MLC_OK;
  if (XGDMatrixCreateFromMat_omp(rows, (bst_ulong)s->nrows, CM_FEATURE_DIM, NAN, &s->dm, XGB_NTHREAD) != 0) {
    s->dm = NULL;
    rc = xgb_error(MLC_EINTERNAL, "DMatrix");
    set_free(s);
  }
  mlc_free(rows);
  return rc;
}

/* s->sums = each candidate's summed row margins. */
static int set_predict(BoosterHandle b, row_set_t *s) {
  bst_ulong const *shape = NULL;
  bst_ulong dim = 0;
  const float *out = NULL;
  if (XGBoosterPredictFromDMatrix(b, s->dm, PREDICT_MARGIN, &shape, &dim, &out) != 0)
    return xgb_error(MLC_EINTERNAL, "predict");
  if (dim < 1 || shape[0] != (bst_ulong)s->nrows)
    return mlc_error_set(MLC_EINTERNAL, "xgboost: predict: %llu values for %lld rows",
                         (unsigned long long)(dim ? shape[0] : 0), (long long)s->nrows);
  memset(s->sums, 0, sizeof(double) * (size_t)s->ncand);
  for (int64_t r = 0; r < s->nrows; r++) s->sums[s->row_cand[r]] += out[r];
  return MLC_OK;
}

/* Label-weighted RMSE of the summed predictions (the loss, as a metric). */
static double set_rmse(const row_set_t *s) {
  double num = 0, den = 0;
  for (int c = 0; c < s->ncand; c++) {
    double e = s->sums[c] - s->labels[c];
    num += s->labels[c] * e * e;
    den += s->labels[c];
  }
  return den > 0 ? sqrt(num / den) : 0;
}

/* ------------------------------------------------------------------------ */
/* Boosting                                                                  */
/* ------------------------------------------------------------------------ */

/* One round of the pack-sum objective on s. */
static int boost_round(BoosterHandle b, row_set_t *s, float *grad, float *hess) {
  int rc = set_predict(b, s);
  if (rc != MLC_OK) return rc;
  for (int64_t r = 0; r < s->nrows; r++) {
    double y = s->labels[s->row_cand[r]];
    grad[r] = (float)((s->sums[s->row_cand[r]] - y) * y);
    hess[r] = (float)y;
  }
  if (XGBoosterBoostOneIter(b, s->dm, grad, hess, (bst_ulong)s->nrows) != 0)
    return xgb_error(MLC_EINTERNAL, "boost");
  return MLC_OK;
}

/* A booster trained on `train` for `rounds` rounds, or, with `valid`, until
 * its RMSE stops improving (*best: the best round count). */
static int boost(BoosterHandle *out, row_set_t *train, row_set_t *valid, int rounds, uint64_t seed, int *best) {
  DMatrixHandle cache[2] = {train->dm, valid ? valid->dm : NULL};
  BoosterHandle b = NULL;
  float *grad = mlc_malloc(sizeof(float) * (size_t)train->nrows);
  float *hess = mlc_malloc(sizeof(float) * (size_t)train->nrows);
  int rc = MLC_OK;
  double best_rmse = INFINITY;
  *best = rounds;
  if (!grad || !hess) {
    rc = mlc_error_set(MLC_ENOMEM, "xgboost: out of memory for %lld gradients", (long long)train->nrows);
    goto done;
  }
  if (XGBoosterCreate(cache, valid ? 2 : 1, &b) != 0) {
    rc = xgb_error(MLC_EINTERNAL, "create");
    goto done;
  }
  if ((rc = set_params(b, seed)) != MLC_OK) goto done;
  for (int round = 0; round < rounds; round++) {
    if ((rc = boost_round(b, train, grad, hess)) != MLC_OK) goto done;
    if (!valid) continue;
    if ((rc = set_predict(b, valid)) != MLC_OK) goto done;
    double rmse = set_rmse(valid);
    if (rmse < best_rmse - 1e-9) best_rmse = rmse, *best = round + 1;
    else if (round + 1 - *best >= XGB_EARLY_STOP) break;
  }
done:
  mlc_free(grad);
  mlc_free(hess);
  if (rc != MLC_OK && b) XGBoosterFree(b), b = NULL;
  *out = b;
  return rc;
}

/* Samples in a seeded order: the first XGB_VALID_PERCENT% are held out. */
static int *shuffled(int n, uint64_t seed) {
  int *idx = mlc_malloc(sizeof(int) * (size_t)(n ? n : 1));
  if (!idx) return NULL;
  mlc_rng_t rng;
  mlc_rng_seed(&rng, seed);
  for (int i = 0; i < n; i++) idx[i] = i;
  for (int i = n - 1; i > 0; i--) {
    int j = (int)mlc_rng_below(&rng, (uint64_t)i + 1);
    int t = idx[i];
    idx[i] = idx[j];
    idx[j] = t;
  }
  return idx;
}

/* The best round count on a held-out split. */
static int find_rounds(cm_model_t *m, const float *labels, int n, int *idx, int *rounds) {
  row_set_t train, valid;
  BoosterHandle b = NULL;
  int nvalid = n * XGB_VALID_PERCENT / 100;
  int rc = set_build(&valid, &m->data, idx, labels, NULL, nvalid);
  if (rc != MLC_OK) return rc;
  if ((rc = set_build(&train, &m->data, idx + nvalid, labels, NULL, n - nvalid)) != MLC_OK) {
    set_free(&valid);
    return rc;
  }
  double weight = 0;
  for (int c = 0; c < valid.ncand; c++) weight += valid.labels[c];
  /* A held-out part with no success cannot score: stop on the training loss. */
  rc = boost(&b, &train, weight > 0 ? &valid : &train, XGB_MAX_ROUNDS, m->seed, rounds);
  if (b) XGBoosterFree(b);
  set_free(&train);
  set_free(&valid);
  return rc;
}

static int xgb_train(cm_model_t *m) {
  pthread_once(&xgb_once, xgb_init);
  int n = (int)m->data.samples.len, rounds = 0, rc;
  float *labels = mlc_malloc(sizeof(float) * (size_t)n);
  int *idx = shuffled(n, m->seed ^ ((uint64_t)n * 0x9e3779b97f4a7c15ULL));
  row_set_t all;
  memset(&all, 0, sizeof all);
  BoosterHandle b = NULL;
  if (!labels || !idx) {
    rc = mlc_error_set(MLC_ENOMEM, "xgboost: out of memory for %d labels", n);
    goto done;
  }
  if ((rc = cm_data_labels(&m->data, labels)) != MLC_OK) goto done;
  bool any = false;
  for (int i = 0; i < n && !any; i++) any = labels[i] > 0;
  if (!any) goto done; /* nothing succeeded yet: keep scoring randomly */
  if ((rc = find_rounds(m, labels, n, idx, &rounds)) != MLC_OK) goto done;
  for (int i = 0; i < n; i++) idx[i] = i;
  if ((rc = set_build(&all, &m->data, idx, labels, NULL, n)) != MLC_OK) goto done;
  if ((rc = boost(&b, &all, NULL, rounds, m->seed, &rounds)) != MLC_OK) goto done;
  if (m->impl) XGBoosterFree(m->impl);
  m->impl = b;
  m->ntrained = n;
  m->rounds = rounds;
  MLC_DEBUG("cost model: trained on %d samples, %d rounds", n, rounds);
done:
  set_free(&all);
  mlc_free(labels);
  mlc_free(idx);
  return rc;
}

static int xgb_predict(cm_model_t *m, const cm_features_t *features, int n, double *scores) {
  row_set_t s;
  int rc = set_build(&s, NULL, NULL, NULL, features, n);
  if (rc != MLC_OK) return rc;
  if ((rc = set_predict(m->impl, &s)) == MLC_OK)
    for (int c = 0; c < n; c++) scores[c] = s.sums[c];
  set_free(&s);
  return rc;
}

/* ------------------------------------------------------------------------ */
/* Files                                                                     */
/* ------------------------------------------------------------------------ */

static int xgb_save(const cm_model_t *m, const char *dir) {
  char path[4096];
  int rc = cm_path_join(path, sizeof path, dir, "model.json");
  if (rc != MLC_OK || !m->impl) return rc;
  bst_ulong len = 0;
  const char *buf = NULL;
  if (XGBoosterSaveModelToBuffer(m->impl, "{\"format\": \"json\"}", &len, &buf) != 0)
    return xgb_error(MLC_EIO, path);
  return mlc_write_file(path, buf, (size_t)len);
}

/* model.json must be JSON XGBoost wrote, for this width and round count. */
static int load_booster(cm_model_t *m, const char *path, const char *text, size_t len) {
  json_t *json = mlc_json_loads(text, path);
  if (!json) return MLC_EPARSE;
  bool ok = json_is_object(json_object_get(json, "learner"));
  json_decref(json);
  if (!ok) return mlc_error_set(MLC_EPARSE, "%s: not an XGBoost model (no 'learner')", path);
  BoosterHandle b = NULL;
  bst_ulong nfeat = 0;
  int rounds = 0, rc = MLC_OK;
  if (XGBoosterCreate(NULL, 0, &b) != 0) return xgb_error(MLC_EINTERNAL, "create");
  if (XGBoosterLoadModelFromBuffer(b, text, (bst_ulong)len) != 0) {
    rc = xgb_error(MLC_EPARSE, path);
    goto done;
  }
  if ((rc = set_params(b, m->seed)) != MLC_OK) goto done;
  if (XGBoosterGetNumFeature(b, &nfeat) != 0 || nfeat != CM_FEATURE_DIM) {
    rc = mlc_error_set(MLC_EINVAL, "%s: the model reads %llu features, this build has %d", path,
                       (unsigned long long)nfeat, CM_FEATURE_DIM);
    goto done;
  }
  if (XGBoosterBoostedRounds(b, &rounds) != 0 || rounds != m->rounds)
    rc = mlc_error_set(MLC_EPARSE, "%s: %d boosting rounds, meta.json says %d", path, rounds, m->rounds);
done:
  if (rc != MLC_OK) XGBoosterFree(b);
  else m->impl = b;
  return rc;
}

static int xgb_load(cm_model_t *m, const char *dir) {
  pthread_once(&xgb_once, xgb_init);
  if (m->ntrained == 0) return MLC_OK; /* never trained: no model.json */
  char path[4096];
  char *text = NULL;
  size_t len = 0;
  int rc = cm_path_join(path, sizeof path, dir, "model.json");
  if (rc == MLC_OK) rc = mlc_read_file(&text, &len, path);
  if (rc == MLC_OK) rc = load_booster(m, path, text, len);
  mlc_free(text);
  return rc;
}

static void xgb_free(cm_model_t *m) {
  if (m->impl) XGBoosterFree(m->impl);
  m->impl = NULL;
}

const cm_model_ops_t cm_xgb_ops = {
    .name = "xgb",
    .train = xgb_train,
    .predict = xgb_predict,
    .save = xgb_save,
    .load = xgb_load,
    .free_impl = xgb_free,
};
