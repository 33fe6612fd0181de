/*
 * test_compile.c - mlc_compile_module and the mlc-compile program
 * (compiler.h, "Compiling a module with the database"), on a real file
 * database in a temporary directory, with a module of two functions (GMM
 * 64, an element-wise relu):
 * - an empty database (and none): every function gets the default
 *   schedule, and says why;
 * - a record is applied: the program compiled is exactly its trace replayed
 *   on the stored workload (renamed after the module's function), the
 *   report has the record's fields, and the built code gives the
 *   interpreter's result;
 * - records that must not be used are not: a stored workload that differs
 *   structurally (a key collision), another target's record, failed
 *   trials, a trace that does not replay; each says why;
 * - require_tuned fails with MLC_ENOTFOUND naming every untuned function
 *   with its key;
 * - the program: --help, usage errors (exit 2), a nonexistent database
 *   (warned and not created; an error with --require-tuned), --report and
 *   --json on a tuned module.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <ftw.h>
#include <sys/stat.h>
#include <unistd.h>

#include "compiler/compile/cmd_compile.h"
#include "e2e_helpers.h"

static const char MODULE_SRC[] =
    "@I.ir_module\n"
    "class Module:\n"
    "    @T.prim_func\n"
    "    def gmm(A: T.Buffer((64, 64), \"float32\"), B: T.Buffer((64, 64), \"float32\"), C: T.Buffer((64, 64), \"float32\")):\n"
    "        T.func_attr({\"global_symbol\": \"gmm\", \"tir.noalias\": T.bool(True)})\n"
    "        for i, j, k in T.grid(64, 64, 64):\n"
    "            with T.block(\"C\"):\n"
    "                v_i, v_j, v_k = T.axis.remap(\"SSR\", [i, j, k])\n"
    "                with T.init():\n"
    "                    C[v_i, v_j] = T.float32(0)\n"
    "                C[v_i, v_j] = C[v_i, v_j] + A[v_i, v_k] * B[v_k, v_j]\n"
    "\n"
    "    @T.prim_func\n"
    "    def relu(A: T.Buffer((8, 64), \"float32\"), B: T.Buffer((8, 64), \"float32\")):\n"
    "        for i, j in T.grid(8, 64):\n"
    "            with T.block(\"B\"):\n"
    "                vi, vj = T.axis.remap(\"SS\", [i, j])\n"
    "                B[vi, vj] = T.max(A[vi, vj], T.float32(0))\n";

#define OTHER_TARGET "llvm -mcpu=skylake-avx512 -num-cores=4"
#define MEASURED_AT 1714566896123456LL /* 2024-05-01T12:34:56.123456Z */

typedef struct {
  char dir[64], uri[80];
  db_t *db;
  tir_module_t *m;
  tir_func_t *gmm, *relu; /* borrowed from m */
  mlc_target_t target;
  char target_str[512];
} fixture_t;

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw) {
  (void)sb, (void)flag, (void)ftw;
  return remove(path);
}

static int setup(void **state) {
  fixture_t *fx = calloc(1, sizeof *fx);
  snprintf(fx->dir, sizeof fx->dir, "/tmp/mlc-test-compile-XXXXXX");
  if (!fx || !mkdtemp(fx->dir)) return -1;
  snprintf(fx->uri, sizeof fx->uri, "file:%s/db", fx->dir);
  tir_parse_error_t perr;
  if (db_open(&fx->db, fx->uri) != MLC_OK ||
      tir_parse(&fx->m, MODULE_SRC, strlen(MODULE_SRC), "module.py", &perr) != MLC_OK)
    return -1;
  fx->gmm = tir_module_find(fx->m, "gmm");
  fx->relu = tir_module_find(fx->m, "relu");
  if (!fx->gmm || !fx->relu || mlc_target_parse(&fx->target, E2E_TARGET) != MLC_OK) return -1;
  mlc_target_str(&fx->target, fx->target_str, sizeof fx->target_str);
  *state = fx;
  return 0;
}

