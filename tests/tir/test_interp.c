/*
 * test_interp.c - the reference interpreter on whole programs: matmul, conv2d
 * with a padding block, softmax, layernorm, vector loads and stores, strided
 * match_buffer views, thread-bound loops with a shared-memory cache, T.where
 * predicates, poison of fresh allocations, symbolic shapes, and the exact
 * error messages of failing programs.
 *
 * Programs are built with the builders (through the small helpers below);
 * expected results are computed by hand or by a direct C loop, never by the
 * interpreter itself.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "tir/tir.h"

/* ------------------------------------------------------------------------ */
/* Builder helpers: the arena of the function being built is `A`.            */
/* ------------------------------------------------------------------------ */

static mlc_arena_t *A;

#define NEXPR(...) ((int)(sizeof((tir_expr_t *[]){__VA_ARGS__}) / sizeof(tir_expr_t *)))
#define NSTMT(...) ((int)(sizeof((tir_stmt_t *[]){__VA_ARGS__}) / sizeof(tir_stmt_t *)))
#define LD(b, ...) tir_load(A, (b), (tir_expr_t *[]){__VA_ARGS__}, NEXPR(__VA_ARGS__))
#define ST(b, v, ...) tir_store(A, (b), (v), (tir_expr_t *[]){__VA_ARGS__}, NEXPR(__VA_ARGS__))
#define SEQ(...) tir_seq(A, (tir_stmt_t *[]){__VA_ARGS__}, NSTMT(__VA_ARGS__))
#define BIN(k, x, y) tir_binary(A, TIR_##k, (x), (y))
#define ADD(x, y) BIN(ADD, x, y)
#define SUB(x, y) BIN(SUB, x, y)
#define MUL(x, y) BIN(MUL, x, y)
#define I(v) tir_i32(A, (v))
#define F32(v) tir_float(A, tir_dt_FLOAT32(), (v))
#define CALL(t, op, ...) tir_call(A, (t), TIR_OP_##op, (tir_expr_t *[]){__VA_ARGS__}, NEXPR(__VA_ARGS__))

static tir_var_t *var(const char *name) { return tir_var(A, name, tir_dt_INT32()); }

static tir_func_t *fn_begin(const char *name) {
  tir_func_t *f = tir_func_new(name);
  assert_non_null(f);
  A = f->arena;
  return f;
}

static tir_buffer_t *buffer(const char *name, tir_dtype_t t, int ndim, const int64_t *dims) {
  tir_expr_t *shape[TIR_MAX_DIMS];
  for (int k = 0; k < ndim; k++) shape[k] = I(dims[k]);
  return tir_buffer_new(A, name, t, shape, ndim, "global");
}
#define BUF(name, t, ...) \
  buffer((name), (t), (int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)), (int64_t[]){__VA_ARGS__})

/* Appends a parameter: a buffer (its data var is the handle) or a scalar. */
static void fn_param(tir_func_t *f, tir_buffer_t *b, tir_var_t *scalar) {
  f->params = mlc_arena_grow(A, f->params, (size_t)f->nparams, (size_t)f->nparams + 1, sizeof(tir_var_t *));
  f->buffer_map = mlc_arena_grow(A, f->buffer_map, (size_t)f->nparams, (size_t)f->nparams + 1,
                                 sizeof(tir_buffer_t *));
  f->params[f->nparams] = b ? b->data : scalar;
  f->buffer_map[f->nparams] = b;
  f->nparams++;
}

/* The body inside a root block that allocates `allocs`. */
static void fn_root(tir_func_t *f, tir_stmt_t *body, int nallocs, tir_buffer_t **allocs) {
  tir_block_t *root = tir_block_new(A, "root");
  root->body = body;
  root->nalloc_buffers = nallocs;
  root->alloc_buffers = nallocs ? mlc_arena_memdup(A, allocs, sizeof(*allocs) * (size_t)nallocs) : NULL;
  f->body = tir_block_realize(A, NULL, 0, NULL, root);
}

static tir_stmt_t *loop(tir_var_t *v, int64_t extent, tir_stmt_t *body) {
  return tir_for(A, v, I(0), I(extent), TIR_FOR_SERIAL, body);
}

static tir_stmt_t *thread_loop(tir_var_t *v, int64_t extent, const char *tag, tir_stmt_t *body) {
  tir_stmt_t *s = tir_for(A, v, I(0), I(extent), TIR_FOR_THREAD_BINDING, body);
  s->u.loop.thread_tag = tag;
  return s;
}

/* An iter var with domain [0, extent), its type letter and its binding. */
typedef struct {
  tir_var_t *var;
  int64_t extent;
  char type;
  tir_expr_t *bind;
} ivb_t;
#define IV(v, extent, type, bind) ((ivb_t){(v), (extent), (type), (bind)})

static tir_block_t *block_node(const char *name, tir_stmt_t *init, tir_stmt_t *body, int n,
                               const ivb_t *ivs) {
  tir_block_t *b = tir_block_new(A, name);
  b->niter_vars = n;
  b->iter_vars = n ? mlc_arena_alloc(A, sizeof(tir_iter_var_t) * (size_t)n) : NULL;
  for (int k = 0; k < n; k++)
    b->iter_vars[k] = (tir_iter_var_t){ivs[k].var, {I(0), I(ivs[k].extent)},
                                       ivs[k].type == 'R' ? TIR_ITER_REDUCE : TIR_ITER_SPATIAL};
  b->init = init;
  b->body = body;
  return b;
}

static tir_stmt_t *block_(const char *name, tir_expr_t *pred, tir_stmt_t *init, tir_stmt_t *body,
                          int n, const ivb_t *ivs) {
  tir_block_t *b = block_node(name, init, body, n, ivs);
  tir_expr_t *binds[16];
  for (int k = 0; k < n; k++) binds[k] = ivs[k].bind;
  return tir_block_realize(A, binds, n, pred, b);
}
#define NIV(...) ((int)(sizeof((ivb_t[]){__VA_ARGS__}) / sizeof(ivb_t)))
#define BLOCK(name, init, body, ...) block_((name), NULL, (init), (body), NIV(__VA_ARGS__), (ivb_t[]){__VA_ARGS__})
#define BLOCK_WHERE(name, pred, body, ...) \
  block_((name), (pred), NULL, (body), NIV(__VA_ARGS__), (ivb_t[]){__VA_ARGS__})

static tir_arg_t arg(void *data, tir_dtype_t t, int ndim, const int64_t *dims) {
  tir_arg_t a;
  memset(&a, 0, sizeof(a));
  a.data = data;
  a.dtype = t;
  a.ndim = ndim;
  for (int k = 0; k < ndim; k++) a.shape[k] = dims[k];
  return a;
}
#define ARG(data, t, ...) \
  arg((data), (t), (int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)), (int64_t[]){__VA_ARGS__})

static void expect_error(const tir_func_t *f, tir_arg_t *args, int nargs, const char *message) {
  assert_int_equal(tir_interp_run(f, args, nargs), MLC_ERUNTIME);
  assert_string_equal(mlc_error_last(), message);
}

/* ------------------------------------------------------------------------ */
/* Matmul                                                                    */
/* ------------------------------------------------------------------------ */

