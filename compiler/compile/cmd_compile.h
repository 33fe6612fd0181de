/*
 * cmd_compile.h - the mlc-compile program as a library call, so tests can
 * run it in-process (compiler/cli/mlc-compile.c is a thin main over it).
 * User guide: docs/mlc-compile.md.
 */
#ifndef MLC_COMPILER_COMPILE_CMD_COMPILE_H
#define MLC_COMPILER_COMPILE_CMD_COMPILE_H

/* Exit statuses (DESIGN.md, Programs). */
enum {
  MLC_COMPILE_EXIT_OK = 0,    /* compiled; the outputs are written */
  MLC_COMPILE_EXIT_WORK = 1,  /* the work failed: the database (unreachable,
                                 unreadable), --require-tuned with untuned
                                 functions, lowering, code generation or
                                 writing an output */
  MLC_COMPILE_EXIT_USAGE = 2  /* bad usage or bad input: options, the output's
                                 kind, the target, the TVMScript file */
};

/* Runs `mlc-compile ARGS...` (argv[0] is the program name): compiles FILE
 * with the database's best schedules (mlc_compile_module) and writes the
 * output and its C header. The report and --json go to stdout, warnings and
 * errors to stderr; returns the exit status above. Nothing is written when
 * the exit status is not 0 (an output half-written is removed). */
int mlc_compile_main(int argc, char **argv);

#endif /* MLC_COMPILER_COMPILE_CMD_COMPILE_H */
