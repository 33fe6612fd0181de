/*
 * space_cmd.c - `mlc-sched space` (docs/search/space.md):
 *
 *   mlc-sched space FILE [--target T] [--rules A,B,...] [--func NAME]
 *                        [--seed S] [--json]
 *
 * Generates the design space of a function of FILE for the target with the
 * target's default rules (or the rules named) and prints its traces: in
 * TVM's Python form, each under a `# sketch I of N` comment (so a sketch can
 * be cut out and given to `mlc-sched apply --script`), or with --json as one
 * object {"func", "target", "seed", "rules", "sketches": [trace JSON, ...]}.
 *
 * Exit status as the other mlc-sched commands: 0 ok, 1 the space could not
 * be generated, 2 bad usage or bad input.
 */
#include "search/space/space_cmd.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "search/space/rules.h"

#define PROG "mlc-sched"
#define MAX_RULES 16

enum { EXIT_OK = 0, EXIT_WORK = 1, EXIT_USAGE = 2 };

static const char space_help[] =
    "usage: " PROG " space FILE [--target T] [--rules A,B,...] [--func NAME]\n"
    "                      [--seed S] [--json]\n"
    "\n"
    "Prints the design space of a function of FILE (TVMScript: a @T.prim_func or\n"
    "an @I.ir_module): the traces MetaSchedule's PostOrderApply makes from the\n"
    "schedule rules, sampling decisions included.\n"
    "\n"
    "  --target T        the target (default: llvm, the host CPU); its default\n"
    "                    rules are used (GPU rules for \"cuda -arch=sm_80\", rocm)\n"
    "  --rules A,B,...   these rules instead, in this order: AutoInline,\n"
    "                    AddRFactor, MultiLevelTiling, ParallelizeVectorizeUnroll,\n"
    "                    RandomComputeLocation, MultiLevelTilingWithIntrin,\n"
    "                    CrossThreadReduction, AutoBind (the target's variant\n"
    "                    where CPU and GPU differ)\n"
    "  --func NAME       the function of an IRModule (default: the only one,\n"
    "                    else \"main\")\n"
    "  --seed S          seed of the sampling (default 0)\n"
    "  --json            print JSON: {\"func\", \"target\", \"seed\", \"rules\",\n"
    "                    \"sketches\": [trace, ...]} with TVM's trace JSON\n"
    "\n"
    "Exit status: 0 ok, 1 the space could not be generated, 2 bad usage or bad\n"
    "input.\n";

typedef struct {
  const char *file, *target, *rules, *func, *seed;
  bool json;
} space_opts_t;

#define fail(code, ...) mlc_cli_fail(PROG, code, __VA_ARGS__)

/* ------------------------------------------------------------------------ */
/* Arguments                                                                 */
/* ------------------------------------------------------------------------ */

/* Parses the options; *helped when --help was printed. */
static int parse_args(int argc, char **argv, space_opts_t *o, bool *helped) {
  static const char *const names[] = {"--target", "--rules", "--func", "--seed"};
  bool positional_only = false;
  for (int i = 1; i < argc; i++) {
    const char *arg = argv[i];
    if (!positional_only && (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0)) {
      fputs(space_help, stdout);
      *helped = true;
      return EXIT_OK;
    }
    const char **slots[] = {&o->target, &o->rules, &o->func, &o->seed};
    bool matched = false;
    for (int k = 0; k < 4 && !positional_only && !matched; k++) {
      if (!mlc_cli_opt_value(argc, argv, &i, names[k], slots[k])) continue;
      if (!*slots[k]) return fail(EXIT_USAGE, "space: option %s needs a value", names[k]);
      matched = true;
    }
    if (matched) continue;
    if (!positional_only && strcmp(arg, "--json") == 0) {
      o->json = true;
    } else if (!positional_only && strcmp(arg, "--") == 0) {
      positional_only = true;
    } else if (positional_only || arg[0] != '-' || arg[1] == '\0') {
      if (o->file) return fail(EXIT_USAGE, "space: more than one FILE given");
      o->file = arg;
    } else {
      return fail(EXIT_USAGE, "space: unknown option '%s' (see `" PROG " space --help`)", arg);
    }
  }
  if (!o->file) return fail(EXIT_USAGE, "space: missing FILE (see `" PROG " space --help`)");
  return EXIT_OK;
}

/* --rules A,B: looks each name up. */
static int parse_rules(const ms_ctx_t *ctx, const char *list, const ms_rule_t **rules, int *n) {
  *n = 0;
  const char *p = list;
  while (*p) {
    const char *comma = strchr(p, ',');
    size_t len = comma ? (size_t)(comma - p) : strlen(p);
    char name[64];
    if (len == 0 || len >= sizeof name) return fail(EXIT_USAGE, "space: bad --rules list '%s'", list);
    memcpy(name, p, len);
    name[len] = '\0';
    const ms_rule_t *r = ms_rule_find_for(ctx, name); /* the target's variant */
    if (!r) return fail(EXIT_USAGE, "space: unknown rule '%s' (see `" PROG " space --help`)", name);
    if (*n == MAX_RULES) return fail(EXIT_USAGE, "space: more than %d rules", MAX_RULES);
    rules[(*n)++] = r;
    p += len + (comma ? 1 : 0);
    if (comma && !*p) return fail(EXIT_USAGE, "space: bad --rules list '%s'", list);
  }
  if (*n == 0) return fail(EXIT_USAGE, "space: --rules names no rule");
  return EXIT_OK;
}

