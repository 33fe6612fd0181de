/*
 * llvm_stmt.c - TIR statements as LLVM control flow.
 *
 * Loops are rotated counted loops: a guard `begin < end`, the body with the
 * induction variable as a phi, an nsw increment (it stays below end) and a
 * latch branch; loops marked unrolled that lowering left (non-constant
 * extents) carry llvm.loop.unroll.enable metadata (unroll.full for
 * constant extents), loops marked vectorized
 * that lowering could not vectorize are plain loops. Parallel loops are
 * outlined (llvm_parallel.c) unless already inside a parallel body, where
 * they run serially. Thread-bound loops belong to the GPU code generators.
 *
 * ALLOCATE: constant sizes up to CG_STACK_ALLOC_MAX become an alloca in the
 * function's entry block (once per function, not per iteration), others
 * mlc_rt_workspace_alloc/free around the body (the runtime's cache of
 * heap buffers; its result declared noalias and 64-byte aligned), with a
 * failed allocation reported through mlc_rt_error. ASSERT reports
 * "<func>: assertion failed: <msg>".
 */
#include "compiler/codegen/llvm_gen.h"

#include <llvm-c/DebugInfo.h>
#include <string.h>

/* ------------------------------------------------------------------------ */
/* Loops                                                                     */
/* ------------------------------------------------------------------------ */

/* !llvm.loop !{self, !{hint}} on the latch branch. */
static void set_loop_hint(cg_t *cg, LLVMValueRef br, const char *hint) {
  LLVMMetadataRef name = LLVMMDStringInContext2(cg->ctx, hint, strlen(hint));
  LLVMMetadataRef node = LLVMMDNodeInContext2(cg->ctx, &name, 1);
  LLVMMetadataRef tmp = LLVMTemporaryMDNode(cg->ctx, NULL, 0);
  LLVMMetadataRef ops[2] = {tmp, node};
  LLVMMetadataRef loop_id = LLVMMDNodeInContext2(cg->ctx, ops, 2);
  LLVMMetadataReplaceAllUsesWith(tmp, loop_id); /* self-reference; frees tmp */
  LLVMSetMetadata(br, LLVMGetMDKindIDInContext(cg->ctx, "llvm.loop", 9), LLVMMetadataAsValue(cg->ctx, loop_id));
}

int cg_emit_loop(cg_t *cg, LLVMValueRef begin, LLVMValueRef end, const char *hint, cg_loop_body_fn body,
                 void *payload) {
  LLVMBuilderRef b = cg->b;
  LLVMBasicBlockRef pre = LLVMGetInsertBlock(b);
  LLVMBasicBlockRef body_bb = LLVMAppendBasicBlockInContext(cg->ctx, cg->fn, "for.body");
  LLVMBasicBlockRef exit_bb = LLVMAppendBasicBlockInContext(cg->ctx, cg->fn, "for.end");
  LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntSLT, begin, end, ""), body_bb, exit_bb);
  LLVMPositionBuilderAtEnd(b, body_bb);
  LLVMValueRef iv = LLVMBuildPhi(b, LLVMTypeOf(begin), "i");
  int rc = body(cg, iv, payload);
  if (rc != MLC_OK) return rc;
  LLVMValueRef next = LLVMBuildNSWAdd(b, iv, LLVMConstInt(LLVMTypeOf(begin), 1, 0), "");
  LLVMBasicBlockRef latch = LLVMGetInsertBlock(b);
  LLVMValueRef br = LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntSLT, next, end, ""), body_bb, exit_bb);
  if (hint) set_loop_hint(cg, br, hint);
  LLVMValueRef vals[2] = {begin, next};
  LLVMBasicBlockRef blocks[2] = {pre, latch};
  LLVMAddIncoming(iv, vals, blocks, 2);
  LLVMPositionBuilderAtEnd(b, exit_bb);
  return MLC_OK;
}

static int serial_body(cg_t *cg, LLVMValueRef iv, void *payload) {
  const tir_stmt_t *s = payload;
  size_t mark = cg->vars.len;
  int rc = cg_bind(cg, s->u.loop.var, iv, 0);
  if (rc == MLC_OK) rc = cg_stmt(cg, s->u.loop.body);
  cg->vars.len = mark;
  return rc;
}

