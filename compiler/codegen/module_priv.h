/*
 * module_priv.h - shared by the module machinery (module.c, emit.c, jit.c):
 * verification, machine code in memory, and the header text.
 */
#ifndef MLC_CODEGEN_MODULE_PRIV_H
#define MLC_CODEGEN_MODULE_PRIV_H

#include <llvm-c/Core.h>
#include <llvm-c/TargetMachine.h>

#include "compiler/codegen/codegen_internal.h"

/* The device image inside a GPU module's host code: a hidden global (so the
 * JIT can find its address, which the runtime caches loaded modules by, and
 * unload them in mlc_jit_free; hidden keeps it out of shared libraries'
 * dynamic symbols). */
#define CG_GPU_IMAGE_SYM "__mlc_gpu_image"

/* A target machine for triple (its backend initialised once), optimising
 * aggressively, default relocation model. MLC_EUNSUPPORTED when this LLVM
 * lacks the backend. */
int cg_target_machine(LLVMTargetMachineRef *out, const char *triple, const char *cpu, const char *features);
/* Runs argv (no shell), its stdout and stderr into *output. Returns the exit
 * status, or -1 when it could not be started. */
int cg_run_capture(char *const argv[], mlc_strbuf_t *output);

/* LLVMVerifyModule; MLC_EINTERNAL with the verifier's message. */
int cg_module_verify(LLVMModuleRef mod);
/* Object code (LLVMObjectFile) or assembly (LLVMAssemblyFile) of mod for tm,
 * in a new buffer (*out, owned by the caller). Code generation rewrites the
 * IR it is given, so callers that keep the module pass a clone. MLC_EINTERNAL
 * with LLVM's message. */
int cg_emit_to_memory(LLVMMemoryBufferRef *out, LLVMTargetMachineRef tm, LLVMModuleRef mod,
                      LLVMCodeGenFileType kind);
/* The same for a clone of mod, which is left as it was. */
int cg_emit_clone_to_memory(LLVMMemoryBufferRef *out, LLVMTargetMachineRef tm, LLVMModuleRef mod,
                            LLVMCodeGenFileType kind);

/* The header entry of f: a comment listing the arguments (position, name,
 * dtype, shape, alignment) and the prototype
 * `int32_t name(DLTensor *args, int32_t num_args);`. mlc_malloc'd; NULL when
 * out of memory. */
char *cg_func_proto(const tir_func_t *f);

#endif /* MLC_CODEGEN_MODULE_PRIV_H */
