/*
 * test_mlt_intrin.c - MultiLevelTilingWithIntrin (AVX-512 fp32 FMA): the
 * sketches it makes for GMM have the hand trace's shape
 * (bench/traces/gmm_avx512_fma.py); replayed with random decisions and
 * postprocessed they tensorize, lower, compile and compute what the
 * interpreter computes; with the hand trace's tile sizes one of them is the
 * hand trace. The rule leaves alone what it cannot tensorize.
 *
 * MLC_PERF_CHECK=1 adds the performance comparison with the hand trace on
 * GMM-256 (timed in forked children, printed; run it outside ctest, on a
 * quiet machine, in a Release build for meaningful interpreter times).
 * Tests that run generated code skip when the host lacks AVX-512.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/compiler.h"
#include "search/search.h"

#define OK(x) assert_int_equal((x), MLC_OK)
#define AVX512_TARGET "llvm -mcpu=sapphirerapids -num-cores=2"

static const ms_rule_t *rule(void) {
  const ms_rule_t *r = ms_rule_find("MultiLevelTilingWithIntrin");
  assert_non_null(r);
  return r;
}

static tir_func_t *workload(const char *name, const int64_t *shape, int n) {
  tir_func_t *f = NULL;
  tir_dtype_t none = {0, 0, 0};
  OK(tir_workload_build(&f, name, shape, n, tir_dt_FLOAT32(), none));
  return f;
}

static tir_func_t *gmm(int64_t m, int64_t n, int64_t k) {
  int64_t shape[3] = {m, n, k};
  return workload("GMM", shape, 3);
}

static void ctx_for(ms_ctx_t *ctx, const tir_func_t *f, const char *target) {
  mlc_target_t t;
  OK(mlc_target_parse(&t, target));
  ms_ctx_init(ctx, f, "main", &t, 1);
}

static bool host_has_avx512(void) {
  mlc_target_t t;
  mlc_target_host(&t);
  if (!mlc_target_has_feature(&t, "avx512f")) {
    fprintf(stderr, "skipped: the host has no AVX-512\n");
    return false;
  }
  return true;
}

/* What the ParallelizeVectorizeUnroll rule leaves on the root (16 x 2
 * cores, 64 lanes, unroll step {0, 16, 64, 512}[decision]). */
static void annotate_root(sch_t *sch, const int64_t *unroll_decision) {
  static const int64_t steps[4] = {0, 16, 64, 512};
  static const double probs[4] = {0.25, 0.25, 0.25, 0.25};
  sch_rv_t root, v;
  OK(sch_get_block(sch, &root, "root"));
  OK(sch_annotate(sch, root, MS_ANN_PARALLEL, sch_arg_int(32)));
  OK(sch_annotate(sch, root, MS_ANN_VECTORIZE, sch_arg_int(64)));
  OK(sch_sample_categorical(sch, &v, steps, probs, 4, unroll_decision));
  OK(sch_annotate(sch, root, MS_ANN_UNROLL_EXPLICIT, sch_arg_rv(v)));
}

/* The rule applied to block C of f (after a get_block, as the space
 * generator records one per block), each sketch then annotated at the root.
 * Returns the sketches (caller frees each and the array). */
static sch_t **sketches(const ms_ctx_t *ctx, const tir_func_t *f, const char *block, int *n) {
  sch_t *sch = NULL;
  sch_rv_t b;
  OK(sch_create(&sch, f, 1, SCH_ERRORS_RICH));
  OK(sch_get_block(sch, &b, block));
  sch_t **out = NULL;
  int cap = 0;
  *n = 0;
  OK(rule()->apply(rule(), ctx, sch, block, &out, n, &cap));
  int64_t unroll = 3; /* 512 */
  for (int i = 0; i < *n; i++) annotate_root(out[i], &unroll);
  return out;
}

static void free_all(sch_t **v, int n) {
  for (int i = 0; i < n; i++) sch_free(v[i]);
  mlc_free(v);
}

