/*
 * gpu_device.c - one kernel from a thread-bound loop nest (cg_gpu_kernel).
 *
 * Analysis first (a walk of the nest): the parameters are the variables the
 * nest uses but does not define (buffer data handles, scalars, symbolic
 * dimensions, loop variables of host loops around it); the grid is the
 * extent of the loops bound to blockIdx.x/y/z (every such loop of one tag
 * must have the same extent) and the block the widest loop bound to
 * threadIdx.x/y/z (a narrower one runs under `if threadIdx < extent`;
 * symbolic extents must all be the same expression); extents may only use
 * variables defined outside the kernel. A loop bound to the same tag twice
 * (a cooperative fetch inside the compute's thread loop) is the same index.
 * A store to a buffer outside registers whose value reads the same buffer
 * and whose index does not depend on an enclosing threadIdx loop is a
 * reduction across threads that lower-cross-thread-reduction left alone (a
 * shape it does not rewrite): MLC_EUNSUPPORTED naming the loop.
 *
 * Then generation, with the CPU's expression and statement generators and
 * these hooks: thread-bound loops read the thread/block index (vthread
 * loops stay serial), "shared" allocations are static arrays in address
 * space 3, "local" ones (and "global" ones inside a thread loop, private to
 * the thread) allocas, both addressed through generic pointers (LLVM's
 * address space inference recovers shared and local accesses), "shared.dyn"
 * ones slices of the dynamic shared memory whose size the launch passes,
 * "warp" ones each lane's own registers (gpu_warp.c), buffers of
 * MLC_CROSS_THREAD_SCOPE one element per thread (each thread only touches
 * its own slot), the cross-thread reduction attribute gpu_reduce.c's
 * allreduce; barriers are the target's, parallel loops run serially, failed
 * assertions trap. Pointer parameters carry the alignment the host knows.
 *
 * WMMA tensor-core calls (compiler/lower/tensor_core.h) are the target's
 * (gpu_wmma.c on NVPTX; MLC_EUNSUPPORTED where it has none): the scan
 * makes sure they run outside threadIdx.x loops with a threadIdx.x extent
 * that is a multiple of 32 (each warp runs them together) and that
 * fragment buffers are touched by nothing else.
 */
#include "compiler/codegen/gpu.h"
#include "compiler/lower/tensor_core.h"

#include <string.h>

/* ------------------------------------------------------------------------ */
/* Analysis                                                                  */
/* ------------------------------------------------------------------------ */

/* The thread loop's tag names (tir_thread_tag); MLC_EUNSUPPORTED for a tag
 * that names none. */
static int parse_tag(const tir_stmt_t *loop, tir_thread_kind_t *kind, int *dim) {
  const char *tag = loop->u.loop.thread_tag ? loop->u.loop.thread_tag : "";
  if ((*kind = tir_thread_tag(tag, dim)) != TIR_THREAD_NONE) return MLC_OK;
  return mlc_error_set(MLC_EUNSUPPORTED, "loop %s is bound to '%s', which GPU code generation does not know "
                       "(blockIdx.x/y/z, threadIdx.x/y/z, vthread.x/y/z)", loop->u.loop.var->u.var.name, tag);
}

typedef MLC_VEC(tir_var_t *) var_vec_t;

typedef struct {
  const tir_func_t *f;
  const cg_gpu_target_t *gt;
  var_vec_t defined, used;
  var_vec_t threads;          /* threadIdx loop vars enclosing the walk */
  tir_expr_t *grid[3], *block[3];
  const tir_stmt_t *grid_loop[3], *block_loop[3];
  int64_t block_const[3];     /* widest constant threadIdx extent */
  int nwmma;                  /* WMMA and mma.sync calls in the kernel */
  MLC_VEC(const tir_stmt_t *) lane_loops; /* threadIdx.x loops around the walk, innermost last */
  tir_analyzer_t *an;         /* knows the loops around the walk */
  mlc_arena_t *arena;
  cg_warp_table_t warps;      /* warp buffers and their widths */
  int rc;
} scan_t;

static bool vec_has(const var_vec_t *v, const tir_var_t *x) {
  for (size_t i = 0; i < v->len; i++)
    if (v->data[i] == x) return true;
  return false;
}

