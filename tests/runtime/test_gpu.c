/*
 * test_gpu.c - the runtime's GPU calls (runtime.h, "GPUs").
 *
 * The driver's state is per process and remembered, so each case runs in a
 * forked child with its own driver choice (MLC_CUDA_DRIVER / MLC_HIP_RUNTIME)
 * and exits through exit(), so the leak checker of the sanitizer build looks
 * at it; the child's checks print what failed and make it exit 1.
 *  - no driver: every call fails with "no CUDA driver (...)" and clean
 *    outputs; the default library names are the ones in the message;
 *  - a fake driver (tests/runtime/fake_cuda.c, built with cc): devices and
 *    properties, memory round trips, launches through the module cache,
 *    driver errors by name, dynamic shared memory opt-in, kernel faults at
 *    sync, timers, the L2 flush, unloading an image, and a child forked
 *    after initialisation refused;
 *  - a real GPU when there is one (mlc_rt_gpu_init == 0): memory, a PTX
 *    kernel, sync and timers; skipped with the reason otherwise.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runtime/runtime.h"
#include "tests/runtime/fake_cuda.h"

#define CUDA MLC_RT_GPU_CUDA
#define ROCM MLC_RT_GPU_ROCM

/* A check inside a child: prints what failed and returns 1 from it. */
#define CHECK(c)                                                                                    \
  do {                                                                                              \
    if (!(c)) {                                                                                     \
      fprintf(stderr, "%s:%d: check failed: %s (last error: \"%s\")\n", __FILE__, __LINE__, #c,     \
              mlc_last_error());                                                                    \
      return 1;                                                                                     \
    }                                                                                               \
  } while (0)
#define CHECK_ERROR(call, text) CHECK((call) != 0 && strstr(mlc_last_error(), (text)))

/* Runs fn in a child with MLC_CUDA_DRIVER=cuda_driver (unset when NULL) and
 * MLC_HIP_RUNTIME=hip_runtime; asserts it exited 0. */
static void in_child(int (*fn)(void), const char *cuda_driver, const char *hip_runtime) {
  fflush(NULL);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    use_driver(cuda_driver, hip_runtime);
    int rc = fn();
    fflush(NULL);
    exit(rc); /* exit, not _exit: the leak checker runs */
  }
  int status = 0;
  assert_int_equal(waitpid(pid, &status, 0), pid);
  assert_true(WIFEXITED(status));
  assert_int_equal(WEXITSTATUS(status), 0);
}

/* ------------------------------------------------------------------------ */
/* Without a driver                                                          */
/* ------------------------------------------------------------------------ */

static int every_call_fails(int32_t kind, const char *why) {
  CHECK_ERROR(mlc_rt_gpu_init(kind), why);
  CHECK_ERROR(mlc_rt_gpu_init(kind), why); /* remembered */
  int32_t n = 7;
  CHECK_ERROR(mlc_rt_gpu_device_count(kind, &n), why);
  CHECK(n == 0);
  mlc_rt_gpu_props_t p;
  memset(&p, 0x5a, sizeof p);
  CHECK_ERROR(mlc_rt_gpu_device_props(kind, 0, &p), why);
  CHECK(p.name[0] == '\0' && p.total_memory == 0);
  void *ptr = (void *)1;
  CHECK_ERROR(mlc_rt_gpu_alloc(kind, 0, 64, &ptr), why);
  CHECK(ptr == NULL);
  CHECK(mlc_rt_gpu_free(kind, 0, NULL) == 0);
  CHECK_ERROR(mlc_rt_gpu_free(kind, 0, &n), why);
  char host[8] = {0};
  CHECK_ERROR(mlc_rt_gpu_copy_to_device(kind, 0, host, host, sizeof host), why);
  CHECK_ERROR(mlc_rt_gpu_copy_to_host(kind, 0, host, host, sizeof host), why);
  CHECK_ERROR(mlc_rt_gpu_sync(kind, 0), why);
  mlc_rt_gpu_set_stream(kind, 0, NULL);
  static const char image[] = "// fake ptx: add_one";
  const uint32_t grid[3] = {1, 1, 1}, block[3] = {32, 1, 1};
  CHECK_ERROR(mlc_rt_gpu_launch(kind, 0, image, sizeof image, "add_one", grid, block, 0, NULL), why);
  mlc_rt_gpu_timer_t *t = (mlc_rt_gpu_timer_t *)1;
  CHECK_ERROR(mlc_rt_gpu_timer_start(kind, 0, &t), why);
  CHECK(t == NULL);
  CHECK_ERROR(mlc_rt_gpu_flush_l2(kind, 0), why);
  mlc_rt_gpu_unload_image(image);
  return 0;
}

