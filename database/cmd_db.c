/*
 * cmd_db.c - the mlc-db program (DESIGN.md, "Programs"; user guide in
 * docs/mlc-db.md): the dispatcher, the options every subcommand shares, and
 * the maintenance commands `init`, `stats`, `export`, `import` and `prune`.
 * The query commands `top`, `list` and `show` are in cmd_db_query.c, output
 * formatting in cmd_db_out.c.
 *
 * The database is --db URI, else $MLC_DB, else the embedded `file:./mlc-db`.
 * Exit status: 0 on success, 1 when the work fails (an unknown record id, a
 * database error while working), 2 for bad usage or bad input (unknown
 * options, a bad URI, a database that cannot be opened or has a newer
 * schema). Errors go to stderr as "mlc-db: error: ..."; nothing aborts on
 * user input or on damaged records.
 */
#include "database/cmd_db_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef MLC_VERSION
#define MLC_VERSION "0.0.0"
#endif

int db_cmd_fail(int code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fflush(stdout); /* keep what was printed before the error in order */
  fprintf(stderr, PROG ": error: ");
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  return code;
}

int db_cmd_exit_for(int st) {
  return st == MLC_EINVAL || st == MLC_EPARSE || st == MLC_EUNSUPPORTED ? EXIT_USAGE : EXIT_WORK;
}

int db_cmd_fail_status(int st, const char *context) {
  const char *detail = mlc_error_last();
  if (!*detail) detail = mlc_status_str(st);
  return db_cmd_fail(db_cmd_exit_for(st), "%s: %s", context, detail);
}

int db_cmd_finish_output(int code) {
  if (fflush(stdout) != 0 || ferror(stdout))
    return db_cmd_fail(EXIT_WORK, "writing standard output: %s", strerror(errno));
  return code;
}

/* The trace printer the program installed (cmd_db.h explains why it is a
 * hook). Set once by main before any command runs. */
static mlc_db_trace_printer_fn trace_printer;

void mlc_db_set_trace_printer(mlc_db_trace_printer_fn fn) { trace_printer = fn; }
mlc_db_trace_printer_fn db_cmd_trace_printer(void) { return trace_printer; }

/* ------------------------------------------------------------------------ */
/* Arguments                                                                 */
/* ------------------------------------------------------------------------ */

bool db_cmd_opt_value(db_cmd_args_t *a, const char *name, const char **value) {
  const char *arg = a->argv[a->i];
  size_t n = strlen(name);
  if (a->only_positional || strncmp(arg, name, n) != 0) return false;
  if (arg[n] == '=') {
    *value = arg + n + 1;
  } else if (arg[n] == '\0') {
    if (a->i + 1 >= a->argc) {
      a->error = true;
      if (a->cmd) db_cmd_fail(EXIT_USAGE, "%s: option %s needs a value", a->cmd, name);
      else db_cmd_fail(EXIT_USAGE, "option %s needs a value", name);
      return true;
    }
    *value = a->argv[++a->i];
  } else {
    return false;
  }
  return true;
}

bool db_cmd_opt_flag(db_cmd_args_t *a, const char *name) {
  return !a->only_positional && strcmp(a->argv[a->i], name) == 0;
}

bool db_cmd_is_positional(db_cmd_args_t *a) {
  const char *arg = a->argv[a->i];
  if (!a->only_positional && strcmp(arg, "--") == 0) {
    a->only_positional = true;
    return false;
  }
  return a->only_positional || arg[0] != '-' || arg[1] == '\0';
}

bool db_cmd_common_opt(db_cmd_args_t *a, const char *help, bool *helped) {
  if (db_cmd_opt_flag(a, "--help") || db_cmd_opt_flag(a, "-h")) {
    fputs(help, stdout);
    *helped = true;
  } else if (db_cmd_opt_flag(a, "--json")) {
    a->format = DB_OUT_JSON;
  } else if (db_cmd_opt_flag(a, "--table")) {
    a->format = DB_OUT_TABLE;
  } else if (!db_cmd_opt_value(a, "--db", &a->uri)) {
    return false;
  }
  return true;
}

int db_cmd_bad_option(db_cmd_args_t *a) {
  return db_cmd_fail(EXIT_USAGE, "%s: unknown option '%s' (see `" PROG " %s --help`)", a->cmd, a->argv[a->i], a->cmd);
}

