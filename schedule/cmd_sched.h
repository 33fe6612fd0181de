/*
 * cmd_sched.h - the mlc-sched program as a library call, so tests can run it
 * in-process; compiler/cli/mlc-sched.c is a thin main over it (and over
 * compiler/lower_cmd.c for `mlc-sched lower`).
 */
#ifndef MLC_SCHEDULE_CMD_SCHED_H
#define MLC_SCHEDULE_CMD_SCHED_H

/* Runs `mlc-sched ARGS...` (argv[0] is the program name). Writes to stdout
 * and stderr; returns the exit status: 0 ok, 1 the work failed (a trace that
 * does not apply), 2 bad usage or bad input. */
int mlc_sched_main(int argc, char **argv);

#endif /* MLC_SCHEDULE_CMD_SCHED_H */