static int parse_seed(const char *s, uint64_t *out) {
  char *end;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 0);
  if (errno || end == s || *end || s[0] == '-') return fail(EXIT_USAGE, "space: bad --seed '%s'", s);
  *out = v;
  return EXIT_OK;
}

/* ------------------------------------------------------------------------ */
/* Loading                                                                   */
/* ------------------------------------------------------------------------ */

/* ------------------------------------------------------------------------ */
/* Output                                                                    */
/* ------------------------------------------------------------------------ */

static int print_python(const ms_space_t *space) {
  for (int i = 0; i < space->n; i++) {
    char *text = sch_trace_to_python(space->traces[i]);
    if (!text) return fail(EXIT_WORK, "out of memory");
    printf("%s# sketch %d of %d\n%s", i ? "\n" : "", i, space->n, text);
    mlc_free(text);
  }
  return EXIT_OK;
}

static json_t *space_json(const ms_space_t *space, const char *func, const mlc_target_t *target, uint64_t seed,
                          const ms_rule_t *const *rules, int nrules) {
  char tbuf[512];
  json_t *root = json_object(), *names = json_array(), *sketches = json_array();
  if (!root || !names || !sketches) goto fail;
  for (int i = 0; i < nrules; i++) json_array_append_new(names, json_string(rules[i]->name));
  for (int i = 0; i < space->n; i++) {
    json_t *t = NULL;
    if (sch_trace_to_json(&t, space->traces[i]) != MLC_OK) goto fail;
    json_array_append_new(sketches, t);
  }
  json_object_set_new(root, "func", json_string(func));
  json_object_set_new(root, "target", json_string(mlc_target_str(target, tbuf, sizeof tbuf)));
  json_object_set_new(root, "seed", json_integer((json_int_t)seed));
  json_object_set_new(root, "rules", names);
  json_object_set_new(root, "sketches", sketches);
  return root;
fail:
  json_decref(root);
  json_decref(names);
  json_decref(sketches);
  return NULL;
}

static int print_json(const ms_space_t *space, const char *func, const mlc_target_t *target, uint64_t seed,
                      const ms_rule_t *const *rules, int nrules) {
  json_t *j = space_json(space, func, target, seed, rules, nrules);
  char *text = j ? json_dumps(j, JSON_REAL_PRECISION(17)) : NULL;
  json_decref(j);
  if (!text) return fail(EXIT_WORK, "out of memory");
  printf("%s\n", text);
  free(text);
  return EXIT_OK;
}

/* ------------------------------------------------------------------------ */
/* The command                                                               */
/* ------------------------------------------------------------------------ */

static int run(const space_opts_t *o, const tir_func_t *f, const mlc_target_t *target, uint64_t seed) {
  const ms_rule_t *picked[MAX_RULES];
  const ms_rule_t *const *rules;
  int nrules, code;
  ms_ctx_t ctx;
  ms_ctx_init(&ctx, f, f->name, target, seed);
  if (o->rules) {
    if ((code = parse_rules(&ctx, o->rules, picked, &nrules)) != EXIT_OK) return code;
    rules = picked;
  } else {
    rules = ms_rules_default(&ctx, &nrules);
  }
  ms_space_t space;
  if (ms_space_generate(&space, &ctx, rules, nrules) != MLC_OK)
    return fail(EXIT_WORK, "%s: %s", tir_cli_shown_path(o->file), mlc_error_last());
  code = o->json ? print_json(&space, f->name ? f->name : "main", target, seed, rules, nrules) : print_python(&space);
  ms_space_free(&space);
  return code;
}

int ms_space_cmd(int argc, char **argv) {
  mlc_log_set_program(PROG);
  space_opts_t o;
  memset(&o, 0, sizeof o);
  bool helped = false;
  int code = parse_args(argc, argv, &o, &helped);
  if (code != EXIT_OK || helped) return code;
  uint64_t seed = 0;
  if (o.seed && (code = parse_seed(o.seed, &seed)) != EXIT_OK) return code;
  mlc_target_t target;
  if (mlc_target_parse(&target, o.target ? o.target : "llvm") != MLC_OK)
    return fail(EXIT_USAGE, "space: bad --target: %s", mlc_error_last());
  tir_module_t *m = NULL;
  tir_func_t *f = NULL;
  if ((code = tir_cli_load_module(PROG, o.file, &m)) == EXIT_OK && (code = tir_cli_pick_func(PROG, m, o.func, o.file, &f)) == EXIT_OK)
    code = run(&o, f, &target, seed);
  tir_module_free(m);
  if (fflush(stdout) != 0 || ferror(stdout)) return fail(EXIT_WORK, "writing standard output: %s", strerror(errno));
  return code;
}
