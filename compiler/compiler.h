/*
 * compiler.h - from a scheduled PrimFunc to machine code: the lowering
 * passes and their driver, LLVM code generation (x86-64; NVPTX and AMDGPU for
 * GPUs), in-process JIT for measurement, emission of object files, shared
 * libraries, LLVM IR, assembly and GPU device images, and the C ABI of
 * generated functions.
 *
 * Pipeline: scheduled TIR (blocks) --lowering passes--> lowered TIR (no
 * blocks, flat buffers, vector ops) --codegen--> LLVM module --> JIT or file.
 * Lowered TIR is still TIR: the reference interpreter runs it, which is how
 * every pass is tested.
 */
#ifndef MLC_COMPILER_H
#define MLC_COMPILER_H

#include <dlpack/dlpack.h>

#include "database/database.h"
#include "schedule/schedule.h"
#include "tir/tir.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* Lowering                                                                  */
/* ------------------------------------------------------------------------ */

/* The passes in the order the driver runs them. Each is one function in one
 * file, compiler/lower/<file>.c, with a header of a few lines.
 *      enum                 name (for --dump-after)        function */
#define MLC_LOWER_PASSES(X)                                                   \
  X(CROSS_THREAD_REDUCTION, "lower-cross-thread-reduction", mlc_pass_lower_cross_thread_reduction) \
  X(LOWER_INIT_BLOCK,    "lower-init-block",         mlc_pass_lower_init_block)  \
  X(PLAN_ALLOCATIONS,    "plan-allocations",         mlc_pass_plan_allocations)  \
  X(REMOVE_BLOCKS,       "remove-blocks",            mlc_pass_remove_blocks)     \
  X(COMPACT_BUFFERS,     "compact-buffers",          mlc_pass_compact_buffers)   \
  X(LOWER_TENSOR_CORE,   "lower-tensor-core",        mlc_pass_lower_tensor_core) \
  X(FLATTEN_BUFFERS,     "flatten-buffers",          mlc_pass_flatten_buffers)   \
  X(VECTORIZE,           "vectorize",                mlc_pass_vectorize)         \
  X(UNROLL,              "unroll",                   mlc_pass_unroll)            \
  X(SIMPLIFY,            "simplify",                 mlc_pass_simplify)          \
  X(STORAGE_REWRITE,     "storage-rewrite",          mlc_pass_storage_rewrite)   \
  X(GPU_SYNC,            "gpu-sync",                 mlc_pass_gpu_sync)

typedef enum {
#define MLC_ENUM_(e, name, fn) MLC_PASS_##e,
  MLC_LOWER_PASSES(MLC_ENUM_)
#undef MLC_ENUM_
  MLC_PASS_COUNT
} mlc_pass_id_t;

/* A pass rewrites f->body (and buffer_map/params where it must) in place,
 * allocating new nodes in f->arena. `notes` (may be NULL) collects one line
 * per thing worth telling a user (e.g. "vectorize: loop j_1 kept scalar:
 * its extent 7 is not a constant power of two..."). Returns MLC_OK or an
 * error with mlc_error_set. */
typedef int (*mlc_pass_fn)(tir_func_t *f, const mlc_target_t *target, mlc_strbuf_t *notes);

const char *mlc_pass_name(mlc_pass_id_t id);
mlc_pass_fn mlc_pass_fn_of(mlc_pass_id_t id);
/* MLC_OK and *out, or MLC_ENOTFOUND. */
int mlc_pass_lookup(mlc_pass_id_t *out, const char *name);

typedef struct {
  /* Called after a pass when dump_after is its name or "all". */
  const char *dump_after;
  void (*dump)(const char *pass, const tir_func_t *f, void *payload);
  void *payload;
  mlc_strbuf_t *notes; /* may be NULL */
  /* The unroll pass marks the loops it would copy as unrolled loops (kind
   * unroll, with pragma_unroll_explicit = 1 left on those whose body it
   * would have copied, so the two kinds of unrolling stay apart) instead of
   * copying their bodies: the program as MetaSchedule extracts features
   * from it, several times cheaper to lower and to read than the copies.
   * For the search's features and program keys; code generation needs the
   * copies (default false). */
  bool keep_unrolled_loops;
} mlc_lower_options_t;

