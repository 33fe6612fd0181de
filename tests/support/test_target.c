/*
 * test_target.c - target strings: parsing, the canonical form (different
 * spellings print alike, printing then parsing is the identity), features of
 * cross targets, GPU defaults, errors, and host detection.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <sched.h>
#include <stdio.h>
#include <string.h>

#include "support/support.h"

static int clear_error(void **state) {
  (void)state;
  mlc_error_clear();
  return 0;
}

/* Parses `str` (which must succeed) and returns its canonical form. */
static const char *canon(const char *str) {
  static char buf[512];
  mlc_target_t t;
  int rc = mlc_target_parse(&t, str);
  if (rc != MLC_OK) fail_msg("parse '%s': %s", str, mlc_error_last());
  return mlc_target_str(&t, buf, sizeof buf);
}

static void assert_same_target(const mlc_target_t *a, const mlc_target_t *b) {
  assert_int_equal(a->kind, b->kind);
  assert_string_equal(a->mcpu, b->mcpu);
  assert_string_equal(a->mtriple, b->mtriple);
  assert_string_equal(a->mattr, b->mattr);
  assert_string_equal(a->arch, b->arch);
  assert_int_equal(a->num_cores, b->num_cores);
  assert_int_equal(a->max_threads_per_block, b->max_threads_per_block);
  assert_int_equal(a->max_shared_memory_per_block, b->max_shared_memory_per_block);
  assert_int_equal(a->thread_warp_size, b->thread_warp_size);
  assert_int_equal(a->max_registers_per_thread, b->max_registers_per_thread);
  assert_int_equal(a->registers_per_block, b->registers_per_block);
  assert_int_equal(a->vector_width, b->vector_width);
  assert_int_equal(a->fast_math, b->fast_math);
}

/* parse(str(parse(s))) must equal parse(s), field by field. */
static void assert_round_trips(const char *str) {
  mlc_target_t a, b;
  char buf[512];
  assert_int_equal(mlc_target_parse(&a, str), MLC_OK);
  mlc_target_str(&a, buf, sizeof buf);
  if (mlc_target_parse(&b, buf) != MLC_OK) fail_msg("reparse '%s': %s", buf, mlc_error_last());
  assert_same_target(&a, &b);
}

/* ---- llvm ---------------------------------------------------------------- */

static void test_llvm_with_mcpu_parses_fields(void **state) {
  (void)state;
  mlc_target_t t;
  assert_int_equal(mlc_target_parse(&t, "llvm -mcpu=skylake-avx512 -num-cores=2"), MLC_OK);
  assert_int_equal(t.kind, MLC_TARGET_LLVM);
  assert_string_equal(t.mcpu, "skylake-avx512");
  assert_string_equal(t.mtriple, "x86_64-linux-gnu");
  assert_int_equal(t.num_cores, 2);
  assert_int_equal(t.vector_width, 512);
  assert_false(t.fast_math);
  assert_string_equal(canon("llvm -mcpu=skylake-avx512 -num-cores=2"),
                      "llvm -mcpu=skylake-avx512 -num-cores=2");
}

static void test_spellings_of_one_target_print_alike(void **state) {
  (void)state;
  const char *want = "llvm -mcpu=znver4 -num-cores=2";
  assert_string_equal(canon("llvm -mcpu=znver4 -num-cores=2"), want);
  assert_string_equal(canon("llvm -num-cores=2 -mcpu=znver4"), want);
  assert_string_equal(canon("llvm -mcpu znver4 -num-cores 2"), want);
  assert_string_equal(canon("  llvm\t-mcpu=znver4   -num-cores 2 "), want);
  assert_string_equal(canon("llvm -mcpu=znver4 -num-cores=2 -mtriple=x86_64-linux-gnu"), want);
  assert_string_equal(canon("llvm -mcpu=znver4 -num-cores=2 -mattr=+avx512f,+avx2"), want);
}

