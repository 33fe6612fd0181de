/*
 * test_workloads.c - the built-in workload library: every workload builds (with
 * its defaults and with a small custom shape) into a function that verifies,
 * has the blocks and attributes TVM's create_prim_func gives, and computes
 * what its definition says: small instances run in the reference interpreter
 * and are compared with direct C loops. Bad options fail with MLC_EINVAL and
 * a detail that names the problem.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tir/tir.h"

static const tir_dtype_t DEFAULT_DT = {0, 0, 0};

/* ------------------------------------------------------------------------ */
/* Helpers                                                                   */
/* ------------------------------------------------------------------------ */

static tir_func_t *build(const char *name, const int64_t *shape, int n, tir_dtype_t in, tir_dtype_t acc) {
  tir_func_t *f = NULL;
  int st = tir_workload_build(&f, name, shape, n, in, acc);
  if (st != MLC_OK) fail_msg("%s: %s", name, mlc_error_last());
  assert_non_null(f);
  return f;
}

static void assert_verifies(const tir_func_t *f) {
  mlc_strbuf_t errs;
  mlc_sb_init(&errs);
  int st = tir_verify(f, &errs);
  if (st != MLC_OK) fail_msg("%s does not verify:\n%s", f->name, mlc_sb_str(&errs));
  mlc_sb_free(&errs);
}

/* Block names in pre-order, comma-separated. */
static bool note_block(tir_visitor_t *v, tir_block_t *b, tir_stmt_t *realize) {
  (void)realize;
  mlc_strbuf_t *sb = v->payload;
  mlc_sb_printf(sb, sb->len ? ",%s" : "%s", b->name);
  return true;
}

static void assert_blocks(const tir_func_t *f, const char *want) {
  mlc_strbuf_t sb;
  mlc_sb_init(&sb);
  tir_visitor_t v = {.block = note_block, .payload = &sb};
  tir_visit_stmt(&v, f->body);
  assert_string_equal(mlc_sb_str(&sb), want);
  mlc_sb_free(&sb);
}

/* A workload instance with host buffers for every parameter: inputs random
 * (seeded), the last parameter (the output) zeroed. */
typedef struct {
  tir_func_t *f;
  tir_arg_t args[8];
} run_t;

static double rand_in(mlc_rng_t *rng, double lo, double hi) { return lo + (hi - lo) * mlc_rng_uniform(rng); }

static void fill(tir_arg_t *a, int64_t n, mlc_rng_t *rng) {
  for (int64_t i = 0; i < n; i++) {
    tir_dtype_t t = a->dtype;
    if (tir_dtype_eq(t, tir_dt_FLOAT32())) ((float *)a->data)[i] = (float)rand_in(rng, -2, 2);
    else if (tir_dtype_eq(t, tir_dt_FLOAT64())) ((double *)a->data)[i] = rand_in(rng, -2, 2);
    else if (tir_dtype_eq(t, tir_dt_FLOAT16())) ((uint16_t *)a->data)[i] = tir_f32_to_f16((float)rand_in(rng, -2, 2));
    else if (tir_dtype_eq(t, tir_dt_INT8())) ((int8_t *)a->data)[i] = (int8_t)mlc_rng_range(rng, -9, 9);
    else if (tir_dtype_eq(t, tir_dt_INT32())) ((int32_t *)a->data)[i] = (int32_t)mlc_rng_range(rng, -9, 9);
    else fail_msg("no filler for this dtype");
  }
}

static int64_t elems(const tir_arg_t *a) {
  int64_t n = 1;
  for (int d = 0; d < a->ndim; d++) n *= a->shape[d];
  return n;
}

static void run_setup(run_t *r, const char *name, const int64_t *shape, int nshape, tir_dtype_t in) {
  memset(r, 0, sizeof(*r));
  r->f = build(name, shape, nshape, in, DEFAULT_DT);
  assert_verifies(r->f);
  assert_true(r->f->nparams <= 8);
  mlc_rng_t rng;
  mlc_rng_seed(&rng, 42);
  for (int p = 0; p < r->f->nparams; p++) {
    const tir_buffer_t *b = r->f->buffer_map[p];
    tir_arg_t *a = &r->args[p];
    a->ndim = b->ndim;
    a->dtype = b->dtype;
    for (int d = 0; d < b->ndim; d++) assert_true(tir_as_int(b->shape[d], &a->shape[d]));
    a->data = calloc((size_t)elems(a), (size_t)tir_dtype_bytes(b->dtype));
    assert_non_null(a->data);
    if (p < r->f->nparams - 1) fill(a, elems(a), &rng);
  }
}

