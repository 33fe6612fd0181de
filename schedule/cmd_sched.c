/*
 * cmd_sched.c - the mlc-sched program (DESIGN.md, "Programs"; user guide in
 * docs/mlc-sched.md):
 *
 *   mlc-sched apply (--trace T.json | --script S.py) FILE [--func NAME]
 *                   [--seed S] [--no-decisions]
 *   mlc-sched trace (--trace T.json | --script S.py) [--json | --python]
 *
 * `apply` replays a trace (TVM's JSON, or the `sch.split(...)` Python form a
 * user can write by hand) on a function of FILE and prints the scheduled
 * TVMScript; `trace` converts a trace between the two forms.
 *
 * Exit status: 0 on success, 1 when the work fails (the trace does not
 * apply to the program), 2 for bad usage or bad input (unknown options,
 * unreadable or invalid TVMScript, JSON or script). Errors go to stderr as
 * "mlc-sched: error: FILE: ..." or "mlc-sched: error: FILE:LINE:COL: ...";
 * a trace that does not apply names the instruction:
 * "mlc-sched: error: T.json: instruction 4 (Split): split: ...".
 */
#include "schedule/cmd_sched.h"
#include "schedule/schedule.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef MLC_VERSION
#define MLC_VERSION "0.0.0"
#endif

#define PROG "mlc-sched"

enum { EXIT_OK = 0, EXIT_WORK = 1, EXIT_USAGE = 2 };

#define fail(code, ...) mlc_cli_fail(PROG, code, __VA_ARGS__)

static int finish_output(int code) {
  if (fflush(stdout) != 0 || ferror(stdout)) return fail(EXIT_WORK, "writing standard output: %s", strerror(errno));
  return code;
}

/* ------------------------------------------------------------------------ */
/* Arguments                                                                 */
/* ------------------------------------------------------------------------ */

typedef struct {
  int argc, i;
  char **argv;
  const char *cmd;
  bool only_positional; /* after "--" */
} args_t;

/* "--name value" or "--name=value"; *err when the value is missing. */
static bool opt_value(args_t *a, const char *name, const char **value, bool *err) {
  const char *arg = a->argv[a->i];
  size_t n = strlen(name);
  if (a->only_positional || strncmp(arg, name, n) != 0) return false;
  if (arg[n] == '=') {
    *value = arg + n + 1;
  } else if (arg[n] == '\0') {
    if (a->i + 1 >= a->argc) {
      *err = true;
      fail(EXIT_USAGE, "%s: option %s needs a value", a->cmd, name);
      return true;
    }
    *value = a->argv[++a->i];
  } else {
    return false;
  }
  return true;
}

static bool opt_flag(args_t *a, const char *name) {
  return !a->only_positional && strcmp(a->argv[a->i], name) == 0;
}

static bool is_positional(args_t *a) {
  const char *arg = a->argv[a->i];
  if (!a->only_positional && strcmp(arg, "--") == 0) {
    a->only_positional = true;
    return false;
  }
  return a->only_positional || arg[0] != '-' || arg[1] == '\0';
}

static int bad_option(args_t *a) {
  return fail(EXIT_USAGE, "%s: unknown option '%s' (see `" PROG " %s --help`)", a->cmd, a->argv[a->i], a->cmd);
}

/* The trace source: --trace T.json or --script S.py, exactly one. */
typedef struct {
  const char *json_path, *script_path;
} trace_src_t;

static bool trace_opt(args_t *a, trace_src_t *src, bool *err) {
  const char *v = NULL;
  bool json = opt_value(a, "--trace", &v, err);
  if (!json && !opt_value(a, "--script", &v, err)) return false;
  if (*err) return true;
  if (src->json_path || src->script_path) {
    fail(EXIT_USAGE, "%s: give one trace (--trace or --script), once", a->cmd);
    *err = true;
  }
  if (json) src->json_path = v;
  else src->script_path = v;
  return true;
}

/* ------------------------------------------------------------------------ */
/* Loading                                                                   */
/* ------------------------------------------------------------------------ */

/* Reads the trace (JSON or script); prints the error itself. */
static int load_trace(const trace_src_t *src, sch_trace_t **out) {
  const char *path = src->json_path ? src->json_path : src->script_path;
  const char *shown = tir_cli_shown_path(path);
  char *text = NULL;
  size_t len = 0;
  *out = NULL;
  if (mlc_read_file(&text, &len, path) != MLC_OK) return fail(EXIT_USAGE, "%s", mlc_error_last());
  int st;
  if (src->script_path) {
    st = sch_trace_from_python(out, text, len, shown);
    mlc_free(text);
    if (st != MLC_OK) return fail(st == MLC_ENOMEM ? EXIT_WORK : EXIT_USAGE, "%s", mlc_error_last());
    return EXIT_OK;
  }
  json_t *json = mlc_json_loads(text, shown);
  mlc_free(text);
  if (!json) return fail(EXIT_USAGE, "%s", mlc_error_last());
  st = sch_trace_from_json(out, json);
  json_decref(json);
  if (st != MLC_OK) return fail(st == MLC_ENOMEM ? EXIT_WORK : EXIT_USAGE, "%s: %s", shown, mlc_error_last());
  return EXIT_OK;
}

