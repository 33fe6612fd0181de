/*
 * gpu_cuda.c - the CUDA driver API behind the runtime's GPU calls
 * (gpu_priv.h), loaded with dlopen("libcuda.so.1") so that nothing links
 * against the driver: a library holding this runtime loads on a machine
 * without one and says so when a GPU call is made. MLC_CUDA_DRIVER names
 * another file to load instead (a driver outside the loader's path, or a
 * test double).
 *
 * The few types and functions used are declared here from the driver API's
 * ABI (cuda.h, CUDA 12): handles are pointers, CUdevice an int, CUdeviceptr
 * a 64-bit integer, CUresult an int; the versioned entry points (_v2) are
 * the ones cuda.h maps the plain names to. Each device is driven through its
 * primary context, retained once and made current by `activate`.
 */
#include "gpu_priv.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef void *CUcontext, *CUmodule, *CUfunction, *CUstream, *CUevent;

enum {
  CUDA_SUCCESS = 0,
  /* CUdevice_attribute */
  ATTR_MAX_THREADS_PER_BLOCK = 1,
  ATTR_MAX_SHARED_MEMORY_PER_BLOCK = 8,
  ATTR_WARP_SIZE = 10,
  ATTR_MAX_REGISTERS_PER_BLOCK = 12,
  ATTR_CLOCK_RATE = 13,
  ATTR_MULTIPROCESSOR_COUNT = 16,
  ATTR_MEMORY_CLOCK_RATE = 36,
  ATTR_L2_CACHE_SIZE = 38,
  ATTR_COMPUTE_CAPABILITY_MAJOR = 75,
  ATTR_COMPUTE_CAPABILITY_MINOR = 76,
  /* CUfunction_attribute */
  FUNC_ATTR_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8,
  /* Dynamic shared memory a kernel gets without opting in. */
  DEFAULT_DYNAMIC_SHARED = 48 * 1024,
};

/*      name                        parameters */
#define CUDA_FUNCS(X)                                                                   \
  X(cuInit,                     (unsigned flags))                                       \
  X(cuDriverGetVersion,         (int *version))                                         \
  X(cuGetErrorName,             (CUresult error, const char **name))                    \
  X(cuDeviceGetCount,           (int *count))                                           \
  X(cuDeviceGet,                (CUdevice *dev, int ordinal))                           \
  X(cuDeviceGetName,            (char *name, int len, CUdevice dev))                    \
  X(cuDeviceGetAttribute,       (int *value, int attribute, CUdevice dev))              \
  X(cuDeviceTotalMem_v2,        (size_t *bytes, CUdevice dev))                          \
  X(cuDevicePrimaryCtxRetain,   (CUcontext *ctx, CUdevice dev))                         \
  X(cuCtxSetCurrent,            (CUcontext ctx))                                        \
  X(cuMemAlloc_v2,              (CUdeviceptr *ptr, size_t bytes))                       \
  X(cuMemFree_v2,               (CUdeviceptr ptr))                                      \
  X(cuMemcpyHtoD_v2,            (CUdeviceptr dst, const void *src, size_t bytes))       \
  X(cuMemcpyDtoH_v2,            (void *dst, CUdeviceptr src, size_t bytes))             \
  X(cuMemsetD8Async,            (CUdeviceptr dst, unsigned char v, size_t n, CUstream s)) \
  X(cuStreamSynchronize,        (CUstream stream))                                      \
  X(cuModuleLoadData,           (CUmodule *module, const void *image))                  \
  X(cuModuleUnload,             (CUmodule module))                                      \
  X(cuModuleGetFunction,        (CUfunction *fn, CUmodule module, const char *name))    \
  X(cuFuncSetAttribute,         (CUfunction fn, int attribute, int value))              \
  X(cuLaunchKernel,             (CUfunction fn, unsigned gx, unsigned gy, unsigned gz,  \
                                 unsigned bx, unsigned by, unsigned bz, unsigned shared, \
                                 CUstream stream, void **params, void **extra))         \
  X(cuEventCreate,              (CUevent *event, unsigned flags))                       \
  X(cuEventRecord,              (CUevent event, CUstream stream))                       \
  X(cuEventSynchronize,         (CUevent event))                                        \
  X(cuEventElapsedTime,         (float *ms, CUevent start, CUevent stop))               \
  X(cuEventDestroy_v2,          (CUevent event))

static struct {
#define CUDA_FIELD_(name, params) CUresult (*name) params;
  CUDA_FUNCS(CUDA_FIELD_)
#undef CUDA_FIELD_
} cu;

static const char *const cu_names[] = {
#define CUDA_NAME_(name, params) #name,
    CUDA_FUNCS(CUDA_NAME_)
#undef CUDA_NAME_
};