/* C[i, j] = sum_k A[i, k] * B[k, j], block "C" with init. */
static tir_func_t *make_matmul(int64_t M, int64_t N, int64_t K) {
  tir_func_t *f = fn_begin("matmul");
  tir_buffer_t *a = BUF("A", tir_dt_FLOAT32(), M, K), *b = BUF("B", tir_dt_FLOAT32(), K, N);
  tir_buffer_t *c = BUF("C", tir_dt_FLOAT32(), M, N);
  fn_param(f, a, NULL);
  fn_param(f, b, NULL);
  fn_param(f, c, NULL);
  tir_var_t *i = var("i"), *j = var("j"), *k = var("k");
  tir_var_t *vi = var("vi"), *vj = var("vj"), *vk = var("vk");
  tir_stmt_t *init = ST(c, F32(0), vi, vj);
  tir_stmt_t *body = ST(c, ADD(LD(c, vi, vj), MUL(LD(a, vi, vk), LD(b, vk, vj))), vi, vj);
  tir_stmt_t *blk = BLOCK("C", init, body, IV(vi, M, 'S', i), IV(vj, N, 'S', j), IV(vk, K, 'R', k));
  fn_root(f, loop(i, M, loop(j, N, loop(k, K, blk))), 0, NULL);
  return f;
}

static void test_matmul_4x4_gives_hand_computed_product(void **state) {
  (void)state;
  tir_func_t *f = make_matmul(4, 4, 4);
  float a[16], b[16], c[16];
  for (int i = 0; i < 4; i++)
    for (int k = 0; k < 4; k++) a[i * 4 + k] = (float)(i * 4 + k + 1);
  for (int k = 0; k < 4; k++)
    for (int j = 0; j < 4; j++) b[k * 4 + j] = (float)(k - j);
  for (int n = 0; n < 16; n++) c[n] = 999.0f; /* the init block must reset these */
  tir_arg_t args[3] = {ARG(a, tir_dt_FLOAT32(), 4, 4), ARG(b, tir_dt_FLOAT32(), 4, 4),
                       ARG(c, tir_dt_FLOAT32(), 4, 4)};
  assert_int_equal(tir_interp_run(f, args, 3), MLC_OK);
  const float want[16] = {20, 10, 0, -10, 44, 18, -8, -34, 68, 26, -16, -58, 92, 34, -24, -82};
  for (int n = 0; n < 16; n++) assert_true(c[n] == want[n]);
  tir_func_free(f);
}

/* Also the speed check: the 128^3 matmul (2M block instances) must be quick. */
static void test_matmul_128_equals_float32_c_loop(void **state) {
  (void)state;
  enum { N = 128 };
  tir_func_t *f = make_matmul(N, N, N);
  static float a[N * N], b[N * N], c[N * N], want[N * N];
  for (int n = 0; n < N * N; n++) {
    a[n] = (float)((n * 7) % 13) * 0.37f - 2.0f;
    b[n] = (float)((n * 5) % 11) * 0.21f + 0.5f;
  }
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++) {
      float acc = 0.0f; /* same order as the program: float32 exactly */
      for (int k = 0; k < N; k++) acc = acc + a[i * N + k] * b[k * N + j];
      want[i * N + j] = acc;
    }
  tir_arg_t args[3] = {ARG(a, tir_dt_FLOAT32(), N, N), ARG(b, tir_dt_FLOAT32(), N, N),
                       ARG(c, tir_dt_FLOAT32(), N, N)};
  clock_t t0 = clock();
  assert_int_equal(tir_interp_run(f, args, 3), MLC_OK);
  double secs = (double)(clock() - t0) / CLOCKS_PER_SEC;
  print_message("128x128x128 matmul: %.3f s\n", secs);
  assert_memory_equal(c, want, sizeof(c));
  tir_func_free(f);
}

/* ------------------------------------------------------------------------ */
/* conv2d NCHW with a padding block                                          */
/* ------------------------------------------------------------------------ */

enum { CN = 1, CC = 2, CH = 5, CW = 5, CF = 3, CK = 3, CP = CH + 2 };

static tir_stmt_t *conv_pad_block(tir_buffer_t *x, tir_buffer_t *pad) {
  tir_var_t *n = var("n"), *c = var("c"), *h = var("h"), *w = var("w");
  tir_var_t *vn = var("vn"), *vc = var("vc"), *vh = var("vh"), *vw = var("vw");
  tir_expr_t *inside = BIN(AND, BIN(AND, BIN(LE, I(1), vh), BIN(LT, vh, I(CH + 1))),
                           BIN(AND, BIN(LE, I(1), vw), BIN(LT, vw, I(CW + 1))));
  tir_expr_t *val = CALL(tir_dt_FLOAT32(), IF_THEN_ELSE, inside,
                         LD(x, vn, vc, SUB(vh, I(1)), SUB(vw, I(1))), F32(0));
  tir_stmt_t *blk = BLOCK("pad", NULL, ST(pad, val, vn, vc, vh, vw), IV(vn, CN, 'S', n),
                          IV(vc, CC, 'S', c), IV(vh, CP, 'S', h), IV(vw, CP, 'S', w));
  return loop(n, CN, loop(c, CC, loop(h, CP, loop(w, CP, blk))));
}

static tir_stmt_t *conv_block(tir_buffer_t *pad, tir_buffer_t *wt, tir_buffer_t *out) {
  tir_var_t *n = var("n"), *ff = var("ff"), *y = var("y"), *x = var("x");
  tir_var_t *rc = var("rc"), *ry = var("ry"), *rx = var("rx");
  tir_var_t *vn = var("vn"), *vf = var("vf"), *vy = var("vy"), *vx = var("vx");
  tir_var_t *vc = var("vrc"), *vry = var("vry"), *vrx = var("vrx");
  tir_expr_t *prod = MUL(LD(pad, vn, vc, ADD(vy, vry), ADD(vx, vrx)), LD(wt, vf, vc, vry, vrx));
  tir_stmt_t *body = ST(out, ADD(LD(out, vn, vf, vy, vx), prod), vn, vf, vy, vx);
  tir_stmt_t *blk = BLOCK("conv", ST(out, F32(0), vn, vf, vy, vx), body, IV(vn, CN, 'S', n),
                          IV(vf, CF, 'S', ff), IV(vy, CH, 'S', y), IV(vx, CW, 'S', x),
                          IV(vc, CC, 'R', rc), IV(vry, CK, 'R', ry), IV(vrx, CK, 'R', rx));
  return loop(n, CN, loop(ff, CF, loop(y, CH, loop(x, CW, loop(rc, CC, loop(ry, CK, loop(rx, CK, blk)))))));
}

