/*
 * verify_gpu_code.c - the VerifyGPUCode postprocessor (MetaSchedule's
 * verify_gpu_code.cc): rejects, before anything is compiled or measured, a
 * candidate that no GPU of the target could launch, or could not run with
 * its per-thread storage in registers.
 *
 * Two checks, with the target's limits (mlc_target_t: max_threads_per_block,
 * max_shared_memory_per_block, max_registers_per_thread, registers_per_block;
 * "cuda -arch=sm_90 -max_shared_memory_per_block=... -max_registers_per_thread=..."
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
 *      <= max_shared_memory_per_block; registers for per-thread storage (see
 *      below) <= max_registers_per_thread, and times the threads (whole
 *      warps) <= registers_per_block; each vthread loop's extent <= 8; no
 *      vector load, store or value wider than 16 bytes; and no store outside
 *      a kernel (the host side never touches buffer data).
 * A failure is MLC_ESCHEDULE with why ("VerifyGPUCode: kernel 0: 2048
 * threads per block, more than max_threads_per_block 1024 of cuda
 * -arch=sm_80"). A program that does not lower is rejected with the
 * lowering's error.
 *
 * Registers. How many a kernel uses is known only after code generation
 * (ptxas / the AMDGPU backend). What is known before is the storage each
 * thread keeps for itself, which a fast kernel holds in registers:
 *   - "local" buffers, whole (the code generator's per-thread arrays; LLVM
 *     promotes them to registers when their indices are constants after
 *     unrolling);
 *   - one element of a "local.cross_thread" buffer (the thread's own slot);
 *   - bytes / 32 of a "warp" buffer: (..., 32, W) is W registers of each of
 *     32 lanes and each thread keeps its own (compiler/codegen/gpu_warp.c);
 *   - WMMA fragments ("wmma.matrix_a/b", "wmma.accumulator"): 8 32-bit
 *     registers per lane for each 16x16 tile, operands and accumulators
 *     alike, as compiler/codegen/gpu_wmma.c generates them and CUDA's
 *     wmma::fragment holds them; bytes / 32 for a buffer not of whole tiles.
 * Buffers allocated one inside another are live together and add up;
 * buffers side by side may share registers and count as the largest
 * (lowering's storage rewrite already merges such buffers of one scope).
 *
 * ceil(bytes / 4) is a LOWER bound on the registers per thread, not an
 * estimate: the generated code needs more for addresses, indices and
 * temporaries (ptxas reports 2 to 50 times the bound for GMM and C2D samples
 * that keep their storage in registers), and the hardware allocates
 * registers in granules. Storage that is not promoted (a local buffer whose
 * loops are not unrolled) stays in local memory with fewer registers than
 * the bound: the check judges every candidate as if it kept its storage in
 * registers, as a fast one does. Past max_registers_per_thread the code
 * still builds, but what does not fit lives in local memory (scratch on
 * AMD), at memory speed; past registers_per_block the backends, told the
 * block size (.maxntid, amdgpu-flat-work-group-size), cap registers and
 * spill too (a CUDA kernel with a symbolic block shape has no .maxntid and
 * its launch can fail for lack of registers).
 * Either way no search should measure such a candidate.
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

/* A WMMA fragment: a 16x16 tile is 8 32-bit registers per lane (gpu_wmma.c's
 * TILE_ELEMS and FRAG_BYTES, private to the code generator). A "warp"
 * buffer (..., 32, W): W registers of each of 32 lanes (gpu_warp.c). */
#define FRAGMENT_TILE_ELEMS 256
#define FRAGMENT_TILE_BYTES 32
#define WARP_BUFFER_LANES 32

typedef struct {
  int64_t extent[NAXES]; /* 0: unbound in this kernel */
  int64_t shared_bytes;
  int64_t reg_bytes;     /* per-thread storage of the allocations around the walk's position */
  int64_t max_reg_bytes; /* the most reg_bytes was in the kernel */
  char why[256];         /* the first violation met in the walk, or "" */
} kernel_t;

/* An allocation's bytes (at most BYTES_CAP, far above any limit, so that sums
 * and products of them cannot overflow); -1 when its shape is not constant. */
#define BYTES_CAP ((int64_t)1 << 48)
static int64_t elem_bytes(const tir_buffer_t *b) {
  return ((int64_t)b->dtype.bits * (b->dtype.lanes ? b->dtype.lanes : 1) + 7) / 8;
}

static int64_t alloc_bytes(const tir_buffer_t *b) {
  int64_t bytes = elem_bytes(b), ext;
  for (int d = 0; d < b->ndim; d++) {
    if (!tir_as_int(b->shape[d], &ext)) return -1;
    if (ext < 0 || __builtin_mul_overflow(bytes, ext, &bytes) || bytes > BYTES_CAP) bytes = BYTES_CAP;
  }
  return bytes;
}

static bool is_shared(const tir_buffer_t *b) { return strncmp(b->scope, "shared", 6) == 0; }

static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

/* Bytes of an allocation in a kernel that each thread keeps for itself in
 * registers (the file's header says which): 0 for other scopes, -1 for a
 * size that is not constant. */
static int64_t register_bytes(const tir_buffer_t *b) {
  bool local = strcmp(b->scope, "local") == 0, slot = strcmp(b->scope, MLC_CROSS_THREAD_SCOPE) == 0;
  bool lanes = strcmp(b->scope, "warp") == 0, fragment = tir_wmma_is_fragment(b);
  if (slot) return elem_bytes(b);
  if (!local && !lanes && !fragment) return 0;
  int64_t bytes = alloc_bytes(b);
  if (bytes < 0 || local) return bytes;
  if (lanes) return ceil_div(bytes, WARP_BUFFER_LANES);
  int64_t elems = elem_bytes(b) > 0 ? bytes / elem_bytes(b) : 0;
  if (bytes < BYTES_CAP && elems > 0 && elems % FRAGMENT_TILE_ELEMS == 0)
    return elems / FRAGMENT_TILE_ELEMS * FRAGMENT_TILE_BYTES;
  return ceil_div(bytes, 32);
}

