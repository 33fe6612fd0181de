/*
 * workloads.c - the built-in workload library (DESIGN.md, "Built-in workloads"):
 * the operators of the Ansor paper as PrimFuncs with blocks, built the way TVM's
 * te.create_prim_func builds them from meta_schedule/testing/te_workload.py:
 * the same buffer and block names, layouts (NHWC convolutions), index
 * expressions, reduction orders and T.reads/T.writes, so a TVM user recognises
 * the printed TVMScript and trace steps naming blocks carry over.
 *
 * Each workload is a short function over a few helpers that play te.compute:
 * comp_axes() makes the iteration variables, the workload writes the value in
 * terms of them, and comp_emit() wraps it in a block (explicit regions, an init
 * for reductions) under a nest of serial loops. Index arithmetic folds
 * constants the way TVM's operators do (x * 1 -> x, x + 0 -> x, x % 1 -> 0),
 * which is what makes the indices print as TVM prints them.
 *
 * Dtypes: inputs are in_dtype; everything computed (accumulators,
 * intermediates, outputs) is acc_dtype, and input loads are cast to it.
 * All allocation goes to the function's arena under an out-of-memory jump.
 */
#include "tir/tir.h"

#include <float.h>
#include <setjmp.h>
#include <stdarg.h>
#include <string.h>
#include <strings.h>

#define WL_MAX_AXES 12
#define WL_MAX_BUFS 8

/* What a workload builder writes into. */
typedef struct {
  mlc_arena_t *a;
  const char *name;     /* workload name, for messages */
  tir_dtype_t in, acc;  /* input and accumulator/output dtypes */
  const int64_t *s;     /* shape values, in the order of the desc's dims */
  int nparams, nallocs, nnests;
  tir_var_t *params[WL_MAX_BUFS];
  tir_buffer_t *pbufs[WL_MAX_BUFS];
  tir_buffer_t *allocs[WL_MAX_BUFS];
  tir_stmt_t *nests[WL_MAX_BUFS];
  const char *too_big;  /* first buffer with more than INT32_MAX elements */
} wl_t;

typedef int (*wl_build_fn)(wl_t *w);

/* ------------------------------------------------------------------------ */
/* Buffers and index arithmetic                                              */
/* ------------------------------------------------------------------------ */

static tir_expr_t *ci(wl_t *w, int64_t v) { return tir_i32(w->a, v); }

static tir_buffer_t *new_buffer(wl_t *w, const char *name, tir_dtype_t t, const int64_t *shape,
                                int ndim) {
  tir_expr_t *dims[TIR_MAX_DIMS];
  int64_t elems = 1;
  for (int i = 0; i < ndim; i++) {
    dims[i] = ci(w, shape[i]);
    /* Shapes are int32 like TVM's; a larger buffer could not be indexed. */
    elems = elems > INT32_MAX ? elems : elems * shape[i];
  }
  if (elems > INT32_MAX && !w->too_big) w->too_big = name;
  return tir_buffer_new(w->a, name, t, dims, ndim, "global");
}

/* A buffer parameter: a handle named after the buffer, matched to it. */
static tir_buffer_t *param(wl_t *w, const char *name, tir_dtype_t t, const int64_t *shape, int ndim) {
  MLC_ASSERT(w->nparams < WL_MAX_BUFS);
  tir_buffer_t *b = new_buffer(w, name, t, shape, ndim);
  w->params[w->nparams] = tir_var(w->a, name, tir_dt_HANDLE());
  w->pbufs[w->nparams++] = b;
  return b;
}

/* An intermediate buffer, allocated in the root block. */
static tir_buffer_t *temp(wl_t *w, const char *name, tir_dtype_t t, const int64_t *shape, int ndim) {
  MLC_ASSERT(w->nallocs < WL_MAX_BUFS);
  return w->allocs[w->nallocs++] = new_buffer(w, name, t, shape, ndim);
}

/* SHAPE(a, b, c) expands to "array, count" for param() and temp(). */
#define SHAPE(...)                   \
  (const int64_t[]){__VA_ARGS__},    \
      (int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t))

/* An integer binary operation with TVM's constant folding (arith::TryConstFold):
 * both constant -> constant; x + 0, x - 0, x * 1, x // 1 -> x; x * 0, x % 1 -> 0. */
static tir_expr_t *ix(wl_t *w, tir_expr_kind_t k, tir_expr_t *x, tir_expr_t *y) {
  int64_t a = 0, b = 0;
  bool ca = tir_as_int(x, &a), cb = tir_as_int(y, &b);
  switch (k) {
  case TIR_ADD:
    if (ca && cb) return ci(w, a + b);
    if (cb && b == 0) return x;
    if (ca && a == 0) return y;
    break;
  case TIR_SUB:
    if (ca && cb) return ci(w, a - b);
    if (cb && b == 0) return x;
    break;
  case TIR_MUL:
    if (ca && cb) return ci(w, a * b);
    if ((cb && b == 1) || (ca && a == 0)) return x;
    if ((ca && a == 1) || (cb && b == 0)) return y;
    break;
  case TIR_FLOOR_DIV:
    if (cb && b == 1) return x;
    break;
  case TIR_FLOOR_MOD:
    if (cb && b == 1) return ci(w, 0);
    break;
  default: break;
  }
  return tir_binary(w->a, k, x, y);
}

static tir_expr_t *ixc(wl_t *w, tir_expr_kind_t k, tir_expr_t *x, int64_t c) {
  return ix(w, k, x, ci(w, c));
}

/* x * stride + r * dilation: the input coordinate of a convolution. */
static tir_expr_t *conv_index(wl_t *w, tir_expr_t *x, int64_t stride, tir_expr_t *r, int64_t dil) {
  return ix(w, TIR_ADD, ixc(w, TIR_MUL, x, stride), ixc(w, TIR_MUL, r, dil));
}

/* ------------------------------------------------------------------------ */
/* Values                                                                    */
/* ------------------------------------------------------------------------ */

