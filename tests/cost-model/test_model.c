/*
 * test_model.c - the cost models: XGBoost learns a synthetic ranking and
 * ranks held-out candidates, a saved model loads and predicts bit for bit
 * the same (and keeps learning the same way), retraining happens at 100
 * samples and at each 20% of growth, the random model is reproducible,
 * damaged model directories give errors naming the file, and the quality
 * helpers compute what they say.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cost-model/cost_model.h"

/* ------------------------------------------------------------------------ */
/* Synthetic candidates                                                      */
/* ------------------------------------------------------------------------ */

typedef struct {
  int n;
  cm_features_t *f;
  double *secs;
} batch_t;

/* n candidates of 1-3 rows; a row's "speed" depends on 4 of its columns
 * (one interaction, one threshold), noise columns vary too, and a
 * candidate's time is 1 ms / the sum of its rows' speeds (what pack-sum can
 * represent). About 5% fail. */
static batch_t synth(mlc_rng_t *rng, int n) {
  batch_t b = {n, calloc((size_t)n, sizeof(cm_features_t)), calloc((size_t)n, sizeof(double))};
  assert_non_null(b.f);
  assert_non_null(b.secs);
  for (int c = 0; c < n; c++) {
    int nrows = 1 + (int)mlc_rng_below(rng, 3);
    b.f[c].nrows = nrows;
    b.f[c].data = calloc((size_t)nrows * CM_FEATURE_DIM, sizeof(float));
    assert_non_null(b.f[c].data);
    double speed = 0;
    for (int r = 0; r < nrows; r++) {
      float *row = b.f[c].data + (size_t)r * CM_FEATURE_DIM;
      for (int k = 0; k < 4; k++) row[k] = (float)mlc_rng_uniform(rng);
      for (int k = 60; k < 70; k++) row[k] = (float)(4 * mlc_rng_uniform(rng));
      speed += 1 + 3 * row[0] + 4 * row[1] * row[2] + (row[3] > 0.5f ? 2 : 0);
    }
    b.secs[c] = mlc_rng_below(rng, 20) == 0 ? -1 : 1e-3 / speed;
  }
  return b;
}

static batch_t slice(const batch_t *b, int from, int n) {
  batch_t s = {n, b->f + from, b->secs + from};
  return s;
}

static void batch_free(batch_t *b) {
  for (int c = 0; c < b->n; c++) free(b->f[c].data);
  free(b->f);
  free(b->secs);
}

static void update(cm_model_t *m, const batch_t *b) {
  int rc = cm_model_update(m, 42, b->f, b->secs, b->n);
  if (rc != MLC_OK) fprintf(stderr, "update: %s\n", mlc_error_last());
  assert_int_equal(rc, MLC_OK);
}

static double *predict(cm_model_t *m, const batch_t *b) {
  double *scores = calloc((size_t)b->n, sizeof(double));
  assert_non_null(scores);
  int rc = cm_model_predict(m, b->f, b->n, scores);
  if (rc != MLC_OK) fprintf(stderr, "predict: %s\n", mlc_error_last());
  assert_int_equal(rc, MLC_OK);
  return scores;
}

/* A fresh directory under /tmp, and its removal (the model's files only). */
static void temp_dir(char *buf, size_t len) {
  snprintf(buf, len, "/tmp/mlc-cm-test-XXXXXX");
  assert_non_null(mkdtemp(buf));
}

static void remove_dir(const char *dir) {
  const char *files[] = {"model.json", "data.bin", "meta.json"};
  char path[512];
  for (int i = 0; i < 3; i++) {
    snprintf(path, sizeof path, "%s/%s", dir, files[i]);
    unlink(path);
  }
  rmdir(dir);
}

/* ------------------------------------------------------------------------ */
/* XGBoost                                                                   */
/* ------------------------------------------------------------------------ */

typedef struct {
  cm_model_t *model;
  batch_t train, held_out;
} trained_t;

/* 300 training candidates in batches of 50 (trainings at 100, 150, 200, 250
 * and 300 samples) and 200 held out. */
static int setup_trained(void **state) {
  trained_t *t = calloc(1, sizeof *t);
  mlc_rng_t rng;
  mlc_rng_seed(&rng, 2024);
  t->train = synth(&rng, 300);
  t->held_out = synth(&rng, 200);
  assert_int_equal(cm_model_create(&t->model, CM_MODEL_XGB, 7), MLC_OK);
  assert_int_equal(cm_model_kind(t->model), CM_MODEL_XGB);
  for (int i = 0; i < 300; i += 50) {
    batch_t b = slice(&t->train, i, 50);
    update(t->model, &b);
  }
  *state = t;
  return 0;
}

