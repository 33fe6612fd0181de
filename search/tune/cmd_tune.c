/*
 * cmd_tune.c - the mlc-tune program (DESIGN.md, Programs; user guide in
 * docs/mlc-tune.md):
 *
 *   mlc-tune FILE --target T --trials N [--db URI] [--seed S] [--workers K]
 *            [--func NAME] [--per-round N] [--model xgb|random]
 *            [--scheduler gradient|round-robin] [--plot curve.svg]
 *            [--model-dir DIR] [--population N] [--generations N]
 *            [--farm ENDPOINT [--curve-keys DIR --key NAME] | --local-farm K | --no-farm]
 *            [--no-lease] [measurement options] [--json]
 *
 * Parses and verifies FILE, opens the database, starts the transport (the
 * local runner; a farm's broker with --farm; a broker thread and K
 * mlc-worker processes of its own with --local-farm, runner_farm.h) and
 * calls ms_tune; the summary (cmd_tune_out.c) goes to stdout, progress and
 * errors to stderr. Ctrl-C sets ms_tune's stop flag: the running round
 * finishes and is committed, the summary is printed, and the exit status is
 * 130; a second Ctrl-C ends the process at once (the rounds already
 * committed stay in the database). Through a farm, a first Ctrl-C while
 * nothing of the running round has come back (no worker for the device key)
 * stops at once: that round may never finish.
 *
 * Defaults from the environment: --db from $MLC_DB, --farm from $MLC_FARM
 * (an option on the command line wins: --farm, --local-farm or --no-farm).
 * Tasks are leased in the database (tune_run) unless --no-lease.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rpc/rpc.h"
#include "search/tune/cmd_tune.h"
#include "search/tune/runner_farm.h"
#include "search/tune/tune_internal.h"

#ifndef MLC_VERSION
#define MLC_VERSION "0.0.0"
#endif

#define PROG "mlc-tune"

enum {
  EXIT_OK = MLC_TUNE_EXIT_OK,
  EXIT_WORK = MLC_TUNE_EXIT_WORK,
  EXIT_USAGE = MLC_TUNE_EXIT_USAGE,
  EXIT_INTERRUPTED = MLC_TUNE_EXIT_INTERRUPTED
};

#define fail(code, ...) mlc_cli_fail(PROG, code, __VA_ARGS__)

static const char help[] =
    "usage: " PROG " FILE --target T --trials N [options]\n"
    "\n"
    "Tunes every function of FILE (a @T.prim_func or an @I.ir_module in TVMScript;\n"
    "- reads standard input) for target T, measuring candidates on this machine and\n"
    "storing every measurement in the database. Identical functions are tuned once.\n"
    "A run resumes from what the database holds: nothing is measured twice.\n"
    "\n"
    "  --target T          llvm (this CPU), or e.g. \"llvm -mcpu=skylake-avx512 -num-cores=4\";\n"
    "                      \"cuda -arch=sm_90\" / \"rocm -mcpu=gfx90a\" tune for a GPU (measured\n"
    "                      on this machine's GPU, or with --farm on the farm's GPU workers)\n"
    "  --trials N          measurements this run may make, over all functions\n"
    "  --db URI            file:DIR or postgresql://... (default $MLC_DB, else file:./mlc-db)\n"
    "  --func NAME         tune only this function of the module\n"
    "  --seed S            random seed of the search and the model (default 1)\n"
    "  --workers K         candidates compiled at once; they still run one at a time\n"
    "                      (default: the target's cores)\n"
    "  --farm ENDPOINT     measure on the workers of the mlc-broker at ENDPOINT\n"
    "                      (e.g. tcp://tuner:5555) instead of on this machine\n"
    "  --curve-keys DIR    with --farm: CURVE keys (DIR/server.pub and the pair --key)\n"
    "  --key NAME          with --curve-keys: this client's key pair name\n"
    "  --local-farm K      start a broker and K mlc-worker processes on this machine\n"
    "                      and measure through them (the farm's code paths, ipc://)\n"
    "  --per-round N       candidates per round (default 64)\n"
    "  --model M           cost model: xgb (default) or random\n"
    "  --scheduler S       task scheduler: gradient (default) or round-robin\n"
    "  --plot FILE.svg     write the tuning curves (best GFLOP/s vs trials)\n"
    "  --model-dir DIR     continue the cost model saved in DIR (if any) and save\n"
    "                      it there at the end\n"
    "  --population N      evolutionary search population (default 512)\n"
    "  --generations N     evolutionary search generations per round (default 4)\n"
    "  --search-threads N  threads that make and lower the search's candidates between\n"
    "                      rounds, while nothing is measured (default 0: one per CPU)\n"
    "  --json              print the summary as one JSON document\n"
    "\n"
    "measurement (defaults as DESIGN.md):\n"
    "  --number N          runs per repeat to start from (default 3)\n"
    "  --repeat N          timed repeats per candidate (default 1)\n"
    "  --min-repeat-ms MS  a repeat lasts at least this long (default 100)\n"
    "  --timeout S         build and run time limits in seconds (default 30 each)\n"
    "  --check             check every candidate against the reference interpreter\n"
    "  --confirm N         measure a would-be new best N times more before recording it\n"
    "                      (default 2; 0: off)\n"
    "\n"
    "Progress goes to stderr: a status line on a terminal, log lines otherwise.\n"
    "Ctrl-C finishes the running round, prints the summary and exits 130.\n"
    "Exit status: 0 done, 1 the work failed, 2 bad usage or input, 130 interrupted.\n";

/* ------------------------------------------------------------------------ */
/* Arguments                                                                 */
/* ------------------------------------------------------------------------ */