static int no_driver_child(void) {
  if (every_call_fails(CUDA, "no CUDA driver (/nonexistent/libcuda.so.1: cannot open shared object file")) return 1;
  if (every_call_fails(ROCM, "no ROCm driver (/nonexistent/libamdhip64.so: cannot open")) return 1;
  double secs = 1;
  CHECK_ERROR(mlc_rt_gpu_timer_stop(NULL, &secs), "NULL timer");
  CHECK(secs == 0);
  CHECK_ERROR(mlc_rt_gpu_init(3), "unknown GPU kind 3");
  int32_t n;
  CHECK_ERROR(mlc_rt_gpu_device_count(CUDA, NULL), "NULL count");
  CHECK_ERROR(mlc_rt_gpu_device_count(1, &n), "unknown GPU kind 1");
  return 0;
}

static void test_no_driver_every_call_fails_cleanly(void **state) {
  in_child(no_driver_child, "/nonexistent/libcuda.so.1", "/nonexistent/libamdhip64.so");
}

/* With the default library names: either a driver is there, or the message
 * names the library that was looked for. */
static int default_names_child(void) {
  if (mlc_rt_gpu_init(CUDA) != 0) {
    const char *e = mlc_last_error();
    CHECK(strncmp(e, "no CUDA driver (libcuda.so.1: ", 30) == 0 || strncmp(e, "CUDA driver: ", 13) == 0);
    printf("# CUDA: %s\n", e);
  }
  if (mlc_rt_gpu_init(ROCM) != 0) {
    const char *e = mlc_last_error();
    CHECK(strncmp(e, "no ROCm driver (libamdhip64.so: ", 32) == 0 || strncmp(e, "ROCm driver: ", 13) == 0);
    printf("# ROCm: %s\n", e);
  }
  return 0;
}

static void test_default_driver_names_in_message(void **state) { in_child(default_names_child, NULL, NULL); }

/* ------------------------------------------------------------------------ */
/* The fake driver                                                           */
/* ------------------------------------------------------------------------ */

/* The fake's counter `name` (the runtime opened the same file). */
static int counter(const char *name) {
  void *lib = dlopen(fake_path, RTLD_NOW | RTLD_NOLOAD);
  int *p = lib ? dlsym(lib, name) : NULL;
  int v = p ? *p : -1;
  if (lib) dlclose(lib);
  return v;
}

static int fake_devices_child(void) {
  CHECK(mlc_rt_gpu_init(CUDA) == 0);
  int32_t n = 0;
  CHECK(mlc_rt_gpu_device_count(CUDA, &n) == 0 && n == 2);
  mlc_rt_gpu_props_t p;
  CHECK(mlc_rt_gpu_device_props(CUDA, 0, &p) == 0);
  CHECK(strcmp(p.name, "Fake GPU 90") == 0 && strcmp(p.arch, "sm_90") == 0);
  CHECK(strcmp(p.driver_version, "12.4") == 0);
  CHECK(p.total_memory == (int64_t)80 << 30 && p.multiprocessors == 132 && p.clock_khz == 1980000);
  CHECK(p.memory_clock_khz == 2619000 && p.max_threads_per_block == 1024 && p.warp_size == 32);
  CHECK(p.max_shared_memory_per_block == 48 * 1024 && p.registers_per_block == 65536 && p.l2_cache_bytes == 1 << 20);
  CHECK(mlc_rt_gpu_device_props(CUDA, 1, &p) == 0 && strcmp(p.arch, "sm_80") == 0 && p.multiprocessors == 108);
  CHECK_ERROR(mlc_rt_gpu_device_props(CUDA, 2, &p), "CUDA device 2 does not exist (2 devices: 0..1)");
  CHECK_ERROR(mlc_rt_gpu_device_props(CUDA, -1, &p), "CUDA device -1 does not exist");
  /* ROCm stays unavailable beside it. */
  CHECK_ERROR(mlc_rt_gpu_init(ROCM), "no ROCm driver");
  return 0;
}

