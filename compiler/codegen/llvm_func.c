/*
 * llvm_func.c - cg_llvm_add_func: one lowered PrimFunc becomes an internal
 * kernel `i32 <name>_compute(i8* ptrs..., scalars..., dims...)` plus the
 * exported DLTensor wrapper `i32 <name>(DLTensor *args, i32 num_args)`
 * (llvm_abi.c) that checks the arguments and calls it.
 *
 * Also here: what every generator shares - variable scopes, function
 * creation with the target's attributes, entry-block allocas, declarations
 * of the runtime and libc, and the error exit (free live heap buffers, set
 * the message with mlc_rt_error, return -1).
 *
 * The kernel takes plain pointers, so the optimizer sees `noalias` (when the
 * function says "tir.noalias") and declared alignments as parameter
 * attributes, and the wrapper inlines it after its checks.
 */
#include "compiler/codegen/llvm_gen.h"

#include <string.h>

/* ------------------------------------------------------------------------ */
/* Scopes                                                                    */
/* ------------------------------------------------------------------------ */

int cg_bind(cg_t *cg, const tir_var_t *var, LLVMValueRef value, int align) {
  cg_binding_t bnd = {var, value, align};
  if (mlc_vec_push(&cg->vars, bnd) != MLC_OK) return mlc_error_set(MLC_ENOMEM, "codegen: out of memory");
  return MLC_OK;
}

const cg_binding_t *cg_lookup(const cg_t *cg, const tir_var_t *var) {
  for (size_t i = cg->vars.len; i-- > 0;)
    if (cg->vars.data[i].var == var) return &cg->vars.data[i];
  return NULL;
}

/* ------------------------------------------------------------------------ */
/* Functions                                                                 */
/* ------------------------------------------------------------------------ */

static void add_fn_attr(cg_t *cg, LLVMValueRef fn, const char *key, const char *value) {
  LLVMAttributeRef a = LLVMCreateStringAttribute(cg->ctx, key, (unsigned)strlen(key), value,
                                                 (unsigned)strlen(value));
  LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex, a);
}

static void add_enum_attr(cg_t *cg, LLVMValueRef fn, unsigned idx, const char *name, uint64_t v) {
  unsigned kind = LLVMGetEnumAttributeKindForName(name, strlen(name));
  LLVMAddAttributeAtIndex(fn, idx, LLVMCreateEnumAttribute(cg->ctx, kind, v));
}

LLVMValueRef cg_add_function(cg_t *cg, const char *name, LLVMTypeRef fnty, bool exported) {
  LLVMValueRef fn = LLVMAddFunction(cg->mod, name, fnty);
  if (!exported) LLVMSetLinkage(fn, LLVMInternalLinkage);
  add_enum_attr(cg, fn, LLVMAttributeFunctionIndex, "nounwind", 0);
  const mlc_target_t *t = cg->target;
  if (t->mcpu[0]) add_fn_attr(cg, fn, "target-cpu", t->mcpu);
  if (t->mattr[0]) add_fn_attr(cg, fn, "target-features", t->mattr);
  if (cg->fast_math) {
    /* LLVM 14-16 have no C API for instruction fast-math flags; these
     * function attributes let the backend reassociate, contract and
     * ignore NaN/inf/signed zeros (docs/compiler/codegen.md). */
    static const char *const keys[] = {"unsafe-fp-math", "no-nans-fp-math", "no-infs-fp-math",
                                       "no-signed-zeros-fp-math", "approx-func-fp-math"};
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) add_fn_attr(cg, fn, keys[i], "true");
  }
  return fn;
}

void cg_fn_begin(cg_t *cg, LLVMValueRef fn) {
  cg->fn = fn;
  cg->allocas = LLVMAppendBasicBlockInContext(cg->ctx, fn, "entry");
  LLVMBasicBlockRef start = LLVMAppendBasicBlockInContext(cg->ctx, fn, "start");
  LLVMPositionBuilderAtEnd(cg->b, start);
}

