/*
 * lower_cmd.c - `mlc-sched lower`: shows what lowering does to a function.
 *
 *   mlc-sched lower FILE [--trace T.json | --script S.py] [--func NAME]
 *                        [--dump-after PASS|all] [--target T]
 *
 * Reads a TVMScript function (a @T.prim_func or one function of an
 * @I.ir_module), optionally schedules it with a trace (TVM's JSON or the
 * `sch.split(...)` Python form, decisions taken from the trace), lowers it
 * and prints the lowered TIR. With --dump-after the program is printed
 * after the named pass (or after every pass for `all`), each stage under a
 * `# after <pass>` line, instead of the final result. Notes of the passes
 * (a loop kept scalar, ...) go to stderr as `mlc-sched: note: ...`.
 *
 * Exit status as the other mlc-sched commands: 0 ok, 1 the work failed (the
 * trace does not apply, a pass fails), 2 bad usage or bad input.
 */
#include "compiler/lower/lower_cmd.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "compiler/compiler.h"
#include "schedule/schedule.h"

#define PROG "mlc-sched"

enum { EXIT_OK = 0, EXIT_WORK = 1, EXIT_USAGE = 2 };

static const char lower_help[] =
    "usage: " PROG " lower FILE [--trace T.json | --script S.py] [--func NAME]\n"
    "                      [--dump-after PASS|all] [--target T]\n"
    "\n"
    "Lowers a function of FILE (TVMScript: a @T.prim_func or an @I.ir_module),\n"
    "scheduled first by a trace when one is given, and prints the lowered TIR.\n"
    "\n"
    "  --trace T.json      a trace in TVM's JSON form\n"
    "  --script S.py       a trace in TVM's Python form (sch.<primitive>(...) lines)\n"
    "  --func NAME         the function of an IRModule (default: the only one,\n"
    "                      else \"main\")\n"
    "  --dump-after PASS   print the program after PASS instead (`all`: after\n"
    "                      every pass), each under a `# after PASS` line; passes:\n"
    "                      lower-cross-thread-reduction (GPU), lower-init-block,\n"
    "                      plan-allocations, remove-blocks,\n"
    "                      compact-buffers, flatten-buffers, vectorize, unroll,\n"
    "                      simplify, storage-rewrite, gpu-sync (GPU)\n"
    "  --target T          the target (default: llvm, the host CPU)\n"
    "\n"
    "Exit status: 0 ok, 1 the trace does not apply or lowering fails, 2 bad\n"
    "usage or bad input.\n";

typedef struct {
  const char *file, *json_path, *script_path, *func, *dump_after, *target;
} lower_opts_t;

#define fail(code, ...) mlc_cli_fail(PROG, code, __VA_ARGS__)

/* ------------------------------------------------------------------------ */
/* Arguments                                                                 */
/* ------------------------------------------------------------------------ */

static int parse_args(int argc, char **argv, lower_opts_t *o, bool *helped) {
  static const char *const names[] = {"--trace", "--script", "--func", "--dump-after", "--target"};
  const char **slots[] = {&o->json_path, &o->script_path, &o->func, &o->dump_after, &o->target};
  bool positional_only = false;
  for (int i = 1; i < argc; i++) {
    const char *arg = argv[i], *value = NULL;
    if (!positional_only && (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0)) {
      fputs(lower_help, stdout);
      *helped = true;
      return EXIT_OK;
    }
    if (!positional_only && strcmp(arg, "--") == 0) {
      positional_only = true;
      continue;
    }
    size_t k = 0;
    while (!positional_only && k < sizeof names / sizeof names[0] && !mlc_cli_opt_value(argc, argv, &i, names[k], &value)) k++;
    if (!positional_only && k < sizeof names / sizeof names[0]) {
      if (!value) return fail(EXIT_USAGE, "lower: option %s needs a value", names[k]);
      if (*slots[k]) return fail(EXIT_USAGE, "lower: option %s given twice", names[k]);
      *slots[k] = value;
    } else if (positional_only || arg[0] != '-' || arg[1] == '\0') {
      if (o->file) return fail(EXIT_USAGE, "lower: more than one FILE given");
      o->file = arg;
    } else {
      return fail(EXIT_USAGE, "lower: unknown option '%s' (see `" PROG " lower --help`)", arg);
    }
  }
  if (!o->file) return fail(EXIT_USAGE, "lower: missing FILE (see `" PROG " lower --help`)");
  if (o->json_path && o->script_path) return fail(EXIT_USAGE, "lower: give one trace (--trace or --script)");
  return EXIT_OK;
}

/* ------------------------------------------------------------------------ */
/* Loading                                                                   */
/* ------------------------------------------------------------------------ */

