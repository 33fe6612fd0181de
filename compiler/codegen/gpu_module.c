/*
 * gpu_module.c - the two halves of a GPU module and how they meet.
 *
 * cg_gpu_module_init makes the host half exactly as a CPU module for this
 * machine (the DLPack functions run on the host) and the device half: a
 * second LLVM module in the same context, with the triple, data layout and
 * target machine of the GPU (gpu_nvptx.c / gpu_amdgpu.c pick the LLVM CPU).
 *
 * Host code refers to the device image through two placeholders, an
 * external `[1 x i8]` and a constant size, because the image exists only
 * once every function's kernels are generated. cg_gpu_module_finish then
 * verifies the device module, links what its math calls, optimises it
 * (O3 for the GPU), refuses calls nothing would resolve (LLVM would abort in
 * instruction selection), generates the image, and replaces the
 * placeholders with a hidden constant holding it (jit.c finds it by name
 * to unload the image's modules when the JIT is freed); the host module is
 * optimised afterwards by mlc_codegen as usual.
 */
#include "compiler/codegen/gpu.h"

#include <string.h>

#include <llvm-c/Transforms/PassBuilder.h>

#include "compiler/codegen/module_priv.h"

#define IMAGE_SYM CG_GPU_IMAGE_SYM
#define IMAGE_SIZE_SYM "__mlc_gpu_image_size"

int cg_gpu_module_init(mlc_module_t *m, const mlc_target_t *t) {
  const cg_gpu_target_t *gt = t->kind == MLC_TARGET_CUDA ? &cg_gpu_nvptx : &cg_gpu_amdgpu;
  char cpu[64];
  int rc = gt->cpu(t, cpu, sizeof cpu);
  if (rc != MLC_OK) return rc;
  mlc_target_host(&m->host);
  if ((rc = cg_module_init(m, &m->host)) != MLC_OK) return rc;
  m->target = *t;
  m->gpu = gt;
  if ((rc = cg_target_machine(&m->dev_tm, t->mtriple, cpu, "")) != MLC_OK) return rc;
  m->dev_mod = LLVMModuleCreateWithNameInContext("mlc_device", m->ctx);
  LLVMSetTarget(m->dev_mod, t->mtriple);
  LLVMTargetDataRef layout = LLVMCreateTargetDataLayout(m->dev_tm);
  LLVMSetModuleDataLayout(m->dev_mod, layout);
  LLVMDisposeTargetData(layout);
  return MLC_OK;
}

/* ------------------------------------------------------------------------ */
/* The image in host code                                                    */
/* ------------------------------------------------------------------------ */

LLVMValueRef cg_gpu_image_ref(cg_t *cg) {
  LLVMValueRef g = LLVMGetNamedGlobal(cg->mod, IMAGE_SYM);
  if (!g) g = LLVMAddGlobal(cg->mod, LLVMArrayType(cg->t_i8, 1), IMAGE_SYM);
  return LLVMConstBitCast(g, cg->t_ptr);
}

LLVMValueRef cg_gpu_image_size_ref(cg_t *cg) {
  LLVMValueRef g = LLVMGetNamedGlobal(cg->mod, IMAGE_SIZE_SYM);
  if (!g) {
    g = LLVMAddGlobal(cg->mod, cg->t_i64, IMAGE_SIZE_SYM);
    LLVMSetLinkage(g, LLVMPrivateLinkage);
    LLVMSetGlobalConstant(g, 1);
    LLVMSetInitializer(g, LLVMConstInt(cg->t_i64, 0, 0));
  }
  return LLVMBuildLoad2(cg->b, cg->t_i64, g, "image_size");
}