/* Lowers a copy of `scheduled` (the caller keeps it): *out owns its arena. */
int mlc_lower(tir_func_t **out, const tir_func_t *scheduled, const mlc_target_t *target,
              const mlc_lower_options_t *opts);

/* Lowered TIR, the contract between lowering and code generation:
 * - no BLOCK_REALIZE; predicates became IF, init blocks IF on the reduction
 *   iterators, block allocations ALLOCATE statements placed at the lowest
 *   common ancestor of their uses, sized to the region used;
 * - every buffer access is 1-D: parameter buffers keep their params (their
 *   data var is the base pointer) but are accessed through flat buffers that
 *   share the data var; strides and elem_offset are folded into the index;
 * - loops marked vectorized became vector operations: loads/stores whose index
 *   is a RAMP (stride 1 = contiguous), BROADCAST operands, vector arithmetic
 *   (dtype lanes > 1); a loop that cannot be vectorized stays a serial loop
 *   and a note says why;
 * - loops marked unrolled with a constant extent are replicated; parallel
 *   loops remain FOR with kind PARALLEL (the code generator outlines them);
 *   thread-bound loops remain for the GPU code generators;
 * - the function is simplified (tir_simplify_stmt);
 * - GPU targets only (gpu-sync; a no-op for llvm): inside kernels, an
 *   `T.evaluate(T.tvm_storage_sync("shared"))` barrier wherever a thread may
 *   read shared memory another thread wrote, or overwrite shared memory
 *   others read, since the last barrier; never inside a branch or loop that
 *   depends on threadIdx (compiler/lower/gpu_sync.c);
 * - GPU targets only (lower-cross-thread-reduction): a reduction over a
 *   threadIdx.x loop is two thread loops: each thread's partial value into
 *   its slot of a MLC_CROSS_THREAD_SCOPE buffer, then
 *   `with T.attr(red_buf.data, MLC_CROSS_THREAD_ATTR, "sum"|"max"|"min")`
 *   around the serial meaning of the allreduce (`red[0] = init; for t:
 *   red[0] = red[0] op red_buf[t]`), which code generation replaces by warp
 *   shuffles; then one thread stores the result
 *   (compiler/lower/cross_thread_reduce.c);
 * - WMMA tensor-core calls (`T.call_extern("handle", "tvm_fill_fragment" |
 *   "tvm_load_matrix_sync" | "tvm_mma_sync" | "tvm_store_matrix_sync",
 *   ...)`, the CUDA tensor intrinsics' implementations) keep their
 *   operands as loads naming the first element of a 16x16 tile; fragment
 *   buffers (scopes wmma.matrix_a/matrix_b/accumulator) are laid out tile by
 *   tile, so that tile t of a flattened fragment buffer is elements
 *   [256 t, 256 t + 256) (lower-tensor-core); compact-buffers counts a
 *   tile operand as the whole tile and keeps a memory operand's stride
 *   argument equal to the compacted buffer's row stride; gpu-sync counts
 *   tvm_store_matrix_sync as a write of its memory operand. */
#define MLC_CROSS_THREAD_SCOPE "local.cross_thread"
#define MLC_CROSS_THREAD_ATTR "mlc.cross_thread_reduce"

/* ------------------------------------------------------------------------ */
/* Code generation                                                           */
/* ------------------------------------------------------------------------ */

/* A compiled module: an LLVM module for a target, holding one exported
 * function per lowered PrimFunc (named after the function), each with the
 * DLPack ABI below. Owns its LLVM context. */
typedef struct mlc_module mlc_module_t;

/* Generates code for n lowered functions (mlc_lower output). The module is
 * verified (LLVMVerifyModule) and optimised with the O3 pipeline for the
 * target's CPU and features. Floating point is exact unless the target says
 * -fast-math. MLC_EUNSUPPORTED with a detail for constructs a backend lacks. */
int mlc_codegen(mlc_module_t **out, tir_func_t *const *lowered, int n, const mlc_target_t *target);

