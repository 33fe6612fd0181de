/*
 * mlc-sched.c - the mlc-sched program (docs/mlc-sched.md): replay schedule
 * traces on TVMScript and convert traces (schedule/cmd_sched.c), and print
 * lowered TIR (`lower`, compiler/lower_cmd.c), and print a function's design
 * space (`space`, search/space/space_cmd.c). The program lives in compiler/
 * because lowering does; schedule/ cannot depend on compiler/ or search/.
 */
#include <string.h>

#include "compiler/lower/lower_cmd.h"
#include "schedule/cmd_sched.h"
#include "search/space/space_cmd.h"

int main(int argc, char **argv) {
  if (argc >= 2 && strcmp(argv[1], "lower") == 0) return mlc_lower_cmd(argc - 1, argv + 1);
  if (argc >= 2 && strcmp(argv[1], "space") == 0) return ms_space_cmd(argc - 1, argv + 1);
  return mlc_sched_main(argc, argv);
}
