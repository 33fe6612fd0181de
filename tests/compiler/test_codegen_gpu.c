/*
 * test_codegen_gpu.c - the GPU code generators without a GPU: every
 * built-in workload under two GPU schedules (the GPU default schedule, and
 * the same binding with 32-thread blocks), and a tiled GMM (2-D tiles over
 * blockIdx/threadIdx, shared-memory read caches filled by a cooperative
 * fetch bound to threadIdx, a local write cache) are lowered for cuda; the
 * lowered program (thread loops run one after another) must give the
 * reference interpreter's result on the scheduled one, and the generated
 * PTX for sm_80 and sm_90 must assemble with ptxas (skipped, with the
 * reason printed, when ptxas is not installed). The tiled GMM is also
 * built for rocm -mcpu=gfx90a: its HSACO must hold the kernel and
 * s_barrier instructions (llvm-objdump). Errors: host code touching a
 * buffer, an AMDGPU processor this LLVM lacks, a device image of a CPU
 * module.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>
#include <cmocka.h>

#include "gpu_test_helpers.h"
#include "small_workloads.h"

static sch_t *gpu_default(tir_func_t *f, const char *target_str) {
  mlc_target_t t;
  assert_int_equal(mlc_target_parse(&t, target_str), MLC_OK);
  sch_t *sch = NULL;
  assert_int_equal(sch_create(&sch, f, 1, SCH_ERRORS_RICH), MLC_OK);
  assert_int_equal(mlc_default_schedule(sch, &t), MLC_OK);
  return sch;
}

/* ------------------------------------------------------------------------ */
/* Tests                                                                     */
/* ------------------------------------------------------------------------ */

static void test_every_workload_under_two_gpu_schedules_lowers_right_and_assembles(void **state) {
  (void)state;
  static const char *const schedules[] = {"cuda -arch=sm_80", "cuda -arch=sm_80 -max_threads_per_block=32"};
  if (!ptxas_path()) printf("note: ptxas not found (PATH, /usr/local/cuda/bin, $PTXAS): PTX not assembled\n");
  for (size_t w = 0; w < sizeof workloads / sizeof workloads[0]; w++) {
    tir_func_t *f = NULL;
    assert_int_equal(tir_workload_build(&f, workloads[w].name, workloads[w].shape, workloads[w].nshape,
                                        tir_dt_FLOAT32(), (tir_dtype_t){0, 0, 0}), MLC_OK);
    for (int s = 0; s < 2; s++) {
      sch_t *sch = gpu_default(f, schedules[s]);
      check_lowered(sch_func(sch), 1e-5);
      check_ptx(sch_func(sch));
      sch_free(sch);
    }
    tir_func_free(f);
  }
}

/* GMM 64x64x32: 8x16 threads of 2x2 results, k in steps of 8 through
 * shared tiles of A (16x8) and B (8x32) fetched by all 128 threads. */
static const char *tiled_gmm =
    "b0 = sch.get_block(name=\"C\", func_name=\"main\")\n"
    "l1, l2, l3 = sch.get_loops(block=b0)\n"
    "l4, l5, l6 = sch.split(loop=l1, factors=[None, 8, 2], preserve_unit_iters=True, disable_predication=False)\n"
    "l7, l8, l9 = sch.split(loop=l2, factors=[None, 16, 2], preserve_unit_iters=True, disable_predication=False)\n"
    "l10, l11 = sch.split(loop=l3, factors=[None, 8], preserve_unit_iters=True, disable_predication=False)\n"
    "sch.reorder(l4, l7, l5, l8, l10, l11, l6, l9)\n"
    "l12 = sch.fuse(l4, l7, preserve_unit_iters=True)\n"
    "sch.bind(loop=l12, thread_axis=\"blockIdx.x\")\n"
    "l13 = sch.fuse(l5, l8, preserve_unit_iters=True)\n"
    "sch.bind(loop=l13, thread_axis=\"threadIdx.x\")\n"
    "b14 = sch.cache_write(block=b0, write_buffer_index=0, storage_scope=\"local\")\n"
    "sch.reverse_compute_at(block=b14, loop=l13, preserve_unit_loops=True, index=-1)\n"
    "b15 = sch.cache_read(block=b0, read_buffer_index=0, storage_scope=\"shared\", consumer_blocks=[b0])\n"
    "sch.compute_at(block=b15, loop=l10, preserve_unit_loops=True, index=-1)\n"
    "l16, l17, l18, l19, l20 = sch.get_loops(block=b15)\n"
    "l21 = sch.fuse(l19, l20, preserve_unit_iters=True)\n"
    "l22, l23 = sch.split(loop=l21, factors=[None, 128], preserve_unit_iters=True, disable_predication=False)\n"
    "sch.bind(loop=l23, thread_axis=\"threadIdx.x\")\n"
    "b24 = sch.cache_read(block=b0, read_buffer_index=1, storage_scope=\"shared\", consumer_blocks=[b0])\n"
    "sch.compute_at(block=b24, loop=l10, preserve_unit_loops=True, index=-1)\n"
    "l25, l26, l27, l28, l29 = sch.get_loops(block=b24)\n"
    "l30 = sch.fuse(l28, l29, preserve_unit_iters=True)\n"
    "l31, l32 = sch.split(loop=l30, factors=[None, 128], preserve_unit_iters=True, disable_predication=False)\n"
    "sch.bind(loop=l32, thread_axis=\"threadIdx.x\")\n";