bool db_cmd_parse_i64(const char *s, int64_t *out) {
  char *end;
  errno = 0;
  long long v = strtoll(s, &end, 10);
  if (errno || end == s || *end) return false;
  *out = v;
  return true;
}

bool db_cmd_parse_key(const char *s, uint64_t *out) {
  size_t n = strlen(s);
  if (n == 0 || n > 16 || strspn(s, "0123456789abcdefABCDEF") != n) return false;
  *out = strtoull(s, NULL, 16);
  return true;
}

/* Parses a subcommand's arguments when it takes only the common options and
 * at most `maxpos` positionals (stored in pos[]). EXIT_OK, or the status;
 * *helped when --help was printed. */
static int simple_args(db_cmd_args_t *a, const char *help, int maxpos, const char **pos, int *npos, bool *helped) {
  *npos = 0;
  for (a->i = 1; a->i < a->argc && !a->error && !*helped; a->i++) {
    if (db_cmd_common_opt(a, help, helped)) continue;
    if (db_cmd_is_positional(a)) {
      if (*npos == maxpos) return db_cmd_fail(EXIT_USAGE, "%s: unexpected argument '%s' (see `" PROG " %s --help`)", a->cmd, a->argv[a->i], a->cmd);
      pos[(*npos)++] = a->argv[a->i];
    } else if (strcmp(a->argv[a->i], "--") != 0) {
      return db_cmd_bad_option(a);
    }
  }
  return a->error ? EXIT_USAGE : EXIT_OK;
}

/* ------------------------------------------------------------------------ */
/* Opening                                                                   */
/* ------------------------------------------------------------------------ */

int db_cmd_open_uri(const char *uri, db_t **out) {
  *out = NULL;
  mlc_error_clear();
  int st = db_open(out, uri);
  if (st == MLC_OK) return EXIT_OK;
  const char *detail = mlc_error_or(mlc_status_str(st));
  /* Not being able to open the database at all is always the user's input
   * (the URI, the server it names, the directory): exit 2. */
  return db_cmd_fail(EXIT_USAGE, "cannot open database: %s", detail);
}

int db_cmd_open(db_cmd_args_t *a, db_t **out) { return db_cmd_open_uri(a->uri, out); }

/* ------------------------------------------------------------------------ */
/* init                                                                      */
/* ------------------------------------------------------------------------ */

static const char init_help[] =
    "usage: " PROG " init [--db URI] [--json]\n"
    "\n"
    "Creates the database, or migrates an older schema to this build's (PostgreSQL),\n"
    "and prints the database's URI (passwords hidden) and that it is ready.\n"
    "Running it again changes nothing.\n"
    "\n"
    "Exit status: 0 ok, 1 the migration failed, 2 the database cannot be opened\n"
    "or was written by a newer mlc-tune.\n";

static int cmd_init(db_cmd_args_t *a) {
  bool helped = false;
  int npos, code = simple_args(a, init_help, 0, NULL, &npos, &helped);
  if (code != EXIT_OK || helped) return code;
  db_t *db;
  if ((code = db_cmd_open(a, &db)) != EXIT_OK) return code;
  int version = 0;
  int st = db_init(db);
  if (st == MLC_OK) st = db_schema_version(db, &version, NULL); /* what init left */
  if (st != MLC_OK) {
    code = db_cmd_fail_status(st, "init");
  } else if (a->format == DB_OUT_JSON) {
    json_t *o = json_pack("{s:s, s:i}", "db", db_uri(db), "schema_version", version);
    code = db_cmd_print_json(o);
  } else {
    printf("%s: schema version %d\n", db_uri(db), version);
  }
  db_close(db);
  return code;
}

/* ------------------------------------------------------------------------ */
/* stats                                                                     */
/* ------------------------------------------------------------------------ */

static const char stats_help[] =
    "usage: " PROG " stats [--db URI] [--json] [--table]\n"
    "\n"
    "Prints the number of workloads, records and failures, the failures by kind\n"
    "and the records per target. One row per line, tab-separated when standard\n"
    "output is not a terminal:\n"
    "  workloads  N\n"
    "  records    N\n"
    "  failures   N\n"
    "  failures   KIND  N      (one per kind seen)\n"
    "  target     TARGET  N    (one per target)\n";