static void add_unique(scan_t *s, var_vec_t *v, tir_var_t *x) {
  if (x && !vec_has(v, x) && mlc_vec_push(v, x) != MLC_OK && s->rc == MLC_OK)
    s->rc = mlc_error_set(MLC_ENOMEM, "codegen: out of memory");
}

static int fail_at(scan_t *s, int rc) {
  if (s->rc == MLC_OK) s->rc = rc;
  return rc;
}

static void use_buffer(scan_t *s, tir_buffer_t *b) {
  add_unique(s, &s->used, b->data);
  if (b->elem_offset && b->elem_offset->kind == TIR_VAR) add_unique(s, &s->used, b->elem_offset);
  for (int d = 0; b->strides && d < b->ndim; d++)
    if (b->strides[d]->kind == TIR_VAR) add_unique(s, &s->used, b->strides[d]);
}

static int no_tensor_cores(scan_t *s, const char *what) {
  return fail_at(s, mlc_error_set(MLC_EUNSUPPORTED, "%s: %s: tensor-core intrinsics (WMMA) are NVIDIA "
                                  "instructions and %s code generation has none (AMD's MFMA is not generated); "
                                  "use a schedule without tensorize", s->f->name, what, s->gt->name));
}

/* A WMMA call: a warp-wide operation whose tile operands name fragments or
 * addresses (the buffers are used, their elements are not read here). */
static bool scan_wmma(tir_visitor_t *v, scan_t *s, tir_expr_t *e) {
  tir_wmma_op_t op = tir_wmma_op(e);
  if (!s->gt->tensor_core) return no_tensor_cores(s, tir_wmma_name(op)), false;
  if (s->lane_loops.len > 0)
    return fail_at(s, mlc_error_set(MLC_EUNSUPPORTED, "%s: %s inside a threadIdx.x loop: a WMMA call is run by "
                                    "a whole warp together; bind threadIdx.x (32 lanes) only in the loops around "
                                    "it that copy data, and warps to threadIdx.y/z", s->f->name, tir_wmma_name(op))),
           false;
  s->nwmma++;
  for (int i = 1; i < e->u.call.nargs; i++) {
    tir_expr_t *x = e->u.call.args[i];
    if (!lower_tc_is_tile_arg(op, i) || x->kind != TIR_BUFFER_LOAD) {
      tir_visit_expr(v, x);
      continue;
    }
    use_buffer(s, x->u.load.buffer);
    for (int k = 0; k < x->u.load.nindices; k++) tir_visit_expr(v, x->u.load.indices[k]);
  }
  return false;
}

/* The innermost threadIdx.x loop around the walk, or NULL. */
static const tir_stmt_t *lane_loop(const scan_t *s) {
  return s->lane_loops.len ? s->lane_loops.data[s->lane_loops.len - 1] : NULL;
}

/* An mma.sync call: run by the 32 lanes of a warp together, each lane in
 * its turn of the threadIdx.x loop of 32 around it. */
static bool scan_ptx(scan_t *s, const tir_expr_t *e) {
  const char *name = tir_ptx_name(tir_ptx_op(e));
  if (!s->gt->warp_mma)
    return fail_at(s, mlc_error_set(MLC_EUNSUPPORTED, "%s: mma.sync and ldmatrix are NVIDIA instructions and %s "
                                    "code generation has none; use a schedule without tensorize", name, s->gt->name)),
           false;
  int64_t ext = 0;
  const tir_stmt_t *lane = lane_loop(s);
  if (!lane || !tir_as_int(lane->u.loop.extent, &ext) || ext != 32)
    return fail_at(s, mlc_error_set(MLC_EUNSUPPORTED, "%s must run in a threadIdx.x loop of the warp's 32 lanes "
                                    "(it is %s)", name, lane ? "in one of another extent" : "outside every one")),
           false;
  s->nwmma++;
  return true;
}

