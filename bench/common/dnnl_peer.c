/*
 * dnnl_peer.c - oneDNN primitives as contenders: one primitive per
 * problem, its inputs bound (or reordered once into the layouts it picked),
 * timed as execute + wait. See dnnl_peer.h.
 */
#include "bench/common/dnnl_peer.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__has_include)
#if __has_include(<dnnl.h>)
#define BENCH_DNNL_HEADER 1
#endif
#endif

#ifndef BENCH_DNNL_HEADER

void bench_dnnl_describe(char *buf, size_t len) { snprintf(buf, len, "oneDNN: <dnnl.h> was not found at build time"); }

bool bench_dnnl_init(bench_contender_t *c, const bench_wl_problem_t *p, int ci, int threads, char *why, size_t len) {
  (void)c, (void)p, (void)ci, (void)threads;
  snprintf(why, len, "oneDNN is not built in");
  return false;
}

#else

#include <dlfcn.h>
#include <dnnl.h>
#include <dnnl_debug.h>

#define MAX_ARGS 8

typedef struct {
  const bench_wl_problem_t *p;
  int threads;
  dnnl_primitive_desc_t pd;
  dnnl_primitive_t prim;
  int nargs;
  dnnl_exec_arg_t args[MAX_ARGS];
  int nmems;
  dnnl_memory_t mems[2 * MAX_ARGS]; /* every memory made here, released at the end */
  dnnl_primitive_t dst_reorder;     /* the primitive's dst -> out, for the check; NULL when dst is out */
  dnnl_memory_t dst, dst_user;
  float *out;                       /* the output in the workload's layout */
} dnnl_impl_t;

/* One engine and stream for all contenders, made with the first and
 * released with the last. */
static dnnl_engine_t engine;
static dnnl_stream_t stream;
static int nusers;
static void (*omp_set_threads)(int);

static void set_threads(int n) {
  if (omp_set_threads) omp_set_threads(n);
}

void bench_dnnl_describe(char *buf, size_t len) {
  const dnnl_version_t *v = dnnl_version();
  unsigned rt = v->cpu_runtime;
  const char *runtime = rt == DNNL_RUNTIME_OMP ? "OpenMP" : rt == DNNL_RUNTIME_TBB ? "TBB"
                        : rt == DNNL_RUNTIME_THREADPOOL ? "threadpool" : rt == DNNL_RUNTIME_SEQ ? "sequential" : "other";
  void *sym = dlsym(RTLD_DEFAULT, "omp_set_num_threads");
  snprintf(buf, len, "oneDNN %d.%d.%d (commit %s), CPU runtime %s, %s", v->major, v->minor, v->patch,
           v->hash ? v->hash : "unknown", runtime,
           sym ? "threads set with omp_set_num_threads" : "no omp_set_num_threads: its default thread count");
}

/* What one init needs to report a failure. */
typedef struct {
  dnnl_impl_t *d;
  char *why;
  size_t len;
} mk_t;

static bool ck(mk_t *m, dnnl_status_t st, const char *what) {
  if (st == dnnl_success) return true;
  snprintf(m->why, m->len, "%s: %s", what, dnnl_status2str(st));
  return false;
}

static bool md_init(mk_t *m, dnnl_memory_desc_t *md, int nd, const dnnl_dims_t dims, dnnl_format_tag_t tag) {
  return ck(m, dnnl_memory_desc_init_by_tag(md, nd, dims, dnnl_f32, tag), "dnnl_memory_desc_init_by_tag");
}

/* A memory on `handle` (DNNL_MEMORY_ALLOCATE: oneDNN's own), kept for release. */
static dnnl_memory_t mem_new(mk_t *m, const dnnl_memory_desc_t *md, void *handle) {
  dnnl_memory_t mem = NULL;
  if (!ck(m, dnnl_memory_create(&mem, md, engine, handle), "dnnl_memory_create")) return NULL;
  m->d->mems[m->d->nmems++] = mem;
  return mem;
}

static void add_arg(dnnl_impl_t *d, int arg, dnnl_memory_t mem) { d->args[d->nargs++] = (dnnl_exec_arg_t){arg, mem}; }

/* A reorder primitive from `from` (layout fmd) to `to` (layout tmd). */
static bool reorder_new(mk_t *m, dnnl_primitive_t *out, const dnnl_memory_desc_t *fmd, const dnnl_memory_desc_t *tmd) {
  dnnl_primitive_desc_t rpd = NULL;
  bool ok = ck(m, dnnl_reorder_primitive_desc_create(&rpd, fmd, engine, tmd, engine, NULL), "reorder");
  ok = ok && ck(m, dnnl_primitive_create(out, rpd), "reorder primitive");
  if (rpd) dnnl_primitive_desc_destroy(rpd);
  return ok;
}

