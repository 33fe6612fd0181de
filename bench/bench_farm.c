/*
 * bench_farm.c - the farm's own cost (issue 7, "Benchmark"): no-op jobs
 * through a broker and worker threads on loopback, so what is measured is
 * routing, not measurement.
 *
 *   throughput   one client submits N jobs at once (rpc_client_run), the
 *                broker spreads them over W workers: jobs per second; twice,
 *                with workers as mlc-worker starts them (prefetch 0: a worker
 *                holds only the job it runs) and with --prefetch P (each
 *                worker holds P more, so no runner waits for the round trip
 *                to the broker between jobs)
 *   latency      one job at a time, M times: the round trip client ->
 *                broker -> worker -> broker -> client, p50 and p99; this is
 *                what the farm adds to every measurement
 *   peer         ZeroMQ's own floor on the same transport: a raw DEALER to
 *                ROUTER echo, p50 round trip; a farm job makes two such round
 *                trips (client-broker and broker-worker), so 2x that p50 is
 *                the latency no broker could beat here
 *
 * Targets (issue 7): >= 10,000 jobs/s routed, <= 1 ms p50 added per job.
 * They are printed beside the measurements; the exit status does not depend
 * on them (a benchmark informs, tests decide). The load average is printed
 * before and after: on a shared machine the numbers move with it.
 *
 * Jobs carry a realistic payload (a small TVMScript workload and a trace of
 * a few hundred bytes); the callback answers at once with one run time.
 *
 *   bench_farm [--jobs N] [--rounds M] [--workers W] [--capacity C] [--prefetch P] [--ipc]
 */
#include "rpc/rpc.h"

#include <dirent.h>
#include <pthread.h>
#include <sys/resource.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* CPU seconds (user + system) used by every thread of the process so far. */
static double cpu_s(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) + (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
}