static tir_expr_t *ld(wl_t *w, tir_buffer_t *b, ...) {
  tir_expr_t *idx[TIR_MAX_DIMS];
  va_list ap;
  va_start(ap, b);
  for (int i = 0; i < b->ndim; i++) idx[i] = va_arg(ap, tir_expr_t *);
  va_end(ap);
  return tir_load(w->a, b, idx, b->ndim);
}

/* e in the accumulator dtype (te's .astype(out_dtype): no cast when equal). */
static tir_expr_t *to_acc(wl_t *w, tir_expr_t *e) {
  return tir_dtype_eq(e->dtype, w->acc) ? e : tir_cast(w->a, w->acc, e);
}

static tir_expr_t *bin(wl_t *w, tir_expr_kind_t k, tir_expr_t *x, tir_expr_t *y) {
  return tir_binary(w->a, k, x, y);
}

static tir_expr_t *call1(wl_t *w, tir_op_t op, tir_expr_t *x) {
  return tir_call(w->a, x->dtype, op, &x, 1);
}

/* tir.const(v, t): an integer immediate for integer dtypes, else a float. */
static tir_expr_t *konst(wl_t *w, tir_dtype_t t, double v) {
  return tir_dtype_is_float(t) ? tir_float(w->a, t, v) : tir_int(w->a, t, (int64_t)v);
}

/* T.if_then_else(cond, then, 0) as topi's pad and dilate write it. */
static tir_expr_t *if_else_zero(wl_t *w, tir_expr_t *cond, tir_expr_t *then) {
  tir_expr_t *args[3] = {cond, then, konst(w, then->dtype, 0)};
  return tir_call(w->a, then->dtype, TIR_OP_IF_THEN_ELSE, args, 3);
}

/* tvm.tir.all: a left-leaning chain of `and`; NULL when there is nothing. */
static tir_expr_t *all_of(wl_t *w, tir_expr_t *acc, tir_expr_t *cond) {
  return acc ? bin(w, TIR_AND, acc, cond) : cond;
}

/* ------------------------------------------------------------------------ */
/* Computations: one block under a loop nest, like te.compute                */
/* ------------------------------------------------------------------------ */

typedef enum { RED_NONE, RED_SUM, RED_MAX } wl_red_t;

typedef struct {
  int nsp, n;                      /* spatial axes, all axes */
  int64_t ext[WL_MAX_AXES];
  tir_var_t *loop[WL_MAX_AXES];    /* loop variables */
  tir_var_t *v[WL_MAX_AXES];       /* block iteration variables, spatial first */
} wl_comp_t;

/* Axes "i,j,k" (spatial first, then reduction) with extents `ext`. Loop
 * variables take the names and block variables "v_<name>", as TVM prints. */
static void comp_axes(wl_t *w, wl_comp_t *c, const char *names, int nsp, const int64_t *ext) {
  memset(c, 0, sizeof(*c));
  c->nsp = nsp;
  for (const char *p = names; *p;) {
    size_t len = strcspn(p, ",");
    MLC_ASSERT(c->n < WL_MAX_AXES);
    char *name = mlc_arena_strndup(w->a, p, len);
    c->ext[c->n] = ext[c->n];
    c->loop[c->n] = tir_var(w->a, name, tir_dt_INT32());
    c->v[c->n] = tir_var(w->a, mlc_arena_printf(w->a, "v_%s", name), tir_dt_INT32());
    c->n++;
    p += len + (p[len] == ',');
  }
}

/* Read regions: each buffer the value loads, in order of first access, as
 * the point it accesses. Every workload loads a buffer at one point per
 * block (the accumulator is not part of `value`), as create_prim_func lists. */
typedef struct {
  wl_t *w;
  int n;
  tir_region_t regs[WL_MAX_BUFS];
} wl_reads_t;

static tir_region_t point_region(wl_t *w, tir_buffer_t *b, tir_expr_t **idx, int n) {
  tir_region_t r = {b, n, mlc_arena_alloc(w->a, sizeof(tir_range_t) * (size_t)(n > 0 ? n : 1))};
  for (int i = 0; i < n; i++) {
    r.ranges[i].min = idx[i];
    r.ranges[i].extent = ci(w, 1);
  }
  return r;
}

static bool collect_read(tir_visitor_t *v, tir_expr_t *e) {
  wl_reads_t *r = v->payload;
  if (e->kind != TIR_BUFFER_LOAD) return true;
  for (int i = 0; i < r->n; i++)
    if (r->regs[i].buffer == e->u.load.buffer) return true;
  MLC_ASSERT(r->n < WL_MAX_BUFS);
  r->regs[r->n++] = point_region(r->w, e->u.load.buffer, e->u.load.indices, e->u.load.nindices);
  return true;
}

/* The identity of a reduction in dtype t: 0 for sums, the lowest value for max. */
static tir_expr_t *red_identity(wl_t *w, wl_red_t red, tir_dtype_t t) {
  if (red == RED_SUM) return konst(w, t, 0);
  if (t.code == TIR_CODE_BFLOAT) return tir_float(w->a, t, -3.3895313892515355e+38);
  if (tir_dtype_is_float(t))
    return tir_float(w->a, t, t.bits == 16 ? -65504.0 : t.bits == 32 ? -FLT_MAX : -DBL_MAX);
  if (tir_dtype_is_int(t)) return tir_int(w->a, t, t.bits >= 64 ? INT64_MIN : -(INT64_C(1) << (t.bits - 1)));
  return tir_int(w->a, t, 0);
}

/* Emits `out[spatial] = value` (or its reduction) as a block named after out
 * under serial loops, appended to the root block's body. */
