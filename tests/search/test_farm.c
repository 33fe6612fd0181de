/*
 * test_farm.c - tuning through a farm of real processes (DESIGN.md, Wire
 * protocol; search/tune/runner_farm.h): an mlc-broker and mlc-worker
 * processes from the build directory, and ms_tune with ms_runner_farm on a
 * thread of this process while the main thread breaks things:
 *
 *   - one of three workers SIGKILLed while it measures: the run completes,
 *     the database holds exactly the trials (no trace twice, none lost);
 *   - a worker sent SIGTERM while it measures: its job's result arrives
 *     (the broker re-queues nothing) and it exits 0;
 *   - the broker SIGKILLed mid-run and restarted on the same endpoint: the
 *     run completes, exactly the trials again;
 *   - two mlc-tune --farm processes tuning different workloads at once on
 *     one broker and one database: both finish with their own trials;
 *   - (as root, where `ip netns` works) broker and workers in separate
 *     network namespaces joined by a veth pair whose link is cut for 5 s
 *     mid-run: the run completes; skipped with the reason otherwise;
 *   - the local farm (ms_local_farm_start): broker thread + mlc-worker
 *     processes on ipc://, torn down without leftovers.
 *
 * Tiny workloads (GMM-16), the random cost model, min_repeat_ms 1, and
 * every candidate checked against the interpreter.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "rpc/rpc.h"
#include "search/search.h"
#include "search/tune/runner_farm.h"
#include "tests/lib/check_ok.h"
#include "workers/measure_wire.h"

#define MAX_PROCS 8

/* Two network namespaces joined by a veth pair (the link-cut test). */
typedef struct {
  char ns_a[32], ns_b[32], veth_a[16], veth_b[16];
  bool made;
} netns_t;

typedef struct {
  char dir[64];
  char endpoint[128];   /* what the client and the stats use */
  char worker_ep[128];  /* what workers connect to (the same, but in netns) */
  char bind[256];       /* what the broker binds */
  char uri[96];
  pid_t broker;
  pid_t workers[MAX_PROCS];
  int nworkers;
  const char *netns_broker, *netns_workers; /* NULL: this namespace */
  netns_t netns;            /* removed by the teardown when made */
  mlc_target_t target;
  char target_str[512];
} farm_t;

static void sleep_ms(int ms) {
  struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ------------------------------------------------------------------------ */
/* Processes                                                                 */
/* ------------------------------------------------------------------------ */

/* fork + exec (execvp) with SIGKILL when this process dies, standard output
 * into `out` when not NULL; called from the main thread only (the
 * parent-death signal follows the forking thread). */
static pid_t spawn_to(char *const argv[], const char *out) {
  pid_t parent = getpid();
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127);
    int fd = out ? open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644) : -1;
    if (fd >= 0) dup2(fd, STDOUT_FILENO);
    execvp(argv[0], argv);
    _exit(127);
  }
  assert_true(pid > 0);
  return pid;
}

static pid_t spawn(char *const argv[]) { return spawn_to(argv, NULL); }

/* argv with "ip netns exec NS" in front when ns is set. */
static pid_t spawn_in(const char *ns, char *const argv[]) {
  if (!ns) return spawn(argv);
  char *full[24] = {"ip", "netns", "exec", (char *)ns};
  int n = 4;
  for (int i = 0; argv[i] && n < 23; i++) full[n++] = argv[i];
  full[n] = NULL;
  return spawn(full);
}

static void kill_wait(pid_t *pid, int sig) {
  if (*pid <= 0) return;
  kill(*pid, sig);
  while (waitpid(*pid, NULL, 0) < 0 && errno == EINTR) {
  }
  *pid = 0;
}

static void start_broker(farm_t *fx) {
  char *argv[] = {MLC_BUILD_DIR "/mlc-broker", "--bind", fx->bind, NULL};
  fx->broker = spawn_in(fx->netns_broker, argv);
}

static void start_worker(farm_t *fx) {
  char id[32];
  snprintf(id, sizeof id, "test-w%d", fx->nworkers);
  char *argv[] = {MLC_BUILD_DIR "/mlc-worker", "--broker", fx->worker_ep, "--worker-id", id, NULL};
  fx->workers[fx->nworkers++] = spawn_in(fx->netns_workers, argv);
}

