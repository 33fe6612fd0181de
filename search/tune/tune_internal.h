/*
 * tune_internal.h - private to search/tune/: the state of one tuning task,
 * the task scheduler, progress output and the tuning-curve plot, shared by
 * the files of the driver:
 *
 *   tune.c            ms_tune: the rounds (pick, search, measure, commit, learn)
 *   tune_tasks.c      tasks from functions (dedup, workloads, resume counts,
 *                     the default schedule's time)
 *   task_scheduler.c  gradient-based and round-robin choice of the next task
 *   progress.c        the status line / log lines, durations
 *   plot.c            the SVG tuning curve
 *   lease.c           the tasks' leases (two jobs never tune one task at once)
 *   flop.c            ms_func_flop
 *   runner_local.c    ms_runner_local
 *   cmd_tune*.c       the mlc-tune program (cmd_tune.h)
 */
#ifndef MLC_SEARCH_TUNE_INTERNAL_H
#define MLC_SEARCH_TUNE_INTERNAL_H

#include "search/search.h"

#include <stdio.h>

/* One point of a task's tuning curve: after `trials` trials of the task
 * (counting those the database held before), the best time was best_secs. */
typedef struct {
  int trials;
  double best_secs;
} tune_point_t;

/* What leasing did to a task, for the summary. */
typedef struct {
  int skips;                /* times it was found held by another job */
  double waited_secs;       /* time it spent held by another job */
  bool never;               /* held by another job all run: not tuned here */
  char holder[128];         /* the last holder seen; "" when the database does not say */
} tune_lease_note_t;

/* A tuning task: one distinct workload (identical functions folded in). */
typedef struct {
  tir_func_t *func;         /* borrowed from ms_tune's caller */
  const char *name;         /* borrowed */
  uint64_t key;
  uint64_t group;           /* the cost model's group: key mixed with the target */
  int weight;
  double flop;
  ms_ctx_t ctx;
  ms_space_t space;
  bool has_space;
  ms_search_t *search;      /* NULL when the task could not start */
  bool done;
  int trials, trials_before;
  double best_secs;         /* fastest median known (database included); 0: none */
  double default_secs;      /* the default schedule's median (0: not known) */
  sch_trace_t *default_trace; /* mlc_default_schedule's trace of func, or the
                               empty trace where there is none (owned) */
  char *default_json;       /* its canonical JSON (owned) */
  uint64_t default_hash;
  char status[160];
  int rounds;
  MLC_VEC(double) history;  /* best after each of the task's rounds (scheduler) */
  MLC_VEC(tune_point_t) curve;
  uint64_t seed;            /* its search's seed (drawn in task order at the start) */
  bool active;              /* the default is measured and the search started */
  bool leased;              /* this run holds its lease */
  bool blocked;             /* another job holds it: skipped until retry_at */
  double retry_at, blocked_since, renewed_at; /* tune_now() times; 0: not set */
  double lease_left;        /* seconds the holder's lease had left when seen (-1: unknown) */
  tune_lease_note_t lease;
} tune_task_t;

/* What every part of a tuning run shares. */
typedef struct {
  const mlc_target_t *target;
  char target_str[512];     /* canonical */
  db_t *db;
  ms_runner_t *runner;
  const ms_tune_options_t *opts;
  int ntasks;
  tune_task_t *tasks;       /* owned */
  int budget, used;         /* trials allowed and measured in this run */
  uint64_t empty_hash;      /* the empty trace's: records of the unscheduled
                               program (earlier versions' baseline), not trials */
  double start, search_secs, measure_secs;
  double rounds_start;      /* when the first round began (the rate's origin) */
  bool line_drawn;          /* a status line is on the terminal */
  bool leasing;             /* leases are taken (not --no-lease, and they work) */
  int lease_ttl_s;
  double lease_retry_s;
  char owner[128];          /* this run's lease owner name */
  double last_wait_line;    /* when the waiting line was last logged */
} tune_run_t;

/* ------------------------------------------------------------------------ */
/* The run with mlc-tune's extras (tune.c)                                   */
/* ------------------------------------------------------------------------ */

#define TUNE_LEASE_TTL_S 300    /* a lease outlives its holder by at most this */
#define TUNE_LEASE_RETRY_S 5.0  /* a task held elsewhere is asked for again after this */

