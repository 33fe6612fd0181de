/*
 * llvm_gen.h - private to the LLVM IR generator (compiler/codegen/llvm_*.c):
 * the state of generating one lowered PrimFunc and the functions the files
 * share. The entry point is cg_llvm_add_func (codegen_internal.h).
 *
 * Files: llvm_func.c (entry point, kernel signature, scopes, runtime
 * declarations, error exits), llvm_abi.c (the exported DLTensor wrapper),
 * llvm_types.c (dtypes, constants, casts, bfloat16), llvm_expr.c
 * (expressions, buffer accesses), llvm_call.c (intrinsic calls),
 * llvm_stmt.c (statements, loops, allocations), llvm_parallel.c (outlined
 * parallel loops). docs/compiler/codegen.md describes the mapping.
 *
 * Conventions: expression generators return the LLVM value, or NULL after
 * mlc_error_set; statement generators return a status. Every generated
 * function (kernel, parallel body, wrapper) returns i32: 0, or -1 after
 * mlc_rt_error. Values keep their TIR dtype's LLVM type (cg_type): bool is
 * i1, bfloat16 is its i16 bit pattern, handles are i8*.
 */
#ifndef MLC_LLVM_GEN_H
#define MLC_LLVM_GEN_H

#include <llvm-c/Core.h>
#include <llvm/Config/llvm-config.h>

#include "compiler/codegen/codegen_internal.h"

/* Constant allocations up to this size live on the stack (entry-block
 * alloca, 64-byte aligned); larger or symbolic ones come from aligned_alloc.
 * Parallel bodies run on pool threads whose stacks are the default 8 MiB. */
#define CG_STACK_ALLOC_MAX (64 * 1024)
/* Alignment of allocations (stack and heap): a cache line, AVX-512 width. */
#define CG_ALLOC_ALIGN 64

/* A variable in scope: its value and, for handles, the alignment in bytes
 * known for the address it holds (0 when only the element's). */
typedef struct {
  const tir_var_t *var;
  LLVMValueRef value;
  int align;
} cg_binding_t;

typedef MLC_VEC(cg_binding_t) cg_bindings_t;
typedef MLC_VEC(LLVMValueRef) cg_values_t;

typedef struct cg cg_t;

/* What the GPU generators do differently (gpu_host.c for host code that
 * launches kernels, gpu_device.c for kernel code); NULL hooks, or no hooks
 * at all (CPU), mean the CPU behaviour. */
typedef struct {
  /* FOR bound to a thread (CPU: MLC_EUNSUPPORTED). */
  int (*thread_loop)(cg_t *cg, const tir_stmt_t *loop);
  /* ALLOCATE (CPU: stack or aligned_alloc). */
  int (*allocate)(cg_t *cg, const tir_stmt_t *s);
  /* ATTR statements (CPU: the body alone). */
  int (*attr)(cg_t *cg, const tir_stmt_t *s);
  /* T.tvm_storage_sync(...) (CPU: nothing). */
  LLVMValueRef (*storage_sync)(cg_t *cg);
  /* Float math op on x (and y for pow) in the math type (CPU: LLVM
   * intrinsics or libm, cg_float_math_default). */
  LLVMValueRef (*math)(cg_t *cg, tir_op_t op, LLVMValueRef x, LLVMValueRef y);
  /* The failure exit of cg_check after the message (CPU: free the heap
   * buffers, return -1). */
  void (*fail)(cg_t *cg);
  /* `T.evaluate(value)`: sets *done when it generated the statement
   * (GPU: the WMMA calls); otherwise the value is generated for its
   * effects (CPU). */
  int (*evaluate)(cg_t *cg, const tir_expr_t *value, bool *done);
  /* The index to address buffer b with, given the lowered flat index idx
   * (GPU: a "warp" buffer's element [lane, j] is in lane `lane`'s own
   * registers, so its index loses the lane); NULL with an error (CPU: idx). */
  const tir_expr_t *(*buffer_index)(cg_t *cg, const tir_buffer_t *b, const tir_expr_t *idx);
  /* A call_extern: sets *done and returns the value when it generated the
   * call (GPU: the mma.sync calls, tir_ptx_op); NULL with *done is an error
   * (CPU: every call_extern is a C function). */
  LLVMValueRef (*extern_call)(cg_t *cg, const tir_expr_t *call, bool *done);
} cg_hooks_t;