static int teardown(void **state) {
  fixture_t *fx = *state;
  db_close(fx->db);
  tir_module_free(fx->m);
  nftw(fx->dir, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
  free(fx);
  return 0;
}

/* ------------------------------------------------------------------------ */
/* Records                                                                   */
/* ------------------------------------------------------------------------ */

/* A record and what it points into. */
typedef struct {
  db_record_t r;
  double runs[3];
  char *trace; /* canonical trace JSON (free()) */
  int trace_len;
} rec_t;

/* A small hand schedule of GMM: j split by 16 and vectorized, i parallel. */
static sch_t *hand_schedule(const tir_func_t *f, const char *block) {
  sch_t *sch = NULL;
  assert_int_equal(sch_create(&sch, f, 1, SCH_ERRORS_RICH), MLC_OK);
  sch_rv_t b;
  const sch_rv_t *loops = NULL, *split = NULL;
  int n = 0;
  assert_int_equal(sch_get_block(sch, &b, block), MLC_OK);
  assert_int_equal(sch_get_loops(sch, &loops, &n, b), MLC_OK);
  sch_rv_t i = loops[0], j = loops[1];
  sch_arg_t factors[2] = {sch_arg_none(), sch_arg_int(16)};
  assert_int_equal(sch_split(sch, &split, j, factors, 2, true), MLC_OK);
  assert_int_equal(sch_vectorize(sch, split[1]), MLC_OK);
  assert_int_equal(sch_parallel(sch, i), MLC_OK);
  return sch;
}

/* A measured record of `key` on `target` whose trace is sch's. */
static void make_record(rec_t *rec, uint64_t key, const char *target, const sch_t *sch, mlc_error_kind_t error) {
  memset(rec, 0, sizeof *rec);
  json_t *json = NULL;
  assert_int_equal(sch_trace_to_json(&json, sch_get_trace(sch)), MLC_OK);
  rec->trace = mlc_json_dumps(json);
  json_decref(json);
  assert_non_null(rec->trace);
  rec->trace_len = sch_get_trace(sch)->n;
  rec->runs[0] = 3e-5, rec->runs[1] = 1e-5, rec->runs[2] = 2e-5;
  bool ok = error == MLC_ERROR_KIND_NONE;
  rec->r = (db_record_t){.workload_key = key, .target = target, .device_key = "llvm-testcpu",
                         .device_json = "{}", .trace_json = rec->trace, .nrun_secs = ok ? 3 : 0,
                         .run_secs = rec->runs, .error_kind = error, .error_msg = ok ? "" : "it failed",
                         .compiler_version = "0.1.0", .worker_id = "worker-7", .created_at_us = MEASURED_AT};
  db_record_finish(&rec->r);
}

static void rec_free(rec_t *rec) { free(rec->trace); }

/* Commits f's workload under `name` with `text` (NULL: f's own TVMScript). */
static void commit_workload(fixture_t *fx, const tir_func_t *f, const char *name, const char *text) {
  char *own = text ? NULL : tir_print_func(f);
  assert_int_equal(db_commit_workload(fx->db, tir_func_key(f), name, text ? text : own), MLC_OK);
  mlc_free(own);
}

/* Commits a record of gmm on `target` with the hand schedule of `sched_of`'s
 * block; rec is the caller's. */
static void commit_gmm_record(fixture_t *fx, rec_t *rec, const char *target, const tir_func_t *sched_of,
                              const char *block, mlc_error_kind_t error) {
  sch_t *sch = hand_schedule(sched_of, block);
  make_record(rec, tir_func_key(fx->gmm), target, sch, error);
  sch_free(sch);
  assert_int_equal(db_commit_records(fx->db, &rec->r, 1), MLC_OK);
}

static mlc_compile_result_t compile_ok(fixture_t *fx, db_t *db) {
  mlc_compile_result_t res;
  mlc_compile_options_t opts = {.db = db, .quiet = true};
  if (mlc_compile_module(&res, fx->m, &fx->target, &opts) != MLC_OK) fail_msg("compile: %s", mlc_error_last());
  assert_int_equal(res.nfuncs, 2);
  assert_non_null(res.module);
  return res;
}

static void assert_default_because(const mlc_compile_func_t *fn, const char *why) {
  assert_int_equal(fn->how, MLC_COMPILE_DEFAULT);
  assert_non_null(fn->why_default);
  if (!strstr(fn->why_default, why)) fail_msg("%s: why_default is '%s', expected '%s' in it", fn->name, fn->why_default, why);
  assert_non_null(fn->scheduled);
}

/* ------------------------------------------------------------------------ */
/* The library                                                               */
/* ------------------------------------------------------------------------ */

static void test_empty_database_gives_default_schedules(void **state) {
  fixture_t *fx = *state;
  mlc_compile_result_t res = compile_ok(fx, fx->db);
  char key[17];
  assert_string_equal(res.funcs[0].name, "gmm");
  assert_string_equal(res.funcs[0].key, tir_func_key_hex(fx->gmm, key));
  assert_string_equal(res.funcs[1].name, "relu");
  for (int i = 0; i < 2; i++) {
    assert_default_because(&res.funcs[i], "no record for this target");
    assert_string_equal(res.funcs[i].why_default, "no record for this target");
  }
  /* The default schedule is what mlc_default_schedule gives. */
  sch_t *sch = NULL;
  assert_int_equal(sch_create(&sch, fx->gmm, 1, SCH_ERRORS_FAST), MLC_OK);
  assert_int_equal(mlc_default_schedule(sch, &fx->target), MLC_OK);
  assert_true(tir_func_equal(res.funcs[0].scheduled, sch_func(sch), NULL, 0));
  sch_free(sch);
  mlc_compile_result_free(&res);
  assert_null(res.funcs);

  res = compile_ok(fx, NULL); /* no database at all */
  assert_default_because(&res.funcs[0], "no database");
  mlc_compile_result_free(&res);
}

/* Runs gmm of a compiled module on random inputs against the interpreter
 * (the module is consumed). */
static void check_gmm_runs(fixture_t *fx, mlc_module_t *module) {
  mlc_jit_t *jit = NULL;
  assert_int_equal(mlc_jit_load(&jit, module), MLC_OK);
  e2e_case_t c;
  e2e_case_init(&c, "GMM", "float32", tir_func_clone(fx->gmm), 5);
  e2e_case_reference(&c);
  char msg[512] = "";
  e2e_run(&c, jit, "gmm", msg, sizeof msg);
  if (msg[0]) fail_msg("gmm: %s", msg);
  assert_non_null(mlc_jit_lookup(jit, "relu"));
  e2e_case_free(&c);
  mlc_jit_free(jit);
}

static void test_record_is_applied_as_measured(void **state) {
  fixture_t *fx = *state;
  /* The workload is stored under another name: the key ignores names, and
   * the compiled function takes the module's. */
  tir_func_t *renamed = tir_func_clone(fx->gmm);
  renamed->name = "stored_gmm";
  char *stored_text = tir_print_func(renamed);
  commit_workload(fx, fx->gmm, "stored_gmm", stored_text);
  rec_t rec;
  commit_gmm_record(fx, &rec, fx->target_str, fx->gmm, "C", MLC_ERROR_KIND_NONE);

  mlc_compile_result_t res = compile_ok(fx, fx->db);
  const mlc_compile_func_t *fn = &res.funcs[0];
  assert_int_equal(fn->how, MLC_COMPILE_TUNED);
  assert_null(fn->why_default);
  assert_string_equal(fn->record_id, rec.r.id);
  assert_true(fn->median_secs == 2e-5);
  assert_int_equal(fn->trace_len, rec.trace_len);
  assert_int_equal(fn->created_at_us, MEASURED_AT);
  assert_string_equal(fn->device_key, "llvm-testcpu");
  assert_string_equal(fn->worker_id, "worker-7");
  assert_default_because(&res.funcs[1], "no record for this target");

  /* Exactly the trace replayed on the stored workload, named gmm. */
  tir_func_t *stored = NULL;
  tir_parse_error_t perr;
  assert_int_equal(tir_parse_func(&stored, stored_text, strlen(stored_text), "stored", &perr), MLC_OK);
  json_t *json = mlc_json_loads(rec.trace, "trace");
  sch_trace_t *trace = NULL;
  assert_int_equal(sch_trace_from_json(&trace, json), MLC_OK);
  sch_t *want = NULL;
  assert_int_equal(sch_create(&want, stored, 1, SCH_ERRORS_FAST), MLC_OK);
  assert_int_equal(sch_trace_apply(want, trace, true), MLC_OK);
  char why[256] = "";
  if (!tir_func_equal(fn->scheduled, sch_func(want), why, sizeof why)) fail_msg("scheduled differs: %s", why);
  assert_string_equal(fn->scheduled->name, "gmm");
  tir_expr_t *sym = tir_annot_get(fn->scheduled->attrs, fn->scheduled->nattrs, "global_symbol");
  assert_non_null(sym);
  assert_string_equal(sym->u.str_value, "gmm");

  check_gmm_runs(fx, res.module);
  res.module = NULL; /* the JIT took it */
  mlc_compile_result_free(&res);
  sch_free(want);
  sch_trace_free(trace);
  json_decref(json);
  tir_func_free(stored);
  mlc_free(stored_text);
  tir_func_free(renamed);
  rec_free(&rec);
}

/* Two programs with one key: the record's stored workload is relu's text,
 * so gmm must not get relu's schedule. */
static void test_record_of_a_structurally_different_workload_is_not_applied(void **state) {
  fixture_t *fx = *state;
  char *relu_text = tir_print_func(fx->relu);
  commit_workload(fx, fx->gmm, "gmm", relu_text);
  rec_t rec;
  commit_gmm_record(fx, &rec, fx->target_str, fx->gmm, "C", MLC_ERROR_KIND_NONE);
  mlc_compile_result_t res = compile_ok(fx, fx->db);
  assert_default_because(&res.funcs[0], "differs structurally");
  assert_non_null(strstr(res.funcs[0].why_default, rec.r.id));
  mlc_compile_result_free(&res);
  mlc_free(relu_text);
  rec_free(&rec);
}

static void test_records_of_other_targets_and_failures_are_ignored(void **state) {
  fixture_t *fx = *state;
  mlc_target_t other;
  char other_str[512];
  assert_int_equal(mlc_target_parse(&other, OTHER_TARGET), MLC_OK);
  mlc_target_str(&other, other_str, sizeof other_str);
  if (strcmp(other_str, fx->target_str) == 0) skip(); /* the host is that very target */
  commit_workload(fx, fx->gmm, "gmm", NULL);
  rec_t elsewhere, failed;
  commit_gmm_record(fx, &elsewhere, other_str, fx->gmm, "C", MLC_ERROR_KIND_NONE);
  commit_gmm_record(fx, &failed, fx->target_str, fx->gmm, "C", MLC_ERROR_KIND_BUILD);
  mlc_compile_result_t res = compile_ok(fx, fx->db);
  assert_default_because(&res.funcs[0], "no record for this target");
  assert_default_because(&res.funcs[0], "only 1 failed trial");
  assert_default_because(&res.funcs[0], other_str);
  mlc_compile_result_free(&res);
  rec_free(&elsewhere);
  rec_free(&failed);
}

/* relu's schedule (block "B") recorded for gmm: get_block fails. */
static void test_trace_that_does_not_replay_falls_back(void **state) {
  fixture_t *fx = *state;
  commit_workload(fx, fx->gmm, "gmm", NULL);
  rec_t rec;
  commit_gmm_record(fx, &rec, fx->target_str, fx->relu, "B", MLC_ERROR_KIND_NONE);
  mlc_compile_result_t res = compile_ok(fx, fx->db);
  assert_default_because(&res.funcs[0], "its trace does not replay");
  assert_non_null(strstr(res.funcs[0].why_default, rec.r.id));
  mlc_compile_result_free(&res);
  rec_free(&rec);
}

static void test_require_tuned_lists_every_untuned_function(void **state) {
  fixture_t *fx = *state;
  mlc_compile_result_t res;
  mlc_compile_options_t opts = {.db = fx->db, .require_tuned = true, .quiet = true};
  assert_int_equal(mlc_compile_module(&res, fx->m, &fx->target, &opts), MLC_ENOTFOUND);
  assert_null(res.module);
  assert_int_equal(res.nfuncs, 2);
  const char *msg = mlc_error_last();
  for (int i = 0; i < 2; i++) {
    char item[64];
    snprintf(item, sizeof item, "%s (%s): no record for this target", res.funcs[i].name, res.funcs[i].key);
    if (!strstr(msg, item)) fail_msg("'%s' lacks '%s'", msg, item);
  }
  assert_non_null(strstr(msg, "2 of 2 functions"));
  mlc_compile_result_free(&res);
}

/* mlc-tune stores the default schedule's measurement (its baseline) as a
 * record. Alone, it does not make the function tuned (--require-tuned
 * refuses it); with a successful tuning trial beside it, the default is the
 * tuned result when it is the fastest. */
static void test_default_schedule_baseline_alone_is_not_tuned(void **state) {
  fixture_t *fx = *state;
  commit_workload(fx, fx->gmm, "gmm", NULL);
  sch_t *sch = NULL;
  assert_int_equal(sch_create(&sch, fx->gmm, 1, SCH_ERRORS_RICH), MLC_OK);
  assert_int_equal(mlc_default_schedule(sch, &fx->target), MLC_OK);
  rec_t base;
  make_record(&base, tir_func_key(fx->gmm), fx->target_str, sch, MLC_ERROR_KIND_NONE);
  sch_free(sch);
  assert_int_equal(db_commit_records(fx->db, &base.r, 1), MLC_OK);

  mlc_compile_result_t res = compile_ok(fx, fx->db);
  assert_default_because(&res.funcs[0], "only the default schedule was measured");
  assert_non_null(strstr(res.funcs[0].why_default, base.r.id));
  mlc_compile_result_free(&res);
  mlc_compile_options_t strict = {.db = fx->db, .require_tuned = true, .quiet = true};
  assert_int_equal(mlc_compile_module(&res, fx->m, &fx->target, &strict), MLC_ENOTFOUND);
  assert_non_null(strstr(mlc_error_last(), "only the default schedule was measured"));
  mlc_compile_result_free(&res);

  /* A slower tuning trial: the default schedule is now the tuned winner. */
  rec_t trial;
  sch = hand_schedule(fx->gmm, "C");
  make_record(&trial, tir_func_key(fx->gmm), fx->target_str, sch, MLC_ERROR_KIND_NONE);
  sch_free(sch);
  trial.runs[0] = trial.runs[1] = trial.runs[2] = 1.0;
  db_record_finish(&trial.r);
  assert_int_equal(db_commit_records(fx->db, &trial.r, 1), MLC_OK);
  res = compile_ok(fx, fx->db);
  assert_int_equal(res.funcs[0].how, MLC_COMPILE_TUNED);
  assert_string_equal(res.funcs[0].record_id, base.r.id);
  mlc_compile_result_free(&res);
  rec_free(&base);
  rec_free(&trial);
}

/* ------------------------------------------------------------------------ */
/* The program                                                               */
/* ------------------------------------------------------------------------ */

/* Runs mlc-compile with args, stdout and stderr captured into *out and
 * *err (mlc_free); returns the exit status. */
static int run_cmd(const fixture_t *fx, char **out, char **err, const char *const *args, int nargs) {
  char *argv[24], out_path[128], err_path[128];
  argv[0] = (char *)"mlc-compile";
  assert_true(nargs < 23);
  for (int i = 0; i < nargs; i++) argv[i + 1] = (char *)args[i];
  snprintf(out_path, sizeof out_path, "%s/stdout", fx->dir);
  snprintf(err_path, sizeof err_path, "%s/stderr", fx->dir);
  fflush(stdout);
  fflush(stderr);
  int saved_out = dup(1), saved_err = dup(2);
  int fo = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0600), fe = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  assert_true(saved_out >= 0 && saved_err >= 0 && fo >= 0 && fe >= 0);
  dup2(fo, 1);
  dup2(fe, 2);
  int code = mlc_compile_main(nargs + 1, argv);
  fflush(stdout);
  fflush(stderr);
  dup2(saved_out, 1);
  dup2(saved_err, 2);
  close(fo), close(fe), close(saved_out), close(saved_err);
  size_t len;
  assert_int_equal(mlc_read_file(out, &len, out_path), MLC_OK);
  assert_int_equal(mlc_read_file(err, &len, err_path), MLC_OK);
  return code;
}

