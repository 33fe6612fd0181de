/*
 * cmd_tune.h - the mlc-tune program as a library call (search/cli/mlc-tune.c
 * is a thin main over it). User guide: docs/mlc-tune.md.
 */
#ifndef MLC_SEARCH_CMD_TUNE_H
#define MLC_SEARCH_CMD_TUNE_H

/* Exit statuses (DESIGN.md, Programs; 130 is the shell's for SIGINT). */
enum {
  MLC_TUNE_EXIT_OK = 0,          /* tuned (the budget is spent or every task is done) */
  MLC_TUNE_EXIT_WORK = 1,        /* the work failed: the database, the measurement
                                    transport, or nothing measured successfully */
  MLC_TUNE_EXIT_USAGE = 2,       /* bad usage or bad input */
  MLC_TUNE_EXIT_INTERRUPTED = 130 /* stopped by Ctrl-C after finishing the round */
};

/* Runs `mlc-tune ARGS...` (argv[0] is the program name). Installs a SIGINT
 * handler for the duration of the tuning (restored before returning). Writes
 * the summary to stdout, progress and errors to stderr; returns the exit
 * status above. */
int mlc_tune_main(int argc, char **argv);

#endif /* MLC_SEARCH_CMD_TUNE_H */