static tir_block_t *comp_emit(wl_t *w, const wl_comp_t *c, tir_buffer_t *out, tir_expr_t *value,
                              wl_red_t red) {
  mlc_arena_t *a = w->a;
  tir_block_t *b = tir_block_new(a, out->name);
  b->niter_vars = c->n;
  b->iter_vars = mlc_arena_alloc(a, sizeof(tir_iter_var_t) * (size_t)c->n);
  for (int i = 0; i < c->n; i++) {
    b->iter_vars[i].var = c->v[i];
    b->iter_vars[i].dom = (tir_range_t){ci(w, 0), ci(w, c->ext[i])};
    b->iter_vars[i].type = i < c->nsp ? TIR_ITER_SPATIAL : TIR_ITER_REDUCE;
  }
  tir_expr_t **idx = (tir_expr_t **)c->v; /* the output is indexed by the spatial axes */

  wl_reads_t reads = {.w = w};
  tir_visitor_t vis = {.expr = collect_read, .payload = &reads};
  tir_visit_expr(&vis, value);
  b->nreads = reads.n;
  b->reads = mlc_arena_memdup(a, reads.regs, sizeof(tir_region_t) * (size_t)(reads.n ? reads.n : 1));
  b->nwrites = 1;
  b->writes = mlc_arena_alloc(a, sizeof(tir_region_t));
  b->writes[0] = point_region(w, out, idx, c->nsp);

  if (red != RED_NONE) {
    b->init = tir_store(a, out, red_identity(w, red, out->dtype), idx, c->nsp);
    tir_expr_t *cur = tir_load(a, out, idx, c->nsp);
    value = bin(w, red == RED_SUM ? TIR_ADD : TIR_MAX, cur, value);
  }
  b->body = tir_store(a, out, value, idx, c->nsp);

  tir_stmt_t *s = tir_block_realize(a, (tir_expr_t **)c->loop, c->n, tir_bool(a, true), b);
  for (int i = c->n - 1; i >= 0; i--)
    s = tir_for(a, c->loop[i], ci(w, 0), ci(w, c->ext[i]), TIR_FOR_SERIAL, s);
  MLC_ASSERT(w->nnests < WL_MAX_BUFS);
  w->nests[w->nnests++] = s;
  return b;
}

/* Assembles the function: parameters, attributes, and the root block holding
 * the intermediate buffers and the loop nests in order. */
static void finish(wl_t *w, tir_func_t *f, const char *symbol) {
  mlc_arena_t *a = w->a;
  tir_block_t *root = tir_block_new(a, "root");
  root->nalloc_buffers = w->nallocs;
  if (w->nallocs)
    root->alloc_buffers = mlc_arena_memdup(a, w->allocs, sizeof(*w->allocs) * (size_t)w->nallocs);
  root->body = tir_seq(a, w->nests, w->nnests);
  f->body = tir_block_realize(a, NULL, 0, tir_bool(a, true), root);
  f->nparams = w->nparams;
  f->params = mlc_arena_memdup(a, w->params, sizeof(*w->params) * (size_t)w->nparams);
  f->buffer_map = mlc_arena_memdup(a, w->pbufs, sizeof(*w->pbufs) * (size_t)w->nparams);
  f->nattrs = 2;
  f->attrs = mlc_arena_alloc(a, sizeof(tir_annot_t) * 2);
  f->attrs[0] = (tir_annot_t){"global_symbol", tir_string(a, symbol)};
  f->attrs[1] = (tir_annot_t){"tir.noalias", tir_bool(a, true)};
}

/* ------------------------------------------------------------------------ */
/* Shared stages                                                             */
/* ------------------------------------------------------------------------ */

/* topi.nn.pad as a "PadInput" block: dims with padding read `x - before`
 * under `before <= x and x < size + before`, others copy. Returns the
 * padded buffer. */
static tir_buffer_t *pad_input(wl_t *w, tir_buffer_t *in, const int64_t *before, const int64_t *after) {
  int n = in->ndim;
  int64_t shape[TIR_MAX_DIMS], size[TIR_MAX_DIMS];
  for (int d = 0; d < n; d++) {
    tir_as_int(in->shape[d], &size[d]);
    shape[d] = size[d] + before[d] + after[d];
  }
  tir_buffer_t *out = temp(w, "PadInput", in->dtype, shape, n);
  static const char *const names[] = {"i0,i1,i2", "i0,i1,i2,i3", "i0,i1,i2,i3,i4"};
  MLC_ASSERT(n >= 3 && n <= 5);
  wl_comp_t c;
  comp_axes(w, &c, names[n - 3], n, shape);
  tir_expr_t *idx[TIR_MAX_DIMS], *cond = NULL;
  for (int d = 0; d < n; d++) {
    idx[d] = c.v[d];
    if (before[d] == 0 && after[d] == 0) continue;
    idx[d] = ixc(w, TIR_SUB, c.v[d], before[d]);
    cond = all_of(w, cond, bin(w, TIR_LE, ci(w, before[d]), c.v[d]));
    cond = all_of(w, cond, bin(w, TIR_LT, c.v[d], ci(w, size[d] + before[d])));
  }
  tir_expr_t *value = tir_load(w->a, in, idx, n);
  if (cond) value = if_else_zero(w, cond, value);
  comp_emit(w, &c, out, value, RED_NONE);
  return out;
}

/* The options of a convolution, in the order of the desc's dims after the
 * per-dimension sizes. */
typedef struct {
  int nd;                 /* spatial dimensions: 1, 2 or 3 */
  int64_t n, ci, co, stride, pad, dilation, groups;
  int64_t in[3], k[3], out[3];
} wl_conv_t;

static int conv_out_sizes(wl_t *w, wl_conv_t *cv) {
  static const char *const dim_names[3][3] = {{"L"}, {"H", "W"}, {"D", "H", "W"}};
  for (int d = 0; d < cv->nd; d++) {
    int64_t span = cv->dilation * (cv->k[d] - 1) + 1;
    cv->out[d] = (cv->in[d] + 2 * cv->pad - span) / cv->stride + 1;
    if (cv->in[d] + 2 * cv->pad < span)
      return mlc_error_set(MLC_EINVAL,
                           "%s: the kernel (extent %lld with dilation) is larger than the padded "
                           "input (%s=%lld, pad=%lld)",
                           w->name, (long long)span, dim_names[cv->nd - 1][d],
                           (long long)cv->in[d], (long long)cv->pad);
  }
  if (cv->ci % cv->groups || cv->co % cv->groups)
    return mlc_error_set(MLC_EINVAL, "%s: groups=%lld must divide CI=%lld and CO=%lld", w->name,
                         (long long)cv->groups, (long long)cv->ci, (long long)cv->co);
  return MLC_OK;
}

/* conv{1,2,3}d_n*c of te_workload: PadInput, then the reduction over the
 * kernel window and the channels of the group. */
