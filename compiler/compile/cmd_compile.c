/*
 * cmd_compile.c - the mlc-compile program (DESIGN.md, Programs; user guide
 * in docs/mlc-compile.md):
 *
 *   mlc-compile FILE -o OUT [--target T] [--db URI] [--header H]
 *               [--func NAME]... [--require-tuned] [--report] [--json]
 *
 * Reads and verifies FILE, opens the database (a file database that does
 * not exist is not created: every function then gets the default
 * schedule), compiles the module with mlc_compile_module, warns about every
 * function without a tuned schedule (an error with --require-tuned), and
 * writes OUT (its extension picks the kind) and a C header beside it.
 * The report and --json (cmd_compile_out.c) go to stdout.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compiler/compile/cmd_compile_internal.h"

#define PROG MLC_COMPILE_PROG

enum { EXIT_OK = MLC_COMPILE_EXIT_OK, EXIT_WORK = MLC_COMPILE_EXIT_WORK, EXIT_USAGE = MLC_COMPILE_EXIT_USAGE };

#define fail(code, ...) mlc_cli_fail(PROG, code, __VA_ARGS__)

#define DEFAULT_DB "file:./mlc-db"

static const char help[] =
    "usage: " PROG " FILE -o OUT [--target T] [--db URI] [--header H] [--func NAME]...\n"
    "                   [--require-tuned] [--report] [--json]\n"
    "\n"
    "Compiles every function of FILE (a @T.prim_func or an @I.ir_module in TVMScript;\n"
    "- reads standard input) with the best schedule the database holds for it on\n"
    "target T: the record's trace is replayed on the workload it was measured on,\n"
    "after checking that workload is the function. A function without a usable\n"
    "record gets the default schedule (tiled, vectorized, parallel), and a warning\n"
    "lists each one with its workload key and why.\n"
    "\n"
    "  -o, --output OUT    what to write; its extension picks the kind:\n"
    "                      .so shared library, .o object file, .ll LLVM IR, .s assembly\n"
    "  --header H          the C header (one prototype per function; default: OUT\n"
    "                      with its extension replaced by .h)\n"
    "  --target T          llvm (this CPU, the default), or e.g.\n"
    "                      \"llvm -mcpu=skylake-avx512 -num-cores=4\"\n"
    "  --db URI            file:DIR or postgresql://... (default $MLC_DB, else\n"
    "                      file:./mlc-db); a file database that does not exist is\n"
    "                      not created: every function gets the default schedule\n"
    "  --func NAME         compile only this function (repeatable)\n"
    "  --require-tuned     fail (exit 1, nothing written) when a function has no\n"
    "                      tuned schedule: for release builds\n"
    "  --report            print, per function, the record used (id, median time,\n"
    "                      trace length, when and where it was measured) or why it\n"
    "                      got the default schedule\n"
    "  --json              print that as one JSON document, with the output paths\n"
    "\n"
    "Exit status: 0 compiled, 1 the work failed (database, --require-tuned,\n"
    "compilation, writing), 2 bad usage or input.\n";

/* ------------------------------------------------------------------------ */
/* Arguments                                                                 */
/* ------------------------------------------------------------------------ */

typedef struct {
  const char *file, *out, *target, *db, *header;
  const char **funcs; /* --func values (argv's), nfuncs of them */
  int nfuncs;
  bool require_tuned, report, json, helped;
} cli_t;

/* The output kinds by extension. */
static const struct {
  const char *ext;
  mlc_emit_kind_t kind;
} output_kinds[] = {{".so", MLC_EMIT_SO},   {".o", MLC_EMIT_OBJ},       {".ll", MLC_EMIT_LL},
                    {".s", MLC_EMIT_ASM},  {".ptx", MLC_EMIT_DEVICE}, {".hsaco", MLC_EMIT_DEVICE}};
#define NKINDS ((int)(sizeof output_kinds / sizeof *output_kinds))

/* OUT's extension (".so"), or "" when it has none. */
static const char *extension(const char *path) {
  const char *base = strrchr(path, '/');
  base = base ? base + 1 : path;
  const char *dot = strrchr(base, '.');
  return dot && dot != base ? dot : "";
}

