/*
 * task_scheduler.c - which task gets the next round (DESIGN.md, Search: task
 * scheduler), as MetaSchedule's task schedulers choose:
 *
 * Round robin: tasks in turn, skipping those that are done.
 *
 * Both skip a task another job holds (blocked, lease.c): it is asked for
 * again later, and gradient-based gives it 1e9 then if it never ran.
 *
 * Gradient-based (MetaSchedule's GradientBased, from Ansor): a first pass
 * gives every task one round; after that each live task's gradient is
 *
 *     g1 = (best[n-1-w] - best[n-1]) / w      (0 while n < w + 1)
 *     g2 = best[n-1] / n
 *     g  = weight * (alpha * g1 + (1 - alpha) * g2)
 *
 * where best[] is the task's best time after each of its n rounds, w the
 * window (3) and alpha 0.2: g1 is how fast the task improved recently, g2
 * what one more round may still win of its (weighted) time. A task with no
 * successful measurement yet gets 1e9 (it is tried first); the largest
 * gradient wins, and when all are equal one live task is drawn at random
 * (seeded), as MetaSchedule does.
 */
#include "search/tune/tune_internal.h"

/* A task with no valid time yet: tune it first (GradientBased's 1e9). */
#define NO_TIME_GRADIENT 1e9

/* Done, or held by another job for now. */
static bool unavailable(const tune_task_t *t) { return t->done || t->blocked; }

void tune_sched_init(tune_sched_t *s, ms_task_sched_kind_t kind, uint64_t seed) {
  s->kind = kind;
  s->next_rr = 0;
  s->warmup = 0;
  mlc_rng_seed(&s->rng, seed ^ 0x7461736b73636864ull); /* "taskschd" */
}

static int next_round_robin(tune_sched_t *s, const tune_task_t *tasks, int n) {
  for (int k = 0; k < n; k++) {
    int i = (s->next_rr + k) % n;
    if (unavailable(&tasks[i])) continue;
    s->next_rr = (i + 1) % n;
    return i;
  }
  return -1;
}

double tune_sched_gradient(const tune_task_t *t) {
  int n = (int)t->history.len;
  if (n == 0) return NO_TIME_GRADIENT;
  double best = t->history.data[n - 1];
  if (!(best > 0)) return NO_TIME_GRADIENT;
  int w = TUNE_GRADIENT_WINDOW;
  double g1 = 0;
  if (n >= w + 1) {
    double before = t->history.data[n - 1 - w];
    /* Rounds before the first success have no time: no slope to measure yet. */
    if (before > 0) g1 = (before - best) / w;
  }
  double g2 = best / n;
  double g = TUNE_GRADIENT_ALPHA * g1 + (1 - TUNE_GRADIENT_ALPHA) * g2;
  return g * t->weight;
}

static int next_gradient(tune_sched_t *s, const tune_task_t *tasks, int n) {
  /* The first pass: every task once, in order. */
  while (s->warmup < n) {
    int i = s->warmup++;
    if (!unavailable(&tasks[i])) return i;
  }
  int best = -1, nalive = 0;
  double gmax = 0, gmin = 0;
  for (int i = 0; i < n; i++) {
    if (unavailable(&tasks[i])) continue;
    double g = tune_sched_gradient(&tasks[i]);
    if (nalive == 0 || g > gmax) {
      gmax = g;
      best = i;
    }
    if (nalive == 0 || g < gmin) gmin = g;
    nalive++;
  }
  if (nalive == 0) return -1;
  if (gmax != gmin) return best;
  int pick = (int)mlc_rng_below(&s->rng, (uint64_t)nalive);
  for (int i = 0; i < n; i++) {
    if (unavailable(&tasks[i])) continue;
    if (pick-- == 0) return i;
  }
  return best;
}

int tune_sched_next(tune_sched_t *s, const tune_task_t *tasks, int n) {
  if (n <= 0) return -1;
  return s->kind == MS_SCHED_ROUND_ROBIN ? next_round_robin(s, tasks, n) : next_gradient(s, tasks, n);
}