static void test_fake_devices_and_properties(void **state) {
  SKIP_WITHOUT_FAKE();
  in_child(fake_devices_child, fake_path, "/nonexistent/libamdhip64.so");
}

static int fake_memory_child(void) {
  float host[256], back[256];
  for (int i = 0; i < 256; i++) host[i] = (float)i * 0.5f;
  for (int dev = 0; dev < 2; dev++) {
    void *d = NULL;
    CHECK(mlc_rt_gpu_alloc(CUDA, dev, sizeof host, &d) == 0 && d);
    CHECK(mlc_rt_gpu_copy_to_device(CUDA, dev, d, host, sizeof host) == 0);
    memset(back, 0, sizeof back);
    CHECK(mlc_rt_gpu_copy_to_host(CUDA, dev, back, d, sizeof back) == 0);
    CHECK(memcmp(host, back, sizeof host) == 0);
    CHECK(mlc_rt_gpu_sync(CUDA, dev) == 0);
    CHECK(mlc_rt_gpu_free(CUDA, dev, d) == 0);
  }
  void *z = (void *)1;
  CHECK(mlc_rt_gpu_alloc(CUDA, 0, 0, &z) == 0 && z == NULL); /* nothing: NULL */
  CHECK(mlc_rt_gpu_copy_to_device(CUDA, 0, NULL, NULL, 0) == 0);
  CHECK_ERROR(mlc_rt_gpu_copy_to_device(CUDA, 0, NULL, host, 4), "NULL destination");
  CHECK_ERROR(mlc_rt_gpu_copy_to_host(CUDA, 0, back, NULL, 4), "NULL source");
  CHECK_ERROR(mlc_rt_gpu_alloc(CUDA, 0, (uint64_t)1 << 40, &z), "cuMemAlloc: CUDA_ERROR_OUT_OF_MEMORY");
  CHECK(z == NULL);
  CHECK_ERROR(mlc_rt_gpu_alloc(CUDA, 5, 16, &z), "CUDA device 5 does not exist");
  CHECK(counter("fake_cuda_allocs") == 2 && counter("fake_cuda_frees") == 2);
  return 0;
}

static void test_fake_memory_round_trip(void **state) {
  SKIP_WITHOUT_FAKE();
  in_child(fake_memory_child, fake_path, NULL);
}

static const char image_a[] = "// fake ptx: add_one fault";
static const char image_b[] = "// fake ptx: add_one";
static const char image_bad[] = "not ptx at all";

static int add_one(const char *image, size_t size, float *d, int32_t n, uint32_t block, uint32_t shared) {
  uint32_t grid[3] = {((uint32_t)n + block - 1) / block, 1, 1}, blk[3] = {block, 1, 1};
  void *args[] = {&d, &n};
  return mlc_rt_gpu_launch(CUDA, 0, image, size, "add_one", grid, blk, shared, args);
}

