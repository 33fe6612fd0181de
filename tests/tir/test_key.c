/*
 * test_key.c - the workload key: pinned for every built-in workload (golden
 * values, the same on every machine, compiler and build type), blind to
 * names, and changed by anything else: shape, dtype, operator, block name,
 * loop order, loop kind, scope, annotations, attributes.
 *
 * The golden keys change only when the serialization (tir/key.c, documented
 * in docs/tir.md) or a built-in workload deliberately changes; re-pin them
 * then, never to make a failure go away.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "tir/tir.h"

/* "The usual choice" for a workload's dtypes (tir_workload_build). */
#define DEFAULT_DTYPE tir_dtype(0, 0, 0)

/* ------------------------------------------------------------------------ */
/* Golden keys of the built-in workloads at default shapes and dtypes        */
/* ------------------------------------------------------------------------ */

static const struct {
  const char *workload;
  const char *key;
} golden[] = {
    {"GMM", "e6a082d7557b278a"},
    {"BMM", "5b6190f41322f3a0"},
    {"GMV", "55f50a1b93d7f4c9"},
    {"C1D", "a7400fa616a6de05"},
    {"C2D", "4b8236594ee344f4"},
    {"C3D", "85313b7fc4cfe1bc"},
    {"DEP", "5bead774b40ec4d7"},
    {"DIL", "cc294797f174787e"},
    {"GRP", "b08c3d3aeb11bbf8"},
    {"T2D", "fa48c6414629c8c1"},
    {"NRM", "117c83838b358373"},
    {"SFM", "18c3e3b0a4bac69f"},
    {"LN", "183c79aaaf6fa6db"},
    {"D+B+R", "ee8cdbfb0b86ab6b"},
};

/* ------------------------------------------------------------------------ */
/* A matmul with every name and choice as an option                          */
/* ------------------------------------------------------------------------ */

typedef struct {
  const char *names[9]; /* A B C i j k vi vj vk */
  const char *func, *block;
  int64_t m, n, k;
  tir_dtype_t dtype;
  tir_expr_kind_t combine; /* C = C <combine> A * B */
  bool swap_ij;            /* loops j, i, k instead of i, j, k */
  tir_for_kind_t outer_kind;
  const char *c_scope;
  const char *annot_key; /* on the outer loop, value 16 */
} mm_opts_t;

static mm_opts_t mm_defaults(void) {
  mm_opts_t o = {{"A", "B", "C", "i", "j", "k", "vi", "vj", "vk"}, "main", "C", 128, 128, 128,
                 tir_dt_FLOAT32(), TIR_ADD, false, TIR_FOR_SERIAL, "global", NULL};
  return o;
}

static tir_buffer_t *buffer2(mlc_arena_t *a, const char *name, tir_dtype_t t, int64_t x, int64_t y,
                             const char *scope) {
  tir_expr_t *shape[2] = {tir_i32(a, x), tir_i32(a, y)};
  return tir_buffer_new(a, name, t, shape, 2, scope);
}

static tir_region_t point2(mlc_arena_t *a, tir_buffer_t *b, tir_expr_t *x, tir_expr_t *y) {
  tir_range_t r[2] = {{x, tir_i32(a, 1)}, {y, tir_i32(a, 1)}};
  return (tir_region_t){b, 2, mlc_arena_memdup(a, r, sizeof r)};
}

static tir_expr_t *load2(mlc_arena_t *a, tir_buffer_t *b, tir_expr_t *x, tir_expr_t *y) {
  tir_expr_t *idx[2] = {x, y};
  return tir_load(a, b, idx, 2);
}

static tir_stmt_t *store2(mlc_arena_t *a, tir_buffer_t *b, tir_expr_t *v, tir_expr_t *x, tir_expr_t *y) {
  tir_expr_t *idx[2] = {x, y};
  return tir_store(a, b, v, idx, 2);
}

