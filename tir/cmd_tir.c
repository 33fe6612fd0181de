/*
 * cmd_tir.c - the mlc-tir program (DESIGN.md, "Programs"; user guide in
 * docs/mlc-tir.md): `fmt` (parse, verify, print canonical TVMScript), `hash`
 * (workload keys), `workload` (print a built-in workload) and `eval` (run the
 * reference interpreter on .npy or random inputs).
 *
 * Exit status: 0 on success, 1 when the work fails (the interpreter reports
 * an error, an output cannot be written, out of memory), 2 for bad usage or
 * bad input (unknown options, unreadable or invalid TVMScript, .npy inputs
 * that do not fit). Errors go to stderr as "mlc-tir: error: ..."; parse
 * errors as "mlc-tir: error: FILE:LINE:COL: message" with the source line and
 * a caret. Every path returns a status; nothing aborts on user input.
 * `eval` lives in cmd_tir_eval.c; the helpers they share are declared in
 * cmd_tir_internal.h.
 */
#include "tir/cmd_tir.h"
#include "tir/cmd_tir_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef MLC_VERSION
#define MLC_VERSION "0.0.0"
#endif

int tir_cmd_fail(int code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, PROG ": error: ");
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  return code;
}

/* Exit status for a library status: user input problems are 2, the rest 1. */
int tir_cmd_exit_for(int st) {
  return st == MLC_EPARSE || st == MLC_EINVAL || st == MLC_EVERIFY || st == MLC_EUNSUPPORTED ||
                 st == MLC_EIO || st == MLC_ENOTFOUND
             ? EXIT_USAGE
             : EXIT_WORK;
}

/* Flushes stdout; a failed write (full disk, closed pipe) fails the command. */
int tir_cmd_finish_output(int code) {
  if (fflush(stdout) != 0 || ferror(stdout))
    return tir_cmd_fail(EXIT_WORK, "writing standard output: %s", strerror(errno));
  return code;
}

/* ------------------------------------------------------------------------ */
/* Arguments                                                                 */
/* ------------------------------------------------------------------------ */

/* Options take "--name value" or "--name=value". Returns true and *value
 * when the current argument is the option; *err is set when its value is
 * missing. */
bool tir_cmd_opt_value(tir_cmd_args_t *a, const char *name, const char **value, bool *err) {
  const char *arg = a->argv[a->i];
  size_t n = strlen(name);
  if (a->only_positional || strncmp(arg, name, n) != 0) return false;
  if (arg[n] == '=') {
    *value = arg + n + 1;
  } else if (arg[n] == '\0') {
    if (a->i + 1 >= a->argc) {
      *err = true;
      tir_cmd_fail(EXIT_USAGE, "%s: option %s needs a value", a->cmd, name);
      return true;
    }
    *value = a->argv[++a->i];
  } else {
    return false;
  }
  return true;
}

bool tir_cmd_opt_flag(tir_cmd_args_t *a, const char *name) {
  return !a->only_positional && strcmp(a->argv[a->i], name) == 0;
}

/* True for a positional argument ("-" is standard input). */
bool tir_cmd_is_positional(tir_cmd_args_t *a) {
  const char *arg = a->argv[a->i];
  if (!a->only_positional && strcmp(arg, "--") == 0) {
    a->only_positional = true;
    return false;
  }
  return a->only_positional || arg[0] != '-' || arg[1] == '\0';
}

int tir_cmd_bad_option(tir_cmd_args_t *a) {
  return tir_cmd_fail(EXIT_USAGE, "%s: unknown option '%s' (see `" PROG " %s --help`)", a->cmd, a->argv[a->i], a->cmd);
}

bool tir_cmd_parse_i64(const char *s, int64_t *out) {
  char *end;
  errno = 0;
  long long v = strtoll(s, &end, 10);
  if (errno || end == s || *end) return false;
  *out = v;
  return true;
}

/* ------------------------------------------------------------------------ */
/* Loading TVMScript                                                         */
/* ------------------------------------------------------------------------ */

