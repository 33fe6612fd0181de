/*
 * cli.c - what every program's command line shares: the error line and
 * "--name value" / "--name=value" options (support.h).
 */
#include "support/support.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int mlc_cli_fail(const char *prog, int code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fflush(stdout);
  fprintf(stderr, "%s: error: ", prog);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  return code;
}

bool mlc_cli_opt_value(int argc, char **argv, int *i, const char *name, const char **value) {
  const char *arg = argv[*i];
  size_t n = strlen(name);
  if (strncmp(arg, name, n) != 0) return false;
  if (arg[n] == '=') {
    *value = arg + n + 1;
  } else if (arg[n] == '\0') {
    *value = *i + 1 < argc ? argv[++*i] : NULL;
  } else {
    return false;
  }
  return true;
}
