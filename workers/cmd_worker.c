/*
 * cmd_worker.c - the mlc-worker program (DESIGN.md, Programs; user guide in
 * docs/mlc-worker.md):
 *
 *   mlc-worker --broker ENDPOINT [--target T] [--device N]
 *              [--curve-keys DIR --key NAME] [--worker-id ID] [--health-file PATH]
 *              [--prefetch N]
 *   mlc-worker health PATH [--max-age S] [--live]   (cmd_worker_health.c)
 *
 * Opens the device (worker.h: the backend for T's kind, the host CPU when no
 * target is given), forks the measuring process while the program still has
 * one thread, then runs the protocol's worker side (rpc_worker_run): READY
 * with the device key and properties, heartbeats, reconnection with backoff,
 * and each JOB handed to the measuring process. One log line per job: its
 * id, the candidate's trace hash (db_record_t.trace_hash, so `mlc-db` finds
 * the record), and the time or the error.
 *
 * SIGINT and SIGTERM set the stop flag: the running job finishes and its
 * result is sent, then the worker says goodbye and exits 0. A second signal
 * ends the process at once (SA_RESETHAND), as with mlc-tune.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "workers/cmd_worker.h"
#include "workers/worker.h"

#ifndef MLC_VERSION
#define MLC_VERSION "0.0.0"
#endif

#define PROG "mlc-worker"

enum { EXIT_OK = MLC_WORKER_EXIT_OK, EXIT_WORK = MLC_WORKER_EXIT_WORK, EXIT_USAGE = MLC_WORKER_EXIT_USAGE };

#define fail(code, ...) mlc_cli_fail(PROG, code, __VA_ARGS__)

static const char help[] =
    "usage: " PROG " --broker ENDPOINT [options]\n"
    "       " PROG " health PATH [--max-age S] [--live]\n"
    "\n"
    "Connects to an mlc-broker, announces this machine's device and measures the\n"
    "candidates the broker sends (replay the trace, compile, time, optionally check\n"
    "against the reference interpreter) until stopped. One log line per job.\n"
    "\n"
    "  --broker ENDPOINT   the broker, e.g. tcp://tuner.example:5555 or ipc:///tmp/farm\n"
    "  --target T          the target measured for (default llvm: this CPU); jobs are\n"
    "                      routed by its device key, e.g. llvm-skylake-avx512, or\n"
    "                      cuda-sm90 for `cuda -arch=sm_90` (the GPU's own arch)\n"
    "  --device N          device number (the cpu backend has one: 0; GPUs as the\n"
    "                      driver numbers them: run one worker per GPU, e.g.\n"
    "                      CUDA_VISIBLE_DEVICES=3 mlc-worker --device 0 ...)\n"
    "  --curve-keys DIR    CURVE keys: DIR/server.pub and this worker's key pair\n"
    "  --key NAME          the key pair's name in DIR (with --curve-keys)\n"
    "  --worker-id ID      name in records and logs (default HOST-cpuN-PID,\n"
    "                      HOST-cudaN-PID)\n"
    "  --health-file PATH  rewrite PATH every second with the worker's state (JSON)\n"
    "                      for probes; `" PROG " health PATH` checks it (exit 0 when\n"
    "                      fresh and connected; --live: fresh only)\n"
    "  --prefetch N        hold up to N more jobs queued here (default 0): the next\n"
    "                      job starts without a broker round trip, but a queued job\n"
    "                      waits even when another worker is idle; for jobs of a\n"
    "                      few milliseconds, not for long measurements\n"
    "\n"
    "SIGINT or SIGTERM: finish the running job, send its result, exit 0; a second\n"
    "one exits at once. Log level: MLC_LOG=debug|info|warn|error (default info).\n"
    "Exit status: 0 stopped, 1 the work failed, 2 bad usage, target or device.\n";

/* ------------------------------------------------------------------------ */
/* Arguments                                                                 */
/* ------------------------------------------------------------------------ */

typedef struct {
  const char *broker, *target, *curve_keys, *key, *worker_id, *device, *health_file, *prefetch;
  bool helped;
  int prefetch_n;
} cli_t;