static void run_exec(run_t *r) {
  int st = tir_interp_run(r->f, r->args, r->f->nparams);
  if (st != MLC_OK) fail_msg("%s: interpreter: %s", r->f->name, mlc_error_last());
}

static void run_free(run_t *r) {
  for (int p = 0; p < 8; p++) free(r->args[p].data);
  tir_func_free(r->f);
}

static float *fbuf(run_t *r, int p) { return r->args[p].data; }

static void assert_close(const float *got, const float *want, int64_t n, double tol) {
  for (int64_t i = 0; i < n; i++)
    if (!(fabs((double)got[i] - want[i]) <= tol * fmax(1.0, fabs(want[i]))))
      fail_msg("element %lld: got %.9g, want %.9g", (long long)i, got[i], want[i]);
}

/* Runs the workload and compares its output with `ref` applied to the inputs. */
typedef void (*ref_fn)(run_t *r, const int64_t *s, float *out);

static void check_against_reference(const char *name, const int64_t *shape, int nshape, ref_fn ref) {
  run_t r;
  run_setup(&r, name, shape, nshape, DEFAULT_DT);
  run_exec(&r);
  tir_arg_t *out = &r.args[r.f->nparams - 1];
  float *want = calloc((size_t)elems(out), sizeof(float));
  assert_non_null(want);
  ref(&r, shape, want);
  assert_close(out->data, want, elems(out), 1e-4);
  free(want);
  run_free(&r);
}

/* ------------------------------------------------------------------------ */
/* Reference implementations (direct loops over the definitions)             */
/* ------------------------------------------------------------------------ */

static void ref_gmm(run_t *r, const int64_t *s, float *C) {
  int64_t M = s[0], N = s[1], K = s[2];
  const float *A = fbuf(r, 0), *B = fbuf(r, 1);
  for (int64_t i = 0; i < M; i++)
    for (int64_t j = 0; j < N; j++) {
      float acc = 0;
      for (int64_t k = 0; k < K; k++) acc += A[i * K + k] * B[k * N + j];
      C[i * N + j] = acc;
    }
}

static void ref_bmm(run_t *r, const int64_t *s, float *Z) {
  int64_t Bn = s[0], M = s[1], N = s[2], K = s[3];
  const float *X = fbuf(r, 0), *Y = fbuf(r, 1);
  for (int64_t b = 0; b < Bn; b++)
    for (int64_t i = 0; i < M; i++)
      for (int64_t j = 0; j < N; j++) {
        float acc = 0;
        for (int64_t k = 0; k < K; k++) acc += X[(b * M + i) * K + k] * Y[(b * K + k) * N + j];
        Z[(b * M + i) * N + j] = acc;
      }
}

static void ref_gmv(run_t *r, const int64_t *s, float *C) {
  int64_t M = s[0], K = s[1];
  const float *A = fbuf(r, 0), *B = fbuf(r, 1);
  for (int64_t i = 0; i < M; i++) {
    float acc = 0;
    for (int64_t k = 0; k < K; k++) acc += A[i * K + k] * B[k];
    C[i] = acc;
  }
}

/* An N-d convolution, channels last, weight (k..., CI/groups, CO). */
typedef struct {
  int nd;
  int64_t n, ci, co, stride, pad, dil, groups;
  int64_t in[3], k[3], out[3];
} conv_t;

static int64_t prod(const int64_t *v, int n) {
  int64_t p = 1;
  for (int i = 0; i < n; i++) p *= v[i];
  return p;
}

/* Row-major decomposition of `flat` over dims. */
static void unflatten(int64_t flat, const int64_t *dims, int n, int64_t *out) {
  for (int d = n - 1; d >= 0; d--) {
    out[d] = flat % dims[d];
    flat /= dims[d];
  }
}

