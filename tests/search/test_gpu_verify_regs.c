/*
 * test_gpu_verify_regs.c - VerifyGPUCode's register check (docs/search/gpu.md):
 * hand-written TVMScript kernels whose per-thread storage ("local", "warp",
 * WMMA fragments) fits or does not fit the target's max_registers_per_thread
 * and registers_per_block, the target options that change the verdict, how
 * nested and side-by-side buffers count, and, where ptxas is installed, that
 * for design-space samples the bound fits in what ptxas gives the kernel
 * (registers, plus the stack frame where a local buffer is not promoted).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gpu_testing.h"
#include "tests/schedule/sched_testing.h"

/* One kernel of 4 blocks of `threads` threads; each thread fills its own
 * buffer L (rows x cols elements of dtype, in `scope`) and writes two of
 * them out. The caller frees it. */
static tir_func_t *kernel(const char *scope, const char *dtype, int64_t rows, int64_t cols, int64_t threads) {
  char src[2048];
  long long n = 4 * threads;
  snprintf(src, sizeof src,
           "@T.prim_func\n"
           "def main(A: T.Buffer((%lld,), \"%s\"), B: T.Buffer((%lld,), \"%s\")):\n"
           "    for bx in T.thread_binding(4, thread=\"blockIdx.x\"):\n"
           "        for tx in T.thread_binding(%lld, thread=\"threadIdx.x\"):\n"
           "            with T.block(\"K\"):\n"
           "                vi = T.axis.spatial(%lld, bx * %lld + tx)\n"
           "                T.reads(A[vi])\n"
           "                T.writes(B[vi])\n"
           "                L = T.alloc_buffer((%lld, %lld), \"%s\", scope=\"%s\")\n"
           "                for r, c in T.grid(%lld, %lld):\n"
           "                    L[r, c] = A[vi]\n"
           "                B[vi] = L[0, 0] + L[%lld, %lld]\n",
           n, dtype, n, dtype, (long long)threads, n, (long long)threads, (long long)rows, (long long)cols, dtype,
           scope, (long long)rows, (long long)cols, (long long)(rows - 1), (long long)(cols - 1));
  return st_parse(src);
}

/* A kernel of 4 threads (threadIdx.y) with WMMA fragments: `tiles` 16x16
 * float16 tiles of A loaded into a wmma.matrix_a buffer, then multiplied one
 * by one with a wmma.matrix_b tile into a float32 accumulator tile: per
 * thread tiles + 2 fragments of 32 bytes. */
static tir_func_t *fragment_kernel(int64_t tiles) {
  char src[2048];
  long long cols = 16 * tiles;
  snprintf(src, sizeof src,
           "@T.prim_func\n"
           "def main(A: T.Buffer((16, %lld), \"float16\"), C: T.Buffer((16, 16), \"float32\")):\n"
           "    for bx in T.thread_binding(1, thread=\"blockIdx.x\"):\n"
           "        for ty in T.thread_binding(4, thread=\"threadIdx.y\"):\n"
           "            with T.block(\"K\"):\n"
           "                T.reads(A[0:16, 0:%lld])\n"
           "                T.writes(C[0:16, 0:16])\n"
           "                F = T.alloc_buffer((16, %lld), \"float16\", scope=\"wmma.matrix_a\")\n"
           "                Fb = T.alloc_buffer((16, 16), \"float16\", scope=\"wmma.matrix_b\")\n"
           "                Acc = T.alloc_buffer((16, 16), \"float32\", scope=\"wmma.accumulator\")\n"
           "                for t in range(%lld):\n"
           "                    T.call_extern(\"handle\", \"tvm_load_matrix_sync\", F[0, t * 16], 16, 16, 16, "
           "A[0, t * 16], %lld, \"row_major\")\n"
           "                T.call_extern(\"handle\", \"tvm_load_matrix_sync\", Fb[0, 0], 16, 16, 16, A[0, 0], %lld, "
           "\"row_major\")\n"
           "                T.call_extern(\"handle\", \"tvm_fill_fragment\", Acc[0, 0], 16, 16, 16, T.float32(0))\n"
           "                for t in range(%lld):\n"
           "                    T.call_extern(\"handle\", \"tvm_mma_sync\", Acc[0, 0], F[0, t * 16], Fb[0, 0], "
           "Acc[0, 0])\n"
           "                T.call_extern(\"handle\", \"tvm_store_matrix_sync\", Acc[0, 0], 16, 16, 16, C[0, 0], 16, "
           "\"row_major\")\n",
           cols, cols, cols, (long long)tiles, cols, cols, (long long)tiles);
  return st_parse(src);
}