void cg_fn_finish(cg_t *cg) {
  LLVMBuilderRef tmp = LLVMCreateBuilderInContext(cg->ctx);
  LLVMPositionBuilderAtEnd(tmp, cg->allocas);
  LLVMBuildBr(tmp, LLVMGetNextBasicBlock(cg->allocas));
  LLVMDisposeBuilder(tmp);
}

LLVMValueRef cg_entry_alloca(cg_t *cg, LLVMTypeRef t, int align, const char *name) {
  LLVMBuilderRef tmp = LLVMCreateBuilderInContext(cg->ctx);
  LLVMPositionBuilderAtEnd(tmp, cg->allocas);
  LLVMValueRef a = LLVMBuildAlloca(tmp, t, name);
  LLVMSetAlignment(a, (unsigned)align);
  LLVMDisposeBuilder(tmp);
  return a;
}

LLVMValueRef cg_call(cg_t *cg, LLVMValueRef fn, LLVMValueRef *args, int n, const char *name) {
  LLVMTypeRef fnty = LLVMGlobalGetValueType(fn);
  if (LLVMGetTypeKind(LLVMGetReturnType(fnty)) == LLVMVoidTypeKind) name = "";
  return LLVMBuildCall2(cg->b, fnty, fn, args, (unsigned)n, name);
}

LLVMValueRef cg_extern_fn(cg_t *cg, const char *name, LLVMTypeRef ret, LLVMTypeRef *params,
                          int n, bool vararg) {
  LLVMValueRef fn = LLVMGetNamedFunction(cg->mod, name);
  if (fn) return fn;
  fn = LLVMAddFunction(cg->mod, name, LLVMFunctionType(ret, params, (unsigned)n, vararg));
  add_enum_attr(cg, fn, LLVMAttributeFunctionIndex, "nounwind", 0);
  return fn;
}

LLVMValueRef cg_rt_error_fn(cg_t *cg) {
  return cg_extern_fn(cg, "mlc_rt_error", cg->t_i32, &cg->t_ptr, 1, true);
}

LLVMValueRef cg_rt_parallel_for_fn(cg_t *cg) {
  LLVMTypeRef task_params[] = {cg->t_i64, cg->t_i64, cg->t_ptr};
  LLVMTypeRef task = LLVMFunctionType(cg->t_i32, task_params, 3, false);
  LLVMTypeRef params[] = {LLVMPointerType(task, 0), cg->t_ptr, cg->t_i64, cg->t_i32};
  return cg_extern_fn(cg, "mlc_rt_parallel_for", cg->t_i32, params, 4, false);
}

LLVMValueRef cg_cstr(cg_t *cg, const char *s) { return LLVMBuildGlobalStringPtr(cg->b, s, "str"); }

const char *cg_fmt_escape(cg_t *cg, const char *s) {
  size_t n = 0;
  for (const char *p = s; *p; p++) n += *p == '%' ? 2 : 1;
  char *out = mlc_arena_alloc(cg->arena, n + 1);
  if (!out) return s;
  char *q = out;
  for (const char *p = s; *p; p++) {
    *q++ = *p;
    if (*p == '%') *q++ = '%';
  }
  return out;
}

/* Marks a conditional branch whose true side is the likely one. */
static void set_likely_true(cg_t *cg, LLVMValueRef br) {
  LLVMMetadataRef md[3] = {LLVMMDStringInContext2(cg->ctx, "branch_weights", 14),
                           LLVMValueAsMetadata(cg_i32(cg, 2000)),
                           LLVMValueAsMetadata(cg_i32(cg, 1))};
  LLVMSetMetadata(br, LLVMGetMDKindIDInContext(cg->ctx, "prof", 4),
                  LLVMMetadataAsValue(cg->ctx, LLVMMDNodeInContext2(cg->ctx, md, 3)));
}

