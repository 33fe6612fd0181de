/*
 * runtime.h - what generated code calls at run time: the thread-local last
 * error behind mlc_last_error(), and the thread pool that runs parallel loops.
 *
 * This folder is compiled position-independent into libmlc_runtime.a, which
 * the compiler links into every shared library it emits and registers with
 * its JIT, so a generated .so depends on nothing but libc and pthreads. It
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

/* Runs `fn` over [0, extent) split into contiguous chunks, one per worker
 * (at most num_threads, <= 0 for the pool's size), and waits. The calling
 * thread takes part. Workers are created on first use and kept alive; a
 * nested call runs serially in the caller. Returns the first nonzero task
 * result, or 0. */
int32_t mlc_rt_parallel_for(mlc_rt_task_fn fn, void *closure, int64_t extent, int32_t num_threads);
/* Sets the pool's size (default: the CPUs in the process's affinity mask, or
 * MLC_NUM_THREADS from the environment). */
void mlc_rt_set_num_threads(int32_t n);
int32_t mlc_rt_num_threads(void);

#ifdef __cplusplus
}
#endif
#endif /* MLC_RUNTIME_H */