static void test_conv2d_with_padding_block_equals_c_loop(void **state) {
  (void)state;
  tir_func_t *f = fn_begin("conv2d");
  tir_buffer_t *x = BUF("X", tir_dt_FLOAT32(), CN, CC, CH, CW);
  tir_buffer_t *wt = BUF("W", tir_dt_FLOAT32(), CF, CC, CK, CK);
  tir_buffer_t *out = BUF("Y", tir_dt_FLOAT32(), CN, CF, CH, CW);
  tir_buffer_t *pad = BUF("pad", tir_dt_FLOAT32(), CN, CC, CP, CP);
  fn_param(f, x, NULL);
  fn_param(f, wt, NULL);
  fn_param(f, out, NULL);
  fn_root(f, SEQ(conv_pad_block(x, pad), conv_block(pad, wt, out)), 1, &pad);

  static float xs[CN][CC][CH][CW], ws[CF][CC][CK][CK], ys[CN][CF][CH][CW], want[CN][CF][CH][CW];
  for (int c = 0; c < CC; c++)
    for (int h = 0; h < CH; h++)
      for (int w = 0; w < CW; w++) xs[0][c][h][w] = (float)(c * 25 + h * 5 + w) * 0.1f - 1.0f;
  for (int o = 0; o < CF; o++)
    for (int c = 0; c < CC; c++)
      for (int h = 0; h < CK; h++)
        for (int w = 0; w < CK; w++) ws[o][c][h][w] = (float)((o + 2 * c + 3 * h + w) % 5) - 2.0f;
  for (int o = 0; o < CF; o++)
    for (int y = 0; y < CH; y++)
      for (int xx = 0; xx < CW; xx++) {
        float acc = 0.0f;
        for (int c = 0; c < CC; c++)
          for (int ry = 0; ry < CK; ry++)
            for (int rx = 0; rx < CK; rx++) {
              int h = y + ry - 1, w = xx + rx - 1;
              float v = h >= 0 && h < CH && w >= 0 && w < CW ? xs[0][c][h][w] : 0.0f;
              acc = acc + v * ws[o][c][ry][rx];
            }
        want[0][o][y][xx] = acc;
      }
  tir_arg_t args[3] = {ARG(xs, tir_dt_FLOAT32(), CN, CC, CH, CW),
                       ARG(ws, tir_dt_FLOAT32(), CF, CC, CK, CK),
                       ARG(ys, tir_dt_FLOAT32(), CN, CF, CH, CW)};
  assert_int_equal(tir_interp_run(f, args, 3), MLC_OK);
  assert_memory_equal(ys, want, sizeof(want));
  tir_func_free(f);
}

/* ------------------------------------------------------------------------ */
/* softmax and layernorm                                                     */
/* ------------------------------------------------------------------------ */

enum { SR = 4, SC = 8 };

/* for i, k: block name (S, R): init out[vi] = init; out[vi] = combine(out[vi], val). */
static tir_stmt_t *row_reduce(const char *name, tir_buffer_t *out, tir_expr_t *init,
                              tir_expr_kind_t combine, tir_expr_t *(*val)(tir_var_t *, tir_var_t *),
                              int64_t rows, int64_t cols) {
  tir_var_t *i = var("i"), *k = var("k"), *vi = var("vi"), *vk = var("vk");
  tir_stmt_t *body = ST(out, tir_binary(A, combine, LD(out, vi), val(vi, vk)), vi);
  tir_stmt_t *blk = BLOCK(name, ST(out, init, vi), body, IV(vi, rows, 'S', i), IV(vk, cols, 'R', k));
  return loop(i, rows, loop(k, cols, blk));
}

/* for i, k: block name (S, S): out[vi, vk] = val(vi, vk). */
static tir_stmt_t *elementwise(const char *name, tir_buffer_t *out,
                               tir_expr_t *(*val)(tir_var_t *, tir_var_t *), int64_t rows,
                               int64_t cols) {
  tir_var_t *i = var("i"), *k = var("k"), *vi = var("vi"), *vk = var("vk");
  tir_stmt_t *blk = BLOCK(name, NULL, ST(out, val(vi, vk), vi, vk), IV(vi, rows, 'S', i),
                          IV(vk, cols, 'S', k));
  return loop(i, rows, loop(k, cols, blk));
}

static tir_buffer_t *g_in, *g_max, *g_exp, *g_sum, *g_gamma, *g_beta;

static tir_expr_t *sm_input(tir_var_t *vi, tir_var_t *vk) { return LD(g_in, vi, vk); }
static tir_expr_t *sm_exp(tir_var_t *vi, tir_var_t *vk) {
  return CALL(tir_dt_FLOAT32(), EXP, SUB(LD(g_in, vi, vk), LD(g_max, vi)));
}
static tir_expr_t *sm_exp_load(tir_var_t *vi, tir_var_t *vk) { return LD(g_exp, vi, vk); }
static tir_expr_t *sm_norm(tir_var_t *vi, tir_var_t *vk) {
  return BIN(DIV, LD(g_exp, vi, vk), LD(g_sum, vi));
}

static void test_softmax_matches_c_within_1e6(void **state) {
  (void)state;
  tir_func_t *f = fn_begin("softmax");
  g_in = BUF("A", tir_dt_FLOAT32(), SR, SC);
  tir_buffer_t *out = BUF("T_softmax_norm", tir_dt_FLOAT32(), SR, SC);
  g_max = BUF("T_softmax_maxelem", tir_dt_FLOAT32(), SR);
  g_exp = BUF("T_softmax_exp", tir_dt_FLOAT32(), SR, SC);
  g_sum = BUF("T_softmax_expsum", tir_dt_FLOAT32(), SR);
  fn_param(f, g_in, NULL);
  fn_param(f, out, NULL);
  tir_stmt_t *body = SEQ(row_reduce("T_softmax_maxelem", g_max, F32(-3.4028234663852886e38), TIR_MAX, sm_input, SR, SC),
                         elementwise("T_softmax_exp", g_exp, sm_exp, SR, SC),
                         row_reduce("T_softmax_expsum", g_sum, F32(0), TIR_ADD, sm_exp_load, SR, SC),
                         elementwise("T_softmax_norm", out, sm_norm, SR, SC));
  tir_buffer_t *allocs[3] = {g_max, g_exp, g_sum};
  fn_root(f, body, 3, allocs);

  float a[SR][SC], got[SR][SC];
  for (int i = 0; i < SR; i++)
    for (int k = 0; k < SC; k++) a[i][k] = (float)((i * 3 + k * 5) % 7) * 0.9f - 2.5f;
  tir_arg_t args[2] = {ARG(a, tir_dt_FLOAT32(), SR, SC), ARG(got, tir_dt_FLOAT32(), SR, SC)};
  assert_int_equal(tir_interp_run(f, args, 2), MLC_OK);
  for (int i = 0; i < SR; i++) {
    float m = -INFINITY, sum = 0.0f, e[SC];
    for (int k = 0; k < SC; k++) m = fmaxf(m, a[i][k]);
    for (int k = 0; k < SC; k++) sum += (e[k] = expf(a[i][k] - m));
    for (int k = 0; k < SC; k++) assert_true(fabsf(got[i][k] - e[k] / sum) <= 1e-6f * (e[k] / sum));
  }
  tir_func_free(f);
}

enum { LR = 3, LC = 16 };

static tir_expr_t *ln_square(tir_var_t *vi, tir_var_t *vk) {
  return MUL(LD(g_in, vi, vk), LD(g_in, vi, vk));
}
/* (x - mean) * rsqrt(var + eps) * gamma + beta, mean = sum / n, var = sq / n - mean^2 */
static tir_expr_t *ln_out(tir_var_t *vi, tir_var_t *vk) {
  tir_expr_t *mean = BIN(DIV, LD(g_sum, vi), F32(LC));
  tir_expr_t *var_ = SUB(BIN(DIV, LD(g_max, vi), F32(LC)), MUL(mean, mean));
  tir_expr_t *norm = MUL(SUB(LD(g_in, vi, vk), mean), CALL(tir_dt_FLOAT32(), RSQRT, ADD(var_, F32(1e-5))));
  return ADD(MUL(norm, LD(g_gamma, vk)), LD(g_beta, vk));
}