static bool reorder_run(mk_t *m, dnnl_primitive_t r, dnnl_memory_t from, dnnl_memory_t to) {
  dnnl_exec_arg_t args[2] = {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}};
  return ck(m, dnnl_primitive_execute(r, stream, 2, args), "reorder") && ck(m, dnnl_stream_wait(stream), "wait");
}

/* Argument `arg` from our array `data` in layout user: bound as it is when
 * the primitive takes that layout, else reordered once (untimed) into a
 * memory of the layout the primitive asks for (query what). */
static bool bind_input(mk_t *m, int arg, dnnl_query_t what, const dnnl_memory_desc_t *user, const float *data) {
  const dnnl_memory_desc_t *want = dnnl_primitive_desc_query_md(m->d->pd, what, 0);
  dnnl_memory_t mine = mem_new(m, user, (void *)(uintptr_t)data), mem = mine;
  if (!mine || !want) return mine && ck(m, dnnl_invalid_arguments, "query of an input's layout");
  if (!dnnl_memory_desc_equal(want, user)) {
    dnnl_primitive_t r = NULL;
    mem = mem_new(m, want, DNNL_MEMORY_ALLOCATE);
    bool ok = mem && reorder_new(m, &r, user, want) && reorder_run(m, r, mine, mem);
    if (r) dnnl_primitive_destroy(r);
    if (!ok) return false;
  }
  add_arg(m->d, arg, mem);
  return true;
}

/* A one-dimensional argument (LN's scale and shift): plain, as it is. */
static bool bind_plain(mk_t *m, int arg, const dnnl_memory_desc_t *md, const float *data) {
  dnnl_memory_t mem = mem_new(m, md, (void *)(uintptr_t)data);
  if (mem) add_arg(m->d, arg, mem);
  return mem != NULL;
}

/* The destination: our output array when the primitive writes that layout,
 * else a memory of its layout and a reorder into ours (for the check). */
static bool bind_output(mk_t *m, const dnnl_memory_desc_t *user) {
  dnnl_impl_t *d = m->d;
  const dnnl_memory_desc_t *want = dnnl_primitive_desc_query_md(d->pd, dnnl_query_dst_md, 0);
  d->dst = d->dst_user = mem_new(m, user, d->out);
  if (!d->dst || !want) return d->dst && ck(m, dnnl_invalid_arguments, "query of the output's layout");
  if (!dnnl_memory_desc_equal(want, user)) {
    d->dst = mem_new(m, want, DNNL_MEMORY_ALLOCATE);
    if (!d->dst || !reorder_new(m, &d->dst_reorder, want, user)) return false;
  }
  add_arg(d, DNNL_ARG_DST, d->dst);
  return true;
}

static bool pd_new(mk_t *m, const void *op_desc) {
  return ck(m, dnnl_primitive_desc_create(&m->d->pd, op_desc, NULL, engine, NULL), "dnnl_primitive_desc_create");
}

/* ------------------------------------------------------------------------ */
/* The primitives                                                            */
/* ------------------------------------------------------------------------ */

/* GMM: A[M, K] B[K, N]; BMM: X[B, M, K] Y[B, K, N]; plain row-major. */
static bool setup_matmul(mk_t *m) {
  const int64_t *s = m->d->p->c.shape;
  bool batched = m->d->p->kind == BENCH_WL_BMM;
  int nd = batched ? 3 : 2;
  int64_t B = s[0], M = s[batched], N = s[batched + 1], K = s[batched + 2];
  dnnl_dims_t a = {B, M, K}, b = {B, K, N}, c = {B, M, N};
  if (!batched) a[0] = M, a[1] = K, b[0] = K, b[1] = N, c[0] = M, c[1] = N;
  dnnl_format_tag_t tag = batched ? dnnl_abc : dnnl_ab;
  dnnl_memory_desc_t amd, bmd, cmd;
  dnnl_matmul_desc_t desc;
  const float *const *in = (const float *const *)m->d->p->in;
  return md_init(m, &amd, nd, a, tag) && md_init(m, &bmd, nd, b, tag) && md_init(m, &cmd, nd, c, tag) &&
         ck(m, dnnl_matmul_desc_init(&desc, &amd, &bmd, NULL, &cmd), "dnnl_matmul_desc_init") && pd_new(m, &desc) &&
         bind_input(m, DNNL_ARG_SRC, dnnl_query_src_md, &amd, in[0]) &&
         bind_input(m, DNNL_ARG_WEIGHTS, dnnl_query_weights_md, &bmd, in[1]) && bind_output(m, &cmd);
}

