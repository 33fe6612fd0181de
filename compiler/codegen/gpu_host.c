/*
 * gpu_host.c - host code of GPU modules: the hooks the CPU generator runs
 * with when it generates `<name>_compute` of a GPU function.
 *
 * A thread-bound loop (the outermost of a nest) becomes a kernel
 * (gpu_device.c) and, here, its launch: the grid and block sizes are
 * evaluated (a size of zero or less launches nothing), each kernel
 * argument is stored in a slot of its own and the slots' addresses passed
 * to mlc_rt_gpu_launch (runtime/runtime.h) with the module's device image,
 * the kernel's name and the device the arguments are on. A failed launch
 * returns -1 with the runtime's message.
 *
 * Buffers allocated in host code (intermediates between kernels, "global"
 * scope) are device memory from mlc_rt_gpu_alloc, freed after their last
 * use and on every error exit. Host code never touches buffer data: a load
 * or store outside every kernel is refused before generation starts
 * (cg_gpu_host_check), naming the outermost loop around it (the one to
 * bind).
 */
#include "compiler/codegen/gpu.h"

#include <string.h>

/* ------------------------------------------------------------------------ */
/* No buffer access outside kernels                                          */
/* ------------------------------------------------------------------------ */

typedef struct {
  const tir_func_t *f;
  const tir_stmt_t *loops[64];
  int nloops;
  const tir_buffer_t *hit;
} host_scan_t;

static bool host_scan_stmt(tir_visitor_t *v, tir_stmt_t *s) {
  host_scan_t *h = v->payload;
  if (h->hit) return false;
  if (s->kind == TIR_FOR) {
    if (s->u.loop.kind == TIR_FOR_THREAD_BINDING) return false; /* a kernel */
    if (h->nloops < 64) h->loops[h->nloops] = s;
    h->nloops++;
  }
  if (s->kind == TIR_BUFFER_STORE) h->hit = s->u.store.buffer;
  return !h->hit;
}

static void host_scan_post(tir_visitor_t *v, tir_stmt_t *s) {
  host_scan_t *h = v->payload;
  if (s->kind == TIR_FOR && s->u.loop.kind != TIR_FOR_THREAD_BINDING && !h->hit) h->nloops--;
}

static bool host_scan_expr(tir_visitor_t *v, tir_expr_t *e) {
  host_scan_t *h = v->payload;
  if (e->kind == TIR_BUFFER_LOAD && !h->hit) h->hit = e->u.load.buffer;
  return !h->hit;
}

int cg_gpu_host_check(cg_t *cg) {
  host_scan_t h = {.f = cg->f};
  tir_visitor_t v = {.expr = host_scan_expr, .stmt = host_scan_stmt, .stmt_post = host_scan_post, .payload = &h};
  tir_visit_stmt(&v, cg->f->body);
  if (!h.hit) return MLC_OK;
  if (h.nloops > 0) {
    const tir_stmt_t *l = h.loops[0]; /* the outermost: the one to bind */
    return mlc_error_set(MLC_EUNSUPPORTED, "loop %s is not bound to a GPU thread; bind the outer loops of "
                         "every block (sch.bind) or use the default schedule", l->u.loop.var->u.var.name);
  }
  return mlc_error_set(MLC_EUNSUPPORTED, "buffer %s is accessed outside any GPU kernel; bind the outer "
                       "loops of every block (sch.bind) or use the default schedule", h.hit->name);
}

/* ------------------------------------------------------------------------ */
/* Runtime calls                                                             */
/* ------------------------------------------------------------------------ */

static LLVMValueRef launch_fn(cg_t *cg) {
  LLVMTypeRef pi32 = LLVMPointerType(cg->t_i32, 0);
  LLVMTypeRef params[] = {cg->t_i32, cg->t_i32, cg->t_ptr, cg->t_i64, cg->t_ptr,
                          pi32, pi32, cg->t_i32, LLVMPointerType(cg->t_ptr, 0)};
  return cg_extern_fn(cg, "mlc_rt_gpu_launch", cg->t_i32, params, 9, false);
}

