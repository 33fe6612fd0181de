/*
 * fuzz_tir_parse.c - libFuzzer target for the TVMScript parser.
 *
 * Any input must parse or fail with one positioned error: never crash, hang
 * or leak (ASan and UBSan are on in fuzz builds). When an input parses, its
 * canonical print must parse again and print to the same text: the printer
 * only writes what the parser reads, and printing is a fixed point.
 *
 * Seed it with the corpus of real TVM output:
 *   fuzz_tir_parse -max_total_time=120 corpus-dir tests/tir/corpus
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tir/tir.h"

static void fail(const char *what, const char *text, const char *detail) {
  fprintf(stderr, "%s\n--- printed ---\n%s\n--- detail ---\n%s\n", what, text ? text : "(null)",
          detail);
  abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  /* An exact-size copy, not NUL-terminated, so ASan catches reads past len. */
  char *src = malloc(size ? size : 1);
  if (!src) return 0;
  if (size) memcpy(src, data, size);
  tir_module_t *m = NULL;
  tir_parse_error_t err;
  int rc = tir_parse(&m, src, size, "fuzz.py", &err);
  if (rc != MLC_OK) {
    if (rc != MLC_EPARSE && rc != MLC_ENOMEM) fail("unexpected status", NULL, mlc_error_last());
    if (rc == MLC_EPARSE && (err.line < 1 || err.col < 1)) fail("error without a position", NULL, err.message);
    mlc_strbuf_t sb;
    mlc_sb_init(&sb);
    tir_parse_error_format(&err, &sb);
    mlc_sb_free(&sb);
    free(src);
    return 0;
  }
  char *text = tir_print_module(m);
  if (!text) fail("print failed", NULL, mlc_error_last());
  tir_module_t *again = NULL;
  if (tir_parse(&again, text, strlen(text), "reprint.py", &err) != MLC_OK)
    fail("the printed module does not parse", text, mlc_error_last());
  char *text2 = tir_print_module(again);
  if (!text2 || strcmp(text, text2) != 0) fail("printing is not a fixed point", text2, text);
  mlc_free(text2);
  mlc_free(text);
  tir_module_free(again);
  tir_module_free(m);
  free(src);
  return 0;
}