static int build_conv(wl_t *w, wl_conv_t *cv) {
  static const char *const block[3] = {"conv1d_nlc", "conv2d_nhwc", "conv3d_ndhwc"};
  static const char *const axes[3] = {"n,l,co,rl,rc", "n,h,w,co,rh,rw,rc",
                                      "n,d,h,w,co,rd,rh,rw,rc"};
  int st = conv_out_sizes(w, cv);
  if (st != MLC_OK) return st;
  int nd = cv->nd;
  int64_t in_shape[5], w_shape[5], out_shape[5], ext[WL_MAX_AXES], pad[5] = {0}, cig = cv->ci / cv->groups;
  in_shape[0] = out_shape[0] = cv->n;
  for (int d = 0; d < nd; d++) {
    in_shape[1 + d] = cv->in[d];
    out_shape[1 + d] = cv->out[d];
    w_shape[d] = cv->k[d];
    pad[1 + d] = cv->pad;
  }
  in_shape[nd + 1] = cv->ci;
  out_shape[nd + 1] = cv->co;
  w_shape[nd] = cig;
  w_shape[nd + 1] = cv->co;
  tir_buffer_t *inputs = param(w, "inputs", w->in, in_shape, nd + 2);
  tir_buffer_t *weight = param(w, "weight", w->in, w_shape, nd + 2);
  tir_buffer_t *out = param(w, block[nd - 1], w->acc, out_shape, nd + 2);
  tir_buffer_t *padded = pad_input(w, inputs, pad, pad);

  memcpy(ext, out_shape, sizeof(int64_t) * (size_t)(nd + 2));
  for (int d = 0; d < nd; d++) ext[nd + 2 + d] = cv->k[d];
  ext[2 * nd + 2] = cig;
  wl_comp_t c;
  comp_axes(w, &c, axes[nd - 1], nd + 2, ext);
  tir_var_t *co = c.v[nd + 1], *rc = c.v[2 * nd + 2];
  tir_expr_t *pidx[5], *widx[5];
  pidx[0] = c.v[0];
  for (int d = 0; d < nd; d++) {
    pidx[1 + d] = conv_index(w, c.v[1 + d], cv->stride, c.v[nd + 2 + d], cv->dilation);
    widx[d] = c.v[nd + 2 + d];
  }
  /* co // out_channel_per_group * channel_per_group + rc */
  pidx[nd + 1] = ix(w, TIR_ADD, ixc(w, TIR_MUL, ixc(w, TIR_FLOOR_DIV, co, cv->co / cv->groups), cig), rc);
  widx[nd] = rc;
  widx[nd + 1] = co;
  tir_expr_t *value = bin(w, TIR_MUL, to_acc(w, tir_load(w->a, padded, pidx, nd + 2)),
                          to_acc(w, tir_load(w->a, weight, widx, nd + 2)));
  comp_emit(w, &c, out, value, RED_SUM);
  return MLC_OK;
}

/* ------------------------------------------------------------------------ */
/* The workloads                                                             */
/* ------------------------------------------------------------------------ */

static int build_gmm(wl_t *w) {
  int64_t M = w->s[0], N = w->s[1], K = w->s[2];
  tir_buffer_t *A = param(w, "A", w->in, SHAPE(M, K));
  tir_buffer_t *B = param(w, "B", w->in, SHAPE(K, N));
  tir_buffer_t *C = param(w, "C", w->acc, SHAPE(M, N));
  wl_comp_t c;
  comp_axes(w, &c, "i,j,k", 2, (int64_t[]){M, N, K});
  tir_var_t *i = c.v[0], *j = c.v[1], *k = c.v[2];
  comp_emit(w, &c, C, bin(w, TIR_MUL, to_acc(w, ld(w, A, i, k)), to_acc(w, ld(w, B, k, j))), RED_SUM);
  return MLC_OK;
}

static int build_bmm(wl_t *w) {
  int64_t Bn = w->s[0], M = w->s[1], N = w->s[2], K = w->s[3];
  tir_buffer_t *X = param(w, "X", w->in, SHAPE(Bn, M, K));
  tir_buffer_t *Y = param(w, "Y", w->in, SHAPE(Bn, K, N));
  tir_buffer_t *Z = param(w, "Z", w->acc, SHAPE(Bn, M, N));
  wl_comp_t c;
  comp_axes(w, &c, "b,i,j,k", 3, (int64_t[]){Bn, M, N, K});
  tir_var_t *b = c.v[0], *i = c.v[1], *j = c.v[2], *k = c.v[3];
  comp_emit(w, &c, Z, bin(w, TIR_MUL, to_acc(w, ld(w, X, b, i, k)), to_acc(w, ld(w, Y, b, k, j))),
            RED_SUM);
  return MLC_OK;
}

static int build_gmv(wl_t *w) {
  int64_t M = w->s[0], K = w->s[1];
  tir_buffer_t *A = param(w, "A", w->in, SHAPE(M, K));
  tir_buffer_t *B = param(w, "B", w->in, SHAPE(K));
  tir_buffer_t *C = param(w, "C", w->acc, SHAPE(M));
  wl_comp_t c;
  comp_axes(w, &c, "i,k", 1, (int64_t[]){M, K});
  tir_var_t *i = c.v[0], *k = c.v[1];
  comp_emit(w, &c, C, bin(w, TIR_MUL, to_acc(w, ld(w, A, i, k)), to_acc(w, ld(w, B, k))), RED_SUM);
  return MLC_OK;
}

/* C1D: N,L,CI,CO,KW,stride,pad */
static int build_c1d(wl_t *w) {
  const int64_t *s = w->s;
  wl_conv_t cv = {.nd = 1, .n = s[0], .in = {s[1]}, .ci = s[2], .co = s[3], .k = {s[4]},
                  .stride = s[5], .pad = s[6], .dilation = 1, .groups = 1};
  return build_conv(w, &cv);
}