static int fake_launch_child(void) {
  float host[100];
  for (int i = 0; i < 100; i++) host[i] = (float)i;
  void *d = NULL;
  CHECK(mlc_rt_gpu_alloc(CUDA, 0, sizeof host, &d) == 0);
  CHECK(mlc_rt_gpu_copy_to_device(CUDA, 0, d, host, sizeof host) == 0);
  CHECK(add_one(image_a, sizeof image_a, d, 100, 32, 0) == 0);
  CHECK(add_one(image_a, sizeof image_a, d, 100, 64, 0) == 0);
  CHECK(counter("fake_cuda_module_loads") == 1); /* cached */
  CHECK(add_one(image_b, sizeof image_b, d, 100, 128, 0) == 0);
  CHECK(counter("fake_cuda_module_loads") == 2);
  CHECK(mlc_rt_gpu_sync(CUDA, 0) == 0);
  CHECK(mlc_rt_gpu_copy_to_host(CUDA, 0, host, d, sizeof host) == 0);
  for (int i = 0; i < 100; i++) CHECK(host[i] == (float)i + 3);
  /* Dynamic shared memory above 48 KiB is opted into. */
  CHECK(add_one(image_a, sizeof image_a, d, 100, 32, 96 * 1024) == 0);
  CHECK_ERROR(add_one(image_a, sizeof image_a, d, 100, 32, 300 * 1024), "CUDA_ERROR_INVALID_VALUE");
  /* Driver errors by name, with the kernel and its launch. */
  CHECK_ERROR(add_one(image_bad, sizeof image_bad, d, 100, 32, 0), "cuModuleLoadData: CUDA_ERROR_INVALID_PTX");
  CHECK_ERROR(add_one(image_a, sizeof image_a, d, 100, 2048, 0),
              "kernel add_one (grid 1x1x1, block 2048x1x1, 0 bytes of dynamic shared memory): cuLaunchKernel: "
              "CUDA_ERROR_INVALID_VALUE");
  const uint32_t one[3] = {1, 1, 1}, zero[3] = {0, 1, 1};
  CHECK_ERROR(mlc_rt_gpu_launch(CUDA, 0, image_b, sizeof image_b, "fault", one, one, 0, NULL),
              "cuModuleGetFunction(fault): CUDA_ERROR_NOT_FOUND");
  CHECK_ERROR(mlc_rt_gpu_launch(CUDA, 0, image_b, sizeof image_b, "add_one", zero, one, 0, NULL),
              "has a zero dimension");
  CHECK_ERROR(mlc_rt_gpu_launch(CUDA, 0, NULL, 0, "add_one", one, one, 0, NULL), "NULL or empty argument");
  /* Unloading an image: its module goes, the next launch loads it again. */
  mlc_rt_gpu_unload_image(image_b);
  CHECK(counter("fake_cuda_module_unloads") == 1);
  CHECK(add_one(image_b, sizeof image_b, d, 100, 32, 0) == 0);
  CHECK(counter("fake_cuda_module_loads") == 3);
  /* A kernel's fault surfaces at the next sync. */
  CHECK(mlc_rt_gpu_launch(CUDA, 0, image_a, sizeof image_a, "fault", one, one, 0, NULL) == 0);
  CHECK_ERROR(mlc_rt_gpu_sync(CUDA, 0), "cuStreamSynchronize: CUDA_ERROR_ILLEGAL_ADDRESS");
  CHECK(mlc_rt_gpu_free(CUDA, 0, d) == 0);
  return 0;
}

static void test_fake_launch_through_cache(void **state) {
  SKIP_WITHOUT_FAKE();
  in_child(fake_launch_child, fake_path, NULL);
}

static int fake_timer_child(void) {
  mlc_rt_gpu_timer_t *t = NULL;
  CHECK(mlc_rt_gpu_timer_start(CUDA, 1, &t) == 0 && t);
  usleep(20000);
  double secs = -1;
  CHECK(mlc_rt_gpu_timer_stop(t, &secs) == 0);
  CHECK(secs >= 0.015 && secs < 5);
  CHECK(mlc_rt_gpu_flush_l2(CUDA, 1) == 0);
  CHECK(counter("fake_cuda_memset_bytes_last") == 2 << 20); /* twice the L2 */
  CHECK(mlc_rt_gpu_flush_l2(CUDA, 1) == 0);
  CHECK(counter("fake_cuda_allocs") == 1); /* the flush buffer is kept */
  /* A stream set for this thread reaches the driver (the fake ignores it). */
  mlc_rt_gpu_set_stream(CUDA, 1, NULL);
  CHECK_ERROR(mlc_rt_gpu_timer_start(CUDA, 9, &t), "CUDA device 9 does not exist");
  return 0;
}

static void test_fake_timer_and_l2_flush(void **state) {
  SKIP_WITHOUT_FAKE();
  in_child(fake_timer_child, fake_path, NULL);
}

static int forked_user(void) {
  void *d = NULL;
  if (mlc_rt_gpu_alloc(CUDA, 0, 16, &d) == 0) return 1;
  return strstr(mlc_last_error(), "CUDA was initialised before this process was forked") ? 0 : 2;
}

static int fake_fork_child(void) {
  CHECK(mlc_rt_gpu_init(CUDA) == 0);
  fflush(NULL);
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) _exit(forked_user());
  int status = 0;
  CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0);
  void *d = NULL; /* the parent still can */
  CHECK(mlc_rt_gpu_alloc(CUDA, 0, 16, &d) == 0 && mlc_rt_gpu_free(CUDA, 0, d) == 0);
  return 0;
}

static void test_fake_forked_child_refused(void **state) {
  SKIP_WITHOUT_FAKE();
  in_child(fake_fork_child, fake_path, NULL);
}

/* ------------------------------------------------------------------------ */
/* A real GPU                                                                */
/* ------------------------------------------------------------------------ */

/* add_one(float *x, int n) in PTX for any GPU from sm_50 on (the driver
 * compiles it for the device). */
