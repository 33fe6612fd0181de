/*
 * llvm_parallel.c - outlining `for v in T.parallel(n)` onto the runtime's
 * thread pool.
 *
 * The loop becomes three pieces:
 *  - a body function `i32 <kernel>_par<k>_body(i64 begin, i64 end, min,
 *    free values...)` running iterations [begin, end) serially; buffer
 *    pointers among the free values are `noalias` parameters when the
 *    PrimFunc says "tir.noalias", so after inlining the optimizer still
 *    knows the buffers apart (the inliner turns them into scoped alias
 *    metadata);
 *  - a task `i32 <kernel>_par<k>(i64 begin, i64 end, i8 *closure)` of the
 *    runtime's mlc_rt_task_fn type that unpacks the closure and calls it;
 *  - at the loop's place: the closure (a struct of the loop's min and the
 *    free variables' values, on the caller's stack) and
 *    mlc_rt_parallel_for(task, closure, extent, target num_cores), whose
 *    nonzero result (the message already set) returns -1.
 * The free variables are the variables the loop body mentions (buffer data,
 * shapes, strides and offsets included) that are bound outside it.
 */
#include "compiler/codegen/llvm_gen.h"

#include <string.h>

typedef struct {
  cg_t *cg;
  const tir_var_t **vars;
  int n, cap;
  bool oom;
} free_vars_t;

static void add_var(free_vars_t *fv, const tir_expr_t *v) {
  if (!v || v->kind != TIR_VAR || !cg_lookup(fv->cg, v)) return;
  for (int i = 0; i < fv->n; i++)
    if (fv->vars[i] == v) return;
  if (fv->n == fv->cap) {
    int cap = fv->cap ? fv->cap * 2 : 16;
    const tir_var_t **grown = mlc_arena_grow(fv->cg->arena, fv->vars, (size_t)fv->n, (size_t)cap, sizeof(*grown));
    if (!grown) {
      fv->oom = true;
      return;
    }
    fv->vars = grown;
    fv->cap = cap;
  }
  fv->vars[fv->n++] = v;
}

static bool visit_expr(tir_visitor_t *v, tir_expr_t *e);

static void add_buffer(tir_visitor_t *v, const tir_buffer_t *b) {
  add_var(v->payload, b->data);
  for (int k = 0; k < b->ndim; k++) tir_visit_expr(v, b->shape[k]);
  for (int k = 0; b->strides && k < b->ndim; k++) tir_visit_expr(v, b->strides[k]);
  if (b->elem_offset) tir_visit_expr(v, b->elem_offset);
}

static bool visit_expr(tir_visitor_t *v, tir_expr_t *e) {
  if (e->kind == TIR_VAR) add_var(v->payload, e);
  else if (e->kind == TIR_BUFFER_LOAD) add_buffer(v, e->u.load.buffer);
  return true;
}

static bool visit_stmt(tir_visitor_t *v, tir_stmt_t *s) {
  if (s->kind == TIR_BUFFER_STORE) add_buffer(v, s->u.store.buffer);
  else if (s->kind == TIR_ALLOCATE) add_buffer(v, s->u.allocate.buffer);
  return true;
}

/* The variables bound outside the loop that its bounds-free body uses. */
static int collect_free_vars(cg_t *cg, const tir_stmt_t *loop, free_vars_t *fv) {
  memset(fv, 0, sizeof(*fv));
  fv->cg = cg;
  tir_visitor_t v = {.expr = visit_expr, .stmt = visit_stmt, .payload = fv};
  tir_visit_stmt(&v, loop->u.loop.body);
  return fv->oom ? mlc_error_set(MLC_ENOMEM, "codegen: out of memory") : MLC_OK;
}

/* ------------------------------------------------------------------------ */
/* Generation                                                                */
/* ------------------------------------------------------------------------ */

typedef struct {
  LLVMValueRef fn;
  LLVMBasicBlockRef allocas, insert;
  cg_bindings_t vars;
  cg_values_t heap;
} saved_fn_t;

