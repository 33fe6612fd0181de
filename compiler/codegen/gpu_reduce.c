/*
 * gpu_reduce.c - cross-thread reductions inside kernels (TVM's
 * LowerThreadAllreduce, done in code generation).
 *
 * lower-cross-thread-reduction (compiler/lower/cross_thread_reduce.c)
 * leaves, in a threadIdx.x loop of T threads,
 *
 *     with T.attr(red_buf.data, "mlc.cross_thread_reduce", "sum"):
 *         red[0] = init
 *         for t in range(T): red[0] = red[0] + red_buf[t]
 *
 * where red_buf[tx] holds thread tx's partial value (scope
 * MLC_CROSS_THREAD_SCOPE: one register per thread, gpu_device.c). The body
 * is the serial meaning; here every thread instead combines the partial
 * values with butterfly shuffles (offsets T/2, ..., 1 within groups of T
 * lanes, so each lane ends with the whole combination) when T fits in a warp;
 * for larger T, each warp's result goes to a shared array of T / warp slots
 * (between barriers) and every warp then combines the slots the same way.
 * The result is stored where the body's first store writes (red[0]).
 *
 * Groups of T consecutive lanes are the threads of one reduction when T is
 * the block's x extent (a power of two up to a warp: the y/z rows of the
 * block split the warp into aligned groups); more than a warp needs a
 * one-dimensional block. Combining reuses the expression generator on
 * variables bound to the two values, so float16 and integer semantics are
 * the same as everywhere else.
 */
#include "compiler/codegen/gpu.h"

#include <string.h>

typedef struct {
  const tir_var_t *data;        /* red_buf's data var (the attribute's node) */
  tir_buffer_t *red_buf;
  const tir_stmt_t *out_store;  /* the first store of another buffer */
} parts_t;

static bool find_parts(tir_visitor_t *v, tir_expr_t *e) {
  parts_t *p = v->payload;
  if (e->kind == TIR_BUFFER_LOAD && e->u.load.buffer->data == p->data) p->red_buf = e->u.load.buffer;
  return true;
}

static bool find_store(tir_visitor_t *v, tir_stmt_t *s) {
  parts_t *p = v->payload;
  if (s->kind == TIR_BUFFER_STORE && !p->out_store && s->u.store.buffer->data != p->data) p->out_store = s;
  return true;
}

static int parse_op(const tir_stmt_t *attr, tir_expr_kind_t *op) {
  static const struct { const char *name; tir_expr_kind_t op; } ops[] = {
      {"sum", TIR_ADD}, {"max", TIR_MAX}, {"min", TIR_MIN}};
  const tir_expr_t *v = attr->u.attr.value;
  for (size_t i = 0; v && v->kind == TIR_STRING_IMM && i < sizeof ops / sizeof ops[0]; i++)
    if (strcmp(v->u.str_value, ops[i].name) == 0) return *op = ops[i].op, MLC_OK;
  return mlc_error_set(MLC_EUNSUPPORTED, "codegen: %s with an unknown reducer (sum, max, min)", MLC_CROSS_THREAD_ATTR);
}

static bool shuffle_dtype(tir_dtype_t t) {
  return t.lanes == 1 && ((t.code == TIR_CODE_FLOAT && (t.bits == 32 || t.bits == 16)) ||
                          (t.code == TIR_CODE_INT && t.bits == 32));
}

/* ------------------------------------------------------------------------ */
/* Values through i32 shuffles                                               */
/* ------------------------------------------------------------------------ */

typedef struct {
  cg_t *cg;
  tir_dtype_t t;
  LLVMTypeRef llt;
  tir_expr_kind_t op;
  tir_var_t *x, *y;
  tir_expr_t *combine;          /* op(x, y) */
} reduce_t;

