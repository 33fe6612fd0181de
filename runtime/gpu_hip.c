/*
 * gpu_hip.c - HIP's module API (ROCm) behind the runtime's GPU calls
 * (gpu_priv.h), loaded with dlopen("libamdhip64.so", then .so.6 and .so.5)
 * so nothing links against ROCm. MLC_HIP_RUNTIME names another file to load
 * instead.
 *
 * Declared here from HIP's public C ABI (hip_runtime_api.h, ROCm 5 and 6):
 * handles are pointers, hipError_t and device numbers ints, device pointers
 * void *. Numeric properties come from hipDeviceGetAttribute, whose
 * attribute numbers are the same in ROCm 5 and 6 ("CUDA-compatible" block);
 * the gfx arch name exists only as hipDeviceProp_t.gcnArchName, a struct
 * whose layout changed between releases (hipGetDevicePropertiesR0600 in
 * ROCm 6), so it is read into a generous zeroed buffer and the name found
 * as the string starting "gfx" after the marketing name (its only "gfx"
 * text); ":sramecc+:xnack-" feature suffixes are dropped.
 */
#include "gpu_priv.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int hipError_t;
typedef void *hipModule_t, *hipFunction_t, *hipStream_t, *hipEvent_t;

enum {
  hipSuccess = 0,
  hipMemcpyHostToDevice = 1,
  hipMemcpyDeviceToHost = 2,
  /* hipDeviceAttribute_t */
  ATTR_CLOCK_RATE = 5,
  ATTR_L2_CACHE_SIZE = 19,
  ATTR_MAX_THREADS_PER_BLOCK = 56,
  ATTR_MEMORY_CLOCK_RATE = 60,
  ATTR_MULTIPROCESSOR_COUNT = 63,
  ATTR_MAX_REGISTERS_PER_BLOCK = 71,
  ATTR_MAX_SHARED_MEMORY_PER_BLOCK = 74,
  ATTR_WARP_SIZE = 87,
  /* hipDeviceProp_t is about 1.5 KiB in ROCm 6; the name is its first 256. */
  PROPS_BUFFER = 16384,
  PROPS_NAME = 256,
};

/*      name                        parameters */
#define HIP_FUNCS(X)                                                                    \
  X(hipInit,                    (unsigned flags))                                       \
  X(hipDriverGetVersion,        (int *version))                                         \
  X(hipGetDeviceCount,          (int *count))                                           \
  X(hipDeviceGetName,           (char *name, int len, int device))                      \
  X(hipDeviceGetAttribute,      (int *value, int attribute, int device))                \
  X(hipDeviceTotalMem,          (size_t *bytes, int device))                            \
  X(hipSetDevice,               (int device))                                           \
  X(hipMalloc,                  (void **ptr, size_t bytes))                             \
  X(hipFree,                    (void *ptr))                                            \
  X(hipMemcpy,                  (void *dst, const void *src, size_t bytes, int kind))   \
  X(hipMemsetAsync,             (void *dst, int value, size_t bytes, hipStream_t s))    \
  X(hipStreamSynchronize,       (hipStream_t stream))                                   \
  X(hipModuleLoadData,          (hipModule_t *module, const void *image))               \
  X(hipModuleUnload,            (hipModule_t module))                                   \
  X(hipModuleGetFunction,       (hipFunction_t *fn, hipModule_t module, const char *name)) \
  X(hipModuleLaunchKernel,      (hipFunction_t fn, unsigned gx, unsigned gy, unsigned gz, \
                                 unsigned bx, unsigned by, unsigned bz, unsigned shared, \
                                 hipStream_t stream, void **params, void **extra))      \
  X(hipEventCreate,             (hipEvent_t *event))                                    \
  X(hipEventRecord,             (hipEvent_t event, hipStream_t stream))                 \
  X(hipEventSynchronize,        (hipEvent_t event))                                     \
  X(hipEventElapsedTime,        (float *ms, hipEvent_t start, hipEvent_t stop))         \
  X(hipEventDestroy,            (hipEvent_t event))

static struct {
#define HIP_FIELD_(name, params) hipError_t (*name) params;
  HIP_FUNCS(HIP_FIELD_)
#undef HIP_FIELD_
  const char *(*hipGetErrorName)(hipError_t error);
  hipError_t (*get_props)(void *props, int device); /* whichever hipGetDeviceProperties* exists */
} hip;

static const char *const hip_names[] = {
#define HIP_NAME_(name, params) #name,
    HIP_FUNCS(HIP_NAME_)
#undef HIP_NAME_
    "hipGetErrorName",
};