struct cg {
  mlc_module_t *m;
  const mlc_target_t *target; /* what functions are generated for (the host
                                 CPU for GPU host code) */
  const cg_hooks_t *hooks;    /* NULL on CPU */
  void *gpu;                  /* GPU generator state (gpu_*.c) */
  LLVMValueRef gpu_device;    /* host code: the DLPack device_id (i32) */
  cg_values_t gpu_heap;       /* host code: live device allocations */
  LLVMContextRef ctx;
  LLVMModuleRef mod;
  LLVMBuilderRef b;
  const tir_func_t *f;
  mlc_arena_t *arena;        /* scratch TIR nodes built while generating */
  bool noalias;              /* "tir.noalias": buffer pointers do not alias */
  bool fast_math;
  int ntasks;                /* parallel loops outlined so far (for names) */

  /* The function being generated (kernel, parallel body or wrapper). */
  LLVMValueRef fn;
  LLVMBasicBlockRef allocas; /* entry block: allocas only, branch added last */
  cg_bindings_t vars;        /* scope stack, innermost last */
  cg_values_t heap;          /* live aligned_alloc results, innermost last */
  int parallel_depth;        /* > 0 inside an outlined parallel body */
  int index_depth;           /* > 0 while generating a buffer index */

  LLVMTypeRef t_void, t_i1, t_i8, t_i16, t_i32, t_i64, t_f16, t_f32, t_f64, t_ptr;
};

/* Sets up cg for generating f into module mod of m (types, builder, scratch
 * arena, the hooks of m's kind of code). cg_done releases it. */
void cg_setup(cg_t *cg, mlc_module_t *m, LLVMModuleRef mod, const tir_func_t *f);
void cg_done(cg_t *cg);

/* ---- llvm_func.c: scopes, functions, runtime, error exits ---- */

/* Binds var in the current scope. MLC_OK or MLC_ENOMEM. */
int cg_bind(cg_t *cg, const tir_var_t *var, LLVMValueRef value, int align);
/* The innermost binding of var, or NULL. */
const cg_binding_t *cg_lookup(const cg_t *cg, const tir_var_t *var);
/* Starts generating into fn: a fresh entry block for allocas and a first
 * code block, an empty scope. cg_fn_finish closes the entry block. The
 * caller saves and restores the state around nested functions. */
void cg_fn_begin(cg_t *cg, LLVMValueRef fn);
void cg_fn_finish(cg_t *cg);
/* An internal (or exported) function of type fnty with the attributes every
 * generated function carries (nounwind, target cpu/features, fast-math). */
LLVMValueRef cg_add_function(cg_t *cg, const char *name, LLVMTypeRef fnty, bool exported);
/* An alloca in the entry block. */
LLVMValueRef cg_entry_alloca(cg_t *cg, LLVMTypeRef t, int align, const char *name);
/* A call through a function declared in the module (type from the global). */
LLVMValueRef cg_call(cg_t *cg, LLVMValueRef fn, LLVMValueRef *args, int n, const char *name);
/* The declaration of a C function, added on first use. */
LLVMValueRef cg_extern_fn(cg_t *cg, const char *name, LLVMTypeRef ret, LLVMTypeRef *params,
                          int n, bool vararg);
/* Runtime entry points (runtime/runtime.h) and libc. */
LLVMValueRef cg_rt_error_fn(cg_t *cg);
LLVMValueRef cg_rt_parallel_for_fn(cg_t *cg);
/* A private constant string, as i8*. */
LLVMValueRef cg_cstr(cg_t *cg, const char *s);
/* Continues only when ok (i1) holds; otherwise frees the live heap
 * allocations, calls mlc_rt_error(fmt, args...) and returns -1. fmt is the
 * message with printf conversions for args. When fmt is NULL the error is
 * already set (a failed callee) and only the return happens. */