static json_t *stats_json(const db_stats_t *s) {
  json_t *kinds = json_object(), *targets = json_object();
  for (int k = 1; kinds && k < MLC_ERROR_KIND_COUNT; k++)
    json_object_set_new(kinds, mlc_error_kind_name((mlc_error_kind_t)k), json_integer(s->failures_by_kind[k]));
  for (int i = 0; targets && i < s->ntargets; i++)
    json_object_set_new(targets, s->targets[i], json_integer(s->records_per_target[i]));
  return json_pack("{s:I, s:I, s:I, s:o*, s:o*}", "workloads", (json_int_t)s->nworkloads, "records",
                   (json_int_t)s->nrecords, "failures", (json_int_t)s->nfailures, "failures_by_kind", kinds,
                   "records_per_target", targets);
}

/* One "what of count" row. */
static int stats_row(db_table_t *t, const char *what, const char *of, int64_t count) {
  char n[32];
  snprintf(n, sizeof n, "%lld", (long long)count);
  return db_table_row(t, (const char *[]){what, of, n});
}

static int stats_rows(db_table_t *t, const db_stats_t *s) {
  int st = stats_row(t, "workloads", "", s->nworkloads);
  if (st == MLC_OK) st = stats_row(t, "records", "", s->nrecords);
  if (st == MLC_OK) st = stats_row(t, "failures", "", s->nfailures);
  for (int k = 1; st == MLC_OK && k < MLC_ERROR_KIND_COUNT; k++)
    if (s->failures_by_kind[k]) st = stats_row(t, "failures", mlc_error_kind_name((mlc_error_kind_t)k), s->failures_by_kind[k]);
  for (int i = 0; st == MLC_OK && i < s->ntargets; i++) st = stats_row(t, "target", s->targets[i], s->records_per_target[i]);
  return st;
}

static int cmd_stats(db_cmd_args_t *a) {
  bool helped = false;
  int npos, code = simple_args(a, stats_help, 0, NULL, &npos, &helped);
  if (code != EXIT_OK || helped) return code;
  db_t *db;
  if ((code = db_cmd_open(a, &db)) != EXIT_OK) return code;
  db_stats_t s;
  memset(&s, 0, sizeof s);
  int st = db_stats(db, &s);
  if (st != MLC_OK) {
    code = db_cmd_fail_status(st, "stats");
  } else if (a->format == DB_OUT_JSON) {
    code = db_cmd_print_json(stats_json(&s));
  } else {
    static const char *const heads[] = {"what", "of", ">count"};
    db_table_t t;
    st = db_table_init(&t, 3, heads);
    if (st == MLC_OK) st = stats_rows(&t, &s);
    if (st == MLC_OK) db_table_print(&t, a->format);
    else code = db_cmd_fail(EXIT_WORK, "out of memory");
    db_table_free(&t);
  }
  db_stats_free(&s);
  db_close(db);
  return code;
}

/* ------------------------------------------------------------------------ */
/* export / import                                                           */
/* ------------------------------------------------------------------------ */

static const char export_help[] =
    "usage: " PROG " export --to URI [--db URI] [--json]\n"
    "\n"
    "Copies every workload and record of the database (--db) that URI lacks into\n"
    "URI, creating URI's schema when needed. Lossless (ids, times and every field\n"
    "kept) and idempotent: running it again copies nothing. Prints the number of\n"
    "records copied.\n";

static const char import_help[] =
    "usage: " PROG " import --from URI [--db URI] [--json]\n"
    "\n"
    "Copies every workload and record of URI that the database (--db) lacks into\n"
    "the database: `export` in the other direction. Lossless and idempotent.\n"
    "Prints the number of records copied.\n";

/* Copies `from` into `to` and reports it. */
static int transfer(db_cmd_args_t *a, const char *from_uri, const char *to_uri) {
  db_t *from = NULL, *to = NULL;
  int code = db_cmd_open_uri(from_uri, &from);
  if (code == EXIT_OK) code = db_cmd_open_uri(to_uri, &to);
  int64_t copied = 0;
  int st = code == EXIT_OK ? db_init(to) : MLC_OK;
  if (code == EXIT_OK && st != MLC_OK) code = db_cmd_fail_status(st, "preparing the destination");
  if (code == EXIT_OK && (st = db_transfer(to, from, &copied)) != MLC_OK) code = db_cmd_fail_status(st, a->cmd);
  if (code == EXIT_OK) {
    if (a->format == DB_OUT_JSON)
      code = db_cmd_print_json(json_pack("{s:s, s:s, s:I}", "from", db_uri(from), "to", db_uri(to), "copied", (json_int_t)copied));
    else
      printf("copied %lld records from %s to %s\n", (long long)copied, db_uri(from), db_uri(to));
  } else if (copied > 0) {
    fprintf(stderr, PROG ": note: %lld records were copied; running again copies only what is missing\n", (long long)copied);
  }
  db_close(to);
  db_close(from);
  return code;
}