static const size_t hip_offsets[] = {
#define HIP_OFFSET_(name, params) offsetof(__typeof__(hip), name),
    HIP_FUNCS(HIP_OFFSET_)
#undef HIP_OFFSET_
    offsetof(__typeof__(hip), hipGetErrorName),
};

enum { NFUNCS = sizeof hip_names / sizeof *hip_names };

static const char *err_name(hipError_t r, char *buf, size_t len) {
  const char *name = hip.hipGetErrorName ? hip.hipGetErrorName(r) : NULL;
  if (name && *name) return name;
  snprintf(buf, len, "HIP error %d", r);
  return buf;
}

static int check(hipError_t r, const char *call) {
  if (r == hipSuccess) return 0;
  char buf[32];
  return mlc_rt_error("%s: %s", call, err_name(r, buf, sizeof buf));
}

/* The properties call of this ROCm: R0600 (ROCm 6), the plain name (5), or
 * R0000 (6's copy of 5's layout); any of them holds gcnArchName. */
static void find_props_call(void *lib) {
  static const char *const names[] = {"hipGetDevicePropertiesR0600", "hipGetDeviceProperties",
                                      "hipGetDevicePropertiesR0000"};
  for (size_t i = 0; i < sizeof names / sizeof *names && !hip.get_props; i++) {
    void *sym = dlsym(lib, names[i]);
    if (sym) memcpy(&hip.get_props, &sym, sizeof sym);
  }
}

static int hip_load(char *why, size_t len) {
  static const char *const libs[] = {"libamdhip64.so", "libamdhip64.so.6", "libamdhip64.so.5", NULL};
  const char *used = NULL;
  void *lib = rt_gpu_dlopen(libs, "MLC_HIP_RUNTIME", "ROCm", &used, why, len);
  if (!lib) return -1;
  if (rt_gpu_dlsyms(lib, used, "ROCm", hip_names, hip_offsets, NFUNCS, &hip, why, len) != 0) return -1;
  find_props_call(lib);
  char buf[32];
  hipError_t r = hip.hipInit(0);
  if (r != hipSuccess) {
    snprintf(why, len, "ROCm driver: hipInit: %s", err_name(r, buf, sizeof buf));
    return -1;
  }
  return 0;
}

static int hip_device_count(int32_t *count) {
  int n = 0;
  if (check(hip.hipGetDeviceCount(&n), "hipGetDeviceCount") != 0) return -1;
  *count = n;
  return 0;
}

static int attr(int device, int attribute, int32_t *out) {
  int v = 0;
  if (check(hip.hipDeviceGetAttribute(&v, attribute, device), "hipDeviceGetAttribute") != 0) return -1;
  *out = v;
  return 0;
}

/* "gfx90a" from the properties struct (see the top of the file). */
static int arch_name(int device, char *out, size_t len) {
  if (!hip.get_props) return mlc_rt_error("hipGetDeviceProperties: not in this HIP runtime");
  unsigned char *buf = calloc(1, PROPS_BUFFER);
  if (!buf) return mlc_rt_error("hipGetDeviceProperties: out of memory");
  int rc = check(hip.get_props(buf, device), "hipGetDeviceProperties");
  buf[PROPS_BUFFER - 1] = '\0';
  out[0] = '\0';
  for (size_t i = PROPS_NAME; rc == 0 && i + 4 < PROPS_BUFFER && !out[0]; i++) {
    const char *s = (const char *)buf + i;
    if (buf[i - 1] == '\0' && memcmp(s, "gfx", 3) == 0) snprintf(out, len, "%.*s", (int)strcspn(s, ":"), s);
  }
  free(buf);
  if (rc == 0 && !out[0]) rc = mlc_rt_error("hipGetDeviceProperties: no gfx arch name in the properties");
  return rc;
}