static const size_t cu_offsets[] = {
#define CUDA_OFFSET_(name, params) offsetof(__typeof__(cu), name),
    CUDA_FUNCS(CUDA_OFFSET_)
#undef CUDA_OFFSET_
};

enum { NFUNCS = sizeof cu_names / sizeof *cu_names };

/* Primary contexts, retained on first use (never released: they live as
 * long as the process, as the module cache does). */
static pthread_mutex_t ctx_lock = PTHREAD_MUTEX_INITIALIZER;
static CUcontext contexts[MLC_RT_GPU_MAX_DEVICES];

/* "CUDA_ERROR_INVALID_PTX", or the number when the driver has no name. */
static const char *err_name(CUresult r, char *buf, size_t len) {
  const char *name = NULL;
  if (cu.cuGetErrorName && cu.cuGetErrorName(r, &name) == CUDA_SUCCESS && name) return name;
  snprintf(buf, len, "CUDA error %d", r);
  return buf;
}

/* 0, or -1 with "call: CUDA_ERROR_..." as the last error. */
static int check(CUresult r, const char *call) {
  if (r == CUDA_SUCCESS) return 0;
  char buf[32];
  return mlc_rt_error("%s: %s", call, err_name(r, buf, sizeof buf));
}

static int cuda_load(char *why, size_t len) {
  static const char *const libs[] = {"libcuda.so.1", "libcuda.so", NULL};
  const char *used = NULL;
  void *lib = rt_gpu_dlopen(libs, "MLC_CUDA_DRIVER", "CUDA", &used, why, len);
  if (!lib) return -1;
  if (rt_gpu_dlsyms(lib, used, "CUDA", cu_names, cu_offsets, NFUNCS, &cu, why, len) != 0) return -1;
  /* The library stays loaded for the life of the process. */
  char buf[32];
  CUresult r = cu.cuInit(0);
  if (r != CUDA_SUCCESS) {
    snprintf(why, len, "CUDA driver: cuInit: %s", err_name(r, buf, sizeof buf));
    return -1;
  }
  return 0;
}

static int cuda_device_count(int32_t *count) {
  int n = 0;
  if (check(cu.cuDeviceGetCount(&n), "cuDeviceGetCount") != 0) return -1;
  *count = n;
  return 0;
}

static int attr(CUdevice dev, int attribute, int32_t *out) {
  int v = 0;
  if (check(cu.cuDeviceGetAttribute(&v, attribute, dev), "cuDeviceGetAttribute") != 0) return -1;
  *out = v;
  return 0;
}

static int cuda_props(int32_t device, mlc_rt_gpu_props_t *out) {
  CUdevice dev;
  if (check(cu.cuDeviceGet(&dev, device), "cuDeviceGet") != 0) return -1;
  if (check(cu.cuDeviceGetName(out->name, (int)sizeof out->name, dev), "cuDeviceGetName") != 0) return -1;
  out->name[sizeof out->name - 1] = '\0';
  size_t total = 0;
  if (check(cu.cuDeviceTotalMem_v2(&total, dev), "cuDeviceTotalMem") != 0) return -1;
  out->total_memory = (int64_t)total;
  int32_t major = 0, minor = 0;
  int rc = attr(dev, ATTR_COMPUTE_CAPABILITY_MAJOR, &major) | attr(dev, ATTR_COMPUTE_CAPABILITY_MINOR, &minor) |
           attr(dev, ATTR_MULTIPROCESSOR_COUNT, &out->multiprocessors) |
           attr(dev, ATTR_CLOCK_RATE, &out->clock_khz) | attr(dev, ATTR_MEMORY_CLOCK_RATE, &out->memory_clock_khz) |
           attr(dev, ATTR_MAX_THREADS_PER_BLOCK, &out->max_threads_per_block) |
           attr(dev, ATTR_MAX_SHARED_MEMORY_PER_BLOCK, &out->max_shared_memory_per_block) |
           attr(dev, ATTR_MAX_REGISTERS_PER_BLOCK, &out->registers_per_block) |
           attr(dev, ATTR_WARP_SIZE, &out->warp_size) | attr(dev, ATTR_L2_CACHE_SIZE, &out->l2_cache_bytes);
  if (rc != 0) return -1;
  snprintf(out->arch, sizeof out->arch, "sm_%d%d", (int)major, (int)minor);
  int version = 0;
  if (check(cu.cuDriverGetVersion(&version), "cuDriverGetVersion") != 0) return -1;
  snprintf(out->driver_version, sizeof out->driver_version, "%d.%d", version / 1000, version % 1000 / 10);
  return 0;
}

