/*
 * cli.c - what the programs that read TVMScript share: loading a file with
 * errors in DESIGN.md's form, and picking a function (tir.h, "Command-line
 * helpers"). mlc-sched (apply, lower, space) and mlc-tune use them.
 */
#include "tir/tir.h"

#include <stdio.h>
#include <string.h>

enum { CLI_OK = 0, CLI_WORK = 1, CLI_USAGE = 2 };


const char *tir_cli_shown_path(const char *path) { return strcmp(path, "-") == 0 ? "<stdin>" : path; }

int tir_cli_load_module(const char *prog, const char *path, tir_module_t **out) {
  char *src = NULL;
  size_t len = 0;
  const char *shown = tir_cli_shown_path(path);
  *out = NULL;
  if (mlc_read_file(&src, &len, path) != MLC_OK) return mlc_cli_fail(prog, CLI_USAGE, "%s", mlc_error_last());
  tir_parse_error_t perr;
  memset(&perr, 0, sizeof perr);
  int st = tir_parse(out, src, len, shown, &perr);
  mlc_free(src);
  if (st == MLC_EPARSE) {
    mlc_strbuf_t sb;
    mlc_sb_init(&sb);
    tir_parse_error_format(&perr, &sb);
    fprintf(stderr, "%s: error: %s", prog, mlc_sb_str(&sb));
    if (sb.len == 0 || sb.data[sb.len - 1] != '\n') fputc('\n', stderr);
    mlc_sb_free(&sb);
    return CLI_USAGE;
  }
  if (st != MLC_OK) return mlc_cli_fail(prog, CLI_WORK, "%s: %s", shown, mlc_error_last());
  for (int i = 0; i < (*out)->nfuncs; i++) {
    if (tir_verify((*out)->funcs[i], NULL) == MLC_OK) continue;
    mlc_cli_fail(prog, CLI_USAGE, "%s: %s: %s", shown, (*out)->funcs[i]->name, mlc_error_last());
    tir_module_free(*out);
    *out = NULL;
    return CLI_USAGE;
  }
  return CLI_OK;
}

int tir_cli_pick_func(const char *prog, const tir_module_t *m, const char *name, const char *path,
                      tir_func_t **out) {
  *out = NULL;
  if (name) *out = tir_module_find(m, name);
  else if (m->nfuncs == 1) *out = m->funcs[0];
  else *out = tir_module_find(m, "main");
  if (*out) return CLI_OK;
  mlc_strbuf_t sb;
  mlc_sb_init(&sb);
  for (int i = 0; i < m->nfuncs; i++) mlc_sb_printf(&sb, "%s%s", i ? ", " : "", m->funcs[i]->name);
  const char *shown = tir_cli_shown_path(path);
  if (name) mlc_cli_fail(prog, CLI_USAGE, "%s: no function '%s' (functions: %s)", shown, name, mlc_sb_str(&sb));
  else mlc_cli_fail(prog, CLI_USAGE, "%s has %d functions; pick one with --func (%s)", shown, m->nfuncs, mlc_sb_str(&sb));
  mlc_sb_free(&sb);
  return CLI_USAGE;
}
