/*
 * runtime.h - what generated code calls at run time: the thread-local last
 * error behind mlc_last_error(), the thread pool that runs parallel loops,
 * the cache of heap buffers, and the GPU calls of generated host code (driver loaded with dlopen).
 *
 * This folder is compiled position-independent into libmlc_runtime.a, which
 * the compiler links into every shared library it emits and registers with
 * its JIT, so a generated .so depends on nothing but libc and pthreads
 * (libdl's dlopen is in glibc's libc). It
 * uses libc only (no support/ library): it ships inside user artifacts.
 */
#ifndef MLC_RUNTIME_H
#define MLC_RUNTIME_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Sets the calling thread's last error (printf-style); returns -1 so
 * generated code can `return mlc_rt_error(...)`. */
int32_t mlc_rt_error(const char *fmt, ...);
/* The calling thread's last error message ("" when none). */
const char *mlc_last_error(void);

/* The body of an outlined parallel loop: runs iterations [begin, end).
 * Nonzero return reports an error (message set with mlc_rt_error). */
typedef int32_t (*mlc_rt_task_fn)(int64_t begin, int64_t end, void *closure);

/* Runs `fn` over [0, extent) and waits: the iterations are split into
 * contiguous chunks, one per thread taking part (at most num_threads, <= 0
 * for the pool's size; the calling thread is one of them), and each thread
 * runs its chunk in a few calls of `fn` on consecutive ranges; a thread done
 * early runs the far end of a chunk that is well behind (work stealing, see
 * mlc_rt_set_work_stealing). Every iteration runs exactly once; which thread
 * runs it is not fixed. Workers are created on first use and kept alive; a
 * nested call runs serially in the caller. Returns the first nonzero task
 * result, or 0. */
int32_t mlc_rt_parallel_for(mlc_rt_task_fn fn, void *closure, int64_t extent, int32_t num_threads);
/* on != 0 (the default, unless MLC_RT_STEAL=0 in the environment): threads
 * done with their chunk take over part of a late one. 0: each chunk runs
 * whole, in one call of `fn`, on its own thread (the caller's is the first). */
void mlc_rt_set_work_stealing(int32_t on);
/* Sets the pool's size (default: the CPUs in the process's affinity mask, or
 * MLC_NUM_THREADS from the environment). */
void mlc_rt_set_num_threads(int32_t n);
int32_t mlc_rt_num_threads(void);

/* The heap buffers of generated code (an Allocate too large for the stack):
 * `bytes` aligned to `align` (a power of two), uninitialised, NULL when out
 * of memory. Freed blocks are kept (process-wide, at most 16 blocks and
 * 1 GiB) and handed out again, so a kernel that allocates per call or per
 * parallel iteration does not fault its buffer in each time, whatever the
 * host process's malloc does (runtime/workspace.c). Thread-safe. A block is
 * returned with mlc_rt_workspace_free only (NULL is fine); the cache is
 * freed at exit or when a library holding this runtime is unloaded. */
void *mlc_rt_workspace_alloc(uint64_t bytes, uint64_t align);
void mlc_rt_workspace_free(void *p);

/* ------------------------------------------------------------------------ */
/* GPUs (runtime/gpu*.c)                                                     */
/* ------------------------------------------------------------------------ */

/* The GPU driver is loaded at run time with dlopen (the CUDA driver API from
 * libcuda.so.1, HIP from libamdhip64.so), never linked: a library or program
 * holding this runtime loads and runs on a machine without a GPU, and every
 * GPU call there fails with a message saying what is missing. Kinds are
 * DLPack's device types. Each device uses its primary context (CUDA) / the
 * device (HIP), made current on the calling thread by each call. All calls
 * are thread-safe. Errors: nonzero return, the message (naming the driver
 * call and its error name, e.g. "cuModuleLoadData: CUDA_ERROR_INVALID_PTX")
 * in mlc_last_error(). */
typedef enum {
  MLC_RT_GPU_CUDA = 2,   /* kDLCUDA */
  MLC_RT_GPU_ROCM = 10,  /* kDLROCM */
} mlc_rt_gpu_kind_t;

