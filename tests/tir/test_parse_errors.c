/*
 * test_parse_errors.c - bad TVMScript gets one clear error: the exact message,
 * line and column of the offending token, the source line and a caret; and no
 * input, however broken, crashes, hangs or leaks (allocation failure at every
 * point included).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tir/tir.h"

#define HDR "@T.prim_func\ndef f(A: T.Buffer((16,), \"float32\")):\n"

typedef struct {
  const char *src;
  int line, col;
  const char *message;
} error_case_t;

/* Each input fails at the first error, reported at the offending token. */
static const error_case_t cases[] = {
    {HDR "    for i in range(16)\n        A[i] = 0\n",
     3, 23, "expected ':' but found 'newline'"},
    {HDR "    for i in range(16):\n        A[vk] = T.float32(0)\n",
     4, 11, "unknown name 'vk'"},
    {"@T.prim_func\ndef f(A: T.Buffer((8, 8, 8), \"float32\")):\n    for i, j, k in T.grid(8, 8, 8):\n        with T.block(\"b\"):\n            vi, vj, vk = T.axis.remap(\"SS\", [i, j, k])\n            A[vi, vj, vk] = T.float32(0)\n",
     5, 39, "T.axis.remap: 2 kinds for 3 variables"},
    {HDR "    for i in range(16):\n        A[i] = A[i] + i\n",
     4, 21, "dtype mismatch in '+': float32 vs int32"},
    {"@T.prim_func\ndef f(A: T.Buffer((16,), \"float33\")):\n    A[0] = 1\n",
     2, 26, "unknown dtype 'float33'"},
    {HDR "    A[0] = T.expp(A[0])\n",
     3, 12, "unknown function 'T.expp'"},
    {HDR "    for i in range(16):\n          A[i] = 1.0\n        A[i] = 2.0\n",
     5, 9, "inconsistent indentation"},
    {HDR "    A[0] = (1 + 2\n",
     3, 12, "'(' was never closed"},
    {HDR "    A[0] = 1 +\n",
     3, 15, "expected an expression but found 'newline'"},
    {HDR "    A[0, 1] = 1.0\n",
     3, 5, "buffer 'A' has 1 dimension but 2 indices were given"},
    {HDR "    A[0] = \"abc\n",
     3, 12, "unterminated string"},
    {HDR "    A[0] = 1.0 $ 2\n",
     3, 16, "invalid character '$'"},
    {HDR "    x = 1\n    x[0] = 2\n",
     4, 5, "'x' is not a buffer"},
    {HDR "    for i in range(16):\n        pass\n    A[i] = 1.0\n",
     5, 7, "unknown name 'i'"},
    {HDR "    T.reads(A[0])\n",
     3, 5, "'T.reads' is only allowed directly inside a block"},
    {HDR "    with T.init():\n        A[0] = 1.0\n",
     3, 10, "'T.init' is only allowed directly inside a block"},
    {HDR "    for i in T.grid(4, 4):\n        A[i] = 1.0\n",
     3, 14, "T.grid: 2 extents for 1 variable"},
    {HDR "    for i in T.serial(4, thread=\"threadIdx.x\"):\n        A[i] = 1.0\n",
     3, 14, "'T.serial' takes no thread"},
    {HDR "    for i in T.thread_binding(4):\n        A[i] = 1.0\n",
     3, 14, "'T.thread_binding' needs thread=\"...\""},
    {HDR "    if 1:\n        A[0] = 1.0\n",
     3, 8, "the if condition must be bool, found int32"},
    {HDR "    A[0] = T.int8(300)\n",
     3, 19, "literal 300 does not fit in int8"},
    {HDR "    A[0] = 99999999999999999999999\n",
     3, 12, "integer literal too large"},
    {HDR "    A[0] = 1.0 if 1 else 2.0\n",
     3, 16, "expected newline but found 'if'"},
    {HDR "    A[0] = T.Cast(\"float32\")\n",
     3, 28, "expected ',' but found ')'"},
    {HDR "    B = T.alloc_buffer((4,), \"float32\", \"global\")\n",
     3, 41, "too many positional arguments to 'T.alloc_buffer'"},
    {HDR "    A[0] = T.max(1.0)\n",
     3, 12, "'T.max' takes 2 arguments but 1 was given"},
    {HDR "    A[0] = 1 < 2 < 3\n",
     3, 18, "chained comparisons are not supported"},
    {HDR "    A[0] = A\n",
     3, 12, "buffer 'A' used as a value"},
    {"@T.prim_func\ndef f(A: T.Buffer((16,), \"float32\"), A: T.int32):\n    A[0] = 1.0\n",
     2, 38, "duplicate parameter 'A'"},
    {"@R.function\ndef f():\n    pass\n",
     1, 2, "unknown decorator '@R.function'"},
    {"x = 1\n",
     1, 1, "expected '@T.prim_func' or '@I.ir_module' but found 'x'"},
    {"",
     1, 1, "expected '@T.prim_func' or '@I.ir_module' but found 'end of input'"},
    {"@I.ir_module\nclass M:\n    @T.prim_func\n    def f():\n        T.evaluate(0)\n\n    @T.prim_func\n    def f():\n        T.evaluate(0)\n",
     7, 5, "duplicate function 'f'"},
    {HDR "    if T.bool(True):\n        A[0] = 1.0\n      A[1] = 1.0\n",
     5, 7, "inconsistent indentation"},
    {HDR "  A[0] = 1.0\n    A[1] = 1.0\n",
     4, 5, "unexpected indent"},
    {"@T.prim_func\ndef f():\nT.evaluate(0)\n",
     3, 1, "expected an indented block but found 'T'"},
    {HDR "    T.evaluate(0)\n    for i in range(4):\n        with T.block(\"b\"):\n            vi = T.axis.remap(\"S\", [i + 1])\n",
     6, 39, "expected ']' but found '+'"},
    {HDR "    with T.block(\"b\"):\n        vi = T.axis.remap(\"S\", [q])\n",
     4, 33, "unknown name 'q'"},
    {HDR "    A[0] = T.float32(0) // \n",
     3, 28, "expected an expression but found 'newline'"},
    {HDR "    x: T.float32 = 1\n    y: T.int32 = x\n",
     4, 16, "dtype mismatch in '=': int32 vs float32"},
    {HDR "    A[0] = not 1\n",
     3, 12, "operand of 'not' must be bool, found int32"},
    {HDR "    A[0] = T.float32(0) and T.float32(1)\n",
     3, 25, "operands of 'and' must be bool, found float32"},
    {HDR "    T.func_attr({\"a\": {\"b\": 1}})\n",
     3, 23, "nested dictionaries are not supported"},
    {HDR "    A[0:n] = A[0:4]\n",
     3, 9, "unknown name 'n'"},
    {HDR "    A[0] = T.Ramp(0, 1, 0)\n",
     3, 25, "bad number of lanes 0"},
    {HDR "    A[0] = A[0]]\n",
     3, 16, "unmatched ']'"},
    {HDR "    with T.block(\"b\"):\n        vi = T.axis.spatial(16, 1.5)\n",
     4, 33, "the iterator's binding must be an integer, found float32"},
    {HDR "    x: T.float33 = 1\n",
     3, 8, "unknown dtype 'float33'"},
    {HDR "    T.evaluate(T.exp(1.0, 2.0))\n",
     3, 16, "'T.exp' takes 1 argument but 2 were given"},
    {HDR "    a = T.match_buffer(A, (16,))\n",
     3, 24, "'A' is not a handle parameter"},
    {HDR "    A[0] = 1.0 ** 2\n",
     3, 16, "operator '**' is not supported"},
    {HDR "    T.evaluate(T.uint64(18446744073709551616))\n",
     3, 25, "integer literal too large"},
    {HDR "    T.evaluate(T.int64(9223372036854775808))\n",
     3, 24, "integer literal too large"},
    {HDR "    T.evaluate(T.uint64(-1))\n",
     3, 25, "literal -1 does not fit in uint64"},
    {HDR "    T.evaluate(A.shape)\n",
     3, 18, "buffer 'A' has no attribute 'shape' (only '.data' is supported)"},
    /* Views: `X = T.Buffer(...)` in a body needs the storage it views. */
    {HDR "    V = T.Buffer((16,))\n",
     3, 9, "a 'T.Buffer' in a body views existing storage: it needs data=Y.data"},
    {HDR "    V = T.Buffer((16,), data=A)\n",
     3, 30, "data= takes a handle: write 'A.data'"},
    {HDR "    x: T.int32 = 1\n    V = T.Buffer((16,), data=x)\n",
     4, 30, "data= takes a handle, not 'x' of dtype int32"},
    {HDR "    V = T.Buffer((16,), data=Q.data)\n",
     3, 30, "unknown name 'Q'"},
    {HDR "    B = T.alloc_buffer((4,), data=A.data)\n",
     3, 30, "'data=' is only supported in a view, 'X = T.Buffer(..., data=Y.data)' in a body"},
    {HDR "    for i in range(4):\n        V = T.Buffer((16,), data=A.data)\n        V[i] = 1.0\n    V[0] = 1.0\n",
     6, 5, "unknown name 'V'"},
    /* A block's header prints before its declarations: it cannot use them. */
    {HDR "    with T.block(\"b\"):\n        S = T.alloc_buffer((4,))\n        T.reads(S[0:4])\n        A[0] = S[0]\n",
     5, 17, "buffer 'S' is declared inside this block: its header cannot use it"},
    {HDR "    with T.block(\"b\"):\n        S = T.alloc_buffer((4,))\n        T.where(S[0] > T.float32(0))\n        A[0] = S[0]\n",
     5, 17, "buffer 'S' is declared inside this block: its header cannot use it"},
};

