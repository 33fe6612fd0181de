/*
 * stop.h - Ctrl-C in the tuning benchmarks (bench_tune, bench_workloads,
 * bench_gpu_gemm): the first one sets bench_stop_requested, which the
 * benchmark passes as the tuner's stop flag (tuning ends after its running
 * round) and checks between its steps; a second one ends the program.
 * And the tuner's options as the tuning benchmarks start from.
 */
#ifndef MLC_BENCH_STOP_H
#define MLC_BENCH_STOP_H

#include <stdint.h>

#include "search/search.h"

/* Nonzero once SIGINT arrived after bench_catch_sigint. */
extern volatile int bench_stop_requested;

/* Installs the SIGINT handler (once per program; no errors). */
void bench_catch_sigint(void);

/* ms_tune_options_default with trials and seed, bench_stop_requested as the
 * stop flag, and a progress line where stderr is a terminal. */
void bench_tune_options(ms_tune_options_t *to, int trials, uint64_t seed);

#endif /* MLC_BENCH_STOP_H */
