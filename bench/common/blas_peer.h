/*
 * blas_peer.h - OpenBLAS as a contender (the peer of GEMM benchmarks):
 * cblas_sgemm (for C2D: im2col on one thread, then sgemm) in a forked
 * child per OPENBLAS_CORETYPE setting, because OpenBLAS picks its kernels
 * when it is loaded. The child dlopens libopenblas.so.0 with its own
 * environment, inherits the inputs, and serves timing requests over pipes.
 *
 * Fork the children before the process starts any thread or LLVM (a forked
 * child of a threaded process may only call async-signal-safe functions).
 * Threads: openblas_set_num_threads per request. Idle OpenBLAS workers are
 * told to sleep after 2^20 cycles (OPENBLAS_THREAD_TIMEOUT=20) so they do
 * not take the CPU from the contender timed next.
 */
#ifndef MLC_BENCH_BLAS_PEER_H
#define MLC_BENCH_BLAS_PEER_H

#include "bench/common/harness.h"

/* Forks the child for `coretype` (NULL: OPENBLAS_CORETYPE unset, as
 * detected) serving the problems inputs[0..BENCH_MAX_CASES) (borrowed: a
 * case with no data is never asked for), and makes c its contender, named
 * "OpenBLAS <core> (<coretype or detected>)". Returns false, with a line on
 * stderr, when OpenBLAS cannot be loaded (c is then unused). The contender
 * owns the child: bench_contender_free ends it. */
bool bench_blas_init(bench_contender_t *c, const char *coretype, const bench_inputs_t *inputs);

/* openblas_get_config() of the last child loaded ("" before any). */
const char *bench_blas_config(void);

#endif /* MLC_BENCH_BLAS_PEER_H */