static int teardown_trained(void **state) {
  trained_t *t = *state;
  cm_model_free(t->model);
  batch_free(&t->train);
  batch_free(&t->held_out);
  free(t);
  return 0;
}

static void test_xgb_learns_ranking(void **state) {
  trained_t *t = *state;
  assert_int_equal(cm_model_nsamples(t->model), 300);
  assert_int_equal(cm_model_ntrained(t->model), 300);
  double *scores = predict(t->model, &t->held_out);
  double acc = cm_pairwise_accuracy(scores, t->held_out.secs, t->held_out.n);
  double recall = cm_top_k_recall(scores, t->held_out.secs, t->held_out.n, 20);
  printf("held-out pairwise accuracy %.3f, top-20 recall %.2f\n", acc, recall);
  assert_true(acc > 0.8);
  assert_true(recall > 0.3);
  free(scores);
}

/* A loaded model predicts bit for bit what the saved one does, and both
 * learn the same from the same new data. */
static void test_xgb_save_load_round_trip(void **state) {
  trained_t *t = *state;
  char dir[64];
  temp_dir(dir, sizeof dir);
  assert_int_equal(cm_model_save(t->model, dir), MLC_OK);
  cm_model_t *loaded = NULL;
  int rc = cm_model_load(&loaded, dir);
  if (rc != MLC_OK) fprintf(stderr, "load: %s\n", mlc_error_last());
  assert_int_equal(rc, MLC_OK);
  assert_int_equal(cm_model_kind(loaded), CM_MODEL_XGB);
  assert_int_equal(cm_model_nsamples(loaded), 300);
  assert_int_equal(cm_model_ntrained(loaded), 300);
  double *a = predict(t->model, &t->held_out), *b = predict(loaded, &t->held_out);
  assert_memory_equal(a, b, sizeof(double) * (size_t)t->held_out.n);
  free(a);
  free(b);

  update(t->model, &t->held_out); /* 500 samples: both retrain */
  update(loaded, &t->held_out);
  assert_int_equal(cm_model_ntrained(loaded), 500);
  a = predict(t->model, &t->train);
  b = predict(loaded, &t->train);
  assert_memory_equal(a, b, sizeof(double) * (size_t)t->train.n);
  free(a);
  free(b);
  cm_model_free(loaded);
  remove_dir(dir);
}

/* Training at 100 samples, then whenever the data grew by 20%. */
static void test_retrain_trigger(void **state) {
  (void)state;
  mlc_rng_t rng;
  mlc_rng_seed(&rng, 5);
  batch_t b = synth(&rng, 145);
  cm_model_t *m = NULL;
  assert_int_equal(cm_model_create(&m, CM_MODEL_XGB, 1), MLC_OK);
  const int steps[][2] = {{99, 0}, {1, 100}, {19, 100}, {1, 120}, {23, 120}, {1, 144}};
  int at = 0;
  for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
    batch_t s = slice(&b, at, steps[i][0]);
    update(m, &s);
    at += steps[i][0];
    assert_int_equal(cm_model_nsamples(m), at);
    assert_int_equal(cm_model_ntrained(m), steps[i][1]);
  }
  cm_model_free(m);
  batch_free(&b);
}

/* ------------------------------------------------------------------------ */
/* Random model                                                              */
/* ------------------------------------------------------------------------ */

