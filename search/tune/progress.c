/*
 * progress.c - what a tuning run shows while it works (DESIGN.md, Programs):
 * on a terminal one status line on stderr, rewritten after every round,
 *
 *   trials 128/500  best 254.1 GFLOP/s (C)  12.3 cand/s  ETA 1m40s
 *
 * (trials measured in this run / the budget; the best of the task tuned in
 * that round, named in parentheses; candidates measured per second of the
 * rounds so far; the time the rest of the budget takes at that rate), and
 * otherwise one info log line per round with the same facts and the round's
 * task, so a log file reads as a history.
 */
#include <math.h>
#include <string.h>

#include "search/tune/tune_internal.h"

double tune_gflops(double flop, double secs) { return flop > 0 && secs > 0 ? flop / secs / 1e9 : 0; }

const char *tune_format_duration(double secs, char *buf, size_t len) {
  if (!(secs >= 0) || !isfinite(secs) || secs > 1e8) {
    snprintf(buf, len, "-");
  } else {
    long s = lround(secs);
    if (s < 60) snprintf(buf, len, "%lds", s);
    else if (s < 3600) snprintf(buf, len, "%ldm%02lds", s / 60, s % 60);
    else snprintf(buf, len, "%ldh%02ldm", s / 3600, (s % 3600) / 60);
  }
  return buf;
}

/* "254.1 GFLOP/s" for a task with a flop count, else "1.234 ms"; "-" when
 * nothing measured well yet. */
static const char *format_best(const tune_task_t *t, char *buf, size_t len) {
  if (!(t->best_secs > 0)) snprintf(buf, len, "-");
  else if (t->flop > 0) snprintf(buf, len, "%.1f GFLOP/s", tune_gflops(t->flop, t->best_secs));
  else snprintf(buf, len, "%.4g ms", t->best_secs * 1e3);
  return buf;
}

void tune_progress_round(tune_run_t *run, const tune_task_t *t, int measured) {
  double elapsed = tune_now() - run->rounds_start;
  double rate = elapsed > 0 ? run->used / elapsed : 0;
  double eta = rate > 0 ? (run->budget - run->used) / rate : -1;
  char best[64], eta_s[32];
  format_best(t, best, sizeof best);
  tune_format_duration(eta, eta_s, sizeof eta_s);
  if (run->opts->progress_tty) {
    fprintf(stderr, "\rtrials %d/%d  best %s (%s)  %.1f cand/s  ETA %s\033[K", run->used, run->budget, best,
            t->name, rate, eta_s);
    fflush(stderr);
    run->line_drawn = true;
    return;
  }
  MLC_INFO("round %d of %s: %d measured, best %s; trials %d/%d, %.1f cand/s, ETA %s", t->rounds, t->name,
           measured, best, run->used, run->budget, rate, eta_s);
}

void tune_progress_end(tune_run_t *run) {
  if (!run->line_drawn) return;
  fputc('\n', stderr);
  fflush(stderr);
  run->line_drawn = false;
}