static tir_block_t *mm_block(mlc_arena_t *a, const mm_opts_t *o, tir_buffer_t **bufs, tir_var_t **iv) {
  tir_buffer_t *A = bufs[0], *B = bufs[1], *C = bufs[2];
  tir_block_t *b = tir_block_new(a, o->block);
  int64_t ext[3] = {o->m, o->n, o->k};
  b->niter_vars = 3;
  b->iter_vars = mlc_arena_alloc(a, 3 * sizeof(tir_iter_var_t));
  for (int d = 0; d < 3; d++)
    b->iter_vars[d] = (tir_iter_var_t){iv[d], {tir_i32(a, 0), tir_i32(a, ext[d])},
                                       d == 2 ? TIR_ITER_REDUCE : TIR_ITER_SPATIAL};
  tir_region_t reads[2] = {point2(a, A, iv[0], iv[2]), point2(a, B, iv[1], iv[2])};
  tir_region_t write = point2(a, C, iv[0], iv[1]);
  b->nreads = 2, b->nwrites = 1;
  b->reads = mlc_arena_memdup(a, reads, sizeof reads);
  b->writes = mlc_arena_memdup(a, &write, sizeof write);
  b->init = store2(a, C, tir_float(a, o->dtype, 0), iv[0], iv[1]);
  tir_expr_t *prod = tir_binary(a, TIR_MUL, load2(a, A, iv[0], iv[2]), load2(a, B, iv[1], iv[2]));
  b->body = store2(a, C, tir_binary(a, o->combine, load2(a, C, iv[0], iv[1]), prod), iv[0], iv[1]);
  return b;
}

static void mm_params(tir_func_t *f, tir_buffer_t **bufs) {
  mlc_arena_t *a = f->arena;
  f->nparams = 3;
  f->params = mlc_arena_alloc(a, 3 * sizeof(tir_var_t *));
  f->buffer_map = mlc_arena_memdup(a, bufs, 3 * sizeof(*bufs));
  for (int i = 0; i < 3; i++) f->params[i] = bufs[i]->data;
  f->nattrs = 2;
  f->attrs = mlc_arena_alloc(a, 2 * sizeof(tir_annot_t));
  f->attrs[0] = (tir_annot_t){"global_symbol", tir_string(a, f->name)};
  f->attrs[1] = (tir_annot_t){"tir.noalias", tir_bool(a, true)};
}

static tir_func_t *build_mm(const mm_opts_t *o) {
  tir_func_t *f = tir_func_new(o->func);
  mlc_arena_t *a = f->arena;
  const char *const *nm = o->names;
  tir_buffer_t *bufs[3] = {buffer2(a, nm[0], o->dtype, o->m, o->k, NULL),
                           buffer2(a, nm[1], o->dtype, o->n, o->k, NULL),
                           buffer2(a, nm[2], o->dtype, o->m, o->n, o->c_scope)};
  mm_params(f, bufs);
  tir_var_t *lv[3], *iv[3];
  for (int d = 0; d < 3; d++) {
    lv[d] = tir_var(a, nm[3 + d], tir_dt_INT32());
    iv[d] = tir_var(a, nm[6 + d], tir_dt_INT32());
  }
  tir_expr_t *binds[3] = {lv[0], lv[1], lv[2]};
  tir_stmt_t *s = tir_block_realize(a, binds, 3, NULL, mm_block(a, o, bufs, iv));
  int64_t ext[3] = {o->m, o->n, o->k};
  int order[3] = {o->swap_ij ? 1 : 0, o->swap_ij ? 0 : 1, 2};
  for (int d = 2; d >= 0; d--) {
    tir_for_kind_t kind = d ? TIR_FOR_SERIAL : o->outer_kind;
    s = tir_for(a, lv[order[d]], tir_i32(a, 0), tir_i32(a, ext[order[d]]), kind, s);
  }
  if (o->annot_key) {
    s->u.loop.nannots = 1;
    s->u.loop.annots = mlc_arena_alloc(a, sizeof(tir_annot_t));
    s->u.loop.annots[0] = (tir_annot_t){o->annot_key, tir_i32(a, 16)};
  }
  tir_block_t *root = tir_block_new(a, "root");
  root->body = s;
  f->body = tir_block_realize(a, NULL, 0, NULL, root);
  return f;
}