/* GPU targets (cuda, rocm; compiler/codegen/gpu_*.c, docs/compiler/gpu.md).
 * mlc_codegen splits each lowered function into host and device code:
 * - every loop nest bound to blockIdx/threadIdx (the outermost thread-bound
 *   loop and everything inside it) becomes one kernel, "<name>_kernel<k>",
 *   of the device module: NVPTX for `cuda -arch=sm_XX` (PTX for that arch),
 *   AMDGPU for `rocm -mcpu=gfxXXX` (an HSACO code object, linked with
 *   ld.lld). Its grid and block sizes are the extents of the loops bound to
 *   blockIdx.x/y/z and threadIdx.x/y/z (vthread loops stay serial loops in
 *   the kernel); its parameters are the buffers' data pointers and the
 *   scalars the kernel uses. Inside: "shared" allocations in shared memory,
 *   "local" ones in registers/private memory, barriers where a thread may
 *   read shared memory another thread wrote (a lowering pass inserts them),
 *   vector loads and stores, reductions over a threadIdx-bound loop with
 *   warp shuffles, WMMA tensor-core calls as llvm.nvvm.wmma.m16n16k16.*
 *   (NVPTX only, float16 x float16 -> float32; run by whole warps: outside
 *   threadIdx.x loops, threadIdx.x extent a multiple of 32; MLC_EUNSUPPORTED
 *   on AMDGPU);
 * - the host function keeps the DLPack ABI above (device type kDLCUDA or
 *   kDLROCM, data pointers are device pointers, all arguments on one
 *   device), evaluates each kernel's launch sizes and calls
 *   mlc_rt_gpu_launch (runtime/runtime.h) with the device image embedded in
 *   the host code. Host code never touches buffer data: a loop that is not
 *   bound to a thread and contains a buffer access outside any kernel is
 *   MLC_EUNSUPPORTED ("gmm: loop i is not bound to a GPU thread; bind the
 *   outer loops of every block (sch.bind) or use the default schedule").
 * The JIT runs the host code in-process (it launches through the runtime);
 * emitting MLC_EMIT_DEVICE writes the device image. */
/* Lower + codegen of scheduled functions (their names are the symbols). */
int mlc_build(mlc_module_t **out, tir_func_t *const *scheduled, int n, const mlc_target_t *target,
              const mlc_lower_options_t *opts);
void mlc_module_free(mlc_module_t *m); /* NULL is fine */

typedef enum { MLC_EMIT_OBJ, MLC_EMIT_ASM, MLC_EMIT_LL, MLC_EMIT_SO, MLC_EMIT_HEADER, MLC_EMIT_DEVICE } mlc_emit_kind_t;
/* Writes the module: an object file, assembly, textual LLVM IR, a shared
 * library (the object linked with the mlc runtime, `cc -shared`), or a C
 * header with one prototype per function. For GPU targets OBJ, SO and
 * HEADER are the host side (with the device image inside), ASM and LL the
 * device side (PTX / AMDGPU assembly, the device LLVM IR), and DEVICE the
 * device image alone (.ptx text for cuda, .hsaco for rocm); DEVICE on a CPU
 * module is MLC_EINVAL. MLC_EIO on failure. Shared libraries link the
 * runtime archive $MLC_RUNTIME_LIB, else the build tree's, else the
 * installed <dir of the program>/../lib/mlc-tune/libmlc_runtime.a (MLC_EIO
 * naming each path tried when none is readable). */
int mlc_module_emit(const mlc_module_t *m, mlc_emit_kind_t kind, const char *path);
/* The emitted text (LL/ASM/HEADER) as a string (mlc_free). */
char *mlc_module_text(const mlc_module_t *m, mlc_emit_kind_t kind);

/* In-process JIT (LLVM ORC LLJIT). The module is consumed, also when the
 * load fails: never use or free m after the call. */
typedef struct mlc_jit mlc_jit_t;
int mlc_jit_load(mlc_jit_t **out, mlc_module_t *m);
/* Loads an object file that mlc_module_emit(MLC_EMIT_OBJ) wrote for this
 * host (here or in another process) into a new JIT, with the same runtime
 * symbols and the same eager resolution as mlc_jit_load: its exported
 * functions are the object's defined global functions, all looked up now.
 * The file is read and may be removed after the call. *out (free with
 * mlc_jit_free) on MLC_OK, NULL otherwise. Errors: MLC_EINVAL for a NULL
 * argument or a file that is not a 64-bit ELF relocatable object of this
 * byte order (or whose symbol table is malformed), MLC_EIO when it cannot
 * be read, MLC_EINTERNAL with LLVM's message when it cannot be linked
 * (e.g. a symbol that resolves nowhere), MLC_EUNSUPPORTED when LLVM has no
 * backend for the host, MLC_ENOMEM. */
