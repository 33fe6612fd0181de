/*
 * test_module.c - the module machinery of the code generator: target
 * machines for the host and for explicit CPUs, verification, emission of
 * object code, assembly, LLVM IR, shared libraries and headers, the JIT, and
 * their error paths.
 *
 * The module under test is written here with the LLVM C API (a vector add,
 * serial and through the runtime's thread pool, with the DLPack ABI), so the
 * machinery is tested apart from IR generation; the header entries come from
 * parsed TIR.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <llvm-c/Core.h>
#include <llvm-c/TargetMachine.h>

#include "compiler/codegen/module_priv.h"

enum { N = 1000 };

/* ------------------------------------------------------------------------ */
/* A module written with the LLVM C API                                      */
/* ------------------------------------------------------------------------ */

typedef struct {
  LLVMContextRef ctx;
  LLVMModuleRef mod;
  LLVMBuilderRef b;
  LLVMTypeRef i8, i32, i64, f32, p8, pf32, pi64, dlt, pdlt;
  LLVMTypeRef rt_error_ty, task_ty, parallel_for_ty;
  LLVMValueRef rt_error, parallel_for;
} irb_t;

static void irb_init(irb_t *ir, mlc_module_t *m) {
  ir->ctx = m->ctx;
  ir->mod = m->mod;
  ir->b = LLVMCreateBuilderInContext(ir->ctx);
  ir->i8 = LLVMInt8TypeInContext(ir->ctx);
  ir->i32 = LLVMInt32TypeInContext(ir->ctx);
  ir->i64 = LLVMInt64TypeInContext(ir->ctx);
  ir->f32 = LLVMFloatTypeInContext(ir->ctx);
  ir->p8 = LLVMPointerType(ir->i8, 0);
  ir->pf32 = LLVMPointerType(ir->f32, 0);
  ir->pi64 = LLVMPointerType(ir->i64, 0);
  /* DLTensor: data, device {type, id}, ndim, dtype {code, bits, lanes},
   * shape, strides, byte_offset. */
  LLVMTypeRef dev[] = {ir->i32, ir->i32};
  LLVMTypeRef dt[] = {ir->i8, ir->i8, LLVMInt16TypeInContext(ir->ctx)};
  LLVMTypeRef fields[] = {ir->p8, LLVMStructTypeInContext(ir->ctx, dev, 2, 0), ir->i32,
                          LLVMStructTypeInContext(ir->ctx, dt, 3, 0), ir->pi64, ir->pi64, ir->i64};
  ir->dlt = LLVMStructTypeInContext(ir->ctx, fields, 7, 0);
  ir->pdlt = LLVMPointerType(ir->dlt, 0);
  LLVMTypeRef err_params[] = {ir->p8};
  ir->rt_error_ty = LLVMFunctionType(ir->i32, err_params, 1, 1);
  ir->rt_error = LLVMAddFunction(ir->mod, "mlc_rt_error", ir->rt_error_ty);
  LLVMTypeRef task_params[] = {ir->i64, ir->i64, ir->p8};
  ir->task_ty = LLVMFunctionType(ir->i32, task_params, 3, 0);
  LLVMTypeRef pf_params[] = {LLVMPointerType(ir->task_ty, 0), ir->p8, ir->i64, ir->i32};
  ir->parallel_for_ty = LLVMFunctionType(ir->i32, pf_params, 4, 0);
  ir->parallel_for = LLVMAddFunction(ir->mod, "mlc_rt_parallel_for", ir->parallel_for_ty);
}

/* args[k].data as float*. */
static LLVMValueRef tensor_data(irb_t *ir, LLVMValueRef args, int k) {
  LLVMValueRef idx = LLVMConstInt(ir->i64, (unsigned long long)k, 0);
  LLVMValueRef t = LLVMBuildGEP2(ir->b, ir->dlt, args, &idx, 1, "t");
  LLVMValueRef pdata = LLVMBuildStructGEP2(ir->b, ir->dlt, t, 0, "pdata");
  LLVMValueRef data = LLVMBuildLoad2(ir->b, ir->p8, pdata, "data");
  return LLVMBuildBitCast(ir->b, data, ir->pf32, "f");
}

/* args[0].shape[0]. */
static LLVMValueRef tensor_dim0(irb_t *ir, LLVMValueRef args) {
  LLVMValueRef pshape = LLVMBuildStructGEP2(ir->b, ir->dlt, args, 4, "pshape");
  LLVMValueRef shape = LLVMBuildLoad2(ir->b, ir->pi64, pshape, "shape");
  return LLVMBuildLoad2(ir->b, ir->i64, shape, "n");
}

/* for i in [begin, end): c[i] = a[i] + b[i], with args a DLTensor*. */
static void emit_add_loop(irb_t *ir, LLVMValueRef fn, LLVMValueRef args, LLVMValueRef begin,
                          LLVMValueRef end) {
  LLVMValueRef a = tensor_data(ir, args, 0), b = tensor_data(ir, args, 1), c = tensor_data(ir, args, 2);
  LLVMBasicBlockRef pre = LLVMGetInsertBlock(ir->b);
  LLVMBasicBlockRef head = LLVMAppendBasicBlockInContext(ir->ctx, fn, "head");
  LLVMBasicBlockRef body = LLVMAppendBasicBlockInContext(ir->ctx, fn, "body");
  LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(ir->ctx, fn, "done");
  LLVMBuildBr(ir->b, head);
  LLVMPositionBuilderAtEnd(ir->b, head);
  LLVMValueRef i = LLVMBuildPhi(ir->b, ir->i64, "i");
  LLVMBuildCondBr(ir->b, LLVMBuildICmp(ir->b, LLVMIntSLT, i, end, "more"), body, done);
  LLVMPositionBuilderAtEnd(ir->b, body);
  LLVMValueRef pa = LLVMBuildGEP2(ir->b, ir->f32, a, &i, 1, "pa");
  LLVMValueRef pb = LLVMBuildGEP2(ir->b, ir->f32, b, &i, 1, "pb");
  LLVMValueRef pc = LLVMBuildGEP2(ir->b, ir->f32, c, &i, 1, "pc");
  LLVMValueRef sum = LLVMBuildFAdd(ir->b, LLVMBuildLoad2(ir->b, ir->f32, pa, "x"),
                                   LLVMBuildLoad2(ir->b, ir->f32, pb, "y"), "sum");
  LLVMBuildStore(ir->b, sum, pc);
  LLVMValueRef next = LLVMBuildAdd(ir->b, i, LLVMConstInt(ir->i64, 1, 0), "next");
  LLVMBuildBr(ir->b, head);
  LLVMValueRef in_vals[] = {begin, next};
  LLVMBasicBlockRef in_blocks[] = {pre, body};
  LLVMAddIncoming(i, in_vals, in_blocks, 2);
  LLVMPositionBuilderAtEnd(ir->b, done);
}

