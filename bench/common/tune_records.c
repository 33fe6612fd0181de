/*
 * tune_records.c - a tuning run's records in time order, its best-so-far
 * curve, and the cost model's quality on held-out records. See
 * tune_records.h.
 */
#include "bench/common/tune_records.h"

#include <stdlib.h>
#include <string.h>

#include "bench/common/kernel.h"
#include "cost-model/cost_model.h"
#include "search/search.h"

/* A record with its place in the query's answer (newest first), for a sort
 * by time that keeps commit order among equal times. */
typedef struct {
  const db_record_t *rec;
  int query_index;
} timed_t;

static int cmp_timed(const void *a, const void *b) {
  const timed_t *x = a, *y = b;
  if (x->rec->created_at_us != y->rec->created_at_us) return x->rec->created_at_us < y->rec->created_at_us ? -1 : 1;
  return y->query_index - x->query_index; /* later in the answer = older */
}

/* Fills median[] and best[] from rec[]. */
static void compute_curve(bench_tune_records_t *r) {
  int best = -1;
  for (int i = 0; i < r->n; i++) {
    const db_record_t *x = r->rec[i];
    bool ok = x->error_kind == MLC_ERROR_KIND_NONE && x->nrun_secs > 0;
    r->median[i] = ok ? db_record_median(x) : 0;
    if (!ok || !(r->median[i] > 0)) {
      r->median[i] = 0;
      r->nfailed++;
    } else if (best < 0 || r->median[i] < r->median[best]) {
      best = i;
    }
    r->best[i] = best;
  }
}

/* Picks this run's trials out of the query's answer, oldest first. */
static int select_trials(bench_tune_records_t *out, const char *default_json, int64_t since_us) {
  int total = out->result->nrecords;
  timed_t *timed = calloc((size_t)total + 1, sizeof *timed);
  out->rec = calloc((size_t)total + 1, sizeof *out->rec);
  out->median = calloc((size_t)total + 1, sizeof *out->median);
  out->best = calloc((size_t)total + 1, sizeof *out->best);
  if (!timed || !out->rec || !out->median || !out->best) {
    free(timed);
    return mlc_error_set(MLC_ENOMEM, "out of memory for %d records", total);
  }
  for (int i = 0; i < total; i++) {
    const db_record_t *r = &out->result->records[i];
    if (r->created_at_us < since_us) continue;
    if (strcmp(r->trace_json, default_json) != 0) timed[out->n++] = (timed_t){r, i};
    else if (r->error_kind == MLC_ERROR_KIND_NONE) out->default_secs = db_record_median(r);
  }
  qsort(timed, (size_t)out->n, sizeof *timed, cmp_timed);
  for (int i = 0; i < out->n; i++) out->rec[i] = timed[i].rec;
  free(timed);
  return MLC_OK;
}

int bench_tune_records_load(bench_tune_records_t *out, db_t *db, const tir_func_t *workload,
                            const mlc_target_t *target, int64_t since_us) {
  memset(out, 0, sizeof *out);
  char tstr[512];
  db_filter_t filter = {.workload_key = tir_func_key(workload), .target = mlc_target_str(target, tstr, sizeof tstr)};
  sch_trace_t *default_trace = NULL;
  char *default_json = NULL;
  int rc = ms_default_trace(&default_trace, &default_json, workload, target);
  if (rc == MLC_OK) rc = db_records(db, &out->result, &filter);
  if (rc == MLC_OK) rc = select_trials(out, default_json, since_us);
  if (rc == MLC_OK) compute_curve(out);
  sch_trace_free(default_trace);
  mlc_free(default_json);
  return rc;
}

void bench_tune_records_free(bench_tune_records_t *r) {
  db_result_free(r->result);
  free(r->rec);
  free(r->median);
  free(r->best);
  memset(r, 0, sizeof *r);
}

int bench_tune_best_at(const bench_tune_records_t *r, int t) {
  if (r->n == 0 || t < 1) return -1;
  return r->best[(t > r->n ? r->n : t) - 1];
}