static void test_mcpu_implies_features_for_cross_targets(void **state) {
  (void)state;
  mlc_target_t t;
  assert_int_equal(mlc_target_parse(&t, "llvm -mcpu=cascadelake -num-cores=4"), MLC_OK);
  assert_true(mlc_target_has_feature(&t, "avx512f"));
  assert_true(mlc_target_has_feature(&t, "avx512vnni"));
  assert_true(mlc_target_has_feature(&t, "+fma"));
  assert_false(mlc_target_has_feature(&t, "avx512bf16"));
  assert_false(mlc_target_has_feature(&t, "avx512")); /* whole names only */
  assert_int_equal(mlc_target_parse(&t, "llvm -mcpu=haswell -num-cores=4"), MLC_OK);
  assert_true(mlc_target_has_feature(&t, "avx2"));
  assert_true(mlc_target_has_feature(&t, "fma"));
  assert_false(mlc_target_has_feature(&t, "avx512f"));
  assert_int_equal(t.vector_width, 256);
  assert_int_equal(mlc_target_parse(&t, "llvm -mcpu=sapphirerapids -num-cores=4"), MLC_OK);
  assert_true(mlc_target_has_feature(&t, "amx-int8"));
  assert_true(mlc_target_has_feature(&t, "avx512fp16"));
  assert_int_equal(mlc_target_parse(&t, "llvm -mcpu=znver3 -num-cores=4"), MLC_OK);
  assert_true(mlc_target_has_feature(&t, "avx2"));
  assert_false(mlc_target_has_feature(&t, "avx512f"));
  assert_int_equal(mlc_target_parse(&t, "llvm -mcpu=x86-64 -num-cores=4"), MLC_OK);
  assert_int_equal(t.vector_width, 128);
}

static void test_mattr_adds_and_removes_features(void **state) {
  (void)state;
  mlc_target_t t;
  assert_int_equal(mlc_target_parse(&t, "llvm -mcpu=haswell -num-cores=1 -mattr=+avx512f,-fma"),
                   MLC_OK);
  assert_true(mlc_target_has_feature(&t, "avx512f"));
  assert_false(mlc_target_has_feature(&t, "fma"));
  assert_int_equal(t.vector_width, 512);
  /* Only what differs from -mcpu is printed, sorted by name. */
  assert_string_equal(canon("llvm -mcpu=haswell -num-cores=1 -mattr=-fma,+avx512f,+avx2"),
                      "llvm -mcpu=haswell -mattr=+avx512f,-fma -num-cores=1");
  /* Turning off what the CPU lacks anyway changes nothing. */
  assert_string_equal(canon("llvm -mcpu=haswell -num-cores=1 -mattr=-avx512f"),
                      "llvm -mcpu=haswell -num-cores=1");
  /* Features the tables do not track are kept as given. */
  assert_string_equal(canon("llvm -mcpu=haswell -num-cores=1 -mattr=-sse4.1,+movbe"),
                      "llvm -mcpu=haswell -mattr=+movbe,-sse4.1 -num-cores=1");
  assert_string_equal(canon("llvm -mcpu=skylake-avx512 -num-cores=1 -mattr=-avx512f"),
                      "llvm -mcpu=skylake-avx512 -mattr=-avx512f -num-cores=1");
}

static void test_llvm_without_mcpu_is_the_host(void **state) {
  (void)state;
  mlc_target_t parsed, host;
  char a[512], b[512];
  assert_int_equal(mlc_target_parse(&parsed, "llvm"), MLC_OK);
  mlc_target_host(&host);
  assert_string_equal(mlc_target_str(&parsed, a, sizeof a), mlc_target_str(&host, b, sizeof b));
  assert_same_target(&parsed, &host);
  /* Explicit -mattr applies on top of the detected CPU. */
  assert_int_equal(mlc_target_parse(&parsed, "llvm -mtriple=x86_64-linux-gnu -mattr=+avx2,+fma"),
                   MLC_OK);
  assert_string_equal(parsed.mcpu, host.mcpu);
  assert_true(mlc_target_has_feature(&parsed, "avx2"));
  assert_true(mlc_target_has_feature(&parsed, "fma"));
}

