/*
 * cmd_worker.h - the mlc-worker program as a library call (workers/cli/
 * mlc-worker.c is a thin main over it). User guide: docs/mlc-worker.md.
 */
#ifndef MLC_WORKERS_CMD_WORKER_H
#define MLC_WORKERS_CMD_WORKER_H

/* Exit statuses (DESIGN.md, Programs). */
enum {
  MLC_WORKER_EXIT_OK = 0,    /* stopped by SIGINT or SIGTERM after its running job */
  MLC_WORKER_EXIT_WORK = 1,  /* the work failed: the protocol or the measuring process */
  MLC_WORKER_EXIT_USAGE = 2  /* bad usage, a bad target, or a device this machine lacks */
};

/* Runs `mlc-worker ARGS...` (argv[0] is the program name) until SIGINT or
 * SIGTERM: installs handlers for both for the duration (restored before it
 * returns); a second signal ends the process at once. Logs each job to
 * stderr; returns the exit status above. */
int mlc_worker_main(int argc, char **argv);

/* `mlc-worker health PATH [--max-age S] [--live]` (argv[0] is "health"):
 * reads the health file a running worker keeps (--health-file) and returns
 * 0 when it was updated within S seconds (default 10) and, unless --live,
 * says the worker is connected to its broker; 1 otherwise, with one line
 * on stderr saying why (missing, stale, disconnected, unreadable); 2 on bad
 * usage. For container health checks and Kubernetes probes. */
int mlc_worker_health_main(int argc, char **argv);

#endif /* MLC_WORKERS_CMD_WORKER_H */
