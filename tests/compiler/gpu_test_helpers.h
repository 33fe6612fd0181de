/*
 * gpu_test_helpers.h - shared by the GPU code generation tests
 * (test_codegen_gpu*.c): building for a GPU target, assembling PTX with
 * ptxas (skipped, with a note, where it is not installed), applying a
 * Python trace, and checking a lowered program against the scheduled one in
 * the interpreter.
 */
#ifndef MLC_TESTS_GPU_TEST_HELPERS_H
#define MLC_TESTS_GPU_TEST_HELPERS_H

#include <unistd.h>

#include "schedule/schedule.h"
#include "test_codegen_helpers.h"

/* ------------------------------------------------------------------------ */
/* Tools                                                                     */
/* ------------------------------------------------------------------------ */

static MLC_UNUSED const char *ptxas_path(void) {
  static char found[1024];
  const char *env = getenv("PTXAS");
  if (env && *env) return access(env, X_OK) == 0 ? env : NULL;
  if (access("/usr/local/cuda/bin/ptxas", X_OK) == 0) return "/usr/local/cuda/bin/ptxas";
  FILE *p = popen("command -v ptxas 2>/dev/null", "r");
  if (!p) return NULL;
  bool ok = fgets(found, sizeof found, p) != NULL;
  pclose(p);
  if (!ok) return NULL;
  found[strcspn(found, "\n")] = '\0';
  return found[0] ? found : NULL;
}

/* Output of a shell command into out (truncated to len); its exit status. */
static MLC_UNUSED int run_cmd(const char *cmd, char *out, size_t len) {
  FILE *p = popen(cmd, "r");
  assert_non_null(p);
  size_t n = fread(out, 1, len - 1, p);
  out[n] = '\0';
  return pclose(p);
}

static MLC_UNUSED int count(const char *hay, const char *needle) {
  int n = 0;
  for (const char *s = strstr(hay, needle); s; s = strstr(s + 1, needle)) n++;
  return n;
}

/* Builds f for target; writes the device image and returns the module. */
static MLC_UNUSED mlc_module_t *build_for(tir_func_t *f, const char *target_str) {
  mlc_target_t t;
  assert_int_equal(mlc_target_parse(&t, target_str), MLC_OK);
  mlc_module_t *m = NULL;
  if (mlc_build(&m, &f, 1, &t, NULL) != MLC_OK) {
    fprintf(stderr, "build of %s for %s: %s\n", f->name, target_str, mlc_error_last());
    fail();
  }
  return m;
}

/* The PTX (or other assembly) of f built for target_str; mlc_free it. */
static MLC_UNUSED char *asm_for(tir_func_t *f, const char *target_str) {
  mlc_module_t *m = build_for(f, target_str);
  char *text = mlc_module_text(m, MLC_EMIT_ASM);
  assert_non_null(text);
  mlc_module_free(m);
  return text;
}

/* Applies the Python trace py to sch; a refused step prints the
 * schedule's error and fails the test. */
static MLC_UNUSED void apply_py(sch_t *sch, const char *py) {
  sch_trace_t *t = NULL;
  assert_int_equal(sch_trace_from_python(&t, py, strlen(py), "trace.py"), MLC_OK);
  if (sch_trace_apply(sch, t, true) != MLC_OK) {
    fprintf(stderr, "trace: %s\n", sch_error(sch));
    fail();
  }
  sch_trace_free(t);
}

/* A schedule of f (the caller's, freed after the schedule) made by py. */
static MLC_UNUSED sch_t *schedule_py(tir_func_t *f, const char *py) {
  sch_t *sch = NULL;
  assert_int_equal(sch_create(&sch, f, 1, SCH_ERRORS_RICH), MLC_OK);
  apply_py(sch, py);
  return sch;
}

/* Builds for target and expects MLC_EUNSUPPORTED with `message` in it. */
static MLC_UNUSED void expect_refused(tir_func_t *f, const char *target_str, const char *message) {
  mlc_target_t t;
  assert_int_equal(mlc_target_parse(&t, target_str), MLC_OK);
  mlc_module_t *m = NULL;
  assert_int_equal(mlc_build(&m, &f, 1, &t, NULL), MLC_EUNSUPPORTED);
  assert_null(m);
  if (!strstr(mlc_error_last(), message)) {
    fprintf(stderr, "error: %s\nwanted: %s\n", mlc_error_last(), message);
    fail();
  }
}