/* ------------------------------------------------------------------------ */
/* apply                                                                     */
/* ------------------------------------------------------------------------ */

static const char apply_help[] =
    "usage: " PROG " apply (--trace T.json | --script S.py) FILE [--func NAME]\n"
    "                      [--seed S] [--no-decisions]\n"
    "\n"
    "Replays a schedule trace on a function of FILE (TVMScript: a @T.prim_func or\n"
    "an @I.ir_module) and prints the scheduled function as TVMScript.\n"
    "\n"
    "  --trace T.json   the trace in TVM's JSON form ('-' reads standard input)\n"
    "  --script S.py    the trace in TVM's Python form, one sch.<primitive>(...)\n"
    "                   call per line, as print(sch.trace) shows it\n"
    "  --func NAME      the function of an IRModule to schedule (default: the only\n"
    "                   one, else \"main\")\n"
    "  --seed S         seed of the sampling RNG (default 0); matters only with\n"
    "                   --no-decisions or for sampling instructions without one\n"
    "  --no-decisions   ignore the trace's decisions and sample afresh\n"
    "\n"
    "Exit status: 0 ok, 1 the trace does not apply, 2 bad usage or bad input.\n";

typedef struct {
  trace_src_t src;
  const char *file, *func, *seed;
  bool no_decisions;
} apply_opts_t;

static int apply_args(args_t *a, apply_opts_t *o, bool *helped) {
  bool err = false;
  for (a->i = 1; a->i < a->argc && !err; a->i++) {
    if (opt_flag(a, "--help") || opt_flag(a, "-h")) {
      fputs(apply_help, stdout);
      *helped = true;
      return EXIT_OK;
    }
    if (trace_opt(a, &o->src, &err)) continue;
    if (opt_value(a, "--func", &o->func, &err) || opt_value(a, "--seed", &o->seed, &err)) continue;
    if (opt_flag(a, "--no-decisions")) {
      o->no_decisions = true;
    } else if (is_positional(a)) {
      if (o->file) return fail(EXIT_USAGE, "apply: more than one FILE given");
      o->file = a->argv[a->i];
    } else if (strcmp(a->argv[a->i], "--") != 0) {
      return bad_option(a);
    }
  }
  if (err) return EXIT_USAGE;
  if (!o->src.json_path && !o->src.script_path)
    return fail(EXIT_USAGE, "apply: missing --trace T.json or --script S.py (see `" PROG " apply --help`)");
  if (!o->file) return fail(EXIT_USAGE, "apply: missing FILE (see `" PROG " apply --help`)");
  return EXIT_OK;
}

static int parse_seed(const char *s, uint64_t *out) {
  char *end;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 0);
  if (errno || end == s || *end || s[0] == '-') return fail(EXIT_USAGE, "apply: bad --seed '%s'", s);
  *out = v;
  return EXIT_OK;
}

/* Replays and prints; the failure names the trace file and instruction. */
static int replay(const apply_opts_t *o, const tir_func_t *f, const sch_trace_t *t, uint64_t seed) {
  sch_t *sch;
  if (sch_create(&sch, f, seed, SCH_ERRORS_RICH) != MLC_OK) return fail(EXIT_WORK, "%s", mlc_error_last());
  const char *trace_path = tir_cli_shown_path(o->src.json_path ? o->src.json_path : o->src.script_path);
  int code = EXIT_OK;
  if (sch_trace_apply(sch, t, !o->no_decisions) != MLC_OK) {
    code = fail(EXIT_WORK, "%s: %s", trace_path, sch_error(sch));
  } else {
    char *text = tir_print_func(sch_func(sch));
    if (!text) code = fail(EXIT_WORK, "out of memory");
    else fputs(text, stdout);
    mlc_free(text);
  }
  sch_free(sch);
  return code;
}

static int cmd_apply(args_t *a) {
  apply_opts_t o;
  memset(&o, 0, sizeof o);
  bool helped = false;
  int code = apply_args(a, &o, &helped);
  if (code != EXIT_OK || helped) return code;
  uint64_t seed = 0;
  if (o.seed && (code = parse_seed(o.seed, &seed)) != EXIT_OK) return code;
  if (o.src.json_path && o.file && strcmp(o.file, "-") == 0 && strcmp(o.src.json_path, "-") == 0)
    return fail(EXIT_USAGE, "apply: FILE and the trace cannot both be standard input");
  sch_trace_t *t = NULL;
  tir_module_t *m = NULL;
  tir_func_t *f = NULL;
  if ((code = load_trace(&o.src, &t)) == EXIT_OK && (code = tir_cli_load_module(PROG, o.file, &m)) == EXIT_OK &&
      (code = tir_cli_pick_func(PROG, m, o.func, o.file, &f)) == EXIT_OK)
    code = replay(&o, f, t, seed);
  sch_trace_free(t);
  tir_module_free(m);
  return finish_output(code);
}