static void test_random_model_is_seeded(void **state) {
  (void)state;
  mlc_rng_t rng;
  mlc_rng_seed(&rng, 9);
  batch_t b = synth(&rng, 16);
  cm_model_t *m1, *m2, *m3, *xgb;
  assert_int_equal(cm_model_create(&m1, CM_MODEL_RANDOM, 7), MLC_OK);
  assert_int_equal(cm_model_create(&m2, CM_MODEL_RANDOM, 7), MLC_OK);
  assert_int_equal(cm_model_create(&m3, CM_MODEL_RANDOM, 8), MLC_OK);
  assert_int_equal(cm_model_create(&xgb, CM_MODEL_XGB, 7), MLC_OK);
  assert_int_equal(cm_model_kind(m1), CM_MODEL_RANDOM);
  update(m1, &b); /* samples do not change its scores */
  assert_int_equal(cm_model_nsamples(m1), 16);
  assert_int_equal(cm_model_ntrained(m1), 0);
  double *s1 = predict(m1, &b), *s2 = predict(m2, &b), *s3 = predict(m3, &b), *sx = predict(xgb, &b);
  assert_memory_equal(s1, s2, sizeof(double) * 16);
  assert_memory_equal(s1, sx, sizeof(double) * 16); /* untrained XGBoost: the same random scores */
  assert_memory_not_equal(s1, s3, sizeof(double) * 16);
  for (int i = 0; i < 16; i++) assert_true(s1[i] >= 0 && s1[i] < 1);

  /* A saved random model continues its sequence. */
  char dir[64];
  temp_dir(dir, sizeof dir);
  assert_int_equal(cm_model_save(m1, dir), MLC_OK);
  cm_model_t *loaded = NULL;
  assert_int_equal(cm_model_load(&loaded, dir), MLC_OK);
  assert_int_equal(cm_model_kind(loaded), CM_MODEL_RANDOM);
  assert_int_equal(cm_model_nsamples(loaded), 16);
  double *n1 = predict(m1, &b), *nl = predict(loaded, &b);
  assert_memory_equal(n1, nl, sizeof(double) * 16);
  remove_dir(dir);

  free(s1), free(s2), free(s3), free(sx), free(n1), free(nl);
  cm_model_free(m1), cm_model_free(m2), cm_model_free(m3), cm_model_free(xgb), cm_model_free(loaded);
  batch_free(&b);
}

/* ------------------------------------------------------------------------ */
/* Bad input and damaged files                                               */
/* ------------------------------------------------------------------------ */

static void test_update_rejects_bad_input(void **state) {
  (void)state;
  cm_model_t *m;
  assert_int_equal(cm_model_create(&m, CM_MODEL_XGB, 1), MLC_OK);
  float row[CM_FEATURE_DIM] = {0};
  cm_features_t ok = {1, row}, empty = {0, NULL};
  double secs = 1e-3, nan_secs = NAN, score;
  assert_int_equal(cm_model_update(m, 1, &empty, &secs, 1), MLC_EINVAL);
  assert_non_null(strstr(mlc_error_last(), "no feature rows"));
  assert_int_equal(cm_model_update(m, 1, &ok, &nan_secs, 1), MLC_EINVAL);
  assert_int_equal(cm_model_update(m, 1, &ok, NULL, 1), MLC_EINVAL);
  assert_int_equal(cm_model_update(NULL, 1, &ok, &secs, 1), MLC_EINVAL);
  assert_int_equal(cm_model_update(m, 1, NULL, NULL, 0), MLC_OK);
  assert_int_equal(cm_model_nsamples(m), 0);
  assert_int_equal(cm_model_predict(m, &empty, 1, &score), MLC_EINVAL);
  assert_int_equal(cm_model_predict(m, &ok, 1, NULL), MLC_EINVAL);
  assert_int_equal(cm_model_create(NULL, CM_MODEL_XGB, 1), MLC_EINVAL);
  cm_model_free(m);
  cm_model_free(NULL);
}

static void write_text(const char *dir, const char *name, const char *text, size_t len) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  assert_int_equal(mlc_write_file(path, text, len), MLC_OK);
}

/* Loading fails with `code` and a message naming `file`. */
static void assert_load_fails(const char *dir, int code, const char *file) {
  cm_model_t *m = (cm_model_t *)dir;
  int rc = cm_model_load(&m, dir);
  if (rc != code || !strstr(mlc_error_last(), file))
    fprintf(stderr, "load %s: rc %d (want %d): %s\n", dir, rc, code, mlc_error_last());
  assert_int_equal(rc, code);
  assert_non_null(strstr(mlc_error_last(), file));
  assert_null(m);
}

static void read_text(char **text, size_t *len, const char *dir, const char *name) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  assert_int_equal(mlc_read_file(text, len, path), MLC_OK);
}

