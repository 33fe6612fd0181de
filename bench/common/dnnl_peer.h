/*
 * dnnl_peer.h - oneDNN (the C API of libdnnl 2.x) as a contender of
 * bench_workloads, in this process: the matmul primitive for GMM and BMM
 * (plain row-major operands, as the workloads and sgemm take them),
 * convolution forward for C2D (algorithm auto; oneDNN picks the layouts of
 * source, weights and destination through format_tag any, and the inputs
 * are reordered into them once, outside the timed part, as a framework
 * does for a model's weights and between layers of one layout), softmax
 * forward (v2, accurate) and layer normalisation forward (inference, scale
 * and shift) for SFM and LN. The timed part is the primitive's execution
 * and the stream's wait, nothing else.
 *
 * Threads: the Debian build runs on OpenMP (libgomp); the thread count is
 * set with omp_set_num_threads before a primitive is created (oneDNN sizes
 * its work split then) and before every timed run.
 *
 * The code needs <dnnl.h> and libdnnl: call these functions only where
 * the program was built with MLC_HAVE_DNNL (CMake found oneDNN and links
 * it); without the header this file compiles to stubs that say so.
 */
#ifndef MLC_BENCH_DNNL_PEER_H
#define MLC_BENCH_DNNL_PEER_H

#include "bench/common/workload.h"

/* One line on the library: "oneDNN 2.6.3 (<hash>), CPU runtime OpenMP,
 * threads set with omp_set_num_threads", or why it is unavailable. */
void bench_dnnl_describe(char *buf, size_t len);

/* Makes c the oneDNN contender for problem p (borrowed: it must outlive c)
 * as case ci, with its primitive created for `threads` threads (the count
 * the harness then times it with). Returns false with the reason in why
 * (the failing call and oneDNN's status) when the primitive cannot be made.
 * bench_contender_free releases it. */
bool bench_dnnl_init(bench_contender_t *c, const bench_wl_problem_t *p, int ci, int threads, char *why, size_t len);

#endif /* MLC_BENCH_DNNL_PEER_H */