/* Exported `int32_t name(DLTensor *args, int32_t num_args)` that checks
 * num_args == 3, then either runs the loop or hands it to the pool. */
static LLVMValueRef emit_entry(irb_t *ir, const char *name, LLVMValueRef task) {
  LLVMTypeRef params[] = {ir->pdlt, ir->i32};
  LLVMValueRef fn = LLVMAddFunction(ir->mod, name, LLVMFunctionType(ir->i32, params, 2, 0));
  LLVMValueRef args = LLVMGetParam(fn, 0), nargs = LLVMGetParam(fn, 1);
  LLVMBasicBlockRef entry = LLVMAppendBasicBlockInContext(ir->ctx, fn, "entry");
  LLVMBasicBlockRef bad = LLVMAppendBasicBlockInContext(ir->ctx, fn, "bad");
  LLVMBasicBlockRef ok = LLVMAppendBasicBlockInContext(ir->ctx, fn, "ok");
  LLVMPositionBuilderAtEnd(ir->b, entry);
  LLVMBuildCondBr(ir->b, LLVMBuildICmp(ir->b, LLVMIntEQ, nargs, LLVMConstInt(ir->i32, 3, 0), "ok"),
                  ok, bad);
  LLVMPositionBuilderAtEnd(ir->b, bad);
  char fmt[64];
  snprintf(fmt, sizeof fmt, "%s: expected 3 arguments, got %%d", name);
  LLVMValueRef eargs[] = {LLVMBuildGlobalStringPtr(ir->b, fmt, "fmt"), nargs};
  LLVMBuildRet(ir->b, LLVMBuildCall2(ir->b, ir->rt_error_ty, ir->rt_error, eargs, 2, "err"));
  LLVMPositionBuilderAtEnd(ir->b, ok);
  LLVMValueRef n = tensor_dim0(ir, args);
  if (!task) {
    emit_add_loop(ir, fn, args, LLVMConstInt(ir->i64, 0, 0), n);
    LLVMBuildRet(ir->b, LLVMConstInt(ir->i32, 0, 0));
  } else {
    LLVMValueRef pargs[] = {task, LLVMBuildBitCast(ir->b, args, ir->p8, "closure"), n,
                            LLVMConstInt(ir->i32, 0, 0)};
    LLVMBuildRet(ir->b, LLVMBuildCall2(ir->b, ir->parallel_for_ty, ir->parallel_for, pargs, 4, "rc"));
  }
  return fn;
}

/* internal i32 @vadd_task(i64 begin, i64 end, i8* args) */
static LLVMValueRef emit_task(irb_t *ir) {
  LLVMValueRef fn = LLVMAddFunction(ir->mod, "vadd_task", ir->task_ty);
  LLVMSetLinkage(fn, LLVMInternalLinkage);
  LLVMPositionBuilderAtEnd(ir->b, LLVMAppendBasicBlockInContext(ir->ctx, fn, "entry"));
  LLVMValueRef args = LLVMBuildBitCast(ir->b, LLVMGetParam(fn, 2), ir->pdlt, "args");
  emit_add_loop(ir, fn, args, LLVMGetParam(fn, 0), LLVMGetParam(fn, 1));
  LLVMBuildRet(ir->b, LLVMConstInt(ir->i32, 0, 0));
  return fn;
}

static void set_names(mlc_module_t *m, const char *const *names, int n) {
  m->func_names = mlc_calloc((size_t)n, sizeof *m->func_names);
  m->func_protos = mlc_calloc((size_t)n, sizeof *m->func_protos);
  for (int i = 0; i < n; i++) {
    char proto[128];
    snprintf(proto, sizeof proto, "int32_t %s(DLTensor *args, int32_t num_args);\n", names[i]);
    m->func_names[i] = mlc_strdup(names[i]);
    m->func_protos[i] = mlc_strdup(proto);
  }
  m->nfuncs = n;
}

/* A module for `target` holding vadd (serial) and vadd_par (thread pool),
 * verified and optimised. */
static mlc_module_t *vadd_module(const char *target_str) {
  mlc_target_t target;
  assert_int_equal(mlc_target_parse(&target, target_str), MLC_OK);
  mlc_module_t *m = mlc_calloc(1, sizeof *m);
  assert_int_equal(cg_module_init(m, &target), MLC_OK);
  irb_t ir;
  irb_init(&ir, m);
  emit_entry(&ir, "vadd", NULL);
  emit_entry(&ir, "vadd_par", emit_task(&ir));
  LLVMDisposeBuilder(ir.b);
  static const char *const names[] = {"vadd", "vadd_par"};
  set_names(m, names, 2);
  assert_int_equal(cg_module_optimize(m), MLC_OK);
  return m;
}

/* ------------------------------------------------------------------------ */
/* Calling through the ABI                                                   */
/* ------------------------------------------------------------------------ */

typedef struct {
  float a[N], b[N], c[N];
  int64_t shape[1];
  DLTensor t[3];
} vadd_args_t;