static LLVMValueRef to_i32(reduce_t *r, LLVMValueRef v) {
  LLVMBuilderRef b = r->cg->b;
  if (r->t.code == TIR_CODE_INT) return v;
  if (r->t.bits == 32) return LLVMBuildBitCast(b, v, r->cg->t_i32, "");
  return LLVMBuildZExt(b, LLVMBuildBitCast(b, v, r->cg->t_i16, ""), r->cg->t_i32, "");
}

static LLVMValueRef from_i32(reduce_t *r, LLVMValueRef v) {
  LLVMBuilderRef b = r->cg->b;
  if (r->t.code == TIR_CODE_INT) return v;
  if (r->t.bits == 32) return LLVMBuildBitCast(b, v, r->llt, "");
  return LLVMBuildBitCast(b, LLVMBuildTrunc(b, v, r->cg->t_i16, ""), r->llt, "");
}

static LLVMValueRef combine(reduce_t *r, LLVMValueRef a, LLVMValueRef b) {
  cg_t *cg = r->cg;
  size_t mark = cg->vars.len;
  LLVMValueRef v = NULL;
  if (cg_bind(cg, r->x, a, 0) == MLC_OK && cg_bind(cg, r->y, b, 0) == MLC_OK) v = cg_expr(cg, r->combine);
  cg->vars.len = mark;
  return v;
}

/* Butterfly over groups of `width` lanes: every lane gets its group's result. */
static LLVMValueRef warp_reduce(reduce_t *r, LLVMValueRef v, int64_t width) {
  const cg_kernel_state_t *k = r->cg->gpu;
  for (int64_t off = width / 2; off >= 1 && v; off /= 2) {
    LLVMValueRef other = from_i32(r, k->gt->shuffle_xor(r->cg, to_i32(r, v), (int)off));
    v = other ? combine(r, v, other) : NULL;
  }
  return v;
}

static LLVMValueRef elem_gep(cg_t *cg, LLVMTypeRef t, LLVMValueRef base, LLVMValueRef i) {
  LLVMValueRef p = LLVMBuildBitCast(cg->b, base, LLVMPointerType(t, 0), "");
  return LLVMBuildInBoundsGEP2(cg->b, t, p, &i, 1, "");
}

/* More threads than a warp: warp results through shared memory, then every
 * warp combines them. */
static LLVMValueRef across_warps(reduce_t *r, LLVMValueRef v, int64_t nthreads, int64_t warp) {
  cg_t *cg = r->cg;
  const cg_kernel_state_t *k = cg->gpu;
  int64_t nwarps = nthreads / warp;
  LLVMValueRef sh = cg_gpu_shared_array(cg, "red_warps", nwarps * cg_elem_bytes(r->t));
  if (!sh) return NULL;
  LLVMValueRef tid = k->gt->index(cg, false, 0);
  LLVMValueRef lane = LLVMBuildAnd(cg->b, tid, cg_i32(cg, warp - 1), "lane");
  LLVMValueRef wid = LLVMBuildUDiv(cg->b, tid, cg_i32(cg, warp), "warp");
  k->gt->barrier(cg); /* the slots may still be read by a previous reduction */
  LLVMBasicBlockRef write = LLVMAppendBasicBlockInContext(cg->ctx, cg->fn, "red.write");
  LLVMBasicBlockRef join = LLVMAppendBasicBlockInContext(cg->ctx, cg->fn, "red.join");
  LLVMBuildCondBr(cg->b, LLVMBuildICmp(cg->b, LLVMIntEQ, lane, cg_i32(cg, 0), ""), write, join);
  LLVMPositionBuilderAtEnd(cg->b, write);
  LLVMBuildStore(cg->b, v, elem_gep(cg, r->llt, sh, wid));
  LLVMBuildBr(cg->b, join);
  LLVMPositionBuilderAtEnd(cg->b, join);
  k->gt->barrier(cg);
  LLVMValueRef slot = LLVMBuildAnd(cg->b, lane, cg_i32(cg, nwarps - 1), "");
  LLVMValueRef w = LLVMBuildLoad2(cg->b, r->llt, elem_gep(cg, r->llt, sh, slot), "");
  return warp_reduce(r, w, nwarps);
}