static const tir_block_t *find_block(const tir_stmt_t *s, const char *name);

static const tir_block_t *find_in_block(const tir_block_t *b, const char *name) {
  if (strcmp(b->name, name) == 0) return b;
  const tir_block_t *r = b->init ? find_block(b->init, name) : NULL;
  return r ? r : find_block(b->body, name);
}

static const tir_block_t *find_block(const tir_stmt_t *s, const char *name) {
  if (!s) return NULL;
  switch (s->kind) {
  case TIR_FOR: return find_block(s->u.loop.body, name);
  case TIR_BLOCK_REALIZE: return find_in_block(s->u.realize.block, name);
  case TIR_SEQ:
    for (int i = 0; i < s->u.seq.n; i++) {
      const tir_block_t *b = find_block(s->u.seq.stmts[i], name);
      if (b) return b;
    }
    return NULL;
  case TIR_IF: {
    const tir_block_t *b = find_block(s->u.if_.then_case, name);
    return b ? b : find_block(s->u.if_.else_case, name);
  }
  default: return NULL;
  }
}

static bool has_ann(const tir_func_t *f, const char *block, const char *key) {
  const tir_block_t *b = find_block(f->body, block);
  return b && tir_annot_get(b->annots, b->nannots, key) != NULL;
}

static int count_kind(const sch_trace_t *t, const char *kind) {
  int n = 0;
  for (int i = 0; i < t->n; i++) n += strcmp(t->insts[i].kind->name, kind) == 0;
  return n;
}

/* What RewriteTensorize says of a register tile the registers cannot hold
 * (a random draw may give one; the candidate is then rejected). */
#define TOO_MANY_ACCUMULATORS "accumulator vectors, more than the 30 of 32 vector registers"

/* A fresh schedule of f with `design` replayed (sampling afresh from seed
 * unless use_decisions) and the CPU postprocessors run; NULL when they
 * reject it for its register tile. */
static sch_t *candidate_or_rejected(const ms_ctx_t *ctx, const tir_func_t *f, const sch_trace_t *design,
                                    bool use_decisions, uint64_t seed) {
  sch_t *s = NULL;
  OK(sch_create(&s, f, seed, SCH_ERRORS_RICH));
  int rc = sch_trace_apply(s, design, use_decisions);
  if (rc != MLC_OK) fprintf(stderr, "replay: %s\n", mlc_error_last());
  OK(rc);
  int npp;
  const ms_postproc_t *const *pp = ms_postprocs_cpu_default(ctx, &npp);
  rc = ms_postprocs_apply(ctx, pp, npp, s);
  if (rc == MLC_ESCHEDULE && strstr(mlc_error_last(), TOO_MANY_ACCUMULATORS)) {
    sch_free(s);
    return NULL;
  }
  if (rc != MLC_OK) {
    char *trace = sch_trace_to_python(sch_get_trace(s));
    fprintf(stderr, "postprocs: %s\n%s", mlc_error_last(), trace);
    mlc_free(trace);
  }
  OK(rc);
  return s;
}

/* The same, where a rejection is a failure. */
static sch_t *candidate(const ms_ctx_t *ctx, const tir_func_t *f, const sch_trace_t *design, bool use_decisions,
                        uint64_t seed) {
  sch_t *s = candidate_or_rejected(ctx, f, design, use_decisions, seed);
  assert_non_null(s);
  return s;
}

static void assert_tensorized(const tir_func_t *f) {
  char *text = tir_print_func(f);
  assert_non_null(text);
  if (!strstr(text, "llvm.fma.v16f32") || strstr(text, MS_ANN_AUTO_TENSORIZE) || strstr(text, MS_ANN_LAYOUT_REWRITE)) {
    fprintf(stderr, "not tensorized (or annotations left):\n%s", text);
    fail();
  }
  mlc_free(text);
}

static void assert_lowers(const tir_func_t *f, const mlc_target_t *t) {
  tir_func_t *low = NULL;
  int rc = mlc_lower(&low, f, t, NULL);
  if (rc != MLC_OK) fprintf(stderr, "lower: %s\n", mlc_error_last());
  OK(rc);
  tir_func_free(low);
}

