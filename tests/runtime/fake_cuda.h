/*
 * fake_cuda.h - builds tests/runtime/fake_cuda.c (a test double of
 * libcuda.so.1) into a shared library for the GPU tests, which load it
 * through MLC_CUDA_DRIVER.
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

#endif /* MLC_TESTS_FAKE_CUDA_H */