/* Expects exit `code` and `text` in stderr (NULL: nothing checked). */
static void expect(const fixture_t *fx, int code, const char *text, const char *const *args, int nargs) {
  char *out = NULL, *err = NULL;
  int got = run_cmd(fx, &out, &err, args, nargs);
  if (got != code || (text && !strstr(err, text)))
    fail_msg("mlc-compile %s ...: exit %d (want %d), stderr:\n%s\n(want '%s' in it)", args[0], got, code, err,
             text ? text : "");
  mlc_free(out);
  mlc_free(err);
}

static void write_module(const fixture_t *fx, char *path, size_t len) {
  snprintf(path, len, "%s/module.py", fx->dir);
  assert_int_equal(mlc_write_file(path, MODULE_SRC, strlen(MODULE_SRC)), MLC_OK);
}

static bool exists(const char *path) {
  struct stat st;
  return stat(path, &st) == 0;
}

static void test_program_help_and_usage_errors(void **state) {
  fixture_t *fx = *state;
  char src[128], missing[128], out[128];
  write_module(fx, src, sizeof src);
  snprintf(missing, sizeof missing, "%s/nope.py", fx->dir);
  snprintf(out, sizeof out, "%s/out.ll", fx->dir);
  char *o = NULL, *e = NULL;
  const char *help[] = {"--help"};
  assert_int_equal(run_cmd(fx, &o, &e, help, 1), MLC_COMPILE_EXIT_OK);
  assert_non_null(strstr(o, "usage: mlc-compile FILE -o OUT"));
  mlc_free(o), mlc_free(e);

  const char *no_out[] = {src};
  expect(fx, 2, "no output: give -o OUT", no_out, 1);
  const char *no_file[] = {"-o", out};
  expect(fx, 2, "no FILE", no_file, 2);
  const char *bad_ext[] = {src, "-o", "lib.dll"};
  expect(fx, 2, "unknown output kind '.dll' (want .so shared library, .o object file", bad_ext, 3);
  const char *ptx[] = {src, "-o", "k.ptx"};
  expect(fx, 2, "-o k.ptx: .ptx code needs --target 'cuda -arch=sm_XX'", ptx, 3);
  const char *no_ext[] = {src, "-o", "lib"};
  expect(fx, 2, "unknown output kind ''", no_ext, 3);
  const char *gone[] = {missing, "-o", out};
  expect(fx, 2, "nope.py", gone, 3);
  const char *bad_target[] = {src, "-o", out, "--target", "llvm -bogus=1"};
  expect(fx, 2, "--target 'llvm -bogus=1'", bad_target, 5);
  const char *hsaco_for_cuda[] = {src, "-o", "k.hsaco", "--target", "cuda -arch=sm_80"};
  expect(fx, 2, ".hsaco code needs --target 'rocm -mcpu=gfxXXX'", hsaco_for_cuda, 5);
  const char *bad_func[] = {src, "-o", out, "--func", "softmax", "--db", fx->uri};
  expect(fx, 2, "no function 'softmax' (functions: gmm, relu)", bad_func, 7);
  const char *unknown[] = {src, "-o", out, "--fast"};
  expect(fx, 2, "unknown option '--fast'", unknown, 4);
  const char *twice[] = {src, "-o", out, "--output", out};
  expect(fx, 2, "option --output given twice", twice, 5);
  const char *no_value[] = {src, "-o"};
  expect(fx, 2, "option -o needs a value", no_value, 2);
  const char *bad_scheme[] = {src, "-o", out, "--db", "mysql://root:hunter2@db/x"};
  char *e2 = NULL;
  assert_int_equal(run_cmd(fx, &o, &e2, bad_scheme, 5), 2);
  assert_null(strstr(e2, "hunter2")); /* never a password */
  mlc_free(o), mlc_free(e2);
  assert_false(exists(out));
}