static void ref_conv(const conv_t *c, const float *x, const float *w, float *y) {
  int64_t insz = prod(c->in, c->nd), outsz = prod(c->out, c->nd), ksz = prod(c->k, c->nd);
  int64_t cig = c->ci / c->groups, cog = c->co / c->groups;
  for (int64_t n = 0; n < c->n; n++)
    for (int64_t op = 0; op < outsz; op++)
      for (int64_t co = 0; co < c->co; co++) {
        int64_t o[3], kk[3];
        unflatten(op, c->out, c->nd, o);
        float acc = 0;
        for (int64_t kp = 0; kp < ksz; kp++) {
          unflatten(kp, c->k, c->nd, kk);
          int64_t ipos = 0;
          bool inside = true;
          for (int d = 0; d < c->nd; d++) {
            int64_t i = o[d] * c->stride + kk[d] * c->dil - c->pad;
            inside = inside && i >= 0 && i < c->in[d];
            ipos = ipos * c->in[d] + i;
          }
          for (int64_t rc = 0; rc < cig && inside; rc++) {
            int64_t ch = co / cog * cig + rc;
            acc += x[(n * insz + ipos) * c->ci + ch] * w[(kp * cig + rc) * c->co + co];
          }
        }
        y[(n * outsz + op) * c->co + co] = acc;
      }
}

static void conv_outs(conv_t *c) {
  for (int d = 0; d < c->nd; d++) c->out[d] = (c->in[d] + 2 * c->pad - c->dil * (c->k[d] - 1) - 1) / c->stride + 1;
}

static void ref_c1d(run_t *r, const int64_t *s, float *y) {
  conv_t c = {1, s[0], s[2], s[3], s[5], s[6], 1, 1, {s[1]}, {s[4]}, {0}};
  conv_outs(&c);
  ref_conv(&c, fbuf(r, 0), fbuf(r, 1), y);
}

/* C2D (dil = groups = 1), DIL (s[9] is the dilation), GRP (s[9] is groups). */
static void ref_c2d_with(run_t *r, const int64_t *s, float *y, int64_t dil, int64_t groups) {
  conv_t c = {2, s[0], s[3], s[4], s[7], s[8], dil, groups, {s[1], s[2]}, {s[5], s[6]}, {0}};
  conv_outs(&c);
  ref_conv(&c, fbuf(r, 0), fbuf(r, 1), y);
}
static void ref_c2d(run_t *r, const int64_t *s, float *y) { ref_c2d_with(r, s, y, 1, 1); }
static void ref_dil(run_t *r, const int64_t *s, float *y) { ref_c2d_with(r, s, y, s[9], 1); }
static void ref_grp(run_t *r, const int64_t *s, float *y) { ref_c2d_with(r, s, y, 1, s[9]); }

static void ref_c3d(run_t *r, const int64_t *s, float *y) {
  conv_t c = {3, s[0], s[4], s[5], s[9], s[10], 1, 1, {s[1], s[2], s[3]}, {s[6], s[7], s[8]}, {0}};
  conv_outs(&c);
  ref_conv(&c, fbuf(r, 0), fbuf(r, 1), y);
}

/* Depthwise: a grouped convolution with one channel per group; the weight
 * (1, KH, KW, C) has the same layout as (KH, KW, 1, C). */
static void ref_dep(run_t *r, const int64_t *s, float *y) {
  conv_t c = {2, s[0], s[3], s[3], s[6], s[7], 1, s[3], {s[1], s[2]}, {s[4], s[5]}, {0}};
  conv_outs(&c);
  ref_conv(&c, fbuf(r, 0), fbuf(r, 1), y);
}

/* Transposed convolution by its definition: every input pixel scatters its
 * kernel-weighted value to out[ih * stride + kh - pad, iw * stride + kw - pad]. */
static void ref_t2d(run_t *r, const int64_t *s, float *y) {
  int64_t N = s[0], H = s[1], W = s[2], CI = s[3], CO = s[4], KH = s[5], KW = s[6], st = s[7], p = s[8];
  int64_t OH = (H - 1) * st - 2 * p + KH, OW = (W - 1) * st - 2 * p + KW;
  const float *x = fbuf(r, 0), *w = fbuf(r, 1);
  memset(y, 0, sizeof(float) * (size_t)(N * OH * OW * CO));
  for (int64_t n = 0; n < N; n++)
    for (int64_t ih = 0; ih < H; ih++)
      for (int64_t iw = 0; iw < W; iw++)
        for (int64_t kh = 0; kh < KH; kh++)
          for (int64_t kw = 0; kw < KW; kw++) {
            int64_t oh = ih * st + kh - p, ow = iw * st + kw - p;
            if (oh < 0 || oh >= OH || ow < 0 || ow >= OW) continue;
            for (int64_t ci = 0; ci < CI; ci++)
              for (int64_t co = 0; co < CO; co++)
                y[((n * OH + oh) * OW + ow) * CO + co] +=
                    x[((n * H + ih) * W + iw) * CI + ci] * w[((kh * KW + kw) * CI + ci) * CO + co];
          }
}