static int load_trace(const lower_opts_t *o, sch_trace_t **out) {
  const char *path = o->json_path ? o->json_path : o->script_path;
  char *text = NULL;
  size_t len = 0;
  *out = NULL;
  if (mlc_read_file(&text, &len, path) != MLC_OK) return fail(EXIT_USAGE, "%s", mlc_error_last());
  int st;
  if (o->script_path) {
    st = sch_trace_from_python(out, text, len, tir_cli_shown_path(path));
    mlc_free(text);
    return st == MLC_OK ? EXIT_OK : fail(st == MLC_ENOMEM ? EXIT_WORK : EXIT_USAGE, "%s", mlc_error_last());
  }
  json_t *json = mlc_json_loads(text, tir_cli_shown_path(path));
  mlc_free(text);
  if (!json) return fail(EXIT_USAGE, "%s", mlc_error_last());
  st = sch_trace_from_json(out, json);
  json_decref(json);
  if (st != MLC_OK) return fail(st == MLC_ENOMEM ? EXIT_WORK : EXIT_USAGE, "%s: %s", tir_cli_shown_path(path), mlc_error_last());
  return EXIT_OK;
}

/* ------------------------------------------------------------------------ */
/* Lowering                                                                  */
/* ------------------------------------------------------------------------ */

static void dump_stage(const char *pass, const tir_func_t *f, void *payload) {
  int *failed = payload;
  char *text = tir_print_func(f);
  if (!text) {
    *failed = 1;
    return;
  }
  printf("# after %s\n%s", pass, text);
  mlc_free(text);
}

static void print_notes(const mlc_strbuf_t *notes) {
  const char *s = mlc_sb_str(notes);
  while (*s) {
    const char *end = strchr(s, '\n');
    int n = end ? (int)(end - s) : (int)strlen(s);
    fprintf(stderr, PROG ": note: %.*s\n", n, s);
    s += n + (end ? 1 : 0);
  }
}

static int lower_and_print(const lower_opts_t *o, const tir_func_t *f, const mlc_target_t *target) {
  int dump_failed = 0;
  mlc_strbuf_t notes;
  mlc_sb_init(&notes);
  mlc_lower_options_t opts = {.dump_after = o->dump_after, .dump = dump_stage, .payload = &dump_failed, .notes = &notes};
  tir_func_t *lowered = NULL;
  int rc = mlc_lower(&lowered, f, target, &opts);
  print_notes(&notes);
  mlc_sb_free(&notes);
  if (rc != MLC_OK) return fail(rc == MLC_EINVAL ? EXIT_USAGE : EXIT_WORK, "%s", mlc_error_last());
  int code = dump_failed ? fail(EXIT_WORK, "out of memory") : EXIT_OK;
  if (!o->dump_after && code == EXIT_OK) {
    char *text = tir_print_func(lowered);
    if (text) fputs(text, stdout);
    else code = fail(EXIT_WORK, "out of memory");
    mlc_free(text);
  }
  tir_func_free(lowered);
  return code;
}

static int schedule_and_lower(const lower_opts_t *o, const tir_func_t *f, const sch_trace_t *t,
                              const mlc_target_t *target) {
  if (!t) return lower_and_print(o, f, target);
  sch_t *sch = NULL;
  if (sch_create(&sch, f, 0, SCH_ERRORS_RICH) != MLC_OK) return fail(EXIT_WORK, "%s", mlc_error_last());
  int code;
  if (sch_trace_apply(sch, t, true) != MLC_OK)
    code = fail(EXIT_WORK, "%s: %s", tir_cli_shown_path(o->json_path ? o->json_path : o->script_path), sch_error(sch));
  else
    code = lower_and_print(o, sch_func(sch), target);
  sch_free(sch);
  return code;
}

int mlc_lower_cmd(int argc, char **argv) {
  lower_opts_t o;
  memset(&o, 0, sizeof o);
  bool helped = false;
  int code = parse_args(argc, argv, &o, &helped);
  if (code != EXIT_OK || helped) return code;
  mlc_target_t target;
  if (o.target && mlc_target_parse(&target, o.target) != MLC_OK)
    return fail(EXIT_USAGE, "lower: --target: %s", mlc_error_last());
  if (!o.target) mlc_target_host(&target);
  mlc_pass_id_t id;
  if (o.dump_after && strcmp(o.dump_after, "all") != 0 && mlc_pass_lookup(&id, o.dump_after) != MLC_OK)
    return fail(EXIT_USAGE, "lower: --dump-after: %s", mlc_error_last());
  sch_trace_t *t = NULL;
  tir_module_t *m = NULL;
  tir_func_t *f = NULL;
  if ((!o.json_path && !o.script_path) || (code = load_trace(&o, &t)) == EXIT_OK)
    if ((code = tir_cli_load_module(PROG, o.file, &m)) == EXIT_OK && (code = tir_cli_pick_func(PROG, m, o.func, o.file, &f)) == EXIT_OK)
      code = schedule_and_lower(&o, f, t, &target);
  sch_trace_free(t);
  tir_module_free(m);
  if (fflush(stdout) != 0 || ferror(stdout)) return fail(EXIT_WORK, "writing standard output: %s", strerror(errno));
  return code;
}
