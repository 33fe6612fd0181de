/*
 * runner_local.c - the local transport (search.h, ms_runner_local): measures
 * candidates on this machine, each replayed, compiled and timed in forked
 * children (workers/measure.h).
 *
 * Builds in parallel, runs one at a time (as TVM's LocalBuilder and
 * LocalRunner). Compiling a candidate (lowering, LLVM's O3 pipeline, code
 * generation) costs as much as timing it or more, and needs no quiet
 * machine; timing does (DESIGN.md, Measurement: one measurement at a time
 * per device), since a parallel kernel fills every core. So with K > 1
 * workers a batch goes in two stages:
 *   build  K builder processes take the next job from a counter in shared
 *          memory and compile it with mlc_measure_build into an object file
 *          in a private temporary directory (removed afterwards);
 *   run    one runner process then loads and times the objects in batch
 *          order with mlc_measure_prebuilt, nothing else running.
 * Results are those mlc_measure gives: the same error kinds, the timer and
 * the correctness check, build_secs = build + load. With one worker (or a
 * single job) nothing is gained by splitting: each job is mlc_measure, in
 * the calling process, one after another.
 *
 * Processes rather than threads: the calling process may have threads of
 * its own (XGBoost's), and fork() from a threaded process (which every
 * measurement does) can deadlock the child on a lock another thread held,
 * notably in the sanitizers' allocators; a stage process has a single
 * thread. A stage process that dies (killed from outside) costs the job it
 * held (a crash) and a new one takes over the rest of its stage.
 *
 * Ctrl-C: stage processes ignore SIGINT (the caller decides when to stop),
 * and so does the measuring child (workers/measure_child.c), so the
 * candidate being measured finishes. A result killed by SIGINT all the same
 * (someone signalled the child itself) is dropped by ms_tune, not recorded
 * (tune_result_interrupted).
 *
 * The device description comes from the host: key "llvm-<mcpu>" (the CPU
 * name LLVM uses, as `--target llvm` detects it), properties
 * {"cores":N,"cpu":"<model name from /proc/cpuinfo>","mcpu":"..."} and worker
 * id "local-<hostname>-<pid>".
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "search/tune/tune_internal.h"
#include "workers/measure_wire.h"

/* More processes than this would only queue behind the CPU. */
#define MAX_WORKERS 256

typedef struct {
  ms_runner_t base;
  int workers;
  mlc_measure_options_t opts;
} local_runner_t;

mlc_measure_options_t ms_job_options(const ms_job_t *job, const mlc_measure_options_t *runner_opts) {
  mlc_measure_options_t o = *runner_opts;
  if (job->slow_secs > 0) o.slow_secs = job->slow_secs;
  if (job->baseline) {
    o.number = 1;
    o.repeat = 1;
    o.min_repeat_ms = 0;
    o.check_correctness = false;
  }
  return o;
}

/* Job states in a stage's shared area. */
enum { JOB_FREE, JOB_TAKEN, JOB_DONE, JOB_TRANSPORT_FAILED };

/* One stage of a batch: pointers into an area its processes share
 * (MAP_SHARED). The struct itself is copied into each process by fork, so
 * whatever they update together (the counter too) must live in the area. */
typedef struct {
  mlc_measure_result_t *results; /* n results */
  atomic_int *state;             /* n job states */
  atomic_int *next;              /* the next job to take */
  size_t bytes;                  /* of the mapping */
} stage_t;

/* A batch split into stages. */
typedef struct batch batch_t;
/* What a stage does to job i: fills *res; returns the measurement's status. */
typedef int (*stage_fn)(const local_runner_t *r, const batch_t *b, int i, mlc_measure_result_t *res);

struct batch {
  const ms_job_t *jobs;
  int n;
  char dir[PATH_MAX - 32]; /* the objects' private directory */
  stage_t build, run;
};

/* A failure status of a measurement call as the candidate's result: it could
 * not be attempted (bad arguments: a build error); false when the transport
 * failed instead (pipe, fork, memory), which fails the batch. */
static bool settle_status(int st, mlc_measure_result_t *res) {
  if (st == MLC_OK) return true;
  memset(res, 0, sizeof *res);
  res->error = MLC_ERROR_KIND_BUILD;
  snprintf(res->message, sizeof res->message, "%s", mlc_error_or(mlc_status_str(st)));
  return st != MLC_EIO && st != MLC_ENOMEM;
}