static void ref_nrm(run_t *r, const int64_t *s, float *D) {
  const float *A = fbuf(r, 0);
  for (int64_t b = 0; b < s[0]; b++) {
    float acc = 0;
    for (int64_t i = 0; i < s[1] * s[2]; i++) acc += A[b * s[1] * s[2] + i] * A[b * s[1] * s[2] + i];
    D[b] = sqrtf(acc);
  }
}

static void ref_sfm(run_t *r, const int64_t *s, float *out) {
  int64_t M = s[0], N = s[1];
  const float *A = fbuf(r, 0);
  for (int64_t i = 0; i < M; i++) {
    float mx = -INFINITY, sum = 0;
    for (int64_t j = 0; j < N; j++) mx = fmaxf(mx, A[i * N + j]);
    for (int64_t j = 0; j < N; j++) sum += expf(A[i * N + j] - mx);
    for (int64_t j = 0; j < N; j++) out[i * N + j] = expf(A[i * N + j] - mx) / sum;
  }
}

static void ref_ln(run_t *r, const int64_t *s, float *out) {
  int64_t M = s[0], N = s[1];
  const float *A = fbuf(r, 0), *gamma = fbuf(r, 1), *beta = fbuf(r, 2);
  for (int64_t i = 0; i < M; i++) {
    double mean = 0, var = 0;
    for (int64_t j = 0; j < N; j++) mean += A[i * N + j];
    mean /= (double)N;
    for (int64_t j = 0; j < N; j++) var += (A[i * N + j] - mean) * (A[i * N + j] - mean);
    var /= (double)N;
    for (int64_t j = 0; j < N; j++)
      out[i * N + j] = (float)((A[i * N + j] - mean) / sqrt(var + 1e-5) * gamma[j] + beta[j]);
  }
}

static void ref_dbr(run_t *r, const int64_t *s, float *out) {
  int64_t M = s[0], N = s[1], K = s[2];
  const float *data = fbuf(r, 0), *weight = fbuf(r, 1), *bias = fbuf(r, 2);
  for (int64_t i = 0; i < M; i++)
    for (int64_t j = 0; j < N; j++) {
      float acc = 0;
      for (int64_t k = 0; k < K; k++) acc += data[i * K + k] * weight[j * K + k];
      out[i * N + j] = fmaxf(acc + bias[j], 0.0f);
    }
}

/* ------------------------------------------------------------------------ */
/* Tests                                                                     */
/* ------------------------------------------------------------------------ */

/* Small shapes for every workload, in table order (used by several tests). */
static const struct {
  const char *name;
  int64_t shape[12];
  ref_fn ref;
  const char *blocks;
} small[] = {
    {"GMM", {5, 7, 3}, ref_gmm, "root,C"},
    {"BMM", {2, 3, 4, 5}, ref_bmm, "root,Z"},
    {"GMV", {6, 5}, ref_gmv, "root,C"},
    {"C1D", {2, 9, 3, 4, 3, 2, 1}, ref_c1d, "root,PadInput,conv1d_nlc"},
    {"C2D", {1, 5, 6, 3, 4, 3, 3, 2, 1}, ref_c2d, "root,PadInput,conv2d_nhwc"},
    {"C3D", {1, 4, 3, 5, 2, 3, 3, 2, 3, 1, 1}, ref_c3d, "root,PadInput,conv3d_ndhwc"},
    {"DEP", {1, 6, 5, 3, 3, 3, 1, 1}, ref_dep, "root,PadInput,depth_conv2d_nhwc"},
    {"DIL", {1, 7, 6, 2, 3, 3, 3, 1, 2, 2}, ref_dil, "root,PadInput,conv2d_nhwc"},
    {"GRP", {1, 5, 5, 4, 6, 3, 3, 2, 1, 2}, ref_grp, "root,PadInput,conv2d_nhwc"},
    {"T2D", {1, 3, 2, 2, 3, 4, 4, 2, 1}, ref_t2d, "root,PadInput,conv2d_transpose_nhwc"},
    {"NRM", {2, 3, 4}, ref_nrm, "root,C,D"},
    {"SFM", {3, 7}, ref_sfm, "root,T_softmax_maxelem,T_softmax_exp,T_softmax_expsum,T_softmax_norm"},
    {"LN", {3, 8}, ref_ln, "root,T_layer_norm_mean,T_layer_norm_var,T_layer_norm"},
    {"D+B+R", {4, 5, 6}, ref_dbr, "root,T_matmul_NT,T_add,T_relu"},
};
#define NSMALL ((int)(sizeof(small) / sizeof(small[0])))