typedef struct {
  const char *file, *target, *db, *func, *plot, *model_dir;
  const char *farm, *curve_keys, *key; /* --farm and its CURVE keys */
  ms_tune_options_t tune;
  mlc_measure_options_t measure;
  int workers, local_farm;
  bool have_trials, json, helped;
  bool no_farm, no_lease;
  bool farm_from_env;          /* farm is $MLC_FARM's */
} cli_t;

typedef struct {
  int argc, i;
  char **argv;
  bool error;
} args_t;

/* "--name value" or "--name=value". */
static bool opt_value(args_t *a, const char *name, const char **value) {
  const char *arg = a->argv[a->i];
  size_t n = strlen(name);
  if (strncmp(arg, name, n) != 0) return false;
  if (arg[n] == '=') {
    *value = arg + n + 1;
  } else if (arg[n] == '\0') {
    if (a->i + 1 >= a->argc) {
      fail(EXIT_USAGE, "option %s needs a value", name);
      a->error = true;
      return true;
    }
    *value = a->argv[++a->i];
  } else {
    return false;
  }
  return true;
}

static bool parse_i64(const char *s, int64_t lo, int64_t hi, int64_t *out) {
  char *end;
  errno = 0;
  long long v = strtoll(s, &end, 10);
  if (errno || end == s || *end || v < lo || v > hi) return false;
  *out = v;
  return true;
}

/* An integer option in [lo, hi]; false (and an error) when it is not one. */
static bool int_opt(args_t *a, const char *name, const char *v, int64_t lo, int64_t hi, int64_t *out) {
  if (parse_i64(v, lo, hi, out)) return true;
  fail(EXIT_USAGE, "%s: '%s' is not an integer in [%lld, %lld]", name, v, (long long)lo, (long long)hi);
  a->error = true;
  return false;
}

/* --model and --scheduler. */
static bool choice_opt(args_t *a, cli_t *c) {
  const char *v;
  if (opt_value(a, "--model", &v)) {
    if (a->error) return true;
    if (strcmp(v, "xgb") == 0) c->tune.model = CM_MODEL_XGB;
    else if (strcmp(v, "random") == 0) c->tune.model = CM_MODEL_RANDOM;
    else a->error = true;
    if (a->error) fail(EXIT_USAGE, "--model: '%s' is not xgb or random", v);
    return true;
  }
  if (opt_value(a, "--scheduler", &v)) {
    if (a->error) return true;
    if (strcmp(v, "gradient") == 0) c->tune.scheduler = MS_SCHED_GRADIENT;
    else if (strcmp(v, "round-robin") == 0) c->tune.scheduler = MS_SCHED_ROUND_ROBIN;
    else a->error = true;
    if (a->error) fail(EXIT_USAGE, "--scheduler: '%s' is not gradient or round-robin", v);
    return true;
  }
  return false;
}

