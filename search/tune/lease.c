/*
 * lease.c - the tasks' leases (tune_internal.h; docs/mlc-tune.md, "Several
 * jobs on one database"): two tuning jobs sharing a database do not tune the
 * same (workload, target) at the same time.
 *
 * A task is claimed (db_lease_acquire, ttl TUNE_LEASE_TTL_S) before its
 * first round, kept while the run tunes it (renewed at round boundaries
 * once a sixth of the ttl has passed) and released when the task is done or
 * the run ends, whatever the reason (budget spent, Ctrl-C, an error). A task
 * another job holds is skipped: the scheduler picks among the others, and
 * the task is asked for again TUNE_LEASE_RETRY_S later; when every remaining
 * task is held elsewhere the run waits, polling, with a progress line. A
 * holder that crashed is no obstacle for longer than its ttl.
 *
 * Leases are advisory: a database whose leases fail (an error, not a refusal)
 * gets one warning, and the run goes on without them.
 *
 * Who holds a lease, and for how long (db_lease_holder, both backends),
 * goes into the waiting line and the summary.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "search/tune/tune_internal.h"

/* ------------------------------------------------------------------------ */
/* Setup                                                                     */
/* ------------------------------------------------------------------------ */

/* "mlc-tune@HOST:PID:RAND": unique per run, readable by a person. */
static void make_owner(char *buf, size_t len) {
  char host[64] = "?";
  if (gethostname(host, sizeof host) != 0) snprintf(host, sizeof host, "?");
  host[sizeof host - 1] = '\0';
  mlc_rng_t rng;
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  mlc_rng_seed(&rng, (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 20) ^ ((uint64_t)getpid() << 40));
  snprintf(buf, len, "mlc-tune@%.40s:%ld:%04x", host, (long)getpid(), (unsigned)(mlc_rng_next(&rng) & 0xffff));
}

void tune_lease_setup(tune_run_t *run, const tune_lease_options_t *o) {
  run->leasing = !(o && o->off);
  run->lease_ttl_s = o && o->ttl_s > 0 ? o->ttl_s : TUNE_LEASE_TTL_S;
  run->lease_retry_s = o && o->retry_s > 0 ? o->retry_s : TUNE_LEASE_RETRY_S;
  if (o && o->owner && *o->owner) snprintf(run->owner, sizeof run->owner, "%s", o->owner);
  else make_owner(run->owner, sizeof run->owner);
  if (run->leasing) MLC_INFO("leases on tasks as %s (ttl %d s)", run->owner, run->lease_ttl_s);
}

/* An error (not a refusal) from the database's leases: tune without them. */
static void leases_broken(tune_run_t *run, const char *what) {
  MLC_WARN("leases do not work on %s (%s: %s): tuning without them, so another job may tune the same tasks",
           db_uri(run->db), what, mlc_error_or("unknown error"));
  run->leasing = false;
  for (int i = 0; i < run->ntasks; i++) run->tasks[i].blocked = run->tasks[i].leased = false;
}

/* ------------------------------------------------------------------------ */
/* Who holds it                                                              */
/* ------------------------------------------------------------------------ */

/* The holder of t's lease and its seconds left (db_lease_holder): false when
 * nobody holds it any more, or the database cannot say. */
static bool peek_holder(const tune_run_t *run, const tune_task_t *t, char *holder, size_t len, double *left) {
  bool held = false;
  if (db_lease_holder(run->db, &held, holder, len, left, t->key, run->target_str) != MLC_OK) {
    MLC_DEBUG("who holds %s's lease: %s", t->name, mlc_error_last());
    return false;
  }
  return held;
}

/* ------------------------------------------------------------------------ */
/* Claiming, renewing, releasing                                             */
/* ------------------------------------------------------------------------ */

/* t is held by another job: skipped until the retry time. */
static void mark_blocked(tune_run_t *run, tune_task_t *t) {
  double now = tune_now();
  if (!t->blocked && t->blocked_since == 0) t->blocked_since = now;
  t->blocked = true;
  t->retry_at = now + run->lease_retry_s;
  t->lease.skips++;
  double left = -1;
  if (peek_holder(run, t, t->lease.holder, sizeof t->lease.holder, &left)) t->lease_left = left;
  else t->lease_left = -1;
  if (t->lease.skips == 1)
    MLC_INFO("%s: another job%s%s tunes it; skipped for now", t->name, t->lease.holder[0] ? " " : "",
             t->lease.holder);
}