static void warp_access(scan_t *s, const tir_buffer_t *b, tir_expr_t *const *indices, int n) {
  if (n != 1) {
    fail_at(s, mlc_error_set(MLC_EUNSUPPORTED, "warp buffer %s: accesses must be lowered (flat)", b->name));
    return;
  }
  int rc = cg_warp_check(&s->warps, b, indices[0], lane_loop(s), s->an, s->arena);
  if (rc != MLC_OK) fail_at(s, rc);
}

static int fragment_access(scan_t *s, const tir_buffer_t *b) {
  if (!s->gt->tensor_core) return no_tensor_cores(s, b->name);
  return fail_at(s, mlc_error_set(MLC_EUNSUPPORTED, "%s: fragment %s (scope %s) is accessed element by element; "
                                  "a fragment lives spread over a warp's registers, so every access to it must be "
                                  "a tensor intrinsic (tensorize the blocks that use it)", s->f->name, b->name, b->scope));
}

static bool scan_expr(tir_visitor_t *v, tir_expr_t *e) {
  scan_t *s = v->payload;
  if (e->kind == TIR_VAR) add_unique(s, &s->used, e);
  if (e->kind == TIR_CALL && tir_wmma_op(e) != TIR_WMMA_NONE) return scan_wmma(v, s, e);
  if (e->kind == TIR_CALL && tir_ptx_op(e) != TIR_PTX_NONE) return scan_ptx(s, e);
  if (e->kind == TIR_BUFFER_LOAD) {
    if (tir_wmma_is_fragment(e->u.load.buffer)) return fragment_access(s, e->u.load.buffer), false;
    if (tir_is_warp_buffer(e->u.load.buffer)) warp_access(s, e->u.load.buffer, e->u.load.indices, e->u.load.nindices);
    use_buffer(s, e->u.load.buffer);
  }
  return s->rc == MLC_OK;
}

static bool loads_buffer(tir_expr_t *e, const tir_var_t *data);

typedef struct { const tir_var_t *data; bool found; } find_load_t;

static bool find_load(tir_visitor_t *v, tir_expr_t *e) {
  find_load_t *fl = v->payload;
  if (e->kind == TIR_BUFFER_LOAD && e->u.load.buffer->data == fl->data) fl->found = true;
  return !fl->found;
}

static bool loads_buffer(tir_expr_t *e, const tir_var_t *data) {
  find_load_t fl = {data, false};
  tir_visitor_t v = {.expr = find_load, .payload = &fl};
  tir_visit_expr(&v, e);
  return fl.found;
}

/* buf[i] = f(buf[i], ...) with i the same for every thread of a threadIdx
 * loop around it: a reduction across threads. */
static void check_cross_thread(scan_t *s, const tir_stmt_t *st) {
  tir_buffer_t *b = st->u.store.buffer;
  if (strcmp(b->scope, "local") == 0 || tir_is_warp_buffer(b) || !loads_buffer(st->u.store.value, b->data))
    return; /* registers: each thread its own (a warp buffer's lane is checked by cg_warp_check) */
  for (size_t i = 0; i < s->threads.len; i++) {
    tir_var_t *t = s->threads.data[i];
    bool uses = false;
    for (int k = 0; k < st->u.store.nindices && !uses; k++) uses = tir_expr_uses_var(st->u.store.indices[k], t);
    if (!uses)
      fail_at(s, mlc_error_set(MLC_EUNSUPPORTED, "loop %s (threadIdx) runs a reduction into %s across "
                               "threads in a form lower-cross-thread-reduction does not rewrite (the "
                               "reduction loops, one bound to threadIdx.x, directly around the block); "
                               "keep reduction loops serial inside the thread", t->u.var.name, b->name));
  }
}

/* The extent of a tag: the same expression for every blockIdx loop; the
 * widest constant (or one shared expression) for threadIdx. */
