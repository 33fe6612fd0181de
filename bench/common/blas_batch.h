/*
 * blas_batch.h - OpenBLAS as the peer of a batched matrix multiply (BMM):
 * one cblas_sgemm per batch (OpenBLAS 0.3.21 has no batched sgemm), in a
 * forked child per OPENBLAS_CORETYPE setting as blas_peer.h does for GEMM
 * and C2D (OpenBLAS picks its kernels when it is loaded).
 *
 * Fork before the process starts any thread or LLVM. The child closes
 * every descriptor it inherited but its own pipes, so it never keeps
 * another child's pipe open. Threads: openblas_set_num_threads per
 * request; OPENBLAS_THREAD_TIMEOUT=20 as blas_peer.c sets it.
 */
#ifndef MLC_BENCH_BLAS_BATCH_H
#define MLC_BENCH_BLAS_BATCH_H

#include "bench/common/workload.h"

/* Forks the child for `coretype` (NULL: unset, as detected) serving BMM
 * problem p (borrowed; kind BENCH_WL_BMM) as case ci of the harness, and
 * makes c its contender, named "OpenBLAS <core> (<coretype or detected>),
 * B sgemm calls". Returns false, with a line on stderr, when OpenBLAS
 * cannot be loaded. bench_contender_free ends the child. */
bool bench_blas_batch_init(bench_contender_t *c, const char *coretype, const bench_wl_problem_t *p, int ci);

#endif /* MLC_BENCH_BLAS_BATCH_H */