static void enter_fn(cg_t *cg, saved_fn_t *saved, LLVMValueRef fn) {
  saved->fn = cg->fn;
  saved->allocas = cg->allocas;
  saved->insert = LLVMGetInsertBlock(cg->b);
  saved->vars = cg->vars;
  saved->heap = cg->heap;
  memset(&cg->vars, 0, sizeof(cg->vars));
  memset(&cg->heap, 0, sizeof(cg->heap));
  cg_fn_begin(cg, fn);
}

static void leave_fn(cg_t *cg, saved_fn_t *saved) {
  cg_fn_finish(cg);
  mlc_vec_free(&cg->vars);
  mlc_vec_free(&cg->heap);
  cg->fn = saved->fn;
  cg->allocas = saved->allocas;
  cg->vars = saved->vars;
  cg->heap = saved->heap;
  LLVMPositionBuilderAtEnd(cg->b, saved->insert);
}

typedef struct {
  const tir_stmt_t *loop;
  LLVMValueRef min;
} par_body_t;

static int par_iteration(cg_t *cg, LLVMValueRef iv, void *payload) {
  par_body_t *pb = payload;
  const tir_var_t *var = pb->loop->u.loop.var;
  LLVMValueRef i = LLVMBuildIntCast2(cg->b, iv, LLVMTypeOf(pb->min), 1, "");
  i = LLVMBuildAdd(cg->b, pb->min, i, var->u.var.name);
  size_t mark = cg->vars.len;
  int rc = cg_bind(cg, var, i, 0);
  if (rc == MLC_OK) rc = cg_stmt(cg, pb->loop->u.loop.body);
  cg->vars.len = mark;
  return rc;
}

/* The body function: params (i64 begin, i64 end, min, values of fv). */
static int build_body(cg_t *cg, const tir_stmt_t *loop, const free_vars_t *fv, LLVMTypeRef *types,
                      int n, const char *name, LLVMValueRef *out) {
  LLVMValueRef fn = cg_add_function(cg, name, LLVMFunctionType(cg->t_i32, types, (unsigned)n, false), false);
  int *aligns = mlc_arena_alloc(cg->arena, sizeof(int) * (size_t)(fv->n + 1));
  if (!aligns) return mlc_error_set(MLC_ENOMEM, "codegen: out of memory");
  for (int i = 0; i < fv->n; i++) aligns[i] = cg_lookup(cg, fv->vars[i])->align;
  saved_fn_t saved;
  enter_fn(cg, &saved, fn);
  int rc = MLC_OK;
  for (int i = 0; i < fv->n && rc == MLC_OK; i++) {
    LLVMValueRef p = LLVMGetParam(fn, (unsigned)i + 3);
    LLVMSetValueName2(p, fv->vars[i]->u.var.name, strlen(fv->vars[i]->u.var.name));
    if (cg->noalias && types[i + 3] == cg->t_ptr) {
      unsigned kind = LLVMGetEnumAttributeKindForName("noalias", 7);
      LLVMAddAttributeAtIndex(fn, (unsigned)i + 4, LLVMCreateEnumAttribute(cg->ctx, kind, 0));
    }
    rc = cg_bind(cg, fv->vars[i], p, aligns[i]);
  }
  par_body_t pb = {loop, LLVMGetParam(fn, 2)};
  cg->parallel_depth++;
  if (rc == MLC_OK) rc = cg_emit_loop(cg, LLVMGetParam(fn, 0), LLVMGetParam(fn, 1), NULL, par_iteration, &pb);
  cg->parallel_depth--;
  if (rc == MLC_OK) LLVMBuildRet(cg->b, cg_i32(cg, 0));
  leave_fn(cg, &saved);
  *out = fn;
  return rc;
}

/* The task: unpacks the closure struct and calls the body. args has room
 * for nfields + 2 values. */