/* Two float32 buffers of `elems` per thread in `scope`, the second written
 * after the first; with `both_live`, from the first and read with it at the
 * end, so that both are live together. */
static tir_func_t *two_buffers(const char *scope, int64_t elems, bool both_live) {
  char src[2048];
  long long e = (long long)elems;
  snprintf(src, sizeof src,
           "@T.prim_func\n"
           "def main(A: T.Buffer((256,), \"float32\"), B: T.Buffer((256,), \"float32\")):\n"
           "    for bx in T.thread_binding(4, thread=\"blockIdx.x\"):\n"
           "        for tx in T.thread_binding(64, thread=\"threadIdx.x\"):\n"
           "            with T.block(\"K\"):\n"
           "                vi = T.axis.spatial(256, bx * 64 + tx)\n"
           "                T.reads(A[vi])\n"
           "                T.writes(B[vi])\n"
           "                L1 = T.alloc_buffer((%lld,), scope=\"%s\")\n"
           "                L2 = T.alloc_buffer((%lld,), scope=\"%s\")\n"
           "                for e in range(%lld):\n"
           "                    L1[e] = A[vi]\n"
           "                B[vi] = L1[%lld]\n"
           "                for e in range(%lld):\n"
           "                    L2[e] = %s\n"
           "                B[vi] = B[vi] + L2[0]%s\n",
           e, scope, e, scope, e, e - 1, e, both_live ? "A[vi] + L1[e]" : "A[vi]", both_live ? " + L1[0]" : "");
  return st_parse(src);
}

/* VerifyGPUCode alone on f (unscheduled) in ctx: its status. */
static int verify_in(const ms_ctx_t *ctx, const tir_func_t *f) {
  sch_t *sch;
  OK(sch_create(&sch, f, 0, SCH_ERRORS_FAST));
  const ms_postproc_t *v = ms_postproc_find("VerifyGPUCode");
  assert_non_null(v);
  mlc_error_clear();
  int rc = ms_postprocs_apply(ctx, &v, 1, sch);
  sch_free(sch);
  return rc;
}

static int verify(const tir_func_t *f, const char *target) {
  ms_ctx_t ctx;
  gpu_ctx(&ctx, f, target, 0);
  return verify_in(&ctx, f);
}

static void expect_ok(tir_func_t *f, const char *target) {
  int rc = verify(f, target);
  if (rc != MLC_OK) fprintf(stderr, "%s: %s\n", target, mlc_error_last());
  assert_int_equal(rc, MLC_OK);
}

static void expect_rejected(tir_func_t *f, const char *target, const char *why) {
  assert_int_equal(verify(f, target), MLC_ESCHEDULE);
  if (!strstr(mlc_error_last(), why)) fprintf(stderr, "got: %s\nwanted: %s\n", mlc_error_last(), why);
  assert_non_null(strstr(mlc_error_last(), why));
}

/* Both verdicts, each for a fresh kernel: the caller's kernels are freed. */
static void ok_then_free(tir_func_t *f, const char *target) {
  expect_ok(f, target);
  tir_func_free(f);
}

static void rejected_then_free(tir_func_t *f, const char *target, const char *why) {
  expect_rejected(f, target, why);
  tir_func_free(f);
}

#define ROCM "rocm -mcpu=gfx90a"

/* ------------------------------------------------------------------------ */
/* max_registers_per_thread and registers_per_block                          */
/* ------------------------------------------------------------------------ */

static void small_local_storage_passes(void **state) {
  (void)state;
  tir_func_t *f = kernel("local", "float32", 1, 16, 256);
  expect_ok(f, SM90);
  expect_ok(f, SM80);
  expect_ok(f, ROCM);
  tir_func_free(f);
  /* 510 halves: 1020 bytes, 255 registers; 511: 1022 bytes, 256 */
  ok_then_free(kernel("local", "float16", 1, 510, 64), SM90);
  rejected_then_free(kernel("local", "float16", 1, 511, 64), SM90,
                     "at least 256 registers per thread for local storage (1022 bytes)");
}

static void local_storage_over_registers_per_thread_is_rejected(void **state) {
  (void)state;
  rejected_then_free(kernel("local", "float32", 1, 300, 64), SM90,
                     "VerifyGPUCode: kernel 0: at least 300 registers per thread for local storage (1200 bytes), "
                     "more than max_registers_per_thread 255 of cuda -arch=sm_90");
  tir_func_t *f = kernel("local", "float32", 1, 2048, 64);
  expect_rejected(f, SM80, "VerifyGPUCode: kernel 0: at least 2048 registers per thread for local storage "
                           "(8192 bytes), more than max_registers_per_thread 255 of cuda -arch=sm_80");
  expect_rejected(f, ROCM, "at least 2048 registers per thread for local storage (8192 bytes), more than "
                           "max_registers_per_thread 512 of rocm -mcpu=gfx90a");
  tir_func_free(f);
  ok_then_free(kernel("local", "float32", 1, 500, 64), ROCM); /* 500 VGPRs: gfx90a has 512 */
}

