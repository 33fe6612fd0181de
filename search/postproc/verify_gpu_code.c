/*
 * verify_gpu_code.c - the VerifyGPUCode postprocessor (MetaSchedule's
 * verify_gpu_code.cc): rejects, before anything is compiled or measured, a
 * candidate that no GPU of the target could launch.
 *
 * Two checks, with the target's limits (mlc_target_t: max_threads_per_block,
 * max_shared_memory_per_block; "cuda -arch=sm_90 -max_shared_memory_per_block=..."
 * overrides them):
 *   1. on the scheduled program (TVM's ThreadExtentChecker): a block that
 *      MultiLevelTiling annotated with meta_schedule.thread_extent_low/
 *      high_inclusive runs on a number of threads (threadIdx.x * y * z
 *      above it, times the warp size for a tensor-core tile run by a whole
 *      warp, annotated warp_execution) within those bounds;
 *   2. on the program lowered as the compiler would (mlc_lower), for each
 *      kernel (the nest under an outermost blockIdx/threadIdx loop): every
 *      thread axis has one extent in the kernel; threads per block (the
 *      product of the threadIdx extents) <= max_threads_per_block; shared
 *      memory (the "shared" allocations in the kernel, and those around it)
 *      <= max_shared_memory_per_block; each vthread loop's extent <= 8; no
 *      vector load, store or value wider than 16 bytes; and no store outside
 *      a kernel (the host side never touches buffer data).
 * A failure is MLC_ESCHEDULE with why ("VerifyGPUCode: kernel 0: 2048
 * threads per block, more than max_threads_per_block 1024 of cuda
 * -arch=sm_80"). A program that does not lower is rejected with the
 * lowering's error. Registers per thread are not known before code
 * generation and are not checked here (the worker reports a launch that
 * fails for lack of them).
 */
#include "search/postproc/postproc.h"

#include <string.h>

#include "compiler/compiler.h"

#define VGC "VerifyGPUCode"
#define MAX_VTHREAD 8
#define MAX_VECTOR_BYTES 16
#define NAXES 9 /* blockIdx.xyz, threadIdx.xyz, vthread.xyz */

static const char *const axes[NAXES] = {"blockIdx.x",  "blockIdx.y",  "blockIdx.z",  "threadIdx.x", "threadIdx.y",
                                        "threadIdx.z", "vthread.x",   "vthread.y",   "vthread.z"};

static int axis_index(const char *tag) {
  if (tag && strcmp(tag, "vthread") == 0) return 6;
  for (int i = 0; tag && i < NAXES; i++)
    if (strcmp(tag, axes[i]) == 0) return i;
  return -1;
}

/* ------------------------------------------------------------------------ */
/* 1. Thread extents of annotated blocks (scheduled program)                 */
/* ------------------------------------------------------------------------ */

static int check_thread_extents(const ms_ctx_t *ctx, sch_t *sch) {
  mlc_arena_t *a = mlc_arena_new();
  if (!a) return mlc_error_set(MLC_ENOMEM, VGC ": out of memory");
  pp_block_t *blocks;
  int n, rc = pp_collect_blocks(a, sch_func(sch), &blocks, &n);
  for (int i = 0; i < n && rc == MLC_OK; i++) {
    int64_t low, high, threads = 1, ext;
    if (!pp_block_ann_int(blocks[i].block, MS_ANN_THREAD_EXTENT_LOW, &low) ||
        !pp_block_ann_int(blocks[i].block, MS_ANN_THREAD_EXTENT_HIGH, &high))
      continue;
    int64_t seen[3] = {1, 1, 1};
    for (int l = 0; l < blocks[i].nloops; l++) {
      const tir_stmt_t *loop = blocks[i].loops[l];
      int ax = loop->u.loop.kind == TIR_FOR_THREAD_BINDING ? axis_index(loop->u.loop.thread_tag) : -1;
      if (ax >= 3 && ax < 6 && tir_as_int(loop->u.loop.extent, &ext)) seen[ax - 3] = ext;
    }
    threads = seen[0] * seen[1] * seen[2];
    int64_t warp;
    if (pp_block_ann_int(blocks[i].block, MS_ANN_WARP_EXECUTION, &warp) && warp != 0 && ctx->target.thread_warp_size > 0)
      threads *= ctx->target.thread_warp_size; /* a warp per tile: its lanes are threadIdx.x */
    if (threads < low || threads > high)
      rc = pp_fail(VGC, "block %s runs on %lld threads, outside [%lld, %lld] (%s for %s)", blocks[i].block->name,
                   (long long)threads, (long long)low, (long long)high, "meta_schedule.thread_extent_*",
                   ctx->task_name ? ctx->task_name : "the task");
  }
  mlc_arena_free(a);
  return rc;
}

