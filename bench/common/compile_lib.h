/*
 * compile_lib.h - the functions of a shared library the compiler emitted
 * (mlc_compile_module + mlc_module_emit(MLC_EMIT_SO), what `mlc-compile`
 * writes) as contenders of the timing harness (harness.h), called the way
 * a user calls them: dlopen'd, through the DLPack ABI, with the library's
 * own runtime and thread pool. For bench_compile.
 *
 * Arguments are made as the measurement makes them (workers/measure.h):
 * one 64-byte-aligned buffer per parameter, random values in [1, 10) from
 * a seeded generator; the expected result is the reference interpreter's
 * on the same values. Float32 buffers of constant shape only (the example
 * module's functions).
 */
#ifndef MLC_BENCH_COMPILE_LIB_H
#define MLC_BENCH_COMPILE_LIB_H

#include <dlpack/dlpack.h>

#include "bench/common/harness.h"
#include "tir/tir.h"

/* A loaded library. */
typedef struct bench_so bench_so_t;

/* dlopens path (RTLD_NOW | RTLD_LOCAL) and looks up its mlc_last_error and
 * mlc_rt_set_num_threads (the copy of the runtime inside it; the thread
 * pool is linked in only when some function has a parallel loop, so the
 * second may be absent: the thread count then does not matter). *out is
 * owned by the caller (bench_so_free), NULL on failure. MLC_EIO with
 * dlerror's message, MLC_ENOTFOUND without mlc_last_error (not a library
 * the compiler emitted), MLC_ENOMEM. */
int bench_so_open(bench_so_t **out, const char *path);
/* dlcloses the library (its pool threads stop); NULL is fine. Close it
 * only after every contender using it is freed. */
void bench_so_free(bench_so_t *so);

/* The arguments of one function and the interpreter's result on them. */
typedef struct bench_args bench_args_t;

/* Allocates f's arguments (every parameter a float32 buffer of constant
 * shape: MLC_EINVAL naming the parameter otherwise), fills each with
 * values in [1, 10) from `seed`, and runs f (unscheduled, borrowed for the
 * call only) in the reference interpreter on copies to keep its result.
 * *out owned (bench_args_free), NULL on failure; the interpreter's errors
 * are returned as they are. */
int bench_args_new(bench_args_t **out, const tir_func_t *f, uint64_t seed);
void bench_args_free(bench_args_t *a); /* NULL is fine */

/* Makes c a contender named `name` with no functions yet; the caller frees
 * it with bench_contender_free (libraries and arguments stay the
 * caller's). */
void bench_so_contender_init(bench_contender_t *c, const char *name);
/* Adds function `fn_name` of so for case ci, called on args (both borrowed:
 * they must outlive c). Calls it once to prove the call works (a shape or
 * dtype mismatch is reported here with the library's mlc_last_error, not
 * in a timing loop). MLC_ENOTFOUND when the library has no such function,
 * MLC_ERUNTIME when the call fails, MLC_ENOMEM. */
int bench_so_contender_add(bench_contender_t *c, int ci, bench_so_t *so, const char *fn_name, bench_args_t *args);

#endif /* MLC_BENCH_COMPILE_LIB_H */