static void test_host_detection_names_a_cpu_and_counts_cores(void **state) {
  (void)state;
  mlc_target_t host;
  char buf[512];
  mlc_target_host(&host);
  assert_int_equal(host.kind, MLC_TARGET_LLVM);
  assert_true(host.mcpu[0] != '\0');
  assert_true(host.num_cores >= 1);
  assert_true(host.vector_width == 128 || host.vector_width == 256 || host.vector_width == 512);
  assert_int_equal(host.vector_width == 512, mlc_target_has_feature(&host, "avx512f"));
  mlc_target_str(&host, buf, sizeof buf);
  printf("host target: %s\n", buf); /* for the log: what this machine is */
  assert_round_trips(buf);
}

/* A process confined to some CPUs (taskset, a container's cpuset) counts
 * those, not the machine's: the host target's -num-cores, and so the
 * parallel extent the search plans for. */
static void test_host_cores_follow_the_affinity_mask(void **state) {
  (void)state;
  cpu_set_t all, one;
  assert_int_equal(sched_getaffinity(0, sizeof all, &all), 0);
  assert_int_equal(mlc_cpu_host_cores(), CPU_COUNT(&all));
  if (CPU_COUNT(&all) < 2) {
    printf("skipped the one-CPU half: this process may run on a single CPU already\n");
    return;
  }
  int first = 0;
  while (!CPU_ISSET(first, &all)) first++;
  CPU_ZERO(&one);
  CPU_SET(first, &one);
  assert_int_equal(sched_setaffinity(0, sizeof one, &one), 0);
  int cores = mlc_cpu_host_cores();
  mlc_target_t host, parsed;
  mlc_target_host(&host);
  int parse_rc = mlc_target_parse(&parsed, "llvm -mcpu=skylake-avx512");
  assert_int_equal(sched_setaffinity(0, sizeof all, &all), 0); /* restore before asserting */
  assert_int_equal(cores, 1);
  assert_int_equal(host.num_cores, 1);
  assert_int_equal(parse_rc, MLC_OK);
  assert_int_equal(parsed.num_cores, 1);
}

static void test_non_x86_triple_without_mcpu_is_generic(void **state) {
  (void)state;
  assert_string_equal(canon("llvm -mtriple=aarch64-linux-gnu -num-cores=8"),
                      "llvm -mcpu=generic -mtriple=aarch64-linux-gnu -num-cores=8");
  assert_string_equal(canon("llvm -mcpu=neoverse-n1 -mtriple=aarch64-linux-gnu -num-cores=8"),
                      "llvm -mcpu=neoverse-n1 -mtriple=aarch64-linux-gnu -num-cores=8");
}

static void test_fast_math_flag_is_kept_and_printed_last(void **state) {
  (void)state;
  mlc_target_t t;
  assert_int_equal(mlc_target_parse(&t, "llvm -fast-math -mcpu=haswell -num-cores=2"), MLC_OK);
  assert_true(t.fast_math);
  assert_string_equal(canon("llvm -fast-math -mcpu=haswell -num-cores=2"),
                      "llvm -mcpu=haswell -num-cores=2 -fast-math");
  assert_string_equal(canon("llvm -fast-math=false -mcpu=haswell -num-cores=2"),
                      "llvm -mcpu=haswell -num-cores=2");
  assert_string_equal(canon("cuda -arch=sm_80 -fast-math"), "cuda -arch=sm_80 -fast-math");
}

static void test_canonical_strings_round_trip(void **state) {
  (void)state;
  const char *targets[] = {
      "llvm",
      "llvm -mcpu=icelake-server -num-cores=16 -mattr=-avx512vnni,+movbe -fast-math",
      "llvm -mcpu=core2 -mattr=+avx2,-sse4.1 -num-cores=3", /* a CPU LLVM knows, the table does not */
      "llvm -mtriple=aarch64-linux-gnu",
      "cuda -arch=sm_90 -max_threads_per_block=512 -thread_warp_size=32",
      "rocm -mcpu=gfx90a -max_shared_memory_per_block=32768",
      "cuda -arch=sm_80 -registers_per_block=32768 -max_registers_per_thread=128",
      "rocm -mcpu=gfx90a -max_registers_per_thread=256 -registers_per_block 65536",
  };
  for (size_t i = 0; i < sizeof targets / sizeof targets[0]; i++) assert_round_trips(targets[i]);
}

/* ---- gpus ------------------------------------------------------------------ */

