/*
 * runner_local.c - the local transport (search.h, ms_runner_local): measures
 * candidates on this machine with mlc_measure, which replays, compiles and
 * times each one in a forked child.
 *
 * With one worker (the default) run() measures the jobs one after another in
 * the calling process: the only honest setting on a CPU that the kernels
 * share (parallel kernels fill every core, and two measurements at once slow
 * each other down). With K > 1 it forks K worker processes for the batch;
 * each takes the next job from a counter in shared memory, measures it (its
 * own forked child per candidate, as always) and writes the result into a
 * shared array. Processes rather than threads: the calling process may have
 * threads of its own, and fork() from a threaded process (which mlc_measure
 * does) can deadlock the child on a lock another thread held, notably in the
 * sanitizers' allocators; a worker process has a single thread.
 *
 * Ctrl-C: worker processes ignore SIGINT (the caller decides when to stop),
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
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "search/tune/tune_internal.h"

/* More processes than this would only queue behind the CPU. */
#define MAX_WORKERS 256

typedef struct {
  ms_runner_t base;
  int workers;
  mlc_measure_options_t opts;
} local_runner_t;

/* Job states in the shared area. */
enum { JOB_FREE, JOB_TAKEN, JOB_DONE, JOB_TRANSPORT_FAILED };

/* What the worker processes of one batch share (MAP_SHARED). */
typedef struct {
  atomic_int next;            /* the next job to take */
  atomic_int *state;          /* n job states */
  mlc_measure_result_t *results; /* n results */
} shared_t;

/* Measures job i into *res. A candidate that cannot be attempted (mlc_measure's
 * argument errors) is that candidate's failure, reported as a build error;
 * only a failed fork or pipe (MLC_EIO) or memory is the transport's: false. */
static bool measure_one(const local_runner_t *r, const ms_job_t *job, mlc_measure_result_t *res) {
  int st = mlc_measure(res, job->workload, job->trace, job->target, &r->opts);
  if (st == MLC_OK) return true;
  memset(res, 0, sizeof *res);
  res->error = MLC_ERROR_KIND_BUILD;
  snprintf(res->message, sizeof res->message, "%s", *mlc_error_last() ? mlc_error_last() : mlc_status_str(st));
  return st != MLC_EIO && st != MLC_ENOMEM;
}

static int run_inline(local_runner_t *r, const ms_job_t *jobs, int n, mlc_measure_result_t *results) {
  for (int i = 0; i < n; i++) {
    if (!measure_one(r, &jobs[i], &results[i]))
      return mlc_error_set(MLC_EIO, "local runner: job %d: %s", i, results[i].message);
  }
  return MLC_OK;
}

static MLC_NORETURN void worker_main(local_runner_t *r, const ms_job_t *jobs, int n, shared_t *sh) {
  signal(SIGINT, SIG_IGN);
  for (;;) {
    int i = atomic_fetch_add(&sh->next, 1);
    if (i >= n) break;
    atomic_store(&sh->state[i], JOB_TAKEN);
    bool ok = measure_one(r, &jobs[i], &sh->results[i]);
    atomic_store(&sh->state[i], ok ? JOB_DONE : JOB_TRANSPORT_FAILED);
  }
  _exit(0); /* no atexit handlers, no flush of the parent's stdio buffers */
}

/* Results of jobs a worker process took but never finished (it died). */
static int settle(shared_t *sh, int n, mlc_measure_result_t *results) {
  int st = MLC_OK;
  for (int i = 0; i < n; i++) {
    int s = atomic_load(&sh->state[i]);
    results[i] = sh->results[i];
    if (s == JOB_TAKEN) {
      memset(&results[i], 0, sizeof results[i]);
      results[i].error = MLC_ERROR_KIND_CRASH;
      snprintf(results[i].message, sizeof results[i].message, "the local worker process measuring it died");
    } else if ((s == JOB_FREE || s == JOB_TRANSPORT_FAILED) && st == MLC_OK) {
      st = mlc_error_set(MLC_EIO, "local runner: job %d was not measured%s%s", i, s == JOB_FREE ? "" : ": ",
                         s == JOB_FREE ? " (every worker process failed)" : results[i].message);
    }
  }
  return st;
}