/* ------------------------------------------------------------------------ */
/* Entry                                                                     */
/* ------------------------------------------------------------------------ */

static int check_shape(cg_t *cg, const parts_t *p, int64_t warp, int64_t *nthreads) {
  const cg_kernel_state_t *k = cg->gpu;
  const tir_buffer_t *b = p->red_buf;
  int64_t n = 0;
  if (!b || !p->out_store || b->ndim != 1 || !tir_as_int(b->shape[0], &n))
    return mlc_error_set(MLC_EINVAL, "codegen: malformed %s statement (run lower-cross-thread-reduction)",
                         MLC_CROSS_THREAD_ATTR);
  char dt[32];
  if (!shuffle_dtype(b->dtype))
    return mlc_error_set(MLC_EUNSUPPORTED, "codegen: cross-thread reduction of %s: only float32, float16 and "
                         "int32 are generated", tir_dtype_str(b->dtype, dt));
  if (n != k->block_const[0])
    return mlc_error_set(MLC_EUNSUPPORTED, "codegen: cross-thread reduction over %lld threads in a block of %lld "
                         "threads in x; bind the other threadIdx.x loops of the kernel to as many threads",
                         (long long)n, (long long)k->block_const[0]);
  if (n > warp && (k->block_const[1] > 1 || k->block_const[2] > 1))
    return mlc_error_set(MLC_EUNSUPPORTED, "codegen: cross-thread reduction over %lld threads (more than a warp) "
                         "in a block with threadIdx.y/z", (long long)n);
  *nthreads = n;
  return MLC_OK;
}

int cg_gpu_allreduce(cg_t *cg, const tir_stmt_t *attr) {
  parts_t p = {.data = attr->u.attr.node};
  tir_visitor_t v = {.expr = find_parts, .stmt = find_store, .payload = &p};
  tir_visit_stmt(&v, attr->u.attr.body);
  reduce_t r = {.cg = cg};
  int64_t n = 0, warp = cg->m->target.thread_warp_size > 0 ? cg->m->target.thread_warp_size : 32;
  int rc = parse_op(attr, &r.op);
  if (rc == MLC_OK) rc = check_shape(cg, &p, warp, &n);
  if (rc != MLC_OK) return rc;
  r.t = p.red_buf->dtype;
  if (!(r.llt = cg_type(cg, r.t))) return mlc_error_last_code();
  r.x = tir_var(cg->arena, "red_x", r.t);
  r.y = tir_var(cg->arena, "red_y", r.t);
  r.combine = tir_binary(cg->arena, r.op, r.x, r.y);
  tir_var_t *result = tir_var(cg->arena, "red_result", r.t);
  tir_stmt_t *store = tir_stmt_copy(cg->arena, p.out_store);
  if (mlc_arena_failed(cg->arena)) return mlc_error_set(MLC_ENOMEM, "codegen: out of memory");
  store->u.store.value = result;
  const cg_binding_t *own = cg_lookup(cg, p.red_buf->data);
  if (!own) return mlc_error_set(MLC_EINVAL, "codegen: buffer %s is not allocated", p.red_buf->name);
  LLVMValueRef val = LLVMBuildLoad2(cg->b, r.llt, LLVMBuildBitCast(cg->b, own->value, LLVMPointerType(r.llt, 0), ""), "");
  val = warp_reduce(&r, val, n < warp ? n : warp);
  if (val && n > warp) val = across_warps(&r, val, n, warp);
  if (!val) return mlc_error_last_code();
  size_t mark = cg->vars.len;
  rc = cg_bind(cg, result, val, 0);
  if (rc == MLC_OK) rc = cg_buffer_store(cg, store);
  cg->vars.len = mark;
  return rc;
}