/* Options with an integer value. */
static bool number_opt(args_t *a, cli_t *c) {
  static const struct {
    const char *name;
    int64_t lo, hi;
  } opts[] = {{"--trials", 0, 100000000}, {"--seed", 0, INT64_MAX},   {"--workers", 1, 256},
              {"--per-round", 1, 100000}, {"--number", 1, 1000000},    {"--repeat", 1, MLC_MEASURE_MAX_REPEAT},
              {"--min-repeat-ms", 0, 3600000}, {"--timeout", 1, 86400},       {"--population", 2, 1000000},
              {"--generations", 0, 1000}, {"--local-farm", 1, 256},    {"--search-threads", 0, 64},
              {"--confirm", 0, MLC_MEASURE_MAX_REPEAT - 1}};
  for (size_t k = 0; k < sizeof opts / sizeof *opts; k++) {
    const char *v;
    if (!opt_value(a, opts[k].name, &v)) continue;
    int64_t x;
    if (a->error || !int_opt(a, opts[k].name, v, opts[k].lo, opts[k].hi, &x)) return true;
    switch (k) {
    case 0: c->tune.trials = (int)x; c->have_trials = true; break;
    case 1: c->tune.seed = (uint64_t)x; break;
    case 2: c->workers = (int)x; break;
    case 3: c->tune.per_round = (int)x; break;
    case 4: c->measure.number = (int)x; break;
    case 5: c->measure.repeat = (int)x; break;
    case 6: c->measure.min_repeat_ms = (int)x; break;
    case 7: c->measure.build_timeout_s = c->measure.run_timeout_s = (double)x; break;
    case 8: c->tune.search.population = (int)x; break;
    case 9: c->tune.search.generations = (int)x; break;
    case 10: c->local_farm = (int)x; break;
    case 11: c->tune.search.threads = (int)x; break;
    default: c->tune.confirm = (int)x; break;
    }
    return true;
  }
  return false;
}

static bool string_opt(args_t *a, cli_t *c) {
  return opt_value(a, "--target", &c->target) || opt_value(a, "--db", &c->db) || opt_value(a, "--func", &c->func) ||
         opt_value(a, "--plot", &c->plot) || opt_value(a, "--model-dir", &c->model_dir) ||
         opt_value(a, "--farm", &c->farm) || opt_value(a, "--curve-keys", &c->curve_keys) ||
         opt_value(a, "--key", &c->key);
}

/* $MLC_FARM when no option chose the transport (--farm wins over it;
 * --local-farm and --no-farm set it aside). */
static void farm_from_env(cli_t *c) {
  if (c->farm || c->local_farm || c->no_farm) return;
  const char *env = getenv("MLC_FARM");
  if (!env || !*env) return;
  c->farm = env;
  c->farm_from_env = true;
}

/* --farm, --local-farm and --workers choose one transport. */
static int check_transport(cli_t *c) {
  if (c->farm && c->no_farm) return fail(EXIT_USAGE, "--farm and --no-farm exclude each other");
  if (c->farm && c->local_farm) return fail(EXIT_USAGE, "--farm and --local-farm exclude each other");
  farm_from_env(c);
  if (c->farm_from_env && c->workers > 1)
    return fail(EXIT_USAGE, "--workers is for measuring without a farm, and $MLC_FARM (%s) chooses one: add --no-farm "
                "to measure on this machine", c->farm);
  if ((c->farm || c->local_farm) && c->workers > 1)
    return fail(EXIT_USAGE, "--workers is for measuring without a farm; a farm measures on its workers");
  if (c->farm && !*c->farm) return fail(EXIT_USAGE, "--farm needs an endpoint (e.g. tcp://tuner:5555)");
  if ((c->curve_keys || c->key) && !c->farm) return fail(EXIT_USAGE, "--curve-keys and --key go with --farm");
  if (!c->curve_keys != !c->key) return fail(EXIT_USAGE, "--curve-keys and --key go together");
  return EXIT_OK;
}