/* C2D: NHWC input, HWIO weight, NHWC output in our arrays; the primitive
 * works in the layouts it picks (format_tag any). */
static bool setup_conv(mk_t *m) {
  const int64_t *s = m->d->p->c.shape;
  int64_t n = s[0], h = s[1], w = s[2], ci = s[3], co = s[4], kh = s[5], kw = s[6], st = s[7], pad = s[8];
  int64_t oh = (h + 2 * pad - kh) / st + 1, ow = (w + 2 * pad - kw) / st + 1;
  dnnl_dims_t src = {n, ci, h, w}, wei = {co, ci, kh, kw}, dst = {n, co, oh, ow};
  dnnl_dims_t strides = {st, st}, pl = {pad, pad};
  dnnl_dims_t pr = {(oh - 1) * st + kh - h - pad, (ow - 1) * st + kw - w - pad};
  dnnl_memory_desc_t su, wu, du, sa, wa, da;
  dnnl_convolution_desc_t desc;
  const float *const *in = (const float *const *)m->d->p->in;
  return md_init(m, &su, 4, src, dnnl_nhwc) && md_init(m, &wu, 4, wei, dnnl_hwio) && md_init(m, &du, 4, dst, dnnl_nhwc) &&
         md_init(m, &sa, 4, src, dnnl_format_tag_any) && md_init(m, &wa, 4, wei, dnnl_format_tag_any) &&
         md_init(m, &da, 4, dst, dnnl_format_tag_any) &&
         ck(m, dnnl_convolution_forward_desc_init(&desc, dnnl_forward_inference, dnnl_convolution_auto, &sa, &wa, NULL,
                                                  &da, strides, pl, pr), "dnnl_convolution_forward_desc_init") &&
         pd_new(m, &desc) && bind_input(m, DNNL_ARG_SRC, dnnl_query_src_md, &su, in[0]) &&
         bind_input(m, DNNL_ARG_WEIGHTS, dnnl_query_weights_md, &wu, in[1]) && bind_output(m, &du);
}

static bool setup_softmax(mk_t *m) {
  dnnl_dims_t dims = {m->d->p->c.shape[0], m->d->p->c.shape[1]};
  dnnl_memory_desc_t md;
  dnnl_softmax_v2_desc_t desc;
  return md_init(m, &md, 2, dims, dnnl_ab) &&
         ck(m, dnnl_softmax_v2_forward_desc_init(&desc, dnnl_forward_inference, dnnl_softmax_accurate, &md, &md, 1),
            "dnnl_softmax_v2_forward_desc_init") &&
         pd_new(m, &desc) && bind_input(m, DNNL_ARG_SRC, dnnl_query_src_md, &md, m->d->p->in[0]) && bind_output(m, &md);
}

/* Mean and variance, where the primitive exposes them as outputs (forward
 * inference computes them internally; other versions may ask). */
static bool bind_stats(mk_t *m) {
  int nout = dnnl_primitive_desc_query_s32(m->d->pd, dnnl_query_num_of_outputs_s32, 0);
  static const int args[2] = {DNNL_ARG_MEAN, DNNL_ARG_VARIANCE};
  for (int i = 1; i < nout && i <= 2; i++) {
    const dnnl_memory_desc_t *md = dnnl_primitive_desc_query_md(m->d->pd, dnnl_query_dst_md, i);
    if (!md || md->ndims == 0) continue;
    dnnl_memory_t mem = mem_new(m, md, DNNL_MEMORY_ALLOCATE);
    if (!mem) return false;
    add_arg(m->d, args[i - 1], mem);
  }
  return true;
}

static bool setup_lnorm(mk_t *m) {
  const bench_wl_problem_t *p = m->d->p;
  dnnl_dims_t dims = {p->c.shape[0], p->c.shape[1]}, c = {p->c.shape[1]};
  dnnl_memory_desc_t md, cmd;
  dnnl_layer_normalization_desc_t desc;
  return md_init(m, &md, 2, dims, dnnl_ab) && md_init(m, &cmd, 1, c, dnnl_a) &&
         ck(m, dnnl_layer_normalization_forward_desc_init(&desc, dnnl_forward_inference, &md, NULL, 1e-5f,
                                                          dnnl_use_scale | dnnl_use_shift),
            "dnnl_layer_normalization_forward_desc_init") &&
         pd_new(m, &desc) && bind_input(m, DNNL_ARG_SRC, dnnl_query_src_md, &md, p->in[0]) &&
         bind_plain(m, DNNL_ARG_SCALE, &cmd, p->in[1]) && bind_plain(m, DNNL_ARG_SHIFT, &cmd, p->in[2]) &&
         bind_stats(m) && bind_output(m, &md);
}

