/*
 * fake_cuda.c - a test double of libcuda.so.1 for tests/runtime/test_gpu.c
 * and tests/workers/test_worker_gpu.c: the driver API entry points the
 * runtime resolves (runtime/gpu_cuda.c), on host memory, so the runtime's
 * GPU paths (loading, devices, memory, the module cache, launches, timers,
 * errors) run on a machine without a GPU. Built by the tests with `cc
 * -shared` and loaded through MLC_CUDA_DRIVER.
 *
 * Two devices, "Fake GPU" sm_90 and sm_80. A device pointer is a host
 * pointer. An image is text starting "// fake ptx:" followed by the names
 * of its kernels; anything else is CUDA_ERROR_INVALID_PTX. Kernels run at
 * launch, on the host, one "thread" at a time:
 *   add_one(float *x, int32 n)   x[i] += 1 for every thread i < n
 *   fault()                      sets the sticky CUDA_ERROR_ILLEGAL_ADDRESS
 *                                reported by the next synchronisation
 * A block of more than 1024 threads, or dynamic shared memory above 48 KiB
 * that cuFuncSetAttribute did not allow, is CUDA_ERROR_INVALID_VALUE.
 * Counters (fake_cuda_*) let tests see what the runtime asked for.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef int CUresult;
enum {
  OK = 0, INVALID_VALUE = 1, OUT_OF_MEMORY = 2, INVALID_DEVICE = 101, INVALID_CONTEXT = 201,
  INVALID_PTX = 218, NOT_FOUND = 500, ILLEGAL_ADDRESS = 700,
};

int fake_cuda_module_loads, fake_cuda_module_unloads, fake_cuda_launches, fake_cuda_allocs, fake_cuda_frees;
int fake_cuda_memset_bytes_last;

static int current_ctx = -1; /* device whose context is current (one thread in tests) */
static CUresult sticky = OK;

typedef struct { char text[256]; } module_t;
typedef struct { int kernel; int shared_allowed; } function_t; /* kernel: 0 add_one, 1 fault */
static function_t functions[64];
static int nfunctions;

CUresult cuInit(unsigned flags) { return flags ? INVALID_VALUE : OK; }
CUresult cuDriverGetVersion(int *v) { *v = 12040; return OK; }

