/*
 * cmd_broker.c - the mlc-broker program (DESIGN.md, Programs; user guide in
 * docs/farm.md): serving (the default), `stats` (ask a running broker) and
 * `keygen` (a CURVE key pair).
 *
 * Conventions of every mlc program: --help, exit 0 on success, 1 when the
 * work fails, 2 on bad usage or bad input, errors on stderr as
 * "mlc-broker: error: ...". SIGINT and SIGTERM stop a serving broker
 * cleanly (peers are told DISCONNECT, so they re-announce themselves to the
 * next broker).
 */
#include "rpc/cmd_broker.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rpc/rpc.h"

#ifndef MLC_VERSION
#define MLC_VERSION "0.0.0"
#endif

#define PROG "mlc-broker"
enum { EXIT_OK = 0, EXIT_WORK = 1, EXIT_USAGE = 2 };

static const char serve_help[] =
    "usage: " PROG " [--bind ENDPOINT] [--curve-keys DIR] [--queue-bound N] [--log-stats S]\n"
    "       " PROG " stats ENDPOINT [--curve-keys DIR] [--json] [--timeout MS]\n"
    "       " PROG " keygen DIR NAME\n"
    "\n"
    "Routes measurement jobs from mlc-tune clients to mlc-workers by device key, until\n"
    "SIGINT or SIGTERM.\n"
    "\n"
    "  --bind ENDPOINT    where to listen (default " MLC_RPC_DEFAULT_BIND "); several\n"
    "                     comma-separated; tcp://HOST:* picks a free port (logged)\n"
    "  --curve-keys DIR   CURVE: DIR/server.key is the broker's key pair; only the keys\n"
    "                     in DIR/clients/*.pub and DIR/workers/*.pub are admitted\n"
    "  --queue-bound N    jobs queued per client before SUBMIT gets BUSY (default 4096)\n"
    "  --log-stats S      a statistics log line every S seconds (default 60; 0: none)\n"
    "  --version          print the version\n"
    "\n"
    "Exit status: 0 stopped by a signal, 1 the broker failed, 2 bad usage or input.\n";

static const char stats_help[] =
    "usage: " PROG " stats ENDPOINT [--curve-keys DIR] [--json] [--timeout MS]\n"
    "\n"
    "Prints a running broker's state per device key: workers alive and their capacity,\n"
    "jobs running and queued, clients waiting, results per second over the last 10 s,\n"
    "results so far, re-queues after dead workers, and failures by kind.\n"
    "With --curve-keys, authenticates with DIR/server.key (the broker's own key) or\n"
    "the only NAME.key in DIR. --timeout: how long to wait (default 5000 ms).\n"
    "\n"
    "Exit status: 0 ok, 1 no reply, 2 bad usage.\n";

static const char keygen_help[] =
    "usage: " PROG " keygen DIR NAME\n"
    "\n"
    "Writes a CURVE key pair: DIR/NAME.key (secret, mode 0600) and DIR/NAME.pub.\n"
    "NAME \"server\" is the broker's pair; copy a client's or worker's NAME.pub into the\n"
    "broker's DIR/clients/ or DIR/workers/ to admit it. Never replaces a key.\n"
    "\n"
    "Exit status: 0 ok, 1 the key exists or cannot be written, 2 bad usage.\n";

#define fail(code, ...) mlc_cli_fail(PROG, code, __VA_ARGS__)

static int exit_for(int st) {
  return st == MLC_EINVAL || st == MLC_EPARSE || st == MLC_ENOTFOUND ? EXIT_USAGE : EXIT_WORK;
}

/* ------------------------------------------------------------------------ */
/* Arguments                                                                 */
/* ------------------------------------------------------------------------ */

typedef struct {
  int argc, i;
  char **argv;
  bool error;
} args_t;