static void test_each_error_names_what_and_where(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    const error_case_t *c = &cases[i];
    tir_module_t *m = NULL;
    tir_parse_error_t err;
    int rc = tir_parse(&m, c->src, strlen(c->src), "t.py", &err);
    if (rc != MLC_EPARSE || err.line != c->line || err.col != c->col ||
        strcmp(err.message, c->message) != 0)
      fail_msg("case %zu: got %d %d:%d '%s', want %d:%d '%s'", i, rc, err.line, err.col,
               err.message, c->line, c->col, c->message);
    assert_null(m);
    char want[700];
    snprintf(want, sizeof want, "t.py:%d:%d: %s", c->line, c->col, c->message);
    assert_string_equal(mlc_error_last(), want);
    assert_int_equal(mlc_error_last_code(), MLC_EPARSE);
    assert_string_equal(err.file, "t.py");
  }
}

static void test_error_format_shows_line_and_caret(void **state) {
  (void)state;
  const char *src = HDR "    for i in range(16):\n        A[vk] = T.float32(0)\n";
  tir_module_t *m = NULL;
  tir_parse_error_t err;
  assert_int_equal(tir_parse(&m, src, strlen(src), "mm.py", &err), MLC_EPARSE);
  assert_string_equal(err.source_line, "        A[vk] = T.float32(0)");
  mlc_strbuf_t sb;
  mlc_sb_init(&sb);
  tir_parse_error_format(&err, &sb);
  assert_string_equal(mlc_sb_str(&sb), "mm.py:4:11: unknown name 'vk'\n"
                                       "        A[vk] = T.float32(0)\n"
                                       "          ^\n");
  mlc_sb_free(&sb);
}

