/*
 * gpu_testing.h - what the GPU design-space tests share (test_gpu_space.c,
 * test_gpu_tensorcore.c): targets, a status check that prints the error
 * detail, a search context and space for a GPU target, and a candidate's
 * device code (PTX) in a file for ptxas, skipping where ptxas is not
 * installed.
 *
 * Header-only (static functions); include after <cmocka.h>.
 */
#ifndef MLC_TESTS_SEARCH_GPU_TESTING_H
#define MLC_TESTS_SEARCH_GPU_TESTING_H

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "compiler/compiler.h"
#include "search/search.h"
#include "tests/lib/check_ok.h"

#define SM80 "cuda -arch=sm_80"
#define SM90 "cuda -arch=sm_90"
#define PTXAS "/usr/local/cuda/bin/ptxas"

/* In a cmocka test: skips it, saying why, when ptxas is not installed. */
#define SKIP_WITHOUT_PTXAS()                         \
  do {                                               \
    if (access(PTXAS, X_OK) != 0) {                  \
      fprintf(stderr, "skipped: no %s\n", PTXAS);    \
      skip();                                        \
    }                                                \
  } while (0)

/* A search context for f (borrowed) on the target text. */
static MLC_UNUSED void gpu_ctx(ms_ctx_t *ctx, const tir_func_t *f, const char *target, uint64_t seed) {
  mlc_target_t t;
  OK(mlc_target_parse(&t, target));
  ms_ctx_init(ctx, f, f->name, &t, seed);
}

/* The design space of ctx under the n rules (NULL: the target's defaults). */
static MLC_UNUSED void make_space(ms_space_t *space, const ms_ctx_t *ctx, const ms_rule_t *const *rules, int n) {
  if (!rules) rules = ms_rules_default(ctx, &n);
  OK(ms_space_generate(space, ctx, rules, n));
}

/* Builds the candidate for t and writes its device code into a fresh file
 * (path, a char[32] the caller unlinks): the build's status, its error in
 * mlc_error_last(); nothing written when it fails. */
static MLC_UNUSED int write_device_code(const ms_candidate_t *c, const mlc_target_t *t, char *path,
                                        const char *prefix) {
  tir_func_t *f = sch_func(c->sch);
  mlc_module_t *m = NULL;
  int rc = mlc_build(&m, &f, 1, t, NULL);
  if (rc != MLC_OK) return rc;
  snprintf(path, 32, "/tmp/%s_XXXXXX", prefix);
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  close(fd);
  OK(mlc_module_emit(m, MLC_EMIT_DEVICE, path));
  mlc_module_free(m);
  return MLC_OK;
}

#endif /* MLC_TESTS_SEARCH_GPU_TESTING_H */