static void record_extent(scan_t *s, const tir_stmt_t *loop, tir_thread_kind_t kind, int dim) {
  tir_expr_t **slot = kind == TIR_THREAD_BLOCK ? &s->grid[dim] : &s->block[dim];
  const tir_stmt_t **first = kind == TIR_THREAD_BLOCK ? &s->grid_loop[dim] : &s->block_loop[dim];
  tir_expr_t *ext = loop->u.loop.extent;
  int64_t c = -1;
  if (kind == TIR_THREAD_THREAD && tir_as_int(ext, &c) && (!*slot || tir_as_int(*slot, &(int64_t){0}))) {
    if (c > s->block_const[dim]) {
      s->block_const[dim] = c;
      *slot = ext;
      *first = loop;
    }
    return;
  }
  if (!*slot) {
    *slot = ext;
    *first = loop;
    return;
  }
  if (!tir_expr_equal(*slot, ext))
    fail_at(s, mlc_error_set(MLC_EUNSUPPORTED, "loops %s and %s are both bound to %s with different extents",
                             (*first)->u.loop.var->u.var.name, loop->u.loop.var->u.var.name,
                             loop->u.loop.thread_tag));
}

static bool scan_stmt(tir_visitor_t *v, tir_stmt_t *st) {
  scan_t *s = v->payload;
  tir_thread_kind_t kind;
  int dim;
  switch (st->kind) {
  case TIR_FOR:
    add_unique(s, &s->defined, st->u.loop.var);
    tir_analyzer_bind(s->an, st->u.loop.var, st->u.loop.min, st->u.loop.extent);
    if (st->u.loop.kind != TIR_FOR_THREAD_BINDING) break;
    if (parse_tag(st, &kind, &dim) != MLC_OK) return fail_at(s, mlc_error_last_code()), false;
    if (kind != TIR_THREAD_VTHREAD) record_extent(s, st, kind, dim);
    if (kind == TIR_THREAD_THREAD && mlc_vec_push(&s->threads, st->u.loop.var) != MLC_OK)
      fail_at(s, mlc_error_set(MLC_ENOMEM, "codegen: out of memory"));
    if (kind == TIR_THREAD_THREAD && dim == 0 && mlc_vec_push(&s->lane_loops, st) != MLC_OK)
      fail_at(s, mlc_error_set(MLC_ENOMEM, "codegen: out of memory"));
    break;
  case TIR_LET: add_unique(s, &s->defined, st->u.let.var); break;
  case TIR_ALLOCATE:
    add_unique(s, &s->defined, st->u.allocate.buffer->data);
    if (tir_wmma_is_fragment(st->u.allocate.buffer) && !s->gt->tensor_core)
      no_tensor_cores(s, st->u.allocate.buffer->name);
    break;
  case TIR_BUFFER_STORE:
    if (tir_wmma_is_fragment(st->u.store.buffer)) return fragment_access(s, st->u.store.buffer), false;
    if (tir_is_warp_buffer(st->u.store.buffer))
      warp_access(s, st->u.store.buffer, st->u.store.indices, st->u.store.nindices);
    use_buffer(s, st->u.store.buffer);
    check_cross_thread(s, st);
    break;
  default: break;
  }
  return s->rc == MLC_OK;
}

static void scan_post(tir_visitor_t *v, tir_stmt_t *st) {
  scan_t *s = v->payload;
  if (lane_loop(s) == st) s->lane_loops.len--;
  if (st->kind == TIR_FOR && st->u.loop.kind == TIR_FOR_THREAD_BINDING && s->threads.len &&
      s->threads.data[s->threads.len - 1] == st->u.loop.var)
    s->threads.len--;
}

/* Tensor-core calls are run by whole warps: the lanes of a warp must be 32
 * consecutive threadIdx.x values sharing threadIdx.y/z. */
static int check_warps(scan_t *s) {
  if (s->nwmma == 0 || (s->block_const[0] > 0 && s->block_const[0] % 32 == 0)) return MLC_OK;
  return mlc_error_set(MLC_EUNSUPPORTED, "%s: a kernel with tensor-core calls (WMMA, mma.sync) needs a threadIdx.x extent that "
                       "is a constant multiple of the warp size 32 (it is %lld): bind the lanes of the cooperative "
                       "fetches to threadIdx.x with extent 32 and the warps to threadIdx.y", s->f->name,
                       (long long)(s->block_const[0] > 0 ? s->block_const[0] : 1));
}