static LLVMValueRef build_task(cg_t *cg, LLVMValueRef body, LLVMTypeRef closure_ty, int nfields,
                               const char *name, LLVMValueRef *args) {
  LLVMTypeRef params[3] = {cg->t_i64, cg->t_i64, cg->t_ptr};
  LLVMValueRef fn = cg_add_function(cg, name, LLVMFunctionType(cg->t_i32, params, 3, false), false);
  saved_fn_t saved;
  enter_fn(cg, &saved, fn);
  args[0] = LLVMGetParam(fn, 0);
  args[1] = LLVMGetParam(fn, 1);
  LLVMValueRef c = LLVMBuildBitCast(cg->b, LLVMGetParam(fn, 2), LLVMPointerType(closure_ty, 0), "");
  for (int k = 0; k < nfields; k++) {
    LLVMValueRef p = LLVMBuildStructGEP2(cg->b, closure_ty, c, (unsigned)k, "");
    args[k + 2] = LLVMBuildLoad2(cg->b, LLVMStructGetTypeAtIndex(closure_ty, (unsigned)k), p, "");
  }
  LLVMBuildRet(cg->b, cg_call(cg, body, args, nfields + 2, ""));
  leave_fn(cg, &saved);
  return fn;
}

int cg_parallel_for(cg_t *cg, const tir_stmt_t *loop) {
  tir_dtype_t t = loop->u.loop.var->dtype;
  LLVMValueRef min = cg_expr(cg, loop->u.loop.min);
  LLVMValueRef extent = min ? cg_expr(cg, loop->u.loop.extent) : NULL;
  if (!extent) return mlc_error_last_code();
  min = cg_cast(cg, min, loop->u.loop.min->dtype, t);
  extent = cg_index64(cg, extent, loop->u.loop.extent->dtype);
  free_vars_t fv;
  int rc = collect_free_vars(cg, loop, &fv);
  if (rc != MLC_OK) return rc;
  int nfields = fv.n + 1, n = fv.n + 3;
  LLVMTypeRef *types = mlc_arena_alloc(cg->arena, sizeof(LLVMTypeRef) * (size_t)n);
  LLVMValueRef *values = mlc_arena_alloc(cg->arena, sizeof(LLVMValueRef) * (size_t)(n + nfields));
  if (!types || !values) return mlc_error_set(MLC_ENOMEM, "codegen: out of memory");
  types[0] = types[1] = cg->t_i64;
  types[2] = LLVMTypeOf(min);
  values[0] = min;
  for (int i = 0; i < fv.n; i++) {
    values[i + 1] = cg_lookup(cg, fv.vars[i])->value;
    types[i + 3] = LLVMTypeOf(values[i + 1]);
  }
  int k = cg->ntasks++;
  const char *task_name = mlc_arena_printf(cg->arena, "%s_compute_par%d", cg->f->name, k);
  const char *body_name = mlc_arena_printf(cg->arena, "%s_compute_par%d_body", cg->f->name, k);
  if (!task_name || !body_name) return mlc_error_set(MLC_ENOMEM, "codegen: out of memory");
  LLVMValueRef body = NULL;
  if ((rc = build_body(cg, loop, &fv, types, n, body_name, &body)) != MLC_OK) return rc;
  LLVMTypeRef closure_ty = LLVMStructTypeInContext(cg->ctx, types + 2, (unsigned)nfields, false);
  LLVMValueRef task = build_task(cg, body, closure_ty, nfields, task_name, values + nfields);
  LLVMValueRef closure = cg_entry_alloca(cg, closure_ty, 8, "closure");
  for (int i = 0; i < nfields; i++)
    LLVMBuildStore(cg->b, values[i], LLVMBuildStructGEP2(cg->b, closure_ty, closure, (unsigned)i, ""));
  LLVMValueRef args[4] = {task, LLVMBuildBitCast(cg->b, closure, cg->t_ptr, ""), extent,
                          cg_i32(cg, cg->m->target.num_cores)};
  LLVMValueRef r = cg_call(cg, cg_rt_parallel_for_fn(cg), args, 4, "");
  cg_check(cg, LLVMBuildICmp(cg->b, LLVMIntEQ, r, cg_i32(cg, 0), ""), NULL, NULL, 0);
  return MLC_OK;
}