/* An expression converted to dtype t (loop bounds to the loop var's). */
static LLVMValueRef expr_as(cg_t *cg, const tir_expr_t *e, tir_dtype_t t) {
  LLVMValueRef v = cg_expr(cg, e);
  return v ? cg_cast(cg, v, e->dtype, t) : NULL;
}

int cg_serial_for(cg_t *cg, const tir_stmt_t *s) {
  tir_dtype_t t = s->u.loop.var->dtype;
  if (!tir_dtype_is_integer(t) || tir_dtype_is_bool(t) || t.lanes != 1)
    return mlc_error_set(MLC_EUNSUPPORTED, "codegen: loop variable %s is not an integer", s->u.loop.var->u.var.name);
  LLVMValueRef min = expr_as(cg, s->u.loop.min, t);
  LLVMValueRef extent = min ? expr_as(cg, s->u.loop.extent, t) : NULL;
  if (!extent) return mlc_error_last_code();
  LLVMValueRef end = LLVMBuildAdd(cg->b, min, extent, "");
  /* Lowering replicates unrolled loops of constant extent; a symbolic one
   * can only be unrolled by a factor, at run time. */
  const char *hint = NULL;
  if (s->u.loop.kind == TIR_FOR_UNROLLED)
    hint = LLVMIsAConstantInt(extent) ? "llvm.loop.unroll.full" : "llvm.loop.unroll.enable";
  return cg_emit_loop(cg, min, end, hint, serial_body, (void *)s);
}

static int for_stmt(cg_t *cg, const tir_stmt_t *s) {
  switch (s->u.loop.kind) {
  case TIR_FOR_THREAD_BINDING:
    if (cg->hooks && cg->hooks->thread_loop) return cg->hooks->thread_loop(cg, s);
    return mlc_error_set(MLC_EUNSUPPORTED, "codegen: loop %s is bound to %s, which the CPU target does not have",
                         s->u.loop.var->u.var.name, s->u.loop.thread_tag ? s->u.loop.thread_tag : "a thread");
  case TIR_FOR_PARALLEL:
    if (cg->parallel_depth == 0) return cg_parallel_for(cg, s);
    return cg_serial_for(cg, s);
  default: return cg_serial_for(cg, s);
  }
}

/* ------------------------------------------------------------------------ */
/* Other statements                                                          */
/* ------------------------------------------------------------------------ */

static int let_stmt(cg_t *cg, const tir_stmt_t *s) {
  LLVMValueRef v = cg_expr(cg, s->u.let.value);
  if (!v) return mlc_error_last_code();
  const tir_expr_t *value = s->u.let.value;
  const cg_binding_t *src = value->kind == TIR_VAR ? cg_lookup(cg, value) : NULL;
  size_t mark = cg->vars.len;
  int rc = cg_bind(cg, s->u.let.var, v, src ? src->align : 0);
  if (rc == MLC_OK) rc = cg_stmt(cg, s->u.let.body);
  cg->vars.len = mark;
  return rc;
}

/* A condition as one i1: a vector condition holds when every lane does. */
static LLVMValueRef scalar_cond(cg_t *cg, const tir_expr_t *cond) {
  LLVMValueRef c = cg_expr(cg, cond);
  if (!c || cond->dtype.lanes == 1) return c;
  LLVMTypeRef it = LLVMIntTypeInContext(cg->ctx, cond->dtype.lanes);
  return LLVMBuildICmp(cg->b, LLVMIntEQ, LLVMBuildBitCast(cg->b, c, it, ""), LLVMConstAllOnes(it), "");
}

static int if_stmt(cg_t *cg, const tir_stmt_t *s) {
  LLVMValueRef c = scalar_cond(cg, s->u.if_.cond);
  if (!c) return mlc_error_last_code();
  LLVMBasicBlockRef then_bb = LLVMAppendBasicBlockInContext(cg->ctx, cg->fn, "if.then");
  LLVMBasicBlockRef else_bb = s->u.if_.else_case ? LLVMAppendBasicBlockInContext(cg->ctx, cg->fn, "if.else") : NULL;
  LLVMBasicBlockRef merge = LLVMAppendBasicBlockInContext(cg->ctx, cg->fn, "if.end");
  LLVMBuildCondBr(cg->b, c, then_bb, else_bb ? else_bb : merge);
  LLVMPositionBuilderAtEnd(cg->b, then_bb);
  int rc = cg_stmt(cg, s->u.if_.then_case);
  if (rc != MLC_OK) return rc;
  LLVMBuildBr(cg->b, merge);
  if (else_bb) {
    LLVMPositionBuilderAtEnd(cg->b, else_bb);
    if ((rc = cg_stmt(cg, s->u.if_.else_case)) != MLC_OK) return rc;
    LLVMBuildBr(cg->b, merge);
  }
  LLVMPositionBuilderAtEnd(cg->b, merge);
  return MLC_OK;
}

