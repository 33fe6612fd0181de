/*
 * model.c - the cost model object: what every backend shares. It keeps the
 * measured samples (features and times, per task group), decides when the
 * backend retrains (at CM_MIN_TRAIN_SAMPLES, then each time the data grew by
 * CM_RETRAIN_GROWTH), answers with uniform random scores until the backend
 * has trained, and saves and loads the model directory. The backends
 * (xgb.c, random_model.c) implement cm_model_ops_t.
 */
#include <errno.h>
#include <math.h>
#include <string.h>
#include <sys/stat.h>

#include "cost-model/model.h"

static const cm_model_ops_t *ops_of(cm_model_kind_t kind) {
  switch (kind) {
  case CM_MODEL_XGB: return &cm_xgb_ops;
  case CM_MODEL_RANDOM: return &cm_random_ops;
  }
  return NULL;
}

static cm_model_t *model_new(cm_model_kind_t kind, uint64_t seed) {
  cm_model_t *m = mlc_calloc(1, sizeof *m);
  if (!m) return NULL;
  m->kind = kind;
  m->ops = ops_of(kind);
  m->seed = seed;
  mlc_rng_seed(&m->rng, seed);
  return m;
}

int cm_model_create(cm_model_t **out, cm_model_kind_t kind, uint64_t seed) {
  if (!out) return mlc_error_set(MLC_EINVAL, "cm_model_create: no output");
  *out = NULL;
  if (!ops_of(kind)) return mlc_error_set(MLC_EINVAL, "cm_model_create: unknown model kind %d", (int)kind);
  if (!(*out = model_new(kind, seed))) return mlc_error_set(MLC_ENOMEM, "cm_model_create: out of memory");
  return MLC_OK;
}

void cm_model_free(cm_model_t *m) {
  if (!m) return;
  if (m->ops->free_impl) m->ops->free_impl(m);
  mlc_vec_free(&m->data.samples);
  mlc_vec_free(&m->data.rows);
  mlc_free(m);
}

cm_model_kind_t cm_model_kind(const cm_model_t *m) { return m ? m->kind : CM_MODEL_RANDOM; }
int64_t cm_model_nsamples(const cm_model_t *m) { return m ? (int64_t)m->data.samples.len : 0; }
int64_t cm_model_ntrained(const cm_model_t *m) { return m ? m->ntrained : 0; }

/* ------------------------------------------------------------------------ */
/* Samples                                                                   */
/* ------------------------------------------------------------------------ */

static int check_features(const char *fn, const cm_features_t *features, int n) {
  if (n < 0) return mlc_error_set(MLC_EINVAL, "%s: negative count %d", fn, n);
  if (n > 0 && !features) return mlc_error_set(MLC_EINVAL, "%s: no features for %d candidates", fn, n);
  for (int i = 0; i < n; i++)
    if (features[i].nrows <= 0 || !features[i].data)
      return mlc_error_set(MLC_EINVAL, "%s: candidate %d has no feature rows", fn, i);
  return MLC_OK;
}

static int append(cm_data_t *d, uint64_t group, const cm_features_t *f, double secs) {
  size_t nfloats = (size_t)f->nrows * CM_FEATURE_DIM;
  if (mlc_vec_reserve(&d->rows, d->rows.len + nfloats) != MLC_OK ||
      mlc_vec_reserve(&d->samples, d->samples.len + 1) != MLC_OK)
    return mlc_error_set(MLC_ENOMEM, "cm_model_update: out of memory for %zu samples", d->samples.len + 1);
  cm_sample_t s = {group, secs > 0 ? secs : 0, (int64_t)(d->rows.len / CM_FEATURE_DIM), f->nrows};
  memcpy(d->rows.data + d->rows.len, f->data, nfloats * sizeof(float));
  d->rows.len += nfloats;
  d->samples.data[d->samples.len++] = s;
  return MLC_OK;
}

static bool due_for_training(const cm_model_t *m) {
  int64_t n = (int64_t)m->data.samples.len;
  if (!m->ops->train || n < CM_MIN_TRAIN_SAMPLES) return false;
  return m->ntrained == 0 || (double)n >= (double)m->ntrained * CM_RETRAIN_GROWTH;
}

int cm_model_update(cm_model_t *m, uint64_t group, const cm_features_t *features, const double *secs, int n) {
  if (!m) return mlc_error_set(MLC_EINVAL, "cm_model_update: no model");
  int rc = check_features("cm_model_update", features, n);
  if (rc != MLC_OK) return rc;
  if (n > 0 && !secs) return mlc_error_set(MLC_EINVAL, "cm_model_update: no times for %d candidates", n);
  for (int i = 0; i < n; i++)
    if (isnan(secs[i])) return mlc_error_set(MLC_EINVAL, "cm_model_update: candidate %d has a NaN time", i);
  size_t nsamples = m->data.samples.len, nfloats = m->data.rows.len;
  for (int i = 0; i < n; i++) {
    if ((rc = append(&m->data, group, &features[i], secs[i])) != MLC_OK) {
      m->data.samples.len = nsamples; /* all or nothing */
      m->data.rows.len = nfloats;
      return rc;
    }
  }
  return due_for_training(m) ? m->ops->train(m) : MLC_OK;
}

typedef struct {
  uint64_t group;
  size_t index;
} by_group_t;