static bool vector_expr(tir_visitor_t *v, tir_expr_t *e) {
  kernel_t *k = v->payload;
  int64_t bytes = ((int64_t)e->dtype.bits * e->dtype.lanes + 7) / 8;
  if (!k->why[0] && e->dtype.lanes > 1 && bytes > MAX_VECTOR_BYTES)
    snprintf(k->why, sizeof k->why, "a %d-lane %d-bit vector (%lld bytes, more than %d)", e->dtype.lanes,
             e->dtype.bits, (long long)bytes, MAX_VECTOR_BYTES);
  return !k->why[0];
}

/* A per-thread allocation: its bytes count while the walk is inside it. */
static void enter_register_alloc(kernel_t *k, const tir_buffer_t *buf) {
  int64_t b = register_bytes(buf);
  if (b < 0) snprintf(k->why, sizeof k->why, "%s buffer %s has a dynamic size", buf->scope, buf->name);
  k->reg_bytes += b > 0 ? b : 0;
  if (k->reg_bytes > k->max_reg_bytes) k->max_reg_bytes = k->reg_bytes;
}

static void kernel_stmt_post(tir_visitor_t *v, tir_stmt_t *s) {
  kernel_t *k = v->payload;
  if (s->kind != TIR_ALLOCATE) return;
  int64_t b = register_bytes(s->u.allocate.buffer);
  k->reg_bytes -= b > 0 ? b : 0;
}

/* Thread extents, shared memory and per-thread storage of one kernel's
 * statements. */
static bool kernel_stmt(tir_visitor_t *v, tir_stmt_t *s) {
  kernel_t *k = v->payload;
  if (k->why[0]) return false;
  if (s->kind == TIR_ALLOCATE && is_shared(s->u.allocate.buffer)) {
    int64_t b = alloc_bytes(s->u.allocate.buffer);
    if (b < 0) snprintf(k->why, sizeof k->why, "shared buffer %s has a dynamic size", s->u.allocate.buffer->name);
    else k->shared_bytes += b;
  } else if (s->kind == TIR_ALLOCATE) {
    enter_register_alloc(k, s->u.allocate.buffer);
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

/* The target's text, for a rejection only (the checks run per candidate). */
typedef struct {
  char s[256];
} target_text_t;

static target_text_t target_text(const mlc_target_t *t) {
  target_text_t out;
  mlc_target_str(t, out.s, sizeof out.s);
  return out;
}

/* Registers for the kernel's per-thread storage against the target's limits
 * (none checked where the target gives none). */
static int check_registers(const mlc_target_t *t, const kernel_t *k, int index, int64_t threads) {
  int64_t regs = ceil_div(k->max_reg_bytes, 4);
  if (t->max_registers_per_thread > 0 && regs > t->max_registers_per_thread)
    return pp_fail(VGC, "kernel %d: at least %lld registers per thread for local storage (%lld bytes), more than "
                   "max_registers_per_thread %d of %s", index, (long long)regs, (long long)k->max_reg_bytes,
                   t->max_registers_per_thread, target_text(t).s);
  /* registers are reserved per warp: a partial warp takes a whole one's */
  int64_t warp = t->thread_warp_size > 0 ? t->thread_warp_size : 1, lanes = ceil_div(threads, warp) * warp;
  if (t->registers_per_block <= 0 || regs * lanes <= t->registers_per_block) return MLC_OK;
  char rounded[64] = "";
  if (lanes != threads)
    snprintf(rounded, sizeof rounded, " (%lld rounded up to whole warps)", (long long)threads);
  return pp_fail(VGC, "kernel %d: at least %lld registers per thread for local storage (%lld bytes) x %lld "
                 "threads%s = %lld, more than registers_per_block %d of %s", index, (long long)regs,
                 (long long)k->max_reg_bytes, (long long)lanes, rounded, (long long)(regs * lanes),
                 t->registers_per_block, target_text(t).s);
}

static int check_kernel(const ms_ctx_t *ctx, tir_stmt_t *body, int index, int64_t outer_shared) {
  const mlc_target_t *t = &ctx->target;
  kernel_t k;
  memset(&k, 0, sizeof k);
  k.shared_bytes = outer_shared;
  tir_visitor_t v = {.expr = vector_expr, .stmt = kernel_stmt, .stmt_post = kernel_stmt_post, .payload = &k};
  tir_visit_stmt(&v, body);
  if (k.why[0]) return pp_fail(VGC, "kernel %d: %s", index, k.why);
  int64_t threads = 1;
  for (int ax = 3; ax < 6; ax++) threads *= k.extent[ax] ? k.extent[ax] : 1;
  if (threads > t->max_threads_per_block)
    return pp_fail(VGC, "kernel %d: %lld threads per block, more than max_threads_per_block %d of %s", index,
                   (long long)threads, t->max_threads_per_block, target_text(t).s);
  if (k.shared_bytes > t->max_shared_memory_per_block)
    return pp_fail(VGC, "kernel %d: %lld bytes of shared memory, more than max_shared_memory_per_block %d of %s",
                   index, (long long)k.shared_bytes, t->max_shared_memory_per_block, target_text(t).s);
  return check_registers(t, &k, index, threads);
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