/* Reads and parses FILE ("-" is standard input); prints the error itself. */
static int load_module(const char *path, tir_module_t **out) {
  char *src = NULL;
  size_t len = 0;
  const char *shown = strcmp(path, "-") == 0 ? "<stdin>" : path;
  *out = NULL;
  int st = mlc_read_file(&src, &len, path);
  if (st != MLC_OK) return tir_cmd_fail(tir_cmd_exit_for(st), "%s", mlc_error_last());
  tir_parse_error_t perr;
  memset(&perr, 0, sizeof(perr));
  st = tir_parse(out, src, len, shown, &perr);
  mlc_free(src);
  if (st == MLC_OK) return EXIT_OK;
  if (st != MLC_EPARSE) return tir_cmd_fail(tir_cmd_exit_for(st), "%s: %s", shown, mlc_error_last());
  mlc_strbuf_t sb;
  mlc_sb_init(&sb);
  tir_parse_error_format(&perr, &sb);
  fprintf(stderr, PROG ": error: %s", mlc_sb_str(&sb));
  if (sb.len == 0 || sb.data[sb.len - 1] != '\n') fputc('\n', stderr);
  mlc_sb_free(&sb);
  return EXIT_USAGE;
}

/* Verifies every function; prints each problem as an error line. */
static int verify_module(const tir_module_t *m, const char *path) {
  int code = EXIT_OK;
  for (int i = 0; i < m->nfuncs; i++) {
    mlc_strbuf_t errs;
    mlc_sb_init(&errs);
    if (tir_verify(m->funcs[i], &errs) != MLC_OK) {
      code = EXIT_USAGE;
      const char *p = errs.len ? mlc_sb_str(&errs) : mlc_error_last();
      while (*p) {
        size_t n = strcspn(p, "\n");
        fprintf(stderr, PROG ": error: %s: %s: %.*s\n", path, m->funcs[i]->name, (int)n, p);
        p += n + (p[n] == '\n');
      }
    }
    mlc_sb_free(&errs);
  }
  return code;
}

/* Parses and verifies FILE, the first step of fmt, hash and eval. */
int tir_cmd_load_verified(const char *path, tir_module_t **out) {
  int code = load_module(path, out);
  if (code == EXIT_OK) code = verify_module(*out, strcmp(path, "-") == 0 ? "<stdin>" : path);
  if (code != EXIT_OK) {
    tir_module_free(*out);
    *out = NULL;
  }
  return code;
}

/* One positional FILE and only --help (and --json where allowed). */
static int file_args(tir_cmd_args_t *a, const char *help, bool allow_json, const char **file, bool *json, bool *helped) {
  *file = NULL;
  for (a->i = 1; a->i < a->argc; a->i++) {
    if (tir_cmd_opt_flag(a, "--help") || tir_cmd_opt_flag(a, "-h")) {
      fputs(help, stdout);
      *helped = true;
      return EXIT_OK;
    }
    if (allow_json && tir_cmd_opt_flag(a, "--json")) {
      *json = true;
    } else if (tir_cmd_is_positional(a)) {
      if (*file) return tir_cmd_fail(EXIT_USAGE, "%s: more than one FILE given", a->cmd);
      *file = a->argv[a->i];
    } else if (strcmp(a->argv[a->i], "--") != 0) {
      return tir_cmd_bad_option(a);
    }
  }
  if (!*file) return tir_cmd_fail(EXIT_USAGE, "%s: missing FILE (see `" PROG " %s --help`)", a->cmd, a->cmd);
  return EXIT_OK;
}

/* ------------------------------------------------------------------------ */
/* fmt                                                                       */
/* ------------------------------------------------------------------------ */

static const char fmt_help[] =
    "usage: " PROG " fmt FILE\n"
    "\n"
    "Parses TVMScript (a @T.prim_func or an @I.ir_module; FILE '-' reads standard\n"
    "input), verifies every function and prints the canonical TVMScript.\n"
    "Printing the output again gives the same bytes.\n"
    "\n"
    "Exit status: 0 ok, 2 the input does not parse or verify.\n";

static int cmd_fmt(tir_cmd_args_t *a) {
  const char *file;
  bool json = false, helped = false;
  int code = file_args(a, fmt_help, false, &file, &json, &helped);
  if (code != EXIT_OK || helped) return code;
  tir_module_t *m;
  if ((code = tir_cmd_load_verified(file, &m)) != EXIT_OK) return code;
  char *text = tir_print_module(m);
  tir_module_free(m);
  if (!text) return tir_cmd_fail(EXIT_WORK, "out of memory printing %s", file);
  fputs(text, stdout);
  mlc_free(text);
  return tir_cmd_finish_output(EXIT_OK);
}

