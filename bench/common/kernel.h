/*
 * kernel.h - our kernels as contenders: a built-in workload scheduled by a
 * trace (TVM's Python form from bench/traces/, or the JSON a tuning record
 * holds), built with mlc_build for a target, loaded with mlc_jit_load and
 * called through the DLTensor ABI on a problem's inputs. Threads: the
 * runtime pool's size (mlc_rt_set_num_threads) per run.
 */
#ifndef MLC_BENCH_KERNEL_H
#define MLC_BENCH_KERNEL_H

#include "bench/common/harness.h"
#include "schedule/schedule.h"

/* bench/traces beside the sources (__FILE__ is the path CMake compiles,
 * absolute), so the programs run from any directory; "bench/traces" when
 * that is unknown. Borrowed (static). */
const char *bench_default_traces_dir(void);

/* c's workload at c's shape, float32 (owned by the caller: tir_func_free). */
int bench_case_workload(tir_func_t **out, const bench_case_t *c);

/* A fresh schedule of f with the trace replayed with its decisions: from a
 * file in TVM's Python form, or from a trace's JSON text. *out is owned by
 * the caller (sch_free). MLC_EIO / MLC_EPARSE / MLC_ESCHEDULE with the
 * detail in mlc_error_last() (the file or "trace" and what failed). */
int bench_schedule_python_file(sch_t **out, const tir_func_t *f, const char *path);
int bench_schedule_json(sch_t **out, const tir_func_t *f, const char *json_text);

typedef struct bench_kernel bench_kernel_t;

/* The most parameters a kernel may have (inputs and the one output). */
#define BENCH_KERNEL_MAX_ARGS 8

/* How wrong a kernel's output is against its problem's reference (the
 * contender's check; a NaN means wrong). */
typedef double (*bench_kernel_error_fn)(const float *out, const void *problem);

/* The general form: builds sch's program for target, loads it, binds its
 * parameters in order to inputs[0..nin) (borrowed; sizes[i] floats each)
 * and to an output of nout floats of its own, and runs it once on one
 * thread to prove the call works. `error` scores that output against
 * `problem` (borrowed: both must outlive the kernel) when the contender
 * checks it. dump as below. Errors: the compiler's, MLC_EINVAL when the
 * parameters do not match the arrays, MLC_ERUNTIME when the call fails. */
int bench_kernel_build_arrays(bench_kernel_t **out, const sch_t *sch, const mlc_target_t *target,
                              float *const *inputs, const size_t *sizes, int nin, size_t nout,
                              bench_kernel_error_fn error, const void *problem, const char *dump);

/* bench_kernel_build_arrays for a GEMM-shaped problem: inputs in->x and
 * in->y, scored by bench_max_rel_error (a shape or dtype mismatch is
 * reported here, not in a timing loop).
 * dump: NULL, "tir" (lowered TIR after each pass), "ll" or "asm" (the
 * optimised LLVM IR or the assembly), printed to stdout. *out is owned by
 * the caller (bench_kernel_free, or the contender that takes it). */
int bench_kernel_build(bench_kernel_t **out, const sch_t *sch, const mlc_target_t *target, const bench_inputs_t *in,
                       const char *dump);
void bench_kernel_free(bench_kernel_t *k); /* NULL is fine */

/* Makes c a contender named `name` (empty: fill c->name yourself) with no
 * kernels yet; add one per case with bench_kernel_contender_add, which
 * takes ownership of k. */
void bench_kernel_contender_init(bench_contender_t *c, const char *name);
void bench_kernel_contender_add(bench_contender_t *c, int ci, bench_kernel_t *k);

#endif /* MLC_BENCH_KERNEL_H */