static void test_cuda_defaults_and_both_option_spellings(void **state) {
  (void)state;
  mlc_target_t t;
  assert_int_equal(mlc_target_parse(&t, "cuda -arch=sm_90"), MLC_OK);
  assert_int_equal(t.kind, MLC_TARGET_CUDA);
  assert_string_equal(t.arch, "sm_90");
  assert_int_equal(t.max_threads_per_block, 1024);
  assert_int_equal(t.max_shared_memory_per_block, 49152);
  assert_int_equal(t.thread_warp_size, 32);
  assert_int_equal(t.max_registers_per_thread, 255);
  assert_int_equal(t.registers_per_block, 65536);
  assert_false(mlc_target_has_feature(&t, "avx2"));
  assert_string_equal(canon("cuda -arch=sm_90"), "cuda -arch=sm_90");
  assert_string_equal(canon("cuda -arch sm_80"), "cuda -arch=sm_80");
  assert_string_equal(canon("cuda -arch=sm_90a"), "cuda -arch=sm_90a");
}

static void test_gpu_limits_print_only_when_not_default(void **state) {
  (void)state;
  assert_string_equal(canon("cuda -max_threads_per_block=1024 -arch=sm_80"), "cuda -arch=sm_80");
  assert_string_equal(
      canon("cuda -thread_warp_size 32 -max_shared_memory_per_block=65536 -arch=sm_80 "
            "-max_threads_per_block=256"),
      "cuda -arch=sm_80 -max_threads_per_block=256 -max_shared_memory_per_block=65536");
}

/* The register limits: parsed, printed only when not the kind's default
 * (so that existing keys stay as they were), and printed after the shared
 * memory limit whatever order they were given in. */
static void test_gpu_register_limits_parse_and_print(void **state) {
  (void)state;
  mlc_target_t t;
  assert_int_equal(mlc_target_parse(&t, "cuda -arch=sm_90 -max_registers_per_thread=64 -registers_per_block 32768"),
                   MLC_OK);
  assert_int_equal(t.max_registers_per_thread, 64);
  assert_int_equal(t.registers_per_block, 32768);
  assert_int_equal(t.max_threads_per_block, 1024); /* the others keep their defaults */
  assert_string_equal(canon("cuda -registers_per_block=32768 -arch=sm_90 -max_registers_per_thread=64"),
                      "cuda -arch=sm_90 -max_registers_per_thread=64 -registers_per_block=32768");
  assert_string_equal(canon("cuda -arch=sm_90 -max_registers_per_thread=255 -registers_per_block=65536"),
                      "cuda -arch=sm_90");
  assert_string_equal(canon("rocm -mcpu=gfx90a -max_registers_per_thread=512 -registers_per_block=131072"),
                      "rocm -mcpu=gfx90a");
  assert_string_equal(canon("rocm -mcpu=gfx90a -registers_per_block=65536 -max_shared_memory_per_block=32768"),
                      "rocm -mcpu=gfx90a -max_shared_memory_per_block=32768 -registers_per_block=65536");
  assert_string_equal(canon("cuda -arch=sm_90 -registers_per_block=131072 -max_threads_per_block=512"),
                      "cuda -arch=sm_90 -max_threads_per_block=512 -registers_per_block=131072");
}

static void test_rocm_defaults(void **state) {
  (void)state;
  mlc_target_t t;
  assert_int_equal(mlc_target_parse(&t, "rocm -mcpu=gfx90a"), MLC_OK);
  assert_int_equal(t.kind, MLC_TARGET_ROCM);
  assert_string_equal(t.mcpu, "gfx90a");
  assert_int_equal(t.thread_warp_size, 64);
  assert_int_equal(t.max_threads_per_block, 1024);
  assert_int_equal(t.max_shared_memory_per_block, 65536);
  assert_int_equal(t.max_registers_per_thread, 512);
  assert_int_equal(t.registers_per_block, 131072);
  assert_string_equal(canon("rocm -mcpu gfx1100"), "rocm -mcpu=gfx1100");
}

/* ---- errors ---------------------------------------------------------------- */