CUresult cuGetErrorName(CUresult e, const char **name) {
  static const struct { int code; const char *name; } names[] = {
      {OK, "CUDA_SUCCESS"}, {INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE"},
      {OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY"}, {INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE"},
      {INVALID_CONTEXT, "CUDA_ERROR_INVALID_CONTEXT"}, {INVALID_PTX, "CUDA_ERROR_INVALID_PTX"},
      {NOT_FOUND, "CUDA_ERROR_NOT_FOUND"}, {ILLEGAL_ADDRESS, "CUDA_ERROR_ILLEGAL_ADDRESS"}};
  for (size_t i = 0; i < sizeof names / sizeof *names; i++)
    if (names[i].code == e) {
      *name = names[i].name;
      return OK;
    }
  *name = NULL;
  return INVALID_VALUE;
}

CUresult cuDeviceGetCount(int *n) { *n = 2; return OK; }
CUresult cuDeviceGet(int *dev, int ordinal) {
  if (ordinal < 0 || ordinal > 1) return INVALID_DEVICE;
  *dev = ordinal;
  return OK;
}
CUresult cuDeviceGetName(char *name, int len, int dev) {
  if (len < 16) return INVALID_VALUE;
  strcpy(name, dev ? "Fake GPU 80" : "Fake GPU 90");
  return OK;
}
CUresult cuDeviceTotalMem_v2(size_t *bytes, int dev) { *bytes = (size_t)(dev ? 40 : 80) << 30; return OK; }

CUresult cuDeviceGetAttribute(int *v, int attr, int dev) {
  switch (attr) {
  case 1: *v = 1024; return OK;              /* max threads per block */
  case 8: *v = 48 * 1024; return OK;         /* shared memory per block */
  case 10: *v = 32; return OK;               /* warp */
  case 12: *v = 65536; return OK;            /* registers per block */
  case 13: *v = 1980000; return OK;          /* clock kHz */
  case 16: *v = dev ? 108 : 132; return OK;  /* SMs */
  case 36: *v = 2619000; return OK;          /* memory clock kHz */
  case 38: *v = 1 << 20; return OK;          /* L2 bytes (small: the flush writes 2x) */
  case 75: *v = dev ? 8 : 9; return OK;      /* compute capability */
  case 76: *v = 0; return OK;
  default: return INVALID_VALUE;
  }
}

CUresult cuDevicePrimaryCtxRetain(void **ctx, int dev) {
  *ctx = (void *)(intptr_t)(dev + 1);
  return OK;
}
CUresult cuCtxSetCurrent(void *ctx) {
  current_ctx = (int)(intptr_t)ctx - 1;
  return OK;
}

CUresult cuMemAlloc_v2(unsigned long long *p, size_t bytes) {
  if (current_ctx < 0) return INVALID_CONTEXT;
  if (bytes == 0) return INVALID_VALUE;
  if (bytes > ((size_t)1 << 32)) return OUT_OF_MEMORY;
  void *m = malloc(bytes);
  if (!m) return OUT_OF_MEMORY;
  fake_cuda_allocs++;
  *p = (unsigned long long)(uintptr_t)m;
  return OK;
}
CUresult cuMemFree_v2(unsigned long long p) {
  fake_cuda_frees++;
  free((void *)(uintptr_t)p);
  return OK;
}
CUresult cuMemcpyHtoD_v2(unsigned long long dst, const void *src, size_t n) {
  memcpy((void *)(uintptr_t)dst, src, n);
  return OK;
}
CUresult cuMemcpyDtoH_v2(void *dst, unsigned long long src, size_t n) {
  memcpy(dst, (const void *)(uintptr_t)src, n);
  return OK;
}
CUresult cuMemsetD8Async(unsigned long long dst, unsigned char v, size_t n, void *stream) {
  memset((void *)(uintptr_t)dst, v, n);
  fake_cuda_memset_bytes_last = (int)n;
  return OK;
}

CUresult cuStreamSynchronize(void *stream) {
  CUresult e = sticky;
  return e;
}

CUresult cuModuleLoadData(void **module, const void *image) {
  if (current_ctx < 0) return INVALID_CONTEXT;
  if (strncmp(image, "// fake ptx:", 12) != 0) return INVALID_PTX;
  module_t *m = calloc(1, sizeof *m);
  if (!m) return OUT_OF_MEMORY;
  strncpy(m->text, (const char *)image + 12, sizeof m->text - 1);
  fake_cuda_module_loads++;
  *module = m;
  return OK;
}
CUresult cuModuleUnload(void *module) {
  fake_cuda_module_unloads++;
  free(module);
  return OK;
}

CUresult cuModuleGetFunction(void **fn, void *module, const char *name) {
  const module_t *m = module;
  char word[80];
  int kernel = strcmp(name, "add_one") == 0 ? 0 : strcmp(name, "fault") == 0 ? 1 : -1;
  snprintf(word, sizeof word, " %s", name);
  if (kernel < 0 || !strstr(m->text, word) || nfunctions >= 64) return NOT_FOUND;
  function_t *f = &functions[nfunctions++];
  f->kernel = kernel;
  f->shared_allowed = 48 * 1024;
  *fn = f;
  return OK;
}

CUresult cuFuncSetAttribute(void *fn, int attr, int value) {
  if (attr != 8 || value > 227 * 1024) return INVALID_VALUE;
  ((function_t *)fn)->shared_allowed = value;
  return OK;
}

CUresult cuLaunchKernel(void *fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                        unsigned shared, void *stream, void **params, void **extra) {
  const function_t *f = fn;
  if ((unsigned long)bx * by * bz > 1024 || (int)shared > f->shared_allowed || extra) return INVALID_VALUE;
  fake_cuda_launches++;
  if (f->kernel == 1) {
    sticky = ILLEGAL_ADDRESS;
    return OK;
  }
  float *x = *(float **)params[0];
  int32_t n = *(int32_t *)params[1];
  unsigned long threads = (unsigned long)gx * gy * gz * bx * by * bz;
  for (unsigned long i = 0; i < threads; i++)
    if ((long)i < n) x[i] += 1.0f;
  return OK;
}

typedef struct { struct timespec at; int recorded; } event_t;

CUresult cuEventCreate(void **ev, unsigned flags) {
  *ev = calloc(1, sizeof(event_t));
  return *ev ? OK : OUT_OF_MEMORY;
}
CUresult cuEventRecord(void *ev, void *stream) {
  event_t *e = ev;
  clock_gettime(CLOCK_MONOTONIC, &e->at);
  e->recorded = 1;
  return OK;
}
CUresult cuEventSynchronize(void *ev) { return ((event_t *)ev)->recorded ? OK : INVALID_VALUE; }
CUresult cuEventElapsedTime(float *ms, void *a, void *b) {
  const event_t *s = a, *e = b;
  if (!s->recorded || !e->recorded) return INVALID_VALUE;
  *ms = (float)((e->at.tv_sec - s->at.tv_sec) * 1e3 + (e->at.tv_nsec - s->at.tv_nsec) * 1e-6);
  return OK;
}
CUresult cuEventDestroy_v2(void *ev) {
  free(ev);
  return OK;
}