static void embed_image(mlc_module_t *m) {
  LLVMValueRef old = LLVMGetNamedGlobal(m->mod, IMAGE_SYM);
  LLVMValueRef size = LLVMGetNamedGlobal(m->mod, IMAGE_SIZE_SYM);
  if (!old) return; /* no launches */
  LLVMValueRef data = LLVMConstStringInContext(m->ctx, m->image, (unsigned)m->image_size, 1);
  LLVMValueRef g = LLVMAddGlobal(m->mod, LLVMTypeOf(data), "");
  LLVMSetInitializer(g, data);
  LLVMSetLinkage(g, LLVMExternalLinkage);
  LLVMSetVisibility(g, LLVMHiddenVisibility);
  LLVMSetGlobalConstant(g, 1);
  LLVMSetAlignment(g, 16);
  LLVMReplaceAllUsesWith(old, LLVMConstBitCast(g, LLVMTypeOf(old)));
  LLVMDeleteGlobal(old);
  LLVMSetValueName2(g, IMAGE_SYM, strlen(IMAGE_SYM));
  if (size) LLVMSetInitializer(size, LLVMConstInt(LLVMInt64TypeInContext(m->ctx), m->image_size, 0));
}

/* ------------------------------------------------------------------------ */
/* Finishing the device module                                               */
/* ------------------------------------------------------------------------ */

static int optimize_device(mlc_module_t *m) {
  LLVMPassBuilderOptionsRef opts = LLVMCreatePassBuilderOptions();
  LLVMPassBuilderOptionsSetLoopUnrolling(opts, 1);
  LLVMPassBuilderOptionsSetSLPVectorization(opts, 1);
  LLVMErrorRef err = LLVMRunPasses(m->dev_mod, "default<O3>", m->dev_tm, opts);
  LLVMDisposePassBuilderOptions(opts);
  if (!err) return MLC_OK;
  char *msg = LLVMGetErrorMessage(err);
  int rc = mlc_error_set(MLC_EINTERNAL, "LLVM O3 pipeline failed on the device module: %s", msg);
  LLVMDisposeErrorMessage(msg);
  return rc;
}

/* Device code cannot call anything but intrinsics and what was linked in. */
static int check_calls(mlc_module_t *m) {
  for (LLVMValueRef fn = LLVMGetFirstFunction(m->dev_mod); fn; fn = LLVMGetNextFunction(fn)) {
    if (!LLVMIsDeclaration(fn) || LLVMGetIntrinsicID(fn) != 0 || !LLVMGetFirstUse(fn)) continue;
    size_t len;
    return mlc_error_set(MLC_EUNSUPPORTED, "%s device code calls %s, which no device library provides",
                         m->gpu->name, LLVMGetValueName2(fn, &len));
  }
  return MLC_OK;
}

int cg_gpu_module_finish(mlc_module_t *m) {
  int rc = cg_module_verify(m->dev_mod);
  if (rc == MLC_OK) rc = m->gpu->link(m);
  if (rc == MLC_OK) rc = optimize_device(m);
  if (rc == MLC_OK) rc = check_calls(m);
  if (rc == MLC_OK) rc = m->gpu->image(m, &m->image, &m->image_size);
  if (rc == MLC_OK) embed_image(m);
  return rc;
}

/* ------------------------------------------------------------------------ */
/* Emission                                                                  */
/* ------------------------------------------------------------------------ */

static char *copy_text(const char *p, size_t len) {
  char *s = mlc_malloc(len + 1);
  if (!s) {
    mlc_error_set(MLC_ENOMEM, "out of memory");
    return NULL;
  }
  memcpy(s, p, len);
  s[len] = '\0';
  return s;
}

char *cg_gpu_text(const mlc_module_t *m, mlc_emit_kind_t kind) {
  if (kind == MLC_EMIT_LL) {
    char *ir = LLVMPrintModuleToString(m->dev_mod);
    char *s = copy_text(ir, strlen(ir));
    LLVMDisposeMessage(ir);
    return s;
  }
  if (m->gpu->dl_kind == kDLCUDA) return copy_text(m->image, strlen(m->image)); /* the image is PTX */
  LLVMMemoryBufferRef buf = NULL;
  int rc = cg_emit_clone_to_memory(&buf, m->dev_tm, m->dev_mod, LLVMAssemblyFile);
  if (rc != MLC_OK) return NULL;
  char *s = copy_text(LLVMGetBufferStart(buf), LLVMGetBufferSize(buf));
  LLVMDisposeMemoryBuffer(buf);
  return s;
}

int cg_gpu_write_image(const mlc_module_t *m, const char *path) {
  size_t len = m->image_size;
  if (m->gpu->dl_kind == kDLCUDA && len > 0) len--; /* the .ptx file without the NUL */
  return mlc_write_file(path, m->image, len);
}