static void assert_parse_error(const char *str, const char *want) {
  mlc_target_t t;
  memset(&t, 0x5A, sizeof t);
  mlc_target_t before = t;
  assert_int_equal(mlc_target_parse(&t, str), MLC_EINVAL);
  assert_int_equal(mlc_error_last_code(), MLC_EINVAL);
  assert_string_equal(mlc_error_last(), want);
  assert_memory_equal(&t, &before, sizeof t); /* untouched on failure */
}

static void test_unknown_kind_and_option_are_named(void **state) {
  (void)state;
  assert_parse_error("llvm -foo=1", "unknown option '-foo' in target 'llvm -foo=1'");
  assert_parse_error("metal -arch=x",
                     "unknown target kind 'metal' in target 'metal -arch=x' (want llvm, cuda or rocm)");
  assert_parse_error("", "empty target string");
  assert_parse_error("   ", "empty target string");
  assert_parse_error("llvm -arch=sm_80", "option '-arch' does not apply to llvm in target 'llvm -arch=sm_80'");
  assert_parse_error("cuda -arch=sm_80 -mcpu=x",
                     "option '-mcpu' does not apply to cuda in target 'cuda -arch=sm_80 -mcpu=x'");
  assert_parse_error("llvm skylake", "expected an option, got 'skylake' in target 'llvm skylake'");
}

static void test_missing_and_bad_values_are_errors(void **state) {
  (void)state;
  assert_parse_error("cuda", "cuda target needs -arch=sm_XX in target 'cuda'");
  assert_parse_error("cuda -arch=compute_90",
                     "bad -arch 'compute_90' (expected sm_XX) in target 'cuda -arch=compute_90'");
  assert_parse_error("cuda -arch=sm_", "bad -arch 'sm_' (expected sm_XX) in target 'cuda -arch=sm_'");
  assert_parse_error("rocm", "rocm target needs -mcpu=gfxXXX in target 'rocm'");
  assert_parse_error("rocm -mcpu=mi250", "bad -mcpu 'mi250' (expected gfxXXX) in target 'rocm -mcpu=mi250'");
  assert_parse_error("llvm -mcpu", "option '-mcpu' needs a value in target 'llvm -mcpu'");
  assert_parse_error("llvm -num-cores=two",
                     "bad value 'two' for option '-num-cores' in target 'llvm -num-cores=two': "
                     "expected a positive integer");
  assert_parse_error("llvm -num-cores=0",
                     "bad value '0' for option '-num-cores' in target 'llvm -num-cores=0': "
                     "expected a positive integer");
  assert_parse_error("llvm -mcpu=a -mcpu=b", "option '-mcpu' given twice in target 'llvm -mcpu=a -mcpu=b'");
  assert_parse_error("llvm -mcpu=haswell -mattr=avx2",
                     "bad -mattr in target 'llvm -mcpu=haswell -mattr=avx2': bad feature 'avx2' "
                     "(expected +name or -name)");
  assert_parse_error("llvm -mcpu=has/well", "bad CPU name 'has/well' in target 'llvm -mcpu=has/well'");
  assert_parse_error("llvm -max_registers_per_thread=255",
                     "option '-max_registers_per_thread' does not apply to llvm in target "
                     "'llvm -max_registers_per_thread=255'");
  assert_parse_error("cuda -arch=sm_90 -max_registers_per_thread=0",
                     "bad value '0' for option '-max_registers_per_thread' in target "
                     "'cuda -arch=sm_90 -max_registers_per_thread=0': expected a positive integer");
  assert_parse_error("rocm -mcpu=gfx90a -registers_per_block=lots",
                     "bad value 'lots' for option '-registers_per_block' in target "
                     "'rocm -mcpu=gfx90a -registers_per_block=lots': expected a positive integer");
  assert_parse_error("llvm -fast-math=maybe",
                     "bad value 'maybe' for option '-fast-math' in target 'llvm -fast-math=maybe': "
                     "expected no value, true or false");
}

/* A CPU name LLVM does not know is refused at parse time (LLVM would
 * otherwise fall back to a 32-bit generic CPU and abort every x86-64 build);
 * other architectures' names are LLVM's business. */