/* C2D, DIL, GRP: N,H,W,CI,CO,KH,KW,stride,pad[,dilation|groups] */
static int conv2d_with(wl_t *w, int64_t dilation, int64_t groups) {
  const int64_t *s = w->s;
  wl_conv_t cv = {.nd = 2, .n = s[0], .in = {s[1], s[2]}, .ci = s[3], .co = s[4],
                  .k = {s[5], s[6]}, .stride = s[7], .pad = s[8], .dilation = dilation,
                  .groups = groups};
  return build_conv(w, &cv);
}
static int build_c2d(wl_t *w) { return conv2d_with(w, 1, 1); }
static int build_dil(wl_t *w) { return conv2d_with(w, w->s[9], 1); }
static int build_grp(wl_t *w) { return conv2d_with(w, 1, w->s[9]); }

/* C3D: N,D,H,W,CI,CO,KD,KH,KW,stride,pad */
static int build_c3d(wl_t *w) {
  const int64_t *s = w->s;
  wl_conv_t cv = {.nd = 3, .n = s[0], .in = {s[1], s[2], s[3]}, .ci = s[4], .co = s[5],
                  .k = {s[6], s[7], s[8]}, .stride = s[9], .pad = s[10], .dilation = 1,
                  .groups = 1};
  return build_conv(w, &cv);
}

/* DEP: N,H,W,C,KH,KW,stride,pad (channel multiplier 1, as te_workload). */
static int build_dep(wl_t *w) {
  const int64_t *s = w->s;
  int64_t N = s[0], C = s[3], KH = s[4], KW = s[5], stride = s[6], pad = s[7];
  wl_conv_t cv = {.nd = 2, .n = N, .in = {s[1], s[2]}, .ci = C, .co = C, .k = {KH, KW},
                  .stride = stride, .pad = pad, .dilation = 1, .groups = 1};
  int st = conv_out_sizes(w, &cv);
  if (st != MLC_OK) return st;
  int64_t OH = cv.out[0], OW = cv.out[1];
  tir_buffer_t *inputs = param(w, "inputs", w->in, SHAPE(N, s[1], s[2], C));
  tir_buffer_t *weight = param(w, "weight", w->in, SHAPE(1, KH, KW, C));
  tir_buffer_t *out = param(w, "depth_conv2d_nhwc", w->acc, SHAPE(N, OH, OW, C));
  tir_buffer_t *padded = pad_input(w, inputs, (int64_t[]){0, pad, pad, 0}, (int64_t[]){0, pad, pad, 0});
  wl_comp_t c;
  comp_axes(w, &c, "n,h,w,c,rh,rw", 4, (int64_t[]){N, OH, OW, C, KH, KW});
  tir_var_t *n = c.v[0], *h = c.v[1], *x = c.v[2], *ch = c.v[3], *rh = c.v[4], *rw = c.v[5];
  tir_expr_t *p = ld(w, padded, n, conv_index(w, h, stride, rh, 1), conv_index(w, x, stride, rw, 1),
                     ixc(w, TIR_FLOOR_DIV, ch, 1));
  tir_expr_t *k = ld(w, weight, ixc(w, TIR_FLOOR_MOD, ch, 1), rh, rw, ixc(w, TIR_FLOOR_DIV, ch, 1));
  comp_emit(w, &c, out, bin(w, TIR_MUL, to_acc(w, p), to_acc(w, k)), RED_SUM);
  return MLC_OK;
}

/* T2D: N,H,W,CI,CO,KH,KW,stride,pad. te_workload's conv2d_transpose_nhwc:
 * pad the input by ceil((K - 1 - pad) / stride) on each side, read it
 * "dilated" by the stride (zero between samples) and correlate with the
 * flipped kernel. out = (in - 1) * stride - 2 * pad + K. */
static tir_expr_t *t2d_dilate_index(wl_t *w, tir_expr_t *x, tir_expr_t *r, int64_t border,
                                    int64_t stride, tir_expr_t **cond) {
  tir_expr_t *pos = ixc(w, TIR_ADD, ix(w, TIR_ADD, x, r), border);
  if (stride == 1) return pos;
  *cond = all_of(w, *cond, bin(w, TIR_EQ, ixc(w, TIR_FLOOR_MOD, pos, stride), ci(w, 0)));
  return ixc(w, TIR_FLOOR_DIV, pos, stride);
}

static int build_t2d(wl_t *w) {
  const int64_t *s = w->s;
  int64_t N = s[0], H = s[1], W = s[2], CI = s[3], CO = s[4], KH = s[5], KW = s[6];
  int64_t stride = s[7], pad = s[8];
  if (pad > KH - 1 || pad > KW - 1)
    return mlc_error_set(MLC_EINVAL, "T2D: pad=%lld must be at most the kernel size - 1 (KH=%lld, KW=%lld)",
                         (long long)pad, (long long)KH, (long long)KW);
  int64_t OH = (H - 1) * stride - 2 * pad + KH, OW = (W - 1) * stride - 2 * pad + KW;
  if (OH < 1 || OW < 1)
    return mlc_error_set(MLC_EINVAL, "T2D: the output would be empty (%lldx%lld)", (long long)OH,
                         (long long)OW);
  int64_t bh = KH - 1 - pad, bw = KW - 1 - pad; /* the "backward" padding */
  int64_t ph = (bh + stride - 1) / stride, pw = (bw + stride - 1) / stride;
  int64_t border_h = (stride - bh % stride) % stride, border_w = (stride - bw % stride) % stride;
  tir_buffer_t *inputs = param(w, "inputs", w->in, SHAPE(N, H, W, CI));
  tir_buffer_t *weight = param(w, "weight", w->in, SHAPE(KH, KW, CI, CO));
  tir_buffer_t *out = param(w, "conv2d_transpose_nhwc", w->acc, SHAPE(N, OH, OW, CO));
  int64_t pads[4] = {0, ph, pw, 0};
  tir_buffer_t *padded = pad_input(w, inputs, pads, pads);
  wl_comp_t c;
  comp_axes(w, &c, "n,h,w,co,rh,rw,rc", 4, (int64_t[]){N, OH, OW, CO, KH, KW, CI});
  tir_var_t *n = c.v[0], *h = c.v[1], *x = c.v[2], *co = c.v[3], *rh = c.v[4], *rw = c.v[5], *rc = c.v[6];
  tir_expr_t *cond = NULL;
  tir_expr_t *ih = t2d_dilate_index(w, h, rh, border_h, stride, &cond);
  tir_expr_t *iw = t2d_dilate_index(w, x, rw, border_w, stride, &cond);
  tir_expr_t *p = ld(w, padded, n, ih, iw, rc);
  if (cond) p = if_else_zero(w, cond, p);
  tir_expr_t *k = ld(w, weight, ix(w, TIR_SUB, ci(w, KH - 1), rh), ix(w, TIR_SUB, ci(w, KW - 1), rw), rc, co);
  comp_emit(w, &c, out, bin(w, TIR_MUL, to_acc(w, p), to_acc(w, k)), RED_SUM);
  return MLC_OK;
}