static void test_damaged_model_dirs(void **state) {
  trained_t *t = *state;
  char dir[64];
  temp_dir(dir, sizeof dir);
  assert_int_equal(cm_model_save(t->model, dir), MLC_OK);
  size_t meta_len, data_len, model_len;
  char *meta = NULL, *data = NULL, *model = NULL;
  read_text(&meta, &meta_len, dir, "meta.json");
  read_text(&data, &data_len, dir, "data.bin");
  read_text(&model, &model_len, dir, "model.json");

  write_text(dir, "meta.json", "{\"format\": ", 11);
  assert_load_fails(dir, MLC_EPARSE, "meta.json");
  char *wide = strstr(meta, "\"feature_dim\":164");
  assert_non_null(wide);
  memcpy(wide, "\"feature_dim\":100", 17);
  write_text(dir, "meta.json", meta, meta_len);
  assert_load_fails(dir, MLC_EINVAL, "meta.json");
  memcpy(wide, "\"feature_dim\":164", 17);
  write_text(dir, "meta.json", meta, meta_len);

  write_text(dir, "data.bin", data, data_len / 2);
  assert_load_fails(dir, MLC_EPARSE, "data.bin");
  data[data_len / 2] ^= 0x40;
  write_text(dir, "data.bin", data, data_len);
  assert_load_fails(dir, MLC_EPARSE, "data.bin");
  data[data_len / 2] ^= 0x40;
  write_text(dir, "data.bin", data, data_len);

  write_text(dir, "model.json", model, model_len / 3);
  assert_load_fails(dir, MLC_EPARSE, "model.json");
  write_text(dir, "model.json", "{\"learner\": {\"x\": 1}}", 21);
  assert_load_fails(dir, MLC_EPARSE, "model.json");
  write_text(dir, "model.json", "[1, 2]", 6);
  assert_load_fails(dir, MLC_EPARSE, "model.json");
  write_text(dir, "model.json", model, model_len);

  cm_model_t *m = NULL; /* restored: loads again */
  assert_int_equal(cm_model_load(&m, dir), MLC_OK);
  cm_model_free(m);
  remove_dir(dir);
  assert_load_fails(dir, MLC_EIO, "meta.json"); /* gone */
  mlc_free(meta), mlc_free(data), mlc_free(model);
}

/* ------------------------------------------------------------------------ */
/* Quality helpers                                                           */
/* ------------------------------------------------------------------------ */

static void test_quality_helpers(void **state) {
  (void)state;
  double secs[] = {1, 2, 3, 4}, good[] = {4, 3, 2, 1}, bad[] = {1, 2, 3, 4}, mixed[] = {4, 1, 3, 2};
  assert_true(cm_pairwise_accuracy(good, secs, 4) == 1.0);
  assert_true(cm_pairwise_accuracy(bad, secs, 4) == 0.0);
  /* mixed orders (0,1) (0,2) (0,3) (2,3) right and (1,2) (1,3) wrong */
  assert_true(fabs(cm_pairwise_accuracy(mixed, secs, 4) - 4.0 / 6) < 1e-12);
  double failed[] = {1, -1}, up[] = {0, 1}, tie[] = {5, 5};
  assert_true(cm_pairwise_accuracy(up, failed, 2) == 0.0); /* a failure is the slowest */
  assert_true(cm_pairwise_accuracy(tie, failed, 2) == 0.5);
  assert_true(cm_top_k_recall(mixed, secs, 4, 2) == 0.5); /* fastest {0, 1}, top scored {0, 2} */
  assert_true(cm_top_k_recall(good, secs, 4, 1) == 1.0);
  assert_true(cm_top_k_recall(bad, secs, 4, 1) == 0.0);
  assert_true(cm_top_k_recall(bad, secs, 4, 9) == 1.0); /* k past n: all of them */
  assert_true(cm_top_k_recall(bad, secs, 4, 0) == 0.0);
}

int main(void) {
  const struct CMUnitTest trained[] = {
      cmocka_unit_test(test_xgb_learns_ranking),
      cmocka_unit_test(test_damaged_model_dirs),
      cmocka_unit_test(test_xgb_save_load_round_trip), /* last: it adds data */
  };
  const struct CMUnitTest plain[] = {
      cmocka_unit_test(test_retrain_trigger),
      cmocka_unit_test(test_random_model_is_seeded),
      cmocka_unit_test(test_update_rejects_bad_input),
      cmocka_unit_test(test_quality_helpers),
  };
  int failed = cmocka_run_group_tests_name("trained", trained, setup_trained, teardown_trained);
  return failed + cmocka_run_group_tests_name("plain", plain, NULL, NULL);
}