static void test_table_lists_the_ansor_set_with_consistent_dims(void **state) {
  (void)state;
  int n = 0;
  const tir_workload_desc_t *d = tir_workloads(&n);
  assert_int_equal(n, NSMALL);
  for (int i = 0; i < n; i++) {
    assert_string_equal(d[i].name, small[i].name);
    int commas = 0;
    for (const char *p = d[i].dims; *p; p++) commas += *p == ',';
    assert_int_equal(commas + 1, d[i].ndims);
    assert_string_equal(d[i].default_dtype, "float32");
    assert_ptr_equal(tir_workload_find(d[i].name), &d[i]);
  }
  assert_ptr_equal(tir_workload_find("gmm"), tir_workload_find("GMM")); /* case-insensitive */
  assert_null(tir_workload_find("XYZ"));
}

static void test_every_workload_builds_with_defaults_and_verifies(void **state) {
  (void)state;
  int n = 0;
  const tir_workload_desc_t *d = tir_workloads(&n);
  for (int i = 0; i < n; i++) {
    tir_func_t *f = build(d[i].name, NULL, 0, DEFAULT_DT, DEFAULT_DT);
    assert_verifies(f);
    assert_blocks(f, small[i].blocks);
    /* Attributes and the root block as create_prim_func makes them. */
    tir_expr_t *sym = tir_annot_get(f->attrs, f->nattrs, "global_symbol");
    assert_non_null(sym);
    assert_int_equal(sym->kind, TIR_STRING_IMM);
    assert_string_equal(sym->u.str_value, f->name);
    assert_true(tir_is_const_int(tir_annot_get(f->attrs, f->nattrs, "tir.noalias"), 1));
    assert_non_null(tir_func_root_block(f));
    assert_string_equal(tir_func_root_block(f)->name, "root");
    tir_func_free(f);
  }
}

static void test_every_workload_builds_small_and_matches_its_reference(void **state) {
  (void)state;
  for (int i = 0; i < NSMALL; i++) {
    const tir_workload_desc_t *d = tir_workload_find(small[i].name);
    check_against_reference(small[i].name, small[i].shape, d->ndims, small[i].ref);
  }
}

static void test_convolutions_match_reference_in_other_configurations(void **state) {
  (void)state;
  /* No padding (PadInput is a plain copy), stride 1, 1x1 kernels. */
  check_against_reference("C2D", (int64_t[]){2, 4, 4, 3, 2, 1, 1, 1, 0}, 9, ref_c2d);
  check_against_reference("C2D", (int64_t[]){1, 6, 5, 2, 3, 3, 2, 3, 2}, 9, ref_c2d);
  /* Transposed convolutions: stride 1, stride 3 (the dilation condition and
   * the border offset), no padding, a kernel narrower than the stride. */
  check_against_reference("T2D", (int64_t[]){1, 3, 3, 2, 2, 3, 3, 1, 1}, 9, ref_t2d);
  check_against_reference("T2D", (int64_t[]){2, 2, 3, 3, 2, 5, 4, 3, 2}, 9, ref_t2d);
  check_against_reference("T2D", (int64_t[]){1, 3, 2, 1, 2, 2, 3, 2, 0}, 9, ref_t2d);
  check_against_reference("T2D", (int64_t[]){1, 2, 2, 1, 1, 1, 1, 3, 0}, 9, ref_t2d);
  check_against_reference("DEP", (int64_t[]){2, 7, 7, 2, 3, 5, 2, 2}, 8, ref_dep);
}

typedef struct {
  const char *name;
  tir_block_t *found;
} find_block_t;

static bool find_block_hook(tir_visitor_t *v, tir_block_t *b, tir_stmt_t *realize) {
  (void)realize;
  find_block_t *fb = v->payload;
  if (strcmp(b->name, fb->name) == 0) fb->found = b;
  return true;
}

static tir_block_t *find_block(const tir_func_t *f, const char *name) {
  find_block_t fb = {name, NULL};
  tir_visitor_t v = {.block = find_block_hook, .payload = &fb};
  tir_visit_stmt(&v, f->body);
  if (!fb.found) fail_msg("%s has no block %s", f->name, name);
  return fb.found;
}