static void test_layernorm_matches_c_within_1e6(void **state) {
  (void)state;
  tir_func_t *f = fn_begin("layernorm");
  g_in = BUF("A", tir_dt_FLOAT32(), LR, LC);
  g_gamma = BUF("gamma", tir_dt_FLOAT32(), LC);
  g_beta = BUF("beta", tir_dt_FLOAT32(), LC);
  tir_buffer_t *out = BUF("T_layer_norm", tir_dt_FLOAT32(), LR, LC);
  g_sum = BUF("A_red", tir_dt_FLOAT32(), LR);
  g_max = BUF("A_sq_red", tir_dt_FLOAT32(), LR); /* the sum of squares */
  fn_param(f, g_in, NULL);
  fn_param(f, g_gamma, NULL);
  fn_param(f, g_beta, NULL);
  fn_param(f, out, NULL);
  tir_stmt_t *body = SEQ(row_reduce("A_red", g_sum, F32(0), TIR_ADD, sm_input, LR, LC),
                         row_reduce("A_sq_red", g_max, F32(0), TIR_ADD, ln_square, LR, LC),
                         elementwise("T_layer_norm", out, ln_out, LR, LC));
  tir_buffer_t *allocs[2] = {g_sum, g_max};
  fn_root(f, body, 2, allocs);

  float a[LR][LC], gamma[LC], beta[LC], got[LR][LC];
  for (int k = 0; k < LC; k++) {
    gamma[k] = 0.5f + (float)k * 0.125f;
    beta[k] = (float)(k % 3) - 1.0f;
    for (int i = 0; i < LR; i++) a[i][k] = (float)((i * 7 + k * 3) % 11) * 0.3f - 1.0f;
  }
  tir_arg_t args[4] = {ARG(a, tir_dt_FLOAT32(), LR, LC), ARG(gamma, tir_dt_FLOAT32(), LC),
                       ARG(beta, tir_dt_FLOAT32(), LC), ARG(got, tir_dt_FLOAT32(), LR, LC)};
  assert_int_equal(tir_interp_run(f, args, 4), MLC_OK);
  for (int i = 0; i < LR; i++) {
    float sum = 0.0f, sq = 0.0f;
    for (int k = 0; k < LC; k++) {
      sum += a[i][k];
      sq += a[i][k] * a[i][k];
    }
    float mean = sum / (float)LC, var_ = sq / (float)LC - mean * mean;
    for (int k = 0; k < LC; k++) {
      float want = (a[i][k] - mean) * (1.0f / sqrtf(var_ + 1e-5f)) * gamma[k] + beta[k];
      assert_true(fabsf(got[i][k] - want) <= 1e-6f * fmaxf(fabsf(want), 1.0f));
    }
  }
  tir_func_free(f);
}

/* ------------------------------------------------------------------------ */
/* Vectors, strides, threads, predicates                                     */
/* ------------------------------------------------------------------------ */

/* Lowered-style code without blocks:
 *   for i in range(4): B[Ramp(i*8, 1, 8)] = A[Ramp(i*8, 1, 8)] * Broadcast(2, 8) + Broadcast(1, 8)
 *   for j in range(4): C[j, Ramp(0, 1, 8)] = A[Ramp(j, 4, 8)]        (a strided gather) */
static void test_ramp_and_broadcast_load_and_store_vectors(void **state) {
  (void)state;
  tir_func_t *f = fn_begin("vec");
  tir_buffer_t *a = BUF("A", tir_dt_FLOAT32(), 32), *b = BUF("B", tir_dt_FLOAT32(), 32);
  tir_buffer_t *c = BUF("C", tir_dt_FLOAT32(), 4, 8);
  fn_param(f, a, NULL);
  fn_param(f, b, NULL);
  fn_param(f, c, NULL);
  tir_var_t *i = var("i"), *j = var("j");
  tir_expr_t *idx = tir_ramp(A, MUL(i, I(8)), I(1), 8);
  tir_expr_t *val = ADD(MUL(LD(a, idx), tir_broadcast(A, F32(2), 8)), tir_broadcast(A, F32(1), 8));
  tir_stmt_t *s1 = loop(i, 4, ST(b, val, idx));
  tir_stmt_t *s2 = loop(j, 4, ST(c, LD(a, tir_ramp(A, j, I(4), 8)), j, tir_ramp(A, I(0), I(1), 8)));
  f->body = SEQ(s1, s2);
  float av[32], bv[32], cv[4][8];
  for (int n = 0; n < 32; n++) av[n] = (float)n;
  tir_arg_t args[3] = {ARG(av, tir_dt_FLOAT32(), 32), ARG(bv, tir_dt_FLOAT32(), 32),
                       ARG(cv, tir_dt_FLOAT32(), 4, 8)};
  assert_int_equal(tir_interp_run(f, args, 3), MLC_OK);
  for (int n = 0; n < 32; n++) assert_true(bv[n] == 2.0f * (float)n + 1.0f);
  for (int jj = 0; jj < 4; jj++)
    for (int l = 0; l < 8; l++) assert_true(cv[jj][l] == (float)(jj + 4 * l));
  tir_func_free(f);
}

/* A vector store whose last lane is out of bounds names that lane's index. */
static void test_vector_store_out_of_bounds_names_the_lane(void **state) {
  (void)state;
  tir_func_t *f = fn_begin("vec_oob");
  tir_buffer_t *b = BUF("B", tir_dt_FLOAT32(), 10);
  fn_param(f, b, NULL);
  f->body = ST(b, tir_broadcast(A, F32(1), 4), tir_ramp(A, I(8), I(1), 4));
  float bv[10];
  tir_arg_t args[1] = {ARG(bv, tir_dt_FLOAT32(), 10)};
  expect_error(f, args, 1, "function \"vec_oob\": buffer B: index [10] out of bounds for shape (10,)");
  tir_func_free(f);
}

/* Lane-wise Select with a vector condition, and a buffer whose dtype is itself
 * a vector (X: float32x4, declared with T.decl_buffer):
 *   B[Ramp(0, 1, 4)] = Select(Ramp(0, 1, 4) < Broadcast(2, 4), Broadcast(1, 4), Broadcast(0, 4))
 *   X[0] = Broadcast(1.5, 4); B[Ramp(4, 1, 4)] = X[0] * Broadcast(2, 4) */
static void test_vector_select_and_vector_dtype_buffer(void **state) {
  (void)state;
  tir_func_t *f = fn_begin("lanes");
  tir_buffer_t *b = BUF("B", tir_dt_FLOAT32(), 8);
  tir_buffer_t *x = BUF("X", tir_dtype(TIR_CODE_FLOAT, 32, 4), 2);
  fn_param(f, b, NULL);
  tir_expr_t *ramp = tir_ramp(A, I(0), I(1), 4);
  tir_expr_t *cond = BIN(LT, ramp, tir_broadcast(A, I(2), 4));
  tir_expr_t *one = tir_broadcast(A, F32(1), 4), *zero = tir_broadcast(A, F32(0), 4);
  tir_stmt_t *sel = ST(b, tir_select(A, cond, one, zero), ramp);
  tir_stmt_t *vec = SEQ(ST(x, tir_broadcast(A, F32(1.5), 4), I(0)),
                        ST(b, MUL(LD(x, I(0)), tir_broadcast(A, F32(2), 4)), tir_ramp(A, I(4), I(1), 4)));
  f->body = SEQ(sel, tir_allocate(A, x, vec));
  float bv[8];
  tir_arg_t args[1] = {ARG(bv, tir_dt_FLOAT32(), 8)};
  assert_int_equal(tir_interp_run(f, args, 1), MLC_OK);
  const float want[8] = {1, 1, 0, 0, 3, 3, 3, 3};
  assert_memory_equal(bv, want, sizeof(want));

  /* if_then_else evaluates one side only, so its condition must not differ
   * across lanes. */
  tir_expr_t *ite = CALL(tir_dtype(TIR_CODE_FLOAT, 32, 4), IF_THEN_ELSE, cond, one, zero);
  f->body = ST(b, ite, ramp);
  expect_error(f, args, 1,
               "function \"lanes\": if_then_else with a condition that differs across its 4 lanes");
  tir_func_free(f);
}