/* "--name value" or "--name=value": 1 matched, 0 not this option, -1 no value. */
static int opt_value(int argc, char **argv, int *i, const char *name, const char **value) {
  const char *arg = argv[*i];
  size_t n = strlen(name);
  if (strncmp(arg, name, n) != 0) return 0;
  if (arg[n] == '=') {
    *value = arg + n + 1;
    return 1;
  }
  if (arg[n] != '\0') return 0;
  if (*i + 1 >= argc) return -1;
  *value = argv[++*i];
  return 1;
}

static int parse_option(cli_t *c, int argc, char **argv, int *i) {
  static const char *const names[] = {"--broker",    "--target", "--curve-keys",  "--key",
                                      "--worker-id", "--device", "--health-file", "--prefetch"};
  const char **slots[] = {&c->broker,    &c->target, &c->curve_keys,  &c->key,
                          &c->worker_id, &c->device, &c->health_file, &c->prefetch};
  const char *arg = argv[*i];
  if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
    c->helped = true;
    return EXIT_OK;
  }
  for (size_t k = 0; k < sizeof names / sizeof *names; k++) {
    int m = opt_value(argc, argv, i, names[k], slots[k]);
    if (m < 0) return fail(EXIT_USAGE, "option %s needs a value", names[k]);
    if (m > 0) return EXIT_OK;
  }
  if (arg[0] == '-') return fail(EXIT_USAGE, "unknown option '%s' (see `" PROG " --help`)", arg);
  return fail(EXIT_USAGE, "unexpected argument '%s' (see `" PROG " --help`)", arg);
}

/* An option's value as an integer in [0, 1024] (absent: 0); exit 2 naming
 * it otherwise. what: "a device number". */
static int parse_small(const char *name, const char *text, const char *what, int *out) {
  *out = 0;
  if (!text) return EXIT_OK;
  char *end;
  errno = 0;
  long v = strtol(text, &end, 10);
  if (errno || end == text || *end || v < 0 || v > 1024)
    return fail(EXIT_USAGE, "%s: '%s' is not %s in [0, 1024]", name, text, what);
  *out = (int)v;
  return EXIT_OK;
}

static int parse_args(cli_t *c, int *device, int argc, char **argv) {
  for (int i = 1; i < argc; i++) {
    int code = parse_option(c, argc, argv, &i);
    if (code != EXIT_OK) return code;
  }
  if (c->helped) return EXIT_OK;
  if (!c->broker || !*c->broker) return fail(EXIT_USAGE, "--broker ENDPOINT is required (see `" PROG " --help`)");
  if (!c->curve_keys != !c->key) return fail(EXIT_USAGE, "--curve-keys and --key go together");
  int code = parse_small("--device", c->device, "a device number", device);
  return code == EXIT_OK ? parse_small("--prefetch", c->prefetch, "a number of jobs", &c->prefetch_n) : code;
}

/* ------------------------------------------------------------------------ */
/* Signals                                                                   */
/* ------------------------------------------------------------------------ */

/* stop_flag is what rpc_worker_run watches: once it is set the worker
 * starts no new job, lets the running one finish and sends its result, then
 * says DISCONNECT (rpc/worker.c drains). */
static volatile int stop_flag;
static bool announce_stop; /* the log level shows info lines (read in the handler) */

static void on_signal(int sig) {
  (void)sig;
  stop_flag = 1;
  static const char msg[] = PROG ": stopping after the running job (again to quit now)\n";
  if (!announce_stop) return;
  ssize_t w = write(STDERR_FILENO, msg, sizeof msg - 1);
  (void)w;
}

/* No SA_RESTART: a blocking wait returns EINTR and sees the flag. */
static void install_signals(struct sigaction old[2]) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESETHAND;
  stop_flag = 0;
  announce_stop = mlc_log_level() <= MLC_LOG_INFO;
  sigaction(SIGINT, &sa, &old[0]);
  sigaction(SIGTERM, &sa, &old[1]);
}

static void restore_signals(const struct sigaction old[2]) {
  sigaction(SIGINT, &old[0], NULL);
  sigaction(SIGTERM, &old[1], NULL);
}

/* ------------------------------------------------------------------------ */
/* Jobs                                                                      */
/* ------------------------------------------------------------------------ */

typedef struct {
  worker_server_t *server;
  bool server_died;
} worker_state_t;

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double median(const rpc_result_t *r) {
  mlc_measure_result_t m;
  memset(&m, 0, sizeof m);
  m.nrun_secs = r->nrun_secs;
  for (int i = 0; i < r->nrun_secs && i < MLC_MEASURE_MAX_REPEAT; i++) m.run_secs[i] = r->run_secs[i];
  return mlc_measure_median(&m);
}