/* The init of a reduction block stores its identity. */
static void assert_init_value(const tir_func_t *f, const char *block, double want) {
  tir_block_t *b = find_block(f, block);
  assert_non_null(b->init);
  assert_int_equal(b->init->kind, TIR_BUFFER_STORE);
  const tir_expr_t *v = b->init->u.store.value;
  assert_int_equal(v->kind, TIR_FLOAT_IMM);
  assert_true(v->u.float_value == want);
}

static void test_reductions_start_from_their_identity(void **state) {
  (void)state;
  tir_func_t *f = build("SFM", (int64_t[]){4, 4}, 2, DEFAULT_DT, DEFAULT_DT);
  /* The max starts at the lowest float32 (TVM's min_value, not -inf). */
  assert_init_value(f, "T_softmax_maxelem", -3.4028234663852886e+38);
  assert_init_value(f, "T_softmax_expsum", 0.0);
  assert_null(find_block(f, "T_softmax_exp")->init);
  /* topi marks the normalisation with the softmax axis. */
  tir_block_t *norm = find_block(f, "T_softmax_norm");
  assert_true(tir_is_const_int(tir_annot_get(norm->annots, norm->nannots, "axis"), 1));
  tir_func_free(f);
  f = build("SFM", (int64_t[]){4, 4}, 2, tir_dt_FLOAT64(), DEFAULT_DT);
  assert_init_value(f, "T_softmax_maxelem", -1.7976931348623157e+308);
  tir_func_free(f);
  f = build("SFM", (int64_t[]){4, 4}, 2, tir_dt_FLOAT16(), tir_dt_FLOAT16());
  assert_init_value(f, "T_softmax_maxelem", -65504.0);
  tir_func_free(f);
  f = build("LN", (int64_t[]){4, 4}, 2, DEFAULT_DT, DEFAULT_DT);
  assert_init_value(f, "T_layer_norm_mean", 0.0);
  assert_init_value(f, "T_layer_norm_var", 0.0);
  tir_func_free(f);
}

/* The canonical TVMScript of a small matmul, as TVM prints the PrimFunc of
 * te_workload's matmul (with our function name). */
static void test_gmm_prints_as_create_prim_func_does(void **state) {
  (void)state;
  tir_func_t *f = build("GMM", (int64_t[]){128, 64, 32}, 3, DEFAULT_DT, DEFAULT_DT);
  char *text = tir_print_func(f);
  assert_non_null(text);
  assert_string_equal(text,
                      "# from tvm.script import tir as T\n"
                      "\n"
                      "@T.prim_func\n"
                      "def gmm(A: T.Buffer((128, 32), \"float32\"), B: T.Buffer((32, 64), \"float32\"), "
                      "C: T.Buffer((128, 64), \"float32\")):\n"
                      "    T.func_attr({\"global_symbol\": \"gmm\", \"tir.noalias\": T.bool(True)})\n"
                      "    # with T.block(\"root\"):\n"
                      "    for i, j, k in T.grid(128, 64, 32):\n"
                      "        with T.block(\"C\"):\n"
                      "            v_i, v_j, v_k = T.axis.remap(\"SSR\", [i, j, k])\n"
                      "            T.reads(A[v_i, v_k], B[v_k, v_j])\n"
                      "            T.writes(C[v_i, v_j])\n"
                      "            with T.init():\n"
                      "                C[v_i, v_j] = T.float32(0)\n"
                      "            C[v_i, v_j] = C[v_i, v_j] + A[v_i, v_k] * B[v_k, v_j]\n");
  mlc_free(text);
  tir_func_free(f);
}

static void test_conv2d_pads_and_indexes_as_te_workload(void **state) {
  (void)state;
  tir_func_t *f = build("C2D", NULL, 0, DEFAULT_DT, DEFAULT_DT);
  char *text = tir_print_func(f);
  assert_non_null(text);
  assert_non_null(strstr(text, "PadInput = T.alloc_buffer((1, 58, 58, 64))"));
  assert_non_null(strstr(text, "T.if_then_else(1 <= v_i1 and v_i1 < 57 and 1 <= v_i2 and v_i2 < 57, "
                               "inputs[v_i0, v_i1 - 1, v_i2 - 1, v_i3], T.float32(0))"));
  assert_non_null(strstr(text, "T.reads(PadInput[v_n, v_h + v_rh, v_w + v_rw, v_co // 64 * 64 + v_rc], "
                               "weight[v_rh, v_rw, v_rc, v_co])"));
  mlc_free(text);
  tir_func_free(f);
}

