/*
 * codegen_internal.h - private to compiler/codegen: the compiled module and
 * the boundary between IR generation (llvm_*.c: TIR -> LLVM IR, one function
 * at a time) and the module machinery (module.c, jit.c, emit.c: contexts,
 * target machines, optimisation, JIT, files).
 */
#ifndef MLC_CODEGEN_INTERNAL_H
#define MLC_CODEGEN_INTERNAL_H

#include <llvm-c/Core.h>
#include <llvm-c/TargetMachine.h>

#include "compiler/compiler.h"

typedef struct cg_gpu_target cg_gpu_target_t;

struct mlc_module {
  LLVMContextRef ctx;         /* owned */
  LLVMModuleRef mod;          /* owned (until handed to a JIT); GPU: host code */
  LLVMTargetMachineRef tm;    /* owned; GPU: the host's */
  mlc_target_t target;
  /* GPU targets (gpu.h): the code generator, the host CPU the host code is
   * for, the device module (same context) with its target machine, and the
   * device image once generated (PTX text with its NUL, or an HSACO). */
  const cg_gpu_target_t *gpu; /* NULL for CPU modules */
  mlc_target_t host;
  LLVMModuleRef dev_mod;      /* owned */
  LLVMTargetMachineRef dev_tm;/* owned */
  char *image;                /* mlc_malloc'd */
  size_t image_size;
  int nfuncs;
  char **func_names;          /* exported symbols, mlc_malloc'd */
  char **func_protos;         /* C prototypes for the header, mlc_malloc'd */
};

/* Adds the lowered function f to m->mod: the kernel body as an internal
 * function plus the exported `int32_t name(DLTensor *args, int32_t num_args)`
 * wrapper that checks the arguments (compiler.h, "The C ABI") and calls it.
 * Parallel loops are outlined into task functions run through
 * mlc_rt_parallel_for (runtime/runtime.h). Uses m->target for vector width
 * and features. MLC_EUNSUPPORTED with a detail for constructs it cannot
 * generate. */
int cg_llvm_add_func(mlc_module_t *m, const tir_func_t *f);

/* Creates the context, module (triple and data layout of m->target) and
 * target machine (CPU and features from the target string). */
int cg_module_init(mlc_module_t *m, const mlc_target_t *target);
/* Verifies and runs the O3 pipeline. */
int cg_module_optimize(mlc_module_t *m);

#endif /* MLC_CODEGEN_INTERNAL_H */