static sch_t *tiled(tir_func_t **f, const char *trace_src) {
  int64_t shape[3] = {64, 64, 32};
  assert_int_equal(tir_workload_build(f, "GMM", shape, 3, tir_dt_FLOAT32(), (tir_dtype_t){0, 0, 0}), MLC_OK);
  return schedule_py(*f, trace_src);
}

static void test_tiled_gmm_with_shared_tiles_gets_barriers_and_assembles(void **state) {
  (void)state;
  tir_func_t *f = NULL;
  sch_t *sch = tiled(&f, tiled_gmm);
  check_lowered(sch_func(sch), 1e-5);
  /* fetch, barrier, compute, barrier before the next iteration's fetch */
  assert_true(check_ptx(sch_func(sch)) >= 2);
  sch_free(sch);
  tir_func_free(f);
}

static void test_tiled_gmm_for_gfx90a_is_a_code_object_with_barriers(void **state) {
  (void)state;
  tir_func_t *f = NULL;
  sch_t *sch = tiled(&f, tiled_gmm);
  mlc_module_t *m = build_rocm_or_skip(sch_func(sch), "rocm -mcpu=gfx90a");
  if (m) {
    char path[] = "/tmp/mlc-gpu-test-XXXXXX.hsaco", cmd[2048];
    int fd = mkstemps(path, 6);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(mlc_module_emit(m, MLC_EMIT_DEVICE, path), MLC_OK);
    static char out[1 << 20];
    snprintf(cmd, sizeof cmd, "llvm-objdump -d -t --mcpu=gfx90a '%s' 2>&1 || llvm-objdump-14 -d -t --mcpu=gfx90a '%s' 2>&1",
             path, path);
    if (run_cmd(cmd, out, sizeof out) != 0 && !strstr(out, "gmm_kernel0")) {
      printf("note: llvm-objdump not usable, code object not inspected: %.200s\n", out);
    } else {
      assert_non_null(strstr(out, "gmm_kernel0"));
      assert_true(count(out, "s_barrier") >= 2);
    }
    unlink(path);
    char *text = mlc_module_text(m, MLC_EMIT_ASM); /* AMDGPU assembly */
    assert_non_null(text);
    assert_non_null(strstr(text, "s_barrier"));
    mlc_free(text);
  }
  mlc_module_free(m);
  sch_free(sch);
  tir_func_free(f);
}

/* The tiled GMM with its shared tiles in "shared.dyn": slices of the
 * dynamic shared memory (A's 512 bytes at 0, B's 1024 at 512), sized by the
 * launch (1536 = 0x600 bytes, an immediate in the host code's call of
 * mlc_rt_gpu_launch), within the target's limit. */