static mlc_measure_result_t measure(const tir_func_t *f, const sch_trace_t *t, const mlc_target_t *target,
                                    int repeat, int min_ms) {
  mlc_measure_options_t o;
  mlc_measure_options_default(&o);
  o.in_process = false;
  o.check_correctness = true;
  o.repeat = repeat;
  o.min_repeat_ms = min_ms;
  mlc_measure_result_t r;
  OK(mlc_measure(&r, f, t, target, &o));
  if (r.error != MLC_ERROR_KIND_NONE) fprintf(stderr, "measure: %s: %s\n", mlc_error_kind_name(r.error), r.message);
  assert_int_equal(r.error, MLC_ERROR_KIND_NONE);
  return r;
}

/* ------------------------------------------------------------------------ */

/* Six sketches: write cache none / level 1 / level 2, each with B as it is
 * and packed; all with the 16x4 tile blockized and marked for the
 * intrinsic, 4 + 4 + 2 tile levels, the original block marked tiled. */
static void gmm_sketches_have_the_hand_trace_shape(void **state) {
  tir_func_t *f = gmm(128, 128, 128);
  ms_ctx_t ctx;
  ctx_for(&ctx, f, AVX512_TARGET);
  int n;
  sch_t **s = sketches(&ctx, f, "C", &n);
  assert_int_equal(n, 6);
  for (int i = 0; i < n; i++) {
    const tir_func_t *p = sch_func(s[i]);
    const sch_trace_t *t = sch_get_trace(s[i]);
    assert_true(has_ann(p, "C_o", MS_ANN_AUTO_TENSORIZE));
    assert_true(has_ann(p, "C", MS_ANN_TILING_STRUCTURE));
    assert_int_equal(count_kind(t, "SamplePerfectTile"), 3);
    assert_int_equal(count_kind(t, "Blockize"), 1);
    bool cached = i >= 2, packed = i % 2 == 1;
    assert_int_equal(find_block(p->body, "C_global") != NULL, cached);
    assert_int_equal(has_ann(p, "B_global", MS_ANN_LAYOUT_REWRITE), packed);
  }
  free_all(s, n);
  tir_func_free(f);
}

/* No AVX-512 in the target, a block the intrinsic cannot take (N = 24 is
 * not a multiple of 16, K = 6 not of 4), a block already tiled: the
 * schedule comes back alone and unchanged. */
static void rule_leaves_what_it_cannot_tensorize(void **state) {
  struct {
    int64_t m, n, k;
    const char *target;
  } cases[] = {{64, 64, 64, "llvm -mcpu=x86-64"}, {64, 24, 64, AVX512_TARGET}, {64, 64, 6, AVX512_TARGET}};
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    tir_func_t *f = gmm(cases[c].m, cases[c].n, cases[c].k);
    ms_ctx_t ctx;
    ctx_for(&ctx, f, cases[c].target);
    sch_t *sch = NULL, **out = NULL;
    int nout = 0, cap = 0;
    OK(sch_create(&sch, f, 1, SCH_ERRORS_FAST));
    OK(rule()->apply(rule(), &ctx, sch, "C", &out, &nout, &cap));
    assert_int_equal(nout, 1);
    assert_ptr_equal(out[0], sch);
    assert_true(tir_func_equal(sch_func(out[0]), f, NULL, 0));
    free_all(out, nout);
    tir_func_free(f);
  }
  /* Already tiled: the sketches' block C carries the tiling structure. */
  tir_func_t *f = gmm(64, 64, 64);
  ms_ctx_t ctx;
  ctx_for(&ctx, f, AVX512_TARGET);
  int n;
  sch_t **s = sketches(&ctx, f, "C", &n);
  sch_t **out = NULL;
  int nout = 0, cap = 0;
  tir_func_t *before = tir_func_clone(sch_func(s[0]));
  OK(rule()->apply(rule(), &ctx, s[0], "C", &out, &nout, &cap));
  assert_int_equal(nout, 1);
  assert_true(tir_func_equal(sch_func(out[0]), before, NULL, 0));
  s[0] = NULL;
  free_all(out, nout);
  free_all(s, n);
  tir_func_free(before);
  tir_func_free(f);
}

