/*
 * cmd_worker_health.c - `mlc-worker health PATH [--max-age S] [--live]`
 * (cmd_worker.h): the probe side of --health-file. A running worker
 * rewrites its health file once a second (rpc/worker.c); this reads it and
 * answers with the exit status, so a container HEALTHCHECK or a Kubernetes
 * probe needs no shell logic:
 *
 *   liveness:   mlc-worker health /run/mlc/health --live   (the loop runs)
 *   readiness:  mlc-worker health /run/mlc/health          (and the broker
 *                                                           answers)
 */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "workers/cmd_worker.h"
#include "support/support.h"

#define PROG "mlc-worker health"

enum { EXIT_OK = MLC_WORKER_EXIT_OK, EXIT_WORK = MLC_WORKER_EXIT_WORK, EXIT_USAGE = MLC_WORKER_EXIT_USAGE };

static const char help[] =
    "usage: mlc-worker health PATH [--max-age S] [--live]\n"
    "\n"
    "Checks the health file a running `mlc-worker --health-file PATH` keeps.\n"
    "Exit 0 when it was updated within S seconds (default 10) and the worker is\n"
    "connected to its broker; with --live, only that it was updated (the worker\n"
    "runs, connected or not). Exit 1 with the reason otherwise, 2 on bad usage.\n";

static int64_t wall_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int parse_args(int argc, char **argv, const char **path, double *max_age, bool *live, bool *helped) {
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      *helped = true;
    } else if (strcmp(a, "--live") == 0) {
      *live = true;
    } else if (strcmp(a, "--max-age") == 0 || strncmp(a, "--max-age=", 10) == 0) {
      const char *v = a[9] == '=' ? a + 10 : (i + 1 < argc ? argv[++i] : NULL);
      char *end = NULL;
      errno = 0;
      double s = v ? strtod(v, &end) : 0;
      if (!v || errno || end == v || *end || !(s > 0) || s > 86400)
        return mlc_cli_fail(PROG, EXIT_USAGE, "--max-age: expected seconds in (0, 86400], got '%s'", v ? v : "");
      *max_age = s;
    } else if (a[0] == '-') {
      return mlc_cli_fail(PROG, EXIT_USAGE, "unknown option '%s' (see `mlc-worker health --help`)", a);
    } else if (*path) {
      return mlc_cli_fail(PROG, EXIT_USAGE, "unexpected argument '%s'", a);
    } else {
      *path = a;
    }
  }
  if (!*helped && !*path) return mlc_cli_fail(PROG, EXIT_USAGE, "which health file? (mlc-worker health PATH)");
  return EXIT_OK;
}

int mlc_worker_health_main(int argc, char **argv) {
  const char *path = NULL;
  double max_age = 10;
  bool live = false, helped = false;
  int code = parse_args(argc, argv, &path, &max_age, &live, &helped);
  if (code != EXIT_OK) return code;
  if (helped) {
    fputs(help, stdout);
    return fflush(stdout) == 0 ? EXIT_OK : EXIT_WORK;
  }
  struct stat sb;
  if (stat(path, &sb) != 0 && errno == ENOENT)
    return mlc_cli_fail(PROG, EXIT_WORK, "%s: no health file (is the worker running with --health-file?)", path);
  json_error_t err;
  json_t *h = json_load_file(path, JSON_REJECT_DUPLICATES, &err);
  if (!h)
    return mlc_cli_fail(PROG, EXIT_WORK, "%s:%d:%d: unreadable health file: %s", path, err.line, err.column, err.text);
  const json_t *at = json_object_get(h, "updated_at_ms"), *conn = json_object_get(h, "connected");
  const char *broker = json_string_value(json_object_get(h, "broker"));
  const char *id = json_string_value(json_object_get(h, "worker_id"));
  if (!json_is_integer(at) || !json_is_boolean(conn)) {
    json_decref(h);
    return mlc_cli_fail(PROG, EXIT_WORK, "%s: not a worker health file (updated_at_ms or connected missing)", path);
  }
  double age = (double)(wall_ms() - (int64_t)json_integer_value(at)) / 1000.0;
  int rc = EXIT_OK;
  if (age > max_age) {
    rc = mlc_cli_fail(PROG, EXIT_WORK, "%s: stale: worker %s last updated it %.1f s ago (limit %g s)", path,
                      id ? id : "?", age, max_age);
  } else if (!live && !json_is_true(conn)) {
    rc = mlc_cli_fail(PROG, EXIT_WORK, "worker %s is running but not connected to its broker %s", id ? id : "?",
                      broker ? broker : "?");
  }
  json_decref(h);
  return rc;
}
