/*
 * fake_cuda.h - builds tests/runtime/fake_cuda.c (a test double of
 * libcuda.so.1) into a shared library for the GPU tests, which load it
 * through MLC_CUDA_DRIVER, and the cmocka group setup and teardown that do
 * it once per test program.
 */
#ifndef MLC_TESTS_FAKE_CUDA_H
#define MLC_TESTS_FAKE_CUDA_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Compiles the double into a fresh temporary directory; its path into out.
 * false (with why) when there is no C compiler. */
static inline bool fake_cuda_build(char *out, size_t len, char *why, size_t why_len) {
  char dir[] = "/tmp/mlc-fake-cuda-XXXXXX";
  if (!mkdtemp(dir)) {
    snprintf(why, why_len, "mkdtemp failed");
    return false;
  }
  snprintf(out, len, "%s/libcuda.so.1", dir);
  char cmd[4096];
  int n = snprintf(cmd, sizeof cmd, "cc -shared -fPIC -O1 -o %s %s/runtime/fake_cuda.c 2>&1", out, MLC_TEST_DIR);
  if (n < 0 || (size_t)n >= sizeof cmd || system(cmd) != 0) {
    snprintf(why, why_len, "cannot compile the fake CUDA driver (cc)");
    return false;
  }
  return true;
}

/* Removes what fake_cuda_build made. */
static inline void fake_cuda_remove(const char *path) {
  char dir[1024];
  snprintf(dir, sizeof dir, "%s", path);
  char *slash = strrchr(dir, '/');
  remove(path);
  if (slash) {
    *slash = '\0';
    remove(dir);
  }
}

/* Points the runtime at these drivers (MLC_CUDA_DRIVER, MLC_HIP_RUNTIME;
 * NULL unsets the variable: the default names). */
static inline void use_driver(const char *cuda, const char *hip) {
  if (cuda) setenv("MLC_CUDA_DRIVER", cuda, 1);
  else unsetenv("MLC_CUDA_DRIVER");
  if (hip) setenv("MLC_HIP_RUNTIME", hip, 1);
  else unsetenv("MLC_HIP_RUNTIME");
}

/* A test program's fake driver: built by fake_cuda_setup (a cmocka group
 * setup) into fake_path, or have_fake false with why in fake_why; removed
 * by fake_cuda_teardown. */
static char fake_path[1024], fake_why[256];
static bool have_fake;

static inline int fake_cuda_setup(void **state) {
  (void)state;
  have_fake = fake_cuda_build(fake_path, sizeof fake_path, fake_why, sizeof fake_why);
  return 0;
}

static inline int fake_cuda_teardown(void **state) {
  (void)state;
  if (have_fake) fake_cuda_remove(fake_path);
  return 0;
}

/* In a cmocka test: skips it, saying why, when there is no fake driver. */
#define SKIP_WITHOUT_FAKE()                \
  do {                                     \
    if (!have_fake) {                      \
      printf("# skipped: %s\n", fake_why); \
      skip();                              \
    }                                      \
  } while (0)

#endif /* MLC_TESTS_FAKE_CUDA_H */