static void vadd_args_init(vadd_args_t *v) {
  v->shape[0] = N;
  float *data[] = {v->a, v->b, v->c};
  for (int i = 0; i < N; i++) {
    v->a[i] = (float)i;
    v->b[i] = 0.5f * (float)i;
    v->c[i] = -1.0f;
  }
  for (int k = 0; k < 3; k++) {
    DLTensor t = {.data = data[k], .device = {kDLCPU, 0}, .ndim = 1,
                  .dtype = {kDLFloat, 32, 1}, .shape = v->shape};
    v->t[k] = t;
  }
}

static void check_vadd(mlc_packed_fn_t fn, const char *(*last_error)(void), const char *name) {
  vadd_args_t *v = calloc(1, sizeof *v);
  vadd_args_init(v);
  assert_int_equal(fn(v->t, 3), 0);
  for (int i = 0; i < N; i++) assert_true(v->c[i] == 1.5f * (float)i);
  assert_int_not_equal(fn(v->t, 2), 0);
  char want[64];
  snprintf(want, sizeof want, "%s: expected 3 arguments, got 2", name);
  assert_string_equal(last_error(), want);
  free(v);
}

/* ------------------------------------------------------------------------ */
/* Scratch directory                                                         */
/* ------------------------------------------------------------------------ */

static char scratch[64];

static int make_scratch(void **state) {
  snprintf(scratch, sizeof scratch, "/tmp/mlc-test-module-XXXXXX");
  return mkdtemp(scratch) ? 0 : -1;
}

static int remove_scratch(void **state) {
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", scratch);
  return system(cmd) == 0 ? 0 : -1;
}

static const char *scratch_path(const char *name) {
  static char path[4][160];
  static int next;
  char *p = path[next++ % 4];
  snprintf(p, sizeof path[0], "%s/%s", scratch, name);
  return p;
}

/* Whether one line of text holds both a and b (an instruction and a register). */
static bool has_line_with(const char *text, const char *a, const char *b) {
  for (const char *line = text; line && *line;) {
    const char *end = strchr(line, '\n');
    size_t len = end ? (size_t)(end - line) : strlen(line);
    const char *pa = strstr(line, a), *pb = strstr(line, b);
    if (pa && pb && (size_t)(pa - line) < len && (size_t)(pb - line) < len) return true;
    line = end ? end + 1 : NULL;
  }
  return false;
}

static char *read_text(const char *path) {
  char *text = NULL;
  size_t len = 0;
  assert_int_equal(mlc_read_file(&text, &len, path), MLC_OK);
  return text;
}

/* ------------------------------------------------------------------------ */
/* Target machines                                                           */
/* ------------------------------------------------------------------------ */

static void test_host_target_gets_normalised_triple_cpu_and_features(void **state) {
  mlc_target_t host;
  mlc_target_host(&host);
  mlc_module_t *m = mlc_calloc(1, sizeof *m);
  assert_int_equal(cg_module_init(m, &host), MLC_OK);
  assert_string_equal(LLVMGetTarget(m->mod), "x86_64-pc-linux-gnu");
  assert_true(strlen(LLVMGetDataLayoutStr(m->mod)) > 0);
  char *cpu = LLVMGetTargetMachineCPU(m->tm), *features = LLVMGetTargetMachineFeatureString(m->tm);
  assert_string_equal(cpu, host.mcpu);
  assert_string_equal(features, host.mattr);
  LLVMDisposeMessage(cpu);
  LLVMDisposeMessage(features);
  mlc_module_free(m);
}

static void test_explicit_cpu_sets_the_target_machine_features(void **state) {
  mlc_module_t *m = vadd_module("llvm -mcpu=skylake-avx512");
  char *cpu = LLVMGetTargetMachineCPU(m->tm), *features = LLVMGetTargetMachineFeatureString(m->tm);
  assert_string_equal(cpu, "skylake-avx512");
  assert_non_null(strstr(features, "+avx512f"));
  LLVMDisposeMessage(cpu);
  LLVMDisposeMessage(features);
  /* The loop is auto-vectorised to 512-bit registers. */
  char *s = mlc_module_text(m, MLC_EMIT_ASM);
  assert_non_null(s);
  assert_true(has_line_with(s, "vaddps", "%zmm"));
  mlc_free(s);
  mlc_module_free(m);
}

static void test_generic_cpu_gets_no_avx(void **state) {
  mlc_module_t *m = vadd_module("llvm -mcpu=x86-64");
  char *s = mlc_module_text(m, MLC_EMIT_ASM);
  assert_non_null(s);
  assert_non_null(strstr(s, "addps"));
  assert_null(strstr(s, "ymm"));
  assert_null(strstr(s, "zmm"));
  mlc_free(s);
  mlc_module_free(m);
}

static void test_gpu_targets_get_a_host_and_a_device_module(void **state) {
  mlc_target_t t;
  assert_int_equal(mlc_target_parse(&t, "cuda -arch=sm_80"), MLC_OK);
  mlc_module_t *m = mlc_calloc(1, sizeof *m);
  assert_int_equal(cg_module_init(m, &t), MLC_OK);
  assert_non_null(m->gpu);
  assert_non_null(m->dev_mod);
  assert_int_equal(m->host.kind, MLC_TARGET_LLVM);
  mlc_module_free(m);
}

/* ------------------------------------------------------------------------ */
/* Verification                                                              */
/* ------------------------------------------------------------------------ */