static uint64_t mm_key(const mm_opts_t *o) {
  tir_func_t *f = build_mm(o);
  uint64_t k = tir_func_key(f);
  tir_func_free(f);
  return k;
}

/* Gives every variable the name "x" and every buffer the name "X". */
static bool rename_expr(tir_visitor_t *v, tir_expr_t *e) {
  (void)v;
  if (e->kind == TIR_VAR) e->u.var.name = "x";
  if (e->kind == TIR_BUFFER_LOAD) e->u.load.buffer->name = "X";
  return true;
}

static bool rename_stmt(tir_visitor_t *v, tir_stmt_t *s) {
  (void)v;
  if (s->kind == TIR_FOR) s->u.loop.var->u.var.name = "x";
  if (s->kind == TIR_BUFFER_STORE) s->u.store.buffer->name = "X";
  return true;
}

static bool rename_block(tir_visitor_t *v, tir_block_t *b, tir_stmt_t *realize) {
  (void)v, (void)realize;
  for (int i = 0; i < b->niter_vars; i++) b->iter_vars[i].var->u.var.name = "x";
  for (int i = 0; i < b->nalloc_buffers; i++) b->alloc_buffers[i]->name = "X";
  return true;
}

static void rename_all(tir_func_t *f) {
  for (int i = 0; i < f->nparams; i++) {
    f->params[i]->u.var.name = "x";
    if (f->buffer_map && f->buffer_map[i]) f->buffer_map[i]->name = "X";
  }
  f->name = "renamed";
  tir_visitor_t v = {.expr = rename_expr, .stmt = rename_stmt, .block = rename_block};
  tir_visit_stmt(&v, f->body);
}

static tir_func_t *workload(const char *name) {
  tir_func_t *f = NULL;
  assert_int_equal(tir_workload_build(&f, name, NULL, 0, DEFAULT_DTYPE, DEFAULT_DTYPE), MLC_OK);
  return f;
}

/* ------------------------------------------------------------------------ */
/* Tests                                                                     */
/* ------------------------------------------------------------------------ */

static void test_builtin_workload_keys_are_pinned(void **state) {
  (void)state;
  int n;
  const tir_workload_desc_t *descs = tir_workloads(&n);
  assert_int_equal(n, (int)(sizeof golden / sizeof golden[0]));
  for (int i = 0; i < n; i++) {
    assert_string_equal(descs[i].name, golden[i].workload);
    tir_func_t *f = workload(descs[i].name);
    char hex[17];
    tir_func_key_hex(f, hex);
    if (strcmp(hex, golden[i].key) != 0)
      fail_msg("%s: key %s, pinned %s (re-pin only for a deliberate change)", descs[i].name, hex,
               golden[i].key);
    tir_func_free(f);
  }
}

static void test_key_hex_is_sixteen_lowercase_digits_of_the_key(void **state) {
  (void)state;
  mm_opts_t o = mm_defaults();
  tir_func_t *f = build_mm(&o);
  char hex[17], expect[17];
  assert_ptr_equal(tir_func_key_hex(f, hex), hex);
  assert_int_equal(strlen(hex), 16);
  for (int i = 0; i < 16; i++) assert_non_null(strchr("0123456789abcdef", hex[i]));
  mlc_hash_hex(tir_func_key(f), expect);
  assert_string_equal(hex, expect);
  assert_true(tir_func_key(f) != 0);
  tir_func_free(f);
}