static int assert_stmt(cg_t *cg, const tir_stmt_t *s) {
  LLVMValueRef c = scalar_cond(cg, s->u.assert_.cond);
  if (!c) return mlc_error_last_code();
  const tir_expr_t *m = s->u.assert_.message;
  const char *text = m && m->kind == TIR_STRING_IMM ? m->u.str_value : "(no message)";
  char *msg = mlc_arena_printf(cg->arena, "%s: assertion failed: %s", cg->f->name, text);
  if (!msg) return mlc_error_set(MLC_ENOMEM, "codegen: out of memory");
  LLVMValueRef arg = cg_cstr(cg, msg);
  cg_check(cg, c, "%s", &arg, 1);
  return cg_stmt(cg, s->u.assert_.body);
}

static int evaluate(cg_t *cg, const tir_stmt_t *s) {
  const tir_expr_t *v = s->u.evaluate.value;
  if (tir_expr_kind_shape(v->kind) == TIR_SHAPE_IMM) return MLC_OK;
  if (cg->hooks && cg->hooks->evaluate) {
    bool done = false;
    int rc = cg->hooks->evaluate(cg, v, &done);
    if (rc != MLC_OK || done) return rc;
  }
  return cg_expr(cg, v) ? MLC_OK : mlc_error_last_code();
}

/* ------------------------------------------------------------------------ */
/* Allocations                                                               */
/* ------------------------------------------------------------------------ */

/* The constant byte size of b, or -1 when symbolic or too large. */
int64_t cg_const_bytes(const tir_buffer_t *b) {
  int64_t n = (int64_t)cg_elem_bytes(b->dtype) * b->dtype.lanes, d;
  for (int k = 0; k < b->ndim; k++)
    if (!tir_as_int(b->shape[k], &d) || d < 0 || __builtin_mul_overflow(n, d, &n)) return -1;
  return n;
}

LLVMValueRef cg_buffer_bytes(cg_t *cg, const tir_buffer_t *b) {
  LLVMValueRef n = cg_i64(cg, (int64_t)cg_elem_bytes(b->dtype) * b->dtype.lanes);
  for (int k = 0; k < b->ndim; k++) {
    LLVMValueRef d = cg_expr(cg, b->shape[k]);
    if (!d) return NULL;
    n = LLVMBuildMul(cg->b, n, cg_index64(cg, d, b->shape[k]->dtype), "");
  }
  return n;
}

/* size in bytes as i64 at run time, rounded up to CG_ALLOC_ALIGN (and at
 * least that). */
static LLVMValueRef runtime_bytes(cg_t *cg, const tir_buffer_t *b) {
  LLVMValueRef n = cg_buffer_bytes(cg, b);
  if (!n) return NULL;
  LLVMValueRef up = LLVMBuildAdd(cg->b, n, cg_i64(cg, CG_ALLOC_ALIGN - 1), "");
  up = LLVMBuildAnd(cg->b, up, cg_i64(cg, -(int64_t)CG_ALLOC_ALIGN), "");
  LLVMValueRef zero = LLVMBuildICmp(cg->b, LLVMIntSLE, up, cg_i64(cg, 0), "");
  return LLVMBuildSelect(cg->b, zero, cg_i64(cg, CG_ALLOC_ALIGN), up, "");
}

int cg_with_buffer(cg_t *cg, const tir_stmt_t *s, LLVMValueRef p, int align) {
  size_t mark = cg->vars.len;
  int rc = cg_bind(cg, s->u.allocate.buffer->data, p, align);
  if (rc == MLC_OK) rc = cg_stmt(cg, s->u.allocate.body);
  cg->vars.len = mark;
  return rc;
}