/* ------------------------------------------------------------------------ */
/* hash                                                                      */
/* ------------------------------------------------------------------------ */

static const char hash_help[] =
    "usage: " PROG " hash FILE [--json]\n"
    "\n"
    "Prints the workload key of every function in FILE ('-' for standard input),\n"
    "one line each: 16 hex digits, two spaces, the function name. The key is a\n"
    "stable structural hash: it ignores variable, buffer and function names and\n"
    "keeps block names, shapes, dtypes, scopes and the body.\n"
    "\n"
    "  --json   print {\"NAME\": \"KEY\", ...} instead\n"
    "\n"
    "Exit status: 0 ok, 2 the input does not parse or verify.\n";

static int cmd_hash(tir_cmd_args_t *a) {
  const char *file;
  bool json = false, helped = false;
  int code = file_args(a, hash_help, true, &file, &json, &helped);
  if (code != EXIT_OK || helped) return code;
  tir_module_t *m;
  if ((code = tir_cmd_load_verified(file, &m)) != EXIT_OK) return code;
  json_t *obj = json ? json_object() : NULL;
  for (int i = 0; i < m->nfuncs; i++) {
    char key[17];
    tir_func_key_hex(m->funcs[i], key);
    if (obj)
      json_object_set_new(obj, m->funcs[i]->name, json_string(key));
    else
      printf("%s  %s\n", key, m->funcs[i]->name);
  }
  tir_module_free(m);
  if (obj) {
    char *text = mlc_json_dumps(obj);
    json_decref(obj);
    if (!text) return tir_cmd_fail(EXIT_WORK, "out of memory");
    printf("%s\n", text);
    free(text);
  }
  return tir_cmd_finish_output(EXIT_OK);
}

/* ------------------------------------------------------------------------ */
/* workload                                                                  */
/* ------------------------------------------------------------------------ */

static const char workload_help[] =
    "usage: " PROG " workload NAME [--shape V,V,... | --shape DIM=V,...] [--dtype T]\n"
    "                          [--acc-dtype T]\n"
    "       " PROG " workload --list [--json]\n"
    "\n"
    "Prints a built-in workload (the Ansor paper's set: GMM, BMM, GMV, C1D, C2D,\n"
    "C3D, DEP, DIL, GRP, T2D, NRM, SFM, LN, D+B+R) as TVMScript.\n"
    "\n"
    "  --shape V,V,...     every dimension, in the order --list shows\n"
    "  --shape DIM=V,...   some dimensions by name; the others keep their defaults\n"
    "  --dtype T           input dtype (default float32; float16, bfloat16, float64,\n"
    "                      int8, uint8, int16, int32, int64, ...)\n"
    "  --acc-dtype T       accumulator and output dtype (default: float32 for 16-bit\n"
    "                      floats, int32 for narrow integers, else the input dtype)\n"
    "  --list              list the workloads with their dimensions and defaults\n"
    "  --json              with --list: print JSON\n"
    "\n"
    "Exit status: 0 ok, 2 unknown workload or bad options.\n";

static int list_workloads(bool json) {
  int n;
  const tir_workload_desc_t *d = tir_workloads(&n);
  json_t *arr = json ? json_array() : NULL;
  if (!json) printf("%-6s %-40s %-36s %s\n", "NAME", "DIMS", "DEFAULTS", "SUMMARY");
  for (int i = 0; i < n; i++) {
    char defs[160] = "";
    size_t len = 0;
    json_t *jdefs = json ? json_array() : NULL;
    for (int k = 0; k < d[i].ndims; k++) {
      len += (size_t)snprintf(defs + len, sizeof(defs) - len, k ? ",%lld" : "%lld", (long long)d[i].defaults[k]);
      if (jdefs) json_array_append_new(jdefs, json_integer(d[i].defaults[k]));
    }
    if (!json) {
      printf("%-6s %-40s %-36s %s\n", d[i].name, d[i].dims, defs, d[i].summary);
      continue;
    }
    json_array_append_new(arr, json_pack("{s:s, s:s, s:o, s:s, s:s}", "name", d[i].name, "dims", d[i].dims,
                                         "defaults", jdefs, "dtype", d[i].default_dtype, "summary", d[i].summary));
  }
  if (arr) {
    char *text = mlc_json_dumps(arr);
    json_decref(arr);
    if (!text) return tir_cmd_fail(EXIT_WORK, "out of memory");
    printf("%s\n", text);
    free(text);
  }
  return tir_cmd_finish_output(EXIT_OK);
}