static void test_dynamic_shared_tiles_are_slices_the_launch_sizes(void **state) {
  (void)state;
  char trace[4096], *p;
  snprintf(trace, sizeof trace, "%s", tiled_gmm);
  while ((p = strstr(trace, "\"shared\""))) { /* "shared" -> "shared.dyn" */
    memmove(p + 11, p + 7, strlen(p + 7) + 1);
    memcpy(p, "\"shared.dyn\"", 12);
  }
  tir_func_t *f = NULL;
  sch_t *sch = tiled(&f, trace);
  check_lowered(sch_func(sch), 1e-5);
  assert_true(check_ptx(sch_func(sch)) >= 2);
  mlc_module_t *m = build_for(sch_func(sch), "cuda -arch=sm_80");
  char *ptx = mlc_module_text(m, MLC_EMIT_ASM);
  assert_non_null(ptx);
  assert_non_null(strstr(ptx, ".extern .shared .align 16 .b8 __mlc_dyn_shared[];"));
  assert_null(strstr(ptx, ".shared .align 16 .b8 A_shared")); /* no static arrays */
  mlc_free(ptx);
  char obj[] = "/tmp/mlc-gpu-test-XXXXXX.o", cmd[1024], out[1 << 16];
  int fd = mkstemps(obj, 2);
  assert_true(fd >= 0);
  close(fd);
  assert_int_equal(mlc_module_emit(m, MLC_EMIT_OBJ, obj), MLC_OK);
  snprintf(cmd, sizeof cmd, "objdump -d -r '%s' 2>&1 | grep -B12 'mlc_rt_gpu_launch' | grep -c '\\$0x600'", obj);
  if (run_cmd("command -v objdump >/dev/null 2>&1 && echo yes", out, sizeof out) != 0 || !strstr(out, "yes")) {
    printf("note: objdump not found: the launch's dynamic shared size is not inspected\n");
  } else {
    assert_int_equal(run_cmd(cmd, out, sizeof out), 0);
    assert_true(atoi(out) >= 1);
  }
  unlink(obj);
  mlc_module_free(m);
  /* over a limit given in the target */
  mlc_target_t t;
  assert_int_equal(mlc_target_parse(&t, "cuda -arch=sm_80 -max_shared_memory_per_block=1024"), MLC_OK);
  tir_func_t *fs = sch_func(sch);
  assert_int_equal(mlc_build(&m, &fs, 1, &t, NULL), MLC_EUNSUPPORTED);
  assert_non_null(strstr(mlc_error_last(), "exceeds the target's limit per block with B_shared_dyn"));
  sch_free(sch);
  tir_func_free(f);
}

/* C = A + B over 64 x 128 of dtype dt (buffers declared `align` bytes),
 * rows on blocks, each thread `lanes` consecutive elements vectorized. */
static sch_t *vector_add(tir_func_t **f, const char *dt, int align, int lanes) {
  char src[1024], py[1024];
  snprintf(src, sizeof src,
           "@T.prim_func\n"
           "def ewadd(A: T.Buffer((64, 128), \"%s\", align=%d), B: T.Buffer((64, 128), \"%s\", align=%d),\n"
           "          C: T.Buffer((64, 128), \"%s\", align=%d)):\n"
           "    T.func_attr({\"global_symbol\": \"ewadd\", \"tir.noalias\": T.bool(True)})\n"
           "    for i, j in T.grid(64, 128):\n"
           "        with T.block(\"C\"):\n"
           "            vi, vj = T.axis.remap(\"SS\", [i, j])\n"
           "            C[vi, vj] = A[vi, vj] + B[vi, vj]\n",
           dt, align, dt, align, dt, align);
  snprintf(py, sizeof py,
           "b0 = sch.get_block(name=\"C\", func_name=\"main\")\n"
           "l1, l2 = sch.get_loops(block=b0)\n"
           "l3, l4 = sch.split(loop=l2, factors=[None, %d], preserve_unit_iters=True, disable_predication=False)\n"
           "sch.bind(loop=l1, thread_axis=\"blockIdx.x\")\n"
           "sch.bind(loop=l3, thread_axis=\"threadIdx.x\")\n"
           "sch.vectorize(loop=l4)\n",
           lanes);
  assert_int_equal(tir_parse_func(f, src, strlen(src), "ewadd.py", NULL), MLC_OK);
  return schedule_py(*f, py);
}

/* 16-byte accesses at provably aligned addresses (declared buffer
 * alignment, index a multiple of the lanes) are one vector instruction;
 * without the declared alignment they stay scalar. */
static void test_aligned_vector_accesses_are_v4_loads_and_stores(void **state) {
  (void)state;
  static const struct { const char *dt; int align, lanes; const char *ld, *st; int want; } cases[] = {
      {"float32", 16, 4, "ld.global.nc.v4.f32", "st.global.v4.f32", 1},
      {"float16", 16, 8, "ld.global.nc.v4.b32", "st.global.v4.b32", 1},
      {"float32", 0, 4, "ld.global.nc.v4.f32", "st.global.v4.f32", 0},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    tir_func_t *f = NULL;
    sch_t *sch = vector_add(&f, cases[i].dt, cases[i].align, cases[i].lanes);
    check_lowered(sch_func(sch), 0.0);
    int loads = check_ptx_count(sch_func(sch), cases[i].ld);
    char *ptx = asm_for(sch_func(sch), "cuda -arch=sm_80");
    int stores = count(ptx, cases[i].st);
    if (cases[i].want ? (loads != 2 || stores != 1) : (loads != 0 || stores != 0))
      fprintf(stderr, "%s align %d: %d %s, %d %s:\n%s\n", cases[i].dt, cases[i].align, loads, cases[i].ld, stores,
              cases[i].st, ptx);
    assert_int_equal(loads, cases[i].want ? 2 : 0);
    assert_int_equal(stores, cases[i].want ? 1 : 0);
    mlc_free(ptx);
    sch_free(sch);
    tir_func_free(f);
  }
}