void cg_check(cg_t *cg, LLVMValueRef ok, const char *fmt, LLVMValueRef *args, int nargs);
/* The CPU failure exit: frees the live heap allocations, returns -1. */
void cg_fail_return(cg_t *cg);

/* ---- gpu_host.c: host code of GPU modules ---- */

extern const cg_hooks_t cg_gpu_host_hooks;
/* MLC_EUNSUPPORTED when host code (outside every thread-bound loop) would
 * touch buffer data, naming the outermost loop around the access. */
int cg_gpu_host_check(cg_t *cg);
/* "%" doubled, for names placed in a printf format. Arena string. */
const char *cg_fmt_escape(cg_t *cg, const char *s);
/* An intrinsic declaration by base name ("llvm.sqrt") and overload types;
 * *fnty receives its function type. NULL with an error if unknown. */
LLVMValueRef cg_intrinsic(cg_t *cg, const char *name, LLVMTypeRef *tys, int ntys,
                          LLVMTypeRef *fnty);
LLVMValueRef cg_call_intrinsic(cg_t *cg, const char *name, LLVMTypeRef *tys, int ntys,
                               LLVMValueRef *args, int nargs);

/* ---- llvm_types.c: dtypes, constants, casts ---- */

/* The LLVM type of a value of dtype t (NULL with an error if unsupported). */
LLVMTypeRef cg_type(cg_t *cg, tir_dtype_t t);
/* The type of t in memory: as cg_type, but bool is i8. */
LLVMTypeRef cg_mem_type(cg_t *cg, tir_dtype_t t);
/* Bytes of one scalar element of t in memory. */
int cg_elem_bytes(tir_dtype_t t);
LLVMValueRef cg_const_int(cg_t *cg, tir_dtype_t t, int64_t v);
LLVMValueRef cg_const_float(cg_t *cg, tir_dtype_t t, double v);
LLVMValueRef cg_i32(cg_t *cg, int64_t v);
LLVMValueRef cg_i64(cg_t *cg, int64_t v);
/* v (scalar) repeated in `lanes` lanes; v itself when lanes == 1. */
LLVMValueRef cg_splat(cg_t *cg, LLVMValueRef v, int lanes);
/* The constant vector <0, 1, ..., lanes-1> of type t's scalar. */
LLVMValueRef cg_iota(cg_t *cg, tir_dtype_t t, int lanes);
/* bfloat16 bits (i16 or vector) <-> float. */
LLVMValueRef cg_bf16_to_f32(cg_t *cg, LLVMValueRef bits, int lanes);
LLVMValueRef cg_f32_to_bf16(cg_t *cg, LLVMValueRef f, int lanes);
/* Converts v from dtype `from` to dtype `to` (same lanes): TIR Cast. */
LLVMValueRef cg_cast(cg_t *cg, LLVMValueRef v, tir_dtype_t from, tir_dtype_t to);
/* Values of a computing dtype: bfloat16 operands are computed in float32. */
LLVMValueRef cg_to_compute(cg_t *cg, LLVMValueRef v, tir_dtype_t t);
LLVMValueRef cg_from_compute(cg_t *cg, LLVMValueRef v, tir_dtype_t t);
/* An integer index value widened to i64 (or <n x i64>) for addressing. */
LLVMValueRef cg_index64(cg_t *cg, LLVMValueRef v, tir_dtype_t t);

/* ---- llvm_expr.c: expressions and buffer accesses ---- */

LLVMValueRef cg_expr(cg_t *cg, const tir_expr_t *e);
/* Loads and stores of buffer elements (indices as in the IR). */
LLVMValueRef cg_buffer_load(cg_t *cg, const tir_expr_t *load);
int cg_buffer_store(cg_t *cg, const tir_stmt_t *store);