static int run_processes(local_runner_t *r, const ms_job_t *jobs, int n, mlc_measure_result_t *results) {
  size_t bytes = sizeof(shared_t) + (size_t)n * (sizeof(atomic_int) + sizeof(mlc_measure_result_t)) + 64;
  void *mem = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED) return mlc_error_set(MLC_EIO, "local runner: mmap: %s", strerror(errno));
  shared_t *sh = mem;
  sh->results = (mlc_measure_result_t *)((char *)mem + ((sizeof(shared_t) + 15) & ~(size_t)15));
  sh->state = (atomic_int *)(sh->results + n);
  atomic_init(&sh->next, 0);
  for (int i = 0; i < n; i++) atomic_init(&sh->state[i], JOB_FREE);
  int nproc = r->workers < n ? r->workers : n, started = 0;
  pid_t pids[MAX_WORKERS];
  fflush(NULL); /* nothing buffered is written twice */
  for (int k = 0; k < nproc; k++) {
    pid_t pid = fork();
    if (pid == 0) worker_main(r, jobs, n, sh);
    if (pid < 0) break;
    pids[started++] = pid;
  }
  for (int k = 0; k < started; k++)
    while (waitpid(pids[k], NULL, 0) < 0 && errno == EINTR) {
    }
  int st = started ? settle(sh, n, results) : mlc_error_set(MLC_EIO, "local runner: fork: %s", strerror(errno));
  munmap(mem, bytes);
  return st;
}

static int local_run(ms_runner_t *self, const ms_job_t *jobs, int n, mlc_measure_result_t *results) {
  local_runner_t *r = (local_runner_t *)self;
  if (n < 0 || (n > 0 && (!jobs || !results))) return mlc_error_set(MLC_EINVAL, "runner: bad batch");
  for (int i = 0; i < n; i++) memset(&results[i], 0, sizeof results[i]);
  if (r->workers == 1 || n <= 1) return run_inline(r, jobs, n, results);
  return run_processes(r, jobs, n, results);
}

static void local_free(ms_runner_t *self) { mlc_free(self); }

/* The "model name" line of /proc/cpuinfo, or "unknown". */
static void cpu_model(char *buf, size_t len) {
  snprintf(buf, len, "unknown");
  FILE *f = fopen("/proc/cpuinfo", "r");
  if (!f) return;
  char line[512];
  while (fgets(line, sizeof line, f)) {
    if (strncmp(line, "model name", 10) != 0) continue;
    const char *colon = strchr(line, ':');
    if (!colon) continue;
    colon++;
    while (*colon == ' ' || *colon == '\t') colon++;
    size_t n = strcspn(colon, "\n");
    if (n == 0) continue;
    snprintf(buf, len, "%.*s", (int)n, colon);
    break;
  }
  fclose(f);
}

static int describe_device(local_runner_t *r) {
  mlc_target_t host;
  mlc_target_host(&host);
  snprintf(r->base.device_key, sizeof r->base.device_key, "llvm-%.58s", host.mcpu[0] ? host.mcpu : "generic");
  char cpu[256];
  cpu_model(cpu, sizeof cpu);
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  json_t *o = json_pack("{s:s, s:I, s:s}", "cpu", cpu, "cores", (json_int_t)(cores > 0 ? cores : 1), "mcpu",
                        host.mcpu);
  char *text = o ? mlc_json_dumps(o) : NULL;
  json_decref(o);
  if (!text) return mlc_error_set(MLC_ENOMEM, "runner: out of memory describing the device");
  int st = MLC_OK;
  if (strlen(text) >= sizeof r->base.device_json)
    st = mlc_error_set(MLC_ERANGE, "runner: device description longer than %zu bytes", sizeof r->base.device_json - 1);
  else
    snprintf(r->base.device_json, sizeof r->base.device_json, "%s", text);
  free(text);
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