static int cuda_activate(int32_t device) {
  pthread_mutex_lock(&ctx_lock);
  CUcontext ctx = contexts[device];
  int rc = 0;
  if (!ctx) {
    CUdevice dev;
    rc = check(cu.cuDeviceGet(&dev, device), "cuDeviceGet");
    if (rc == 0) rc = check(cu.cuDevicePrimaryCtxRetain(&ctx, dev), "cuDevicePrimaryCtxRetain");
    if (rc == 0) contexts[device] = ctx;
  }
  pthread_mutex_unlock(&ctx_lock);
  return rc == 0 ? check(cu.cuCtxSetCurrent(ctx), "cuCtxSetCurrent") : rc;
}

static int cuda_alloc(uint64_t bytes, void **out) {
  CUdeviceptr p = 0;
  if (check(cu.cuMemAlloc_v2(&p, (size_t)bytes), "cuMemAlloc") != 0) return -1;
  *out = (void *)(uintptr_t)p;
  return 0;
}

static int cuda_release(void *ptr) { return check(cu.cuMemFree_v2((CUdeviceptr)(uintptr_t)ptr), "cuMemFree"); }

static int cuda_copy(void *dst, const void *src, uint64_t bytes, bool to_device) {
  if (to_device) return check(cu.cuMemcpyHtoD_v2((CUdeviceptr)(uintptr_t)dst, src, (size_t)bytes), "cuMemcpyHtoD");
  return check(cu.cuMemcpyDtoH_v2(dst, (CUdeviceptr)(uintptr_t)src, (size_t)bytes), "cuMemcpyDtoH");
}

static int cuda_memset_async(void *dst, uint8_t value, uint64_t bytes, void *stream) {
  return check(cu.cuMemsetD8Async((CUdeviceptr)(uintptr_t)dst, value, (size_t)bytes, stream), "cuMemsetD8Async");
}

static int cuda_sync(void *stream) { return check(cu.cuStreamSynchronize(stream), "cuStreamSynchronize"); }

static int cuda_module_load(const void *image, void **out) {
  CUmodule m = NULL;
  if (check(cu.cuModuleLoadData(&m, image), "cuModuleLoadData") != 0) return -1;
  *out = m;
  return 0;
}

static int cuda_module_unload(void *module) { return check(cu.cuModuleUnload(module), "cuModuleUnload"); }

static int cuda_function(void *module, const char *name, void **out) {
  CUfunction f = NULL;
  CUresult r = cu.cuModuleGetFunction(&f, module, name);
  if (r != CUDA_SUCCESS) {
    char buf[32];
    return mlc_rt_error("cuModuleGetFunction(%s): %s", name, err_name(r, buf, sizeof buf));
  }
  *out = f;
  return 0;
}

static int cuda_allow_shared(void *fn, uint32_t bytes) {
  if (bytes <= DEFAULT_DYNAMIC_SHARED) return 0;
  return check(cu.cuFuncSetAttribute(fn, FUNC_ATTR_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)bytes),
               "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)");
}

static int cuda_launch(void *fn, const uint32_t grid[3], const uint32_t block[3], uint32_t shared_bytes,
                       void *stream, void **args) {
  return check(cu.cuLaunchKernel(fn, grid[0], grid[1], grid[2], block[0], block[1], block[2], shared_bytes,
                                 stream, args, NULL),
               "cuLaunchKernel");
}

static int cuda_event_create(void **out) {
  CUevent e = NULL;
  if (check(cu.cuEventCreate(&e, 0), "cuEventCreate") != 0) return -1;
  *out = e;
  return 0;
}

static int cuda_event_record(void *event, void *stream) {
  return check(cu.cuEventRecord(event, stream), "cuEventRecord");
}

static int cuda_event_elapsed_ms(void *start, void *stop, float *ms) {
  if (check(cu.cuEventSynchronize(stop), "cuEventSynchronize") != 0) return -1;
  return check(cu.cuEventElapsedTime(ms, start, stop), "cuEventElapsedTime");
}

static int cuda_event_destroy(void *event) { return check(cu.cuEventDestroy_v2(event), "cuEventDestroy"); }

const rt_gpu_driver_t rt_gpu_cuda_driver = {
    .name = "CUDA",
    .load = cuda_load,
    .device_count = cuda_device_count,
    .props = cuda_props,
    .activate = cuda_activate,
    .alloc = cuda_alloc,
    .release = cuda_release,
    .copy = cuda_copy,
    .memset_async = cuda_memset_async,
    .sync = cuda_sync,
    .module_load = cuda_module_load,
    .module_unload = cuda_module_unload,
    .function = cuda_function,
    .allow_shared = cuda_allow_shared,
    .launch = cuda_launch,
    .event_create = cuda_event_create,
    .event_record = cuda_event_record,
    .event_elapsed_ms = cuda_event_elapsed_ms,
    .event_destroy = cuda_event_destroy,
};