/* Workers the broker counts in its STATS reply, over every device key:
 * {"<device key>": {"workers": N, ...}, ...}. */
static int count_workers(const json_t *stats) {
  int n = 0;
  const char *key;
  json_t *v;
  json_object_foreach((json_t *)stats, key, v) {
    const json_t *w = json_object_get(v, "workers");
    if (json_is_integer(w)) n += (int)json_integer_value(w);
  }
  return n;
}

static void wait_workers(farm_t *fx, int n) {
  double end = now_s() + 30;
  int have = 0;
  while (now_s() < end) {
    json_t *stats = NULL;
    if (rpc_broker_stats(&stats, fx->endpoint, NULL, 1000) == MLC_OK) {
      have = count_workers(stats);
      json_decref(stats);
      if (have >= n) return;
    }
    sleep_ms(100);
  }
  fprintf(stderr, "only %d of %d workers registered\n", have, n);
  fail();
}

/* The first child of pid (0: none), from /proc. */
static pid_t first_child(pid_t pid) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/task/%d/children", (int)pid, (int)pid);
  FILE *f = fopen(path, "r");
  if (!f) return 0;
  int child = 0;
  if (fscanf(f, "%d", &child) != 1) child = 0;
  fclose(f);
  return child;
}

/* A worker is measuring when its measuring process has a child. */
static bool measuring(pid_t worker) {
  pid_t server = worker > 0 ? first_child(worker) : 0;
  return server > 0 && first_child(server) > 0;
}

/* Waits until at least `n` workers measure at once (a batch is spread over
 * them); returns the index of one of them. */
static int wait_measuring(farm_t *fx, int n) {
  double end = now_s() + 60;
  while (now_s() < end) {
    int busy = 0, which = -1;
    for (int k = 0; k < fx->nworkers; k++)
      if (measuring(fx->workers[k])) busy++, which = k;
    if (busy >= n) return which;
    sleep_ms(20);
  }
  fail_msg("no batch in flight after 60 s");
  return -1;
}

/* ------------------------------------------------------------------------ */
/* Network namespaces                                                        */
/* ------------------------------------------------------------------------ */