/* NRM: B,M,N. te_workload's norm_bmn: C[b] = sum A^2 over (i, j); D = sqrt(C). */
static int build_nrm(wl_t *w) {
  int64_t B = w->s[0], M = w->s[1], N = w->s[2];
  tir_buffer_t *A = param(w, "A", w->in, SHAPE(B, M, N));
  tir_buffer_t *D = param(w, "D", w->acc, SHAPE(B));
  tir_buffer_t *C = temp(w, "C", w->acc, SHAPE(B));
  wl_comp_t c;
  comp_axes(w, &c, "b,i,j", 1, (int64_t[]){B, M, N});
  tir_expr_t *a1 = to_acc(w, ld(w, A, c.v[0], c.v[1], c.v[2]));
  tir_expr_t *a2 = to_acc(w, ld(w, A, c.v[0], c.v[1], c.v[2]));
  comp_emit(w, &c, C, bin(w, TIR_MUL, a1, a2), RED_SUM);
  comp_axes(w, &c, "b", 1, (int64_t[]){B});
  comp_emit(w, &c, D, call1(w, TIR_OP_SQRT, ld(w, C, c.v[0])), RED_NONE);
  return MLC_OK;
}

/* SFM: M,N. topi.nn.softmax(A, axis=1): max, exp, sum, normalise. */
static int build_sfm(wl_t *w) {
  int64_t M = w->s[0], N = w->s[1];
  tir_buffer_t *A = param(w, "A", w->in, SHAPE(M, N));
  tir_buffer_t *out = param(w, "T_softmax_norm", w->acc, SHAPE(M, N));
  tir_buffer_t *mx = temp(w, "T_softmax_maxelem", w->acc, SHAPE(M));
  tir_buffer_t *ex = temp(w, "T_softmax_exp", w->acc, SHAPE(M, N));
  tir_buffer_t *sum = temp(w, "T_softmax_expsum", w->acc, SHAPE(M));
  wl_comp_t c;
  comp_axes(w, &c, "i0,k", 1, (int64_t[]){M, N});
  comp_emit(w, &c, mx, to_acc(w, ld(w, A, c.v[0], c.v[1])), RED_MAX);
  comp_axes(w, &c, "i0,i1", 2, (int64_t[]){M, N});
  comp_emit(w, &c, ex, call1(w, TIR_OP_EXP, bin(w, TIR_SUB, to_acc(w, ld(w, A, c.v[0], c.v[1])), ld(w, mx, c.v[0]))),
            RED_NONE);
  comp_axes(w, &c, "i0,k", 1, (int64_t[]){M, N});
  comp_emit(w, &c, sum, ld(w, ex, c.v[0], c.v[1]), RED_SUM);
  comp_axes(w, &c, "i0,i1", 2, (int64_t[]){M, N});
  tir_block_t *b = comp_emit(w, &c, out, bin(w, TIR_DIV, ld(w, ex, c.v[0], c.v[1]), ld(w, sum, c.v[0])), RED_NONE);
  /* topi marks the normalisation with the softmax axis; create_prim_func keeps it. */
  b->nannots = 1;
  b->annots = mlc_arena_alloc(w->a, sizeof(tir_annot_t));
  b->annots[0] = (tir_annot_t){"axis", ci(w, 1)};
  return MLC_OK;
}

/* LN: M,N. Layer normalisation over the last axis:
 *   mean[i] = sum_k A[i, k] / N
 *   var[i]  = sum_k (A[i, k] - mean[i])^2 / N
 *   out[i, j] = (A[i, j] - mean[i]) * rsqrt(var[i] + 1e-5) * gamma[j] + beta[j] */
static tir_expr_t *ln_centered(wl_t *w, tir_buffer_t *A, tir_buffer_t *mean, tir_var_t *i, tir_var_t *j) {
  return bin(w, TIR_SUB, to_acc(w, ld(w, A, i, j)), ld(w, mean, i));
}

static int build_ln(wl_t *w) {
  int64_t M = w->s[0], N = w->s[1];
  tir_buffer_t *A = param(w, "A", w->in, SHAPE(M, N));
  tir_buffer_t *gamma = param(w, "gamma", w->in, SHAPE(N));
  tir_buffer_t *beta = param(w, "beta", w->in, SHAPE(N));
  tir_buffer_t *out = param(w, "T_layer_norm", w->acc, SHAPE(M, N));
  tir_buffer_t *mean = temp(w, "T_layer_norm_mean", w->acc, SHAPE(M));
  tir_buffer_t *var = temp(w, "T_layer_norm_var", w->acc, SHAPE(M));
  tir_expr_t *n = konst(w, w->acc, (double)N);
  wl_comp_t c;
  comp_axes(w, &c, "i,k", 1, (int64_t[]){M, N});
  comp_emit(w, &c, mean, bin(w, TIR_DIV, to_acc(w, ld(w, A, c.v[0], c.v[1])), n), RED_SUM);
  comp_axes(w, &c, "i,k", 1, (int64_t[]){M, N});
  tir_expr_t *sq = bin(w, TIR_MUL, ln_centered(w, A, mean, c.v[0], c.v[1]), ln_centered(w, A, mean, c.v[0], c.v[1]));
  comp_emit(w, &c, var, bin(w, TIR_DIV, sq, n), RED_SUM);
  comp_axes(w, &c, "i,j", 2, (int64_t[]){M, N});
  tir_var_t *i = c.v[0], *j = c.v[1];
  tir_expr_t *inv = call1(w, TIR_OP_RSQRT, bin(w, TIR_ADD, ld(w, var, i), konst(w, w->acc, 1e-5)));
  tir_expr_t *v = bin(w, TIR_MUL, bin(w, TIR_MUL, ln_centered(w, A, mean, i, j), inv), to_acc(w, ld(w, gamma, j)));
  comp_emit(w, &c, out, bin(w, TIR_ADD, v, to_acc(w, ld(w, beta, j))), RED_NONE);
  return MLC_OK;
}