/* Launch extents may only use what the host has. */
static int check_extents(scan_t *s) {
  for (int d = 0; d < 3; d++) {
    tir_expr_t *e[2] = {s->grid[d], s->block[d]};
    const tir_stmt_t *l[2] = {s->grid_loop[d], s->block_loop[d]};
    for (int k = 0; k < 2; k++)
      if (e[k] && tir_expr_uses_any_var(e[k], s->defined.data, (int)s->defined.len))
        return mlc_error_set(MLC_EUNSUPPORTED, "the extent of loop %s (%s) depends on a variable defined "
                             "inside the kernel; launch sizes must be known before the launch",
                             l[k]->u.loop.var->u.var.name, l[k]->u.loop.thread_tag);
  }
  return MLC_OK;
}

static int scan_kernel(scan_t *s, const tir_stmt_t *root, mlc_arena_t *a, cg_launch_t *out) {
  tir_visitor_t v = {.expr = scan_expr, .stmt = scan_stmt, .stmt_post = scan_post, .payload = s};
  tir_visit_stmt(&v, (tir_stmt_t *)root);
  if (s->rc != MLC_OK) return s->rc;
  int rc = check_warps(s);
  if (rc == MLC_OK) rc = check_extents(s);
  if (rc != MLC_OK) return rc;
  out->params = mlc_arena_alloc(a, sizeof(*out->params) * (s->used.len + 1));
  if (!out->params) return mlc_error_set(MLC_ENOMEM, "codegen: out of memory");
  for (size_t i = 0; i < s->used.len; i++)
    if (!vec_has(&s->defined, s->used.data[i])) out->params[out->nparams++] = s->used.data[i];
  memcpy(out->grid, s->grid, sizeof out->grid);
  memcpy(out->block, s->block, sizeof out->block);
  return MLC_OK;
}

/* ------------------------------------------------------------------------ */
/* Generation                                                                */
/* ------------------------------------------------------------------------ */

typedef cg_kernel_state_t kstate_t;

static int dev_thread_loop(cg_t *cg, const tir_stmt_t *s) {
  kstate_t *k = cg->gpu;
  tir_thread_kind_t kind;
  int dim;
  int rc = parse_tag(s, &kind, &dim);
  if (rc != MLC_OK) return rc;
  if (kind == TIR_THREAD_VTHREAD) return cg_serial_for(cg, s);
  tir_dtype_t t = s->u.loop.var->dtype;
  LLVMValueRef idx = k->gt->index(cg, kind == TIR_THREAD_BLOCK, dim);
  LLVMValueRef min = cg_expr(cg, s->u.loop.min);
  if (!min) return mlc_error_last_code();
  LLVMValueRef v = LLVMBuildAdd(cg->b, cg_cast(cg, idx, tir_dt_INT32(), t), cg_cast(cg, min, s->u.loop.min->dtype, t), "");
  LLVMBasicBlockRef merge = NULL;
  int64_t ext;
  if (kind == TIR_THREAD_THREAD && tir_as_int(s->u.loop.extent, &ext) && ext < k->block_const[dim]) {
    LLVMBasicBlockRef body = LLVMAppendBasicBlockInContext(cg->ctx, cg->fn, "thread.active");
    merge = LLVMAppendBasicBlockInContext(cg->ctx, cg->fn, "thread.end");
    LLVMBuildCondBr(cg->b, LLVMBuildICmp(cg->b, LLVMIntULT, idx, cg_i32(cg, ext), ""), body, merge);
    LLVMPositionBuilderAtEnd(cg->b, body);
  }
  size_t mark = cg->vars.len;
  tir_var_t *outer_lane = k->lane;
  if (kind == TIR_THREAD_THREAD && dim == 0) k->lane = s->u.loop.var;
  k->thread_depth += kind == TIR_THREAD_THREAD;
  rc = cg_bind(cg, s->u.loop.var, v, 0);
  if (rc == MLC_OK) rc = cg_stmt(cg, s->u.loop.body);
  k->thread_depth -= kind == TIR_THREAD_THREAD;
  k->lane = outer_lane;
  cg->vars.len = mark;
  if (rc == MLC_OK && merge) {
    LLVMBuildBr(cg->b, merge);
    LLVMPositionBuilderAtEnd(cg->b, merge);
  }
  return rc;
}