/* How ms_tune leases tasks (search.h's options have no room for it yet:
 * ms_tune uses the defaults, all zero). */
typedef struct {
  bool off;                 /* take no leases (--no-lease) */
  int ttl_s;                /* 0: TUNE_LEASE_TTL_S */
  double retry_s;           /* 0: TUNE_LEASE_RETRY_S */
  const char *owner;        /* NULL: "mlc-tune@HOST:PID:RAND" */
} tune_lease_options_t;

/* ms_tune with lease options (NULL: defaults); *notes (may be NULL) gets an
 * array of out->ntasks notes in task order (mlc_free; NULL when there are
 * no tasks), also when the run fails. */
int tune_run(ms_tune_result_t *out, tir_func_t *const *funcs, const char *const *names, int n,
             const mlc_target_t *target, db_t *db, ms_runner_t *runner, const ms_tune_options_t *opts,
             const tune_lease_options_t *lease, tune_lease_note_t **notes);

/* Seconds on CLOCK_MONOTONIC. */
double tune_now(void);

/* The slow_secs of a task's jobs: a candidate whose warm-up call lasts
 * longer than TUNE_SLOW_FACTOR times the fastest time known for the task
 * (its best_secs, or its default schedule's default_secs before a candidate
 * was measured; at least TUNE_SLOW_FLOOR_SECS) is timed by that call alone;
 * 0 (off) while neither is known. Softmax's space is half candidates that recompute a
 * reduction per element, hundreds of times slower than its best: each cost
 * a warm-up and a timed call. */
#define TUNE_SLOW_FACTOR 50
#define TUNE_SLOW_FLOOR_SECS 0.1
double tune_slow_secs(double best_secs, double default_secs);

/* New bests of one batch confirmed at most (ms_tune_options_t.confirm). */
#define TUNE_CONFIRM_MAX 2
/* The message of a job a transport gave up on because of Ctrl-C before it
 * was measured (the farm runner: nothing of the round had come back). */
#define TUNE_NOT_MEASURED_MSG "not measured: the tuner was interrupted"
/* True for a measurement that Ctrl-C cut short (the terminal's SIGINT reaches
 * the measuring child too) or never made (TUNE_NOT_MEASURED_MSG): not a
 * result, never recorded. */
bool tune_result_interrupted(const mlc_measure_result_t *r);

/* ------------------------------------------------------------------------ */
/* Tasks (tune_tasks.c)                                                      */
/* ------------------------------------------------------------------------ */

/* Folds funcs into run->tasks by workload key (confirmed by structural
 * equality; weight = how many), commits each workload to the database and
 * counts the trials it already holds for the target (and the best time);
 * makes each task's default-schedule trace. */
int tune_tasks_create(tune_run_t *run, tir_func_t *const *funcs, const char *const *names, int n);
/* Counts again what the database holds for t (trials_before, best_secs):
 * another job may have tuned it since the start. */
int tune_task_recount(tune_run_t *run, tune_task_t *t);
/* Design space and search of task t; on failure the task is marked done with
 * the reason as its status (the run goes on with the others). */
void tune_task_start(tune_run_t *run, tune_task_t *t, uint64_t seed);
/* The default schedule's time (t->default_trace: what mlc-compile builds
 * without a record): reused from the database or measured once and
 * committed. MLC_OK unless the transport or the database failed. */
int tune_task_default(tune_run_t *run, tune_task_t *t);
/* Builds and commits the records of n measured jobs of task t. */
int tune_commit_results(tune_run_t *run, const tune_task_t *t, const char *const *trace_json,
                        const mlc_measure_result_t *results, int n);
/* Appends a point to t's curve (t->trials_before + t->trials, t->best_secs). */
void tune_task_add_point(tune_task_t *t);
/* Frees the tasks and their default traces. */
void tune_tasks_free(tune_run_t *run);

/* ------------------------------------------------------------------------ */
/* Leases (lease.c)                                                          */
/* ------------------------------------------------------------------------ */

/* From the options (NULL: defaults): run->leasing, ttl, retry, owner. */
void tune_lease_setup(tune_run_t *run, const tune_lease_options_t *o);
/* Takes t's lease unless held already: *got false when another job holds it
 * (t is then blocked until its retry time). Always MLC_OK: a database whose
 * leases fail turns leasing off with a warning (*got true). */
