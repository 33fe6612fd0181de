/*
 * mlc-compile.c - the mlc-compile program (docs/mlc-compile.md): compile a
 * TVMScript module with the tuned schedules the database holds (the default
 * schedule where it holds none) into a shared library, object file, LLVM IR
 * or assembly, plus a C header. Everything is in compiler/compile/.
 */
#include "compiler/compile/cmd_compile.h"

int main(int argc, char **argv) { return mlc_compile_main(argc, argv); }