/* ------------------------------------------------------------------------ */
/* The contender                                                             */
/* ------------------------------------------------------------------------ */

static void impl_free(dnnl_impl_t *d) {
  if (!d) return;
  if (d->prim) dnnl_primitive_destroy(d->prim);
  if (d->dst_reorder) dnnl_primitive_destroy(d->dst_reorder);
  if (d->pd) dnnl_primitive_desc_destroy(d->pd);
  for (int i = 0; i < d->nmems; i++) dnnl_memory_destroy(d->mems[i]);
  free(d->out);
  free(d);
  if (--nusers == 0) {
    dnnl_stream_destroy(stream);
    dnnl_engine_destroy(engine);
    engine = NULL, stream = NULL;
  }
}

static void execute(dnnl_impl_t *d) {
  dnnl_status_t st = dnnl_primitive_execute(d->prim, stream, d->nargs, d->args);
  if (st == dnnl_success) st = dnnl_stream_wait(stream);
  if (st != dnnl_success) bench_die("oneDNN execute", dnnl_status2str(st));
}

static double dnnl_run(bench_contender_t *c, int ci, int threads, int number) {
  dnnl_impl_t *d = c->impl[ci];
  set_threads(threads);
  double t0 = bench_now();
  for (int i = 0; i < number; i++) execute(d);
  return bench_now() - t0;
}

static double dnnl_check(bench_contender_t *c, int ci) {
  dnnl_impl_t *d = c->impl[ci];
  memset(d->out, 0xff, sizeof(float) * d->p->nout); /* NaNs: an element never written shows */
  dnnl_run(c, ci, d->threads, 1);
  if (d->dst_reorder) {
    char why[160];
    mk_t m = {d, why, sizeof why};
    if (!reorder_run(&m, d->dst_reorder, d->dst, d->dst_user)) bench_die("oneDNN output reorder", why);
  }
  return bench_wl_error(d->out, d->p);
}

static void dnnl_contender_free(bench_contender_t *c) {
  for (int ci = 0; ci < BENCH_MAX_CASES; ci++) {
    impl_free(c->impl[ci]);
    c->impl[ci] = NULL;
  }
}

static bool setup(mk_t *m) {
  switch (m->d->p->kind) {
  case BENCH_WL_GMM:
  case BENCH_WL_BMM: return setup_matmul(m);
  case BENCH_WL_C2D: return setup_conv(m);
  case BENCH_WL_SFM: return setup_softmax(m);
  case BENCH_WL_LN: return setup_lnorm(m);
  }
  return false;
}

bool bench_dnnl_init(bench_contender_t *c, const bench_wl_problem_t *p, int ci, int threads, char *why, size_t len) {
  memset(c, 0, sizeof *c);
  dnnl_impl_t *d = calloc(1, sizeof *d);
  if (!d) bench_die("allocation", "out of memory");
  *d = (dnnl_impl_t){.p = p, .threads = threads, .out = bench_alloc_floats(p->nout)};
  mk_t m = {d, why, len};
  if (nusers++ == 0) {
    omp_set_threads = (void (*)(int))(uintptr_t)dlsym(RTLD_DEFAULT, "omp_set_num_threads");
    if (!ck(&m, dnnl_engine_create(&engine, dnnl_cpu, 0), "dnnl_engine_create") ||
        !ck(&m, dnnl_stream_create(&stream, engine, dnnl_stream_default_flags), "dnnl_stream_create")) {
      if (engine) dnnl_engine_destroy(engine);
      engine = NULL, nusers = 0;
      free(d->out);
      free(d);
      return false;
    }
  }
  set_threads(threads); /* before the primitive is made: it splits its work for this count */
  if (!setup(&m) || !ck(&m, dnnl_primitive_create(&d->prim, d->pd), "dnnl_primitive_create")) {
    impl_free(d);
    return false;
  }
  const char *impl = NULL;
  dnnl_primitive_desc_query(d->pd, dnnl_query_impl_info_str, 0, &impl);
  snprintf(c->name, sizeof c->name, "oneDNN %s", impl ? impl : "?");
  c->run = dnnl_run;
  c->check = dnnl_check;
  c->free = dnnl_contender_free;
  c->impl[ci] = d;
  return true;
}

#endif /* BENCH_DNNL_HEADER */