int tune_lease_take(tune_run_t *run, tune_task_t *t, bool *got);
/* Renews the leases held that are due (a sixth of the ttl old); a lease that
 * lapsed and went to another job blocks its task. */
void tune_lease_renew(tune_run_t *run);
/* Releases t's lease if held (a failure is a warning: it expires anyway). */
void tune_lease_release(tune_run_t *run, tune_task_t *t);
/* The run's end: every lease released, waits counted, tasks never tuned
 * because another job held them all run get a status saying so. */
void tune_lease_finish(tune_run_t *run);
/* Unblocks the blocked tasks whose retry time has come; returns how many
 * stay blocked. */
int tune_lease_unblock_due(tune_run_t *run);
/* Every task left is held by another job: the waiting line, then naps until
 * the first retry time (or *stop), renewing the leases held meanwhile. */
void tune_lease_wait(tune_run_t *run);

/* ------------------------------------------------------------------------ */
/* Task scheduler (task_scheduler.c)                                         */
/* ------------------------------------------------------------------------ */

/* MetaSchedule's GradientBased: alpha and the window of the backward
 * difference. */
#define TUNE_GRADIENT_ALPHA 0.2
#define TUNE_GRADIENT_WINDOW 3

typedef struct {
  ms_task_sched_kind_t kind;
  int next_rr;              /* round robin: the next task to consider */
  int warmup;               /* gradient: picks made in its first, round-robin pass */
  mlc_rng_t rng;            /* gradient: ties */
} tune_sched_t;

void tune_sched_init(tune_sched_t *s, ms_task_sched_kind_t kind, uint64_t seed);
/* The index of the task to tune next, or -1 when every task is done or
 * blocked (held by another job). */
int tune_sched_next(tune_sched_t *s, const tune_task_t *tasks, int n);
/* The weighted gradient of task t as GradientBased computes it (from
 * t->history and t->weight); larger = more to gain from its next round. */
double tune_sched_gradient(const tune_task_t *t);

/* ------------------------------------------------------------------------ */
/* Progress (progress.c) and plot (plot.c)                                   */
/* ------------------------------------------------------------------------ */

/* After a round of task t: the rewritten status line on a terminal
 * (opts->progress_tty, to stderr) or one info log line. */
void tune_progress_round(tune_run_t *run, const tune_task_t *t, int measured);
/* Ends the status line (a newline) when one was drawn. */
void tune_progress_end(tune_run_t *run);
/* "1m40s", "12s", "2h05m", "-" for unknown, into buf. */
const char *tune_format_duration(double secs, char *buf, size_t len);
/* GFLOP/s of flop operations in secs; 0 when either is unknown. */
double tune_gflops(double flop, double secs);

/* Writes the tuning curves of the run's tasks (best GFLOP/s, or 1/ms when a
 * task has no floating-point operations, against the task's trials) as an
 * SVG file. MLC_EIO naming the path when it cannot be written. */
int tune_plot_write(const tune_run_t *run, const char *path);

/* ------------------------------------------------------------------------ */
/* mlc-tune's summary (cmd_tune_out.c)                                       */
/* ------------------------------------------------------------------------ */

typedef struct {
  const ms_tune_result_t *result;
  const char *target;       /* canonical */
  const char *db;           /* the database's URI, password hidden */
  const char *device_key;
  bool stopped;             /* Ctrl-C ended the run */
  const tune_lease_note_t *leases; /* per task (NULL: none taken) */
} tune_summary_t;

/* The table: per task name, weight, trials (this run and before), best time,
 * GFLOP/s, the default schedule's time and the speedup over it; then the
 * weighted total, the timings and why tasks stopped. */
void tune_print_summary(FILE *f, const tune_summary_t *s);
/* The same as one JSON document (docs/mlc-tune.md lists the fields). */
void tune_print_json(FILE *f, const tune_summary_t *s);
/* Some task has a successful measurement (this run's or the database's). */
bool tune_summary_any_success(const tune_summary_t *s);
/* Trials measured in the run, over all tasks. */
int tune_summary_trials(const tune_summary_t *s);

#endif /* MLC_SEARCH_TUNE_INTERNAL_H */