/* ------------------------------------------------------------------------ */
/* Cost model quality                                                        */
/* ------------------------------------------------------------------------ */

/* The features of one record: replay its trace, lower, extract. */
static int record_features(cm_features_t *out, const db_record_t *rec, const tir_func_t *workload,
                           const mlc_target_t *target) {
  sch_t *sch = NULL;
  int rc = bench_schedule_json(&sch, workload, rec->trace_json);
  if (rc == MLC_OK) rc = ms_candidate_features(out, NULL, sch_func(sch), target); /* as the search reads them */
  sch_free(sch);
  return rc;
}

/* Scores of the held-out part by a model of `kind` trained on the rest. */
static int score(double *pairwise, double *recall5, int64_t *ntrained, cm_model_kind_t kind, uint64_t seed,
                 const cm_features_t *feats, const double *secs, int ntrain, int ntest, uint64_t group,
                 double *scores_out) {
  cm_model_t *m = NULL;
  double *scores = calloc((size_t)ntest, sizeof *scores);
  int rc = scores ? cm_model_create(&m, kind, seed) : mlc_error_set(MLC_ENOMEM, "out of memory");
  if (rc == MLC_OK) rc = cm_model_update(m, group, feats, secs, ntrain);
  if (rc == MLC_OK) rc = cm_model_predict(m, feats + ntrain, ntest, scores);
  if (rc == MLC_OK) {
    *ntrained = cm_model_ntrained(m);
    *pairwise = cm_pairwise_accuracy(scores, secs + ntrain, ntest);
    *recall5 = cm_top_k_recall(scores, secs + ntrain, ntest, ntest < 5 ? ntest : 5);
    if (scores_out) memcpy(scores_out, scores, (size_t)ntest * sizeof *scores);
  }
  cm_model_free(m);
  free(scores);
  return rc;
}

/* XGBoost on BENCH_QUALITY_SHUFFLES random permutations of the records,
 * each split 80/20 as the time-ordered one; the means into *out. feats and
 * secs are only read (the permuted copies borrow the rows). */
static int score_shuffled(bench_model_quality_t *out, const cm_features_t *feats, const double *secs,
                          uint64_t seed, uint64_t group) {
  int n = out->nused;
  cm_features_t *pf = calloc((size_t)n, sizeof *pf);
  double *ps = calloc((size_t)n, sizeof *ps);
  int *perm = calloc((size_t)n, sizeof *perm);
  int rc = pf && ps && perm ? MLC_OK : mlc_error_set(MLC_ENOMEM, "out of memory for %d records", n);
  mlc_rng_t rng;
  mlc_rng_seed(&rng, seed);
  for (int s = 0; rc == MLC_OK && s < BENCH_QUALITY_SHUFFLES; s++) {
    for (int i = 0; i < n; i++) perm[i] = i;
    for (int i = n - 1; i > 0; i--) { /* Fisher-Yates */
      int j = (int)mlc_rng_below(&rng, (uint64_t)i + 1), x = perm[i];
      perm[i] = perm[j], perm[j] = x;
    }
    for (int i = 0; i < n; i++) pf[i] = feats[perm[i]], ps[i] = secs[perm[i]];
    double pairwise = 0, recall5 = 0;
    int64_t unused;
    rc = score(&pairwise, &recall5, &unused, CM_MODEL_XGB, seed, pf, ps, out->ntrain, out->ntest, group, NULL);
    out->pairwise_shuffled += pairwise / BENCH_QUALITY_SHUFFLES;
    out->recall5_shuffled += recall5 / BENCH_QUALITY_SHUFFLES;
  }
  free(pf);
  free(ps);
  free(perm);
  return rc;
}