/* Every sketch, replayed with fresh random decisions (two accepted draws
 * each; a draw whose register tile is too large is rejected with that
 * reason and the next seed drawn) and postprocessed: tensorized, no
 * annotation left for a postprocessor, lowers. On GMM-128 all of them; on
 * GMM-64 (cheaper to check in the interpreter) also one candidate per
 * write-cache variant, packed and not by turns, compiled, run and compared
 * with the interpreter. */
static void random_candidates(int64_t size, bool run) {
  tir_func_t *f = gmm(size, size, size);
  ms_ctx_t ctx;
  ctx_for(&ctx, f, AVX512_TARGET);
  int n;
  sch_t **s = sketches(&ctx, f, "C", &n);
  assert_int_equal(n, 6);
  mlc_target_t host;
  mlc_target_host(&host);
  /* run: no cache as it is, cache at level 1 packed, at level 2 as it is */
  static const bool checked[6] = {true, false, false, true, true, false};
  for (int i = 0; i < n; i++) {
    int accepted = 0;
    for (uint64_t seed = 1; accepted < 2; seed++) {
      assert_true(seed <= 40); /* most draws fit the registers */
      sch_t *c = candidate_or_rejected(&ctx, f, sch_get_trace(s[i]), false, 100 * seed + (uint64_t)i);
      if (!c) continue;
      assert_tensorized(sch_func(c));
      assert_lowers(sch_func(c), &host);
      if (run && checked[i] && accepted == 0) measure(f, sch_get_trace(c), &host, 1, 1);
      accepted++;
      sch_free(c);
    }
  }
  free_all(s, n);
  tir_func_free(f);
}

static void random_candidates_tensorize_lower_and_run(void **state) {
  if (!host_has_avx512()) return;
  random_candidates(128, false);
  random_candidates(64, true);
}

/* The decisions of sketch "write cache at level 2, B packed" that give the
 * hand trace: i (1, M/8, 8, 1), j/16 (N/256, 8, 2, 1), k/4 (K/4, 1). */
static sch_trace_t *hand_decisions(const sch_trace_t *t, int64_t m, int64_t n, int64_t k) {
  int64_t panels = n >= 256 ? n / 256 : 1; /* 256 columns a panel (fewer when N is smaller) */
  int64_t tiles[3][4] = {{1, m / 8, 8, 1}, {panels, n / 16 / panels / 2, 2, 1}, {k / 4, 1}};
  int nlev[3] = {4, 4, 2}, which = 0;
  sch_trace_t *cur = sch_trace_copy(t);
  for (int i = 0; i < cur->n; i++) {
    if (strcmp(cur->insts[i].kind->name, "SamplePerfectTile") != 0) continue;
    assert_true(which < 3);
    sch_arg_t items[4];
    for (int l = 0; l < nlev[which]; l++) items[l] = sch_arg_int(tiles[which][l]);
    sch_arg_t d = {SCH_ARG_LIST, {0}};
    d.u.list.n = nlev[which];
    d.u.list.items = items;
    sch_trace_t *next = NULL;
    OK(sch_trace_with_decision(&next, cur, i, &d));
    sch_trace_free(cur);
    cur = next;
    which++;
  }
  assert_int_equal(which, 3);
  return cur;
}

static sch_trace_t *hand_trace(void) {
  char path[1024];
  snprintf(path, sizeof path, "%s/../bench/traces/gmm_avx512_fma.py", MLC_TEST_DIR);
  FILE *fp = fopen(path, "rb");
  assert_non_null(fp);
  char buf[8192];
  size_t len = fread(buf, 1, sizeof buf, fp);
  fclose(fp);
  sch_trace_t *t = NULL;
  OK(sch_trace_from_python(&t, buf, len, path));
  return t;
}