static int hip_props(int32_t device, mlc_rt_gpu_props_t *out) {
  if (check(hip.hipDeviceGetName(out->name, (int)sizeof out->name, device), "hipDeviceGetName") != 0) return -1;
  out->name[sizeof out->name - 1] = '\0';
  size_t total = 0;
  if (check(hip.hipDeviceTotalMem(&total, device), "hipDeviceTotalMem") != 0) return -1;
  out->total_memory = (int64_t)total;
  int rc = attr(device, ATTR_MULTIPROCESSOR_COUNT, &out->multiprocessors) |
           attr(device, ATTR_CLOCK_RATE, &out->clock_khz) |
           attr(device, ATTR_MEMORY_CLOCK_RATE, &out->memory_clock_khz) |
           attr(device, ATTR_MAX_THREADS_PER_BLOCK, &out->max_threads_per_block) |
           attr(device, ATTR_MAX_SHARED_MEMORY_PER_BLOCK, &out->max_shared_memory_per_block) |
           attr(device, ATTR_MAX_REGISTERS_PER_BLOCK, &out->registers_per_block) |
           attr(device, ATTR_WARP_SIZE, &out->warp_size) | attr(device, ATTR_L2_CACHE_SIZE, &out->l2_cache_bytes);
  if (rc != 0 || arch_name(device, out->arch, sizeof out->arch) != 0) return -1;
  int version = 0;
  if (check(hip.hipDriverGetVersion(&version), "hipDriverGetVersion") != 0) return -1;
  /* HIP_VERSION: major * 10^7 + minor * 10^5 + patch. */
  snprintf(out->driver_version, sizeof out->driver_version, "%d.%d", version / 10000000,
           version / 100000 % 100);
  return 0;
}

static int hip_activate(int32_t device) { return check(hip.hipSetDevice(device), "hipSetDevice"); }

static int hip_alloc(uint64_t bytes, void **out) { return check(hip.hipMalloc(out, (size_t)bytes), "hipMalloc"); }

static int hip_release(void *ptr) { return check(hip.hipFree(ptr), "hipFree"); }

static int hip_copy(void *dst, const void *src, uint64_t bytes, bool to_device) {
  return check(hip.hipMemcpy(dst, src, (size_t)bytes, to_device ? hipMemcpyHostToDevice : hipMemcpyDeviceToHost),
               "hipMemcpy");
}

static int hip_memset_async(void *dst, uint8_t value, uint64_t bytes, void *stream) {
  return check(hip.hipMemsetAsync(dst, value, (size_t)bytes, stream), "hipMemsetAsync");
}

static int hip_sync(void *stream) { return check(hip.hipStreamSynchronize(stream), "hipStreamSynchronize"); }

static int hip_module_load(const void *image, void **out) {
  return check(hip.hipModuleLoadData(out, image), "hipModuleLoadData");
}

static int hip_module_unload(void *module) { return check(hip.hipModuleUnload(module), "hipModuleUnload"); }

static int hip_function(void *module, const char *name, void **out) {
  hipError_t r = hip.hipModuleGetFunction(out, module, name);
  if (r == hipSuccess) return 0;
  char buf[32];
  return mlc_rt_error("hipModuleGetFunction(%s): %s", name, err_name(r, buf, sizeof buf));
}

/* AMD GPUs give a kernel all of its LDS without an opt-in. */
static int hip_allow_shared(void *fn, uint32_t bytes) { return 0; }

static int hip_launch(void *fn, const uint32_t grid[3], const uint32_t block[3], uint32_t shared_bytes,
                      void *stream, void **args) {
  return check(hip.hipModuleLaunchKernel(fn, grid[0], grid[1], grid[2], block[0], block[1], block[2],
                                         shared_bytes, stream, args, NULL),
               "hipModuleLaunchKernel");
}

static int hip_event_create(void **out) { return check(hip.hipEventCreate(out), "hipEventCreate"); }

static int hip_event_record(void *event, void *stream) {
  return check(hip.hipEventRecord(event, stream), "hipEventRecord");
}

static int hip_event_elapsed_ms(void *start, void *stop, float *ms) {
  if (check(hip.hipEventSynchronize(stop), "hipEventSynchronize") != 0) return -1;
  return check(hip.hipEventElapsedTime(ms, start, stop), "hipEventElapsedTime");
}

static int hip_event_destroy(void *event) { return check(hip.hipEventDestroy(event), "hipEventDestroy"); }

const rt_gpu_driver_t rt_gpu_hip_driver = {
    .name = "ROCm",
    .load = hip_load,
    .device_count = hip_device_count,
    .props = hip_props,
    .activate = hip_activate,
    .alloc = hip_alloc,
    .release = hip_release,
    .copy = hip_copy,
    .memset_async = hip_memset_async,
    .sync = hip_sync,
    .module_load = hip_module_load,
    .module_unload = hip_module_unload,
    .function = hip_function,
    .allow_shared = hip_allow_shared,
    .launch = hip_launch,
    .event_create = hip_event_create,
    .event_record = hip_event_record,
    .event_elapsed_ms = hip_event_elapsed_ms,
    .event_destroy = hip_event_destroy,
};