static const char add_one_ptx[] =
    ".version 6.0\n"
    ".target sm_50\n"
    ".address_size 64\n"
    ".visible .entry add_one(.param .u64 x, .param .u32 n)\n"
    "{\n"
    "  .reg .pred %p<2>;\n"
    "  .reg .b32 %r<6>;\n"
    "  .reg .f32 %f<3>;\n"
    "  .reg .b64 %rd<5>;\n"
    "  ld.param.u64 %rd1, [x];\n"
    "  ld.param.u32 %r1, [n];\n"
    "  mov.u32 %r2, %ctaid.x;\n"
    "  mov.u32 %r3, %ntid.x;\n"
    "  mov.u32 %r4, %tid.x;\n"
    "  mad.lo.s32 %r5, %r2, %r3, %r4;\n"
    "  setp.ge.s32 %p1, %r5, %r1;\n"
    "  @%p1 bra DONE;\n"
    "  cvta.to.global.u64 %rd2, %rd1;\n"
    "  mul.wide.s32 %rd3, %r5, 4;\n"
    "  add.s64 %rd4, %rd2, %rd3;\n"
    "  ld.global.f32 %f1, [%rd4];\n"
    "  add.f32 %f2, %f1, 0f3F800000;\n"
    "  st.global.f32 [%rd4], %f2;\n"
    "DONE:\n"
    "  ret;\n"
    "}\n";

static int real_gpu_child(void) {
  if (mlc_rt_gpu_init(CUDA) != 0) {
    printf("# skipped: %s\n", mlc_last_error());
    return 0;
  }
  mlc_rt_gpu_props_t p;
  CHECK(mlc_rt_gpu_device_props(CUDA, 0, &p) == 0);
  printf("# device 0: %s, %s, driver %s, %d SMs\n", p.name, p.arch, p.driver_version, (int)p.multiprocessors);
  enum { N = 1 << 20 };
  float *host = malloc(N * sizeof *host);
  CHECK(host);
  for (int i = 0; i < N; i++) host[i] = (float)(i % 1000);
  void *d = NULL;
  int rc = mlc_rt_gpu_alloc(CUDA, 0, N * sizeof *host, &d) != 0 ||
           mlc_rt_gpu_copy_to_device(CUDA, 0, d, host, N * sizeof *host) != 0;
  mlc_rt_gpu_timer_t *t = NULL;
  int32_t n = N;
  void *args[] = {&d, &n};
  const uint32_t grid[3] = {N / 256, 1, 1}, block[3] = {256, 1, 1};
  rc = rc || mlc_rt_gpu_timer_start(CUDA, 0, &t) != 0 ||
       mlc_rt_gpu_launch(CUDA, 0, add_one_ptx, sizeof add_one_ptx, "add_one", grid, block, 0, args) != 0;
  double secs = -1;
  rc = rc || mlc_rt_gpu_timer_stop(t, &secs) != 0 || mlc_rt_gpu_sync(CUDA, 0) != 0 ||
       mlc_rt_gpu_flush_l2(CUDA, 0) != 0 || mlc_rt_gpu_sync(CUDA, 0) != 0 ||
       mlc_rt_gpu_copy_to_host(CUDA, 0, host, d, N * sizeof *host) != 0;
  bool right = rc == 0;
  for (int i = 0; right && i < N; i++) right = host[i] == (float)(i % 1000) + 1;
  free(host);
  mlc_rt_gpu_free(CUDA, 0, d);
  CHECK(rc == 0);
  CHECK(right);
  CHECK(secs > 0 && secs < 1);
  printf("# add_one over %d floats: %.1f us\n", N, secs * 1e6);
  return 0;
}

static void test_real_gpu_round_trip(void **state) { in_child(real_gpu_child, NULL, NULL); }

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_no_driver_every_call_fails_cleanly),
      cmocka_unit_test(test_default_driver_names_in_message),
      cmocka_unit_test(test_fake_devices_and_properties),
      cmocka_unit_test(test_fake_memory_round_trip),
      cmocka_unit_test(test_fake_launch_through_cache),
      cmocka_unit_test(test_fake_timer_and_l2_flush),
      cmocka_unit_test(test_fake_forked_child_refused),
      cmocka_unit_test(test_real_gpu_round_trip),
  };
  return cmocka_run_group_tests(tests, fake_cuda_setup, fake_cuda_teardown);
}