static int output_kind(const char *out, mlc_emit_kind_t *kind) {
  const char *ext = extension(out);
  for (int i = 0; i < NKINDS; i++)
    if (strcmp(ext, output_kinds[i].ext) == 0) return *kind = output_kinds[i].kind, EXIT_OK;
  return fail(EXIT_USAGE, "-o %s: unknown output kind '%s' (want .so shared library, .o object file, .ll LLVM IR, "
              ".s assembly, .ptx or .hsaco GPU code)", out, ext);
}

static bool string_opt(cli_t *c, int argc, char **argv, int *i, bool *missing) {
  static const char *const names[] = {"-o", "--output", "--target", "--db", "--header", "--func"};
  const char **slots[] = {&c->out, &c->out, &c->target, &c->db, &c->header, NULL};
  for (size_t k = 0; k < sizeof names / sizeof *names; k++) {
    const char *v = NULL;
    if (!mlc_cli_opt_value(argc, argv, i, names[k], &v)) continue;
    if (!v || (slots[k] && *slots[k])) {
      fail(EXIT_USAGE, v ? "option %s given twice" : "option %s needs a value", names[k]);
      *missing = true;
    } else if (slots[k]) {
      *slots[k] = v;
    } else {
      c->funcs[c->nfuncs++] = v;
    }
    return true;
  }
  return false;
}

static bool flag_opt(cli_t *c, const char *arg) {
  if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) c->helped = true;
  else if (strcmp(arg, "--require-tuned") == 0) c->require_tuned = true;
  else if (strcmp(arg, "--report") == 0) c->report = true;
  else if (strcmp(arg, "--json") == 0) c->json = true;
  else return false;
  return true;
}

static int parse_args(cli_t *c, int argc, char **argv) {
  bool only_positional = false, missing = false;
  for (int i = 1; i < argc && !missing; i++) {
    const char *arg = argv[i];
    if (!only_positional && arg[0] == '-' && arg[1] != '\0') {
      if (strcmp(arg, "--") == 0) only_positional = true;
      else if (!flag_opt(c, arg) && !string_opt(c, argc, argv, &i, &missing))
        return fail(EXIT_USAGE, "unknown option '%s' (see `" PROG " --help`)", arg);
      continue;
    }
    if (c->file) return fail(EXIT_USAGE, "unexpected argument '%s': give one FILE (see `" PROG " --help`)", arg);
    c->file = arg;
  }
  if (missing) return EXIT_USAGE;
  if (c->helped) return EXIT_OK;
  if (!c->file) return fail(EXIT_USAGE, "no FILE to compile (see `" PROG " --help`)");
  if (!c->out || !*c->out) return fail(EXIT_USAGE, "no output: give -o OUT (.so, .o, .ll or .s)");
  return EXIT_OK;
}

/* The header's path: --header, else OUT with its extension replaced. */
static char *header_path(const cli_t *c) {
  if (c->header) return mlc_strdup(c->header);
  size_t stem = strlen(c->out) - strlen(extension(c->out));
  char *h = mlc_malloc(stem + 3);
  if (h) memcpy(h, c->out, stem), memcpy(h + stem, ".h", 3);
  return h;
}

static int parse_target(const char *text, mlc_target_t *out) {
  if (mlc_target_parse(out, text) != MLC_OK) return fail(EXIT_USAGE, "--target '%s': %s", text, mlc_error_last());
  return EXIT_OK;
}

/* .ptx needs a cuda target, .hsaco a rocm one (for GPU targets .so, .o
 * and the header are the host side, .ll and .s the device side). */
static int check_device_output(const char *out, const mlc_target_t *t) {
  const char *ext = extension(out);
  mlc_target_kind_t want = strcmp(ext, ".ptx") == 0 ? MLC_TARGET_CUDA : MLC_TARGET_ROCM;
  if (strcmp(ext, ".ptx") != 0 && strcmp(ext, ".hsaco") != 0) return EXIT_OK;
  if (t->kind == want) return EXIT_OK;
  return fail(EXIT_USAGE, "-o %s: %s code needs --target %s", out, ext,
              want == MLC_TARGET_CUDA ? "'cuda -arch=sm_XX'" : "'rocm -mcpu=gfxXXX'");
}

