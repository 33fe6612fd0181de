/*
 * cublas_peer.h - cuBLAS GEMM as the peer of bench_gpu_gemm: C = A B
 * (row-major, A MxK, B KxN), fp32 with cublasSgemm or fp16 inputs with an
 * fp32 result on tensor cores (cublasGemmEx, CUBLAS_COMPUTE_32F,
 * CUBLAS_GEMM_DEFAULT_TENSOR_OP), on GPU `device`, timed as the workers time
 * a candidate (runtime event timers around `number` calls grown until one
 * repeat lasts min_repeat_ms; the median of `repeat` repeats).
 *
 * It runs in a forked child: the caller never loads CUDA, so it may go on
 * forking measurements. cuBLAS is dlopen'd (libcublas.so.13/.12/.11 or
 * libcublas.so, from the loader's path or /usr/local/cuda/lib64).
 */
#ifndef MLC_BENCH_CUBLAS_PEER_H
#define MLC_BENCH_CUBLAS_PEER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
  int device;
  int64_t m, n, k;
  bool fp16;          /* half inputs, float output, tensor cores */
  int repeat;         /* at most 64 */
  int min_repeat_ms;
} bench_cublas_case_t;

/* 0 with *secs (seconds per call) when cuBLAS ran and a sample of C agreed
 * with a float64 dot product on the host; -1 with why otherwise ("no CUDA
 * driver (...)", "no cuBLAS (libcublas.so.13: ...)", "cublasGemmEx: status
 * 15", "C[3, 5] is ..., expected ..."). */
int bench_cublas_gemm(double *secs, char *why, size_t len, const bench_cublas_case_t *c);

#endif /* MLC_BENCH_CUBLAS_PEER_H */