void cg_check(cg_t *cg, LLVMValueRef ok, const char *fmt, LLVMValueRef *args, int nargs) {
  LLVMBasicBlockRef fail = LLVMAppendBasicBlockInContext(cg->ctx, cg->fn, "fail");
  LLVMBasicBlockRef cont = LLVMAppendBasicBlockInContext(cg->ctx, cg->fn, "ok");
  set_likely_true(cg, LLVMBuildCondBr(cg->b, ok, cont, fail));
  LLVMPositionBuilderAtEnd(cg->b, fail);
  if (fmt) {
    LLVMValueRef all[16];
    MLC_ASSERT(nargs < 16);
    all[0] = cg_cstr(cg, fmt);
    for (int i = 0; i < nargs; i++) all[i + 1] = args[i];
    cg_call(cg, cg_rt_error_fn(cg), all, nargs + 1, "");
  }
  if (cg->hooks && cg->hooks->fail) cg->hooks->fail(cg);
  else cg_fail_return(cg);
  LLVMPositionBuilderAtEnd(cg->b, cont);
}

void cg_fail_return(cg_t *cg) {
  LLVMValueRef free_fn = cg_extern_fn(cg, "mlc_rt_workspace_free", cg->t_void, &cg->t_ptr, 1, false);
  for (size_t i = cg->heap.len; i-- > 0;) cg_call(cg, free_fn, &cg->heap.data[i], 1, "");
  LLVMBuildRet(cg->b, cg_i32(cg, -1));
}

LLVMValueRef cg_intrinsic(cg_t *cg, const char *name, LLVMTypeRef *tys, int ntys, LLVMTypeRef *fnty) {
  unsigned id = LLVMLookupIntrinsicID(name, strlen(name));
  if (id == 0) {
    mlc_error_set(MLC_EUNSUPPORTED, "codegen: %s is not an LLVM intrinsic", name);
    return NULL;
  }
  *fnty = LLVMIntrinsicGetType(cg->ctx, id, tys, (size_t)ntys);
  return LLVMGetIntrinsicDeclaration(cg->mod, id, tys, (size_t)ntys);
}

LLVMValueRef cg_call_intrinsic(cg_t *cg, const char *name, LLVMTypeRef *tys, int ntys,
                               LLVMValueRef *args, int nargs) {
  LLVMTypeRef fnty;
  LLVMValueRef fn = cg_intrinsic(cg, name, tys, ntys, &fnty);
  if (!fn) return NULL;
  return LLVMBuildCall2(cg->b, fnty, fn, args, (unsigned)nargs, "");
}

/* ------------------------------------------------------------------------ */
/* The kernel                                                                */
/* ------------------------------------------------------------------------ */

static bool is_scalar_param(const tir_func_t *f, const tir_var_t *v) {
  for (int i = 0; i < f->nparams; i++)
    if (!f->buffer_map[i] && f->params[i] == v) return true;
  return false;
}

static void add_dim(cg_sig_t *sig, const tir_func_t *f, const tir_expr_t *e) {
  if (!e || e->kind != TIR_VAR || is_scalar_param(f, e)) return;
  for (int i = 0; i < sig->ndims; i++)
    if (sig->dims[i] == e) return;
  sig->dims[sig->ndims++] = e;
}

/* Buffer parameters become pointers, other parameters scalars, and the
 * plain variables in buffer shapes, strides and offsets dimensions. */
static int build_signature(cg_t *cg, cg_sig_t *sig) {
  const tir_func_t *f = cg->f;
  size_t n = (size_t)f->nparams + 1;
  sig->ptr_params = mlc_arena_alloc(cg->arena, sizeof(int) * n);
  sig->scalar_params = mlc_arena_alloc(cg->arena, sizeof(int) * n);
  sig->dims = mlc_arena_alloc(cg->arena, sizeof(*sig->dims) * n * (2 * TIR_MAX_DIMS + 1));
  if (!sig->ptr_params || !sig->scalar_params || !sig->dims)
    return mlc_error_set(MLC_ENOMEM, "codegen: out of memory");
  for (int i = 0; i < f->nparams; i++) {
    const tir_buffer_t *b = f->buffer_map[i];
    if (!b) {
      sig->scalar_params[sig->nscalars++] = i;
      continue;
    }
    sig->ptr_params[sig->nptrs++] = i;
    if (b->ndim > TIR_MAX_DIMS)
      return mlc_error_set(MLC_EUNSUPPORTED, "codegen: buffer %s has %d dimensions", b->name, b->ndim);
    for (int d = 0; d < b->ndim; d++) add_dim(sig, f, b->shape[d]);
    for (int d = 0; b->strides && d < b->ndim; d++) add_dim(sig, f, b->strides[d]);
    add_dim(sig, f, b->elem_offset);
  }
  return MLC_OK;
}