int tune_lease_take(tune_run_t *run, tune_task_t *t, bool *got) {
  *got = true;
  if (!run->leasing || t->leased) return MLC_OK;
  bool mine = false;
  mlc_error_clear();
  if (db_lease_acquire(run->db, &mine, t->key, run->target_str, run->owner, run->lease_ttl_s) != MLC_OK) {
    leases_broken(run, "taking a lease");
    return MLC_OK;
  }
  if (!mine) {
    *got = false;
    mark_blocked(run, t);
    return MLC_OK;
  }
  double now = tune_now();
  if (t->blocked_since > 0) t->lease.waited_secs += now - t->blocked_since;
  t->blocked_since = 0;
  t->blocked = false;
  t->leased = true;
  t->renewed_at = now;
  return MLC_OK;
}

void tune_lease_renew(tune_run_t *run) {
  double now = tune_now();
  for (int i = 0; run->leasing && i < run->ntasks; i++) {
    tune_task_t *t = &run->tasks[i];
    if (!t->leased || now - t->renewed_at < run->lease_ttl_s / 6.0) continue;
    bool mine = false;
    mlc_error_clear();
    if (db_lease_acquire(run->db, &mine, t->key, run->target_str, run->owner, run->lease_ttl_s) != MLC_OK) {
      leases_broken(run, "renewing a lease");
      return;
    }
    t->renewed_at = now;
    if (mine) continue;
    /* It lapsed (a round longer than the ttl) and another job took it. */
    tune_progress_end(run);
    MLC_WARN("%s: the lease lapsed and another job took the task (a round longer than %d s?); skipped until "
             "it is free",
             t->name, run->lease_ttl_s);
    t->leased = false;
    mark_blocked(run, t);
  }
}

void tune_lease_release(tune_run_t *run, tune_task_t *t) {
  if (!t->leased) return;
  t->leased = false;
  if (!run->leasing) return;
  mlc_error_clear();
  if (db_lease_release(run->db, t->key, run->target_str, run->owner) != MLC_OK)
    MLC_WARN("%s: releasing its lease: %s (it expires by itself within %d s)", t->name, mlc_error_or("?"),
             run->lease_ttl_s);
}

void tune_lease_finish(tune_run_t *run) {
  double now = tune_now();
  for (int i = 0; i < run->ntasks; i++) {
    tune_task_t *t = &run->tasks[i];
    tune_lease_release(run, t);
    if (t->blocked_since > 0) t->lease.waited_secs += now - t->blocked_since;
    t->blocked_since = 0;
    if (t->active || t->done || t->lease.skips == 0) continue;
    t->lease.never = true;
    snprintf(t->status, sizeof t->status, "not tuned here: another job%s%.100s held it", t->lease.holder[0] ? " " : "",
             t->lease.holder);
  }
}

/* ------------------------------------------------------------------------ */
/* Skipping and waiting                                                      */
/* ------------------------------------------------------------------------ */

int tune_lease_unblock_due(tune_run_t *run) {
  double now = tune_now();
  int nblocked = 0;
  for (int i = 0; i < run->ntasks; i++) {
    tune_task_t *t = &run->tasks[i];
    if (!t->blocked || t->done) continue;
    if (now >= t->retry_at) t->blocked = false;
    else nblocked++;
  }
  return nblocked;
}

/* The waiting line: on a terminal rewritten, otherwise logged every 30 s. */
static void wait_line(tune_run_t *run, int n, const tune_task_t *first) {
  char who[200] = "";
  if (first->lease.holder[0] && first->lease_left >= 0)
    snprintf(who, sizeof who, " (%.120s, expires in %.0f s)", first->lease.holder, first->lease_left);
  else if (first->lease.holder[0])
    snprintf(who, sizeof who, " (%.120s)", first->lease.holder);
  if (run->opts->progress_tty) {
    fprintf(stderr, "\rwaiting for %d task%s tuned by another job%s\033[K", n, n == 1 ? "" : "s", who);
    fflush(stderr);
    run->line_drawn = true;
    return;
  }
  double now = tune_now();
  if (run->last_wait_line > 0 && now - run->last_wait_line < 30) return;
  run->last_wait_line = now;
  MLC_INFO("waiting for %d task%s tuned by another job%s", n, n == 1 ? "" : "s", who);
}

void tune_lease_wait(tune_run_t *run) {
  int n = 0;
  const tune_task_t *first = NULL;
  double until = 0;
  for (int i = 0; i < run->ntasks; i++) {
    const tune_task_t *t = &run->tasks[i];
    if (!t->blocked || t->done) continue;
    if (!first || t->retry_at < until) until = t->retry_at;
    if (!first) first = t;
    n++;
  }
  if (!first) return;
  wait_line(run, n, first);
  /* Short naps: Ctrl-C is answered at once, and leases held are kept. */
  while (tune_now() < until && !(run->opts->stop && *run->opts->stop)) {
    struct timespec nap = {0, 100 * 1000 * 1000};
    nanosleep(&nap, NULL);
    tune_lease_renew(run);
  }
}
