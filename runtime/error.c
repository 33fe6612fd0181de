/*
 * error.c - the thread-local last error of generated code: a kernel that
 * rejects its arguments (or a parallel task that fails) formats a message
 * with mlc_rt_error and returns nonzero; the caller reads it on the same
 * thread with mlc_last_error(). The thread pool copies a failing worker's
 * message to the calling thread (pool.c), so the message always reaches the
 * thread that called the kernel.
 *
 * A fixed buffer per thread: no allocation, nothing to free at thread exit,
 * and safe inside an emitted shared library that may be dlclose'd.
 */
#include "runtime_priv.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static _Thread_local char rt_last_error[MLC_RT_ERROR_MAX];

int32_t mlc_rt_error(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(rt_last_error, sizeof rt_last_error, fmt, ap);
  va_end(ap);
  return -1;
}

const char *mlc_last_error(void) { return rt_last_error; }

void mlc_rt_error_copy(char *dst, size_t len) {
  size_t n = strnlen(rt_last_error, len - 1);
  memcpy(dst, rt_last_error, n);
  dst[n] = '\0';
}

void mlc_rt_error_set_str(const char *msg) {
  size_t n = strnlen(msg, sizeof rt_last_error - 1);
  memcpy(rt_last_error, msg, n);
  rt_last_error[n] = '\0';
}