static LLVMValueRef alloc_fn(cg_t *cg) {
  LLVMTypeRef params[] = {cg->t_i32, cg->t_i32, cg->t_i64, LLVMPointerType(cg->t_ptr, 0)};
  return cg_extern_fn(cg, "mlc_rt_gpu_alloc", cg->t_i32, params, 4, false);
}

static LLVMValueRef free_fn(cg_t *cg) {
  LLVMTypeRef params[] = {cg->t_i32, cg->t_i32, cg->t_ptr};
  return cg_extern_fn(cg, "mlc_rt_gpu_free", cg->t_i32, params, 3, false);
}

static LLVMValueRef gpu_kind(cg_t *cg) { return cg_i32(cg, cg->m->gpu->dl_kind); }

/* ------------------------------------------------------------------------ */
/* Launches                                                                  */
/* ------------------------------------------------------------------------ */

/* dims[0..3) = the extents as i32 (1 where NULL); *ok &= all positive. */
static int launch_dims(cg_t *cg, LLVMValueRef arr, tir_expr_t *const ext[3], LLVMValueRef *ok) {
  LLVMTypeRef at = LLVMArrayType(cg->t_i32, 3);
  for (int d = 0; d < 3; d++) {
    LLVMValueRef v = cg_i32(cg, 1);
    if (ext[d]) {
      LLVMValueRef e = cg_expr(cg, ext[d]);
      if (!e) return mlc_error_last_code();
      LLVMValueRef e64 = cg_cast(cg, e, ext[d]->dtype, tir_dt_INT64());
      *ok = LLVMBuildAnd(cg->b, *ok, LLVMBuildICmp(cg->b, LLVMIntSGT, e64, cg_i64(cg, 0), ""), "");
      *ok = LLVMBuildAnd(cg->b, *ok, LLVMBuildICmp(cg->b, LLVMIntSLE, e64, cg_i64(cg, UINT32_MAX), ""), "");
      v = LLVMBuildTrunc(cg->b, e64, cg->t_i32, "");
    }
    LLVMValueRef idx[2] = {cg_i64(cg, 0), cg_i64(cg, d)};
    LLVMBuildStore(cg->b, v, LLVMBuildInBoundsGEP2(cg->b, at, arr, idx, 2, ""));
  }
  return MLC_OK;
}

/* The argument array: one slot per parameter holding its value. */
static int launch_args(cg_t *cg, const cg_launch_t *L, LLVMValueRef *out) {
  int n = L->nparams > 0 ? L->nparams : 1;
  LLVMTypeRef at = LLVMArrayType(cg->t_ptr, (unsigned)n);
  LLVMValueRef argv = cg_entry_alloca(cg, at, 8, "kargs");
  for (int i = 0; i < L->nparams; i++) {
    const cg_binding_t *bnd = cg_lookup(cg, L->params[i]);
    if (!bnd)
      return mlc_error_set(MLC_EINVAL, "variable %s used by kernel %s is not defined",
                           L->params[i]->u.var.name, L->name);
    LLVMValueRef slot = cg_entry_alloca(cg, LLVMTypeOf(bnd->value), 8, L->params[i]->u.var.name);
    LLVMBuildStore(cg->b, bnd->value, slot);
    LLVMValueRef idx[2] = {cg_i64(cg, 0), cg_i64(cg, i)};
    LLVMBuildStore(cg->b, LLVMBuildBitCast(cg->b, slot, cg->t_ptr, ""), LLVMBuildInBoundsGEP2(cg->b, at, argv, idx, 2, ""));
  }
  *out = LLVMBuildBitCast(cg->b, argv, LLVMPointerType(cg->t_ptr, 0), "");
  return MLC_OK;
}