static void test_invalid_ir_is_an_internal_error_with_the_verifier_message(void **state) {
  mlc_target_t host;
  mlc_target_host(&host);
  mlc_module_t *m = mlc_calloc(1, sizeof *m);
  assert_int_equal(cg_module_init(m, &host), MLC_OK);
  LLVMTypeRef i32 = LLVMInt32TypeInContext(m->ctx);
  LLVMValueRef fn = LLVMAddFunction(m->mod, "broken", LLVMFunctionType(i32, NULL, 0, 0));
  LLVMBuilderRef b = LLVMCreateBuilderInContext(m->ctx);
  LLVMPositionBuilderAtEnd(b, LLVMAppendBasicBlockInContext(m->ctx, fn, "entry"));
  LLVMBuildRet(b, LLVMConstInt(LLVMInt64TypeInContext(m->ctx), 1, 0)); /* i64 from an i32 function */
  LLVMDisposeBuilder(b);
  assert_int_equal(cg_module_optimize(m), MLC_EINTERNAL);
  assert_non_null(strstr(mlc_error_last(), "does not verify"));
  assert_non_null(strstr(mlc_error_last(), "in function 'broken'"));
  assert_non_null(strstr(mlc_error_last(), "ret i64 1"));
  mlc_module_free(m);
}

/* An AVX-512 intrinsic on a CPU without AVX-512: LLVM's instruction
 * selector gives up with a fatal error, which must be printed and end the
 * process with status 70, never abort silently. Run in a child. */
static void test_llvm_fatal_error_prints_and_exits(void **state) {
  mlc_module_t *m = mlc_calloc(1, sizeof *m);
  mlc_target_t t;
  assert_int_equal(mlc_target_parse(&t, "llvm -mcpu=x86-64"), MLC_OK);
  assert_int_equal(cg_module_init(m, &t), MLC_OK);
  LLVMTypeRef f32 = LLVMFloatTypeInContext(m->ctx), v16 = LLVMVectorType(f32, 16);
  LLVMTypeRef pv16 = LLVMPointerType(v16, 0), i16 = LLVMInt16TypeInContext(m->ctx);
  LLVMTypeRef ity_params[] = {v16, v16, i16};
  LLVMTypeRef ity = LLVMFunctionType(v16, ity_params, 3, 0);
  LLVMValueRef intrin = LLVMAddFunction(m->mod, "llvm.x86.avx512.rsqrt14.ps.512", ity);
  LLVMTypeRef fty = LLVMFunctionType(LLVMVoidTypeInContext(m->ctx), &pv16, 1, 0);
  LLVMValueRef fn = LLVMAddFunction(m->mod, "rsqrt16", fty);
  LLVMBuilderRef b = LLVMCreateBuilderInContext(m->ctx);
  LLVMPositionBuilderAtEnd(b, LLVMAppendBasicBlockInContext(m->ctx, fn, "entry"));
  LLVMValueRef x = LLVMBuildLoad2(b, v16, LLVMGetParam(fn, 0), "x");
  LLVMValueRef args[] = {x, x, LLVMConstInt(i16, 0xffff, 0)};
  LLVMBuildStore(b, LLVMBuildCall2(b, ity, intrin, args, 3, "r"), LLVMGetParam(fn, 0));
  LLVMBuildRetVoid(b);
  LLVMDisposeBuilder(b);
  assert_int_equal(cg_module_optimize(m), MLC_OK);
  int fds[2];
  assert_int_equal(pipe(fds), 0);
  fflush(NULL);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    dup2(fds[1], STDERR_FILENO);
    close(fds[0]);
    char *s = mlc_module_text(m, MLC_EMIT_ASM);
    _exit(s ? 0 : 1); /* not reached: LLVM's error ends the process */
  }
  close(fds[1]);
  char out[4096] = {0};
  size_t len = 0;
  ssize_t n;
  while (len < sizeof out - 1 && (n = read(fds[0], out + len, sizeof out - 1 - len)) > 0) len += (size_t)n;
  close(fds[0]);
  int status = 0;
  assert_int_equal(waitpid(pid, &status, 0), pid);
  assert_true(WIFEXITED(status));
  assert_int_equal(WEXITSTATUS(status), 70);
  assert_non_null(strstr(out, "mlc: fatal LLVM error: "));
  mlc_module_free(m);
}

/* ------------------------------------------------------------------------ */
/* Emission                                                                  */
/* ------------------------------------------------------------------------ */

static void test_emits_object_assembly_and_ir_files(void **state) {
  mlc_module_t *m = vadd_module("llvm");
  assert_int_equal(mlc_module_emit(m, MLC_EMIT_OBJ, scratch_path("vadd.o")), MLC_OK);
  assert_int_equal(mlc_module_emit(m, MLC_EMIT_ASM, scratch_path("vadd.s")), MLC_OK);
  assert_int_equal(mlc_module_emit(m, MLC_EMIT_LL, scratch_path("vadd.ll")), MLC_OK);
  char *obj = read_text(scratch_path("vadd.o"));
  assert_memory_equal(obj, "\177ELF", 4);
  mlc_free(obj);
  char *s = read_text(scratch_path("vadd.s"));
  assert_non_null(strstr(s, "vadd_par:"));
  assert_true(has_line_with(s, "vaddps", "%zmm")); /* the host has AVX-512 */
  mlc_free(s);
  char *ll = read_text(scratch_path("vadd.ll"));
  assert_non_null(strstr(ll, "define i32 @vadd("));
  assert_non_null(strstr(ll, "target triple = \"x86_64-pc-linux-gnu\""));
  assert_non_null(strstr(ll, "fadd <16 x float>")); /* optimised: vectorised */
  mlc_free(ll);
  mlc_module_free(m);
}

static void test_emission_leaves_the_module_unchanged(void **state) {
  mlc_module_t *m = vadd_module("llvm");
  char *ll1 = mlc_module_text(m, MLC_EMIT_LL), *s1 = mlc_module_text(m, MLC_EMIT_ASM);
  char *s2 = mlc_module_text(m, MLC_EMIT_ASM), *ll2 = mlc_module_text(m, MLC_EMIT_LL);
  assert_string_equal(s1, s2);
  assert_string_equal(ll1, ll2);
  mlc_free(ll1);
  mlc_free(ll2);
  mlc_free(s1);
  mlc_free(s2);
  mlc_module_free(m);
}