/* --name VALUE or --name=VALUE at argv[i]. */
static bool opt_value(args_t *a, const char *name, const char **value) {
  const char *arg = a->argv[a->i];
  size_t n = strlen(name);
  if (strncmp(arg, name, n) != 0) return false;
  if (arg[n] == '=') {
    *value = arg + n + 1;
  } else if (arg[n] == '\0') {
    if (a->i + 1 >= a->argc) {
      a->error = true;
      fail(EXIT_USAGE, "option %s needs a value", name);
      return true;
    }
    *value = a->argv[++a->i];
  } else {
    return false;
  }
  return true;
}

static bool parse_int(const char *s, int lo, int hi, int *out) {
  char *end;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (errno || end == s || *end || v < lo || v > hi) return false;
  *out = (int)v;
  return true;
}

static bool is_help(const char *arg) { return strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0; }

/* ------------------------------------------------------------------------ */
/* Serving                                                                   */
/* ------------------------------------------------------------------------ */

static volatile int stop_flag;

static void on_signal(int sig) {
  (void)sig;
  stop_flag = 1;
}

static int serve_args(args_t *a, rpc_broker_options_t *o, bool *helped) {
  const char *v;
  for (a->i = 1; a->i < a->argc && !a->error; a->i++) {
    const char *arg = a->argv[a->i];
    if (is_help(arg)) {
      fputs(serve_help, stdout);
      *helped = true;
      return EXIT_OK;
    } else if (strcmp(arg, "--version") == 0) {
      printf(PROG " %s\n", MLC_VERSION);
      *helped = true;
      return EXIT_OK;
    } else if (opt_value(a, "--bind", &v)) {
      o->bind = v;
    } else if (opt_value(a, "--curve-keys", &v)) {
      o->curve_keys = v;
    } else if (opt_value(a, "--queue-bound", &v)) {
      if (!a->error && !parse_int(v, 1, 1 << 24, &o->queue_bound))
        return fail(EXIT_USAGE, "--queue-bound: expected a number of jobs >= 1, got '%s'", v);
    } else if (opt_value(a, "--log-stats", &v)) {
      if (!a->error && !parse_int(v, 0, 86400 * 365, &o->stats_log_s))
        return fail(EXIT_USAGE, "--log-stats: expected seconds >= 0, got '%s'", v);
    } else if (arg[0] == '-') {
      return fail(EXIT_USAGE, "unknown option '%s' (see `" PROG " --help`)", arg);
    } else {
      return fail(EXIT_USAGE, "unexpected argument '%s' (see `" PROG " --help`)", arg);
    }
  }
  return a->error ? EXIT_USAGE : EXIT_OK;
}

static int cmd_serve(args_t *a) {
  rpc_broker_options_t o;
  rpc_broker_options_default(&o);
  bool helped = false;
  int code = serve_args(a, &o, &helped);
  if (code != EXIT_OK || helped) return code;
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal; /* no SA_RESTART: the poll returns and sees the flag */
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  mlc_error_clear();
  int st = rpc_broker_run(&o, &stop_flag);
  if (st != MLC_OK) return fail(exit_for(st), "%s", mlc_error_or(mlc_status_str(st)));
  MLC_INFO("broker: stopped");
  return EXIT_OK;
}

/* ------------------------------------------------------------------------ */
/* stats                                                                     */
/* ------------------------------------------------------------------------ */

static void print_failures(const json_t *failures) {
  const char *kind;
  const json_t *n;
  bool any = false;
  json_object_foreach((json_t *)failures, kind, n) {
    if (json_integer_value(n) == 0) continue;
    printf("%s%s %lld", any ? ", " : "", kind, (long long)json_integer_value(n));
    any = true;
  }
  if (!any) printf("none");
}

static long long num(const json_t *o, const char *key) { return (long long)json_integer_value(json_object_get(o, key)); }