/* Static and dynamic shared memory together within the target's limit. */
static bool shared_fits(cg_t *cg) {
  kstate_t *k = cg->gpu;
  int limit = cg->m->target.max_shared_memory_per_block;
  return limit <= 0 || k->shared_bytes + k->dyn_shared_bytes <= limit;
}

LLVMValueRef cg_gpu_shared_array(cg_t *cg, const char *name, int64_t bytes) {
  kstate_t *k = cg->gpu;
  k->shared_bytes += bytes;
  if (!shared_fits(cg))
    return fail_null(MLC_EUNSUPPORTED, "shared memory of the kernel exceeds the target's limit per block with %s", name);
  LLVMTypeRef t = LLVMArrayType(cg->t_i8, (unsigned)(bytes > 0 ? bytes : 1));
  LLVMValueRef g = LLVMAddGlobalInAddressSpace(cg->mod, t, name, 3);
  LLVMSetLinkage(g, LLVMInternalLinkage);
  LLVMSetInitializer(g, LLVMGetUndef(t));
  LLVMSetAlignment(g, 16);
  return LLVMBuildAddrSpaceCast(cg->b, g, cg->t_ptr, "");
}

static int shared_alloc(cg_t *cg, const tir_stmt_t *s, int64_t bytes) {
  LLVMValueRef p = cg_gpu_shared_array(cg, s->u.allocate.buffer->name, bytes);
  return p ? cg_with_buffer(cg, s, p, 16) : mlc_error_last_code();
}

/* A "shared.dyn" buffer: 16-byte aligned bytes of the dynamic shared
 * memory the launch sizes (the module's one zero-length extern array in
 * address space 3: `.extern .shared .align 16 .b8 __mlc_dyn_shared[]`),
 * after the kernel's other dynamic buffers. */
static int dyn_shared_alloc(cg_t *cg, const tir_stmt_t *s, int64_t bytes) {
  kstate_t *k = cg->gpu;
  static const char name[] = "__mlc_dyn_shared";
  LLVMValueRef g = LLVMGetNamedGlobal(cg->mod, name);
  if (!g) {
    g = LLVMAddGlobalInAddressSpace(cg->mod, LLVMArrayType(cg->t_i8, 0), name, 3);
    LLVMSetLinkage(g, LLVMExternalLinkage);
    LLVMSetAlignment(g, 16);
  }
  int64_t offset = (k->dyn_shared_bytes + 15) / 16 * 16;
  k->dyn_shared_bytes = offset + bytes;
  if (!shared_fits(cg))
    return mlc_error_set(MLC_EUNSUPPORTED, "shared memory of the kernel exceeds the target's limit per block with %s "
                         "(static and dynamic together; -max_shared_memory_per_block raises the limit where the GPU "
                         "allows more dynamic shared memory)", s->u.allocate.buffer->name);
  LLVMValueRef idx[2] = {cg_i64(cg, 0), cg_i64(cg, offset)};
  LLVMValueRef p = LLVMBuildInBoundsGEP2(cg->b, LLVMArrayType(cg->t_i8, 0), g, idx, 2, "");
  return cg_with_buffer(cg, s, LLVMBuildAddrSpaceCast(cg->b, p, cg->t_ptr, ""), 16);
}

