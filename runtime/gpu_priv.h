/*
 * gpu_priv.h - private to runtime/gpu*.c: the driver table each GPU kind
 * implements (gpu_cuda.c: the CUDA driver API from libcuda.so.1; gpu_hip.c:
 * HIP's module API from libamdhip64.so), and what gpu.c builds on it (the
 * public calls of runtime.h: lazy initialisation, the module cache, the
 * per-thread streams, timers, the L2 flush).
 *
 * A driver function returns 0, or -1 with the message in mlc_last_error()
 * naming the driver call and its error ("cuModuleLoadData:
 * CUDA_ERROR_INVALID_PTX"). Apart from `load`, they are called only after a
 * successful load, with a valid device number, and (except device_count and
 * props) after `activate` made the device current on the calling thread.
 * Handles (modules, functions, events, streams, device pointers) are the
 * driver's own, passed as void *.
 */
#ifndef MLC_RUNTIME_GPU_PRIV_H
#define MLC_RUNTIME_GPU_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "runtime_priv.h"

/* Most devices per kind this runtime addresses (device numbers 0..63). */
#define MLC_RT_GPU_MAX_DEVICES 64

typedef struct {
  const char *name;    /* "CUDA" / "ROCm": in messages */
  /* dlopens the library (the names in `libs`, or $env_library when set),
   * resolves every symbol and initialises the driver. On failure writes why
   * into why ("no CUDA driver (libcuda.so.1: cannot open shared object
   * file: ...)", "CUDA driver: cuInit: CUDA_ERROR_NO_DEVICE") and returns -1. */
  int (*load)(char *why, size_t len);
  int (*device_count)(int32_t *count);
  int (*props)(int32_t device, mlc_rt_gpu_props_t *out);
  int (*activate)(int32_t device);
  int (*alloc)(uint64_t bytes, void **out);
  int (*release)(void *ptr);
  int (*copy)(void *dst, const void *src, uint64_t bytes, bool to_device);
  int (*memset_async)(void *dst, uint8_t value, uint64_t bytes, void *stream);
  int (*sync)(void *stream);
  int (*module_load)(const void *image, void **out);
  int (*module_unload)(void *module);
  int (*function)(void *module, const char *name, void **out);
  /* Lets fn use `bytes` of dynamic shared memory (CUDA: above 48 KiB needs
   * an opt-in); called once per new high-water mark. */
  int (*allow_shared)(void *fn, uint32_t bytes);
  int (*launch)(void *fn, const uint32_t grid[3], const uint32_t block[3], uint32_t shared_bytes,
                void *stream, void **args);
  int (*event_create)(void **out);
  int (*event_record)(void *event, void *stream);
  /* Waits for stop, then the milliseconds between the two. */
  int (*event_elapsed_ms)(void *start, void *stop, float *ms);
  int (*event_destroy)(void *event);
} rt_gpu_driver_t;

extern const rt_gpu_driver_t rt_gpu_cuda_driver;
extern const rt_gpu_driver_t rt_gpu_hip_driver;

/* dlopens the first of names[] (NULL-terminated) that loads, or only
 * getenv(env) when that is set, and says which in *used; NULL with "no
 * <what> driver (dlerror of the first name)" in why otherwise. */
void *rt_gpu_dlopen(const char *const *names, const char *env, const char *what, const char **used, char *why,
                    size_t len);
/* Resolves n symbols of lib: names[i] into the function pointer at
 * table + offsets[i]. -1 with "no <what> driver (<lib_name>: no symbol
 * <name>)" in why when one is missing. */
int rt_gpu_dlsyms(void *lib, const char *lib_name, const char *what, const char *const *names,
                  const size_t *offsets, int n, void *table, char *why, size_t len);

#endif /* MLC_RUNTIME_GPU_PRIV_H */