static void test_unknown_x86_cpu_is_refused(void **state) {
  (void)state;
  mlc_target_t t;
  assert_int_equal(mlc_target_parse(&t, "llvm -mcpu=znver9"), MLC_EINVAL);
  assert_non_null(strstr(mlc_error_last(), "unknown -mcpu 'znver9' in target 'llvm -mcpu=znver9'"));
  assert_non_null(strstr(mlc_error_last(), "sapphirerapids"));
  assert_int_equal(mlc_target_parse(&t, "llvm -mcpu=bdver4"), MLC_OK);        /* LLVM knows it */
  assert_int_equal(mlc_target_parse(&t, "llvm -mcpu=meteorlake"), MLC_OK);    /* a newer LLVM does */
  assert_int_equal(mlc_target_parse(&t, "llvm -mcpu=neoverse-v9 -mtriple=aarch64-linux-gnu"), MLC_OK);
}

/* What LLVM is told: a CPU newer than that LLVM becomes an older one it knows,
 * with the newer CPU's features spelled out. */
static void test_llvm_cpu_names_an_older_cpu_on_an_older_llvm(void **state) {
  (void)state;
  mlc_target_t t;
  char cpu[64], mattr[512];
  assert_int_equal(mlc_target_parse(&t, "llvm -mcpu=znver4 -mattr=-avx512vnni"), MLC_OK);
  mlc_target_llvm_cpu(&t, 14, cpu, sizeof cpu, mattr, sizeof mattr);
  assert_string_equal(cpu, "znver3");
  assert_non_null(strstr(mattr, "+avx512f"));
  assert_non_null(strstr(mattr, "+avx512bf16"));
  assert_non_null(strstr(mattr, "-avx512vnni")); /* the target's own choice stays */
  mlc_target_llvm_cpu(&t, 16, cpu, sizeof cpu, mattr, sizeof mattr);
  assert_string_equal(cpu, "znver4");
  assert_string_equal(mattr, t.mattr);
  assert_int_equal(mlc_target_parse(&t, "llvm -mcpu=znver5"), MLC_OK);
  mlc_target_llvm_cpu(&t, 14, cpu, sizeof cpu, mattr, sizeof mattr);
  assert_string_equal(cpu, "znver3"); /* two steps back */
  assert_non_null(strstr(mattr, "+avxvnni"));
  assert_int_equal(mlc_target_parse(&t, "llvm -mcpu=haswell"), MLC_OK);
  mlc_target_llvm_cpu(&t, 14, cpu, sizeof cpu, mattr, sizeof mattr);
  assert_string_equal(cpu, "haswell");
  assert_string_equal(mattr, t.mattr);
}

static void test_target_str_always_terminates(void **state) {
  (void)state;
  mlc_target_t t;
  char small[10];
  assert_int_equal(mlc_target_parse(&t, "cuda -arch=sm_90"), MLC_OK);
  assert_ptr_equal(mlc_target_str(&t, small, sizeof small), small);
  assert_string_equal(small, "cuda -arc");
  char one[1] = {'x'};
  mlc_target_str(&t, one, 1);
  assert_int_equal(one[0], '\0');
}

int main(void) {
  const struct CMUnitTest tests[] = {
#define T_(f) cmocka_unit_test_teardown(f, clear_error)
      T_(test_llvm_with_mcpu_parses_fields),
      T_(test_unknown_x86_cpu_is_refused),
      T_(test_llvm_cpu_names_an_older_cpu_on_an_older_llvm),
      T_(test_spellings_of_one_target_print_alike),
      T_(test_mcpu_implies_features_for_cross_targets),
      T_(test_mattr_adds_and_removes_features),
      T_(test_llvm_without_mcpu_is_the_host),
      T_(test_host_detection_names_a_cpu_and_counts_cores),
      T_(test_host_cores_follow_the_affinity_mask),
      T_(test_non_x86_triple_without_mcpu_is_generic),
      T_(test_fast_math_flag_is_kept_and_printed_last),
      T_(test_canonical_strings_round_trip),
      T_(test_cuda_defaults_and_both_option_spellings),
      T_(test_gpu_limits_print_only_when_not_default),
      T_(test_gpu_register_limits_parse_and_print),
      T_(test_rocm_defaults),
      T_(test_unknown_kind_and_option_are_named),
      T_(test_missing_and_bad_values_are_errors),
      T_(test_target_str_always_terminates),
#undef T_
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