static void print_table(const json_t *stats) {
  if (json_object_size(stats) == 0) {
    printf("no device keys yet (no worker has announced itself, no job was submitted)\n");
    return;
  }
  printf("%-28s %7s %7s %8s %7s %7s %9s %9s %8s  %s\n", "DEVICE KEY", "WORKERS", "RUNNING", "CAPACITY", "QUEUED",
         "CLIENTS", "JOBS/S", "DONE", "REQUEUED", "FAILURES");
  const char *key;
  const json_t *d;
  json_object_foreach((json_t *)stats, key, d) {
    printf("%-28s %7lld %7lld %8lld %7lld %7lld %9.1f %9lld %8lld  ", key, num(d, "workers"), num(d, "running"),
           num(d, "capacity"), num(d, "queued"), num(d, "clients"),
           json_number_value(json_object_get(d, "jobs_per_s")), num(d, "done"), num(d, "requeued"));
    print_failures(json_object_get(d, "failures"));
    putchar('\n');
  }
}

static int cmd_stats(args_t *a) {
  const char *endpoint = NULL, *keys = NULL, *v;
  bool json = false;
  int timeout = 5000;
  for (a->i = 2; a->i < a->argc && !a->error; a->i++) {
    const char *arg = a->argv[a->i];
    if (is_help(arg)) {
      fputs(stats_help, stdout);
      return EXIT_OK;
    } else if (strcmp(arg, "--json") == 0) {
      json = true;
    } else if (opt_value(a, "--curve-keys", &v)) {
      keys = v;
    } else if (opt_value(a, "--timeout", &v)) {
      if (!a->error && !parse_int(v, 1, 86400 * 1000, &timeout))
        return fail(EXIT_USAGE, "stats: --timeout: expected milliseconds >= 1, got '%s'", v);
    } else if (arg[0] == '-') {
      return fail(EXIT_USAGE, "stats: unknown option '%s' (see `" PROG " stats --help`)", arg);
    } else if (!endpoint) {
      endpoint = arg;
    } else {
      return fail(EXIT_USAGE, "stats: unexpected argument '%s'", arg);
    }
  }
  if (a->error) return EXIT_USAGE;
  if (!endpoint) return fail(EXIT_USAGE, "stats: which broker? (" PROG " stats ENDPOINT)");
  json_t *stats = NULL;
  mlc_error_clear();
  int st = rpc_broker_stats(&stats, endpoint, keys, timeout);
  if (st != MLC_OK) return fail(exit_for(st), "stats: %s", mlc_error_or(mlc_status_str(st)));
  if (json) {
    char *text = json_dumps(stats, JSON_INDENT(2) | JSON_SORT_KEYS);
    printf("%s\n", text ? text : "{}");
    free(text);
  } else {
    print_table(stats);
  }
  json_decref(stats);
  if (fflush(stdout) != 0 || ferror(stdout)) return fail(EXIT_WORK, "writing standard output: %s", strerror(errno));
  return EXIT_OK;
}

/* ------------------------------------------------------------------------ */
/* keygen                                                                    */
/* ------------------------------------------------------------------------ */

static int cmd_keygen(args_t *a) {
  const char *pos[2];
  int npos = 0;
  for (a->i = 2; a->i < a->argc; a->i++) {
    const char *arg = a->argv[a->i];
    if (is_help(arg)) {
      fputs(keygen_help, stdout);
      return EXIT_OK;
    }
    if (arg[0] == '-' && arg[1]) return fail(EXIT_USAGE, "keygen: unknown option '%s'", arg);
    if (npos == 2) return fail(EXIT_USAGE, "keygen: unexpected argument '%s'", arg);
    pos[npos++] = arg;
  }
  if (npos != 2) return fail(EXIT_USAGE, "keygen: expected DIR NAME (see `" PROG " keygen --help`)");
  mlc_error_clear();
  int st = rpc_keygen(pos[0], pos[1]);
  if (st != MLC_OK) return fail(exit_for(st), "keygen: %s", mlc_error_last());
  printf("%s/%s.key (secret)\n%s/%s.pub\n", pos[0], pos[1], pos[0], pos[1]);
  return EXIT_OK;
}

int mlc_broker_main(int argc, char **argv) {
  mlc_log_set_program(PROG);
  args_t a = {argc, 1, argv, false};
  if (argc >= 2 && strcmp(argv[1], "stats") == 0) return cmd_stats(&a);
  if (argc >= 2 && strcmp(argv[1], "keygen") == 0) return cmd_keygen(&a);
  return cmd_serve(&a);
}
