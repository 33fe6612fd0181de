/*
 * test_roundtrip.c - the printer and the parser agree: for every TVM-printed
 * file of tests/tir/corpus and every built-in workload, print(parse(print(f)))
 * is byte-identical to print(f) and parse(print(f)) is structurally equal to
 * f. A few corpus files also have their canonical text pinned in
 * tests/tir/expected/<name>.py. Lowered code (compiler/lower) round-trips
 * too: its flat views of parameters print as `C_1 = T.Buffer(..., data=C.data)`.
 *
 * Every file is checked before the test fails, and each failure names the
 * file and the first differing line, then shows both texts.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/compiler.h"
#include "tir/tir.h"

#define CORPUS_DIR MLC_TEST_DIR "/tir/corpus"
#define EXPECTED_DIR MLC_TEST_DIR "/tir/expected"

/* cmocka's print_error formats into a small fixed buffer: long texts go out
 * in pieces. */
static void print_long(const char *s) {
  for (size_t n = strlen(s); n > 0;) {
    int piece = n > 512 ? 512 : (int)n;
    print_error("%.*s", piece, s);
    s += piece, n -= (size_t)piece;
  }
}

/* Prints where two texts first differ, then both texts. */
static void report_diff(const char *what, const char *label_a, const char *a, const char *label_b,
                        const char *b) {
  int line = 1;
  const char *x = a, *y = b;
  while (*x && *x == *y) {
    if (*x == '\n') line++;
    x++, y++;
  }
  while (x > a && x[-1] != '\n') x--;
  while (y > b && y[-1] != '\n') y--;
  print_error("%s: %s and %s differ at line %d:\n  %s: %.*s\n  %s: %.*s\n", what, label_a,
              label_b, line, label_a, (int)strcspn(x, "\n"), x, label_b, (int)strcspn(y, "\n"), y);
  print_error("--- %s ---\n", label_a);
  print_long(a);
  print_error("--- %s ---\n", label_b);
  print_long(b);
  print_error("---\n");
}

static bool parse_text(tir_module_t **out, const char *text, const char *what) {
  tir_parse_error_t err;
  memset(&err, 0, sizeof(err));
  if (tir_parse(out, text, strlen(text), what, &err) == MLC_OK) return true;
  mlc_strbuf_t sb;
  mlc_sb_init(&sb);
  tir_parse_error_format(&err, &sb);
  print_error("%s: parse failed:\n%s\n", what, mlc_sb_str(&sb));
  mlc_sb_free(&sb);
  *out = NULL;
  return false;
}

/* parse(print) of `printed` (the text of m) must print the same and be
 * structurally equal to m, function by function. */
static bool check_reprint(const tir_module_t *m, const char *printed, const char *what) {
  bool ok = false;
  char *again = NULL;
  tir_module_t *m2 = NULL;
  char label[512];
  snprintf(label, sizeof(label), "%s (printed)", what);
  if (!parse_text(&m2, printed, label)) {
    print_error("--- printed text ---\n");
    print_long(printed);
    goto done;
  }
  again = tir_print_module(m2);
  if (!again) {
    print_error("%s: printing the re-parsed module failed\n", what);
    goto done;
  }
  if (strcmp(printed, again) != 0) {
    report_diff(what, "print(f)", printed, "print(parse(print(f)))", again);
    goto done;
  }
  if (m2->nfuncs != m->nfuncs) {
    print_error("%s: %d functions after re-parsing, %d before\n", what, m2->nfuncs, m->nfuncs);
    goto done;
  }
  ok = true;
  for (int i = 0; i < m->nfuncs; i++) {
    char why[512] = "";
    if (!tir_func_equal(m2->funcs[i], m->funcs[i], why, sizeof(why))) {
      print_error("%s: function %s: parse(print(f)) is not equal to f: %s\n--- printed ---\n",
                  what, m->funcs[i]->name, why);
      print_long(printed);
      ok = false;
    }
  }
done:
  mlc_free(again);
  tir_module_free(m2);
  return ok;
}