static void test_shared_library_loads_and_runs_with_its_own_runtime(void **state) {
  mlc_module_t *m = vadd_module("llvm");
  const char *so = scratch_path("libvadd.so");
  assert_int_equal(mlc_module_emit(m, MLC_EMIT_SO, so), MLC_OK);
  mlc_module_free(m);
  void *h = dlopen(so, RTLD_NOW | RTLD_LOCAL);
  assert_non_null(h);
  const char *(*last_error)(void) = (const char *(*)(void))dlsym(h, "mlc_last_error");
  mlc_packed_fn_t vadd = (mlc_packed_fn_t)dlsym(h, "vadd");
  mlc_packed_fn_t vadd_par = (mlc_packed_fn_t)dlsym(h, "vadd_par");
  void (*set_threads)(int32_t) = (void (*)(int32_t))dlsym(h, "mlc_rt_set_num_threads");
  assert_non_null(last_error);
  assert_non_null(vadd);
  assert_non_null(vadd_par);
  assert_non_null(set_threads);
  /* The library's runtime is its own copy, not this program's. */
  assert_true((void *)last_error != (void *)mlc_last_error);
  check_vadd(vadd, last_error, "vadd");
  set_threads(2);
  for (int i = 0; i < 20; i++) check_vadd(vadd_par, last_error, "vadd_par");
  /* Unloading stops the library's pool threads (its destructor). */
  assert_int_equal(dlclose(h), 0);
}

static void test_header_declares_every_function_and_compiles(void **state) {
  mlc_module_t *m = vadd_module("llvm");
  const char *path = scratch_path("vadd.h");
  assert_int_equal(mlc_module_emit(m, MLC_EMIT_HEADER, path), MLC_OK);
  char *h = read_text(path);
  assert_non_null(strstr(h, "#include <dlpack/dlpack.h>"));
  assert_non_null(strstr(h, "int32_t vadd(DLTensor *args, int32_t num_args);"));
  assert_non_null(strstr(h, "int32_t vadd_par(DLTensor *args, int32_t num_args);"));
  assert_non_null(strstr(h, "const char *mlc_last_error(void);"));
  assert_non_null(strstr(h, "extern \"C\""));
  assert_non_null(strstr(h, "#ifndef MLC_GENERATED_VADD_"));
  mlc_free(h);
  char cmd[512];
  snprintf(cmd, sizeof cmd, "cc -std=c99 -Wall -Werror -fsyntax-only -x c '%s'", path);
  assert_int_equal(system(cmd), 0);
  if (system("c++ --version >/dev/null 2>&1") == 0) {
    snprintf(cmd, sizeof cmd, "c++ -Wall -Werror -fsyntax-only -x c++ '%s'", path);
    assert_int_equal(system(cmd), 0);
  }
  /* Included twice: the guard holds. */
  const char *twice = scratch_path("twice.c");
  snprintf(cmd, sizeof cmd, "#include \"%s\"\n#include \"%s\"\n", path, path);
  assert_int_equal(mlc_write_file(twice, cmd, strlen(cmd)), MLC_OK);
  snprintf(cmd, sizeof cmd, "cc -Wall -Werror -fsyntax-only '%s'", twice);
  assert_int_equal(system(cmd), 0);
  mlc_module_free(m);
}

static const char symbolic_src[] =
    "# from tvm.script import tir as T\n\n"
    "@T.prim_func\n"
    "def mm(var_A: T.handle, B: T.Buffer((64, 32), \"float32\"), var_C: T.handle, alpha: T.float32):\n"
    "    n = T.int32()\n"
    "    A = T.match_buffer(var_A, (n, 64))\n"
    "    C = T.match_buffer(var_C, (n, 32), \"float16\")\n"
    "    for i in range(n):\n"
    "        C[i, 0] = T.Cast(\"float16\", A[i, 0] * B[0, 0] * alpha)\n";

static void test_header_entry_lists_arguments_with_shapes_and_dtypes(void **state) {
  tir_func_t *f = NULL;
  tir_parse_error_t perr;
  assert_int_equal(tir_parse_func(&f, symbolic_src, strlen(symbolic_src), "mm.py", &perr), MLC_OK);
  char *proto = cg_func_proto(f);
  assert_non_null(proto);
  assert_non_null(strstr(proto, "mm: 4 arguments"));
  assert_non_null(strstr(proto, "args[0] A: float32[n, 64]"));
  assert_non_null(strstr(proto, "args[1] B: float32[64, 32]"));
  assert_non_null(strstr(proto, "args[2] C: float16[n, 32]"));
  assert_non_null(strstr(proto, "args[3] alpha: float32 scalar (0-d tensor)"));
  assert_non_null(strstr(proto, "int32_t mm(DLTensor *args, int32_t num_args);\n"));
  mlc_free(proto);
  tir_func_free(f);
}

static void test_text_is_refused_for_binary_kinds(void **state) {
  mlc_module_t *m = vadd_module("llvm");
  assert_null(mlc_module_text(m, MLC_EMIT_OBJ));
  assert_int_equal(mlc_error_last_code(), MLC_EINVAL);
  assert_null(mlc_module_text(m, MLC_EMIT_SO));
  mlc_module_free(m);
}

static void test_unwritable_path_is_an_io_error_naming_it(void **state) {
  mlc_module_t *m = vadd_module("llvm");
  static const mlc_emit_kind_t kinds[] = {MLC_EMIT_OBJ, MLC_EMIT_ASM, MLC_EMIT_LL, MLC_EMIT_SO,
                                          MLC_EMIT_HEADER};
  const char *bad = "/nonexistent-mlc-dir/out.file";
  for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
    assert_int_equal(mlc_module_emit(m, kinds[i], bad), MLC_EIO);
    assert_non_null(strstr(mlc_error_last(), bad));
  }
  assert_int_equal(mlc_module_emit(m, MLC_EMIT_OBJ, ""), MLC_EIO);
  mlc_module_free(m);
}