static int heap_allocate(cg_t *cg, const tir_stmt_t *s) {
  const tir_buffer_t *b = s->u.allocate.buffer;
  LLVMValueRef bytes = runtime_bytes(cg, b);
  if (!bytes) return mlc_error_last_code();
  LLVMTypeRef params[2] = {cg->t_i64, cg->t_i64};
  LLVMValueRef alloc_fn = cg_extern_fn(cg, "mlc_rt_workspace_alloc", cg->t_ptr, params, 2, false);
  /* As LLVM knows of aligned_alloc: a fresh block that nothing else points
   * to (so two buffers never alias), aligned as asked. */
  unsigned noalias = LLVMGetEnumAttributeKindForName("noalias", 7), align = LLVMGetEnumAttributeKindForName("align", 5);
  LLVMAddAttributeAtIndex(alloc_fn, LLVMAttributeReturnIndex, LLVMCreateEnumAttribute(cg->ctx, noalias, 0));
  LLVMAddAttributeAtIndex(alloc_fn, LLVMAttributeReturnIndex, LLVMCreateEnumAttribute(cg->ctx, align, CG_ALLOC_ALIGN));
  LLVMValueRef args[2] = {bytes, cg_i64(cg, CG_ALLOC_ALIGN)};
  LLVMValueRef p = cg_call(cg, alloc_fn, args, 2, b->name);
  const char *fmt = mlc_arena_printf(cg->arena, "%s: cannot allocate %%lld bytes for buffer %s",
                                     cg_fmt_escape(cg, cg->f->name), cg_fmt_escape(cg, b->name));
  if (!fmt) return mlc_error_set(MLC_ENOMEM, "codegen: out of memory");
  cg_check(cg, LLVMBuildIsNotNull(cg->b, p, ""), fmt, &bytes, 1);
  if (mlc_vec_push(&cg->heap, p) != MLC_OK) return mlc_error_set(MLC_ENOMEM, "codegen: out of memory");
  int rc = cg_with_buffer(cg, s, p, CG_ALLOC_ALIGN);
  cg->heap.len--;
  if (rc != MLC_OK) return rc;
  cg_call(cg, cg_extern_fn(cg, "mlc_rt_workspace_free", cg->t_void, &cg->t_ptr, 1, false), &p, 1, "");
  return MLC_OK;
}

static int cpu_allocate(cg_t *cg, const tir_stmt_t *s) {
  const tir_buffer_t *b = s->u.allocate.buffer;
  int64_t bytes = cg_const_bytes(b);
  if (bytes < 0 || bytes > CG_STACK_ALLOC_MAX) return heap_allocate(cg, s);
  LLVMTypeRef t = LLVMArrayType(cg->t_i8, (unsigned)(bytes > 0 ? bytes : 1));
  LLVMValueRef a = cg_entry_alloca(cg, t, CG_ALLOC_ALIGN, b->name);
  return cg_with_buffer(cg, s, LLVMBuildBitCast(cg->b, a, cg->t_ptr, ""), CG_ALLOC_ALIGN);
}

static int allocate(cg_t *cg, const tir_stmt_t *s) {
  if (cg->hooks && cg->hooks->allocate) return cg->hooks->allocate(cg, s);
  return cpu_allocate(cg, s);
}

/* ------------------------------------------------------------------------ */
/* Dispatch                                                                  */
/* ------------------------------------------------------------------------ */

int cg_stmt(cg_t *cg, const tir_stmt_t *s) {
  int rc = MLC_OK;
  switch (s->kind) {
  case TIR_BUFFER_STORE: return cg_buffer_store(cg, s);
  case TIR_LET: return let_stmt(cg, s);
  case TIR_ATTR:
    if (cg->hooks && cg->hooks->attr) return cg->hooks->attr(cg, s);
    return cg_stmt(cg, s->u.attr.body);
  case TIR_ASSERT: return assert_stmt(cg, s);
  case TIR_FOR: return for_stmt(cg, s);
  case TIR_IF: return if_stmt(cg, s);
  case TIR_SEQ:
    for (int i = 0; i < s->u.seq.n && rc == MLC_OK; i++) rc = cg_stmt(cg, s->u.seq.stmts[i]);
    return rc;
  case TIR_EVALUATE: return evaluate(cg, s);
  case TIR_ALLOCATE: return allocate(cg, s);
  default:
    return mlc_error_set(MLC_EUNSUPPORTED, "codegen: %s statements must be lowered first (mlc_lower)",
                         tir_stmt_kind_name(s->kind));
  }
}
