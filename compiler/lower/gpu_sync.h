/*
 * gpu_sync.h - lowering pass "gpu-sync" (TVM's ThreadSync for "shared"):
 * inside GPU kernels, a barrier (T.tvm_storage_sync("shared")) wherever a
 * thread may read or overwrite shared memory that another thread of its
 * block wrote or read since the last barrier. A no-op on CPU targets.
 */
#ifndef MLC_COMPILER_LOWER_GPU_SYNC_H
#define MLC_COMPILER_LOWER_GPU_SYNC_H

#include "compiler/compiler.h"

int mlc_pass_gpu_sync(tir_func_t *f, const mlc_target_t *target, mlc_strbuf_t *notes);

#endif