static int dev_allocate(cg_t *cg, const tir_stmt_t *s) {
  kstate_t *k = cg->gpu;
  const tir_buffer_t *b = s->u.allocate.buffer;
  int64_t bytes = cg_const_bytes(b);
  if (bytes < 0)
    return mlc_error_set(MLC_EUNSUPPORTED, "buffer %s (scope %s) inside a GPU kernel needs a constant size",
                         b->name, b->scope);
  if (strcmp(b->scope, "shared.dyn") == 0) return dyn_shared_alloc(cg, s, bytes);
  if (strncmp(b->scope, "shared", 6) == 0) return shared_alloc(cg, s, bytes);
  if (tir_wmma_is_fragment(b)) return k->gt->fragment_alloca(cg, s); /* the scan refused it without */
  if (tir_is_warp_buffer(b)) { /* this lane's registers: 1/32 of it */
    int64_t w = cg_warp_width(&k->warps, b->data), elems = bytes / cg_elem_bytes(b->dtype);
    if (elems % (w ? 32 * w : 32))
      return mlc_error_set(MLC_EUNSUPPORTED, "warp buffer %s of %lld elements is not 32 lanes of %lld registers",
                           b->name, (long long)elems, (long long)(w ? w : elems / 32));
    bytes /= 32;
  }
  if (strcmp(b->scope, MLC_CROSS_THREAD_SCOPE) == 0) bytes = cg_elem_bytes(b->dtype) * b->dtype.lanes; /* own slot */
  if (strcmp(b->scope, "global") == 0 && k->thread_depth == 0)
    return mlc_error_set(MLC_EUNSUPPORTED, "buffer %s (scope global) is allocated inside a GPU kernel but "
                         "outside its threadIdx loops; give it scope \"shared\" or allocate it outside the "
                         "kernel", b->name);
  LLVMValueRef a = cg_entry_alloca(cg, LLVMArrayType(cg->t_i8, (unsigned)(bytes > 0 ? bytes : 1)), 16, b->name);
  LLVMValueRef p = k->gt->private_as ? LLVMBuildAddrSpaceCast(cg->b, a, cg->t_ptr, "")
                                     : LLVMBuildBitCast(cg->b, a, cg->t_ptr, "");
  return cg_with_buffer(cg, s, p, 16);
}

/* The allreduce of lower-cross-thread-reduction; other attributes are
 * transparent. */
static int dev_attr(cg_t *cg, const tir_stmt_t *s) {
  if (strcmp(s->u.attr.key, MLC_CROSS_THREAD_ATTR) == 0) return cg_gpu_allreduce(cg, s);
  return cg_stmt(cg, s->u.attr.body);
}

/* The mma.sync calls are the target's (the scan refused them without);
 * other extern calls are generated as usual. */
static LLVMValueRef dev_extern_call(cg_t *cg, const tir_expr_t *call, bool *done) {
  kstate_t *k = cg->gpu;
  if (tir_ptx_op(call) == TIR_PTX_NONE) return NULL;
  *done = true;
  return k->gt->warp_mma(cg, call);
}

/* The WMMA calls are the target's; other values are generated as usual. */
static int dev_evaluate(cg_t *cg, const tir_expr_t *value, bool *done) {
  kstate_t *k = cg->gpu;
  if (tir_wmma_op(value) == TIR_WMMA_NONE) return MLC_OK;
  *done = true;
  return k->gt->tensor_core(cg, value);
}

static LLVMValueRef dev_sync(cg_t *cg) {
  kstate_t *k = cg->gpu;
  k->gt->barrier(cg);
  return cg_i32(cg, 0);
}

static LLVMValueRef dev_math(cg_t *cg, tir_op_t op, LLVMValueRef x, LLVMValueRef y) {
  kstate_t *k = cg->gpu;
  return k->gt->math(cg, op, x, y);
}

/* A failed check in a kernel: trap (the runtime reports the fault). */
static void dev_fail(cg_t *cg) {
  cg_call_intrinsic(cg, "llvm.trap", NULL, 0, NULL, 0);
  LLVMBuildUnreachable(cg->b);
}

static const cg_hooks_t device_hooks = {
    .thread_loop = dev_thread_loop,
    .allocate = dev_allocate,
    .attr = dev_attr,
    .storage_sync = dev_sync,
    .math = dev_math,
    .fail = dev_fail,
    .evaluate = dev_evaluate,
    .buffer_index = cg_warp_index,
    .extern_call = dev_extern_call,
};

static LLVMTypeRef param_type(cg_t *cg, const tir_var_t *v) {
  return tir_dtype_is_handle(v->dtype) ? cg->t_ptr : cg_type(cg, v->dtype);
}

/* Pointer parameters keep the alignment the host knows for them (a declared
 * buffer alignment the host checked, 256 for device allocations), so that
 * vector accesses at aligned indices become ld/st.global.v2/v4. */