static int sh(const char *fmt, ...) MLC_PRINTF(1, 2);
static int sh(const char *fmt, ...) {
  char cmd[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(cmd, sizeof cmd, fmt, ap);
  va_end(ap);
  char quiet[600];
  snprintf(quiet, sizeof quiet, "%s >/dev/null 2>&1", cmd);
  int rc = system(quiet);
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

static void netns_remove(netns_t *n) {
  sh("ip netns del %s", n->ns_a);
  sh("ip netns del %s", n->ns_b);
  n->made = false;
}

/* Two namespaces joined by a veth pair: A 10.231.0.1 (broker), B 10.231.0.2
 * (workers). False (and *why) when this machine cannot. */
static bool netns_make(netns_t *n, char *why, size_t len) {
  int id = (int)(getpid() % 100000);
  snprintf(n->ns_a, sizeof n->ns_a, "mlc-farm-a%d", id);
  snprintf(n->ns_b, sizeof n->ns_b, "mlc-farm-b%d", id);
  snprintf(n->veth_a, sizeof n->veth_a, "mfa%d", id);
  snprintf(n->veth_b, sizeof n->veth_b, "mfb%d", id);
  if (geteuid() != 0) {
    snprintf(why, len, "not running as root");
    return false;
  }
  if (sh("ip netns add %s", n->ns_a) != 0 || sh("ip netns add %s", n->ns_b) != 0) {
    snprintf(why, len, "`ip netns add` failed (no ip(8) or no permission)");
    netns_remove(n);
    return false;
  }
  if (sh("ip link add %s netns %s type veth peer name %s netns %s", n->veth_a, n->ns_a, n->veth_b, n->ns_b) != 0 ||
      sh("ip -n %s addr add 10.231.0.1/24 dev %s", n->ns_a, n->veth_a) != 0 ||
      sh("ip -n %s addr add 10.231.0.2/24 dev %s", n->ns_b, n->veth_b) != 0 ||
      sh("ip -n %s link set %s up", n->ns_a, n->veth_a) != 0 || sh("ip -n %s link set %s up", n->ns_b, n->veth_b) != 0 ||
      sh("ip -n %s link set lo up", n->ns_a) != 0 || sh("ip -n %s link set lo up", n->ns_b) != 0) {
    snprintf(why, len, "cannot make a veth pair between network namespaces");
    netns_remove(n);
    return false;
  }
  n->made = true;
  return true;
}

/* ------------------------------------------------------------------------ */
/* Fixture                                                                   */
/* ------------------------------------------------------------------------ */

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw) {
  (void)sb, (void)flag, (void)ftw;
  return remove(path);
}

static int setup(void **state) {
  farm_t *fx = calloc(1, sizeof *fx);
  snprintf(fx->dir, sizeof fx->dir, "/tmp/mlc-test-farm-XXXXXX");
  if (!mkdtemp(fx->dir)) return -1;
  snprintf(fx->endpoint, sizeof fx->endpoint, "ipc://%s/broker", fx->dir);
  snprintf(fx->worker_ep, sizeof fx->worker_ep, "%s", fx->endpoint);
  snprintf(fx->bind, sizeof fx->bind, "%s", fx->endpoint);
  snprintf(fx->uri, sizeof fx->uri, "file:%s/db", fx->dir);
  mlc_target_host(&fx->target);
  mlc_target_str(&fx->target, fx->target_str, sizeof fx->target_str);
  *state = fx;
  return 0;
}

static int teardown(void **state) {
  farm_t *fx = *state;
  for (int k = 0; k < fx->nworkers; k++) kill_wait(&fx->workers[k], SIGKILL);
  kill_wait(&fx->broker, SIGKILL);
  if (fx->netns.made) netns_remove(&fx->netns); /* after the processes in them */
  nftw(fx->dir, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
  free(fx);
  return 0;
}

/* ------------------------------------------------------------------------ */
/* The tuning client, on a thread                                            */
/* ------------------------------------------------------------------------ */

typedef struct {
  farm_t *fx;
  int64_t n;            /* GMM-n */
  int trials;
  pthread_t thread;
  int st;
  char error[512];
  ms_tune_result_t res;
  uint64_t key;
  double secs;
} tuner_t;

static ms_tune_options_t quick_options(int trials) {
  ms_tune_options_t o;
  ms_tune_options_default(&o);
  o.trials = trials;
  o.per_round = 8;
  o.seed = 11;
  o.model = CM_MODEL_RANDOM;
  o.search.population = 16;
  o.search.generations = 1;
  o.search.init_min_valid = 8;
  return o;
}

static tir_func_t *gmm(int64_t n) {
  tir_func_t *f = NULL;
  int64_t shape[3] = {n, n, n};
  tir_dtype_t none = {0, 0, 0};
  if (tir_workload_build(&f, "GMM", shape, 3, tir_dt_FLOAT32(), none) != MLC_OK) return NULL;
  return f;
}

static void *tuner_main(void *p) {
  tuner_t *t = p;
  double t0 = now_s();
  tir_func_t *f = gmm(t->n);
  db_t *db = NULL;
  ms_runner_t *runner = NULL;
  mlc_measure_options_t mo;
  mlc_measure_options_default(&mo);
  mo.number = 1;
  mo.min_repeat_ms = 1;
  mo.check_correctness = true;
  t->st = f ? db_open(&db, t->fx->uri) : MLC_ENOMEM;
  if (t->st == MLC_OK) t->st = ms_runner_farm(&runner, t->fx->endpoint, NULL, NULL, &t->fx->target, &mo);
  if (t->st == MLC_OK) {
    ms_tune_options_t o = quick_options(t->trials);
    const char *names[] = {"gmm"};
    t->key = tir_func_key(f);
    t->st = ms_tune(&t->res, &f, names, 1, &t->fx->target, db, runner, &o);
  }
  snprintf(t->error, sizeof t->error, "%s", mlc_error_last());
  ms_runner_free(runner);
  db_close(db);
  tir_func_free(f);
  t->secs = now_s() - t0;
  return NULL;
}

static void tuner_start(tuner_t *t, farm_t *fx, int64_t n, int trials) {
  memset(t, 0, sizeof *t);
  t->fx = fx;
  t->n = n;
  t->trials = trials;
  assert_int_equal(pthread_create(&t->thread, NULL, tuner_main, t), 0);
}

/* Joins the tuner; the run succeeded and spent its whole budget. */
static void tuner_join(tuner_t *t) {
  pthread_join(t->thread, NULL);
  if (t->st != MLC_OK) fprintf(stderr, "ms_tune: %s\n", t->error);
  assert_int_equal(t->st, MLC_OK);
  assert_int_equal(t->res.ntasks, 1);
  assert_int_equal(t->res.tasks[0].trials, t->trials);
  assert_true(t->res.tasks[0].best_secs > 0);
  ms_tune_result_free(&t->res);
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return (x > y) - (x < y);
}

/* The database holds exactly trials + 1 records of the workload (the
 * default schedule is the +1), no trace twice, none lost or crashed. */
static void assert_records(farm_t *fx, uint64_t key, int trials) {
  db_t *db = NULL;
  OK(db_open(&db, fx->uri));
  db_result_t *res = NULL;
  db_filter_t filter = {.workload_key = key, .target = fx->target_str};
  OK(db_records(db, &res, &filter));
  assert_int_equal(res->nrecords, trials + 1);
  uint64_t *h = calloc((size_t)res->nrecords, sizeof *h);
  for (int i = 0; i < res->nrecords; i++) {
    const db_record_t *r = &res->records[i];
    h[i] = r->trace_hash;
    if (r->error_kind != MLC_ERROR_KIND_NONE && r->error_kind != MLC_ERROR_KIND_BUILD)
      fprintf(stderr, "record %s: %s: %s\n", r->id, mlc_error_kind_name(r->error_kind), r->error_msg);
    assert_true(r->error_kind != MLC_ERROR_KIND_WORKER_LOST && r->error_kind != MLC_ERROR_KIND_CRASH &&
                r->error_kind != MLC_ERROR_KIND_WRONG_RESULT);
    assert_non_null(strstr(r->worker_id, "test-w"));
  }
  qsort(h, (size_t)res->nrecords, sizeof *h, cmp_u64);
  for (int i = 1; i < res->nrecords; i++) assert_true(h[i] != h[i - 1]);
  free(h);
  db_result_free(res);
  db_close(db);
}

/* ------------------------------------------------------------------------ */
/* Tests                                                                     */
/* ------------------------------------------------------------------------ */

static void test_worker_killed_mid_batch(void **state) {
  farm_t *fx = *state;
  start_broker(fx);
  for (int k = 0; k < 3; k++) start_worker(fx);
  wait_workers(fx, 3);
  tuner_t t;
  tuner_start(&t, fx, 16, 24);
  int victim = wait_measuring(fx, 2);
  kill_wait(&fx->workers[victim], SIGKILL);
  tuner_join(&t);
  assert_records(fx, t.key, 24);
}

static void test_broker_killed_and_restarted(void **state) {
  farm_t *fx = *state;
  start_broker(fx);
  for (int k = 0; k < 2; k++) start_worker(fx);
  wait_workers(fx, 2);
  tuner_t t;
  tuner_start(&t, fx, 16, 16);
  wait_measuring(fx, 1);
  kill_wait(&fx->broker, SIGKILL);
  sleep_ms(300);
  start_broker(fx);
  tuner_join(&t);
  assert_records(fx, t.key, 16);
}

/* The broker's "requeued" count over every device key. */
static int requeued(farm_t *fx) {
  json_t *stats = NULL;
  OK(rpc_broker_stats(&stats, fx->endpoint, NULL, 5000));
  int n = 0;
  const char *key;
  json_t *v;
  json_object_foreach(stats, key, v) n += (int)json_integer_value(json_object_get(v, "requeued"));
  json_decref(stats);
  return n;
}

/* SIGTERM while measuring: the job finishes, its result is delivered (the
 * broker re-queues nothing), the worker exits 0. */
static void test_worker_sigterm_finishes_its_job(void **state) {
  farm_t *fx = *state;
  start_broker(fx);
  for (int k = 0; k < 2; k++) start_worker(fx);
  wait_workers(fx, 2);
  tuner_t t;
  tuner_start(&t, fx, 16, 8);
  int k = wait_measuring(fx, 1);
  kill(fx->workers[k], SIGTERM);
  int status = -1;
  assert_int_equal(waitpid(fx->workers[k], &status, 0), fx->workers[k]);
  fx->workers[k] = 0;
  assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  tuner_join(&t);
  assert_int_equal(requeued(fx), 0);
  assert_records(fx, t.key, 8);
}

/* mlc-tune --farm on GMM-n into the shared database; its JSON summary goes
 * to out[len]. */
static pid_t start_cli_tuner(farm_t *fx, int64_t n, int trials, char *out, size_t len) {
  char file[128];
  snprintf(file, sizeof file, "%s/gmm%d.py", fx->dir, (int)n);
  snprintf(out, len, "%s/gmm%d.json", fx->dir, (int)n);
  tir_func_t *f = gmm(n);
  char *text = tir_print_func(f);
  OK(mlc_write_file(file, text, strlen(text)));
  mlc_free(text);
  tir_func_free(f);
  char ntrials[16];
  snprintf(ntrials, sizeof ntrials, "%d", trials);
  char *argv[] = {MLC_BUILD_DIR "/mlc-tune", file, "--target", "llvm", "--trials", ntrials, "--db", fx->uri,
                  "--farm", fx->endpoint, "--per-round", "4", "--min-repeat-ms", "1", "--number", "1",
                  "--population", "16", "--generations", "1", "--model", "random", "--check", "--json", NULL};
  return spawn_to(argv, out);
}

static void test_two_clients_at_once(void **state) {
  farm_t *fx = *state;
  start_broker(fx);
  for (int k = 0; k < 2; k++) start_worker(fx);
  wait_workers(fx, 2);
  char f1[128], f2[128];
  pid_t a = start_cli_tuner(fx, 16, 8, f1, sizeof f1), b = start_cli_tuner(fx, 24, 8, f2, sizeof f2);
  int sa = -1, sb = -1;
  assert_int_equal(waitpid(a, &sa, 0), a);
  assert_int_equal(waitpid(b, &sb, 0), b);
  assert_true(WIFEXITED(sa) && WEXITSTATUS(sa) == 0);
  assert_true(WIFEXITED(sb) && WEXITSTATUS(sb) == 0);
  const char *outs[] = {f1, f2};
  for (int i = 0; i < 2; i++) { /* each summary: its own task, 8 trials */
    json_t *sum = mlc_json_load_file(outs[i]);
    assert_non_null(sum);
    json_t *task = json_array_get(json_object_get(sum, "tasks"), 0);
    assert_int_equal(json_integer_value(json_object_get(task, "trials")), 8);
    json_decref(sum);
  }
  tir_func_t *g16 = gmm(16), *g24 = gmm(24);
  assert_records(fx, tir_func_key(g16), 8);
  assert_records(fx, tir_func_key(g24), 8);
  tir_func_free(g16);
  tir_func_free(g24);
}

static void test_link_cut_between_namespaces(void **state) {
  farm_t *fx = *state;
  netns_t *n = &fx->netns;
  char why[160];
  if (!netns_make(n, why, sizeof why)) {
    printf("skipped: network namespaces: %s\n", why);
    skip();
  }
  /* The broker listens on the veth (workers) and on ipc:// (this client:
   * a path in the file system crosses network namespaces). */
  snprintf(fx->bind, sizeof fx->bind, "tcp://10.231.0.1:5599,%s", fx->endpoint);
  snprintf(fx->worker_ep, sizeof fx->worker_ep, "tcp://10.231.0.1:5599");
  fx->netns_broker = n->ns_a;
  fx->netns_workers = n->ns_b;
  start_broker(fx);
  for (int k = 0; k < 2; k++) start_worker(fx);
  wait_workers(fx, 2);
  tuner_t t;
  tuner_start(&t, fx, 16, 16);
  wait_measuring(fx, 1);
  assert_int_equal(sh("ip -n %s link set %s down", n->ns_b, n->veth_b), 0);
  sleep_ms(5000); /* longer than the liveness (3 heartbeats of 1 s) */
  assert_int_equal(sh("ip -n %s link set %s up", n->ns_b, n->veth_b), 0);
  tuner_join(&t);
  assert_records(fx, t.key, 16);
}

/* ------------------------------------------------------------------------ */
/* The local farm                                                            */
/* ------------------------------------------------------------------------ */

static void test_local_farm_measures_and_cleans_up(void **state) {
  farm_t *fx = *state;
  ms_local_farm_t *farm = NULL;
  OK(ms_local_farm_start(&farm, 2, &fx->target, MLC_BUILD_DIR "/mlc-worker"));
  char dir[256];
  snprintf(dir, sizeof dir, "%s", ms_local_farm_endpoint(farm) + strlen("ipc://"));
  *strrchr(dir, '/') = '\0';
  struct stat sb;
  assert_int_equal(stat(dir, &sb), 0);
  /* One batch through it: the default schedule and a tiling of GMM-16. */
  ms_runner_t *runner = NULL;
  mlc_measure_options_t mo;
  mlc_measure_options_default(&mo);
  mo.number = 1;
  mo.min_repeat_ms = 1;
  OK(ms_runner_farm(&runner, ms_local_farm_endpoint(farm), NULL, NULL, &fx->target, &mo));
  tir_func_t *f = gmm(16);
  const char *py = "b0 = sch.get_block(name=\"C\", func_name=\"main\")\n"
                   "l1, l2, l3 = sch.get_loops(block=b0)\n"
                   "sch.vectorize(loop=l2)\n";
  sch_trace_t *tiled = NULL, *empty = NULL;
  OK(sch_trace_from_python(&tiled, py, strlen(py), "t.py"));
  OK(sch_trace_from_python(&empty, "", 0, "e.py"));
  ms_job_t jobs[3] = {{f, empty, &fx->target, true, 0}, {f, tiled, &fx->target, false, 0}, {f, tiled, &fx->target, false, 0}};
  mlc_measure_result_t res[3];
  OK(runner->run(runner, jobs, 3, res));
  for (int i = 0; i < 3; i++) {
    assert_int_equal(res[i].error, MLC_ERROR_KIND_NONE);
    assert_true(mlc_measure_median(&res[i]) > 0);
  }
  assert_non_null(strstr(runner->worker_id, "local-"));
  assert_non_null(strstr(runner->device_json, "cores"));
  char key[64];
  OK(mlc_device_key(key, sizeof key, &fx->target));
  assert_string_equal(runner->device_key, key);
  ms_runner_free(runner);
  sch_trace_free(tiled);
  sch_trace_free(empty);
  tir_func_free(f);
  ms_local_farm_stop(farm);
  assert_int_equal(stat(dir, &sb), -1); /* the directory is gone */
  /* Nothing left: no child of this process. */
  assert_int_equal(first_child(getpid()), 0);
}

static void test_local_farm_refusals(void **state) {
  farm_t *fx = *state;
  ms_local_farm_t *farm = NULL;
  assert_int_equal(ms_local_farm_start(&farm, 0, &fx->target, NULL), MLC_EINVAL);
  assert_int_equal(ms_local_farm_start(&farm, 1, &fx->target, "/nonexistent/mlc-worker"), MLC_ENOTFOUND);
  /* A worker that exits at once (here: its target cannot run on this CPU,
   * or /bin/false): the start fails naming it instead of waiting. */
  double t0 = now_s();
  assert_int_equal(ms_local_farm_start(&farm, 1, &fx->target, "/bin/false"), MLC_EIO);
  assert_non_null(strstr(mlc_error_last(), "exited with status 1"));
  assert_true(now_s() - t0 < 10);
  assert_null(farm);
  ms_runner_t *r = NULL;
  assert_int_equal(ms_runner_farm(&r, "", NULL, NULL, &fx->target, NULL), MLC_EINVAL);
  mlc_measure_options_t mo;
  mlc_measure_options_default(&mo);
  tir_func_t *f = gmm(4);
  mo.reference = f;
  assert_int_equal(ms_runner_farm(&r, fx->endpoint, NULL, NULL, &fx->target, &mo), MLC_EINVAL);
  assert_null(r);
  tir_func_free(f);
}

int main(void) {
  setenv("MLC_LOG", "warn", 0); /* the children's too */
  mlc_log_set_level(MLC_LOG_WARN);
  signal(SIGPIPE, SIG_IGN);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_local_farm_refusals, setup, teardown),
      cmocka_unit_test_setup_teardown(test_local_farm_measures_and_cleans_up, setup, teardown),
      cmocka_unit_test_setup_teardown(test_worker_killed_mid_batch, setup, teardown),
      cmocka_unit_test_setup_teardown(test_worker_sigterm_finishes_its_job, setup, teardown),
      cmocka_unit_test_setup_teardown(test_broker_killed_and_restarted, setup, teardown),
      cmocka_unit_test_setup_teardown(test_two_clients_at_once, setup, teardown),
      cmocka_unit_test_setup_teardown(test_link_cut_between_namespaces, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