static int run_inline(local_runner_t *r, const ms_job_t *jobs, int n, mlc_measure_result_t *results) {
  for (int i = 0; i < n; i++) {
    mlc_measure_options_t o = ms_job_options(&jobs[i], &r->opts);
    int st = mlc_measure(&results[i], jobs[i].workload, jobs[i].trace, jobs[i].target, &o);
    if (!settle_status(st, &results[i]))
      return mlc_error_set(MLC_EIO, "local runner: job %d: %s", i, results[i].message);
  }
  return MLC_OK;
}

/* ------------------------------------------------------------------------ */
/* Stages                                                                    */
/* ------------------------------------------------------------------------ */

static void object_path(char *buf, size_t len, const batch_t *b, int i) { snprintf(buf, len, "%s/%d.o", b->dir, i); }

static int build_one(const local_runner_t *r, const batch_t *b, int i, mlc_measure_result_t *res) {
  char path[PATH_MAX];
  object_path(path, sizeof path, b, i);
  const ms_job_t *j = &b->jobs[i];
  mlc_measure_options_t o = ms_job_options(j, &r->opts);
  return mlc_measure_build(res, path, j->workload, j->trace, j->target, &o);
}

static int run_one(const local_runner_t *r, const batch_t *b, int i, mlc_measure_result_t *res) {
  char path[PATH_MAX];
  object_path(path, sizeof path, b, i);
  mlc_measure_options_t o = ms_job_options(&b->jobs[i], &r->opts);
  int st = mlc_measure_prebuilt(res, &b->build.results[i], path, b->jobs[i].workload, &o);
  unlink(path); /* no longer needed; the directory empties as the stage goes */
  return st;
}

static MLC_NORETURN void stage_main(const local_runner_t *r, const batch_t *b, stage_t *sg, stage_fn fn) {
  signal(SIGINT, SIG_IGN);
  for (;;) {
    int i = atomic_fetch_add(sg->next, 1);
    if (i >= b->n) break;
    atomic_store(&sg->state[i], JOB_TAKEN);
    bool ok = settle_status(fn(r, b, i, &sg->results[i]), &sg->results[i]);
    atomic_store(&sg->state[i], ok ? JOB_DONE : JOB_TRANSPORT_FAILED);
  }
  _exit(0); /* no atexit handlers, no flush of the parent's stdio buffers */
}

static int stage_map(stage_t *sg, int n) {
  size_t bytes = (size_t)n * sizeof(mlc_measure_result_t) + (size_t)(n + 1) * sizeof(atomic_int);
  void *mem = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED) return mlc_error_set(MLC_EIO, "local runner: mmap: %s", strerror(errno));
  sg->bytes = bytes;
  sg->results = mem;
  sg->state = (atomic_int *)(sg->results + n);
  sg->next = sg->state + n;
  atomic_init(sg->next, 0);
  for (int i = 0; i < n; i++) atomic_init(&sg->state[i], JOB_FREE);
  return MLC_OK;
}

static void stage_unmap(stage_t *sg) {
  if (sg->results) munmap(sg->results, sg->bytes);
  sg->results = NULL;
}

/* Starts nproc processes and waits for them all; false when none started. */
static bool stage_round(const local_runner_t *r, const batch_t *b, stage_t *sg, stage_fn fn, int nproc) {
  pid_t pids[MAX_WORKERS];
  int started = 0;
  fflush(NULL); /* nothing buffered is written twice */
  for (int k = 0; k < nproc; k++) {
    pid_t pid = fork();
    if (pid == 0) stage_main(r, b, sg, fn);
    if (pid < 0) break;
    pids[started++] = pid;
  }
  for (int k = 0; k < started; k++)
    while (waitpid(pids[k], NULL, 0) < 0 && errno == EINTR) {
    }
  return started > 0;
}

/* Runs a stage on nproc processes until every job was taken; rounds after
 * the first take over from processes that died. Jobs a dead process held
 * become crashes (`who` names the process); MLC_EIO when a job could not be
 * attempted. */
