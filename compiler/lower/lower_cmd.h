/*
 * lower_cmd.h - `mlc-sched lower`: print a function lowered (or the program
 * after chosen passes) for inspection; compiler/lower_cmd.c.
 */
#ifndef MLC_COMPILER_LOWER_LOWER_CMD_H
#define MLC_COMPILER_LOWER_LOWER_CMD_H

/* Runs `lower ARGS...`: argv[0] is the command's name ("lower"), options
 * follow. Writes to stdout/stderr; returns the exit status: 0 ok, 1 the work
 * failed (a trace that does not apply, a pass that fails), 2 bad usage or
 * bad input. */
int mlc_lower_cmd(int argc, char **argv);

#endif