static int gen_kernel(cg_t *dc, const cg_t *host, const tir_stmt_t *root, const cg_launch_t *L) {
  kstate_t *k = dc->gpu;
  LLVMTypeRef *types = mlc_arena_alloc(dc->arena, sizeof(LLVMTypeRef) * (size_t)(L->nparams + 1));
  if (!types) return mlc_error_set(MLC_ENOMEM, "codegen: out of memory");
  for (int i = 0; i < L->nparams; i++)
    if (!(types[i] = param_type(dc, L->params[i]))) return mlc_error_last_code();
  LLVMValueRef fn = cg_add_function(dc, L->name, LLVMFunctionType(dc->t_void, types, (unsigned)L->nparams, false), true);
  int64_t block[3];
  for (int d = 0; d < 3; d++) block[d] = k->block_const[d] > 0 ? k->block_const[d] : (L->block[d] ? 0 : 1);
  k->gt->mark_kernel(dc, fn, block);
  cg_fn_begin(dc, fn);
  int rc = MLC_OK;
  unsigned noalias_kind = LLVMGetEnumAttributeKindForName("noalias", 7);
  unsigned align_kind = LLVMGetEnumAttributeKindForName("align", 5);
  for (int i = 0; i < L->nparams && rc == MLC_OK; i++) {
    LLVMValueRef p = LLVMGetParam(fn, (unsigned)i);
    LLVMSetValueName2(p, L->params[i]->u.var.name, strlen(L->params[i]->u.var.name));
    if (dc->noalias && tir_dtype_is_handle(L->params[i]->dtype))
      LLVMAddAttributeAtIndex(fn, (unsigned)i + 1, LLVMCreateEnumAttribute(dc->ctx, noalias_kind, 0));
    const cg_binding_t *hb = tir_dtype_is_handle(L->params[i]->dtype) ? cg_lookup(host, L->params[i]) : NULL;
    int align = hb && hb->align > 1 ? hb->align : 0;
    if (align) LLVMAddAttributeAtIndex(fn, (unsigned)i + 1, LLVMCreateEnumAttribute(dc->ctx, align_kind, (uint64_t)align));
    rc = cg_bind(dc, L->params[i], p, align);
  }
  if (rc == MLC_OK) rc = cg_stmt(dc, root);
  if (rc == MLC_OK) LLVMBuildRetVoid(dc->b);
  cg_fn_finish(dc);
  if (rc != MLC_OK) LLVMDeleteFunction(fn);
  return rc;
}

int cg_gpu_kernel(cg_t *host, const tir_stmt_t *root, int kidx, cg_launch_t *out) {
  mlc_module_t *m = host->m;
  memset(out, 0, sizeof *out);
  out->name = mlc_arena_printf(host->arena, "%s_kernel%d", host->f->name, kidx);
  if (!out->name) return mlc_error_set(MLC_ENOMEM, "codegen: out of memory");
  scan_t s = {.f = host->f, .gt = m->gpu, .arena = host->arena, .an = tir_analyzer_new(host->arena)};
  int rc = s.an ? scan_kernel(&s, root, host->arena, out) : mlc_error_set(MLC_ENOMEM, "codegen: out of memory");
  kstate_t k = {.gt = m->gpu, .warps = s.warps};
  memcpy(k.block_const, s.block_const, sizeof k.block_const);
  mlc_vec_free(&s.defined);
  mlc_vec_free(&s.used);
  mlc_vec_free(&s.threads);
  mlc_vec_free(&s.lane_loops);
  if (rc != MLC_OK) return rc;
  cg_t dc;
  cg_setup(&dc, m, m->dev_mod, host->f);
  mlc_target_t dev_target = m->target;
  if (m->gpu->cpu(&m->target, dev_target.mcpu, sizeof dev_target.mcpu) != MLC_OK) {
    cg_done(&dc);
    return mlc_error_last_code();
  }
  dev_target.mattr[0] = '\0';
  dc.target = &dev_target;
  dc.hooks = &device_hooks;
  dc.gpu = &k;
  dc.parallel_depth = 1;
  dc.noalias = host->noalias;
  rc = dc.arena ? gen_kernel(&dc, host, root, out) : mlc_error_set(MLC_ENOMEM, "codegen: out of memory");
  out->dyn_shared_bytes = k.dyn_shared_bytes;
  cg_done(&dc);
  return rc;
}
