/*
 * space_cmd.h - `mlc-sched space`: print the design space (the traces of
 * ms_space_generate) of a function for a target; search/space/space_cmd.c.
 * compiler/cli/mlc-sched.c dispatches to it.
 */
#ifndef MLC_SEARCH_SPACE_SPACE_CMD_H
#define MLC_SEARCH_SPACE_SPACE_CMD_H

/* Runs `space ARGS...`: argv[0] is the command's name ("space"), options
 * follow. Writes to stdout/stderr; returns the exit status: 0 ok, 1 the work
 * failed (the space could not be generated), 2 bad usage or bad input. */
int ms_space_cmd(int argc, char **argv);

#endif /* MLC_SEARCH_SPACE_SPACE_CMD_H */