static void local_storage_of_the_block_over_registers_per_block_is_rejected(void **state) {
  (void)state;
  /* 128 registers: 256 threads take 32768 of 65536, 1024 threads 131072 */
  ok_then_free(kernel("local", "float32", 1, 128, 256), SM90);
  tir_func_t *f = kernel("local", "float32", 1, 128, 1024);
  expect_rejected(f, SM90, "VerifyGPUCode: kernel 0: at least 128 registers per thread for local storage "
                           "(512 bytes) x 1024 threads = 131072, more than registers_per_block 65536 of cuda "
                           "-arch=sm_90");
  expect_ok(f, ROCM); /* a CU's 4 SIMDs x 512 VGPRs x 64 lanes */
  tir_func_free(f);
  rejected_then_free(kernel("local", "float32", 1, 129, 1024), ROCM,
                     "x 1024 threads = 132096, more than registers_per_block 131072 of rocm -mcpu=gfx90a");
  /* registers are reserved for whole warps: 65 x 1000 = 65000 fits, 65 x 1024 does not */
  rejected_then_free(kernel("local", "float32", 1, 65, 1000), SM90,
                     "at least 65 registers per thread for local storage (260 bytes) x 1024 threads (1000 rounded "
                     "up to whole warps) = 66560, more than registers_per_block 65536");
  ok_then_free(kernel("local", "float32", 1, 64, 1000), SM90);
}

static void target_options_change_the_verdict(void **state) {
  (void)state;
  tir_func_t *f = kernel("local", "float32", 1, 128, 256);
  expect_ok(f, SM90);
  expect_rejected(f, SM90 " -max_registers_per_thread=64",
                  "VerifyGPUCode: kernel 0: at least 128 registers per thread for local storage (512 bytes), more "
                  "than max_registers_per_thread 64 of cuda -arch=sm_90 -max_registers_per_thread=64");
  expect_ok(f, SM90 " -registers_per_block=32768");
  expect_rejected(f, SM90 " -registers_per_block=16384",
                  "x 256 threads = 32768, more than registers_per_block 16384 of cuda -arch=sm_90 "
                  "-registers_per_block=16384");
  expect_rejected(f, ROCM " -max_registers_per_thread=100", "more than max_registers_per_thread 100 of rocm");
  tir_func_free(f);
  f = kernel("local", "float32", 1, 2048, 64);
  expect_ok(f, SM90 " -max_registers_per_thread=2048 -registers_per_block=131072");
  /* a target without register limits (a hand-made one) checks none */
  ms_ctx_t ctx;
  gpu_ctx(&ctx, f, SM90, 0);
  ctx.target.max_registers_per_thread = 0;
  ctx.target.registers_per_block = 0;
  assert_int_equal(verify_in(&ctx, f), MLC_OK);
  tir_func_free(f);
}

/* ------------------------------------------------------------------------ */
/* What counts                                                               */
/* ------------------------------------------------------------------------ */

/* A warp buffer is spread over 32 lanes; a WMMA tile is 8 registers per
 * lane whatever its dtype (16 float16 of a matrix_a tile in 8 registers). */
static void warp_buffers_and_fragments_count_per_lane(void **state) {
  (void)state;
  ok_then_free(kernel("warp", "float32", 32, 64, 64), SM90); /* 8192 bytes, 256 per lane */
  rejected_then_free(kernel("local", "float32", 32, 64, 64), SM90, "at least 2048 registers per thread");
  rejected_then_free(kernel("warp", "float32", 32, 1024, 64), SM90,
                     "at least 1024 registers per thread for local storage (4096 bytes)");
  ok_then_free(fragment_kernel(14), SM90); /* 16 tiles: 128 registers */
  /* 32 tiles: 256 registers (bytes / 32 would say 132) */
  rejected_then_free(fragment_kernel(30), SM90,
                     "VerifyGPUCode: kernel 0: at least 256 registers per thread for local storage (1024 bytes), "
                     "more than max_registers_per_thread 255");
}

/* Buffers used one after the other share registers (lowering gives them one
 * allocation); buffers live together add up. */