static int parse_args(cli_t *c, int argc, char **argv) {
  args_t a = {.argc = argc, .argv = argv};
  bool only_positional = false;
  for (a.i = 1; a.i < argc && !a.error; a.i++) {
    const char *arg = argv[a.i];
    if (!only_positional && arg[0] == '-' && arg[1] != '\0') {
      if (strcmp(arg, "--") == 0) only_positional = true;
      else if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) c->helped = true;
      else if (strcmp(arg, "--json") == 0) c->json = true;
      else if (strcmp(arg, "--check") == 0) c->measure.check_correctness = true;
      else if (strcmp(arg, "--no-farm") == 0) c->no_farm = true;
      else if (strcmp(arg, "--no-lease") == 0) c->no_lease = true;
      else if (!string_opt(&a, c) && !number_opt(&a, c) && !choice_opt(&a, c))
        return fail(EXIT_USAGE, "unknown option '%s' (see `" PROG " --help`)", arg);
      continue;
    }
    if (c->file) return fail(EXIT_USAGE, "unexpected argument '%s': give one FILE (see `" PROG " --help`)", arg);
    c->file = arg;
  }
  if (a.error) return EXIT_USAGE;
  if (c->helped) return EXIT_OK;
  if (!c->file) return fail(EXIT_USAGE, "no FILE to tune (see `" PROG " --help`)");
  if (!c->target) return fail(EXIT_USAGE, "--target is required (e.g. --target llvm)");
  if (!c->have_trials) return fail(EXIT_USAGE, "--trials is required (the measurement budget)");
  return check_transport(c);
}

/* ------------------------------------------------------------------------ */
/* Loading                                                                   */
/* ------------------------------------------------------------------------ */

/* The functions to tune: all of them, or the one --func names. */
static int pick_funcs(const tir_module_t *m, const cli_t *c, tir_func_t ***funcs, const char ***names, int *n) {
  *funcs = mlc_calloc((size_t)m->nfuncs, sizeof **funcs);
  *names = mlc_calloc((size_t)m->nfuncs, sizeof **names);
  if (!*funcs || !*names) return fail(EXIT_WORK, "out of memory");
  *n = 0;
  for (int i = 0; i < m->nfuncs; i++) {
    if (c->func && strcmp(m->funcs[i]->name, c->func) != 0) continue;
    (*funcs)[*n] = m->funcs[i];
    (*names)[(*n)++] = m->funcs[i]->name;
  }
  if (*n > 0) return EXIT_OK;
  mlc_strbuf_t sb;
  mlc_sb_init(&sb);
  for (int i = 0; i < m->nfuncs; i++) mlc_sb_printf(&sb, "%s%s", i ? ", " : "", m->funcs[i]->name);
  fail(EXIT_USAGE, "%s: no function '%s' (functions: %s)", tir_cli_shown_path(c->file), c->func, mlc_sb_str(&sb));
  mlc_sb_free(&sb);
  return EXIT_USAGE;
}

static int parse_target(const char *text, mlc_target_t *out) {
  if (mlc_target_parse(out, text) != MLC_OK) return fail(EXIT_USAGE, "--target '%s': %s", text, mlc_error_last());
  return EXIT_OK;
}

/* ------------------------------------------------------------------------ */
/* Ctrl-C                                                                    */
/* ------------------------------------------------------------------------ */

static volatile int stop_flag;
static ms_runner_t *volatile interrupt_runner; /* a farm runner, for its idle batches */

