/*
 * test_node.c - builders, name tables, the visitor, the copy-on-write mutator,
 * substitution and the deep clone.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "tir/tir.h"

/* C[i] = A[i] + B[i] over i in [0, 16), inside a root block: one block "C". */
static tir_func_t *make_add(void) {
  tir_func_t *f = tir_func_new("add");
  mlc_arena_t *a = f->arena;
  tir_expr_t *shape[1] = {tir_i32(a, 16)};
  tir_buffer_t *A = tir_buffer_new(a, "A", tir_dt_FLOAT32(), shape, 1, NULL);
  tir_buffer_t *B = tir_buffer_new(a, "B", tir_dt_FLOAT32(), shape, 1, NULL);
  tir_buffer_t *C = tir_buffer_new(a, "C", tir_dt_FLOAT32(), shape, 1, NULL);
  tir_var_t *params[3] = {A->data, B->data, C->data};
  tir_buffer_t *bmap[3] = {A, B, C};
  f->nparams = 3;
  f->params = mlc_arena_memdup(a, params, sizeof(params));
  f->buffer_map = mlc_arena_memdup(a, bmap, sizeof(bmap));

  tir_var_t *i = tir_var(a, "i", tir_dt_INT32());
  tir_var_t *vi = tir_var(a, "vi", tir_dt_INT32());
  tir_block_t *blk = tir_block_new(a, "C");
  blk->niter_vars = 1;
  blk->iter_vars = mlc_arena_alloc(a, sizeof(tir_iter_var_t));
  blk->iter_vars[0] = (tir_iter_var_t){vi, {tir_i32(a, 0), tir_i32(a, 16)}, TIR_ITER_SPATIAL};
  tir_expr_t *idx[1] = {vi};
  blk->body = tir_store(a, C, tir_binary(a, TIR_ADD, tir_load(a, A, idx, 1), tir_load(a, B, idx, 1)), idx, 1);
  tir_expr_t *vals[1] = {i};
  tir_stmt_t *loop = tir_for(a, i, tir_i32(a, 0), tir_i32(a, 16), TIR_FOR_SERIAL,
                             tir_block_realize(a, vals, 1, NULL, blk));
  tir_block_t *root = tir_block_new(a, "root");
  root->body = loop;
  f->body = tir_block_realize(a, NULL, 0, NULL, root);
  return f;
}

static void test_name_tables_follow_the_lists(void **state) {
  (void)state;
  assert_string_equal(tir_expr_kind_name(TIR_FLOOR_DIV), "FloorDiv");
  assert_int_equal(tir_expr_kind_shape(TIR_ADD), TIR_SHAPE_BINARY);
  assert_string_equal(tir_expr_kind_pyop(TIR_FLOOR_MOD), "%");
  assert_string_equal(tir_stmt_kind_name(TIR_BLOCK_REALIZE), "BlockRealize");
  assert_string_equal(tir_for_kind_name(TIR_FOR_UNROLLED), "unroll");
  assert_int_equal(tir_iter_type_letter(TIR_ITER_REDUCE), 'R');
  tir_op_t op;
  assert_int_equal(tir_op_lookup(&op, "if_then_else", 12), MLC_OK);
  assert_int_equal(op, TIR_OP_IF_THEN_ELSE);
  assert_int_equal(tir_op_nargs(op), 3);
  assert_int_equal(tir_op_lookup(&op, "exp", 2), MLC_ENOTFOUND); /* prefix is not a match */
  assert_false(tir_op_is_pure(TIR_OP_TVM_STORAGE_SYNC));
}

static void test_dtype_parse_and_print(void **state) {
  (void)state;
  tir_dtype_t t;
  char buf[24];
  assert_int_equal(tir_dtype_parse(&t, "float32x8", 9), MLC_OK);
  assert_true(tir_dtype_eq(t, tir_dtype(TIR_CODE_FLOAT, 32, 8)));
  assert_string_equal(tir_dtype_str(t, buf), "float32x8");
  assert_int_equal(tir_dtype_parse(&t, "bool", 4), MLC_OK);
  assert_true(tir_dtype_is_bool(t));
  assert_int_equal(tir_dtype_parse(&t, "bfloat16", 8), MLC_OK);
  assert_string_equal(tir_dtype_str(t, buf), "bfloat16");
  assert_int_equal(tir_dtype_bytes(t), 2);
  assert_int_equal(tir_dtype_parse(&t, "float33", 7), MLC_EINVAL);
  assert_string_equal(mlc_error_last(), "unknown dtype 'float33'");
  assert_int_equal(tir_dtype_parse(&t, "int8x0", 6), MLC_EINVAL);
  assert_int_equal(tir_dtype_parse(&t, "x4", 2), MLC_EINVAL);
}