static void test_missing_linker_is_reported(void **state) {
  mlc_module_t *m = vadd_module("llvm");
  setenv("MLC_CC", "/nonexistent/cc", 1);
  assert_int_equal(mlc_module_emit(m, MLC_EMIT_SO, scratch_path("nolink.so")), MLC_EIO);
  unsetenv("MLC_CC");
  assert_non_null(strstr(mlc_error_last(), "/nonexistent/cc"));
  mlc_module_free(m);
}

static void test_unreadable_runtime_archive_is_reported_by_path(void **state) {
  mlc_module_t *m = vadd_module("llvm");
  setenv("MLC_RUNTIME_LIB", "/nonexistent/libmlc_runtime.a", 1);
  assert_int_equal(mlc_module_emit(m, MLC_EMIT_SO, scratch_path("nort.so")), MLC_EIO);
  unsetenv("MLC_RUNTIME_LIB");
  assert_non_null(strstr(mlc_error_last(), "/nonexistent/libmlc_runtime.a"));
  mlc_module_free(m);
}

/* ------------------------------------------------------------------------ */
/* JIT                                                                       */
/* ------------------------------------------------------------------------ */

static void test_jit_runs_serial_and_parallel_functions(void **state) {
  mlc_jit_t *jit = NULL;
  assert_int_equal(mlc_jit_load(&jit, vadd_module("llvm")), MLC_OK);
  mlc_packed_fn_t vadd = (mlc_packed_fn_t)mlc_jit_lookup(jit, "vadd");
  mlc_packed_fn_t vadd_par = (mlc_packed_fn_t)mlc_jit_lookup(jit, "vadd_par");
  assert_non_null(vadd);
  assert_non_null(vadd_par);
  assert_null(mlc_jit_lookup(jit, "vadd_task")); /* internal */
  assert_null(mlc_jit_lookup(jit, "nope"));
  /* JIT code calls this program's runtime: its errors read here. */
  check_vadd(vadd, mlc_last_error, "vadd");
  for (int i = 0; i < 20; i++) check_vadd(vadd_par, mlc_last_error, "vadd_par");
  mlc_jit_free(jit);
}

static void test_jit_after_emission_and_many_jits_at_once(void **state) {
  enum { K = 4 };
  mlc_jit_t *jits[K];
  for (int k = 0; k < K; k++) {
    mlc_module_t *m = vadd_module("llvm");
    char *s = mlc_module_text(m, MLC_EMIT_ASM);
    mlc_free(s);
    assert_int_equal(mlc_jit_load(&jits[k], m), MLC_OK);
  }
  for (int k = 0; k < K; k++) check_vadd((mlc_packed_fn_t)mlc_jit_lookup(jits[k], "vadd"), mlc_last_error, "vadd");
  for (int k = 0; k < K; k++) mlc_jit_free(jits[k]);
}

static void test_jit_reports_an_unresolved_symbol(void **state) {
  mlc_target_t host;
  mlc_target_host(&host);
  mlc_module_t *m = mlc_calloc(1, sizeof *m);
  assert_int_equal(cg_module_init(m, &host), MLC_OK);
  LLVMTypeRef i32 = LLVMInt32TypeInContext(m->ctx);
  LLVMTypeRef fnty = LLVMFunctionType(i32, NULL, 0, 0);
  LLVMValueRef missing = LLVMAddFunction(m->mod, "mlc_no_such_symbol", fnty);
  LLVMValueRef fn = LLVMAddFunction(m->mod, "calls_missing", fnty);
  LLVMBuilderRef b = LLVMCreateBuilderInContext(m->ctx);
  LLVMPositionBuilderAtEnd(b, LLVMAppendBasicBlockInContext(m->ctx, fn, "entry"));
  LLVMBuildRet(b, LLVMBuildCall2(b, fnty, missing, NULL, 0, "r"));
  LLVMDisposeBuilder(b);
  static const char *const names[] = {"calls_missing"};
  set_names(m, names, 1);
  assert_int_equal(cg_module_optimize(m), MLC_OK);
  mlc_jit_t *jit = NULL;
  assert_int_equal(mlc_jit_load(&jit, m), MLC_EINTERNAL); /* m is consumed either way */
  assert_null(jit);
  assert_non_null(strstr(mlc_error_last(), "mlc_no_such_symbol"));
}

static void test_jit_refuses_no_module(void **state) {
  mlc_jit_t *jit = NULL;
  assert_int_equal(mlc_jit_load(&jit, NULL), MLC_EINVAL);
  assert_null(jit);
  assert_null(mlc_jit_lookup(NULL, "vadd"));
  mlc_jit_free(NULL);
  mlc_module_free(NULL);
}

/* ------------------------------------------------------------------------ */
/* End to end: scheduled TIR -> mlc_build -> JIT, against the interpreter    */
/* ------------------------------------------------------------------------ */

/* A GMM-512 with a good CPU schedule (tiles, a parallel outer loop,
 * 16-lane vectors, an unrolled reduction step): the size of kernel the
 * search builds by the thousand. */
static const char gmm512_src[] =
    "# from tvm.script import tir as T\n\n"
    "@T.prim_func\n"
    "def gmm(A: T.Buffer((512, 512), \"float32\"), B: T.Buffer((512, 512), \"float32\"), "
    "C: T.Buffer((512, 512), \"float32\")):\n"
    "    T.func_attr({\"tir.noalias\": T.bool(True)})\n"
    "    for i_0_j_0_fused in T.parallel(32):\n"
    "        for i_1, j_1, k_0, i_2 in T.grid(8, 8, 128, 2):\n"
    "            for k_1 in T.unroll(4):\n"
    "                for i_3 in range(4):\n"
    "                    for j_3 in T.vectorized(16):\n"
    "                        with T.block(\"C\"):\n"
    "                            v_i = T.axis.spatial(512, i_0_j_0_fused // 4 * 64 + i_1 * 8 + i_2 * 4 + i_3)\n"
    "                            v_j = T.axis.spatial(512, i_0_j_0_fused % 4 * 128 + j_1 * 16 + j_3)\n"
    "                            v_k = T.axis.reduce(512, k_0 * 4 + k_1)\n"
    "                            T.reads(A[v_i, v_k], B[v_k, v_j])\n"
    "                            T.writes(C[v_i, v_j])\n"
    "                            with T.init():\n"
    "                                C[v_i, v_j] = T.float32(0)\n"
    "                            C[v_i, v_j] = C[v_i, v_j] + A[v_i, v_k] * B[v_k, v_j]\n";

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static tir_func_t *parse_src(const char *src, const char *name) {
  tir_func_t *f = NULL;
  tir_parse_error_t perr;
  assert_int_equal(tir_parse_func(&f, src, strlen(src), name, &perr), MLC_OK);
  return f;
}