static void on_sigint(int sig) {
  (void)sig;
  stop_flag = 1;
  static const char later[] = "\n" PROG ": stopping after this round (Ctrl-C again to quit now)\n";
  static const char now[] = "\n" PROG ": stopping now: nothing of this round has been measured\n";
  bool at_once = interrupt_runner && ms_runner_farm_interrupt(interrupt_runner);
  ssize_t w = at_once ? write(STDERR_FILENO, now, sizeof now - 1) : write(STDERR_FILENO, later, sizeof later - 1);
  (void)w;
}

/* SA_RESETHAND: the second Ctrl-C gets the default action and ends the
 * process; what earlier rounds committed is durable already. */
static void install_sigint(struct sigaction *old) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_sigint;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART | SA_RESETHAND;
  stop_flag = 0;
  sigaction(SIGINT, &sa, old);
}

/* ------------------------------------------------------------------------ */
/* Running                                                                   */
/* ------------------------------------------------------------------------ */

/* Prints the summary of what ms_tune did (returned st), then the error if it
 * failed; the exit status. */
static int report(const cli_t *c, const ms_tune_result_t *res, const tune_lease_note_t *notes, int st, db_t *db,
                  const ms_runner_t *runner, const mlc_target_t *target) {
  char why[1024], target_str[512];
  snprintf(why, sizeof why, "%s", mlc_error_or(mlc_status_str(st)));
  mlc_target_str(target, target_str, sizeof target_str);
  tune_summary_t sum = {res, target_str, db_uri(db), runner->device_key, stop_flag != 0, notes};
  if (res->ntasks > 0) { /* what was done, also when the work failed */
    if (c->json) tune_print_json(stdout, &sum);
    else tune_print_summary(stdout, &sum);
  }
  if (st != MLC_OK) return fail(EXIT_WORK, "%s", why);
  if (stop_flag) return EXIT_INTERRUPTED;
  if (!tune_summary_any_success(&sum) && tune_summary_trials(&sum) > 0)
    return fail(EXIT_WORK, "no candidate was measured successfully (the failed trials and their errors: mlc-db "
                "failures --db %s --target '%s')",
                db_uri(db), target_str);
  return EXIT_OK;
}

/* Before tuning through a farm: a warning when its broker does not answer,
 * or has no worker for the target's device key (jobs would wait in its
 * queue until one comes). Nothing is refused: workers may come later. The
 * client's connection cannot tell (rpc_client_t says nothing of workers), so
 * this asks the broker for its STATS, with a short timeout. */
#define TUNE_FARM_STATS_MS 2000
static void farm_preflight(const cli_t *c, const ms_runner_t *runner) {
  if (c->farm_from_env) MLC_INFO("measuring on the farm at %s ($MLC_FARM)", c->farm);
  json_t *stats = NULL;
  if (rpc_broker_stats(&stats, c->farm, c->curve_keys, TUNE_FARM_STATS_MS) != MLC_OK) {
    MLC_WARN("the broker at %s does not answer yet (%s); waiting for it up to %d s", c->farm, mlc_error_last(),
             MS_FARM_UNREACHABLE_MS / 1000);
    return;
  }
  const json_t *n = json_object_get(json_object_get(stats, runner->device_key), "workers");
  if (!json_is_integer(n) || json_integer_value(n) == 0)
    MLC_WARN("no worker for device key %s is connected to the broker at %s; jobs wait until one connects "
             "(Ctrl-C stops at once while nothing is measured)",
             runner->device_key, c->farm);
  json_decref(stats);
}

/* The transport: a farm's broker, a local farm, or the local runner. */
static int start_runner(const cli_t *c, const mlc_target_t *target, ms_local_farm_t **farm, ms_runner_t **runner) {
  if (c->farm) {
    int st = ms_runner_farm(runner, c->farm, c->curve_keys, c->key, target, &c->measure);
    if (st == MLC_OK) farm_preflight(c, *runner);
    return st;
  }
  if (!c->local_farm) { /* --workers: by default a builder per core of the target */
    long k = c->workers ? c->workers : mlc_target_cores(target);
    return ms_runner_local_target(runner, target, k < 1 ? 1 : k > 256 ? 256 : (int)k, &c->measure);
  }
  if (c->local_farm > 1)
    MLC_WARN("--local-farm %d: measurements share the CPU, so their times are skewed (docs/farm.md)", c->local_farm);
  int st = ms_local_farm_start(farm, c->local_farm, target, NULL);
  if (st == MLC_OK) st = ms_runner_farm(runner, ms_local_farm_endpoint(*farm), NULL, NULL, target, &c->measure);
  return st;
}