/* CPU seconds of the broker's thread (named "mlc-broker"); -1 when not found. */
static double broker_cpu_s(void) {
  DIR *d = opendir("/proc/self/task");
  double cpu = -1;
  struct dirent *e;
  while (d && (e = readdir(d)) != NULL) {
    char path[300], comm[64] = "", stat[1024];
    snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
    FILE *f = fopen(path, "r");
    if (!f) continue;
    if (!fgets(comm, sizeof comm, f)) comm[0] = '\0';
    fclose(f);
    if (strcmp(comm, "mlc-broker\n") != 0) continue;
    snprintf(path, sizeof path, "/proc/self/task/%s/stat", e->d_name);
    if (!(f = fopen(path, "r"))) continue;
    size_t n = fread(stat, 1, sizeof stat - 1, f);
    fclose(f);
    stat[n] = '\0';
    unsigned long utime, stime;
    const char *after = strrchr(stat, ')'); /* fields 14 and 15, counted after the command name */
    if (after && sscanf(after + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &utime, &stime) == 2)
      cpu = (double)(utime + stime) / (double)sysconf(_SC_CLK_TCK);
  }
  if (d) closedir(d);
  return cpu;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double percentile(double *v, int n, double p) {
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  int i = (int)(p * (n - 1) + 0.5);
  return v[i];
}

static void load_average(const char *when) {
  FILE *f = fopen("/proc/loadavg", "r");
  char line[128] = "?";
  if (f) {
    if (!fgets(line, sizeof line, f)) snprintf(line, sizeof line, "?\n");
    fclose(f);
  }
  printf("load average %s: %s", when, line);
}

/* ------------------------------------------------------------------------ */
/* Workers                                                                   */
/* ------------------------------------------------------------------------ */

typedef struct {
  pthread_t thread;
  rpc_worker_options_t o;
  char id[32];
  volatile int stop;
} worker_t;

static int noop(void *payload, const rpc_job_t *job, rpc_result_t *out) {
  (void)payload;
  (void)job;
  out->nrun_secs = 1;
  out->run_secs[0] = 1e-6;
  return MLC_OK;
}

static void *worker_main(void *arg) {
  worker_t *w = arg;
  pthread_setname_np(pthread_self(), "bench-worker"); /* profiles tell it from the client */
  if (rpc_worker_run(&w->o, &w->stop) != MLC_OK) fprintf(stderr, "bench_farm: worker: %s\n", mlc_error_last());
  return NULL;
}

/* ------------------------------------------------------------------------ */
/* Jobs                                                                      */
/* ------------------------------------------------------------------------ */

static const char workload[] =
    "@T.prim_func\n"
    "def main(A: T.Buffer((64, 64), \"float32\"), B: T.Buffer((64, 64), \"float32\"),\n"
    "         C: T.Buffer((64, 64), \"float32\")):\n"
    "    for i, j, k in T.grid(64, 64, 64):\n"
    "        with T.block(\"C\"):\n"
    "            vi, vj, vk = T.axis.remap(\"SSR\", [i, j, k])\n"
    "            with T.init():\n"
    "                C[vi, vj] = T.float32(0)\n"
    "            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]\n";

static const char trace[] =
    "[[[\"GetBlock\",[],[\"C\",\"main\"],[\"b0\"]],[\"GetLoops\",[\"b0\"],[],[\"l1\",\"l2\",\"l3\"]],"
    "[\"SamplePerfectTile\",[\"l1\"],[4,64],[\"v4\",\"v5\",\"v6\",\"v7\"]],"
    "[\"Split\",[\"l1\",\"v4\",\"v5\",\"v6\",\"v7\"],[1],[\"l8\",\"l9\",\"l10\",\"l11\"]],"
    "[\"SamplePerfectTile\",[\"l2\"],[4,64],[\"v12\",\"v13\",\"v14\",\"v15\"]],"
    "[\"Split\",[\"l2\",\"v12\",\"v13\",\"v14\",\"v15\"],[1],[\"l16\",\"l17\",\"l18\",\"l19\"]],"
    "[\"Reorder\",[\"l8\",\"l16\",\"l9\",\"l17\",\"l3\",\"l10\",\"l18\",\"l11\",\"l19\"],[],[]]],"
    "[[2,[2,4,2,4]],[4,[1,8,2,4]]]]";

static rpc_job_t *make_jobs(int n) {
  rpc_job_t *jobs = calloc((size_t)n, sizeof *jobs);
  for (int i = 0; jobs && i < n; i++) {
    snprintf(jobs[i].device_key, sizeof jobs[i].device_key, "llvm-bench");
    jobs[i].workload = (char *)workload;
    jobs[i].trace_json = (char *)trace;
    jobs[i].target = "llvm -mcpu=skylake-avx512 -num-cores=2";
  }
  return jobs;
}

typedef struct {
  int n, failed;
} tally_t;

static void on_result(void *payload, int index, const rpc_result_t *r) {
  tally_t *t = payload;
  (void)index;
  t->n++;
  t->failed += r->error != MLC_ERROR_KIND_NONE;
}

/* ------------------------------------------------------------------------ */
/* The ZeroMQ peer: raw echo round trips                                     */
/* ------------------------------------------------------------------------ */

typedef struct {
  void *ctx;
  char endpoint[256];
  volatile int ready;
  int rounds;
} echo_t;

static void *echo_main(void *arg) {
  echo_t *e = arg;
  void *s = zmq_socket(e->ctx, ZMQ_ROUTER);
  char ep[256];
  size_t len = sizeof ep;
  zmq_bind(s, strncmp(e->endpoint, "ipc", 3) == 0 ? e->endpoint : "tcp://127.0.0.1:*");
  zmq_getsockopt(s, ZMQ_LAST_ENDPOINT, ep, &len);
  snprintf(e->endpoint, sizeof e->endpoint, "%s", ep);
  __atomic_store_n(&e->ready, 1, __ATOMIC_RELEASE);
  for (int i = 0; i < e->rounds; i++) {
    char id[256], body[2048];
    int idn = zmq_recv(s, id, sizeof id, 0);
    int n = zmq_recv(s, body, sizeof body, 0);
    if (idn < 0 || n < 0) break;
    zmq_send(s, id, (size_t)idn, ZMQ_SNDMORE);
    zmq_send(s, body, (size_t)(n < (int)sizeof body ? n : (int)sizeof body), 0);
  }
  int linger = 0;
  zmq_setsockopt(s, ZMQ_LINGER, &linger, sizeof linger);
  zmq_close(s);
  return NULL;
}

static double zmq_echo_p50(bool ipc, int rounds) {
  echo_t e = {.ctx = zmq_ctx_new(), .rounds = rounds};
  snprintf(e.endpoint, sizeof e.endpoint, ipc ? "ipc:///tmp/bench-farm-echo-%d" : "tcp", (int)getpid());
  pthread_t t;
  pthread_create(&t, NULL, echo_main, &e);
  while (!__atomic_load_n(&e.ready, __ATOMIC_ACQUIRE)) usleep(1000);
  void *s = zmq_socket(e.ctx, ZMQ_DEALER);
  zmq_connect(s, e.endpoint);
  double *lat = calloc((size_t)rounds, sizeof *lat);
  char body[1024];
  memset(body, 'x', sizeof body);
  for (int i = 0; i < rounds; i++) {
    double t0 = now_s();
    zmq_send(s, body, sizeof body, 0);
    zmq_recv(s, body, sizeof body, 0);
    lat[i] = now_s() - t0;
  }
  double p50 = percentile(lat, rounds, 0.5);
  free(lat);
  int linger = 0;
  zmq_setsockopt(s, ZMQ_LINGER, &linger, sizeof linger);
  zmq_close(s);
  pthread_join(t, NULL);
  zmq_ctx_term(e.ctx);
  return p50;
}

/* ------------------------------------------------------------------------ */
/* Main                                                                      */
/* ------------------------------------------------------------------------ */

static int usage(void) {
  fprintf(stderr, "usage: bench_farm [--jobs N] [--rounds M] [--workers W] [--capacity C] [--prefetch P] [--ipc]\n");
  return 2;
}

static void workers_start(worker_t *workers, int n, const char *ep, int capacity, int prefetch) {
  memset(workers, 0, sizeof *workers * (size_t)n);
  for (int i = 0; i < n; i++) {
    snprintf(workers[i].id, sizeof workers[i].id, "bench-%d-p%d", i, prefetch);
    workers[i].o = (rpc_worker_options_t){.broker = ep, .device_key = "llvm-bench", .device_json = "{}",
                                          .worker_id = workers[i].id, .capacity = capacity,
                                          .prefetch = prefetch, .run = noop};
    pthread_create(&workers[i].thread, NULL, worker_main, &workers[i]);
  }
}

static void workers_stop(worker_t *workers, int n) {
  for (int i = 0; i < n; i++) workers[i].stop = 1;
  for (int i = 0; i < n; i++) pthread_join(workers[i].thread, NULL);
}

/* One throughput run: njobs at once through nworkers fresh workers. */
static void throughput(rpc_client_t *client, const char *ep, rpc_job_t *jobs, int njobs, int nworkers, int capacity,
                       int prefetch) {
  worker_t workers[64];
  workers_start(workers, nworkers, ep, capacity, prefetch);
  tally_t tally = {0, 0};
  /* warm up: every worker connected and announced */
  rpc_client_run(client, jobs, nworkers * (capacity + prefetch) * 4, on_result, &tally, 10000, NULL);
  tally = (tally_t){0, 0};
  double t0 = now_s(), c0 = cpu_s(), b0 = broker_cpu_s();
  int st = rpc_client_run(client, jobs, njobs, on_result, &tally, 30000, NULL);
  double elapsed = now_s() - t0, cpu = cpu_s() - c0, bcpu = broker_cpu_s() - b0;
  if (st != MLC_OK || tally.n != njobs || tally.failed)
    fprintf(stderr, "bench_farm: throughput run: %s (%d results, %d failed)\n", mlc_error_last(), tally.n, tally.failed);
  workers_stop(workers, nworkers);
  printf("throughput, prefetch %d%s: %d jobs in %.3f s = %.0f jobs/s (target >= 10000)\n", prefetch,
         prefetch ? "" : " (mlc-worker's default)", njobs, elapsed, njobs / elapsed);
  long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
  printf("  CPU: %.0f us per job over all threads (%.0f%% of one core while routing); with %ld idle cores that is "
         "at most %.0f jobs/s\n",
         cpu / njobs * 1e6, cpu / elapsed * 100, ncpu, ncpu / (cpu / njobs));
  if (b0 >= 0 && bcpu > 0)
    printf("  broker thread: %.0f us per job, so one broker routes at most %.0f jobs/s when its peers run elsewhere\n",
           bcpu / njobs * 1e6, njobs / bcpu);
  fflush(stdout);
}

int main(int argc, char **argv) {
  int njobs = 20000, rounds = 2000, nworkers = 4, capacity = 1, prefetch = 4;
  bool ipc = false;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--ipc") == 0) ipc = true;
    else if (i + 1 < argc && strcmp(argv[i], "--jobs") == 0) njobs = atoi(argv[++i]);
    else if (i + 1 < argc && strcmp(argv[i], "--rounds") == 0) rounds = atoi(argv[++i]);
    else if (i + 1 < argc && strcmp(argv[i], "--workers") == 0) nworkers = atoi(argv[++i]);
    else if (i + 1 < argc && strcmp(argv[i], "--capacity") == 0) capacity = atoi(argv[++i]);
    else if (i + 1 < argc && strcmp(argv[i], "--prefetch") == 0) prefetch = atoi(argv[++i]);
    else return usage();
  }
  if (njobs < 1 || rounds < 1 || nworkers < 1 || nworkers > 64 || capacity < 1 || prefetch < 0 || prefetch > 1024)
    return usage();
  mlc_log_set_level(MLC_LOG_WARN);
  load_average("before");

  char bind[128];
  snprintf(bind, sizeof bind, ipc ? "ipc:///tmp/bench-farm-%d" : "tcp://127.0.0.1:*", (int)getpid());
  rpc_broker_options_t bo;
  rpc_broker_options_default(&bo);
  bo.bind = bind;
  bo.stats_log_s = 0;
  bo.queue_bound = njobs; /* throughput, not flow control */
  rpc_broker_t *broker;
  if (rpc_broker_start(&broker, &bo) != MLC_OK) {
    fprintf(stderr, "bench_farm: %s\n", mlc_error_last());
    return 1;
  }
  const char *ep = rpc_broker_endpoint(broker);
  rpc_client_t *client;
  if (rpc_client_open(&client, ep, NULL, NULL) != MLC_OK) {
    fprintf(stderr, "bench_farm: %s\n", mlc_error_last());
    return 1;
  }
  rpc_job_t *jobs = make_jobs(njobs > rounds ? njobs : rounds);
  printf("farm on %s: 1 broker, %d workers x capacity %d, 1 client\n", ipc ? "ipc" : "tcp loopback", nworkers,
         capacity);
  throughput(client, ep, jobs, njobs, nworkers, capacity, 0);
  if (prefetch) throughput(client, ep, jobs, njobs, nworkers, capacity, prefetch);

  /* latency: one job at a time, so prefetch changes nothing; default workers */
  worker_t workers[64];
  workers_start(workers, nworkers, ep, capacity, 0);
  tally_t tally = {0, 0};
  rpc_client_run(client, jobs, nworkers * capacity * 4, on_result, &tally, 10000, NULL);
  double *lat = calloc((size_t)rounds, sizeof *lat);
  for (int i = 0; i < rounds; i++) {
    tally = (tally_t){0, 0};
    double s0 = now_s();
    rpc_client_run(client, jobs + i, 1, on_result, &tally, 10000, NULL);
    lat[i] = now_s() - s0;
  }
  double p50 = percentile(lat, rounds, 0.5), p99 = percentile(lat, rounds, 0.99);
  double floor50 = zmq_echo_p50(ipc, rounds);
  printf("latency per job, one at a time (%d): p50 %.3f ms, p99 %.3f ms (target p50 <= 1 ms)\n", rounds, p50 * 1e3,
         p99 * 1e3);
  printf("peer: ZeroMQ echo round trip p50 %.3f ms; two of them (the farm's hops) %.3f ms; farm p50 / floor = %.2fx\n",
         floor50 * 1e3, 2 * floor50 * 1e3, p50 / (2 * floor50));
  load_average("after");

  rpc_client_close(client);
  workers_stop(workers, nworkers);
  rpc_broker_stop(broker);
  free(lat);
  free(jobs);
  return 0;
}
