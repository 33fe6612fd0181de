/*
 * quality.c - how good a cost model's ranking is, measured on candidates
 * whose times are known (bench/, tests): the fraction of pairs it orders
 * like the times, and how many of the truly fastest it puts on top. A
 * failed measurement (secs <= 0, or not a number) counts as slower than
 * every success.
 */
#include <math.h>

#include "cost-model/model.h"

static double time_key(double secs) { return secs > 0 ? secs : INFINITY; }

double cm_pairwise_accuracy(const double *scores, const double *secs, int n) {
  if (!scores || !secs || n < 2) return 0.5;
  double right = 0, pairs = 0;
  for (int i = 0; i < n; i++)
    for (int j = i + 1; j < n; j++) {
      double ti = time_key(secs[i]), tj = time_key(secs[j]);
      if (ti == tj) continue;
      pairs++;
      double faster = ti < tj ? scores[i] - scores[j] : scores[j] - scores[i];
      right += faster > 0 ? 1 : faster == 0 ? 0.5 : 0;
    }
  return pairs > 0 ? right / pairs : 0.5;
}

/* Index order: by key ascending, ties by index (a stable, total order). */
typedef struct {
  double key;
  int index;
} ranked_t;

static int cmp_ranked(const void *x, const void *y) {
  const ranked_t *a = x, *b = y;
  if (a->key != b->key) return a->key < b->key ? -1 : 1;
  return (a->index > b->index) - (a->index < b->index);
}

double cm_top_k_recall(const double *scores, const double *secs, int n, int k) {
  if (!scores || !secs || n <= 0 || k <= 0) return 0;
  if (k > n) k = n;
  ranked_t *by_time = mlc_malloc(sizeof(ranked_t) * (size_t)n);
  ranked_t *by_score = mlc_malloc(sizeof(ranked_t) * (size_t)n);
  bool *top = mlc_calloc((size_t)n, sizeof(bool));
  double recall = 0;
  if (!by_time || !by_score || !top) goto done;
  for (int i = 0; i < n; i++) {
    by_time[i] = (ranked_t){time_key(secs[i]), i};
    by_score[i] = (ranked_t){isnan(scores[i]) ? INFINITY : -scores[i], i};
  }
  qsort(by_time, (size_t)n, sizeof(ranked_t), cmp_ranked);
  qsort(by_score, (size_t)n, sizeof(ranked_t), cmp_ranked);
  for (int i = 0; i < k; i++) top[by_time[i].index] = true;
  int hits = 0;
  for (int i = 0; i < k; i++) hits += top[by_score[i].index];
  recall = (double)hits / k;
done:
  mlc_free(by_time);
  mlc_free(by_score);
  mlc_free(top);
  return recall;
}