/* Random inputs in [1, 10) for A and B, C zeroed, and the expected C. The
 * interpreter is the oracle for small sizes; at 512 it would take minutes,
 * so a plain C loop with the interpreter's semantics (float32 accumulation
 * in k order, no contraction) stands in, checked against the interpreter on
 * a corner of the matrix. */
typedef struct {
  float *a, *b, *c, *want;
  int64_t shape[2];
  DLTensor t[3];
} gmm_args_t;

static void gmm_reference(const gmm_args_t *g, int64_t n) {
  for (int64_t i = 0; i < n; i++)
    for (int64_t j = 0; j < n; j++) {
      float acc = 0.0f;
      for (int64_t k = 0; k < n; k++) acc = acc + g->a[i * n + k] * g->b[k * n + j];
      g->want[i * n + j] = acc;
    }
}

/* The interpreter on the 16x16 corner of an unscheduled GMM of the same
 * inputs' leading block agrees with gmm_reference's formula. */
static void check_reference_against_interpreter(void) {
  static const char src[] =
      "# from tvm.script import tir as T\n\n"
      "@T.prim_func\n"
      "def mm(A: T.Buffer((16, 16), \"float32\"), B: T.Buffer((16, 16), \"float32\"), "
      "C: T.Buffer((16, 16), \"float32\")):\n"
      "    for i, j, k in T.grid(16, 16, 16):\n"
      "        with T.block(\"C\"):\n"
      "            v_i, v_j, v_k = T.axis.remap(\"SSR\", [i, j, k])\n"
      "            with T.init():\n"
      "                C[v_i, v_j] = T.float32(0)\n"
      "            C[v_i, v_j] = C[v_i, v_j] + A[v_i, v_k] * B[v_k, v_j]\n";
  tir_func_t *f = NULL;
  tir_parse_error_t perr;
  assert_int_equal(tir_parse_func(&f, src, strlen(src), "mm.py", &perr), MLC_OK);
  gmm_args_t g = {0};
  float a[256], b[256], c[256], want[256];
  for (int i = 0; i < 256; i++) {
    a[i] = 1.0f + (float)((i * 37) % 90) / 10.0f;
    b[i] = 1.0f + (float)((i * 53) % 90) / 10.0f;
  }
  g.a = a, g.b = b, g.want = want;
  gmm_reference(&g, 16);
  tir_arg_t args[3];
  float *data[] = {a, b, c};
  for (int k = 0; k < 3; k++) {
    memset(&args[k], 0, sizeof args[k]);
    args[k].data = data[k];
    args[k].ndim = 2;
    args[k].shape[0] = args[k].shape[1] = 16;
    args[k].dtype = tir_dt_FLOAT32();
  }
  assert_int_equal(tir_interp_run(f, args, 3), MLC_OK);
  assert_memory_equal(c, want, sizeof c);
  tir_func_free(f);
}

static void gmm_args_init(gmm_args_t *g, int64_t n) {
  size_t count = (size_t)(n * n);
  g->a = malloc(count * sizeof(float));
  g->b = malloc(count * sizeof(float));
  g->c = calloc(count, sizeof(float));
  g->want = calloc(count, sizeof(float));
  uint32_t seed = 7;
  for (size_t i = 0; i < count; i++) {
    seed = seed * 1664525u + 1013904223u;
    g->a[i] = 1.0f + (float)(seed >> 8) / (float)(1u << 24) * 9.0f;
    seed = seed * 1664525u + 1013904223u;
    g->b[i] = 1.0f + (float)(seed >> 8) / (float)(1u << 24) * 9.0f;
  }
  g->shape[0] = g->shape[1] = n;
  float *data[] = {g->a, g->b, g->c};
  for (int k = 0; k < 3; k++) {
    DLTensor t = {.data = data[k], .device = {kDLCPU, 0}, .ndim = 2,
                  .dtype = {kDLFloat, 32, 1}, .shape = g->shape};
    g->t[k] = t;
  }
  gmm_reference(g, n);
}

static void gmm_args_free(gmm_args_t *g) {
  free(g->a);
  free(g->b);
  free(g->c);
  free(g->want);
}

/* Builds and JITs the scheduled GMM-512, checks it against the interpreter
 * and reports what each step costs (the search's budget per candidate). */