static void test_float16_inputs_accumulate_in_float32(void **state) {
  (void)state;
  run_t r;
  const int64_t s[3] = {3, 4, 5};
  run_setup(&r, "GMM", s, 3, tir_dt_FLOAT16());
  assert_true(tir_dtype_eq(r.f->buffer_map[0]->dtype, tir_dt_FLOAT16()));
  assert_true(tir_dtype_eq(r.f->buffer_map[2]->dtype, tir_dt_FLOAT32()));
  run_exec(&r);
  const uint16_t *A = r.args[0].data, *B = r.args[1].data;
  float want[12];
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 4; j++) {
      float acc = 0;
      for (int k = 0; k < 5; k++) acc += tir_f16_to_f32(A[i * 5 + k]) * tir_f16_to_f32(B[k * 4 + j]);
      want[i * 4 + j] = acc;
    }
  assert_close(fbuf(&r, 2), want, 12, 1e-5);
  char *text = tir_print_func(r.f);
  assert_non_null(strstr(text, "T.Cast(\"float32\", A[v_i, v_k]) * T.Cast(\"float32\", B[v_k, v_j])"));
  mlc_free(text);
  run_free(&r);
}

static void test_int8_inputs_accumulate_in_int32_exactly(void **state) {
  (void)state;
  run_t r;
  const int64_t s[4] = {2, 3, 4, 9};
  run_setup(&r, "BMM", s, 4, tir_dt_INT8());
  assert_true(tir_dtype_eq(r.f->buffer_map[2]->dtype, tir_dt_INT32()));
  run_exec(&r);
  const int8_t *X = r.args[0].data, *Y = r.args[1].data;
  const int32_t *Z = r.args[2].data;
  for (int b = 0; b < 2; b++)
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 4; j++) {
        int32_t acc = 0;
        for (int k = 0; k < 9; k++) acc += X[(b * 3 + i) * 9 + k] * Y[(b * 9 + k) * 4 + j];
        assert_int_equal(Z[(b * 3 + i) * 4 + j], acc);
      }
  run_free(&r);
}

static void test_explicit_accumulator_dtype_is_used(void **state) {
  (void)state;
  tir_func_t *f = build("D+B+R", (int64_t[]){2, 3, 4}, 3, tir_dt_FLOAT32(), tir_dt_FLOAT64());
  assert_verifies(f);
  assert_true(tir_dtype_eq(f->buffer_map[0]->dtype, tir_dt_FLOAT32()));
  assert_true(tir_dtype_eq(f->buffer_map[2]->dtype, tir_dt_FLOAT64())); /* bias joins the output */
  assert_true(tir_dtype_eq(f->buffer_map[3]->dtype, tir_dt_FLOAT64()));
  tir_func_free(f);
}

static void test_keys_are_stable_and_distinct(void **state) {
  (void)state;
  int n = 0;
  const tir_workload_desc_t *d = tir_workloads(&n);
  uint64_t keys[32];
  for (int i = 0; i < n; i++) {
    tir_func_t *a = build(d[i].name, small[i].shape, d[i].ndims, DEFAULT_DT, DEFAULT_DT);
    tir_func_t *b = build(d[i].name, small[i].shape, d[i].ndims, DEFAULT_DT, DEFAULT_DT);
    keys[i] = tir_func_key(a);
    assert_true(keys[i] == tir_func_key(b));
    assert_true(tir_func_equal(a, b, NULL, 0));
    for (int j = 0; j < i; j++) assert_true(keys[i] != keys[j]);
    tir_func_free(a);
    tir_func_free(b);
  }
}

/* The printed TVMScript of every workload parses back to an equal function
 * and prints the same bytes (the workloads are canonical TVMScript). */
static void test_every_workload_round_trips_through_tvmscript(void **state) {
  (void)state;
  for (int i = 0; i < NSMALL; i++) {
    const tir_workload_desc_t *d = tir_workload_find(small[i].name);
    tir_func_t *f = build(d->name, small[i].shape, d->ndims, DEFAULT_DT, DEFAULT_DT);
    char *text = tir_print_func(f);
    assert_non_null(text);
    tir_func_t *g = NULL;
    tir_parse_error_t err;
    if (tir_parse_func(&g, text, strlen(text), d->name, &err) != MLC_OK)
      fail_msg("%s does not parse back: %s", d->name, mlc_error_last());
    char why[256] = "";
    if (!tir_func_equal(f, g, why, sizeof(why))) fail_msg("%s: parsed copy differs: %s", d->name, why);
    assert_true(tir_func_key(f) == tir_func_key(g));
    char *again = tir_print_func(g);
    assert_non_null(again);
    assert_string_equal(again, text);
    mlc_free(again);
    mlc_free(text);
    tir_func_free(g);
    tir_func_free(f);
  }
}