/* with T.block("sub"): vi = T.axis.spatial(2, i)
 *   Asub = T.match_buffer(A[vi*4 : vi*4+4, 2:6], (4, 4), strides=(s0, s1), elem_offset=off)
 *   for x, y: Asub[x, y] = Asub[x, y] + 1
 *   O[vi, 0] = off; O[vi, 1] = s0; O[vi, 2] = s1 */
static void test_match_buffer_views_strided_region_with_elem_offset(void **state) {
  (void)state;
  tir_func_t *f = fn_begin("sub");
  tir_buffer_t *a = BUF("A", tir_dt_FLOAT32(), 8, 8), *o = BUF("O", tir_dt_INT32(), 2, 3);
  fn_param(f, a, NULL);
  fn_param(f, o, NULL);
  tir_var_t *s0 = var("s0"), *s1 = var("s1"), *off = var("off");
  tir_buffer_t *sub = BUF("Asub", tir_dt_FLOAT32(), 4, 4);
  sub->strides = mlc_arena_memdup(A, (tir_expr_t *[]){s0, s1}, 2 * sizeof(tir_expr_t *));
  sub->elem_offset = off;
  tir_var_t *i = var("i"), *vi = var("vi"), *x = var("x"), *y = var("y");
  tir_range_t ranges[2] = {{MUL(vi, I(4)), I(4)}, {I(2), I(4)}};
  tir_stmt_t *inc = loop(x, 4, loop(y, 4, ST(sub, ADD(LD(sub, x, y), F32(1)), x, y)));
  tir_stmt_t *body = SEQ(inc, ST(o, off, vi, I(0)), ST(o, s0, vi, I(1)), ST(o, s1, vi, I(2)));
  tir_stmt_t *blk = BLOCK("sub", NULL, body, IV(vi, 2, 'S', i));
  tir_block_t *bn = blk->u.realize.block;
  bn->nmatch_buffers = 1;
  bn->match_buffers = mlc_arena_alloc(A, sizeof(tir_match_buffer_t));
  bn->match_buffers[0] = (tir_match_buffer_t){sub, {a, 2, mlc_arena_memdup(A, ranges, sizeof(ranges))}};
  fn_root(f, loop(i, 2, blk), 0, NULL);
  float av[8][8];
  int32_t ov[2][3];
  for (int r = 0; r < 8; r++)
    for (int c = 0; c < 8; c++) av[r][c] = (float)(r * 8 + c);
  tir_arg_t args[2] = {ARG(av, tir_dt_FLOAT32(), 8, 8), ARG(ov, tir_dt_INT32(), 2, 3)};
  assert_int_equal(tir_interp_run(f, args, 2), MLC_OK);
  for (int r = 0; r < 8; r++)
    for (int c = 0; c < 8; c++) assert_true(av[r][c] == (float)(r * 8 + c) + (c >= 2 && c < 6 ? 1.0f : 0.0f));
  const int32_t want[2][3] = {{2, 8, 1}, {34, 8, 1}};
  assert_memory_equal(ov, want, sizeof(want));

  /* Without declared strides the view must be compact, and this one is not. */
  sub->strides = NULL;
  expect_error(f, args, 2,
               "block \"sub\": match_buffer Asub: the region is not compact (stride 8 in "
               "dimension 0, compact 4); declare strides");
  tir_func_free(f);
}

/* GPU-style: a shared cache filled cooperatively by a nested threadIdx.x loop
 * inside the threadIdx.x loop that reads it (as cache_read + compute_at +
 * bind produce). Each thread reads its neighbour's fetched element, which is
 * right only because the nested loop runs whole inside each outer thread.
 *   for bx in blockIdx.x(4): for tx in threadIdx.x(16):
 *     for ax in threadIdx.x(16): block A_shared: v = bx*16+ax: S[v] = A[v]
 *     T.tvm_storage_sync("shared")
 *     block B: v = bx*16+tx: B[v] = S[v] + S[bx*16 + (tx+1) % 16] */
static void test_thread_bound_loops_with_shared_cache_run_sequentially(void **state) {
  (void)state;
  tir_func_t *f = fn_begin("shared");
  tir_buffer_t *a = BUF("A", tir_dt_FLOAT32(), 64), *b = BUF("B", tir_dt_FLOAT32(), 64);
  tir_buffer_t *s = BUF("A_shared", tir_dt_FLOAT32(), 64);
  s->scope = "shared";
  fn_param(f, a, NULL);
  fn_param(f, b, NULL);
  tir_var_t *bx = var("bx"), *tx = var("tx"), *ax = var("ax"), *v0 = var("v0"), *v1 = var("v1");
  tir_stmt_t *fetch = BLOCK("A_shared", NULL, ST(s, LD(a, v0), v0), IV(v0, 64, 'S', ADD(MUL(bx, I(16)), ax)));
  tir_expr_t *nb = ADD(MUL(bx, I(16)), BIN(FLOOR_MOD, ADD(tx, I(1)), I(16)));
  tir_stmt_t *compute = BLOCK("B", NULL, ST(b, ADD(LD(s, v1), LD(s, nb)), v1),
                              IV(v1, 64, 'S', ADD(MUL(bx, I(16)), tx)));
  tir_stmt_t *sync = tir_evaluate(A, CALL(tir_dt_INT32(), TVM_STORAGE_SYNC, tir_string(A, "shared")));
  tir_stmt_t *body = SEQ(thread_loop(ax, 16, "threadIdx.x", fetch), sync, compute);
  fn_root(f, thread_loop(bx, 4, "blockIdx.x", thread_loop(tx, 16, "threadIdx.x", body)), 1, &s);
  float av[64], bv[64];
  for (int n = 0; n < 64; n++) av[n] = (float)(n * n % 17);
  tir_arg_t args[2] = {ARG(av, tir_dt_FLOAT32(), 64), ARG(bv, tir_dt_FLOAT32(), 64)};
  assert_int_equal(tir_interp_run(f, args, 2), MLC_OK);
  for (int n = 0; n < 64; n++) assert_true(bv[n] == av[n] + av[(n / 16) * 16 + (n % 16 + 1) % 16]);
  tir_func_free(f);
}

/* for i0, i1 in T.grid(3, 4): block B: vi = T.axis.spatial(10, i0*4 + i1);
 * T.where(i0*4 + i1 < 10); B[vi] = A[vi] + 1. */
static tir_func_t *make_split_10(bool with_predicate) {
  tir_func_t *f = fn_begin("split");
  tir_buffer_t *a = BUF("A", tir_dt_FLOAT32(), 10), *b = BUF("B", tir_dt_FLOAT32(), 10);
  fn_param(f, a, NULL);
  fn_param(f, b, NULL);
  tir_var_t *i0 = var("i0"), *i1 = var("i1"), *vi = var("vi");
  tir_expr_t *fused = ADD(MUL(i0, I(4)), i1);
  tir_expr_t *pred = with_predicate ? BIN(LT, fused, I(10)) : NULL;
  tir_stmt_t *blk = BLOCK_WHERE("B", pred, ST(b, ADD(LD(a, vi), F32(1)), vi), IV(vi, 10, 'S', fused));
  fn_root(f, loop(i0, 3, loop(i1, 4, blk)), 0, NULL);
  return f;
}