/* Reference rounding of float to half by exhaustive search over all halves:
 * the nearest representable value, ties to the even mantissa. */
static uint16_t half_by_search(float f) {
  uint16_t best = 0;
  double best_err = -1;
  for (uint32_t h = 0; h < 0x7c00u; h++) { /* finite non-negative halves */
    double v = tir_f16_to_f32((uint16_t)h);
    double err = v > fabsf(f) ? v - fabsf(f) : fabsf(f) - v;
    if (best_err < 0 || err < best_err || (err == best_err && (h & 1u) == 0)) {
      best = (uint16_t)h;
      best_err = err;
    }
  }
  /* Values past the largest half by at least half an ulp overflow to inf. */
  if (fabsf(f) >= 65520.0f) best = 0x7c00u;
  return (uint16_t)(best | (f < 0 ? 0x8000u : 0));
}

static void test_f16_rounds_to_nearest_even(void **state) {
  (void)state;
  assert_int_equal(tir_f32_to_f16(1.0f), 0x3c00);
  assert_int_equal(tir_f32_to_f16(-2.0f), 0xc000);
  assert_int_equal(tir_f32_to_f16(65504.0f), 0x7bff);
  assert_int_equal(tir_f32_to_f16(65520.0f), 0x7c00);           /* rounds up to inf */
  assert_int_equal(tir_f32_to_f16(1.0f + 1.0f / 2048), 0x3c00); /* tie -> even */
  assert_int_equal(tir_f32_to_f16(1.0f + 3.0f / 2048), 0x3c02); /* tie -> even (up) */
  assert_int_equal(tir_f32_to_f16(5.9604645e-08f), 0x0001);     /* smallest subnormal */
  assert_int_equal(tir_f32_to_f16(2.9802322e-08f), 0x0000);     /* half of it: tie to 0 */
  assert_true(isnan(tir_f16_to_f32(tir_f32_to_f16(NAN))));
  /* Every half converts to float and back exactly. */
  for (uint32_t h = 0; h < 0x10000u; h++) {
    if ((h & 0x7c00u) == 0x7c00u && (h & 0x3ffu)) continue; /* NaNs */
    assert_int_equal(tir_f32_to_f16(tir_f16_to_f32((uint16_t)h)), h);
  }
  /* Pseudo-random floats agree with the exhaustive-search reference. */
  mlc_rng_t rng;
  mlc_rng_seed(&rng, 7);
  for (int k = 0; k < 300; k++) {
    float f = (float)((mlc_rng_uniform(&rng) - 0.5) * 140000.0 * pow(10, -(double)mlc_rng_below(&rng, 9)));
    assert_int_equal(tir_f32_to_f16(f), half_by_search(f));
  }
}

static void test_bf16_rounds_to_nearest_even(void **state) {
  (void)state;
  assert_int_equal(tir_f32_to_bf16(1.0f), 0x3f80);
  float tie_down, tie_up;
  uint32_t bits = 0x3f808000u; /* 1 + 2^-8: exactly between 0x3f80 and 0x3f81 */
  memcpy(&tie_down, &bits, 4);
  bits = 0x3f818000u; /* between 0x3f81 and 0x3f82 */
  memcpy(&tie_up, &bits, 4);
  assert_int_equal(tir_f32_to_bf16(tie_down), 0x3f80);
  assert_int_equal(tir_f32_to_bf16(tie_up), 0x3f82);
  assert_true(isnan(tir_bf16_to_f32(tir_f32_to_bf16(NAN))));
  assert_float_equal(tir_bf16_to_f32(0x4049), 3.140625, 0);
}

