/*
 * measure_timer.c - timing a loaded kernel as TVM's time_evaluator does:
 * each repeat runs the kernel back to back until the repeat lasts
 * min_repeat_ms, so that clock resolution and call overhead vanish for
 * small kernels, and records the mean time of one call. A repeat starts
 * with a chunk of `number` calls (the caller's value for the first repeat,
 * the count the previous repeat needed for the others); while the calls so
 * far fall short, it goes on with a chunk sized from their mean to reach
 * min_repeat_ms (5% over it), timing every chunk and adding up. TVM's
 * time_evaluator instead throws away a batch that falls short and starts
 * over with a larger `number`: the same statistic, but a 10 ms kernel then
 * costs 3 + 12 calls for a 100 ms repeat where continuing costs 3 + 8.
 *
 * With flush_cache, a buffer larger than the last-level cache is written
 * before each repeat (not between its chunks), so every repeat starts from
 * cold caches (the kernel's first call pays for it, amortised over the
 * repeat's calls as in TVM).
 */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "workers/measure_internal.h"

#define FLUSH_DEFAULT_BYTES ((size_t)64 << 20)
/* Aim a chunk this far past the threshold so noise rarely forces another
 * (short) one. */
#define CHUNK_MARGIN 1.05
#define MAX_NUMBER (INT_MAX / 2)

/* The last-level cache's size from /sys (e.g. "266240K"), 0 when unknown. */
static size_t llc_from_sys(void) {
  size_t best = 0;
  for (int index = 0; index < 8; index++) {
    char path[96], text[64];
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", index);
    FILE *f = fopen(path, "r");
    if (!f) continue;
    char *line = fgets(text, sizeof text, f);
    fclose(f);
    if (!line) continue;
    char *end;
    unsigned long long v = strtoull(text, &end, 10);
    if (*end == 'K') v <<= 10;
    else if (*end == 'M') v <<= 20;
    if (v > best) best = (size_t)v; /* the largest level is the last one */
  }
  return best;
}

size_t measure_flush_bytes(void) {
  size_t llc = 0;
#ifdef _SC_LEVEL3_CACHE_SIZE
  long v = sysconf(_SC_LEVEL3_CACHE_SIZE);
  if (v > 0) llc = (size_t)v;
#endif
  if (!llc) llc = llc_from_sys();
  return llc ? llc + llc / 4 : FLUSH_DEFAULT_BYTES;
}

typedef struct {
  unsigned char *buf;
  size_t bytes;
  unsigned char round;
} flusher_t;

/* Writes every byte of the flush buffer (a different value each time) and
 * reads one back through a volatile, so the stores cannot be dropped. */
static void flush_caches(flusher_t *fl) {
  memset(fl->buf, ++fl->round, fl->bytes);
  volatile unsigned char sink = fl->buf[fl->bytes - 1];
  (void)sink;
}

typedef struct {
  mlc_packed_fn_t fn;
  DLTensor *args;
  int nargs;
  flusher_t fl;
} cpu_batch_t;

/* measure_batch_fn on the CPU: the flush (when asked, at a repeat's
 * start), then `number` back-to-back calls timed with the monotonic clock. */
static bool cpu_batch(void *ctx, mlc_measure_result_t *out, int number, bool starts_repeat, double *secs) {
  cpu_batch_t *b = ctx;
  if (b->fl.buf && starts_repeat) flush_caches(&b->fl);
  int32_t rc = 0;
  double t0 = measure_now();
  for (int i = 0; i < number; i++) rc |= b->fn(b->args, b->nargs);
  *secs = measure_now() - t0;
  if (rc == 0) return true;
  const char *msg = mlc_last_error();
  measure_fail(out, MLC_ERROR_KIND_RUN, "%s", *msg ? msg : "the kernel returned an error");
  return false;
}

/* The next chunk of a repeat whose `calls` calls so far lasted `elapsed` s,
 * short of `target` s: sized from their mean to reach the target, or as
 * many calls again when the clock saw no time pass. */
static int next_chunk(int calls, double elapsed, double target) {
  double want = elapsed > 0 ? ceil((target - elapsed) / (elapsed / calls) * CHUNK_MARGIN) : (double)calls;
  if (want < 1) want = 1;
  double room = (double)(MAX_NUMBER - calls);
  return want >= room ? (int)room : (int)want;
}

/* One repeat: seconds per call into *secs; *number is the chunk to start
 * with, and becomes the calls the repeat took. */
static bool one_repeat(mlc_measure_result_t *out, double *secs, int *number, const mlc_measure_options_t *opts,
                       measure_batch_fn batch, void *ctx) {
  double target = opts->min_repeat_ms * 1e-3;
  double elapsed = 0;
  int calls = 0, chunk = *number;
  for (;;) {
    double t = 0;
    if (!batch(ctx, out, chunk, calls == 0, &t)) return false;
    elapsed += t;
    calls += chunk;
    if (elapsed >= target || calls >= MAX_NUMBER) break;
    chunk = next_chunk(calls, elapsed, target);
  }
  *secs = elapsed / calls;
  *number = calls;
  return true;
}

bool measure_repeats(mlc_measure_result_t *out, int *number_out, const mlc_measure_options_t *opts,
                     measure_batch_fn batch, void *ctx) {
  int number = opts->number;
  bool ok = true;
  out->nrun_secs = 0;
  for (int r = 0; ok && r < opts->repeat; r++) {
    ok = one_repeat(out, &out->run_secs[r], &number, opts, batch, ctx);
    if (ok) out->nrun_secs = r + 1;
    /* Far slower than the best known (the GPU path's slow_secs; the CPU
     * path already stopped at its warm-up when that was slow): one repeat. */
    if (ok && r == 0 && opts->slow_secs > 0 && out->run_secs[0] > opts->slow_secs) break;
  }
  if (number_out) *number_out = number;
  return ok;
}

bool measure_time(mlc_measure_result_t *out, int *number_out, mlc_packed_fn_t fn, DLTensor *args,
                  int nargs, const mlc_measure_options_t *opts) {
  cpu_batch_t b = {.fn = fn, .args = args, .nargs = nargs};
  if (opts->flush_cache) {
    b.fl.bytes = measure_flush_bytes();
    b.fl.buf = mlc_malloc(b.fl.bytes);
    if (!b.fl.buf) {
      measure_fail(out, MLC_ERROR_KIND_RUN, "no memory for the %zu-byte cache flush buffer", b.fl.bytes);
      return false;
    }
  }
  bool ok = measure_repeats(out, number_out, opts, cpu_batch, &b);
  mlc_free(b.fl.buf);
  return ok;
}