/* The default database (./mlc-db, MLC_DB unset) does not exist: compiled
 * with default schedules and a warning, and not created; with
 * --require-tuned an error and nothing written. */
static void test_program_without_a_database(void **state) {
  fixture_t *fx = *state;
  char src[128], out[128], header[128], cwd[4096], dbdir[160];
  write_module(fx, src, sizeof src);
  snprintf(out, sizeof out, "%s/lib.ll", fx->dir);
  snprintf(header, sizeof header, "%s/lib.h", fx->dir);
  snprintf(dbdir, sizeof dbdir, "%s/mlc-db", fx->dir);
  assert_non_null(getcwd(cwd, sizeof cwd));
  char *saved_env = getenv("MLC_DB") ? strdup(getenv("MLC_DB")) : NULL;
  unsetenv("MLC_DB");
  assert_int_equal(chdir(fx->dir), 0);

  const char *strict[] = {src, "-o", out, "--require-tuned"};
  expect(fx, 1, "no database at ./mlc-db", strict, 4);
  assert_false(exists(out) || exists(header) || exists(dbdir));

  char *o = NULL, *e = NULL;
  const char *plain[] = {src, "-o", out};
  assert_int_equal(run_cmd(fx, &o, &e, plain, 3), 0);
  assert_non_null(strstr(e, "mlc-compile: warning: no database at ./mlc-db"));
  assert_non_null(strstr(e, "mlc-compile: warning: 2 of 2 functions have no tuned schedule for"));
  char line[64];
  snprintf(line, sizeof line, "\n  gmm (%s): no database\n", tir_func_key_hex(fx->gmm, (char[17]){0}));
  assert_non_null(strstr(e, line));
  assert_true(exists(out) && exists(header));
  assert_false(exists(dbdir));
  mlc_free(o), mlc_free(e);

  assert_int_equal(chdir(cwd), 0);
  if (saved_env) setenv("MLC_DB", saved_env, 1);
  free(saved_env);
}

