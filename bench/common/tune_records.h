/*
 * tune_records.h - what a finished tuning run left in its database, read
 * back for bench_tune: the records in time order, the best-so-far curve,
 * and the cost model's quality on held-out measurements (a fresh model
 * trained on the older records, scored on the newer ones).
 */
#ifndef MLC_BENCH_TUNE_RECORDS_H
#define MLC_BENCH_TUNE_RECORDS_H

#include "bench/common/problem.h"
#include "database/database.h"
#include "tir/tir.h"

/* One tuning run's records of one (workload, target), oldest first. */
typedef struct {
  int n;                      /* trials (measurements and failures) */
  int nfailed;
  double default_secs;        /* the default schedule's median (ms_default_trace; 0: none) */
  db_result_t *result;        /* owns the records' strings */
  const db_record_t **rec;    /* n, by created_at (ties: commit order) */
  double *median;             /* n: median seconds, 0 for a failed trial */
  int *best;                  /* n: index of the fastest among rec[0..i], -1 while none */
} bench_tune_records_t;

/* Reads the records of (workload, target) created at or after since_us
 * (Unix microseconds: this run's, in a database that held others before)
 * and orders them. The default schedule (ms_default_trace), which
 * ms_tune measures before its first round and which is no trial, is left
 * out (its time is default_secs). *out is owned by the caller
 * (bench_tune_records_free), also on failure. Errors are the database's,
 * or MLC_ENOMEM. */
int bench_tune_records_load(bench_tune_records_t *out, db_t *db, const tir_func_t *workload,
                            const mlc_target_t *target, int64_t since_us);
void bench_tune_records_free(bench_tune_records_t *r); /* a zeroed struct is fine */

/* The index of the fastest record among the first t (all when t > n), or
 * -1 when none of them measured. */
int bench_tune_best_at(const bench_tune_records_t *r, int t);

typedef struct {
  int nused;                  /* records with features */
  int nskipped;               /* records whose trace did not replay or lower */
  int ntrain, ntest;          /* the first 80% of nused in time order, the rest */
  int64_t ntrained;           /* samples the XGBoost model trained on (0: it did not) */
  double pairwise, recall5;   /* XGBoost on the held-out part */
  double pairwise_random, recall5_random; /* the random model, for scale */
  /* XGBoost on random 80/20 splits instead (the mean over
   * BENCH_QUALITY_SHUFFLES splits): how well the features and the model
   * rank the whole space the run visited, rather than the newest, mostly
   * near-best records; 0 when XGBoost did not train. */
  double pairwise_shuffled, recall5_shuffled;
  /* The held-out records (indices into the records' rec[], ntest of them,
   * oldest first) and XGBoost's scores of them (higher: faster; NULL when
   * it did not train), for scoring against another measurement of the same
   * kernels. Owned: bench_model_quality_free. */
  int *test_rec;
  double *test_scores;
} bench_model_quality_t;

#define BENCH_QUALITY_SHUFFLES 3

/* Replays each record's trace on `workload` (unscheduled, borrowed), lowers
 * it for target and extracts its features; trains a fresh XGBoost model on
 * the first 80% (one group: failures count as slowest), predicts the last
 * 20%, and fills *out with cm_pairwise_accuracy and cm_top_k_recall (k = 5);
 * the same for a random model with the same seed; then XGBoost again on
 * BENCH_QUALITY_SHUFFLES random 80/20 splits (seeded by `seed`). Errors: the cost model's
 * (MLC_ENOMEM, XGBoost failures); MLC_EINVAL when fewer than 2 records have
 * features. */
int bench_model_quality(bench_model_quality_t *out, const bench_tune_records_t *r, const tir_func_t *workload,
                        const mlc_target_t *target, uint64_t seed);
void bench_model_quality_free(bench_model_quality_t *q); /* a zeroed struct is fine */

/* The records rec[idx[0..n-1]] of r timed again, as the tuner timed them:
 * each trace replayed on `workload`, built and timed by a local runner with
 * `builders` builder processes and the default measurement options,
 * secs[k] its median (0 when it failed). For the measurement's agreement
 * with itself: how well one timing of these kernels ranks them like
 * another, the most a cost model scored against one timing can reach.
 * Errors: the runner's (MLC_EIO when a job could not be attempted),
 * MLC_EPARSE for a trace that does not parse, MLC_ENOMEM. */
int bench_retime_records(double *secs, const bench_tune_records_t *r, const int *idx, int n,
                         const tir_func_t *workload, const mlc_target_t *target, int builders);

#endif /* MLC_BENCH_TUNE_RECORDS_H */