/* ------------------------------------------------------------------------ */
/* 2. Kernels of the lowered program                                         */
/* ------------------------------------------------------------------------ */

typedef struct {
  int64_t extent[NAXES]; /* 0: unbound in this kernel */
  int64_t shared_bytes;
  char why[256];         /* the first violation met in the walk, or "" */
} kernel_t;

static int64_t alloc_bytes(const tir_buffer_t *b) {
  int64_t bytes = ((int64_t)b->dtype.bits * (b->dtype.lanes ? b->dtype.lanes : 1) + 7) / 8, ext;
  for (int d = 0; d < b->ndim; d++) {
    if (!tir_as_int(b->shape[d], &ext)) return -1;
    bytes *= ext;
  }
  return bytes;
}

static bool is_shared(const tir_buffer_t *b) { return strncmp(b->scope, "shared", 6) == 0; }

static bool vector_expr(tir_visitor_t *v, tir_expr_t *e) {
  kernel_t *k = v->payload;
  int64_t bytes = ((int64_t)e->dtype.bits * e->dtype.lanes + 7) / 8;
  if (!k->why[0] && e->dtype.lanes > 1 && bytes > MAX_VECTOR_BYTES)
    snprintf(k->why, sizeof k->why, "a %d-lane %d-bit vector (%lld bytes, more than %d)", e->dtype.lanes,
             e->dtype.bits, (long long)bytes, MAX_VECTOR_BYTES);
  return !k->why[0];
}

/* Thread extents and shared memory of one kernel's statements. */
static bool kernel_stmt(tir_visitor_t *v, tir_stmt_t *s) {
  kernel_t *k = v->payload;
  if (k->why[0]) return false;
  if (s->kind == TIR_ALLOCATE && is_shared(s->u.allocate.buffer)) {
    int64_t b = alloc_bytes(s->u.allocate.buffer);
    if (b < 0) snprintf(k->why, sizeof k->why, "shared buffer %s has a dynamic size", s->u.allocate.buffer->name);
    else k->shared_bytes += b;
  } else if (s->kind == TIR_FOR && s->u.loop.kind == TIR_FOR_THREAD_BINDING) {
    int ax = axis_index(s->u.loop.thread_tag);
    int64_t ext;
    if (ax < 0) return true;
    if (!tir_as_int(s->u.loop.extent, &ext))
      snprintf(k->why, sizeof k->why, "%s has a dynamic extent", axes[ax]);
    else if (k->extent[ax] && k->extent[ax] != ext)
      snprintf(k->why, sizeof k->why, "%s bound with extents %lld and %lld", axes[ax], (long long)k->extent[ax],
               (long long)ext);
    else if (ax >= 6 && ext > MAX_VTHREAD)
      snprintf(k->why, sizeof k->why, "%s extent %lld, more than %d", axes[ax], (long long)ext, MAX_VTHREAD);
    else k->extent[ax] = ext;
  }
  return !k->why[0];
}