static int host_thread_loop(cg_t *cg, const tir_stmt_t *s) {
  cg_launch_t L;
  int rc = cg_gpu_kernel(cg, s, cg->ntasks++, &L);
  if (rc != MLC_OK) return rc;
  LLVMTypeRef dt = LLVMArrayType(cg->t_i32, 3);
  LLVMValueRef grid = cg_entry_alloca(cg, dt, 4, "grid"), block = cg_entry_alloca(cg, dt, 4, "block");
  LLVMValueRef ok = LLVMConstInt(cg->t_i1, 1, 0), argv = NULL;
  if ((rc = launch_dims(cg, grid, L.grid, &ok)) != MLC_OK) return rc;
  if ((rc = launch_dims(cg, block, L.block, &ok)) != MLC_OK) return rc;
  if ((rc = launch_args(cg, &L, &argv)) != MLC_OK) return rc;
  LLVMBasicBlockRef go = LLVMAppendBasicBlockInContext(cg->ctx, cg->fn, "launch");
  LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(cg->ctx, cg->fn, "launch.done");
  LLVMBuildCondBr(cg->b, ok, go, done);
  LLVMPositionBuilderAtEnd(cg->b, go);
  LLVMTypeRef pi32 = LLVMPointerType(cg->t_i32, 0);
  LLVMValueRef args[9] = {gpu_kind(cg), cg->gpu_device, cg_gpu_image_ref(cg), cg_gpu_image_size_ref(cg),
                          cg_cstr(cg, L.name), LLVMBuildBitCast(cg->b, grid, pi32, ""),
                          LLVMBuildBitCast(cg->b, block, pi32, ""), cg_i32(cg, L.dyn_shared_bytes), argv};
  LLVMValueRef r = cg_call(cg, launch_fn(cg), args, 9, "launched");
  cg_check(cg, LLVMBuildICmp(cg->b, LLVMIntEQ, r, cg_i32(cg, 0), ""), NULL, NULL, 0);
  LLVMBuildBr(cg->b, done);
  LLVMPositionBuilderAtEnd(cg->b, done);
  return MLC_OK;
}

/* ------------------------------------------------------------------------ */
/* Device memory for host-level buffers                                      */
/* ------------------------------------------------------------------------ */

static int host_allocate(cg_t *cg, const tir_stmt_t *s) {
  const tir_buffer_t *b = s->u.allocate.buffer;
  if (strncmp(b->scope, "shared", 6) == 0 || strncmp(b->scope, "local", 5) == 0)
    return mlc_error_set(MLC_EUNSUPPORTED, "buffer %s (scope %s) is allocated outside every GPU kernel "
                         "(is it used by two kernels?)", b->name, b->scope);
  LLVMValueRef bytes = cg_buffer_bytes(cg, b);
  if (!bytes) return mlc_error_last_code();
  LLVMValueRef slot = cg_entry_alloca(cg, cg->t_ptr, 8, b->name);
  LLVMValueRef args[4] = {gpu_kind(cg), cg->gpu_device, bytes, slot};
  LLVMValueRef r = cg_call(cg, alloc_fn(cg), args, 4, "");
  cg_check(cg, LLVMBuildICmp(cg->b, LLVMIntEQ, r, cg_i32(cg, 0), ""), NULL, NULL, 0);
  LLVMValueRef p = LLVMBuildLoad2(cg->b, cg->t_ptr, slot, "");
  if (mlc_vec_push(&cg->gpu_heap, p) != MLC_OK) return mlc_error_set(MLC_ENOMEM, "codegen: out of memory");
  int rc = cg_with_buffer(cg, s, p, 256); /* cudaMalloc / hipMalloc align to 256 bytes */
  cg->gpu_heap.len--;
  if (rc != MLC_OK) return rc;
  LLVMValueRef fargs[3] = {gpu_kind(cg), cg->gpu_device, p};
  cg_call(cg, free_fn(cg), fargs, 3, "");
  return MLC_OK;
}

/* Error exit: device buffers first, then the CPU's exit. */
static void host_fail(cg_t *cg) {
  for (size_t i = cg->gpu_heap.len; i-- > 0;) {
    LLVMValueRef fargs[3] = {gpu_kind(cg), cg->gpu_device, cg->gpu_heap.data[i]};
    cg_call(cg, free_fn(cg), fargs, 3, "");
  }
  cg_fail_return(cg);
}

const cg_hooks_t cg_gpu_host_hooks = {
    .thread_loop = host_thread_loop,
    .allocate = host_allocate,
    .fail = host_fail,
};