static void test_builders_type_and_fold_immediates(void **state) {
  (void)state;
  mlc_arena_t *a = mlc_arena_new();
  tir_expr_t *x = tir_int(a, tir_dt_INT8(), 200); /* wraps like an int8 would */
  assert_int_equal(x->u.int_value, -56);
  tir_expr_t *u = tir_int(a, tir_dt_UINT8(), -1);
  assert_int_equal(u->u.int_value, 255);
  tir_expr_t *f = tir_float(a, tir_dt_FLOAT32(), 0.1);
  assert_true(f->u.float_value == (double)0.1f);
  tir_expr_t *h = tir_float(a, tir_dt_FLOAT16(), 0.1);
  assert_true(h->u.float_value == (double)tir_f16_to_f32(tir_f32_to_f16(0.1f)));
  tir_var_t *i = tir_var(a, "i", tir_dtype(TIR_CODE_INT, 32, 4));
  tir_expr_t *lt = tir_binary(a, TIR_LT, i, i);
  assert_true(tir_dtype_eq(lt->dtype, tir_dtype(TIR_CODE_UINT, 1, 4)));
  tir_expr_t *shape[2] = {tir_i32(a, 4), tir_i32(a, 8)};
  tir_buffer_t *B = tir_buffer_new(a, "B", tir_dt_FLOAT32(), shape, 2, NULL);
  assert_string_equal(B->scope, "global");
  tir_expr_t *idx[2] = {tir_i32(a, 0), tir_ramp(a, tir_i32(a, 0), tir_i32(a, 1), 8)};
  tir_expr_t *ld = tir_load(a, B, idx, 2);
  assert_true(tir_dtype_eq(ld->dtype, tir_dtype(TIR_CODE_FLOAT, 32, 8)));
  /* Nested sequences flatten; a sequence of one is its statement. */
  tir_stmt_t *e1 = tir_evaluate(a, tir_i32(a, 1)), *e2 = tir_evaluate(a, tir_i32(a, 2));
  tir_stmt_t *inner[2] = {e1, e2};
  tir_stmt_t *outer[2] = {tir_seq(a, inner, 2), e1};
  tir_stmt_t *s = tir_seq(a, outer, 2);
  assert_int_equal(s->kind, TIR_SEQ);
  assert_int_equal(s->u.seq.n, 3);
  assert_ptr_equal(tir_seq(a, inner, 1), e1);
  mlc_arena_free(a);
}

typedef struct {
  tir_visitor_t base;
  int vars, loads, blocks, stores;
} counter_t;

static bool count_expr(tir_visitor_t *v, tir_expr_t *e) {
  counter_t *c = (counter_t *)v;
  c->vars += e->kind == TIR_VAR;
  c->loads += e->kind == TIR_BUFFER_LOAD;
  return true;
}

static bool count_stmt(tir_visitor_t *v, tir_stmt_t *s) {
  ((counter_t *)v)->stores += s->kind == TIR_BUFFER_STORE;
  return true;
}

static bool count_block(tir_visitor_t *v, tir_block_t *b, tir_stmt_t *realize) {
  ((counter_t *)v)->blocks++;
  return true;
}

static void test_visitor_reaches_every_node(void **state) {
  (void)state;
  tir_func_t *f = make_add();
  counter_t c = {{.expr = count_expr, .stmt = count_stmt, .block = count_block}, 0, 0, 0, 0};
  tir_visit_stmt(&c.base, f->body);
  assert_int_equal(c.blocks, 2);
  assert_int_equal(c.loads, 2);
  assert_int_equal(c.stores, 1);
  assert_int_equal(c.vars, 1 /* binding i */ + 2 /* load indices */ + 1 /* store index */);
  tir_func_free(f);
}

static tir_expr_t *double_ints(tir_mutator_t *m, tir_expr_t *e) {
  if (e->kind == TIR_INT_IMM && e->u.int_value == 16) return tir_i32(m->arena, 32);
  return tir_mutate_expr_children(m, e);
}