int mlc_jit_load_object(mlc_jit_t **out, const char *path);
/* The address of an exported function (NULL when absent). */
void *mlc_jit_lookup(mlc_jit_t *jit, const char *name);
/* Frees the JIT and its code; for GPU host code first forgets the runtime's
 * modules loaded from its device image (mlc_rt_gpu_unload_image). NULL is
 * fine. */
void mlc_jit_free(mlc_jit_t *jit);

/* ------------------------------------------------------------------------ */
/* The C ABI of generated functions                                          */
/* ------------------------------------------------------------------------ */

/* Every generated CPU function is
 *     int32_t name(DLTensor *args, int32_t num_args);
 * (DLTensor from <dlpack/dlpack.h>), one DLTensor per parameter in order; a
 * scalar parameter is a 0-d DLTensor whose data points at the value. The
 * function checks num_args, each tensor's ndim, dtype, shape (symbolic
 * dimensions bind to the first tensor that has them and must agree after),
 * strides (NULL or compact), device (CPU) and the data pointer's alignment
 * when the buffer declares one; on a mismatch it returns nonzero and the
 * message is readable through mlc_last_error() (thread-local), e.g.
 * "gmm: argument 1 (B): shape[0] is 512, expected 1024". */
typedef int32_t (*mlc_packed_fn_t)(DLTensor *args, int32_t num_args);

/* The runtime the generated code calls (compiled into every shared library
 * the compiler emits, and registered with the JIT): the last error, and the
 * thread pool that runs parallel loops (pthreads, sized from -num-cores,
 * threads kept alive between calls). */
const char *mlc_last_error(void);


/* ------------------------------------------------------------------------ */
/* Compiling a module with the database (mlc-compile)                       */
/* ------------------------------------------------------------------------ */

/* The default schedule of a function nobody tuned (DESIGN.md, Compiler and
 * ABI), for a CPU (llvm) target. Every block heading a root-level loop
 * nest of its own (a perfect chain of loops down to the block), in program
 * order:
 *   - matmul-like blocks (one or more reduction loops and at least two
 *     spatial loops): the two innermost spatial loops are tiled (a register
 *     tile of 4 or 2 rows, unrolled, by a vector length of columns), the
 *     reduction loops placed between the outer loops and the tile (the
 *     order of each sum's terms is unchanged), the column loop vectorized;
 *   - element-wise blocks (spatial loops only): the innermost loop split by
 *     a vector length and the inner part vectorized;
 *   - other reductions (one spatial loop: row sums, matrix-vector) keep
 *     their loop order, with no vector loop (lanes across rows would be
 *     gathers, lanes across the reduction would reorder the sum);
 *   - the leading spatial loops of the nest (above the reduction and the
 *     tile) fused and parallelized when they have at least as many
 *     iterations as the target has cores (and it has two or more);
 *   - a reduction's init split off at its first reduction loop
 *     (decompose_reduction), its innermost loop vectorized.
 * A vector length is the target's SIMD lanes for the block's output dtype
 * (16 float32 lanes with AVX-512, 8 with AVX2), or half or a quarter of it
 * (at least 4), the first that divides the loop's extent; a loop none
 * divides is not vectorized. Blocks in other places (nested in blocks,
 * sharing loops with other blocks) and loops with non-constant extents are
 * left as written. A step that does not apply is skipped (a debug log line
 * says why; the schedule stays valid and means what the function means);
 * the result always lowers and builds. `sch` is a fresh schedule of the
 * function (sch_create); primitives are recorded in its trace as usual.
 * For GPU targets (cuda, rocm) instead: each such block's spatial loops
 * moved above its reduction loops; the innermost spatial loops whose
 * extents multiply to at most the target's max_threads_per_block fused and
 * bound to threadIdx.x, the outer ones fused and bound to blockIdx.x (an
 * innermost loop longer than that is first split by a divisor); whole
 * loops are fused so the bindings stay affine. Its reduction loops stay
 * serial inside the thread. A block with no spatial loop runs on one
 * thread (a unit loop bound to blockIdx.x; the cross-thread reduction of
 * DESIGN.md is not generated yet).
 * MLC_OK, or MLC_EINVAL for a NULL argument, MLC_ENOMEM. */