/* D+B+R: M,N,K. topi dense (weight is N x K), then add bias, then relu. */
static int build_dbr(wl_t *w) {
  int64_t M = w->s[0], N = w->s[1], K = w->s[2];
  tir_buffer_t *data = param(w, "data", w->in, SHAPE(M, K));
  tir_buffer_t *weight = param(w, "weight", w->in, SHAPE(N, K));
  tir_buffer_t *bias = param(w, "bias", w->acc, SHAPE(N));
  tir_buffer_t *out = param(w, "T_relu", w->acc, SHAPE(M, N));
  tir_buffer_t *mm = temp(w, "T_matmul_NT", w->acc, SHAPE(M, N));
  tir_buffer_t *add = temp(w, "T_add", w->acc, SHAPE(M, N));
  wl_comp_t c;
  comp_axes(w, &c, "i,j,k", 2, (int64_t[]){M, N, K});
  tir_var_t *i = c.v[0], *j = c.v[1], *k = c.v[2];
  comp_emit(w, &c, mm, bin(w, TIR_MUL, to_acc(w, ld(w, data, i, k)), to_acc(w, ld(w, weight, j, k))), RED_SUM);
  comp_axes(w, &c, "ax0,ax1", 2, (int64_t[]){M, N});
  comp_emit(w, &c, add, bin(w, TIR_ADD, ld(w, mm, c.v[0], c.v[1]), ld(w, bias, c.v[1])), RED_NONE);
  comp_axes(w, &c, "ax0,ax1", 2, (int64_t[]){M, N});
  comp_emit(w, &c, out, bin(w, TIR_MAX, ld(w, add, c.v[0], c.v[1]), konst(w, w->acc, 0)), RED_NONE);
  return MLC_OK;
}

/* ------------------------------------------------------------------------ */
/* The table                                                                 */
/* ------------------------------------------------------------------------ */

#define WL_UNPAREN(...) __VA_ARGS__

/* Float-only workloads (normalisations) say so in the last column.
 *  name     symbol  build      float dims                                   n   defaults                               summary */
#define TIR_WORKLOADS(X)                                                                                                  \
  X("GMM",   "gmm",  build_gmm, false, "M,N,K",                              3,  (1024, 1024, 1024),                      \
    "matrix multiply: C[i, j] = sum_k A[i, k] * B[k, j]")                                                                 \
  X("BMM",   "bmm",  build_bmm, false, "B,M,N,K",                            4,  (16, 512, 512, 64),                      \
    "batch matrix multiply: Z[b, i, j] = sum_k X[b, i, k] * Y[b, k, j]")                                                  \
  X("GMV",   "gmv",  build_gmv, false, "M,K",                                2,  (1024, 1024),                            \
    "matrix-vector multiply: C[i] = sum_k A[i, k] * B[k]")                                                                \
  X("C1D",   "c1d",  build_c1d, false, "N,L,CI,CO,KW,stride,pad",            7,  (1, 256, 64, 128, 3, 2, 1),              \
    "1-D convolution, NLC layout (conv1d_nlc)")                                                                           \
  X("C2D",   "c2d",  build_c2d, false, "N,H,W,CI,CO,KH,KW,stride,pad",       9,  (1, 56, 56, 64, 64, 3, 3, 1, 1),         \
    "2-D convolution, NHWC layout (conv2d_nhwc)")                                                                         \
  X("C3D",   "c3d",  build_c3d, false, "N,D,H,W,CI,CO,KD,KH,KW,stride,pad",  11, (1, 16, 56, 56, 64, 64, 3, 3, 3, 1, 1),  \
    "3-D convolution, NDHWC layout (conv3d_ndhwc)")                                                                       \
  X("DEP",   "dep",  build_dep, false, "N,H,W,C,KH,KW,stride,pad",           8,  (1, 112, 112, 32, 3, 3, 1, 1),           \
    "depthwise 2-D convolution, NHWC layout (depth_conv2d_nhwc)")                                                         \
  X("DIL",   "dil",  build_dil, false, "N,H,W,CI,CO,KH,KW,stride,pad,dilation", 10, (1, 56, 56, 64, 64, 3, 3, 1, 2, 2),  \
    "dilated 2-D convolution, NHWC layout (conv2d_nhwc)")                                                                 \
  X("GRP",   "grp",  build_grp, false, "N,H,W,CI,CO,KH,KW,stride,pad,groups", 10, (1, 56, 56, 64, 128, 3, 3, 2, 1, 4),   \
    "grouped 2-D convolution, NHWC layout (conv2d_nhwc)")                                                                 \
  X("T2D",   "t2d",  build_t2d, false, "N,H,W,CI,CO,KH,KW,stride,pad",       9,  (1, 4, 4, 512, 256, 4, 4, 2, 1),         \
    "transposed 2-D convolution, NHWC layout (conv2d_transpose_nhwc)")                                                    \
  X("NRM",   "nrm",  build_nrm, true,  "B,M,N",                              3,  (1, 256, 256),                           \
    "norm: D[b] = sqrt(sum_ij A[b, i, j]^2)")                                                                             \
  X("SFM",   "sfm",  build_sfm, true,  "M,N",                                2,  (256, 256),                              \
    "softmax over the last axis")                                                                                         \
  X("LN",    "ln",   build_ln,  true,  "M,N",                                2,  (512, 768),                              \
    "layer normalisation over the last axis, with gamma, beta and epsilon 1e-5")                                          \
  X("D+B+R", "dbr",  build_dbr, false, "M,N,K",                              3,  (128, 3072, 768),                        \
    "dense (data x weight^T) + bias + relu, three blocks")