/* ------------------------------------------------------------------------ */
/* trace                                                                     */
/* ------------------------------------------------------------------------ */

static const char trace_help[] =
    "usage: " PROG " trace (--trace T.json | --script S.py) [--json | --python]\n"
    "\n"
    "Checks a schedule trace and prints it in the other form (or the one asked\n"
    "for): TVM's JSON, [[[kind, inputs, attrs, outputs], ...], [[index, decision],\n"
    "...]], or its Python form, one sch.<primitive>(...) call per line.\n"
    "\n"
    "  --json     print the JSON form (the default for --script)\n"
    "  --python   print the Python form (the default for --trace)\n"
    "\n"
    "Exit status: 0 ok, 2 bad usage or a malformed trace.\n";

static int cmd_trace(args_t *a) {
  trace_src_t src = {0};
  bool err = false, json = false, python = false;
  for (a->i = 1; a->i < a->argc && !err; a->i++) {
    if (opt_flag(a, "--help") || opt_flag(a, "-h")) {
      fputs(trace_help, stdout);
      return finish_output(EXIT_OK);
    }
    if (trace_opt(a, &src, &err)) continue;
    if (opt_flag(a, "--json")) json = true;
    else if (opt_flag(a, "--python")) python = true;
    else if (is_positional(a)) return fail(EXIT_USAGE, "trace: unexpected argument '%s'", a->argv[a->i]);
    else if (strcmp(a->argv[a->i], "--") != 0) return bad_option(a);
  }
  if (err) return EXIT_USAGE;
  if (json && python) return fail(EXIT_USAGE, "trace: give --json or --python, not both");
  if (!src.json_path && !src.script_path)
    return fail(EXIT_USAGE, "trace: missing --trace T.json or --script S.py (see `" PROG " trace --help`)");
  if (!json && !python) json = src.script_path != NULL;
  sch_trace_t *t;
  int code = load_trace(&src, &t);
  if (code != EXIT_OK) return code;
  if (json) {
    json_t *j = NULL;
    char *text = sch_trace_to_json(&j, t) == MLC_OK ? json_dumps(j, JSON_REAL_PRECISION(17)) : NULL;
    if (text) printf("%s\n", text);
    else code = fail(EXIT_WORK, "%s", mlc_error_last());
    free(text);
    json_decref(j);
  } else {
    char *text = sch_trace_to_python(t);
    if (text) fputs(text, stdout);
    else code = fail(EXIT_WORK, "out of memory");
    mlc_free(text);
  }
  sch_trace_free(t);
  return finish_output(code);
}

/* ------------------------------------------------------------------------ */
/* Dispatch                                                                  */
/* ------------------------------------------------------------------------ */

static const char main_help[] =
    "usage: " PROG " <command> [options]\n"
    "\n"
    "Schedule traces: replay them on TVMScript, convert between TVM's forms.\n"
    "\n"
    "commands:\n"
    "  apply (--trace T.json | --script S.py) FILE   print FILE scheduled by the trace\n"
    "  trace (--trace T.json | --script S.py)        convert a trace (JSON <-> Python)\n"
    "  lower FILE [--trace T.json | --script S.py] [--dump-after PASS|all]\n"
    "                                                print FILE lowered (`lower --help`)\n"
    "  space FILE [--target T] [--rules A,B] [--json]\n"
    "                                                print FILE's design space (`space --help`)\n"
    "\n"
    "  --help      this text (`" PROG " <command> --help` for a command's)\n"
    "  --version   print the version\n";

int mlc_sched_main(int argc, char **argv) {
  mlc_log_set_program(PROG);
  if (argc < 2) {
    fputs(main_help, stderr);
    return EXIT_USAGE;
  }
  const char *cmd = argv[1];
  if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
    fputs(main_help, stdout);
    return finish_output(EXIT_OK);
  }
  if (strcmp(cmd, "--version") == 0) {
    printf(PROG " %s\n", MLC_VERSION);
    return finish_output(EXIT_OK);
  }
  args_t a = {argc - 1, 1, argv + 1, cmd, false};
  if (strcmp(cmd, "apply") == 0) return cmd_apply(&a);
  if (strcmp(cmd, "trace") == 0) return cmd_trace(&a);
  return fail(EXIT_USAGE, "unknown command '%s' (see `" PROG " --help`)", cmd);
}