static void expect_einval(const char *name, const int64_t *shape, int n, tir_dtype_t in, tir_dtype_t acc,
                          const char *needle) {
  static tir_func_t sentinel;
  tir_func_t *f = &sentinel; /* a failed build must reset it to NULL */
  int st = tir_workload_build(&f, name, shape, n, in, acc);
  if (st != MLC_EINVAL || !strstr(mlc_error_last(), needle))
    fail_msg("%s: got %d '%s', wanted MLC_EINVAL with '%s'", name, st, mlc_error_last(), needle);
  assert_null(f);
}

static void test_bad_options_fail_with_a_clear_detail(void **state) {
  (void)state;
  expect_einval("XYZ", NULL, 0, DEFAULT_DT, DEFAULT_DT, "unknown workload 'XYZ'");
  expect_einval("GMM", (int64_t[]){4, 4}, 2, DEFAULT_DT, DEFAULT_DT, "takes 3 shape values (M,N,K), got 2");
  expect_einval("GMM", (int64_t[]){4, 0, 4}, 3, DEFAULT_DT, DEFAULT_DT, "N=0");
  expect_einval("GMM", (int64_t[]){4, 4, -3}, 3, DEFAULT_DT, DEFAULT_DT, "K=-3");
  expect_einval("C2D", (int64_t[]){1, 5, 5, 3, 4, 3, 3, 1, -1}, 9, DEFAULT_DT, DEFAULT_DT, "pad=-1");
  expect_einval("C2D", (int64_t[]){1, 2, 5, 3, 4, 3, 3, 1, 0}, 9, DEFAULT_DT, DEFAULT_DT, "larger than the padded input");
  expect_einval("GRP", (int64_t[]){1, 5, 5, 6, 4, 3, 3, 1, 1, 4}, 10, DEFAULT_DT, DEFAULT_DT, "groups=4 must divide");
  expect_einval("T2D", (int64_t[]){1, 4, 4, 2, 2, 3, 3, 2, 3}, 9, DEFAULT_DT, DEFAULT_DT, "pad=3");
  expect_einval("GMM", (int64_t[]){65536, 65536, 4}, 3, DEFAULT_DT, DEFAULT_DT, "more than 2^31-1 elements");
  expect_einval("SFM", NULL, 0, tir_dt_INT8(), DEFAULT_DT, "needs a float dtype");
  expect_einval("LN", NULL, 0, tir_dt_INT32(), DEFAULT_DT, "needs a float dtype");
  expect_einval("NRM", NULL, 0, tir_dt_UINT8(), DEFAULT_DT, "needs a float dtype");
  expect_einval("GMM", NULL, 0, tir_dt_HANDLE(), DEFAULT_DT, "unsupported input dtype handle");
  expect_einval("GMM", NULL, 0, tir_dt_BOOL(), DEFAULT_DT, "unsupported input dtype bool");
  expect_einval("GMM", NULL, 0, tir_dtype(TIR_CODE_FLOAT, 32, 4), DEFAULT_DT, "float32x4");
  expect_einval("GMM", NULL, 0, tir_dt_FLOAT16(), tir_dt_INT32(), "accumulator dtype int32");
  expect_einval("GMM", NULL, 0, tir_dt_INT8(), tir_dt_FLOAT32(), "accumulator dtype float32");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_table_lists_the_ansor_set_with_consistent_dims),
      cmocka_unit_test(test_every_workload_builds_with_defaults_and_verifies),
      cmocka_unit_test(test_every_workload_builds_small_and_matches_its_reference),
      cmocka_unit_test(test_convolutions_match_reference_in_other_configurations),
      cmocka_unit_test(test_reductions_start_from_their_identity),
      cmocka_unit_test(test_gmm_prints_as_create_prim_func_does),
      cmocka_unit_test(test_conv2d_pads_and_indexes_as_te_workload),
      cmocka_unit_test(test_float16_inputs_accumulate_in_float32),
      cmocka_unit_test(test_int8_inputs_accumulate_in_int32_exactly),
      cmocka_unit_test(test_explicit_accumulator_dtype_is_used),
      cmocka_unit_test(test_keys_are_stable_and_distinct),
      cmocka_unit_test(test_every_workload_round_trips_through_tvmscript),
      cmocka_unit_test(test_bad_options_fail_with_a_clear_detail),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