static const tir_workload_desc_t descs[] = {
#define ROW_(name, sym, fn, fl, dims, n, defs, summary) {name, summary, dims, n, {WL_UNPAREN defs}, "float32"},
    TIR_WORKLOADS(ROW_)
#undef ROW_
};

static const struct {
  const char *symbol;
  wl_build_fn build;
  bool float_only;
} impls[] = {
#define ROW_(name, sym, fn, fl, dims, n, defs, summary) {sym, fn, fl},
    TIR_WORKLOADS(ROW_)
#undef ROW_
};

#define NWORKLOADS ((int)(sizeof(descs) / sizeof(descs[0])))

const tir_workload_desc_t *tir_workloads(int *n) {
  if (n) *n = NWORKLOADS;
  return descs;
}

const tir_workload_desc_t *tir_workload_find(const char *name) {
  for (int i = 0; name && i < NWORKLOADS; i++)
    if (strcasecmp(descs[i].name, name) == 0) return &descs[i];
  return NULL;
}

/* ------------------------------------------------------------------------ */
/* Options                                                                   */
/* ------------------------------------------------------------------------ */

/* The i-th name of a "M,N,K" list into buf. */
static const char *dim_name(const char *dims, int i, char *buf, size_t len) {
  const char *p = dims;
  for (; i > 0 && p; i--) p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL;
  size_t n = p ? strcspn(p, ",") : 0;
  if (n >= len) n = len - 1;
  memcpy(buf, p ? p : "", n);
  buf[n] = '\0';
  return buf;
}

/* Padding may be 0; every other option is at least 1. Sizes stay within
 * int32 (TVM's index type). */
static int check_shape(const tir_workload_desc_t *d, const int64_t *s) {
  char name[32];
  for (int i = 0; i < d->ndims; i++) {
    dim_name(d->dims, i, name, sizeof(name));
    int64_t lo = strcmp(name, "pad") == 0 ? 0 : 1;
    if (s[i] < lo || s[i] > INT32_MAX)
      return mlc_error_set(MLC_EINVAL, "%s: %s=%lld is out of range (must be %s)", d->name, name,
                           (long long)s[i], lo ? "positive" : "non-negative");
  }
  return MLC_OK;
}

static bool dtype_supported(tir_dtype_t t) {
  if (t.lanes != 1) return false;
  if (t.code == TIR_CODE_FLOAT) return t.bits == 16 || t.bits == 32 || t.bits == 64;
  if (t.code == TIR_CODE_BFLOAT) return t.bits == 16;
  if (t.code == TIR_CODE_INT || t.code == TIR_CODE_UINT) return t.bits >= 8 && t.bits <= 64;
  return false;
}

/* Resolves the zero dtypes to the defaults (float32 inputs; 16-bit floats
 * accumulate in float32, narrow integers in int32) and checks the pair. */
static int resolve_dtypes(const char *name, bool float_only, tir_dtype_t *in, tir_dtype_t *acc) {
  char b1[32], b2[32];
  if (in->bits == 0) *in = tir_dt_FLOAT32();
  if (!dtype_supported(*in))
    return mlc_error_set(MLC_EINVAL, "%s: unsupported input dtype %s", name, tir_dtype_str(*in, b1));
  if (acc->bits == 0) {
    *acc = *in;
    if (tir_dtype_is_float(*in) && in->bits == 16) *acc = tir_dt_FLOAT32();
    if (tir_dtype_is_integer(*in) && in->bits < 32) *acc = tir_dt_INT32();
  }
  if (!dtype_supported(*acc) || tir_dtype_is_float(*acc) != tir_dtype_is_float(*in))
    return mlc_error_set(MLC_EINVAL, "%s: unsupported accumulator dtype %s for %s inputs", name,
                         tir_dtype_str(*acc, b1), tir_dtype_str(*in, b2));
  if (float_only && !tir_dtype_is_float(*in))
    return mlc_error_set(MLC_EINVAL, "%s is a normalisation and needs a float dtype, not %s", name,
                         tir_dtype_str(*in, b1));
  return MLC_OK;
}

static int build_checked(tir_func_t *f, wl_t *w, wl_build_fn build, const char *symbol) {
  jmp_buf oom;
  mlc_arena_set_oom_handler(w->a, &oom);
  if (setjmp(oom)) {
    mlc_arena_set_oom_handler(w->a, NULL);
    return mlc_error_set(MLC_ENOMEM, "%s: out of memory building the workload", w->name);
  }
  int st = build(w);
  if (st == MLC_OK && w->too_big)
    st = mlc_error_set(MLC_EINVAL, "%s: buffer %s would have more than 2^31-1 elements", w->name,
                       w->too_big);
  if (st == MLC_OK) finish(w, f, symbol);
  mlc_arena_set_oom_handler(w->a, NULL);
  return st;
}

int tir_workload_build(tir_func_t **out, const char *name, const int64_t *shape, int nshape,
                       tir_dtype_t in_dtype, tir_dtype_t acc_dtype) {
  *out = NULL;
  const tir_workload_desc_t *d = tir_workload_find(name);
  if (!d) return mlc_error_set(MLC_EINVAL, "unknown workload '%s' (see `mlc-tir workload --list`)", name ? name : "");
  int idx = (int)(d - descs);
  if (nshape != 0 && nshape != d->ndims)
    return mlc_error_set(MLC_EINVAL, "%s takes %d shape values (%s), got %d", d->name, d->ndims, d->dims,
                         nshape);
  const int64_t *s = nshape ? shape : d->defaults;
  int st = check_shape(d, s);
  if (st == MLC_OK) st = resolve_dtypes(d->name, impls[idx].float_only, &in_dtype, &acc_dtype);
  if (st != MLC_OK) return st;

  tir_func_t *f = tir_func_new(impls[idx].symbol);
  if (!f) return mlc_error_set(MLC_ENOMEM, "%s: out of memory", d->name);
  wl_t w = {.a = f->arena, .name = d->name, .in = in_dtype, .acc = acc_dtype, .s = s};
  st = build_checked(f, &w, impls[idx].build, impls[idx].symbol);
  if (st != MLC_OK) {
    tir_func_free(f);
    return st;
  }
  *out = f;
  return MLC_OK;
}