static LLVMTypeRef scalar_param_type(cg_t *cg, const tir_var_t *v) {
  return tir_dtype_is_handle(v->dtype) ? cg->t_ptr : cg_type(cg, v->dtype);
}

static int bind_kernel_params(cg_t *cg, const cg_sig_t *sig, LLVMValueRef fn) {
  const tir_func_t *f = cg->f;
  int k = 0, rc = MLC_OK;
  for (int i = 0; i < sig->nptrs && rc == MLC_OK; i++, k++) {
    const tir_buffer_t *b = f->buffer_map[sig->ptr_params[i]];
    LLVMValueRef p = LLVMGetParam(fn, (unsigned)k);
    LLVMSetValueName2(p, b->name, strlen(b->name));
    if (cg->noalias) add_enum_attr(cg, fn, (unsigned)k + 1, "noalias", 0);
    if (b->align > 0) add_enum_attr(cg, fn, (unsigned)k + 1, "align", (uint64_t)b->align);
    rc = cg_bind(cg, b->data, p, b->align);
    if (rc == MLC_OK) rc = cg_bind(cg, f->params[sig->ptr_params[i]], p, b->align);
  }
  for (int i = 0; i < sig->nscalars && rc == MLC_OK; i++, k++) {
    const tir_var_t *v = f->params[sig->scalar_params[i]];
    LLVMValueRef p = LLVMGetParam(fn, (unsigned)k);
    LLVMSetValueName2(p, v->u.var.name, strlen(v->u.var.name));
    rc = cg_bind(cg, v, p, 0);
  }
  for (int i = 0; i < sig->ndims && rc == MLC_OK; i++, k++) {
    LLVMValueRef p = LLVMGetParam(fn, (unsigned)k);
    LLVMSetValueName2(p, sig->dims[i]->u.var.name, strlen(sig->dims[i]->u.var.name));
    rc = cg_bind(cg, sig->dims[i], p, 0);
  }
  return rc;
}

static int build_kernel(cg_t *cg, const cg_sig_t *sig, LLVMValueRef *out) {
  const tir_func_t *f = cg->f;
  int n = sig->nptrs + sig->nscalars + sig->ndims;
  LLVMTypeRef *types = mlc_arena_alloc(cg->arena, sizeof(LLVMTypeRef) * (size_t)(n + 1));
  if (!types) return mlc_error_set(MLC_ENOMEM, "codegen: out of memory");
  int k = 0;
  for (int i = 0; i < sig->nptrs; i++) types[k++] = cg->t_ptr;
  for (int i = 0; i < sig->nscalars; i++)
    if (!(types[k++] = scalar_param_type(cg, f->params[sig->scalar_params[i]]))) return mlc_error_last_code();
  for (int i = 0; i < sig->ndims; i++)
    if (!(types[k++] = cg_type(cg, sig->dims[i]->dtype))) return mlc_error_last_code();
  if (cg->m->gpu) types[n++] = cg->t_i32; /* the device the arguments are on */
  char *name = mlc_arena_printf(cg->arena, "%s_compute", f->name);
  if (!name) return mlc_error_set(MLC_ENOMEM, "codegen: out of memory");
  LLVMValueRef fn = cg_add_function(cg, name, LLVMFunctionType(cg->t_i32, types, (unsigned)n, false), false);
  *out = fn;
  cg_fn_begin(cg, fn);
  int rc = bind_kernel_params(cg, sig, fn);
  if (cg->m->gpu) cg->gpu_device = LLVMGetParam(fn, (unsigned)n - 1);
  if (rc == MLC_OK && cg->m->gpu) rc = cg_gpu_host_check(cg);
  if (rc == MLC_OK) rc = cg_stmt(cg, f->body);
  if (rc == MLC_OK) LLVMBuildRet(cg->b, cg_i32(cg, 0));
  cg_fn_finish(cg);
  cg->vars.len = 0;
  return rc;
}