static void test_where_predicate_guards_non_divisible_split(void **state) {
  (void)state;
  tir_func_t *f = make_split_10(true);
  float av[10], bv[10];
  for (int n = 0; n < 10; n++) av[n] = (float)n;
  tir_arg_t args[2] = {ARG(av, tir_dt_FLOAT32(), 10), ARG(bv, tir_dt_FLOAT32(), 10)};
  assert_int_equal(tir_interp_run(f, args, 2), MLC_OK);
  for (int n = 0; n < 10; n++) assert_true(bv[n] == (float)n + 1.0f);
  tir_func_free(f);
}

/* ------------------------------------------------------------------------ */
/* Poison, symbolic shapes, scalars                                          */
/* ------------------------------------------------------------------------ */

/* block "B": L = T.alloc_buffer((2,)), Li = T.alloc_buffer((2,), "int32");
 * L[0] = 1; B[0] = L[0]; B[1] = L[1] (never written); O[0] = Li[1]. */
static tir_func_t *make_poison(void) {
  tir_func_t *f = fn_begin("poison");
  tir_buffer_t *b = BUF("B", tir_dt_FLOAT32(), 2), *o = BUF("O", tir_dt_INT32(), 1);
  tir_buffer_t *l = BUF("L", tir_dt_FLOAT32(), 2), *li = BUF("Li", tir_dt_INT32(), 2);
  l->scope = li->scope = "local";
  fn_param(f, b, NULL);
  fn_param(f, o, NULL);
  tir_stmt_t *body = SEQ(ST(l, F32(1), I(0)), ST(b, LD(l, I(0)), I(0)), ST(b, LD(l, I(1)), I(1)),
                         ST(o, LD(li, I(1)), I(0)));
  tir_block_t *blk = block_node("B", NULL, body, 0, NULL);
  blk->nalloc_buffers = 2;
  blk->alloc_buffers = mlc_arena_memdup(A, (tir_buffer_t *[]){l, li}, 2 * sizeof(tir_buffer_t *));
  fn_root(f, tir_block_realize(A, NULL, 0, NULL, blk), 0, NULL);
  return f;
}

static void test_fresh_allocations_are_poisoned_not_zeroed(void **state) {
  (void)state;
  tir_func_t *f = make_poison();
  float bv[2] = {0, 0};
  int32_t ov[1] = {0};
  tir_arg_t args[2] = {ARG(bv, tir_dt_FLOAT32(), 2), ARG(ov, tir_dt_INT32(), 1)};
  assert_int_equal(tir_interp_run(f, args, 2), MLC_OK);
  assert_true(bv[0] == 1.0f);
  assert_true(isnan(bv[1]));
  assert_int_equal((uint32_t)ov[0], 0x5A5A5A5Au);
  tir_func_free(f);
}

/* B[i] = A[i] * alpha over A: (n,), B: (n,), with scalar params n and alpha. */
static tir_func_t *make_scale(void) {
  tir_func_t *f = fn_begin("scale");
  tir_var_t *n = var("n"), *alpha = tir_var(A, "alpha", tir_dt_FLOAT32());
  tir_expr_t *shape[1] = {n};
  tir_buffer_t *a = tir_buffer_new(A, "A", tir_dt_FLOAT32(), shape, 1, "global");
  tir_buffer_t *b = tir_buffer_new(A, "B", tir_dt_FLOAT32(), shape, 1, "global");
  fn_param(f, a, NULL);
  fn_param(f, b, NULL);
  fn_param(f, NULL, alpha);
  tir_var_t *i = var("i");
  f->body = tir_for(A, i, I(0), n, TIR_FOR_SERIAL, ST(b, MUL(LD(a, i), alpha), i));
  return f;
}

static void test_symbolic_shape_binds_from_first_argument(void **state) {
  (void)state;
  tir_func_t *f = make_scale();
  float av[5] = {1, 2, 3, 4, 5}, bv[6];
  tir_arg_t args[3] = {ARG(av, tir_dt_FLOAT32(), 5), ARG(bv, tir_dt_FLOAT32(), 5), {0}};
  args[2].scalar_float = 0.1; /* rounded to float32 as the parameter's dtype */
  assert_int_equal(tir_interp_run(f, args, 3), MLC_OK);
  for (int k = 0; k < 5; k++) assert_true(bv[k] == av[k] * 0.1f);
  /* B disagrees with the n that A bound. */
  args[1] = ARG(bv, tir_dt_FLOAT32(), 6);
  expect_error(f, args, 3, "function \"scale\": argument 1 (B): dimension 0 is 6, expected n = 5");
  tir_func_free(f);
}

/* ------------------------------------------------------------------------ */
/* Scheduled TIR as TVM prints it                                            */
/* ------------------------------------------------------------------------ */

/* A matmul scheduled for a GPU: 16x16 tiles per blockIdx.x, 4x4 per
 * threadIdx.x, A and B tiles cached in shared memory by cooperative fetches
 * bound to threadIdx.x again, the accumulator in a local buffer. */
static const char GPU_MATMUL[] =
    "# from tvm.script import tir as T\n"
    "\n"
    "@T.prim_func\n"
    "def main(A: T.Buffer((64, 64), \"float32\"), B: T.Buffer((64, 64), \"float32\"), C: T.Buffer((64, 64), \"float32\")):\n"
    "    T.func_attr({\"global_symbol\": \"main\", \"tir.noalias\": T.bool(True)})\n"
    "    # with T.block(\"root\"):\n"
    "    A_shared = T.alloc_buffer((64, 64), scope=\"shared\")\n"
    "    B_shared = T.alloc_buffer((64, 64), scope=\"shared\")\n"
    "    C_local = T.alloc_buffer((64, 64), scope=\"local\")\n"
    "    for i_0_j_0_fused in T.thread_binding(16, thread=\"blockIdx.x\"):\n"
    "        for i_1_j_1_fused in T.thread_binding(16, thread=\"threadIdx.x\"):\n"
    "            for k_0 in range(8):\n"
    "                for ax0_ax1_fused_0 in range(8):\n"
    "                    for ax0_ax1_fused_1 in T.thread_binding(16, thread=\"threadIdx.x\"):\n"
    "                        with T.block(\"A_shared\"):\n"
    "                            v0 = T.axis.spatial(64, i_0_j_0_fused // 4 * 16 + (ax0_ax1_fused_0 * 16 + ax0_ax1_fused_1) // 8)\n"
    "                            v1 = T.axis.spatial(64, k_0 * 8 + (ax0_ax1_fused_0 * 16 + ax0_ax1_fused_1) % 8)\n"
    "                            T.reads(A[v0, v1])\n"
    "                            T.writes(A_shared[v0, v1])\n"
    "                            A_shared[v0, v1] = A[v0, v1]\n"
    "                for ax0_ax1_fused_0 in range(8):\n"
    "                    for ax0_ax1_fused_1 in T.thread_binding(16, thread=\"threadIdx.x\"):\n"
    "                        with T.block(\"B_shared\"):\n"
    "                            v0 = T.axis.spatial(64, k_0 * 8 + (ax0_ax1_fused_0 * 16 + ax0_ax1_fused_1) // 16)\n"
    "                            v1 = T.axis.spatial(64, i_0_j_0_fused % 4 * 16 + (ax0_ax1_fused_0 * 16 + ax0_ax1_fused_1) % 16)\n"
    "                            T.reads(B[v0, v1])\n"
    "                            T.writes(B_shared[v0, v1])\n"
    "                            B_shared[v0, v1] = B[v0, v1]\n"
    "                for k_1, i_2, j_2 in T.grid(8, 4, 4):\n"
    "                    with T.block(\"C\"):\n"
    "                        vi = T.axis.spatial(64, i_0_j_0_fused // 4 * 16 + i_1_j_1_fused // 4 * 4 + i_2)\n"
    "                        vj = T.axis.spatial(64, i_0_j_0_fused % 4 * 16 + i_1_j_1_fused % 4 * 4 + j_2)\n"
    "                        vk = T.axis.reduce(64, k_0 * 8 + k_1)\n"
    "                        T.reads(A_shared[vi, vk], B_shared[vk, vj])\n"
    "                        T.writes(C_local[vi, vj])\n"
    "                        with T.init():\n"
    "                            C_local[vi, vj] = T.float32(0)\n"
    "                        C_local[vi, vj] = C_local[vi, vj] + A_shared[vi, vk] * B_shared[vk, vj]\n"
    "            for ax0, ax1 in T.grid(4, 4):\n"
    "                with T.block(\"C_local\"):\n"
    "                    v0 = T.axis.spatial(64, i_0_j_0_fused // 4 * 16 + i_1_j_1_fused // 4 * 4 + ax0)\n"
    "                    v1 = T.axis.spatial(64, i_0_j_0_fused % 4 * 16 + i_1_j_1_fused % 4 * 4 + ax1)\n"
    "                    T.reads(C_local[v0, v1])\n"
    "                    T.writes(C[v0, v1])\n"
    "                    C[v0, v1] = C_local[v0, v1]\n"
    "\n";