static void log_job(const rpc_job_t *job, const rpc_result_t *r, double secs) {
  char hash[17];
  mlc_hash_hex(job->trace_json ? mlc_hash64(job->trace_json, strlen(job->trace_json), 0) : 0, hash);
  double t = median(r);
  if (r->error == MLC_ERROR_KIND_NONE)
    MLC_INFO("job %s: trace %s: %.4g %s (median of %d), took %.2f s", job->id, hash, t < 1e-3 ? t * 1e6 : t * 1e3,
             t < 1e-3 ? "us" : "ms", r->nrun_secs, secs);
  else
    MLC_INFO("job %s: trace %s: %s error: %s (took %.2f s)", job->id, hash, mlc_error_kind_name(r->error),
             r->message, secs);
}

/* rpc_run_job_fn: the job goes to the measuring process. When that process
 * is gone the result says `crash` and the worker stops (exit 1): a
 * supervisor restarts it whole. */
static int run_job(void *payload, const rpc_job_t *job, rpc_result_t *out) {
  worker_state_t *w = payload;
  double t0 = now_s();
  int st = worker_server_run(w->server, job, out);
  log_job(job, out, now_s() - t0);
  if (st == MLC_EIO) {
    MLC_ERROR("%s; stopping", mlc_error_last());
    w->server_died = true;
    stop_flag = 1;
    return MLC_OK; /* the crash result still goes back */
  }
  return st;
}

static int serve(const cli_t *c, const worker_device_t *dev) {
  worker_state_t w = {0};
  if (worker_server_start(&w.server, dev) != MLC_OK)
    return fail(EXIT_WORK, "cannot start the measuring process: %s", mlc_error_last());
  rpc_worker_options_t o = {
      .broker = c->broker,
      .curve_keys = c->curve_keys,
      .key_name = c->key,
      .device_key = dev->device_key,
      .device_json = dev->device_json,
      .worker_id = dev->worker_id,
      .capacity = 1,
      .prefetch = c->prefetch_n,
      .heartbeat_ms = MLC_RPC_HEARTBEAT_MS,
      .liveness = MLC_RPC_LIVENESS,
      .run = run_job,
      .payload = &w,
      .health_file = c->health_file,
  };
  MLC_INFO("worker %s: device %s %s, broker %s", dev->worker_id, dev->device_key, dev->device_json, c->broker);
  struct sigaction old[2];
  install_signals(old);
  int st = rpc_worker_run(&o, &stop_flag);
  restore_signals(old);
  char why[1024];
  snprintf(why, sizeof why, "%s", mlc_error_last());
  worker_server_stop(w.server);
  if (st != MLC_OK) return fail(EXIT_WORK, "%s", *why ? why : mlc_status_str(st));
  if (w.server_died) return EXIT_WORK;
  MLC_INFO("worker %s: stopped", dev->worker_id);
  return EXIT_OK;
}

int mlc_worker_main(int argc, char **argv) {
  mlc_log_set_program(PROG);
  if (argc >= 2 && strcmp(argv[1], "health") == 0) return mlc_worker_health_main(argc - 1, argv + 1);
  if (argc == 2 && strcmp(argv[1], "--version") == 0) {
    printf(PROG " %s\n", MLC_VERSION);
    return fflush(stdout) == 0 ? EXIT_OK : EXIT_WORK;
  }
  cli_t c;
  memset(&c, 0, sizeof c);
  int device = 0;
  int code = parse_args(&c, &device, argc, argv);
  if (code != EXIT_OK) return code;
  if (c.helped) {
    fputs(help, stdout);
    return fflush(stdout) == 0 ? EXIT_OK : EXIT_WORK;
  }
  mlc_target_t target;
  if (c.target && mlc_target_parse(&target, c.target) != MLC_OK)
    return fail(EXIT_USAGE, "--target '%s': %s", c.target, mlc_error_last());
  worker_device_t dev;
  if (worker_device_open(&dev, c.target ? &target : NULL, device, c.worker_id) != MLC_OK)
    return fail(EXIT_USAGE, "%s", mlc_error_last());
  return serve(&c, &dev);
}