/* The index of `name` in a "M,N,K" list, or -1. */
static int dim_index(const char *dims, const char *name, size_t len) {
  int i = 0;
  for (const char *p = dims; *p; i++) {
    size_t n = strcspn(p, ",");
    if (n == len && strncmp(p, name, len) == 0) return i;
    p += n + (p[n] == ',');
  }
  return -1;
}

/* --shape: all values in order, or DIM=V pairs over the defaults. */
static int parse_shape(const tir_workload_desc_t *d, const char *spec, int64_t *shape, int *nshape) {
  bool named = strchr(spec, '=') != NULL;
  memcpy(shape, d->defaults, sizeof(d->defaults));
  int count = 0;
  char *copy = mlc_strdup(spec);
  if (!copy) return tir_cmd_fail(EXIT_WORK, "out of memory");
  int code = EXIT_OK;
  for (char *save = NULL, *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    char *eq = strchr(tok, '=');
    int64_t v;
    if (named != (eq != NULL)) {
      code = tir_cmd_fail(EXIT_USAGE, "workload: --shape mixes NAME=VALUE and plain values: '%s'", spec);
      break;
    }
    int at = named ? dim_index(d->dims, tok, (size_t)(eq - tok)) : count;
    if (named && at < 0) {
      code = tir_cmd_fail(EXIT_USAGE, "workload: %s has no dimension '%.*s' (dimensions: %s)", d->name, (int)(eq - tok), tok, d->dims);
      break;
    }
    if (!tir_cmd_parse_i64(named ? eq + 1 : tok, &v)) {
      code = tir_cmd_fail(EXIT_USAGE, "workload: bad value '%s' in --shape", named ? eq + 1 : tok);
      break;
    }
    if (at < d->ndims) shape[at] = v;
    count++;
  }
  mlc_free(copy);
  if (code == EXIT_OK && !named && count != d->ndims)
    code = tir_cmd_fail(EXIT_USAGE, "workload: %s takes %d shape values (%s), got %d", d->name, d->ndims, d->dims, count);
  *nshape = d->ndims;
  return code;
}

static int parse_dtype_opt(const char *s, tir_dtype_t *out) {
  if (tir_dtype_parse(out, s, strlen(s)) != MLC_OK) return tir_cmd_fail(EXIT_USAGE, "workload: unknown dtype '%s'", s);
  return EXIT_OK;
}

static int cmd_workload(tir_cmd_args_t *a) {
  const char *name = NULL, *shape_spec = NULL, *dt = NULL, *acc_dt = NULL, *v;
  bool list = false, json = false, err = false;
  for (a->i = 1; a->i < a->argc && !err; a->i++) {
    if (tir_cmd_opt_flag(a, "--help") || tir_cmd_opt_flag(a, "-h")) {
      fputs(workload_help, stdout);
      return tir_cmd_finish_output(EXIT_OK);
    } else if (tir_cmd_opt_flag(a, "--list")) {
      list = true;
    } else if (tir_cmd_opt_flag(a, "--json")) {
      json = true;
    } else if (tir_cmd_opt_value(a, "--shape", &v, &err)) {
      shape_spec = v;
    } else if (tir_cmd_opt_value(a, "--dtype", &v, &err)) {
      dt = v;
    } else if (tir_cmd_opt_value(a, "--acc-dtype", &v, &err)) {
      acc_dt = v;
    } else if (tir_cmd_is_positional(a)) {
      if (name) return tir_cmd_fail(EXIT_USAGE, "workload: more than one NAME given");
      name = a->argv[a->i];
    } else if (strcmp(a->argv[a->i], "--") != 0) {
      return tir_cmd_bad_option(a);
    }
  }
  if (err) return EXIT_USAGE;
  if (list) return list_workloads(json);
  if (!name) return tir_cmd_fail(EXIT_USAGE, "workload: missing NAME (see `" PROG " workload --list`)");
  const tir_workload_desc_t *d = tir_workload_find(name);
  if (!d) return tir_cmd_fail(EXIT_USAGE, "workload: unknown workload '%s' (see `" PROG " workload --list`)", name);
  int64_t shape[12];
  int nshape = 0, code = EXIT_OK;
  tir_dtype_t in = {0, 0, 0}, acc = {0, 0, 0};
  if (shape_spec) code = parse_shape(d, shape_spec, shape, &nshape);
  if (code == EXIT_OK && dt) code = parse_dtype_opt(dt, &in);
  if (code == EXIT_OK && acc_dt) code = parse_dtype_opt(acc_dt, &acc);
  if (code != EXIT_OK) return code;
  tir_func_t *f;
  int st = tir_workload_build(&f, d->name, shape, nshape, in, acc);
  if (st != MLC_OK) return tir_cmd_fail(tir_cmd_exit_for(st), "workload: %s", mlc_error_last());
  char *text = tir_print_func(f);
  tir_func_free(f);
  if (!text) return tir_cmd_fail(EXIT_WORK, "out of memory printing %s", d->name);
  fputs(text, stdout);
  mlc_free(text);
  return tir_cmd_finish_output(EXIT_OK);
}