int bench_model_quality(bench_model_quality_t *out, const bench_tune_records_t *r, const tir_func_t *workload,
                        const mlc_target_t *target, uint64_t seed) {
  memset(out, 0, sizeof *out);
  cm_features_t *feats = calloc((size_t)r->n + 1, sizeof *feats);
  double *secs = calloc((size_t)r->n + 1, sizeof *secs);
  int *used = calloc((size_t)r->n + 1, sizeof *used); /* record index of each feature row */
  int rc = feats && secs && used ? MLC_OK : mlc_error_set(MLC_ENOMEM, "out of memory for %d records", r->n);
  for (int i = 0; rc == MLC_OK && i < r->n; i++) {
    if (record_features(&feats[out->nused], r->rec[i], workload, target) != MLC_OK) {
      out->nskipped++;
      continue;
    }
    used[out->nused] = i;
    secs[out->nused++] = r->median[i]; /* 0 for a failure: the slowest */
  }
  out->ntrain = out->nused * 8 / 10;
  out->ntest = out->nused - out->ntrain;
  if (rc == MLC_OK && (out->ntrain < 1 || out->ntest < 1))
    rc = mlc_error_set(MLC_EINVAL, "%d records with features: too few to hold some out", out->nused);
  if (rc == MLC_OK) {
    out->test_rec = calloc((size_t)out->ntest, sizeof *out->test_rec);
    out->test_scores = calloc((size_t)out->ntest, sizeof *out->test_scores);
    if (!out->test_rec || !out->test_scores) rc = mlc_error_set(MLC_ENOMEM, "out of memory");
    else memcpy(out->test_rec, used + out->ntrain, (size_t)out->ntest * sizeof *used);
  }
  uint64_t group = tir_func_key(workload);
  if (rc == MLC_OK)
    rc = score(&out->pairwise, &out->recall5, &out->ntrained, CM_MODEL_XGB, seed, feats, secs, out->ntrain,
               out->ntest, group, out->test_scores);
  int64_t unused;
  if (rc == MLC_OK)
    rc = score(&out->pairwise_random, &out->recall5_random, &unused, CM_MODEL_RANDOM, seed, feats, secs,
               out->ntrain, out->ntest, group, NULL);
  if (rc == MLC_OK && out->ntrained > 0) rc = score_shuffled(out, feats, secs, seed, group);
  if (out->ntrained == 0) free(out->test_scores), out->test_scores = NULL;
  for (int i = 0; feats && i < out->nused; i++) cm_features_free(&feats[i]);
  free(feats);
  free(secs);
  free(used);
  return rc;
}

void bench_model_quality_free(bench_model_quality_t *q) {
  if (!q) return;
  free(q->test_rec);
  free(q->test_scores);
  q->test_rec = NULL;
  q->test_scores = NULL;
}

int bench_retime_records(double *secs, const bench_tune_records_t *r, const int *idx, int n,
                         const tir_func_t *workload, const mlc_target_t *target, int builders) {
  ms_job_t *jobs = calloc((size_t)n + 1, sizeof *jobs);
  sch_trace_t **traces = calloc((size_t)n + 1, sizeof *traces);
  mlc_measure_result_t *res = calloc((size_t)n + 1, sizeof *res);
  ms_runner_t *runner = NULL;
  mlc_measure_options_t mo;
  mlc_measure_options_default(&mo); /* as ms_tune's runner in bench_tune and mlc-tune */
  int rc = jobs && traces && res ? MLC_OK : mlc_error_set(MLC_ENOMEM, "out of memory for %d jobs", n);
  for (int k = 0; rc == MLC_OK && k < n; k++) {
    rc = sch_trace_from_json_text(&traces[k], r->rec[idx[k]]->trace_json, "record");
    jobs[k] = (ms_job_t){.workload = workload, .trace = traces[k], .target = target};
  }
  if (rc == MLC_OK) rc = ms_runner_local(&runner, builders < 1 ? 1 : builders, &mo);
  if (rc == MLC_OK && n > 0) rc = runner->run(runner, jobs, n, res);
  for (int k = 0; rc == MLC_OK && k < n; k++)
    secs[k] = res[k].error == MLC_ERROR_KIND_NONE ? mlc_measure_median(&res[k]) : 0;
  ms_runner_free(runner);
  for (int k = 0; traces && k < n; k++) sch_trace_free(traces[k]);
  free(traces);
  free(jobs);
  free(res);
  return rc;
}