/* A tuned gmm and an untuned relu, through the program: the warning lists
 * relu only, --require-tuned fails naming it, --report and --json say
 * which record gmm got. */
static void test_program_reports_records(void **state) {
  fixture_t *fx = *state;
  commit_workload(fx, fx->gmm, "gmm", NULL);
  rec_t rec;
  commit_gmm_record(fx, &rec, fx->target_str, fx->gmm, "C", MLC_ERROR_KIND_NONE);
  char src[128], out[128], header[128];
  write_module(fx, src, sizeof src);
  snprintf(out, sizeof out, "%s/lib.s", fx->dir);
  snprintf(header, sizeof header, "%s/api.h", fx->dir);
  char relu_key[17];
  tir_func_key_hex(fx->relu, relu_key);

  char *o = NULL, *e = NULL, want[1024];
  const char *strict[] = {src, "-o", out, "--db", fx->uri, "--target", E2E_TARGET, "--require-tuned"};
  assert_int_equal(run_cmd(fx, &o, &e, strict, 8), 1);
  snprintf(want, sizeof want, "mlc-compile: error: 1 of 2 functions has no tuned schedule for %s (--require-tuned):\n"
           "  relu (%s): no record for this target\n", fx->target_str, relu_key);
  if (!strstr(e, want)) fail_msg("stderr:\n%s\nwants:\n%s", e, want);
  assert_false(exists(out));
  mlc_free(o), mlc_free(e);

  const char *report[] = {src, "-o", out, "--db", fx->uri, "--target", E2E_TARGET, "--report", "--header", header};
  assert_int_equal(run_cmd(fx, &o, &e, report, 10), 0);
  snprintf(want, sizeof want, "gmm %s: record %s, median 20 us, %d instructions, measured 2024-05-01T12:34:56Z on "
           "llvm-testcpu (worker worker-7)\n", tir_func_key_hex(fx->gmm, (char[17]){0}), rec.r.id, rec.trace_len);
  if (!strstr(o, want)) fail_msg("stdout:\n%s\nwants:\n%s", o, want);
  snprintf(want, sizeof want, "relu %s: default schedule (no record for this target)\n", relu_key);
  assert_non_null(strstr(o, want));
  assert_non_null(strstr(e, "1 of 2 functions has no tuned schedule"));
  assert_true(exists(out) && exists(header));
  mlc_free(o), mlc_free(e);

  const char *as_json[] = {src, "-o", out, "--db", fx->uri, "--target", E2E_TARGET, "--json", "--func", "gmm"};
  assert_int_equal(run_cmd(fx, &o, &e, as_json, 10), 0);
  json_t *doc = mlc_json_loads(o, "stdout");
  assert_non_null(doc);
  assert_string_equal(json_string_value(json_object_get(doc, "output")), out);
  assert_true(json_array_size(json_object_get(doc, "functions")) == 1);
  json_t *fn = json_array_get(json_object_get(doc, "functions"), 0);
  assert_string_equal(json_string_value(json_object_get(fn, "schedule")), "tuned");
  json_t *r = json_object_get(fn, "record");
  assert_string_equal(json_string_value(json_object_get(r, "id")), rec.r.id);
  assert_string_equal(json_string_value(json_object_get(r, "measured_at")), "2024-05-01T12:34:56.123456Z");
  assert_true(json_real_value(json_object_get(r, "median_secs")) == 2e-5);
  assert_string_equal(e, ""); /* every function tuned: no warning */
  json_decref(doc);
  mlc_free(o), mlc_free(e);
  rec_free(&rec);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_empty_database_gives_default_schedules, setup, teardown),
      cmocka_unit_test_setup_teardown(test_record_is_applied_as_measured, setup, teardown),
      cmocka_unit_test_setup_teardown(test_record_of_a_structurally_different_workload_is_not_applied, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_records_of_other_targets_and_failures_are_ignored, setup, teardown),
      cmocka_unit_test_setup_teardown(test_trace_that_does_not_replay_falls_back, setup, teardown),
      cmocka_unit_test_setup_teardown(test_require_tuned_lists_every_untuned_function, setup, teardown),
      cmocka_unit_test_setup_teardown(test_default_schedule_baseline_alone_is_not_tuned, setup, teardown),
      cmocka_unit_test_setup_teardown(test_program_help_and_usage_errors, setup, teardown),
      cmocka_unit_test_setup_teardown(test_program_without_a_database, setup, teardown),
      cmocka_unit_test_setup_teardown(test_program_reports_records, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