/* ------------------------------------------------------------------------ */
/* Dispatch                                                                  */
/* ------------------------------------------------------------------------ */

/*      name        run           summary */
#define MLC_TIR_COMMANDS(X)                                                      \
  X("fmt",      cmd_fmt,      "parse, verify and print canonical TVMScript")    \
  X("hash",     cmd_hash,     "print the workload key of every function")       \
  X("workload", cmd_workload, "print a built-in workload (--list for the set)") \
  X("eval",     tir_cmd_eval,     "run a function in the reference interpreter")

static const struct {
  const char *name;
  int (*run)(tir_cmd_args_t *a);
  const char *summary;
} commands[] = {
#define ROW_(name, run, summary) {name, run, summary},
    MLC_TIR_COMMANDS(ROW_)
#undef ROW_
};
#define NCOMMANDS ((int)(sizeof(commands) / sizeof(commands[0])))

static void usage(FILE *out) {
  fprintf(out, "usage: " PROG " [--help] [--version] COMMAND [ARGS]\n\nCommands:\n");
  for (int i = 0; i < NCOMMANDS; i++) fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].summary);
  fprintf(out, "\nRun `" PROG " COMMAND --help` for a command's options. Exit status: 0 ok,\n"
               "1 the work failed, 2 bad usage or bad input.\n");
}

int mlc_tir_main(int argc, char **argv) {
  mlc_log_set_program(PROG);
  if (argc < 2) {
    usage(stderr);
    return EXIT_USAGE;
  }
  const char *cmd = argv[1];
  if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
    if (strcmp(cmd, "help") == 0 && argc > 2) { /* `help fmt` is `fmt --help` */
      char *sub[] = {argv[2], "--help"};
      for (int i = 0; i < NCOMMANDS; i++)
        if (strcmp(commands[i].name, argv[2]) == 0)
          return tir_cmd_finish_output(commands[i].run(&(tir_cmd_args_t){.argc = 2, .argv = sub, .cmd = argv[2]}));
      return tir_cmd_fail(EXIT_USAGE, "unknown command '%s'", argv[2]);
    }
    usage(stdout);
    return tir_cmd_finish_output(EXIT_OK);
  }
  if (strcmp(cmd, "--version") == 0) {
    printf(PROG " %s\n", MLC_VERSION);
    return tir_cmd_finish_output(EXIT_OK);
  }
  for (int i = 0; i < NCOMMANDS; i++) {
    if (strcmp(commands[i].name, cmd) == 0) {
      tir_cmd_args_t a = {.argc = argc - 1, .argv = argv + 1, .cmd = cmd};
      return commands[i].run(&a);
    }
  }
  if (cmd[0] == '-') return tir_cmd_fail(EXIT_USAGE, "unknown option '%s' (see `" PROG " --help`)", cmd);
  return tir_cmd_fail(EXIT_USAGE, "unknown command '%s' (see `" PROG " --help`)", cmd);
}
