/*
 * cmd_tir.h - the mlc-tir program as a library call, so tests can run it
 * in-process; tir/cli/mlc-tir.c is a thin main over it.
 */
#ifndef MLC_TIR_CMD_TIR_H
#define MLC_TIR_CMD_TIR_H

/* Runs `mlc-tir ARGS...` (argv[0] is the program name). Writes to stdout and
 * stderr; returns the exit status: 0 ok, 1 the work failed, 2 bad usage or
 * bad input. */
int mlc_tir_main(int argc, char **argv);

#endif /* MLC_TIR_CMD_TIR_H */