static void test_scheduled_gpu_matmul_from_tvmscript_equals_c_loop(void **state) {
  (void)state;
  enum { N = 64 };
  tir_func_t *f;
  tir_parse_error_t err;
  int rc = tir_parse_func(&f, GPU_MATMUL, sizeof(GPU_MATMUL) - 1, "gpu_matmul.py", &err);
  if (rc != MLC_OK) print_error("%s\n", mlc_error_last());
  assert_int_equal(rc, MLC_OK);
  static float a[N][N], b[N][N], c[N][N], want[N][N];
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++) {
      a[i][j] = (float)((i * 3 + j) % 7) - 3.0f;
      b[i][j] = (float)((i + j * 5) % 9) * 0.5f;
    }
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++) {
      float acc = 0.0f;
      for (int k = 0; k < N; k++) acc = acc + a[i][k] * b[k][j];
      want[i][j] = acc;
    }
  tir_arg_t args[3] = {ARG(a, tir_dt_FLOAT32(), N, N), ARG(b, tir_dt_FLOAT32(), N, N),
                       ARG(c, tir_dt_FLOAT32(), N, N)};
  assert_int_equal(tir_interp_run(f, args, 3), MLC_OK);
  assert_memory_equal(c, want, sizeof(want));
  tir_func_free(f);
}

/* ------------------------------------------------------------------------ */
/* Lowered code: aliases through the data variable, T.decl_buffer           */
/* ------------------------------------------------------------------------ */

/* Flattening makes a new 1-D buffer over a parameter's data variable:
 *   X = T.decl_buffer((4,))                           (its own storage)
 *   for i in range(16): X[i % 4] = A_flat[i]; B[i] = X[i % 4] * 2
 * where A_flat is (16,) over A.data, used without a declaration. */
static void test_alias_over_data_var_and_decl_buffer(void **state) {
  (void)state;
  tir_func_t *f = fn_begin("flat");
  tir_buffer_t *a = BUF("A", tir_dt_FLOAT32(), 4, 4), *b = BUF("B", tir_dt_FLOAT32(), 16);
  fn_param(f, a, NULL);
  fn_param(f, b, NULL);
  tir_buffer_t *flat = BUF("A_flat", tir_dt_FLOAT32(), 16);
  flat->data = a->data;
  tir_buffer_t *x = BUF("X", tir_dt_FLOAT32(), 4);
  x->scope = "local";
  tir_var_t *i = var("i");
  tir_expr_t *slot = BIN(FLOOR_MOD, i, I(4));
  tir_stmt_t *body = SEQ(ST(x, LD(flat, i), slot), ST(b, MUL(LD(x, slot), F32(2)), i));
  f->body = tir_allocate(A, x, loop(i, 16, body));
  float av[4][4], bv[16];
  for (int n = 0; n < 16; n++) av[n / 4][n % 4] = (float)n;
  tir_arg_t args[2] = {ARG(av, tir_dt_FLOAT32(), 4, 4), ARG(bv, tir_dt_FLOAT32(), 16)};
  assert_int_equal(tir_interp_run(f, args, 2), MLC_OK);
  for (int n = 0; n < 16; n++) assert_true(bv[n] == 2.0f * (float)n);

  /* An alias larger than the storage it views is caught at the storage. */
  flat->shape[0] = I(20);
  f->body = loop(i, 16, ST(b, LD(flat, ADD(i, I(4))), i));
  expect_error(f, args, 2,
               "function \"flat\": buffer A_flat: index [16] is element 16, outside its "
               "storage of 16 elements");
  tir_func_free(f);
}

/* ------------------------------------------------------------------------ */
/* Errors                                                                    */
/* ------------------------------------------------------------------------ */

static void test_out_of_bounds_names_block_buffer_index_and_shape(void **state) {
  (void)state;
  tir_func_t *f = fn_begin("oob");
  tir_buffer_t *a = BUF("A", tir_dt_FLOAT32(), 4, 4), *c = BUF("C", tir_dt_FLOAT32(), 4, 4);
  fn_param(f, a, NULL);
  fn_param(f, c, NULL);
  tir_var_t *i = var("i"), *j = var("j"), *vi = var("vi"), *vj = var("vj");
  tir_stmt_t *blk = BLOCK("C", NULL, ST(c, LD(a, ADD(vi, I(1)), vj), vi, vj), IV(vi, 4, 'S', i),
                          IV(vj, 4, 'S', j));
  fn_root(f, loop(i, 4, loop(j, 4, blk)), 0, NULL);
  float av[16] = {0}, cv[16];
  tir_arg_t args[2] = {ARG(av, tir_dt_FLOAT32(), 4, 4), ARG(cv, tir_dt_FLOAT32(), 4, 4)};
  expect_error(f, args, 2, "block \"C\": buffer A: index [4, 0] out of bounds for shape (4, 4)");
  tir_func_free(f);
}

static void test_binding_outside_domain_is_an_error(void **state) {
  (void)state;
  tir_func_t *f = make_split_10(false);
  float av[10] = {0}, bv[10];
  tir_arg_t args[2] = {ARG(av, tir_dt_FLOAT32(), 10), ARG(bv, tir_dt_FLOAT32(), 10)};
  expect_error(f, args, 2, "block \"B\": iter var vi = 10 is outside its domain [0, 10)");
  tir_func_free(f);
}

/* block "B": B[vi] = T.floordiv(A[vi], vi - 2) over int32. */
static void test_division_by_zero_is_an_error(void **state) {
  (void)state;
  tir_func_t *f = fn_begin("div0");
  tir_buffer_t *a = BUF("A", tir_dt_INT32(), 4), *b = BUF("B", tir_dt_INT32(), 4);
  fn_param(f, a, NULL);
  fn_param(f, b, NULL);
  tir_var_t *i = var("i"), *vi = var("vi");
  tir_stmt_t *blk = BLOCK("B", NULL, ST(b, BIN(FLOOR_DIV, LD(a, vi), SUB(vi, I(2))), vi), IV(vi, 4, 'S', i));
  fn_root(f, loop(i, 4, blk), 0, NULL);
  int32_t av[4] = {7, 8, 9, 10}, bv[4];
  tir_arg_t args[2] = {ARG(av, tir_dt_INT32(), 4), ARG(bv, tir_dt_INT32(), 4)};
  expect_error(f, args, 2, "block \"B\": division by zero in floordiv(9, 0)");
  assert_int_equal(bv[0], -4); /* floordiv(7, -2) ran before the failure */
  tir_func_free(f);
}

