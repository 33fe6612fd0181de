/*
 * worker_gpu.h - private to workers/: the pieces of the GPU backends
 * (worker_gpu.c) that tests drive without a GPU: the discovery probe and its
 * answer, the architecture check, the device description.
 */
#ifndef MLC_WORKERS_WORKER_GPU_H
#define MLC_WORKERS_WORKER_GPU_H

#include "runtime/runtime.h"
#include "workers/worker.h"

/* What the discovery probe learns about device `index`. */
typedef struct {
  int32_t ok;      /* 1: props hold the device's properties */
  int32_t count;   /* devices the driver has (0 when it could not be loaded) */
  char why[512];   /* the runtime's message when !ok ("no CUDA driver (...)") */
  mlc_rt_gpu_props_t props;
} worker_gpu_probe_t;

/* Loads the driver of kind (cuda or rocm) in a forked child, which answers
 * for device index and exits; the caller never touches the driver. MLC_OK
 * with *out filled (ok or not), MLC_EIO when the child could not be run or
 * died without answering. */
int worker_gpu_probe(worker_gpu_probe_t *out, mlc_target_kind_t kind, int index);

/* MLC_OK when a device of kind and architecture arch ("sm_90", "gfx90a")
 * runs jobs for target: same kind, same architecture. MLC_EUNSUPPORTED with
 * why ("the target is for sm_90, this device is sm_80") otherwise. */
int worker_gpu_accepts_arch(mlc_target_kind_t kind, const char *arch, const mlc_target_t *target);

/* Fills dev (backend and index set) from a probe's answer: dev->target is
 * target (checked with worker_gpu_accepts_arch) or the device's own
 * ("cuda -arch=sm_90" when target is NULL), the device key and device_json.
 * MLC_ENOTFOUND ("no CUDA device: no CUDA driver (...)", "CUDA device 3 does
 * not exist (...)"), MLC_EUNSUPPORTED ("cannot measure for 'cuda
 * -arch=sm_90' on CUDA device 0 (NAME): the target is for ..."). */
int worker_gpu_describe(worker_device_t *dev, const worker_gpu_probe_t *probe, const mlc_target_t *target);

/* props as the device_json text (keys in worker_gpu.c's header comment).
 * MLC_ERANGE when it does not fit len, MLC_ENOMEM. */
int worker_gpu_props_json(char *buf, size_t len, const mlc_rt_gpu_props_t *props);

#endif /* MLC_WORKERS_WORKER_GPU_H */