static void test_mutator_shares_unchanged_nodes(void **state) {
  (void)state;
  tir_func_t *f = make_add();
  tir_mutator_t identity = {.arena = f->arena};
  assert_ptr_equal(tir_mutate_stmt(&identity, f->body), f->body);

  tir_mutator_t m = {.arena = f->arena, .expr = double_ints};
  tir_stmt_t *out = tir_mutate_stmt(&m, f->body);
  assert_ptr_not_equal(out, f->body);
  tir_stmt_t *loop = out->u.realize.block->body;
  assert_int_equal(loop->kind, TIR_FOR);
  assert_true(tir_is_const_int(loop->u.loop.extent, 32));
  /* The block "C" had 16 in its iter var domain: rewritten too. */
  tir_block_t *c = loop->u.loop.body->u.realize.block;
  assert_true(tir_is_const_int(c->iter_vars[0].dom.extent, 32));
  /* The original is untouched, and the store (no 16 inside) is shared. */
  tir_stmt_t *old_loop = f->body->u.realize.block->body;
  assert_true(tir_is_const_int(old_loop->u.loop.extent, 16));
  assert_ptr_equal(c->body, old_loop->u.loop.body->u.realize.block->body);
  tir_func_free(f);
}

static void test_substitute_replaces_uses(void **state) {
  (void)state;
  mlc_arena_t *a = mlc_arena_new();
  tir_var_t *i = tir_var(a, "i", tir_dt_INT32()), *j = tir_var(a, "j", tir_dt_INT32());
  tir_expr_t *e = tir_binary(a, TIR_MUL, tir_binary(a, TIR_ADD, i, j), i);
  tir_var_map_t map = {0};
  tir_var_map_set(a, &map, i, tir_i32(a, 3));
  tir_expr_t *out = tir_substitute_expr(a, e, &map);
  assert_true(tir_is_const_int(out->u.bin.b, 3));
  assert_true(tir_is_const_int(out->u.bin.a->u.bin.a, 3));
  assert_ptr_equal(out->u.bin.a->u.bin.b, j);
  assert_true(tir_expr_uses_var(e, i));
  assert_false(tir_expr_uses_var(out, i));
  assert_true(tir_expr_uses_var(out, j));
  tir_var_map_set(a, &map, i, j); /* rebinding replaces */
  assert_int_equal(map.n, 1);
  assert_ptr_equal(tir_var_map_get(&map, i), j);
  mlc_arena_free(a);
}

static void test_clone_is_deep_with_fresh_identities(void **state) {
  (void)state;
  tir_func_t *f = make_add();
  tir_func_t *g = tir_func_clone(f);
  assert_non_null(g);
  assert_ptr_not_equal(g->arena, f->arena);
  assert_int_equal(g->nparams, 3);
  assert_ptr_not_equal(g->buffer_map[0], f->buffer_map[0]);
  assert_string_equal(g->buffer_map[0]->name, "A");
  /* The param is the buffer's data var in both. */
  assert_ptr_equal(g->params[0], g->buffer_map[0]->data);
  tir_block_t *cb = g->body->u.realize.block->body->u.loop.body->u.realize.block;
  tir_stmt_t *store = cb->body;
  assert_ptr_equal(store->u.store.buffer, g->buffer_map[2]);
  assert_ptr_equal(store->u.store.indices[0], cb->iter_vars[0].var);
  tir_func_free(f); /* the clone must not point into f's arena */
  assert_string_equal(cb->name, "C");
  assert_true(tir_is_const_int(cb->iter_vars[0].dom.extent, 16));
  tir_func_free(g);
}

static void test_clone_fails_cleanly_without_memory(void **state) {
  (void)state;
  tir_func_t *f = make_add();
  int failures = 0;
  for (long n = 0; n < 200; n++) {
    mlc_alloc_fail_after(n);
    tir_func_t *g = tir_func_clone(f);
    mlc_alloc_fail_after(-1);
    if (!g) {
      failures++;
      continue;
    }
    tir_func_free(g);
    break;
  }
  assert_true(failures >= 1);
  tir_func_free(f);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_name_tables_follow_the_lists),
      cmocka_unit_test(test_dtype_parse_and_print),
      cmocka_unit_test(test_f16_rounds_to_nearest_even),
      cmocka_unit_test(test_bf16_rounds_to_nearest_even),
      cmocka_unit_test(test_builders_type_and_fold_immediates),
      cmocka_unit_test(test_visitor_reaches_every_node),
      cmocka_unit_test(test_mutator_shares_unchanged_nodes),
      cmocka_unit_test(test_substitute_replaces_uses),
      cmocka_unit_test(test_clone_is_deep_with_fresh_identities),
      cmocka_unit_test(test_clone_fails_cleanly_without_memory),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