/* ---- llvm_call.c ---- */

LLVMValueRef cg_call_expr(cg_t *cg, const tir_expr_t *e);
/* The fallback float math (LLVM intrinsics, libm lane by lane); y for pow.
 * On CPUs float32 exp/exp2/log/log2/tanh do not come here: they are inline
 * polynomials (llvm_vmath.h); GPU hooks call it for what they lack. */
LLVMValueRef cg_float_math_default(cg_t *cg, tir_op_t op, LLVMValueRef x, LLVMValueRef y);

/* ---- llvm_stmt.c ---- */

int cg_stmt(cg_t *cg, const tir_stmt_t *s);
/* A counted loop over [begin, end) (integers of one type): emits the
 * guard, runs body(cg, i, payload) for the body and adds the latch, with
 * `!llvm.loop !{self, !{hint}}` when hint is not NULL
 * ("llvm.loop.unroll.full"). */
typedef int (*cg_loop_body_fn)(cg_t *cg, LLVMValueRef iv, void *payload);
int cg_emit_loop(cg_t *cg, LLVMValueRef begin, LLVMValueRef end, const char *hint,
                 cg_loop_body_fn body, void *payload);
/* `for v in range(min, min + extent)` as a plain counted loop, whatever
 * the loop's kind. */
int cg_serial_for(cg_t *cg, const tir_stmt_t *s);
/* The size of buffer b in bytes: cg_const_bytes when its shape is
 * constant (-1 when symbolic or too large); cg_buffer_bytes as i64 computed at run time
 * (NULL with the error set). */
int64_t cg_const_bytes(const tir_buffer_t *b);
LLVMValueRef cg_buffer_bytes(cg_t *cg, const tir_buffer_t *b);
/* Binds the allocated buffer's data var to p for the body and generates it. */
int cg_with_buffer(cg_t *cg, const tir_stmt_t *s, LLVMValueRef p, int align);

/* ---- llvm_parallel.c ---- */

/* Outlines `for v in T.parallel(...)` into a task run by mlc_rt_parallel_for. */
int cg_parallel_for(cg_t *cg, const tir_stmt_t *loop);

/* ---- llvm_abi.c ---- */

/* The kernel's arguments, in order: buffer pointers, scalars, dimensions. */
typedef struct {
  int nptrs, nscalars, ndims;
  int *ptr_params;            /* parameter index of each pointer argument */
  int *scalar_params;         /* parameter index of each scalar argument */
  const tir_var_t **dims;     /* symbolic dimensions bound by the wrapper */
} cg_sig_t;

/* Adds `int32_t <name>(DLTensor *args, int32_t num_args)` checking the
 * arguments and calling kernel. */
int cg_abi_wrapper(cg_t *cg, const cg_sig_t *sig, LLVMValueRef kernel);

/* Sets the error (fmt takes one string) and returns NULL, for value builders. */
static inline LLVMValueRef fail_null(int code, const char *fmt, const char *arg) {
  mlc_error_set(code, fmt, arg);
  return NULL;
}

/* Lanes of an LLVM value: its vector size, 1 for scalars. */
static inline int lanes_of(LLVMValueRef v) {
  LLVMTypeRef t = LLVMTypeOf(v);
  return LLVMGetTypeKind(t) == LLVMVectorTypeKind ? (int)LLVMGetVectorSize(t) : 1;
}

/* The scalar type of an LLVM value: its element type for vectors. */
static inline LLVMTypeRef scalar_type_of(LLVMValueRef v) {
  LLVMTypeRef t = LLVMTypeOf(v);
  return LLVMGetTypeKind(t) == LLVMVectorTypeKind ? LLVMGetElementType(t) : t;
}

/* The floating-point constant c in the type (and lanes) of the float x. */
static inline LLVMValueRef cg_real_like(cg_t *cg, LLVMValueRef x, double c) {
  return cg_splat(cg, LLVMConstReal(scalar_type_of(x), c), lanes_of(x));
}

#endif /* MLC_LLVM_GEN_H */