/* The JIT finds the device image in the host code (to unload the runtime's
 * modules of it when freed), loaded from the module and from an object. */
static void test_gpu_host_code_loads_in_the_jit_with_its_image(void **state) {
  (void)state;
  int64_t shape[3] = {16, 16, 8};
  tir_func_t *f = NULL;
  assert_int_equal(tir_workload_build(&f, "GMM", shape, 3, tir_dt_FLOAT32(), (tir_dtype_t){0, 0, 0}), MLC_OK);
  sch_t *sch = gpu_default(f, "cuda -arch=sm_80");
  mlc_module_t *m = build_for(sch_func(sch), "cuda -arch=sm_80");
  char path[] = "/tmp/mlc-gpu-test-XXXXXX.o";
  int fd = mkstemps(path, 2);
  assert_true(fd >= 0);
  close(fd);
  assert_int_equal(mlc_module_emit(m, MLC_EMIT_OBJ, path), MLC_OK);
  mlc_jit_t *jit = NULL;
  if (mlc_jit_load(&jit, m) != MLC_OK) fprintf(stderr, "jit: %s\n", mlc_error_last());
  assert_non_null(mlc_jit_lookup(jit, "gmm"));
  mlc_jit_free(jit);
  jit = NULL;
  if (mlc_jit_load_object(&jit, path) != MLC_OK) fprintf(stderr, "jit object: %s\n", mlc_error_last());
  assert_non_null(mlc_jit_lookup(jit, "gmm"));
  assert_null(mlc_jit_lookup(jit, "__mlc_gpu_image")); /* data, not an exported function */
  mlc_jit_free(jit);
  unlink(path);
  sch_free(sch);
  tir_func_free(f);
}

static void test_unbound_loops_and_unknown_processors_are_refused(void **state) {
  (void)state;
  int64_t shape[3] = {16, 16, 8};
  tir_func_t *f = NULL;
  assert_int_equal(tir_workload_build(&f, "GMM", shape, 3, tir_dt_FLOAT32(), (tir_dtype_t){0, 0, 0}), MLC_OK);
  mlc_target_t t;
  mlc_module_t *m = NULL;
  assert_int_equal(mlc_target_parse(&t, "cuda -arch=sm_80"), MLC_OK);
  assert_int_equal(mlc_build(&m, &f, 1, &t, NULL), MLC_EUNSUPPORTED);
  assert_non_null(strstr(mlc_error_last(), "gmm: loop i is not bound to a GPU thread"));
  assert_null(m);
  assert_int_equal(mlc_target_parse(&t, "rocm -mcpu=gfx942"), MLC_OK);
  sch_t *sch = gpu_default(f, "rocm -mcpu=gfx942");
  tir_func_t *sf = sch_func(sch);
  int rc = mlc_build(&m, &sf, 1, &t, NULL);
#if LLVM_VERSION_MAJOR < 17
  assert_int_equal(rc, MLC_EUNSUPPORTED);
  assert_non_null(strstr(mlc_error_last(), "gfx942"));
#else
  assert_int_equal(rc, MLC_OK);
#endif
  mlc_module_free(m);
  m = NULL;
  assert_int_equal(mlc_target_parse(&t, "llvm"), MLC_OK);
  assert_int_equal(mlc_build(&m, &f, 1, &t, NULL), MLC_OK);
  assert_int_equal(mlc_module_emit(m, MLC_EMIT_DEVICE, "/tmp/never-written.ptx"), MLC_EINVAL);
  mlc_module_free(m);
  sch_free(sch);
  tir_func_free(f);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_every_workload_under_two_gpu_schedules_lowers_right_and_assembles),
      cmocka_unit_test(test_tiled_gmm_with_shared_tiles_gets_barriers_and_assembles),
      cmocka_unit_test(test_dynamic_shared_tiles_are_slices_the_launch_sizes),
      cmocka_unit_test(test_tiled_gmm_for_gfx90a_is_a_code_object_with_barriers),
      cmocka_unit_test(test_aligned_vector_accesses_are_v4_loads_and_stores),
      cmocka_unit_test(test_gpu_host_code_loads_in_the_jit_with_its_image),
      cmocka_unit_test(test_unbound_loops_and_unknown_processors_are_refused),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