static void test_key_is_the_same_for_every_build_of_the_same_function(void **state) {
  (void)state;
  mm_opts_t o = mm_defaults();
  uint64_t k = mm_key(&o);
  for (int i = 0; i < 5; i++) assert_true(mm_key(&o) == k); /* fresh arenas, other addresses */
}

static void test_key_ignores_every_name(void **state) {
  (void)state;
  mm_opts_t x = mm_defaults(), y = mm_defaults();
  const char *other[9] = {"P", "Q", "R", "a", "b", "c", "va", "vb", "vc"};
  memcpy(y.names, other, sizeof other);
  y.func = "another_function"; /* and global_symbol with it */
  assert_true(mm_key(&x) == mm_key(&y));
}

static void test_key_survives_clone_and_renaming_of_every_workload(void **state) {
  (void)state;
  int n;
  const tir_workload_desc_t *descs = tir_workloads(&n);
  for (int i = 0; i < n; i++) {
    tir_func_t *f = workload(descs[i].name);
    tir_func_t *c = tir_func_clone(f);
    assert_true(tir_func_key(f) == tir_func_key(c));
    rename_all(c);
    assert_true(tir_func_key(f) == tir_func_key(c));
    tir_func_free(f);
    tir_func_free(c);
  }
}

static void test_builtin_workloads_have_distinct_keys(void **state) {
  (void)state;
  int n;
  const tir_workload_desc_t *descs = tir_workloads(&n);
  uint64_t keys[64];
  assert_true(n <= 64);
  for (int i = 0; i < n; i++) {
    tir_func_t *f = workload(descs[i].name);
    keys[i] = tir_func_key(f);
    for (int j = 0; j < i; j++) assert_true(keys[i] != keys[j]);
    tir_func_free(f);
  }
}

/* Each variant differs from the default matmul in exactly one thing. */
static void test_key_changes_with_anything_but_names(void **state) {
  (void)state;
  mm_opts_t base = mm_defaults();
  uint64_t k0 = mm_key(&base);
  mm_opts_t v[10];
  const char *what[10] = {"shape", "dtype", "operator", "block name", "loop order",
                          "loop kind", "scope", "annotation", "annotation key", "reduction extent"};
  for (int i = 0; i < 10; i++) v[i] = base;
  v[0].n = 64;
  v[1].dtype = tir_dt_FLOAT16();
  v[2].combine = TIR_MAX;
  v[3].block = "D";
  v[4].swap_ij = true;
  v[5].outer_kind = TIR_FOR_PARALLEL;
  v[6].c_scope = "shared";
  v[7].annot_key = "pragma_auto_unroll_max_step";
  v[8].annot_key = "pragma_unroll_explicit";
  v[9].k = 127;
  uint64_t keys[10];
  for (int i = 0; i < 10; i++) {
    keys[i] = mm_key(&v[i]);
    if (keys[i] == k0) fail_msg("a different %s gives the same key", what[i]);
    for (int j = 0; j < i; j++)
      if (keys[i] == keys[j]) fail_msg("%s and %s variants collide", what[i], what[j]);
  }
}

static void test_key_changes_with_function_attributes_but_not_global_symbol(void **state) {
  (void)state;
  mm_opts_t o = mm_defaults();
  tir_func_t *f = build_mm(&o);
  uint64_t k0 = tir_func_key(f);
  f->attrs[0].value = tir_string(f->arena, "some_other_symbol");
  assert_true(tir_func_key(f) == k0);
  f->nattrs = 1; /* drop tir.noalias */
  assert_true(tir_func_key(f) != k0);
  f->nattrs = 2;
  f->attrs[1].value = tir_bool(f->arena, false);
  assert_true(tir_func_key(f) != k0);
  tir_func_free(f);
}