static void test_caret_follows_tabs(void **state) {
  (void)state;
  const char *src = "@T.prim_func\ndef f():\n\tT.evaluate(q)\n";
  tir_module_t *m = NULL;
  tir_parse_error_t err;
  assert_int_equal(tir_parse(&m, src, strlen(src), NULL, &err), MLC_EPARSE);
  mlc_strbuf_t sb;
  mlc_sb_init(&sb);
  tir_parse_error_format(&err, &sb);
  assert_string_equal(mlc_sb_str(&sb), "<input>:3:13: unknown name 'q'\n"
                                       "\tT.evaluate(q)\n"
                                       "\t           ^\n");
  mlc_sb_free(&sb);
}

/* Builds `prefix` + `unit` * n + `suffix` in a heap buffer. */
static char *repeat(const char *prefix, const char *unit, int n, const char *suffix) {
  size_t len = strlen(prefix) + strlen(unit) * (size_t)n + strlen(suffix) + 1;
  char *s = malloc(len);
  assert_non_null(s);
  strcpy(s, prefix);
  for (int i = 0; i < n; i++) strcat(s, unit);
  strcat(s, suffix);
  return s;
}

static void expect_error(const char *src, const char *message) {
  tir_module_t *m = NULL;
  tir_parse_error_t err;
  int rc = tir_parse(&m, src, strlen(src), "deep.py", &err);
  if (rc != MLC_EPARSE || strcmp(err.message, message) != 0)
    fail_msg("got %d '%s', want '%s'", rc, err.message, message);
}