/* ------------------------------------------------------------------------ */
/* Module and database                                                       */
/* ------------------------------------------------------------------------ */

/* The functions --func names (all without it), as a module that borrows
 * m's functions: *sub->funcs is mlc_free'd by the caller. */
static int pick_funcs(const cli_t *c, const tir_module_t *m, tir_module_t *sub) {
  *sub = *m;
  sub->funcs = mlc_calloc((size_t)(m->nfuncs > 0 ? m->nfuncs : 1), sizeof *sub->funcs);
  if (!sub->funcs) return fail(EXIT_WORK, "out of memory");
  sub->nfuncs = 0;
  for (int i = 0; i < m->nfuncs; i++) {
    bool wanted = c->nfuncs == 0;
    for (int k = 0; k < c->nfuncs && !wanted; k++) wanted = strcmp(c->funcs[k], m->funcs[i]->name) == 0;
    if (wanted) sub->funcs[sub->nfuncs++] = m->funcs[i];
  }
  for (int k = 0; k < c->nfuncs; k++) {
    if (tir_module_find(m, c->funcs[k])) continue;
    mlc_strbuf_t sb;
    mlc_sb_init(&sb);
    for (int i = 0; i < m->nfuncs; i++) mlc_sb_printf(&sb, "%s%s", i ? ", " : "", m->funcs[i]->name);
    fail(EXIT_USAGE, "%s: no function '%s' (functions: %s)", tir_cli_shown_path(c->file), c->funcs[k],
         mlc_sb_str(&sb));
    mlc_sb_free(&sb);
    return EXIT_USAGE;
  }
  if (sub->nfuncs == 0) return fail(EXIT_USAGE, "%s: no function to compile", tir_cli_shown_path(c->file));
  return EXIT_OK;
}

/* Opens the database, or leaves *db NULL (with a warning) for a file
 * database that does not exist: reading must not create one. */
static int open_db(const cli_t *c, db_t **db) {
  const char *env = getenv("MLC_DB");
  const char *uri = c->db ? c->db : env && *env ? env : DEFAULT_DB;
  mlc_error_clear();
  int st = db_open_existing(db, uri);
  if (st == MLC_ENOTFOUND) { /* "no database at DIR" */
    if (c->require_tuned)
      return fail(EXIT_WORK, "%s: --require-tuned needs tuned schedules (give --db URI)", mlc_error_last());
    MLC_WARN("%s: every function gets the default schedule", mlc_error_last());
    return EXIT_OK;
  }
  if (st == MLC_OK) return EXIT_OK;
  return fail(st == MLC_EINVAL ? EXIT_USAGE : EXIT_WORK, "cannot open the database: %s", mlc_error_last());
}

/* ------------------------------------------------------------------------ */
/* Compiling and writing                                                     */
/* ------------------------------------------------------------------------ */

/* Writes OUT and the header; removes both after a failure. */
static int write_outputs(const mlc_module_t *module, mlc_emit_kind_t kind, const char *out, const char *header) {
  mlc_error_clear();
  int st = mlc_module_emit(module, kind, out);
  if (st == MLC_OK) st = mlc_module_emit(module, MLC_EMIT_HEADER, header);
  if (st == MLC_OK) return EXIT_OK;
  char why[1024];
  snprintf(why, sizeof why, "%s", mlc_error_or(mlc_status_str(st)));
  unlink(out);
  unlink(header);
  return fail(EXIT_WORK, "writing the output: %s", why);
}

/* The untuned functions: a warning, or with --require-tuned the error. */
static void tell_untuned(const mlc_compile_result_t *res, const char *target, bool error) {
  int n = compile_count_default(res);
  if (n == 0 || (!error && mlc_log_level() > MLC_LOG_WARN)) return;
  char head[1024];
  snprintf(head, sizeof head, PROG ": %s: %d of %d function%s %s no tuned schedule for %s%s\n",
           error ? "error" : "warning", n, res->nfuncs, res->nfuncs == 1 ? "" : "s", n == 1 ? "has" : "have",
           target, error ? " (--require-tuned):" : n == 1 ? " and uses the default schedule:"
                                                          : " and use the default schedule:");
  fflush(stdout);
  compile_print_untuned(stderr, head, res);
}