/* Times ours and the hand trace alternately, three rounds, and compares
 * the best medians (other work on a shared machine comes in bursts). */
static void compare_with_hand_trace(const tir_func_t *f, const sch_trace_t *ours, const mlc_target_t *host,
                                    int64_t size) {
  sch_trace_t *hand = hand_trace();
  double best_ours = 0, best_hand = 0;
  for (int round = 0; round < 3; round++) {
    mlc_measure_result_t a = measure(f, ours, host, 5, 100);
    mlc_measure_result_t b = measure(f, hand, host, 5, 100);
    double ma = mlc_measure_median(&a), mb = mlc_measure_median(&b);
    if (round == 0 || ma < best_ours) best_ours = ma;
    if (round == 0 || mb < best_hand) best_hand = mb;
  }
  sch_trace_free(hand);
  double gflop = 2.0 * (double)size * (double)size * (double)size * 1e-9;
  fprintf(stderr, "GMM-%lld, %d threads: hand trace %.1f GFLOP/s, the sketch with the hand decisions %.1f GFLOP/s "
          "(%.3fx the hand trace)\n", (long long)size, host->num_cores, gflop / best_hand, gflop / best_ours,
          best_hand / best_ours);
  assert_true(best_ours <= best_hand * 1.15);
}

/* With the hand trace's tile sizes, the level-2 packed sketch postprocesses
 * into the hand trace's loop nest (8x32 register tile under the panel
 * loop, B packed per panel in 16-wide strips) and compiles into a correct
 * kernel. Under MLC_PERF_CHECK=1 both are also timed, on GMM-256 (or
 * MLC_PERF_SIZE), and ours must be within 15% of the hand trace. */
static void hand_decisions_give_the_hand_trace(void **state) {
  if (!host_has_avx512()) return;
  bool perf = getenv("MLC_PERF_CHECK") && strcmp(getenv("MLC_PERF_CHECK"), "1") == 0;
  int64_t size = 128;
  if (perf) size = getenv("MLC_PERF_SIZE") ? atoll(getenv("MLC_PERF_SIZE")) : 256;
  assert_true(size == 128 || (size >= 256 && size % 256 == 0));
  tir_func_t *f = gmm(size, size, size);
  ms_ctx_t ctx;
  ctx_for(&ctx, f, AVX512_TARGET);
  int n;
  sch_t **s = sketches(&ctx, f, "C", &n);
  assert_int_equal(n, 6);
  sch_trace_t *design = hand_decisions(sch_get_trace(s[5]), size, size, size);
  sch_t *c = candidate(&ctx, f, design, true, 1);
  assert_tensorized(sch_func(c));
  assert_non_null(find_block(sch_func(c)->body, "B_global"));
  assert_non_null(find_block(sch_func(c)->body, "C_global"));
  mlc_target_t host;
  mlc_target_host(&host);
  host.num_cores = 2;
  measure(f, sch_get_trace(c), &host, 1, 1);
  if (perf) compare_with_hand_trace(f, sch_get_trace(c), &host, size);
  sch_free(c);
  sch_trace_free(design);
  free_all(s, n);
  tir_func_free(f);
}

/* C2D (implicit GEMM: output channels in 16 lanes, input channels by 4):
 * the rule finds the tile, and a candidate compiles and computes right. */
static void c2d_implicit_gemm_tensorizes(void **state) {
  if (!host_has_avx512()) return;
  /* N H W CI CO KH KW stride pad: 8x8 pixels, 32 -> 32 channels */
  int64_t shape[9] = {1, 8, 8, 32, 32, 3, 3, 1, 1};
  tir_func_t *f = workload("C2D", shape, 9);
  ms_ctx_t ctx;
  ctx_for(&ctx, f, AVX512_TARGET);
  int n;
  sch_t **s = sketches(&ctx, f, "conv2d_nhwc", &n);
  assert_true(n >= 3);
  mlc_target_t host;
  mlc_target_host(&host);
  sch_t *c = candidate(&ctx, f, sch_get_trace(s[n - 1]), false, 5);
  assert_tensorized(sch_func(c));
  measure(f, sch_get_trace(c), &host, 1, 1);
  sch_free(c);
  free_all(s, n);
  tir_func_free(f);
}