static int compare_names(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The *.py files of dir, sorted; *n of them. Free each and the array. */
static char **list_py_files(const char *dir, int *n) {
  DIR *d = opendir(dir);
  *n = 0;
  if (!d) return NULL;
  char **names = NULL;
  int cap = 0;
  for (struct dirent *e; (e = readdir(d));) {
    size_t len = strlen(e->d_name);
    if (len < 4 || strcmp(e->d_name + len - 3, ".py") != 0) continue;
    if (*n == cap) {
      cap = cap ? cap * 2 : 32;
      names = realloc(names, sizeof(*names) * (size_t)cap);
      assert_non_null(names);
    }
    names[(*n)++] = strdup(e->d_name);
  }
  closedir(d);
  qsort(names, (size_t)*n, sizeof(*names), compare_names);
  return names;
}

static void free_names(char **names, int n) {
  for (int i = 0; i < n; i++) free(names[i]);
  free(names);
}

/* Reads dir/name; NULL (with a message) when unreadable. */
static char *read_text(const char *dir, const char *name) {
  char path[1024];
  snprintf(path, sizeof(path), "%s/%s", dir, name);
  char *text = NULL;
  size_t len;
  if (mlc_read_file(&text, &len, path) != MLC_OK) {
    print_error("%s: %s\n", path, mlc_error_last());
    return NULL;
  }
  return text;
}

/* One corpus file: parse, print, parse, print. */
static bool check_corpus_file(const char *name) {
  bool ok = false;
  char *src = read_text(CORPUS_DIR, name), *printed = NULL;
  tir_module_t *m = NULL;
  if (!src || !parse_text(&m, src, name)) goto done;
  printed = tir_print_module(m);
  if (!printed) {
    print_error("%s: printing failed\n", name);
    goto done;
  }
  ok = check_reprint(m, printed, name);
done:
  mlc_free(printed);
  tir_module_free(m);
  mlc_free(src);
  return ok;
}

static void test_corpus_files_round_trip(void **state) {
  (void)state;
  int n, failed = 0;
  char **names = list_py_files(CORPUS_DIR, &n);
  assert_true(n > 0);
  for (int i = 0; i < n; i++) {
    if (!check_corpus_file(names[i])) {
      print_error("FAILED: corpus/%s\n\n", names[i]);
      failed++;
    }
  }
  if (failed) print_error("%d of %d corpus files failed the round trip\n", failed, n);
  free_names(names, n);
  assert_int_equal(failed, 0);
}

/* A built-in workload with its default shapes and dtype. */
static bool check_workload(const tir_workload_desc_t *desc) {
  bool ok = false;
  tir_func_t *f = NULL;
  tir_module_t *m = NULL;
  char *printed = NULL;
  tir_dtype_t in;
  const char *dt = desc->default_dtype ? desc->default_dtype : "float32";
  if (tir_dtype_parse(&in, dt, strlen(dt)) != MLC_OK) goto fail;
  if (tir_workload_build(&f, desc->name, NULL, 0, in, tir_dtype(0, 0, 0)) != MLC_OK) goto fail;
  /* Print the function inside a one-function module so check_reprint can
   * compare module to module. */
  if (!(m = tir_module_new("Module")) || !(printed = tir_print_func(f))) goto fail;
  m->bare_func = true;
  m->nfuncs = 1;
  m->funcs = mlc_arena_memdup(m->arena, &f, sizeof(f));
  ok = check_reprint(m, printed, desc->name);
  goto done;
fail:
  print_error("workload %s: %s\n", desc->name, mlc_error_last());
done:
  mlc_free(printed);
  tir_module_free(m);
  tir_func_free(f);
  return ok;
}

static void test_builtin_workloads_round_trip(void **state) {
  (void)state;
  int n, failed = 0;
  const tir_workload_desc_t *descs = tir_workloads(&n);
  assert_true(n > 0);
  for (int i = 0; i < n; i++) {
    if (!check_workload(&descs[i])) {
      print_error("FAILED: workload %s\n\n", descs[i].name);
      failed++;
    }
  }
  if (failed) print_error("%d of %d workloads failed the round trip\n", failed, n);
  assert_int_equal(failed, 0);
}

/* ------------------------------------------------------------------------ */
/* Lowered workloads                                                         */
/* ------------------------------------------------------------------------ */

/* Small shapes, so lowering and printing take milliseconds; a workload not
 * listed here is lowered at its defaults. */
static const struct {
  const char *name;
  int n;
  int64_t shape[12];
} small_shapes[] = {
    {"GMM", 3, {8, 8, 8}},
    {"BMM", 4, {2, 4, 4, 4}},
    {"GMV", 2, {8, 8}},
    {"C1D", 7, {1, 8, 4, 4, 3, 2, 1}},
    {"C2D", 9, {1, 6, 6, 4, 4, 3, 3, 1, 1}},
    {"C3D", 11, {1, 4, 4, 4, 2, 2, 3, 3, 3, 1, 1}},
    {"DEP", 8, {1, 6, 6, 4, 3, 3, 1, 1}},
    {"DIL", 10, {1, 6, 6, 4, 4, 3, 3, 1, 2, 2}},
    {"GRP", 10, {1, 6, 6, 4, 8, 3, 3, 2, 1, 4}},
    {"T2D", 9, {1, 4, 4, 4, 4, 4, 4, 2, 1}},
    {"NRM", 3, {1, 4, 4}},
    {"SFM", 2, {4, 8}},
    {"LN", 2, {4, 8}},
    {"D+B+R", 3, {4, 8, 8}},
};

/* A built-in workload at small shapes, lowered: its text (with the views'
 * declarations) reads back to an equal function that prints the same. */
static bool check_lowered_workload(const tir_workload_desc_t *desc, const mlc_target_t *target) {
  bool ok = false;
  tir_func_t *f = NULL, *low = NULL;
  tir_module_t *m = NULL;
  char *printed = NULL;
  const int64_t *shape = NULL;
  int nshape = 0;
  for (size_t i = 0; i < sizeof(small_shapes) / sizeof(small_shapes[0]); i++)
    if (strcmp(small_shapes[i].name, desc->name) == 0)
      shape = small_shapes[i].shape, nshape = small_shapes[i].n;
  if (tir_workload_build(&f, desc->name, shape, nshape, tir_dt_FLOAT32(), tir_dtype(0, 0, 0)) != MLC_OK ||
      mlc_lower(&low, f, target, NULL) != MLC_OK)
    goto fail;
  if (!(m = tir_module_new("Module")) || !(printed = tir_print_func(low))) goto fail;
  m->bare_func = true;
  m->nfuncs = 1;
  m->funcs = mlc_arena_memdup(m->arena, &low, sizeof(low));
  /* Every workload reads a parameter, and lowering reads parameters only
   * through views, which must be declared. */
  if (!strstr(printed, " = T.Buffer(")) {
    print_error("lowered %s: no view declared:\n", desc->name);
    print_long(printed);
    goto done;
  }
  ok = check_reprint(m, printed, desc->name);
  goto done;
fail:
  print_error("lowered workload %s: %s\n", desc->name, mlc_error_last());
done:
  mlc_free(printed);
  tir_module_free(m);
  tir_func_free(low);
  tir_func_free(f);
  return ok;
}

static void test_lowered_workloads_round_trip(void **state) {
  (void)state;
  mlc_target_t target;
  assert_int_equal(mlc_target_parse(&target, "llvm -mcpu=skylake-avx512 -num-cores=2"), MLC_OK);
  int n, failed = 0;
  const tir_workload_desc_t *descs = tir_workloads(&n);
  assert_true(n > 0);
  for (int i = 0; i < n; i++) {
    if (!check_lowered_workload(&descs[i], &target)) {
      print_error("FAILED: lowered workload %s\n\n", descs[i].name);
      failed++;
    }
  }
  if (failed) print_error("%d of %d lowered workloads failed the round trip\n", failed, n);
  assert_int_equal(failed, 0);
}

/* ------------------------------------------------------------------------ */
/* IR the corpus does not cover, built with the builders                     */
/* ------------------------------------------------------------------------ */

/* print(f) parses back to an equal function that prints the same. */
static bool check_built(tir_func_t *f, const char *what) {
  bool ok = false;
  char *printed = tir_print_func(f);
  tir_module_t *m = tir_module_new("Module");
  if (printed && m) {
    m->bare_func = true;
    m->nfuncs = 1;
    m->funcs = mlc_arena_memdup(m->arena, &f, sizeof(f));
    ok = check_reprint(m, printed, what);
  }
  mlc_free(printed);
  tir_module_free(m);
  return ok;
}

static tir_expr_t *I(mlc_arena_t *a, int64_t v) { return tir_i32(a, v); }
static tir_expr_t *bin(mlc_arena_t *a, tir_expr_kind_t k, tir_expr_t *x, tir_expr_t *y) {
  return tir_binary(a, k, x, y);
}
static tir_expr_t *ld(mlc_arena_t *a, tir_buffer_t *b, tir_expr_t *i) { return tir_load(a, b, &i, 1); }
static tir_stmt_t *st(mlc_arena_t *a, tir_buffer_t *b, tir_expr_t *i, tir_expr_t *v) {
  return tir_store(a, b, v, &i, 1);
}
static tir_stmt_t *seq(mlc_arena_t *a, tir_stmt_t **s, int n) { return tir_seq(a, s, n); }

/* Immediates of every dtype and lists as function attributes. */
static void set_attr_zoo(tir_func_t *f) {
  mlc_arena_t *a = f->arena;
  tir_expr_t *list[2] = {I(a, 1), tir_string(a, "two")};
  tir_annot_t attrs[] = {
      {"i64", tir_int(a, tir_dt_INT64(), -5)},
      {"u8", tir_int(a, tir_dt_UINT8(), 255)},
      {"u32", tir_int(a, tir_dt_UINT32(), 4294967295)},
      {"u64", tir_int(a, tir_dt_UINT64(), INT64_MAX)},
      {"u64max", tir_int(a, tir_dt_UINT64(), (int64_t)UINT64_MAX)},
      {"i64min", tir_int(a, tir_dt_INT64(), INT64_MIN)},
      {"i16", tir_int(a, tir_dt_INT16(), -300)},
      {"f64", tir_float(a, tir_dt_FLOAT64(), 1e-05)},
      {"f16", tir_float(a, tir_dt_FLOAT16(), 0.1)},
      {"bf16", tir_float(a, tir_dt_BFLOAT16(), 1.5)},
      {"big", tir_float(a, tir_dt_FLOAT32(), -3.4028234663852886e+38)},
      {"nan", tir_float(a, tir_dt_FLOAT32(), NAN)},
      {"ninf", tir_float(a, tir_dt_FLOAT32(), -INFINITY)},
      {"flag", tir_bool(a, false)},
      {"text", tir_string(a, "quote \" backslash \\ newline \n tab \t ctl \x01")},
      {"list", tir_call(a, tir_dt_HANDLE(), TIR_OP_LIST, list, 2)},
  };
  f->nattrs = (int)(sizeof(attrs) / sizeof(attrs[0]));
  f->attrs = mlc_arena_memdup(a, attrs, sizeof(attrs));
}

/* Statements, loop forms, operators and names (keywords among them) that the
 * corpus files do not all have. */
static tir_func_t *make_statement_zoo(void) {
  tir_func_t *f = tir_func_new("zoo");
  mlc_arena_t *a = f->arena;
  tir_var_t *n = tir_var(a, "n", tir_dt_INT32());
  int64_t sixteen = 16;
  tir_expr_t *shape[1] = {I(a, sixteen)};
  tir_buffer_t *A = tir_buffer_new(a, "A", tir_dt_FLOAT32(), shape, 1, NULL);
  tir_buffer_t *I8 = tir_buffer_new(a, "I8", tir_dt_INT8(), shape, 1, NULL);
  tir_var_t *params[3] = {n, A->data, I8->data};
  tir_buffer_t *bmap[3] = {NULL, A, I8};
  f->nparams = 3;
  f->params = mlc_arena_memdup(a, params, sizeof(params));
  f->buffer_map = mlc_arena_memdup(a, bmap, sizeof(bmap));
  set_attr_zoo(f);

  tir_var_t *in = tir_var(a, "in", tir_dt_INT32()), *lam = tir_var(a, "lambda", tir_dt_INT32());
  tir_var_t *t = tir_var(a, "t", tir_dt_INT32()), *w = tir_var(a, "w", tir_dt_INT64());
  tir_var_t *i = tir_var(a, "i", tir_dt_INT32()), *i2 = tir_var(a, "i", tir_dt_INT32());
  tir_buffer_t *X = tir_buffer_new(a, "X", tir_dt_FLOAT16(), shape, 1, "local");
  tir_expr_t *sync[1] = {tir_string(a, "shared")};
  tir_stmt_t *else_body[2] = {tir_evaluate(a, in),
                              tir_evaluate(a, tir_call(a, tir_dt_INT32(), TIR_OP_TVM_STORAGE_SYNC, sync, 1))};
  tir_expr_t *cond = bin(a, TIR_AND, bin(a, TIR_LT, in, I(a, 5)), tir_not(a, bin(a, TIR_EQ, n, I(a, 3))));
  tir_stmt_t *ifs = tir_if(a, cond, st(a, X, in, tir_float(a, tir_dt_FLOAT16(), 0.1)), seq(a, else_body, 2));
  /* for lambda in range(2, 2 + n) with a Select of special floats. */
  tir_expr_t *sel = tir_select(a, bin(a, TIR_LT, lam, n), tir_float(a, tir_dt_FLOAT32(), INFINITY),
                               tir_float(a, tir_dt_FLOAT32(), 0.1));
  tir_stmt_t *l1 = tir_for(a, lam, I(a, 2), n, TIR_FOR_SERIAL, st(a, A, lam, sel));
  /* A thread binding with annotations, calls with a dtype first. */
  tir_expr_t *ext_args[2] = {tir_string(a, "my_fn"), ld(a, A, I(a, 0))};
  tir_expr_t *re_args[1] = {n};
  tir_expr_t *call = bin(a, TIR_DIV, tir_call(a, tir_dt_FLOAT32(), TIR_OP_REINTERPRET, re_args, 1),
                         tir_call(a, tir_dt_FLOAT32(), TIR_OP_CALL_EXTERN, ext_args, 2));
  tir_stmt_t *l2 = tir_for(a, t, I(a, 1), I(a, 32), TIR_FOR_THREAD_BINDING,
                           st(a, A, t, bin(a, TIR_ADD, tir_cast(a, tir_dt_FLOAT32(), ld(a, I8, I(a, 0))), call)));
  l2->u.loop.thread_tag = "threadIdx.x";
  tir_expr_t *list[2] = {I(a, 1), tir_string(a, "b")};
  l2->u.loop.nannots = 1;
  l2->u.loop.annots = mlc_arena_alloc(a, sizeof(tir_annot_t));
  l2->u.loop.annots[0] = (tir_annot_t){"k", tir_call(a, tir_dt_HANDLE(), TIR_OP_LIST, list, 2)};
  /* int64 unrolled loop with a nonzero min. */
  tir_stmt_t *l3 = tir_for(a, w, tir_int(a, tir_dt_INT64(), 3), tir_int(a, tir_dt_INT64(), 5), TIR_FOR_UNROLLED,
                           st(a, A, I(a, 0), tir_cast(a, tir_dt_FLOAT32(), w)));
  /* Two variables named i, nested; precedence. */
  tir_expr_t *prec = bin(a, TIR_DIV,
                         bin(a, TIR_MUL, bin(a, TIR_ADD, ld(a, A, i), ld(a, A, i2)),
                             bin(a, TIR_SUB, ld(a, A, I(a, 3)), bin(a, TIR_SUB, ld(a, A, I(a, 4)), ld(a, A, I(a, 5))))),
                         tir_float(a, tir_dt_FLOAT32(), 2));
  tir_stmt_t *l4 = tir_for(a, i, I(a, 0), I(a, 4), TIR_FOR_SERIAL,
                           tir_for(a, i2, I(a, 0), I(a, 4), TIR_FOR_PARALLEL, st(a, A, bin(a, TIR_ADD, i, i2), prec)));
  tir_stmt_t *int8 = st(a, I8, bin(a, TIR_FLOOR_MOD, bin(a, TIR_FLOOR_DIV, n, I(a, 4)), I(a, 16)),
                        bin(a, TIR_SUB, ld(a, I8, I(a, 1)), tir_int(a, tir_dt_INT8(), -1)));
  tir_stmt_t *body[6] = {ifs, l1, l2, l3, l4, int8};
  tir_stmt_t *alloc = tir_allocate(a, X, seq(a, body, 6));
  tir_stmt_t *attr_in = tir_attr_stmt(a, in, "pragma_key", I(a, 1), alloc);
  tir_stmt_t *attr = tir_attr_stmt(a, NULL, "pragma", tir_string(a, "v"), attr_in);
  tir_stmt_t *as = tir_assert_stmt(a, bin(a, TIR_LT, in, I(a, 10)), tir_string(a, "say \"hi\"\n"), attr);
  f->body = tir_let_stmt(a, in, bin(a, TIR_ADD, n, I(a, 1)), as);
  return f;
}

/* Parameters that need T.match_buffer after their symbolic variables. (A
 * free variable would print and parse, but equality compares free
 * variables by identity, so it cannot be equal after a round trip.) */
static tir_func_t *make_symbolic(void) {
  tir_func_t *f = tir_func_new("symbolic");
  mlc_arena_t *a = f->arena;
  tir_var_t *n = tir_var(a, "n", tir_dt_INT32()), *s0 = tir_var(a, "s0", tir_dt_INT32());
  tir_var_t *m = tir_var(a, "m", tir_dt_INT32());
  tir_expr_t *shapeA[2] = {n, I(a, 4)};
  tir_buffer_t *A = tir_buffer_new(a, "A", tir_dt_FLOAT16(), shapeA, 2, "shared");
  A->strides = mlc_arena_alloc(a, sizeof(tir_expr_t *) * 2);
  A->strides[0] = s0, A->strides[1] = I(a, 1);
  A->elem_offset = tir_var(a, "off", tir_dt_INT32());
  A->align = 64;
  A->offset_factor = 1;
  tir_expr_t *shapeB[2] = {m, I(a, 8)};
  tir_buffer_t *B = tir_buffer_new(a, "B", tir_dt_FLOAT32(), shapeB, 2, NULL);
  tir_buffer_t *C = tir_buffer_new(a, "C", tir_dt_FLOAT32(), &m, 1, NULL);
  tir_var_t *var_A = tir_var(a, "var_A", tir_dt_HANDLE()), *var_C = tir_var(a, "var_C", tir_dt_HANDLE());
  tir_var_t *params[4] = {var_A, var_C, m, B->data};
  tir_buffer_t *bmap[4] = {A, C, NULL, B};
  f->nparams = 4;
  f->params = mlc_arena_memdup(a, params, sizeof(params));
  f->buffer_map = mlc_arena_memdup(a, bmap, sizeof(bmap));
  tir_expr_t *idx[2] = {s0, I(a, 0)};
  tir_expr_t *idxA[2] = {I(a, 0), I(a, 1)};
  tir_stmt_t *body[2] = {tir_store(a, B, tir_float(a, tir_dt_FLOAT32(), 0), idx, 2),
                         st(a, C, I(a, 0), tir_cast(a, tir_dt_FLOAT32(), tir_load(a, A, idxA, 2)))};
  f->body = seq(a, body, 2);
  return f;
}

static tir_range_t rng(tir_expr_t *min, tir_expr_t *extent) { return (tir_range_t){min, extent}; }

static tir_region_t region2(mlc_arena_t *a, tir_buffer_t *b, tir_range_t r0, tir_range_t r1) {
  tir_region_t r = {b, 2, mlc_arena_alloc(a, sizeof(tir_range_t) * 2)};
  r.ranges[0] = r0, r.ranges[1] = r1;
  return r;
}

/* `for k in range(4)` over block `name` (iter var vk), which matches the row
 * A[vk, 0:16] as a buffer with symbolic strides and elem_offset (declared in
 * the block, as tensorized code prints), reads the stop forms `0:n`,
 * `vk * 4:vk * 4 + 4`, `vk:vk + n` and the empty `vk:vk`, and stores the
 * largest uint64 into B. */
static tir_stmt_t *make_tensorized_nest(mlc_arena_t *a, const char *name, tir_buffer_t *A,
                                        tir_buffer_t *B, tir_var_t *n) {
  tir_var_t *k = tir_var(a, "k", tir_dt_INT32()), *vk = tir_var(a, "vk", tir_dt_INT32());
  tir_block_t *blk = tir_block_new(a, name);
  blk->niter_vars = 1;
  blk->iter_vars = mlc_arena_alloc(a, sizeof(tir_iter_var_t));
  blk->iter_vars[0] = (tir_iter_var_t){vk, {I(a, 0), I(a, 4)}, TIR_ITER_SPATIAL};
  tir_expr_t *sixteen = I(a, 16);
  tir_buffer_t *row = tir_buffer_new(a, "A_1", tir_dt_FLOAT32(), &sixteen, 1, NULL);
  row->strides = mlc_arena_alloc(a, sizeof(tir_expr_t *));
  row->strides[0] = tir_var(a, "A_s0", tir_dt_INT32());
  row->elem_offset = tir_var(a, "A_elem_offset", tir_dt_INT32());
  row->offset_factor = 1;
  blk->nmatch_buffers = 1;
  blk->match_buffers = mlc_arena_alloc(a, sizeof(tir_match_buffer_t));
  blk->match_buffers[0] = (tir_match_buffer_t){row, region2(a, A, rng(vk, I(a, 1)), rng(I(a, 0), I(a, 16)))};
  tir_expr_t *vk4 = bin(a, TIR_MUL, vk, I(a, 4));
  tir_region_t reads[2] = {region2(a, A, rng(I(a, 0), n), rng(vk4, I(a, 4))),
                           region2(a, A, rng(vk, n), rng(vk, I(a, 0)))};
  blk->nreads = 2, blk->reads = mlc_arena_memdup(a, reads, sizeof(reads));
  tir_region_t write = {B, 1, mlc_arena_alloc(a, sizeof(tir_range_t))};
  write.ranges[0] = rng(vk, I(a, 1));
  blk->nwrites = 1, blk->writes = mlc_arena_memdup(a, &write, sizeof(write));
  tir_expr_t *ext_args[3] = {tir_string(a, "consume"), row->data, ld(a, row, I(a, 0))};
  tir_stmt_t *body[2] = {st(a, B, vk, tir_int(a, tir_dt_UINT64(), (int64_t)UINT64_MAX)),
                         tir_evaluate(a, tir_call(a, tir_dt_INT32(), TIR_OP_CALL_EXTERN, ext_args, 3))};
  blk->body = seq(a, body, 2);
  tir_expr_t *vals[1] = {k};
  return tir_for(a, k, I(a, 0), I(a, 4), TIR_FOR_SERIAL, tir_block_realize(a, vals, 1, NULL, blk));
}

/* Blocks the corpus lacks: two sibling tensorized blocks, each declaring its
 * own `A_s0` (scoped names), A.data as an attribute node and call argument,
 * `0:n` regions and uint64 immediates beyond int64. */
static tir_func_t *make_tensorized(void) {
  tir_func_t *f = tir_func_new("tensorized");
  mlc_arena_t *a = f->arena;
  tir_var_t *n = tir_var(a, "n", tir_dt_INT32());
  tir_expr_t *shapeA[2] = {n, I(a, 16)}, *shapeB[1] = {I(a, 16)};
  tir_buffer_t *A = tir_buffer_new(a, "A", tir_dt_FLOAT32(), shapeA, 2, NULL);
  tir_buffer_t *B = tir_buffer_new(a, "B", tir_dt_UINT64(), shapeB, 1, NULL);
  tir_var_t *params[3] = {n, A->data, B->data};
  tir_buffer_t *bmap[3] = {NULL, A, B};
  f->nparams = 3;
  f->params = mlc_arena_memdup(a, params, sizeof(params));
  f->buffer_map = mlc_arena_memdup(a, bmap, sizeof(bmap));
  tir_stmt_t *nests[2] = {make_tensorized_nest(a, "R", A, B, n), make_tensorized_nest(a, "S", A, B, n)};
  tir_block_t *root = tir_block_new(a, "root");
  root->body = tir_attr_stmt(a, A->data, "storage_alignment", I(a, 128), seq(a, nests, 2));
  f->body = tir_block_realize(a, NULL, 0, NULL, root);
  return f;
}

static tir_buffer_t *view_of(mlc_arena_t *a, const char *name, tir_dtype_t t, tir_var_t *data,
                             int64_t n0, int64_t n1) {
  tir_expr_t *shape[2] = {I(a, n0), I(a, n1)};
  tir_buffer_t *b = tir_buffer_new(a, name, t, shape, n1 ? 2 : 1, NULL);
  b->data = data;
  return b;
}

/* Views (buffers no statement declares, as lowering's flat buffers) of
 * every kind of storage: a parameter's data, a handle parameter, a
 * decl_buffer (with strides, offset, scope and align), a block's
 * alloc_buffer and a handle let. */
static tir_func_t *make_views(void) {
  tir_func_t *f = tir_func_new("views");
  mlc_arena_t *a = f->arena;
  tir_expr_t *s44[2] = {I(a, 4), I(a, 4)}, *s32 = I(a, 32), *s4 = I(a, 4);
  tir_buffer_t *A = tir_buffer_new(a, "A", tir_dt_FLOAT16(), s44, 2, NULL);
  tir_var_t *p = tir_var(a, "p", tir_dt_HANDLE()), *q = tir_var(a, "q", tir_dt_HANDLE());
  tir_var_t *params[2] = {A->data, p};
  tir_buffer_t *bmap[2] = {A, NULL};
  f->nparams = 2;
  f->params = mlc_arena_memdup(a, params, sizeof(params));
  f->buffer_map = mlc_arena_memdup(a, bmap, sizeof(bmap));
  tir_buffer_t *Af = view_of(a, "A", tir_dt_FLOAT16(), A->data, 16, 0);
  tir_buffer_t *P = view_of(a, "P", tir_dt_INT32(), p, 8, 0), *Q = view_of(a, "Q", tir_dt_INT32(), q, 2, 0);
  tir_buffer_t *X = tir_buffer_new(a, "X", tir_dt_FLOAT16(), &s32, 1, "local");
  tir_buffer_t *Xv = view_of(a, "X", tir_dt_FLOAT16(), X->data, 4, 4);
  Xv->scope = "local";
  Xv->strides = mlc_arena_alloc(a, sizeof(tir_expr_t *) * 2);
  Xv->strides[0] = I(a, 8), Xv->strides[1] = I(a, 1);
  Xv->elem_offset = I(a, 2);
  Xv->align = 64, Xv->offset_factor = 1;
  tir_buffer_t *S = tir_buffer_new(a, "S", tir_dt_FLOAT32(), &s4, 1, NULL);
  tir_buffer_t *Sv = view_of(a, "S", tir_dt_FLOAT32(), S->data, 2, 2);
  tir_block_t *blk = tir_block_new(a, "blk");
  blk->nalloc_buffers = 1;
  blk->alloc_buffers = mlc_arena_memdup(a, &S, sizeof(S));
  tir_expr_t *sv_idx[2] = {I(a, 1), I(a, 0)};
  blk->body = tir_store(a, Sv, tir_cast(a, tir_dt_FLOAT32(), ld(a, X, I(a, 3))), sv_idx, 2);
  tir_var_t *i = tir_var(a, "i", tir_dt_INT32());
  tir_expr_t *xv_idx[2] = {tir_binary(a, TIR_FLOOR_DIV, i, I(a, 4)), tir_binary(a, TIR_FLOOR_MOD, i, I(a, 4))};
  /* decl_buffer and let take the rest of their list as body: they come last. */
  tir_stmt_t *in_x[3] = {tir_for(a, i, I(a, 0), I(a, 16), TIR_FOR_SERIAL, tir_store(a, Xv, ld(a, Af, i), xv_idx, 2)),
                         tir_block_realize(a, NULL, 0, NULL, blk),
                         tir_let_stmt(a, q, p, st(a, Q, I(a, 1), I(a, 2)))};
  tir_stmt_t *body[2] = {st(a, P, I(a, 0), I(a, 1)), tir_allocate(a, X, seq(a, in_x, 3))};
  tir_block_t *root = tir_block_new(a, "root");
  root->body = seq(a, body, 2);
  f->body = tir_block_realize(a, NULL, 0, NULL, root);
  return f;
}

static void test_printer_only_features_round_trip(void **state) {
  (void)state;
  tir_func_t *zoo = make_statement_zoo(), *sym = make_symbolic(), *tens = make_tensorized();
  tir_func_t *views = make_views();
  bool zoo_ok = check_built(zoo, "statement zoo");
  bool sym_ok = check_built(sym, "symbolic params");
  bool tens_ok = check_built(tens, "tensorized blocks");
  bool views_ok = check_built(views, "views");
  tir_func_free(zoo);
  tir_func_free(sym);
  tir_func_free(tens);
  tir_func_free(views);
  assert_true(zoo_ok);
  assert_true(sym_ok);
  assert_true(tens_ok);
  assert_true(views_ok);
}

/* tests/tir/expected/<name>.py is print(parse(corpus/<name>.py)), byte for byte. */
static bool check_pinned(const char *name) {
  bool ok = false;
  char *src = read_text(CORPUS_DIR, name), *want = read_text(EXPECTED_DIR, name);
  char *printed = NULL;
  tir_module_t *m = NULL;
  if (!src || !want || !parse_text(&m, src, name)) goto done;
  printed = tir_print_module(m);
  if (!printed) goto done;
  ok = strcmp(printed, want) == 0;
  if (!ok) report_diff(name, "expected", want, "printed", printed);
done:
  mlc_free(printed);
  tir_module_free(m);
  mlc_free(want);
  mlc_free(src);
  return ok;
}

static void test_pinned_files_print_exactly_as_expected(void **state) {
  (void)state;
  int n, failed = 0;
  char **names = list_py_files(EXPECTED_DIR, &n);
  assert_true(n >= 5);
  for (int i = 0; i < n; i++) {
    if (!check_pinned(names[i])) {
      print_error("FAILED: expected/%s\n\n", names[i]);
      failed++;
    }
  }
  free_names(names, n);
  assert_int_equal(failed, 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_corpus_files_round_trip),
      cmocka_unit_test(test_builtin_workloads_round_trip),
      cmocka_unit_test(test_lowered_workloads_round_trip),
      cmocka_unit_test(test_pinned_files_print_exactly_as_expected),
      cmocka_unit_test(test_printer_only_features_round_trip),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