/* export and import differ only in which side --db is. */
static int transfer_cmd(db_cmd_args_t *a, const char *help, const char *opt, bool to_other) {
  bool helped = false;
  const char *other = NULL;
  for (a->i = 1; a->i < a->argc && !a->error && !helped; a->i++) {
    if (db_cmd_common_opt(a, help, &helped) || db_cmd_opt_value(a, opt, &other)) continue;
    if (strcmp(a->argv[a->i], "--") != 0) return db_cmd_bad_option(a);
  }
  if (a->error) return EXIT_USAGE;
  if (helped) return EXIT_OK;
  if (!other) return db_cmd_fail(EXIT_USAGE, "%s: missing %s URI (see `" PROG " %s --help`)", a->cmd, opt, a->cmd);
  return to_other ? transfer(a, a->uri, other) : transfer(a, other, a->uri);
}

static int cmd_export(db_cmd_args_t *a) { return transfer_cmd(a, export_help, "--to", true); }
static int cmd_import(db_cmd_args_t *a) { return transfer_cmd(a, import_help, "--from", false); }

/* ------------------------------------------------------------------------ */
/* prune                                                                     */
/* ------------------------------------------------------------------------ */

static const char prune_help[] =
    "usage: " PROG " prune --keep N [--db URI] [--json]\n"
    "\n"
    "Keeps the N best measurements (fastest median) of every workload and target,\n"
    "and removes the other measurements. Failed trials are all kept, not reduced\n"
    "to counts: the cost model learns from them, and `list` and `stats` go on\n"
    "counting them per workload, target and kind. Prints how many records were\n"
    "removed. N must be at least 1. Running it again with the same N removes\n"
    "nothing. Back up first (`" PROG " export`) if the history matters.\n";

static int cmd_prune(db_cmd_args_t *a) {
  bool helped = false;
  const char *keep_s = NULL;
  for (a->i = 1; a->i < a->argc && !a->error && !helped; a->i++) {
    if (db_cmd_common_opt(a, prune_help, &helped) || db_cmd_opt_value(a, "--keep", &keep_s)) continue;
    if (strcmp(a->argv[a->i], "--") != 0) return db_cmd_bad_option(a);
  }
  if (a->error) return EXIT_USAGE;
  if (helped) return EXIT_OK;
  int64_t keep;
  if (!keep_s) return db_cmd_fail(EXIT_USAGE, "prune: missing --keep N (see `" PROG " prune --help`)");
  if (!db_cmd_parse_i64(keep_s, &keep) || keep < 1 || keep > INT32_MAX)
    return db_cmd_fail(EXIT_USAGE, "prune: --keep wants a whole number of at least 1, not '%s'", keep_s);
  db_t *db;
  int code = db_cmd_open(a, &db);
  if (code != EXIT_OK) return code;
  int64_t removed = 0;
  int st = db_prune(db, &removed, (int)keep);
  if (st != MLC_OK) code = db_cmd_fail_status(st, "prune");
  else if (a->format == DB_OUT_JSON)
    code = db_cmd_print_json(json_pack("{s:I, s:I}", "keep", (json_int_t)keep, "removed", (json_int_t)removed));
  else
    printf("removed %lld records\n", (long long)removed);
  db_close(db);
  return code;
}

/* ------------------------------------------------------------------------ */
/* Dispatch                                                                  */
/* ------------------------------------------------------------------------ */