static int tune(cli_t *c, tir_func_t **funcs, const char **names, int n, const mlc_target_t *target) {
  db_t *db = NULL;
  mlc_error_clear();
  if (db_open(&db, c->db) != MLC_OK) return fail(EXIT_USAGE, "cannot open database: %s", mlc_error_last());
  ms_runner_t *runner = NULL;
  ms_local_farm_t *farm = NULL;
  if (start_runner(c, target, &farm, &runner) != MLC_OK) {
    char why[1024];
    snprintf(why, sizeof why, "%s", mlc_error_last());
    ms_local_farm_stop(farm);
    db_close(db);
    return fail(EXIT_WORK, "cannot start the measurement: %s", why);
  }
  c->tune.plot_path = c->plot;
  c->tune.model_dir = c->model_dir;
  c->tune.stop = &stop_flag;
  c->tune.progress_tty = isatty(STDERR_FILENO);
  tune_lease_options_t lease = {.off = c->no_lease};
  tune_lease_note_t *notes = NULL;
  interrupt_runner = runner;
  struct sigaction old;
  install_sigint(&old);
  ms_tune_result_t res;
  int st = tune_run(&res, funcs, names, n, target, db, runner, &c->tune, &lease, &notes);
  sigaction(SIGINT, &old, NULL);
  interrupt_runner = NULL;
  int code = report(c, &res, c->no_lease ? NULL : notes, st, db, runner, target);
  mlc_free(notes);
  ms_tune_result_free(&res);
  ms_runner_free(runner);
  ms_local_farm_stop(farm);
  db_close(db);
  return code;
}

static int run_cli(cli_t *c) {
  mlc_target_t target;
  int code = parse_target(c->target, &target);
  if (code != EXIT_OK) return code;
  tir_module_t *m = NULL;
  if ((code = tir_cli_load_module(PROG, c->file, &m)) != EXIT_OK) return code;
  if (m->nfuncs == 0) {
    tir_module_free(m);
    return fail(EXIT_USAGE, "%s: no function to tune", tir_cli_shown_path(c->file));
  }
  tir_func_t **funcs = NULL;
  const char **names = NULL;
  int n = 0;
  code = pick_funcs(m, c, &funcs, &names, &n);
  if (code == EXIT_OK) code = tune(c, funcs, names, n, &target);
  mlc_free(funcs);
  mlc_free(names);
  tir_module_free(m);
  return code;
}

int mlc_tune_main(int argc, char **argv) {
  mlc_log_set_program(PROG);
  ms_tune_keep_freed_memory();
  if (argc == 2 && strcmp(argv[1], "--version") == 0) {
    printf(PROG " %s\n", MLC_VERSION);
    return fflush(stdout) == 0 ? EXIT_OK : EXIT_WORK;
  }
  cli_t c;
  memset(&c, 0, sizeof c);
  ms_tune_options_default(&c.tune);
  mlc_measure_options_default(&c.measure);
  c.workers = 0; /* the target's cores, once it is parsed (start_runner) */
  const char *env = getenv("MLC_DB");
  c.db = env && *env ? env : NULL;
  int code = parse_args(&c, argc, argv);
  if (code != EXIT_OK) return code;
  if (c.helped) {
    fputs(help, stdout);
    return fflush(stdout) == 0 ? EXIT_OK : EXIT_WORK;
  }
  code = run_cli(&c);
  if (fflush(stdout) != 0 || ferror(stdout)) return fail(EXIT_WORK, "writing standard output: %s", strerror(errno));
  return code;
}
