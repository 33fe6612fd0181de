/*
 * mlc-tir.c - the mlc-tir program: TVMScript formatting, workload keys,
 * built-in workloads and the reference interpreter (see docs/mlc-tir.md).
 * Everything it does is in tir/cmd_tir.c.
 */
#include "tir/cmd_tir.h"

int main(int argc, char **argv) { return mlc_tir_main(argc, argv); }