static void test_scheduled_gmm_builds_jits_and_matches_the_interpreter(void **state) {
  check_reference_against_interpreter();
  mlc_target_t host;
  mlc_target_host(&host);
  tir_func_t *f = parse_src(gmm512_src, "gmm512.py");
  double t0 = now_s();
  tir_func_t *lowered = NULL;
  assert_int_equal(mlc_lower(&lowered, f, &host, NULL), MLC_OK);
  double t1 = now_s();
  mlc_module_t *m = NULL;
  assert_int_equal(mlc_codegen(&m, &lowered, 1, &host), MLC_OK);
  double t2 = now_s();
  char *s = mlc_module_text(m, MLC_EMIT_ASM);
  assert_true(has_line_with(s, "vfmadd", "%zmm") || has_line_with(s, "vaddps", "%zmm"));
  mlc_free(s);
  mlc_jit_t *jit = NULL;
  double t3 = now_s();
  assert_int_equal(mlc_jit_load(&jit, m), MLC_OK);
  double t4 = now_s();
  printf("GMM-512 (tiled, parallel, 16 lanes): lower %.1f ms, codegen + O3 %.1f ms, "
         "JIT load %.1f ms\n", (t1 - t0) * 1e3, (t2 - t1) * 1e3, (t4 - t3) * 1e3);
  mlc_packed_fn_t gmm = (mlc_packed_fn_t)mlc_jit_lookup(jit, "gmm");
  assert_non_null(gmm);
  gmm_args_t g;
  gmm_args_init(&g, 512);
  assert_int_equal(gmm(g.t, 3), 0);
  for (size_t i = 0; i < 512 * 512; i++)
    if (fabsf(g.c[i] - g.want[i]) > 1e-5f * fabsf(g.want[i]))
      fail_msg("C[%zu] is %g, expected %g", i, (double)g.c[i], (double)g.want[i]);
  double t5 = now_s();
  assert_int_equal(gmm(g.t, 3), 0);
  printf("GMM-512 run: %.2f ms\n", (now_s() - t5) * 1e3);
  /* The ABI check reaches the caller through this program's runtime. */
  g.shape[0] = 256;
  assert_int_not_equal(gmm(g.t, 3), 0);
  assert_true(strlen(mlc_last_error()) > 0);
  gmm_args_free(&g);
  mlc_jit_free(jit);
  tir_func_free(lowered);
  tir_func_free(f);
}

static void test_build_emits_a_shared_library_and_header_for_scheduled_tir(void **state) {
  mlc_target_t host;
  mlc_target_host(&host);
  tir_func_t *f = parse_src(gmm512_src, "gmm512.py");
  mlc_module_t *m = NULL;
  assert_int_equal(mlc_build(&m, &f, 1, &host, NULL), MLC_OK);
  const char *so = scratch_path("libgmm.so"), *hdr = scratch_path("gmm.h");
  assert_int_equal(mlc_module_emit(m, MLC_EMIT_SO, so), MLC_OK);
  assert_int_equal(mlc_module_emit(m, MLC_EMIT_HEADER, hdr), MLC_OK);
  mlc_module_free(m);
  char *h = read_text(hdr);
  assert_non_null(strstr(h, "args[0] A: float32[512, 512]"));
  assert_non_null(strstr(h, "int32_t gmm(DLTensor *args, int32_t num_args);"));
  mlc_free(h);
  void *lib = dlopen(so, RTLD_NOW | RTLD_LOCAL);
  assert_non_null(lib);
  mlc_packed_fn_t gmm = (mlc_packed_fn_t)dlsym(lib, "gmm");
  assert_non_null(gmm);
  gmm_args_t g;
  gmm_args_init(&g, 512);
  assert_int_equal(gmm(g.t, 3), 0);
  for (size_t i = 0; i < 512 * 512; i++)
    if (fabsf(g.c[i] - g.want[i]) > 1e-5f * fabsf(g.want[i]))
      fail_msg("C[%zu] is %g, expected %g", i, (double)g.c[i], (double)g.want[i]);
  gmm_args_free(&g);
  assert_int_equal(dlclose(lib), 0);
  tir_func_free(f);
}

/* ------------------------------------------------------------------------ */
/* mlc_codegen's own checks                                                  */
/* ------------------------------------------------------------------------ */

static void test_function_names_must_be_unique_c_identifiers(void **state) {
  mlc_target_t host;
  mlc_target_host(&host);
  static const char *const bad[][2] = {
      {"two-words", "not a C identifier"},
      {"mlc_rt_error", "runtime's prefix"},
      {"same", "two functions are named 'same'"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    tir_func_t *f[2] = {tir_func_new(bad[i][0]), tir_func_new("same")};
    mlc_module_t *m = (mlc_module_t *)1;
    int n = strcmp(bad[i][0], "same") == 0 ? 2 : 1;
    assert_int_equal(mlc_codegen(&m, f, n, &host), MLC_EINVAL);
    assert_null(m);
    assert_non_null(strstr(mlc_error_last(), bad[i][1]));
    tir_func_free(f[0]);
    tir_func_free(f[1]);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_host_target_gets_normalised_triple_cpu_and_features),
      cmocka_unit_test(test_explicit_cpu_sets_the_target_machine_features),
      cmocka_unit_test(test_generic_cpu_gets_no_avx),
      cmocka_unit_test(test_gpu_targets_get_a_host_and_a_device_module),
      cmocka_unit_test(test_invalid_ir_is_an_internal_error_with_the_verifier_message),
      cmocka_unit_test(test_llvm_fatal_error_prints_and_exits),
      cmocka_unit_test(test_emits_object_assembly_and_ir_files),
      cmocka_unit_test(test_emission_leaves_the_module_unchanged),
      cmocka_unit_test(test_shared_library_loads_and_runs_with_its_own_runtime),
      cmocka_unit_test(test_header_declares_every_function_and_compiles),
      cmocka_unit_test(test_header_entry_lists_arguments_with_shapes_and_dtypes),
      cmocka_unit_test(test_text_is_refused_for_binary_kinds),
      cmocka_unit_test(test_unwritable_path_is_an_io_error_naming_it),
      cmocka_unit_test(test_missing_linker_is_reported),
      cmocka_unit_test(test_unreadable_runtime_archive_is_reported_by_path),
      cmocka_unit_test(test_jit_runs_serial_and_parallel_functions),
      cmocka_unit_test(test_jit_after_emission_and_many_jits_at_once),
      cmocka_unit_test(test_jit_reports_an_unresolved_symbol),
      cmocka_unit_test(test_jit_refuses_no_module),
      cmocka_unit_test(test_function_names_must_be_unique_c_identifiers),
      cmocka_unit_test(test_scheduled_gmm_builds_jits_and_matches_the_interpreter),
      cmocka_unit_test(test_build_emits_a_shared_library_and_header_for_scheduled_tir),
  };
  return cmocka_run_group_tests(tests, make_scratch, remove_scratch);
}