static int cmp_group(const void *x, const void *y) {
  const by_group_t *a = x, *b = y;
  if (a->group != b->group) return a->group < b->group ? -1 : 1;
  return (a->index > b->index) - (a->index < b->index);
}

int cm_data_labels(const cm_data_t *d, float *labels) {
  size_t n = d->samples.len;
  by_group_t *order = mlc_malloc(sizeof *order * (n ? n : 1));
  if (!order) return mlc_error_set(MLC_ENOMEM, "cost model: out of memory for %zu labels", n);
  for (size_t i = 0; i < n; i++) order[i] = (by_group_t){d->samples.data[i].group, i};
  qsort(order, n, sizeof *order, cmp_group);
  for (size_t lo = 0, hi; lo < n; lo = hi) {
    double best = 0;
    for (hi = lo; hi < n && order[hi].group == order[lo].group; hi++) {
      double secs = d->samples.data[order[hi].index].secs;
      if (secs > 0 && (best == 0 || secs < best)) best = secs;
    }
    for (size_t k = lo; k < hi; k++) {
      double secs = d->samples.data[order[k].index].secs;
      labels[order[k].index] = secs > 0 && best > 0 ? (float)(best / secs) : 0.0f;
    }
  }
  mlc_free(order);
  return MLC_OK;
}

int cm_model_predict(cm_model_t *m, const cm_features_t *features, int n, double *scores) {
  if (!m) return mlc_error_set(MLC_EINVAL, "cm_model_predict: no model");
  int rc = check_features("cm_model_predict", features, n);
  if (rc != MLC_OK) return rc;
  if (n > 0 && !scores) return mlc_error_set(MLC_EINVAL, "cm_model_predict: no room for %d scores", n);
  if (m->ntrained > 0 && m->ops->predict) return m->ops->predict(m, features, n, scores);
  return cm_random_ops.predict(m, features, n, scores);
}

/* ------------------------------------------------------------------------ */
/* Save and load                                                             */
/* ------------------------------------------------------------------------ */

int cm_path_join(char *buf, size_t len, const char *dir, const char *name) {
  int w = snprintf(buf, len, "%s/%s", dir, name);
  if (w < 0 || (size_t)w >= len) return mlc_error_set(MLC_EINVAL, "%s/%s: path too long", dir, name);
  return MLC_OK;
}

/* mkdir -p */
static int make_dir(const char *dir) {
  char path[4096];
  size_t len = strlen(dir);
  if (len == 0 || len >= sizeof path) return mlc_error_set(MLC_EINVAL, "cm_model_save: bad directory '%s'", dir);
  memcpy(path, dir, len + 1);
  for (size_t i = 1; i <= len; i++) {
    if (path[i] != '/' && path[i] != '\0') continue;
    char c = path[i];
    path[i] = '\0';
    if (mkdir(path, 0777) != 0 && errno != EEXIST)
      return mlc_error_set(MLC_EIO, "%s: cannot create directory: %s", path, strerror(errno));
    path[i] = c;
  }
  struct stat st;
  if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) return mlc_error_set(MLC_EIO, "%s: not a directory", dir);
  return MLC_OK;
}

int cm_model_save(const cm_model_t *m, const char *dir) {
  if (!m || !dir) return mlc_error_set(MLC_EINVAL, "cm_model_save: %s", m ? "no directory" : "no model");
  char path[4096];
  int rc = make_dir(dir);
  if (rc == MLC_OK && m->ops->save) rc = m->ops->save(m, dir);
  if (rc == MLC_OK) rc = cm_path_join(path, sizeof path, dir, "data.bin");
  if (rc == MLC_OK) rc = cm_data_save(&m->data, path);
  /* meta.json last: a directory with a readable meta.json is complete. */
  if (rc == MLC_OK) rc = cm_path_join(path, sizeof path, dir, "meta.json");
  if (rc == MLC_OK) rc = cm_meta_save(m, path);
  return rc;
}

int cm_model_load(cm_model_t **out, const char *dir) {
  if (!out || !dir) return mlc_error_set(MLC_EINVAL, "cm_model_load: %s", out ? "no directory" : "no output");
  *out = NULL;
  char path[4096];
  int64_t nsamples = 0;
  cm_model_t *m = model_new(CM_MODEL_RANDOM, 0);
  if (!m) return mlc_error_set(MLC_ENOMEM, "cm_model_load: out of memory");
  int rc = cm_path_join(path, sizeof path, dir, "meta.json");
  if (rc == MLC_OK) rc = cm_meta_load(m, &nsamples, path);
  if (rc == MLC_OK) rc = cm_path_join(path, sizeof path, dir, "data.bin");
  if (rc == MLC_OK) rc = cm_data_load(&m->data, path);
  if (rc == MLC_OK && (int64_t)m->data.samples.len != nsamples)
    rc = mlc_error_set(MLC_EPARSE, "%s: holds %zu samples, meta.json says %lld", path, m->data.samples.len,
                       (long long)nsamples);
  if (rc == MLC_OK && m->ntrained > (int64_t)m->data.samples.len)
    rc = mlc_error_set(MLC_EPARSE, "%s/meta.json: trained on %lld samples of %zu", dir, (long long)m->ntrained,
                       m->data.samples.len);
  if (rc == MLC_OK && m->ops->load) rc = m->ops->load(m, dir);
  if (rc != MLC_OK) {
    cm_model_free(m);
    return rc;
  }
  *out = m;
  return MLC_OK;
}