static int check_kernel(const ms_ctx_t *ctx, tir_stmt_t *body, int index, int64_t outer_shared) {
  kernel_t k;
  memset(&k, 0, sizeof k);
  k.shared_bytes = outer_shared;
  tir_visitor_t v = {.expr = vector_expr, .stmt = kernel_stmt, .payload = &k};
  tir_visit_stmt(&v, body);
  if (k.why[0]) return pp_fail(VGC, "kernel %d: %s", index, k.why);
  int64_t threads = 1;
  for (int ax = 3; ax < 6; ax++) threads *= k.extent[ax] ? k.extent[ax] : 1;
  bool too_many = threads > ctx->target.max_threads_per_block;
  if (!too_many && k.shared_bytes <= ctx->target.max_shared_memory_per_block) return MLC_OK;
  char tbuf[160]; /* the target's text, for a rejection only (this runs per candidate) */
  mlc_target_str(&ctx->target, tbuf, sizeof tbuf);
  if (too_many)
    return pp_fail(VGC, "kernel %d: %lld threads per block, more than max_threads_per_block %d of %s", index,
                   (long long)threads, ctx->target.max_threads_per_block, tbuf);
  return pp_fail(VGC, "kernel %d: %lld bytes of shared memory, more than max_shared_memory_per_block %d of %s", index,
                 (long long)k.shared_bytes, ctx->target.max_shared_memory_per_block, tbuf);
}

typedef struct {
  const ms_ctx_t *ctx;
  int nkernels;
  int64_t outer_shared; /* shared allocations around the kernels */
  int rc;
} walk_t;

static bool starts_kernel(const tir_stmt_t *s) {
  int ax = s->kind == TIR_FOR && s->u.loop.kind == TIR_FOR_THREAD_BINDING ? axis_index(s->u.loop.thread_tag) : -1;
  return ax >= 0 && ax < 6;
}

/* Host-side statements: find the kernels (not entered: check_kernel walks them). */
static bool host_stmt(tir_visitor_t *v, tir_stmt_t *s) {
  walk_t *w = v->payload;
  if (w->rc != MLC_OK) return false;
  if (s->kind == TIR_ALLOCATE && is_shared(s->u.allocate.buffer)) {
    int64_t b = alloc_bytes(s->u.allocate.buffer);
    w->outer_shared += b > 0 ? b : 0;
  }
  if (s->kind == TIR_BUFFER_STORE) { /* host code never touches buffer data (compiler.h) */
    w->rc = pp_fail(VGC, "a store to %s outside any kernel (its loops are not bound to GPU threads)",
                    s->u.store.buffer->name);
    return false;
  }
  if (!starts_kernel(s)) return true;
  w->rc = check_kernel(w->ctx, s, w->nkernels++, w->outer_shared);
  return false;
}

/* Leaving an allocation around kernels: it no longer counts. */
static void host_stmt_post(tir_visitor_t *v, tir_stmt_t *s) {
  walk_t *w = v->payload;
  if (s->kind == TIR_ALLOCATE && is_shared(s->u.allocate.buffer)) {
    int64_t b = alloc_bytes(s->u.allocate.buffer);
    w->outer_shared -= b > 0 ? b : 0;
  }
}

static int verify_gpu_code(const ms_postproc_t *self, const ms_ctx_t *ctx, sch_t *sch) {
  (void)self;
  if (ctx->target.max_threads_per_block <= 0)
    return pp_fail(VGC, "target has no max_threads_per_block (not a GPU target)");
  int rc = check_thread_extents(ctx, sch);
  if (rc != MLC_OK) return rc;
  tir_func_t *low = NULL;
  if ((rc = mlc_lower(&low, sch_func(sch), &ctx->target, NULL)) != MLC_OK) {
    if (rc == MLC_ENOMEM) return rc;
    return pp_fail(VGC, "does not lower: %s", mlc_error_last());
  }
  walk_t w = {ctx, 0, 0, MLC_OK};
  tir_visitor_t v = {.stmt = host_stmt, .stmt_post = host_stmt_post, .payload = &w};
  tir_visit_stmt(&v, low->body);
  tir_func_free(low);
  return w.rc;
}

const ms_postproc_t ms_postproc_verify_gpu_code = {"VerifyGPUCode", verify_gpu_code};