int mlc_default_schedule(sch_t *sch, const mlc_target_t *target);

/* What the compiler did with one function of the module. */
typedef enum {
  MLC_COMPILE_TUNED,        /* a database record's trace was applied */
  MLC_COMPILE_DEFAULT,      /* default schedule: no usable record */
} mlc_compile_how_t;

typedef struct {
  const char *name;         /* the function's name (its exported symbol) */
  char key[17];             /* its workload key, 16 hex digits */
  mlc_compile_how_t how;
  /* MLC_COMPILE_TUNED: the record used (strings in the result's arena). */
  char record_id[17];
  double median_secs;       /* the record's median run time */
  int trace_len;            /* instructions in its trace */
  int64_t created_at_us;    /* when it was measured */
  const char *device_key;   /* on which device ("llvm-sapphirerapids") */
  const char *worker_id;
  /* MLC_COMPILE_DEFAULT: why (never NULL): "no database", "no record for
   * this target" (with what the database has instead, if anything: "(only
   * 3 failed trials; records for other targets: llvm -mcpu=...)"),
   * "record 1a2b... not applied: its stored workload differs structurally
   * (...)", "record ... not applied: its trace does not replay (...)",
   * "record ... not applied: it does not lower (...)", "only the default
   * schedule was measured (record ..., 0.215 ms): no tuning trial
   * succeeded" (mlc-tune's baseline record is the only successful one: the
   * function was never tuned, and --require-tuned says so). */
  const char *why_default;
  /* The function as compiled: scheduled (the record's trace replayed, or
   * the default schedule), not yet lowered, named after the module's
   * function. Owned by the result; NULL when compilation stopped before
   * this function was scheduled. */
  tir_func_t *scheduled;
} mlc_compile_func_t;

typedef struct {
  db_t *db;                 /* NULL: compile with default schedules only */
  bool require_tuned;       /* a function without a usable record is an error */
  const mlc_lower_options_t *lower; /* may be NULL */
  bool quiet;               /* no warning per default-scheduled function (for
                               callers that report out->funcs themselves) */
} mlc_compile_options_t;

typedef struct {
  mlc_arena_t *arena;       /* owns funcs and their strings */
  int nfuncs;               /* in module order */
  mlc_compile_func_t *funcs;
  mlc_module_t *module;     /* the built module (one exported function per
                               PrimFunc, named after it); NULL on failure */
} mlc_compile_result_t;
void mlc_compile_result_free(mlc_compile_result_t *r); /* zeroes it; NULL fine */

/* Compiles every PrimFunc of m for target (DESIGN.md, Compiler and ABI): for
 * each, looks up db_best(key, canonical target); when a record exists,
 * loads the record's own stored workload (db_workload), confirms it is
 * structurally equal to the function (tir_func_equal) and replays the
 * record's trace on that stored workload with its decisions (as the worker
 * that measured it did), the result named after the module's function;
 * otherwise, or when that fails, the default schedule. Then lowers each
 * (a replayed function that does not lower with this compiler falls back
 * to the default schedule too) and generates one module, exactly as
 * mlc_build would. Records of other targets are never used (the query is
 * by canonical target). Unless opts->quiet, each function compiled with
 * the default schedule is logged as a warning (name, key, why). opts may
 * be NULL (no database).
 * On MLC_OK *out is complete. Errors (mlc_error_last says which function):
 * MLC_ENOTFOUND with the list of untuned functions ("name (key): why",
 * separated by "; ") when opts->require_tuned and some function has no
 * usable record (out->funcs still describes every function; out->module is
 * NULL); MLC_EIO when the database cannot be read; the status of lowering
 * or code generation otherwise; MLC_EINVAL for NULL arguments. After an
 * error other than MLC_ENOTFOUND, out->nfuncs counts the functions handled
 * before it. Free *out with mlc_compile_result_free in every case. */
int mlc_compile_module(mlc_compile_result_t *out, const tir_module_t *m, const mlc_target_t *target,
                       const mlc_compile_options_t *opts);

#ifdef __cplusplus
}
#endif
#endif /* MLC_COMPILER_H */