static void test_key_separates_float_bit_patterns(void **state) {
  (void)state;
  mm_opts_t o = mm_defaults();
  tir_func_t *f = build_mm(&o);
  tir_block_t *b = tir_func_root_block(f)->body->u.loop.body->u.loop.body->u.loop.body->u.realize.block;
  uint64_t k0 = tir_func_key(f);
  b->init->u.store.value = tir_float(f->arena, tir_dt_FLOAT32(), -0.0);
  assert_true(tir_func_key(f) != k0);
  b->init->u.store.value = tir_float(f->arena, tir_dt_FLOAT32(), 0.0);
  assert_true(tir_func_key(f) == k0);
  tir_func_free(f);
}

static void test_structurally_equal_workloads_at_other_shapes_share_keys(void **state) {
  (void)state;
  /* Equal functions have equal keys; a shape option changes both. */
  int64_t shape[3] = {64, 32, 16};
  tir_func_t *a = NULL, *b = NULL, *c = workload("GMM");
  assert_int_equal(tir_workload_build(&a, "GMM", shape, 3, DEFAULT_DTYPE, DEFAULT_DTYPE), MLC_OK);
  assert_int_equal(tir_workload_build(&b, "GMM", shape, 3, DEFAULT_DTYPE, DEFAULT_DTYPE), MLC_OK);
  assert_true(tir_func_equal(a, b, NULL, 0));
  assert_true(tir_func_key(a) == tir_func_key(b));
  assert_false(tir_func_equal(a, c, NULL, 0));
  assert_true(tir_func_key(a) != tir_func_key(c));
  tir_func_free(a);
  tir_func_free(b);
  tir_func_free(c);
}

static void test_printed_and_parsed_workloads_keep_their_keys(void **state) {
  (void)state;
  /* `mlc-tir hash FILE` on a printed workload gives the workload's key. */
  int n;
  const tir_workload_desc_t *descs = tir_workloads(&n);
  for (int i = 0; i < n; i++) {
    tir_func_t *f = workload(descs[i].name), *g = NULL;
    char *text = tir_print_func(f);
    assert_non_null(text);
    tir_parse_error_t err;
    if (tir_parse_func(&g, text, strlen(text), descs[i].name, &err) != MLC_OK)
      fail_msg("%s: %s", descs[i].name, mlc_error_last());
    char why[256];
    if (!tir_func_equal(f, g, why, sizeof why)) fail_msg("%s: %s", descs[i].name, why);
    assert_true(tir_func_key(f) == tir_func_key(g));
    mlc_free(text);
    tir_func_free(f);
    tir_func_free(g);
  }
}

static void test_out_of_memory_gives_key_zero_and_an_error(void **state) {
  (void)state;
  mm_opts_t o = mm_defaults();
  tir_func_t *f = build_mm(&o);
  uint64_t k0 = tir_func_key(f);
  mlc_alloc_fail_after(0);
  uint64_t k = tir_func_key(f);
  mlc_alloc_fail_after(-1);
  assert_true(k == 0);
  assert_int_equal(mlc_error_last_code(), MLC_ENOMEM);
  assert_true(tir_func_key(f) == k0);
  tir_func_free(f);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_builtin_workload_keys_are_pinned),
      cmocka_unit_test(test_key_hex_is_sixteen_lowercase_digits_of_the_key),
      cmocka_unit_test(test_key_is_the_same_for_every_build_of_the_same_function),
      cmocka_unit_test(test_key_ignores_every_name),
      cmocka_unit_test(test_key_survives_clone_and_renaming_of_every_workload),
      cmocka_unit_test(test_builtin_workloads_have_distinct_keys),
      cmocka_unit_test(test_key_changes_with_anything_but_names),
      cmocka_unit_test(test_key_changes_with_function_attributes_but_not_global_symbol),
      cmocka_unit_test(test_key_separates_float_bit_patterns),
      cmocka_unit_test(test_structurally_equal_workloads_at_other_shapes_share_keys),
      cmocka_unit_test(test_printed_and_parsed_workloads_keep_their_keys),
      cmocka_unit_test(test_out_of_memory_gives_key_zero_and_an_error),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
