/*
 * stop.c - Ctrl-C in the tuning benchmarks (stop.h).
 */
#include "bench/common/stop.h"

#include <signal.h>
#include <unistd.h>

volatile int bench_stop_requested;

static void on_sigint(int sig) {
  (void)sig;
  bench_stop_requested = 1;
}

void bench_catch_sigint(void) {
  struct sigaction sa = {.sa_handler = on_sigint, .sa_flags = SA_RESETHAND};
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, NULL); /* SA_RESETHAND: a second ^C kills */
}

void bench_tune_options(ms_tune_options_t *to, int trials, uint64_t seed) {
  ms_tune_options_default(to);
  to->trials = trials;
  to->seed = seed;
  to->stop = &bench_stop_requested;
  to->progress_tty = isatty(STDERR_FILENO);
}