/* f built for an AMDGPU target; NULL, with a note printed, where no ld.lld
 * links the code object here (any other failure fails the test). */
static MLC_UNUSED mlc_module_t *build_rocm_or_skip(tir_func_t *f, const char *target_str) {
  mlc_target_t t;
  assert_int_equal(mlc_target_parse(&t, target_str), MLC_OK);
  mlc_module_t *m = NULL;
  int rc = mlc_build(&m, &f, 1, &t, NULL);
  if (rc == MLC_EUNSUPPORTED && strstr(mlc_error_last(), "ld.lld")) {
    printf("note: skipped: %s\n", mlc_error_last());
    return NULL;
  }
  if (rc != MLC_OK) fprintf(stderr, "build for %s: %s\n", target_str, mlc_error_last());
  assert_int_equal(rc, MLC_OK);
  return m;
}

/* PTX for sm_80 and sm_90, each assembled by ptxas for its arch; returns
 * the number of occurrences of `needle` in the sm_80 PTX. */
static MLC_UNUSED int check_ptx_count(tir_func_t *f, const char *needle) {
  static const char *const archs[] = {"sm_80", "sm_90"};
  const char *ptxas = ptxas_path();
  int found = 0;
  for (int i = 0; i < 2; i++) {
    char target[64], path[] = "/tmp/mlc-gpu-test-XXXXXX.ptx", cmd[2048], out[4096];
    snprintf(target, sizeof target, "cuda -arch=%s", archs[i]);
    mlc_module_t *m = build_for(f, target);
    char *ptx = mlc_module_text(m, MLC_EMIT_ASM);
    assert_non_null(ptx);
    assert_non_null(strstr(ptx, ".entry"));
    if (i == 0) found = count(ptx, needle);
    mlc_free(ptx);
    int fd = mkstemps(path, 4);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(mlc_module_emit(m, MLC_EMIT_DEVICE, path), MLC_OK);
    if (ptxas) {
      snprintf(cmd, sizeof cmd, "'%s' -arch=%s '%s' -o /dev/null 2>&1", ptxas, archs[i], path);
      if (run_cmd(cmd, out, sizeof out) != 0) {
        fprintf(stderr, "ptxas -arch=%s on %s's PTX: %s\n", archs[i], f->name, out);
        fail();
      }
    }
    unlink(path);
    mlc_module_free(m);
  }
  return found;
}

/* The number of barriers in the sm_80 PTX (and ptxas as above). */
static MLC_UNUSED int check_ptx(tir_func_t *f) { return check_ptx_count(f, "bar.sync"); }

/* The lowered program (thread loops serial) against the scheduled one in
 * the interpreter, on the same random inputs. */
static MLC_UNUSED void check_lowered(tir_func_t *f, double rtol) {
  mlc_target_t t;
  assert_int_equal(mlc_target_parse(&t, "cuda -arch=sm_80"), MLC_OK);
  tir_func_t *low = NULL;
  if (mlc_lower(&low, f, &t, NULL) != MLC_OK) {
    fprintf(stderr, "lower %s: %s\n", f->name, mlc_error_last());
    fail();
  }
  cgt_args_t a, b;
  cgt_args_init(&a, f, NULL, 0, 7);
  cgt_args_init(&b, low, NULL, 0, 7);
  for (int i = 0; i < a.n; i++) {
    cgt_fill(&a, i, 1, 10);
    cgt_fill(&b, i, 1, 10);
  }
  cgt_run_interp(&a);
  cgt_run_interp(&b);
  for (int i = 0; i < a.n; i++) { /* compare the interpreters' buffers */
    if (!f->buffer_map[i]) continue;
    for (size_t k = 0; k < a.count[i]; k++) {
      double want = cgt_get(a.in[i].data, a.in[i].dtype, k), got = cgt_get(b.in[i].data, b.in[i].dtype, k);
      if (fabs(want - got) > rtol * fmax(1.0, fabs(want))) {
        fprintf(stderr, "%s: buffer %s element %zu: lowered %.17g, scheduled %.17g\n", f->name,
                f->buffer_map[i]->name, k, got, want);
        fail();
      }
    }
  }
  cgt_args_free(&a);
  cgt_args_free(&b);
  tir_func_free(low);
}

#endif /* MLC_TESTS_GPU_TEST_HELPERS_H */