/* A dense layer (data x weight^T + bias, relu): the weights W[j, k] are
 * read across the intrinsic's lanes, so the tile tensorizes only with them
 * packed (W[j // 16, k, j % 16]): only packed sketches, the relu consumer
 * moved into the tile as the write cache. A candidate compiles and
 * computes right. */
static void dense_tensorizes_with_packed_weights(void **state) {
  int64_t shape[3] = {16, 64, 32};
  tir_func_t *f = workload("D+B+R", shape, 3);
  ms_ctx_t ctx;
  ctx_for(&ctx, f, AVX512_TARGET);
  int n;
  sch_t **s = sketches(&ctx, f, "T_matmul_NT", &n);
  assert_int_equal(n, 3);
  for (int i = 0; i < n; i++) assert_true(has_ann(sch_func(s[i]), "weight_global", MS_ANN_LAYOUT_REWRITE));
  if (host_has_avx512()) {
    mlc_target_t host;
    mlc_target_host(&host);
    sch_t *c = candidate(&ctx, f, sch_get_trace(s[2]), false, 3);
    assert_tensorized(sch_func(c));
    measure(f, sch_get_trace(c), &host, 1, 1);
    sch_free(c);
  }
  free_all(s, n);
  tir_func_free(f);
}

/* The CPU defaults for an AVX-512 target put the rule in the design space
 * (ms_rules_cpu_default, ms_space_generate): every sketch of GMM-128 is one
 * of the rule's, and candidates made from them (ms_candidate_make with
 * the CPU postprocessors) are tensorized. */
static void default_cpu_space_tensorizes_gmm(void **state) {
  tir_func_t *f = gmm(128, 128, 128);
  ms_ctx_t ctx;
  ctx_for(&ctx, f, AVX512_TARGET);
  int nrules, npp;
  const ms_rule_t *const *rules = ms_rules_cpu_default(&ctx, &nrules);
  const ms_postproc_t *const *pp = ms_postprocs_cpu_default(&ctx, &npp);
  ms_space_t space = {0};
  int rc = ms_space_generate(&space, &ctx, rules, nrules);
  if (rc != MLC_OK) fprintf(stderr, "space: %s\n", mlc_error_last());
  OK(rc);
  assert_int_equal(space.n, 6);
  for (int i = 0; i < space.n; i++) {
    assert_int_equal(count_kind(space.traces[i], "Blockize"), 1);
    ms_candidate_t c;
    for (uint64_t seed = 31;; seed += 100) { /* until a draw fits the registers */
      assert_true(seed < 31 + 100 * 40);
      rc = ms_candidate_make(&c, &ctx, space.traces[i], false, seed + (uint64_t)i, pp, npp);
      if (rc == MLC_OK || !strstr(mlc_error_last(), TOO_MANY_ACCUMULATORS)) break;
    }
    if (rc != MLC_OK) fprintf(stderr, "candidate %d: %s\n", i, mlc_error_last());
    OK(rc);
    assert_tensorized(sch_func(c.sch));
    ms_candidate_free(&c);
  }
  ms_space_free(&space);
  tir_func_free(f);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(gmm_sketches_have_the_hand_trace_shape),
      cmocka_unit_test(rule_leaves_what_it_cannot_tensorize),
      cmocka_unit_test(random_candidates_tensorize_lower_and_run),
      cmocka_unit_test(hand_decisions_give_the_hand_trace),
      cmocka_unit_test(c2d_implicit_gemm_tensorizes),
      cmocka_unit_test(dense_tensorizes_with_packed_weights),
      cmocka_unit_test(default_cpu_space_tensorizes_gmm),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