/* Loads and initialises the driver once. 0 when it is usable and has at
 * least one device; -1 otherwise, with why: "no CUDA driver (libcuda.so.1:
 * cannot open shared object file: No such file or directory)", "CUDA driver:
 * cuInit: CUDA_ERROR_NO_DEVICE". The result is remembered. A process that
 * initialised CUDA must not use it in a fork()ed child: initialise in the
 * process that measures. */
int32_t mlc_rt_gpu_init(int32_t kind);
int32_t mlc_rt_gpu_device_count(int32_t kind, int32_t *count);

/* What a device is (for device keys, records and VerifyGPUCode limits). */
typedef struct {
  char name[128];                    /* "NVIDIA H100 80GB HBM3" */
  char arch[32];                     /* "sm_90" / "gfx90a" */
  char driver_version[32];           /* "12.4" */
  int64_t total_memory;              /* bytes */
  int32_t multiprocessors;           /* SMs / CUs */
  int32_t clock_khz;                 /* SM clock */
  int32_t memory_clock_khz;
  int32_t max_threads_per_block;
  int32_t max_shared_memory_per_block; /* bytes, static + default dynamic */
  int32_t registers_per_block;
  int32_t warp_size;
  int32_t l2_cache_bytes;
} mlc_rt_gpu_props_t;
int32_t mlc_rt_gpu_device_props(int32_t kind, int32_t device, mlc_rt_gpu_props_t *out);

/* Device memory on `device`. */
int32_t mlc_rt_gpu_alloc(int32_t kind, int32_t device, uint64_t bytes, void **out);
int32_t mlc_rt_gpu_free(int32_t kind, int32_t device, void *ptr); /* NULL is fine */
int32_t mlc_rt_gpu_copy_to_device(int32_t kind, int32_t device, void *dst, const void *src, uint64_t bytes);
int32_t mlc_rt_gpu_copy_to_host(int32_t kind, int32_t device, void *dst, const void *src, uint64_t bytes);
/* Waits until the work queued on the device's current stream is done (and
 * reports an error a kernel raised, e.g. an illegal address). */
int32_t mlc_rt_gpu_sync(int32_t kind, int32_t device);
/* The stream generated launchers use on `device` from the calling thread
 * (a CUstream / hipStream_t; NULL: the default stream). */
void mlc_rt_gpu_set_stream(int32_t kind, int32_t device, void *stream);

/* What generated host code calls to run one kernel: `image` is the module's
 * device code (NUL-terminated PTX text for CUDA, an HSACO code object for
 * ROCm; image_size bytes, the NUL included), loaded on first use per device
 * and cached for the life of the process (keyed by the image's address, so
 * the image must be static data); `kernel` is the entry's name; `args` points
 * at the kernel's arguments in order (each a pointer to the value: device
 * pointers, int32/int64 scalars). Launches asynchronously on the current
 * stream; a launch error (too many threads, too much shared memory) is
 * reported here, a fault in the kernel by the next mlc_rt_gpu_sync. */
int32_t mlc_rt_gpu_launch(int32_t kind, int32_t device, const void *image, uint64_t image_size,
                          const char *kernel, const uint32_t grid[3], const uint32_t block[3],
                          uint32_t dynamic_shared_bytes, void **args);

/* Forgets the modules loaded from `image` on every device (unloading them
 * where the driver is usable): for a holder of device code that is about to
 * free it (a JIT dropping a module), so a later image at the same address
 * is never served the old code. Safe to call for an image never launched. */
void mlc_rt_gpu_unload_image(const void *image);

/* Timing with events on the current stream: start records an event, stop
 * records another, waits for it and gives the seconds between them. */
typedef struct mlc_rt_gpu_timer mlc_rt_gpu_timer_t;
int32_t mlc_rt_gpu_timer_start(int32_t kind, int32_t device, mlc_rt_gpu_timer_t **out);
int32_t mlc_rt_gpu_timer_stop(mlc_rt_gpu_timer_t *t, double *secs); /* frees t */
/* Evicts the device's L2 cache: writes a scratch buffer of twice its size
 * (kept per device) on the current stream. */
int32_t mlc_rt_gpu_flush_l2(int32_t kind, int32_t device);

#ifdef __cplusplus
}
#endif
#endif /* MLC_RUNTIME_H */