/* Deep input is refused before it can exhaust the stack, here or in the
 * printer and visitors that recurse over the IR later. */
static void test_nesting_too_deep(void **state) {
  (void)state;
  char *parens = repeat(HDR "    A[0] = ", "(", 5000, "1");
  expect_error(parens, "nesting too deep");
  free(parens);
  char *nots = repeat(HDR "    T.evaluate(", "not ", 5000, "True)\n");
  expect_error(nots, "nesting too deep");
  free(nots);
  char *negs = repeat(HDR "    A[0] = ", "-", 5000, "A[0]\n");
  expect_error(negs, "nesting too deep");
  free(negs);
  char *sum = repeat(HDR "    A[0] = A[0]", " + A[0]", 5000, "\n");
  expect_error(sum, "nesting too deep");
  free(sum);
  char *lets = repeat(HDR, "    x = 1\n", 5000, "    A[0] = T.float32(0)\n");
  expect_error(lets, "nesting too deep");
  free(lets);
  /* 300 nested ifs, each indented one more space. */
  char *ifs = malloc(300 * 320 + 200);
  assert_non_null(ifs);
  strcpy(ifs, HDR);
  for (int d = 0; d < 300; d++) {
    char *end = ifs + strlen(ifs);
    memset(end, ' ', (size_t)d + 4);
    strcpy(end + d + 4, "if True:\n");
  }
  strcat(ifs, "        A[0] = T.float32(0)\n");
  expect_error(ifs, "nesting too deep");
  free(ifs);
  /* Still fine at depths real programs have. */
  char *ok = repeat(HDR "    A[0] = A[0]", " + A[0]", 500, "\n");
  tir_module_t *m = NULL;
  tir_parse_error_t err;
  assert_int_equal(tir_parse(&m, ok, strlen(ok), "ok.py", &err), MLC_OK);
  tir_module_free(m);
  free(ok);
}

/* Bytes that are not TVMScript at all: an error, never a crash. */
static void test_binary_garbage_is_an_error(void **state) {
  (void)state;
  const char garbage[] = {'@', 'T', '.', 'p', 'r', 'i', 'm', '_', 'f', 'u', 'n', 'c', '\n',
                          'd', 'e', 'f', ' ', 'f', '(', ')', ':', '\n', ' ', ' ', '\0',
                          (char)0xff, '\n'};
  tir_module_t *m = NULL;
  tir_parse_error_t err;
  assert_int_equal(tir_parse(&m, garbage, sizeof garbage, "bin", &err), MLC_EPARSE);
  assert_string_equal(err.message, "invalid character '\\x00'");
  assert_int_equal(err.line, 3);
  assert_int_equal(err.col, 3);
  /* No error struct and no file name: the detail is still there. */
  assert_int_equal(tir_parse(&m, garbage, sizeof garbage, NULL, NULL), MLC_EPARSE);
  assert_string_equal(mlc_error_last(), "<input>:3:3: invalid character '\\x00'");
  assert_int_equal(tir_parse(&m, NULL, 0, "empty", &err), MLC_EPARSE);
  assert_string_equal(err.message, "expected '@T.prim_func' or '@I.ir_module' but found 'end of input'");
}