/* ------------------------------------------------------------------------ */
/* Entry point                                                               */
/* ------------------------------------------------------------------------ */

void cg_setup(cg_t *cg, mlc_module_t *m, LLVMModuleRef mod, const tir_func_t *f) {
  memset(cg, 0, sizeof(*cg));
  cg->m = m;
  cg->target = m->gpu ? &m->host : &m->target;
  cg->hooks = m->gpu ? &cg_gpu_host_hooks : NULL;
  cg->ctx = m->ctx;
  cg->mod = mod;
  cg->f = f;
  cg->b = LLVMCreateBuilderInContext(m->ctx);
  cg->arena = mlc_arena_new();
  tir_expr_t *na = tir_annot_get(f->attrs, f->nattrs, "tir.noalias");
  int64_t v = 0;
  cg->noalias = na && tir_as_int(na, &v) && v != 0;
  cg->fast_math = m->target.fast_math;
  cg->parallel_depth = m->gpu ? 1 : 0; /* host code of GPU modules: serial loops */
  cg->t_void = LLVMVoidTypeInContext(m->ctx);
  cg->t_i1 = LLVMInt1TypeInContext(m->ctx);
  cg->t_i8 = LLVMInt8TypeInContext(m->ctx);
  cg->t_i16 = LLVMInt16TypeInContext(m->ctx);
  cg->t_i32 = LLVMInt32TypeInContext(m->ctx);
  cg->t_i64 = LLVMInt64TypeInContext(m->ctx);
  cg->t_f16 = LLVMHalfTypeInContext(m->ctx);
  cg->t_f32 = LLVMFloatTypeInContext(m->ctx);
  cg->t_f64 = LLVMDoubleTypeInContext(m->ctx);
  cg->t_ptr = LLVMPointerType(cg->t_i8, 0);
}

void cg_done(cg_t *cg) {
  LLVMDisposeBuilder(cg->b);
  mlc_vec_free(&cg->vars);
  mlc_vec_free(&cg->heap);
  mlc_vec_free(&cg->gpu_heap);
  mlc_arena_free(cg->arena);
}

/* Removes the functions this call added (a failed generation leaves no
 * half-built function behind): the definitions after `last` in the module.
 * Uses go first (the wrapper calls the kernel, the kernel names its tasks),
 * then the functions. */
static void remove_added(cg_t *cg, LLVMValueRef last) {
  LLVMValueRef first = last ? LLVMGetNextFunction(last) : LLVMGetFirstFunction(cg->mod);
  for (LLVMValueRef fn = first; fn; fn = LLVMGetNextFunction(fn))
    if (LLVMCountBasicBlocks(fn) > 0) LLVMReplaceAllUsesWith(fn, LLVMGetUndef(LLVMTypeOf(fn)));
  for (LLVMValueRef fn = first; fn;) {
    LLVMValueRef next = LLVMGetNextFunction(fn);
    if (LLVMCountBasicBlocks(fn) > 0) LLVMDeleteFunction(fn);
    fn = next;
  }
}

int cg_llvm_add_func(mlc_module_t *m, const tir_func_t *f) {
  cg_t cg;
  cg_setup(&cg, m, m->mod, f);
  LLVMValueRef last = LLVMGetLastFunction(m->mod);
  cg_sig_t sig = {0};
  LLVMValueRef kernel = NULL;
  int rc = MLC_OK;
  if (!cg.arena) {
    rc = mlc_error_set(MLC_ENOMEM, "codegen: out of memory");
    goto done;
  }
  if (LLVMGetNamedFunction(m->mod, f->name)) {
    rc = mlc_error_set(MLC_EINVAL, "codegen: function %s is defined twice in the module", f->name);
    goto done;
  }
  if ((rc = build_signature(&cg, &sig)) != MLC_OK) goto done;
  if ((rc = build_kernel(&cg, &sig, &kernel)) != MLC_OK) goto done;
  rc = cg_abi_wrapper(&cg, &sig, kernel);
done:
  if (rc != MLC_OK) remove_added(&cg, last); /* mlc_codegen names the function */
  cg_done(&cg);
  return rc;
}