/*      name      run          summary */
#define MLC_DB_COMMANDS(X)                                                         \
  X("init",   cmd_init,    "create the database or migrate its schema")            \
  X("top",    db_cmd_top,  "the best records per workload and target")             \
  X("show",   db_cmd_show, "one record in full, its trace as a script")            \
  X("list",   db_cmd_list, "workloads with record counts and best times")          \
  X("failures", db_cmd_failures, "failed trials, newest first, with their errors")    \
  X("stats",  cmd_stats,   "records, failures by kind, records per target")        \
  X("export", cmd_export,  "copy the database into another (--to URI)")            \
  X("import", cmd_import,  "copy another database into this one (--from URI)")     \
  X("prune",  cmd_prune,   "keep the best N per workload and target, and every failure")

static const struct {
  const char *name;
  int (*run)(db_cmd_args_t *a);
  const char *summary;
} commands[] = {
#define ROW_(name, run, summary) {name, run, summary},
    MLC_DB_COMMANDS(ROW_)
#undef ROW_
};
#define NCOMMANDS ((int)(sizeof(commands) / sizeof(commands[0])))

static void usage(FILE *out) {
  fprintf(out, "usage: " PROG " [--help] [--version] [--db URI] [--json] COMMAND [ARGS]\n\nCommands:\n");
  for (int i = 0; i < NCOMMANDS; i++) fprintf(out, "  %-8s %s\n", commands[i].name, commands[i].summary);
  fprintf(out, "\nThe database is --db URI (file:DIR or a PostgreSQL connection string), else\n"
               "$MLC_DB, else file:./mlc-db. Every command takes --json; tables are aligned on a\n"
               "terminal and tab-separated otherwise (--table forces the aligned form).\n"
               "Run `" PROG " COMMAND --help` for a command's options. Exit status: 0 ok,\n"
               "1 the work failed, 2 bad usage or bad input.\n");
}

static int run_command(int i, db_cmd_args_t *a) {
  int code = commands[i].run(a);
  return db_cmd_finish_output(code);
}

/* The options that may come before the command: --db URI, --json, --table. */
static int global_opts(int argc, char **argv, int *next, db_cmd_args_t *proto) {
  db_cmd_args_t g = {.argc = argc, .argv = argv}; /* no command yet: .cmd NULL */
  for (g.i = 1; g.i < argc && argv[g.i][0] == '-'; g.i++) {
    if (db_cmd_opt_flag(&g, "--json")) proto->format = DB_OUT_JSON;
    else if (db_cmd_opt_flag(&g, "--table")) proto->format = DB_OUT_TABLE;
    else if (!db_cmd_opt_value(&g, "--db", &proto->uri)) break;
    if (g.error) return EXIT_USAGE;
  }
  *next = g.i;
  return EXIT_OK;
}

int mlc_db_main(int argc, char **argv) {
  mlc_log_set_program(PROG);
  const char *env = getenv("MLC_DB");
  db_cmd_args_t proto = {.uri = env && *env ? env : NULL, .format = isatty(1) ? DB_OUT_TABLE : DB_OUT_TSV};
  int first;
  if (global_opts(argc, argv, &first, &proto) != EXIT_OK) return EXIT_USAGE;
  if (first >= argc) {
    usage(stderr);
    return EXIT_USAGE;
  }
  const char *cmd = argv[first];
  if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
    if (strcmp(cmd, "help") == 0 && first + 1 < argc) { /* `help top` is `top --help` */
      char *sub[] = {argv[first + 1], "--help"};
      for (int i = 0; i < NCOMMANDS; i++)
        if (strcmp(commands[i].name, sub[0]) == 0)
          return run_command(i, &(db_cmd_args_t){.argc = 2, .argv = sub, .cmd = sub[0]});
      return db_cmd_fail(EXIT_USAGE, "unknown command '%s'", sub[0]);
    }
    usage(stdout);
    return db_cmd_finish_output(EXIT_OK);
  }
  if (strcmp(cmd, "--version") == 0) {
    printf(PROG " %s\n", MLC_VERSION);
    return db_cmd_finish_output(EXIT_OK);
  }
  for (int i = 0; i < NCOMMANDS; i++) {
    if (strcmp(commands[i].name, cmd) == 0) {
      db_cmd_args_t a = proto;
      a.argc = argc - first;
      a.argv = argv + first;
      a.cmd = cmd;
      return run_command(i, &a);
    }
  }
  if (cmd[0] == '-') return db_cmd_fail(EXIT_USAGE, "unknown option '%s' (see `" PROG " --help`)", cmd);
  return db_cmd_fail(EXIT_USAGE, "unknown command '%s' (see `" PROG " --help`)", cmd);
}