static int stage_run(const local_runner_t *r, const batch_t *b, stage_t *sg, stage_fn fn, int nproc,
                     const char *who) {
  int before = -1;
  while (atomic_load(sg->next) < b->n && atomic_load(sg->next) > before) {
    before = atomic_load(sg->next);
    if (!stage_round(r, b, sg, fn, nproc))
      return mlc_error_set(MLC_EIO, "local runner: fork: %s", strerror(errno));
  }
  for (int i = 0; i < b->n; i++) {
    int s = atomic_load(&sg->state[i]);
    mlc_measure_result_t *res = &sg->results[i];
    if (s == JOB_TAKEN) {
      memset(res, 0, sizeof *res);
      res->error = MLC_ERROR_KIND_CRASH;
      snprintf(res->message, sizeof res->message, "the local %s process died", who);
    } else if (s != JOB_DONE) {
      return mlc_error_set(MLC_EIO, "local runner: job %d was not measured%s%s", i,
                           s == JOB_FREE ? " (its process could not start)" : ": ",
                           s == JOB_FREE ? "" : res->message);
    }
  }
  return MLC_OK;
}

/* Removes what the stages left in the batch's directory, and it. */
static void remove_objects(const batch_t *b) {
  char path[PATH_MAX];
  for (int i = 0; i < b->n; i++) {
    object_path(path, sizeof path, b, i);
    unlink(path);
  }
  rmdir(b->dir);
}

static int run_staged(local_runner_t *r, const ms_job_t *jobs, int n, mlc_measure_result_t *results) {
  batch_t b = {.jobs = jobs, .n = n};
  const char *tmp = getenv("TMPDIR");
  snprintf(b.dir, sizeof b.dir, "%s/mlc-tune-XXXXXX", tmp && *tmp ? tmp : "/tmp");
  if (!mkdtemp(b.dir))
    return mlc_error_set(MLC_EIO, "local runner: cannot create a directory %s: %s", b.dir, strerror(errno));
  int st = stage_map(&b.build, n);
  if (st == MLC_OK) st = stage_map(&b.run, n);
  if (st == MLC_OK) st = stage_run(r, &b, &b.build, build_one, r->workers < n ? r->workers : n, "builder");
  if (st == MLC_OK) st = stage_run(r, &b, &b.run, run_one, 1, "runner");
  if (st == MLC_OK) memcpy(results, b.run.results, (size_t)n * sizeof *results);
  remove_objects(&b);
  stage_unmap(&b.build);
  stage_unmap(&b.run);
  return st;
}

static int local_run(ms_runner_t *self, const ms_job_t *jobs, int n, mlc_measure_result_t *results) {
  local_runner_t *r = (local_runner_t *)self;
  if (n < 0 || (n > 0 && (!jobs || !results))) return mlc_error_set(MLC_EINVAL, "runner: bad batch");
  for (int i = 0; i < n; i++) memset(&results[i], 0, sizeof results[i]);
  if (r->workers == 1 || n <= 1) return run_inline(r, jobs, n, results);
  return run_staged(r, jobs, n, results);
}

static void local_free(ms_runner_t *self) { mlc_free(self); }

static int describe_device(local_runner_t *r) {
  mlc_target_t host;
  mlc_target_host(&host);
  int st = mlc_device_key(r->base.device_key, sizeof r->base.device_key, &host);
  if (st == MLC_OK) st = mlc_host_device_json(r->base.device_json, sizeof r->base.device_json);
  if (st != MLC_OK) mlc_error_prefix("runner");
  char host_name[64] = "localhost";
  if (gethostname(host_name, sizeof host_name) != 0) snprintf(host_name, sizeof host_name, "localhost");
  host_name[sizeof host_name - 1] = '\0';
  snprintf(r->base.worker_id, sizeof r->base.worker_id, "local-%.40s-%ld", host_name, (long)getpid());
  return st;
}

int ms_runner_local(ms_runner_t **out, int workers, const mlc_measure_options_t *opts) {
  if (!out) return mlc_error_set(MLC_EINVAL, "ms_runner_local: NULL out");
  *out = NULL;
  if (workers < 1 || workers > MAX_WORKERS)
    return mlc_error_set(MLC_EINVAL, "local runner: %d workers, want 1 to %d", workers, MAX_WORKERS);
  local_runner_t *r = mlc_calloc(1, sizeof *r);
  if (!r) return mlc_error_set(MLC_ENOMEM, "local runner: out of memory");
  r->base.name = "local";
  r->base.run = local_run;
  r->base.free = local_free;
  r->workers = workers;
  if (opts) r->opts = *opts;
  else mlc_measure_options_default(&r->opts);
  int st = describe_device(r);
  if (st != MLC_OK) {
    mlc_free(r);
    return st;
  }
  *out = &r->base;
  return MLC_OK;
}

void ms_runner_free(ms_runner_t *r) {
  if (r && r->free) r->free(r);
}