static const char medium[] =
    "# from tvm.script import ir as I\n"
    "@I.ir_module\n"
    "class Module:\n"
    "    @T.prim_func\n"
    "    def mm(a: T.handle, B: T.Buffer((64, 64), \"float32\"), C: T.Buffer((64, 64), \"float32\")):\n"
    "        T.func_attr({\"global_symbol\": \"mm\", \"tir.noalias\": T.bool(True), \"l\": [1, 2]})\n"
    "        n = T.int32()\n"
    "        A = T.match_buffer(a, (64, 64), strides=(n, 1))\n"
    "        X = T.alloc_buffer((64,), scope=\"local\")\n"
    "        for i, j, k in T.grid(64, 64, 64):\n"
    "            with T.block(\"C\"):\n"
    "                vi, vj, vk = T.axis.remap(\"SSR\", [i, j, k])\n"
    "                with T.init():\n"
    "                    C[vi, vj] = T.float32(0)\n"
    "                C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]\n"
    "        for i in T.parallel(64, annotations={\"pragma\": \"x\"}):\n"
    "            with T.block(\"D\"):\n"
    "                vi = T.axis.spatial((0, 64), i)\n"
    "                T.where(i < 64)\n"
    "                T.reads(C[vi, 0:64])\n"
    "                T.writes(X[vi])\n"
    "                X[vi] = T.max(C[vi, 0], T.exp(C[vi, 1])) // 2\n"
    "\n"
    "    @T.prim_func\n"
    "    def low(A: T.Buffer((64,), \"float32\")):\n"
    "        A_1 = T.Buffer((8, 8), data=A.data)\n"
    "        for i in T.thread_binding(8, thread=\"threadIdx.x\"):\n"
    "            A_1[i, 0] = T.float32(0)\n"
    "            x: T.float32 = A[i] * 2\n"
    "            assert x > 0, \"positive\"\n"
    "            D = T.decl_buffer((8,), \"float16\", scope=\"shared\")\n"
    "            D[i] = T.Cast(\"float16\", x)\n"
    "            A[i * 8:i * 8 + 8] = T.Broadcast(T.float32(1), 8)\n"
    "            if T.likely(i < 4):\n"
    "                T.tvm_storage_sync(\"shared\")\n"
    "            else:\n"
    "                T.evaluate(T.call_extern(\"int32\", \"f\", i, \"s\\n\"))\n";

/* Every allocation the parser makes may fail: each injection point gives
 * MLC_ENOMEM (no crash, no leak: ASan checks) until the parse succeeds. */
static void test_every_allocation_failure_is_clean(void **state) {
  (void)state;
  int n_enomem = 0;
  for (long i = 0; i < 100000; i++) {
    tir_module_t *m = NULL;
    tir_parse_error_t err;
    mlc_alloc_fail_after(i);
    int rc = tir_parse(&m, medium, strlen(medium), "medium.py", &err);
    mlc_alloc_fail_after(-1);
    if (rc == MLC_OK) {
      assert_int_equal(m->nfuncs, 2);
      tir_module_free(m);
      break;
    }
    if (rc != MLC_ENOMEM) fail_msg("injection %ld: status %d: %s", i, rc, mlc_error_last());
    assert_null(m);
    n_enomem++;
  }
  assert_true(n_enomem > 3); /* the loop really went through failure points */
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_each_error_names_what_and_where),
      cmocka_unit_test(test_error_format_shows_line_and_caret),
      cmocka_unit_test(test_caret_follows_tabs),
      cmocka_unit_test(test_nesting_too_deep),
      cmocka_unit_test(test_binary_garbage_is_an_error),
      cmocka_unit_test(test_every_allocation_failure_is_clean),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