static void buffers_live_together_add_up(void **state) {
  (void)state;
  ok_then_free(two_buffers("local", 200, false), SM90);
  rejected_then_free(two_buffers("local", 200, true), SM90,
                     "at least 400 registers per thread for local storage (1600 bytes)");
}

/* ------------------------------------------------------------------------ */
/* The bound against ptxas                                                   */
/* ------------------------------------------------------------------------ */

/* What ptxas -v says of the candidate's kernel (design-space samples have
 * one): registers and stack-frame bytes. False when it does not build. */
static bool ptxas_usage(const ms_candidate_t *c, int *regs, int *frame) {
  mlc_target_t t;
  OK(mlc_target_parse(&t, SM90));
  char path[32], cmd[512], line[512];
  if (write_device_code(c, &t, path, "mlc_verify_regs") != MLC_OK) return false;
  snprintf(cmd, sizeof cmd, PTXAS " -v -arch=sm_90 %s -o /dev/null 2>&1", path);
  FILE *p = popen(cmd, "r");
  assert_non_null(p);
  *regs = *frame = -1;
  while (fgets(line, sizeof line, p)) {
    const char *used = strstr(line, "Used ");
    if (used) assert_int_equal(sscanf(used, "Used %d registers", regs), 1);
    if (strstr(line, "bytes stack frame")) assert_int_equal(sscanf(line, " %d bytes stack frame", frame), 1);
  }
  assert_int_equal(pclose(p), 0);
  unlink(path);
  assert_true(*regs >= 0 && *frame >= 0);
  return true;
}

/* The smallest max_registers_per_thread VerifyGPUCode accepts the
 * candidate with (registers per block unlimited): its bound. */
static int bound_of(const ms_candidate_t *c) {
  int lo = 1, hi = 4096;
  char t[128];
  while (lo < hi) {
    int mid = (lo + hi) / 2;
    snprintf(t, sizeof t, SM90 " -max_registers_per_thread=%d -registers_per_block=%d", mid, 1 << 30);
    if (verify(sch_func(c->sch), t) == MLC_OK) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

/* For valid samples of GMM's and C2D's spaces, the storage the bound counts
 * is somewhere: in ptxas's registers, or (loops over a local buffer not
 * unrolled) in the kernel's stack frame. Skipped without ptxas. */
static void the_bound_holds_for_design_space_samples(void **state) {
  (void)state;
  SKIP_WITHOUT_PTXAS();
  static const struct { const char *name; int64_t shape[9]; int n; } cases[] = {
      {"GMM", {256, 256, 256}, 3}, {"C2D", {1, 14, 14, 64, 64, 3, 3, 1, 1}, 9}};
  int largest = 0;
  for (size_t w = 0; w < sizeof cases / sizeof cases[0]; w++) {
    tir_func_t *f = NULL;
    tir_dtype_t acc = {0, 0, 0};
    OK(tir_workload_build(&f, cases[w].name, cases[w].shape, cases[w].n, tir_dt_FLOAT32(), acc));
    ms_ctx_t ctx;
    ms_space_t space;
    gpu_ctx(&ctx, f, SM90, 5);
    make_space(&space, &ctx, NULL, 0);
    int npp, checked = 0;
    const ms_postproc_t *const *pp = ms_postprocs_default(&ctx, &npp);
    for (int s = 0; s < 200 && checked < 4; s++) {
      ms_candidate_t c;
      if (ms_candidate_make(&c, &ctx, space.traces[0], false, 700 + (uint64_t)s, pp, npp) != MLC_OK) continue;
      int regs, frame, bound = bound_of(&c);
      if (ptxas_usage(&c, &regs, &frame)) {
        if (bound > regs + frame / 4)
          fprintf(stderr, "%s seed %d: bound %d, ptxas %d registers and %d bytes of stack\n", f->name, s, bound,
                  regs, frame);
        assert_true(bound <= regs + frame / 4);
        largest = bound > largest ? bound : largest;
        checked++;
      }
      ms_candidate_free(&c);
    }
    assert_true(checked > 0);
    ms_space_free(&space);
    tir_func_free(f);
  }
  assert_true(largest >= 8); /* samples with real local storage were among them */
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(small_local_storage_passes),
      cmocka_unit_test(local_storage_over_registers_per_thread_is_rejected),
      cmocka_unit_test(local_storage_of_the_block_over_registers_per_block_is_rejected),
      cmocka_unit_test(target_options_change_the_verdict),
      cmocka_unit_test(warp_buffers_and_fragments_count_per_lane),
      cmocka_unit_test(buffers_live_together_add_up),
      cmocka_unit_test(the_bound_holds_for_design_space_samples),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
