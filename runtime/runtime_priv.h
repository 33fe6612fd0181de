/*
 * runtime_priv.h - private to runtime/: limits and the helpers the thread
 * pool uses to move an error message from a worker to the calling thread.
 */
#ifndef MLC_RUNTIME_PRIV_H
#define MLC_RUNTIME_PRIV_H

#include <stddef.h>

#include "runtime/runtime.h"

/* Longest last-error message kept (bytes, NUL included); longer ones are cut. */
#define MLC_RT_ERROR_MAX 1024
/* Most threads the pool runs (the caller included). */
#define MLC_RT_MAX_THREADS 256

/* Copies the calling thread's last error into dst (len > 0 bytes). */
void mlc_rt_error_copy(char *dst, size_t len);
/* Replaces the calling thread's last error with msg. */
void mlc_rt_error_set_str(const char *msg);

#endif /* MLC_RUNTIME_PRIV_H */