typedef struct {
  const cli_t *c;
  mlc_emit_kind_t kind;
  const char *header;
  char target_str[512];
} run_t;

/* Prints what the user asked for (--report, --json) about res. */
static int print_summary(const run_t *r, const mlc_compile_result_t *res, db_t *db, bool written, const char *error) {
  compile_summary_t s = {res, r->target_str, db ? db_uri(db) : NULL, written ? r->c->out : NULL,
                         written ? r->header : NULL, error};
  if (r->c->json) return compile_print_json(&s) == MLC_OK ? EXIT_OK : fail(EXIT_WORK, "out of memory");
  if (r->c->report) compile_print_report(&s, isatty(STDOUT_FILENO));
  return EXIT_OK;
}

static int compile(const run_t *r, const tir_module_t *m, const mlc_target_t *target, db_t *db) {
  mlc_compile_result_t res;
  mlc_compile_options_t opts = {.db = db, .require_tuned = r->c->require_tuned, .quiet = true};
  mlc_error_clear();
  int st = mlc_compile_module(&res, m, target, &opts);
  int code = EXIT_OK;
  if (st == MLC_ENOTFOUND && r->c->require_tuned) {
    tell_untuned(&res, r->target_str, true);
    print_summary(r, &res, db, false, mlc_error_last());
    code = EXIT_WORK;
  } else if (st != MLC_OK) {
    char why[2048];
    snprintf(why, sizeof why, "%s", mlc_error_or(mlc_status_str(st)));
    if (r->c->json) print_summary(r, &res, db, false, why);
    code = fail(EXIT_WORK, "%s", why);
  } else {
    tell_untuned(&res, r->target_str, false);
    code = write_outputs(res.module, r->kind, r->c->out, r->header);
    int printed = print_summary(r, &res, db, code == EXIT_OK, NULL);
    if (code == EXIT_OK) code = printed;
  }
  mlc_compile_result_free(&res);
  return code;
}

static int run_cli(const cli_t *c) {
  run_t r = {.c = c};
  mlc_target_t target;
  int code = output_kind(c->out, &r.kind);
  if (code == EXIT_OK) code = parse_target(c->target ? c->target : "llvm", &target);
  if (code == EXIT_OK) code = check_device_output(c->out, &target);
  if (code != EXIT_OK) return code;
  mlc_target_str(&target, r.target_str, sizeof r.target_str);
  char *header = header_path(c);
  if (!header) return fail(EXIT_WORK, "out of memory");
  r.header = header;
  if (strcmp(header, c->out) == 0) {
    mlc_free(header);
    return fail(EXIT_USAGE, "--header %s: the header and the output must be different files", c->header);
  }
  tir_module_t *m = NULL, sub = {0};
  db_t *db = NULL;
  code = tir_cli_load_module(PROG, c->file, &m);
  if (code == EXIT_OK) code = pick_funcs(c, m, &sub);
  if (code == EXIT_OK) code = open_db(c, &db);
  if (code == EXIT_OK) code = compile(&r, &sub, &target, db);
  db_close(db);
  mlc_free(sub.funcs);
  tir_module_free(m);
  mlc_free(header);
  return code;
}

int mlc_compile_main(int argc, char **argv) {
  mlc_log_set_program(PROG);
  cli_t c;
  memset(&c, 0, sizeof c);
  c.funcs = mlc_calloc((size_t)(argc > 0 ? argc : 1), sizeof *c.funcs);
  if (!c.funcs) return fail(EXIT_WORK, "out of memory");
  int code = parse_args(&c, argc, argv);
  if (code == EXIT_OK && c.helped) fputs(help, stdout);
  else if (code == EXIT_OK) code = run_cli(&c);
  mlc_free(c.funcs);
  if (fflush(stdout) != 0 || ferror(stdout)) return fail(EXIT_WORK, "writing standard output: %s", strerror(errno));
  return code;
}