static void test_argument_shape_and_dtype_mismatches_are_errors(void **state) {
  (void)state;
  tir_func_t *f = make_matmul(4, 4, 4);
  float a[16], b[20], c[16];
  int32_t ci[16];
  tir_arg_t args[3] = {ARG(a, tir_dt_FLOAT32(), 4, 4), ARG(b, tir_dt_FLOAT32(), 4, 5),
                       ARG(c, tir_dt_FLOAT32(), 4, 4)};
  expect_error(f, args, 3, "function \"matmul\": argument 1 (B): dimension 1 is 5, expected 4");
  args[1] = ARG(b, tir_dt_FLOAT32(), 16);
  expect_error(f, args, 3, "function \"matmul\": argument 1 (B): 1 dimensions, expected 2");
  args[1] = ARG(b, tir_dt_FLOAT32(), 4, 4);
  args[2] = ARG(ci, tir_dt_INT32(), 4, 4);
  expect_error(f, args, 3, "function \"matmul\": argument 2 (C): dtype int32, expected float32");
  expect_error(f, args, 2, "function \"matmul\": 2 arguments for 3 parameters");
  tir_func_free(f);
}

static void test_call_extern_cannot_be_interpreted(void **state) {
  (void)state;
  tir_func_t *f = fn_begin("ext");
  tir_buffer_t *b = BUF("B", tir_dt_FLOAT32(), 1);
  fn_param(f, b, NULL);
  tir_expr_t *call = CALL(tir_dt_FLOAT32(), CALL_EXTERN, tir_string(A, "my_func"), F32(1));
  tir_block_t *blk = block_node("B", NULL, ST(b, call, I(0)), 0, NULL);
  fn_root(f, tir_block_realize(A, NULL, 0, NULL, blk), 0, NULL);
  float bv[1];
  tir_arg_t args[1] = {ARG(bv, tir_dt_FLOAT32(), 1)};
  expect_error(f, args, 1, "block \"B\": cannot interpret call_extern(\"my_func\")");
  tir_func_free(f);
}

/* Lowered-style statements: let, assert (failing with its message), if. */
static void test_let_if_and_failing_assert(void **state) {
  (void)state;
  tir_func_t *f = fn_begin("stmts");
  tir_buffer_t *b = BUF("B", tir_dt_INT32(), 4);
  fn_param(f, b, NULL);
  tir_var_t *i = var("i"), *x = var("x");
  /* for i in range(4): x = i * 3; if x % 2 == 0: B[i] = x else: B[i] = -x */
  tir_stmt_t *branch = tir_if(A, BIN(EQ, BIN(FLOOR_MOD, x, I(2)), I(0)), ST(b, x, i),
                              ST(b, SUB(I(0), x), i));
  tir_stmt_t *body = loop(i, 4, tir_let_stmt(A, x, MUL(i, I(3)), branch));
  tir_stmt_t *check = tir_assert_stmt(A, BIN(LT, LD(b, I(3)), I(0)), tir_string(A, "B[3] must be negative"), NULL);
  tir_stmt_t *fail = tir_assert_stmt(A, BIN(GT, LD(b, I(2)), I(6)), tir_string(A, "B[2] too small"), NULL);
  f->body = SEQ(body, check, fail);
  int32_t bv[4];
  tir_arg_t args[1] = {ARG(bv, tir_dt_INT32(), 4)};
  expect_error(f, args, 1, "function \"stmts\": assertion failed: B[2] too small");
  const int32_t want[4] = {0, -3, 6, -9};
  assert_memory_equal(bv, want, sizeof(want));
  tir_func_free(f);
}

/* Every allocation the interpreter makes may fail: the run then returns
 * MLC_ENOMEM and frees what it had (ASan checks the leaks). */
static void test_out_of_memory_fails_cleanly_at_every_allocation(void **state) {
  (void)state;
  tir_func_t *f = make_poison(); /* block-local allocations, so storages too */
  float bv[2];
  int32_t ov[1];
  tir_arg_t args[2] = {ARG(bv, tir_dt_FLOAT32(), 2), ARG(ov, tir_dt_INT32(), 1)};
  int rc = MLC_ENOMEM, failures = 0;
  for (long n = 0; rc == MLC_ENOMEM && n < 1000; n++) {
    mlc_alloc_fail_after(n);
    rc = tir_interp_run(f, args, 2);
    mlc_alloc_fail_after(-1);
    if (rc == MLC_ENOMEM) failures++;
  }
  assert_int_equal(rc, MLC_OK);
  assert_true(failures >= 3); /* the arena, the argument storages, the local buffers */
  tir_func_free(f);
}

static void test_undefined_variable_is_an_error(void **state) {
  (void)state;
  tir_func_t *f = fn_begin("undef");
  tir_buffer_t *b = BUF("B", tir_dt_INT32(), 4);
  fn_param(f, b, NULL);
  f->body = ST(b, var("ghost"), I(0));
  int32_t bv[4];
  tir_arg_t args[1] = {ARG(bv, tir_dt_INT32(), 4)};
  expect_error(f, args, 1, "function \"undef\": variable ghost is not defined");
  tir_func_free(f);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_matmul_4x4_gives_hand_computed_product),
      cmocka_unit_test(test_matmul_128_equals_float32_c_loop),
      cmocka_unit_test(test_conv2d_with_padding_block_equals_c_loop),
      cmocka_unit_test(test_softmax_matches_c_within_1e6),
      cmocka_unit_test(test_layernorm_matches_c_within_1e6),
      cmocka_unit_test(test_ramp_and_broadcast_load_and_store_vectors),
      cmocka_unit_test(test_vector_store_out_of_bounds_names_the_lane),
      cmocka_unit_test(test_vector_select_and_vector_dtype_buffer),
      cmocka_unit_test(test_match_buffer_views_strided_region_with_elem_offset),
      cmocka_unit_test(test_thread_bound_loops_with_shared_cache_run_sequentially),
      cmocka_unit_test(test_where_predicate_guards_non_divisible_split),
      cmocka_unit_test(test_fresh_allocations_are_poisoned_not_zeroed),
      cmocka_unit_test(test_symbolic_shape_binds_from_first_argument),
      cmocka_unit_test(test_scheduled_gpu_matmul_from_tvmscript_equals_c_loop),
      cmocka_unit_test(test_alias_over_data_var_and_decl_buffer),
      cmocka_unit_test(test_out_of_bounds_names_block_buffer_index_and_shape),
      cmocka_unit_test(test_binding_outside_domain_is_an_error),
      cmocka_unit_test(test_division_by_zero_is_an_error),
      cmocka_unit_test(test_argument_shape_and_dtype_mismatches_are_errors),
      cmocka_unit_test(test_call_extern_cannot_be_interpreted),
      cmocka_unit_test(test_let_if_and_failing_assert),
      cmocka_unit_test(test_undefined_variable_is_an_error),
      cmocka_unit_test(test_out_of_memory_fails_cleanly_at_every_allocation),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
