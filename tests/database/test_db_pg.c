/*
 * test_db_pg.c - the PostgreSQL backend (database/pg/): the shared suite
 * (db_suite.h) on fresh databases of a throwaway cluster (pg_cluster.h),
 * then what only this backend has: versioned migrations (init twice, a newer
 * schema refused), connection failures (unreachable server, bad strings,
 * passwords never shown), four processes committing at once, a killed
 * connection retried without loss, the three batch insert methods storing
 * the same bytes, top_k served by the partial index, a lookup by id served
 * by the primary key, and the advisory-lock lease. A server restart mid-run is test_db_pg_restart.c.
 *
 * Skips (printing why) when the PostgreSQL server binaries are missing. The
 * cluster is stopped by the group teardown, or by pg_cluster.h's atexit
 * handler and watchdog when a test dies.
 */
#include "db_suite.h"

#include "database/pg/pg_internal.h"
#include "pg_cluster.h"

static pg_cluster_t cluster;
static int ndatabases;

/* ---- fixtures ----------------------------------------------------------- */

/* Runs SQL on database `name` of the cluster; the result (PQclear it). */
static PGresult *sql_on(const char *name, const char *sql) {
  char uri[300];
  snprintf(uri, sizeof uri, "postgresql:///%s?host=%s&port=5432", name, cluster.dir);
  PGconn *conn = PQconnectdb(uri);
  assert_int_equal(PQstatus(conn), CONNECTION_OK);
  PGresult *res = PQexec(conn, sql);
  ExecStatusType st = PQresultStatus(res);
  if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK)
    fprintf(stderr, "%s: %s", sql, PQerrorMessage(conn));
  assert_true(st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK);
  PQfinish(conn);
  return res;
}

static void sql_run(const char *name, const char *sql) { PQclear(sql_on(name, sql)); }

/* A new empty database t<N>; its URI into uri (the suite's fresh function). */
static int fresh_pg_db(char *uri, size_t cap, void *payload) {
  (void)payload;
  char sql[64];
  int n = ndatabases++;
  snprintf(sql, sizeof sql, "CREATE DATABASE t%d", n);
  sql_run("postgres", sql);
  snprintf(uri, cap, "postgresql:///t%d?host=%s&port=5432", n, cluster.dir);
  return MLC_OK;
}

/* A fresh database, opened and initialised; its name into name. */
static db_t *open_fresh(char name[16]) {
  char uri[300];
  fresh_pg_db(uri, sizeof uri, NULL);
  snprintf(name, 16, "t%d", ndatabases - 1);
  db_t *db = NULL;
  assert_int_equal(db_open(&db, uri), MLC_OK);
  assert_int_equal(db_init(db), MLC_OK);
  return db;
}

static int64_t count_on(const char *name, const char *sql) {
  PGresult *res = sql_on(name, sql);
  int64_t n = strtoll(PQgetvalue(res, 0, 0), NULL, 10);
  PQclear(res);
  return n;
}

/* Warnings logged while a test runs. */
static char logged[8192];
static void capture(mlc_log_level_t level, const char *line, void *payload) {
  (void)level, (void)payload;
  size_t len = strlen(logged);
  snprintf(logged + len, sizeof logged - len, "%s\n", line);
}

static int start_capture(void **state) {
  (void)state;
  logged[0] = '\0';
  mlc_log_set_level(MLC_LOG_WARN);
  mlc_log_set_sink(capture, NULL);
  return 0;
}

static int stop_capture(void **state) {
  (void)state;
  mlc_log_set_sink(NULL, NULL);
  unsetenv("MLC_PG_INSERT");
  return 0;
}

/* A directory where nothing listens. */
static void empty_socket_dir(char dir[64]) {
  snprintf(dir, 64, "/tmp/mlc-nopg-XXXXXX");
  assert_non_null(mkdtemp(dir));
}

/* ---- schema ------------------------------------------------------------- */

static void test_init_twice_records_each_migration_once(void **state) {
  (void)state;
  char name[16];
  db_t *db = open_fresh(name);
  assert_int_equal(db_init(db), MLC_OK);
  int current = -1;
  assert_int_equal(db_schema_version(db, &current, NULL), MLC_OK);
  assert_int_equal(current, pg_schema_latest());
  db_close(db);
  assert_int_equal(count_on(name, "SELECT count(*) FROM mlc_schema_migrations"), pg_schema_latest());
  assert_int_equal(count_on(name, "SELECT max(version) FROM mlc_schema_migrations"),
                   pg_schema_latest());
  assert_int_equal(count_on(name, "SELECT count(*) FROM pg_tables WHERE tablename IN "
                                  "('workloads', 'devices', 'records', 'leases')"), 4);
  assert_int_equal(count_on(name, "SELECT count(*) FROM pg_indexes WHERE indexname IN "
                                  "('records_best_idx', 'records_trace_idx')"), 2);
}

static void test_newer_schema_is_refused_with_a_clear_message(void **state) {
  (void)state;
  char name[16];
  db_t *db = open_fresh(name);
  sql_run(name, "INSERT INTO mlc_schema_migrations (version) VALUES (999)");
  assert_int_equal(db_init(db), MLC_EIO); /* an open handle does not migrate it either */
  assert_non_null(strstr(mlc_error_last(), "schema version 999 is newer than this build"));
  char uri[300];
  snprintf(uri, sizeof uri, "%s", db_uri(db));
  db_close(db);
  db_t *again = NULL;
  assert_int_equal(db_open(&again, uri), MLC_EIO);
  assert_null(again);
  assert_non_null(strstr(mlc_error_last(), "schema version 999 is newer than this build"));
  assert_non_null(strstr(mlc_error_last(), uri));
}

static void test_operations_before_init_say_to_run_init(void **state) {
  (void)state;
  char uri[300];
  fresh_pg_db(uri, sizeof uri, NULL);
  db_t *db = NULL;
  assert_int_equal(db_open(&db, uri), MLC_OK); /* open does not create the schema */
  int current = -1, supported = -1;
  assert_int_equal(db_schema_version(db, &current, &supported), MLC_OK);
  assert_int_equal(current, 0); /* no schema yet */
  assert_int_equal(supported, pg_schema_latest());
  db_stats_t st;
  assert_int_equal(db_stats(db, &st), MLC_EIO);
  assert_non_null(strstr(mlc_error_last(), "mlc-db init"));
  db_close(db);
}

/* ---- connecting --------------------------------------------------------- */

static void test_unreachable_server_is_a_prompt_eio_naming_the_redacted_uri(void **state) {
  (void)state;
  char dir[64], uri[200], want[200];
  empty_socket_dir(dir);
  snprintf(uri, sizeof uri, "postgresql://mlc:s3cret@/mlc?host=%s", dir);
  snprintf(want, sizeof want, "could not connect to postgresql://mlc:***@/mlc?host=%s: ", dir);
  db_t *db = (db_t *)1;
  time_t t0 = time(NULL);
  assert_int_equal(db_open(&db, uri), MLC_EIO);
  assert_true(time(NULL) - t0 < 5); /* one attempt, no reconnect loop */
  assert_null(db);
  assert_non_null(strstr(mlc_error_last(), want));
  assert_non_null(strstr(mlc_error_last(), dir)); /* libpq's reason: the socket */
  assert_null(strstr(mlc_error_last(), "s3cret"));
  assert_null(strchr(mlc_error_last(), '\n'));
  rmdir(dir);
}

static void test_passwords_never_appear_in_messages_or_db_uri(void **state) {
  (void)state;
  char dir[64], uri[300];
  empty_socket_dir(dir);
  /* Keyword form, quoted value with a space. */
  snprintf(uri, sizeof uri, "host=%s password='s3 cret' dbname=mlc", dir);
  db_t *db = NULL;
  assert_int_equal(db_open(&db, uri), MLC_EIO);
  assert_non_null(strstr(mlc_error_last(), "password=***"));
  assert_null(strstr(mlc_error_last(), "s3 cret"));
  /* A password in the query string. */
  snprintf(uri, sizeof uri, "postgres:///mlc?host=%s&password=hunter2", dir);
  assert_int_equal(db_open(&db, uri), MLC_EIO);
  assert_non_null(strstr(mlc_error_last(), "password=***"));
  assert_null(strstr(mlc_error_last(), "hunter2"));
  rmdir(dir);

  /* A live server (trust auth ignores the password): db_uri and the errors
   * of a database without a schema stay redacted. */
  char fresh[300];
  fresh_pg_db(fresh, sizeof fresh, NULL);
  snprintf(uri, sizeof uri, "postgresql://%s:hunter2@/t%d?host=%s&port=5432", cluster.superuser,
           ndatabases - 1, cluster.dir);
  assert_int_equal(db_open(&db, uri), MLC_OK);
  assert_non_null(strstr(db_uri(db), ":***@"));
  assert_null(strstr(db_uri(db), "hunter2"));
  assert_int_equal(db_commit_workload(db, 1, "w", "script"), MLC_EIO);
  assert_non_null(strstr(mlc_error_last(), ":***@"));
  assert_null(strstr(mlc_error_last(), "hunter2"));
  db_close(db);
}

static void test_bad_connection_strings_are_einval(void **state) {
  (void)state;
  db_t *db = NULL;
  assert_int_equal(db_open(&db, "host=/tmp no_such_option=1"), MLC_EINVAL);
  assert_non_null(strstr(mlc_error_last(), "no_such_option"));
  assert_int_equal(db_open(&db, "postgresql://h/db?password=x&no_such_param=1"), MLC_EINVAL);
  assert_null(strstr(mlc_error_last(), "password=x"));
  assert_null(db);
}

/* ---- writing ------------------------------------------------------------ */

static void test_four_processes_commit_exactly_4000_records(void **state) {
  (void)state;
  char uri[300];
  fresh_pg_db(uri, sizeof uri, NULL);
  db_t *db = NULL;
  assert_int_equal(db_open(&db, uri), MLC_OK);
  assert_int_equal(db_init(db), MLC_OK);
  db_close(db);
  db_suite_concurrent_commits(uri, 4, 1000, 50);
}

/* Records whose text needs every kind of escaping (array literals, COPY),
 * some with a trace in a spelling no canonical printer would choose. */
static void awkward_records(suite_rec_t *s, int n) {
  static const char *const msgs[] = {"a \"quoted\" \\ back\\slash", "tab\there\nnewline\rcr",
                                     "{braces,commas}", "NULL", "", "\\N",
                                     "\xc3\xbc\xe2\x80\x93 utf-8"};
  for (int i = 0; i < n; i++) {
    double runs[2] = {(i + 1) * 1e-4 + 1.0 / 3.0 * 1e-9, 0.1 + 0.2};
    suite_rec(&s[i], i % 3 ? SUITE_W1 : SUITE_W2, i % 2 ? SUITE_CPU : SUITE_GPU, "dev \"x\"\t{1}", i,
              runs, 2, i % 4 == 3 ? MLC_ERROR_KIND_RUN : MLC_ERROR_KIND_NONE, SUITE_T0 + i);
    s[i].r.error_msg = msgs[i % 7];
    s[i].r.worker_id = msgs[(i + 3) % 7];
    s[i].r.device_json = i % 2 ? "{\"name\":\"a \\\"b\\\" \\\\ c\\n\"}" : "{}";
    /* Not canonical: stored and read back as written, byte for byte. */
    if (i % 5 == 0) s[i].r.trace_json = "{\"z\": 1e+17, \"a\": [2.50, \"\\u0041\", {}], \"i\": 0}";
    db_record_finish(&s[i].r);
  }
}

static void test_every_insert_method_stores_the_same_records(void **state) {
  (void)state;
  static const char *const methods[] = {"unnest", "pipeline", "copy"};
  enum { N = 21 };
  for (int m = 0; m < 3; m++) {
    setenv("MLC_PG_INSERT", methods[m], 1);
    char name[16];
    db_t *db = open_fresh(name);
    suite_rec_t s[N];
    awkward_records(s, N);
    suite_commit(db, s, N);
    suite_commit(db, s, N); /* a retried batch adds nothing */
    db_result_t *res = suite_records(db, NULL);
    assert_int_equal(res->nrecords, N);
    for (int i = 0; i < N; i++) {
      const db_record_t *got = suite_find(res, s[i].r.id);
      assert_non_null(got);
      suite_assert_same(got, &s[i].r);
    }
    db_result_free(res);
    db_close(db);
  }
}

/* Batches bigger than one statement's chunk are still one transaction. */
static void test_large_batches_span_chunks_in_one_transaction(void **state) {
  (void)state;
  static const char *const methods[] = {"unnest", "pipeline"};
  enum { N = 4500 };
  static suite_rec_t s[N]; /* static: nothing leaks when an assertion fails */
  static db_record_t recs[N];
  for (int m = 0; m < 2; m++) {
    setenv("MLC_PG_INSERT", methods[m], 1);
    char name[16];
    db_t *db = open_fresh(name);
    for (int i = 0; i < N; i++) {
      suite_ok(&s[i], SUITE_W1, SUITE_CPU, i, 1e-3 + i * 1e-7, SUITE_T0 + i);
      recs[i] = s[i].r;
    }
    recs[N - 1].trace_json = "not json"; /* fails in the last chunk... */
    db_record_finish(&recs[N - 1]);
    assert_int_equal(db_commit_records(db, recs, N), MLC_EINVAL);
    assert_int_equal(count_on(name, "SELECT count(*) FROM records"), 0); /* ...and nothing stays */
    recs[N - 1] = s[N - 1].r;
    assert_int_equal(db_commit_records(db, recs, N), MLC_OK);
    assert_int_equal(count_on(name, "SELECT count(*) FROM records"), N);
    db_close(db);
  }
}

static void test_a_killed_connection_is_retried_without_loss(void **state) {
  (void)state;
  char name[16], sql[200];
  db_t *db = open_fresh(name);
  suite_rec_t s[6];
  for (int i = 0; i < 6; i++) suite_ok(&s[i], SUITE_W1, SUITE_CPU, i, (i + 1) * 1e-3, SUITE_T0 + i);
  suite_commit(db, s, 3);
  snprintf(sql, sizeof sql,
           "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
           "WHERE datname = '%s' AND pid <> pg_backend_pid()", name);
  assert_int_equal(count_on("postgres", sql), 1);
  suite_commit(db, s + 3, 3); /* reconnects, then commits */
  assert_non_null(strstr(logged, "reconnecting"));
  db_stats_t st;
  assert_int_equal(db_stats(db, &st), MLC_OK);
  assert_int_equal(st.nrecords, 6);
  db_stats_free(&st);
  db_close(db);
}

/* ---- reading ------------------------------------------------------------ */

/* A statement's SQL, from the backend's own table. */
static const char *stmt_sql(pg_stmt_t stmt) {
#define PICK_SQL_(name, nparams, sql) \
  if (PG_STMT_##name == stmt) return sql;
  PG_STMTS(PICK_SQL_)
#undef PICK_SQL_
  return NULL;
}

/* A fresh database of 2,000 records (20 workloads x 2 targets, 10%
 * failures), analysed, so the planner chooses as it would on a farm rather
 * than scanning a table of a few pages; its name into name. The records
 * into s (static storage, N of them). */
enum { PLAN_N = 2000 };
static void fill_for_plans(char name[16], suite_rec_t *s) {
  db_t *db = open_fresh(name);
  for (int i = 0; i < PLAN_N; i++) {
    uint64_t key = SUITE_W1 + (uint64_t)(i % 20);
    const char *target = (i / 20) % 2 ? SUITE_CPU : SUITE_GPU;
    if (i % 10 == 9)
      suite_fail(&s[i], key, target, i, MLC_ERROR_KIND_BUILD, SUITE_T0 + i);
    else
      suite_ok(&s[i], key, target, i, (1 + i % 37) * 1e-4, SUITE_T0 + i);
  }
  suite_commit(db, s, PLAN_N);
  db_close(db);
  sql_run(name, "ANALYZE records");
}

/* The plan of one execution of `stmt` (PREPAREd with `types`, EXECUTEd
 * with `args`), as EXPLAIN prints it, into out. generic: force the plan
 * PostgreSQL would cache for any parameters, not one made for these. */
static void plan_of(mlc_strbuf_t *out, const char *name, pg_stmt_t stmt, const char *types,
                    const char *args, bool generic) {
  mlc_strbuf_t sb;
  mlc_sb_init(&sb);
  mlc_sb_printf(&sb, "SET plan_cache_mode = %s; PREPARE q (%s) AS %s; EXPLAIN EXECUTE q (%s)",
                generic ? "force_generic_plan" : "auto", types, stmt_sql(stmt), args);
  PGresult *res = sql_on(name, mlc_sb_str(&sb)); /* the last statement's result */
  assert_int_equal(PQresultStatus(res), PGRES_TUPLES_OK);
  mlc_sb_reset(out);
  for (int i = 0; i < PQntuples(res); i++) mlc_sb_printf(out, "%s\n", PQgetvalue(res, i, 0));
  PQclear(res);
  mlc_sb_free(&sb);
}

static void test_top_k_is_an_index_scan_of_the_partial_index(void **state) {
  (void)state;
  char name[16], args[128];
  static suite_rec_t s[PLAN_N];
  fill_for_plans(name, s);
  snprintf(args, sizeof args, "%lld, '%s', 5", (long long)(int64_t)SUITE_W1, SUITE_CPU);
  mlc_strbuf_t plan;
  mlc_sb_init(&plan);
  plan_of(&plan, name, PG_STMT_TOP_K, "int8, text, int", args, false);
  if (!strstr(mlc_sb_str(&plan), "Index Scan using records_best_idx") ||
      strstr(mlc_sb_str(&plan), "Sort"))
    fprintf(stderr, "plan:\n%s", mlc_sb_str(&plan));
  /* Read in index order, with nothing to sort. */
  assert_non_null(strstr(mlc_sb_str(&plan), "Index Scan using records_best_idx"));
  assert_null(strstr(mlc_sb_str(&plan), "Sort"));
  mlc_sb_free(&plan);
}

static void test_lookup_by_id_is_a_primary_key_scan_even_in_a_generic_plan(void **state) {
  (void)state;
  char name[16], args[128];
  static suite_rec_t s[PLAN_N];
  fill_for_plans(name, s);
  /* $1..$5 the other filters (NULL: any), $6 the limit, $7 the id. */
  snprintf(args, sizeof args, "NULL, NULL, NULL, NULL, 0, NULL, '%s'", s[1234].r.id);
  mlc_strbuf_t plan;
  mlc_sb_init(&plan);
  for (int generic = 0; generic < 2; generic++) {
    plan_of(&plan, name, PG_STMT_RECORD_BY_ID, "int8, text, text, int8, int, int, text", args,
            generic);
    if (!strstr(mlc_sb_str(&plan), "records_pkey") || strstr(mlc_sb_str(&plan), "Seq Scan"))
      fprintf(stderr, "%s plan:\n%s", generic ? "generic" : "custom", mlc_sb_str(&plan));
    assert_non_null(strstr(mlc_sb_str(&plan), "Index Scan using records_pkey"));
    assert_null(strstr(mlc_sb_str(&plan), "Seq Scan"));
  }
  mlc_sb_free(&plan);

  /* And the backend uses that statement: the record, whatever else the filter says. */
  char uri[300];
  snprintf(uri, sizeof uri, "postgresql:///%s?host=%s&port=5432", name, cluster.dir);
  db_t *db = NULL;
  assert_int_equal(db_open(&db, uri), MLC_OK);
  db_filter_t f = {.id = s[1234].r.id, .workload_key = s[1234].r.workload_key};
  db_result_t *res = suite_records(db, &f);
  assert_int_equal(res->nrecords, 1);
  suite_assert_same(&res->records[0], &s[1234].r);
  db_result_free(res);
  db_close(db);
}

/* ---- leases ------------------------------------------------------------- */

static void test_an_acquire_in_progress_elsewhere_makes_others_give_up_at_once(void **state) {
  (void)state;
  char name[16], uri[300], sql[200];
  db_t *db = open_fresh(name);
  snprintf(uri, sizeof uri, "postgresql:///%s?host=%s&port=5432", name, cluster.dir);
  /* Another job is inside its acquire: it holds the advisory lock of the
   * task (the same key the backend derives) in an open transaction. */
  PGconn *other = PQconnectdb(uri);
  assert_int_equal(PQstatus(other), CONNECTION_OK);
  snprintf(sql, sizeof sql, "BEGIN; SELECT pg_advisory_xact_lock(%lld)",
           (long long)(int64_t)mlc_hash64(SUITE_CPU, strlen(SUITE_CPU), SUITE_W1));
  PQclear(PQexec(other, sql));
  bool got = true;
  time_t t0 = time(NULL);
  assert_int_equal(db_lease_acquire(db, &got, SUITE_W1, SUITE_CPU, "job-a", 60), MLC_OK);
  assert_false(got); /* no row yet, but someone is taking it: give up, don't queue */
  assert_true(time(NULL) - t0 < 3);
  assert_int_equal(db_lease_acquire(db, &got, SUITE_W1, SUITE_GPU, "job-a", 60), MLC_OK);
  assert_true(got); /* other tasks are not blocked */
  PQclear(PQexec(other, "COMMIT"));
  assert_int_equal(db_lease_acquire(db, &got, SUITE_W1, SUITE_CPU, "job-a", 60), MLC_OK);
  assert_true(got);
  PQfinish(other);

  /* The lease is a row: it survives the holder's connection. */
  snprintf(sql, sizeof sql,
           "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
           "WHERE datname = '%s' AND pid <> pg_backend_pid()", name);
  assert_int_equal(count_on("postgres", sql), 1);
  db_t *second = NULL;
  assert_int_equal(db_open(&second, uri), MLC_OK);
  assert_int_equal(db_lease_acquire(second, &got, SUITE_W1, SUITE_CPU, "job-b", 60), MLC_OK);
  assert_false(got);
  assert_int_equal(db_lease_acquire(db, &got, SUITE_W1, SUITE_CPU, "job-a", 60), MLC_OK);
  assert_true(got); /* job-a reconnected and renewed */
  db_close(second);
  db_close(db);
}

/* ---- runner ------------------------------------------------------------- */

static int stop_cluster(void **state) {
  (void)state;
  pg_cluster_stop(&cluster);
  return 0;
}

#define PG_TEST(fn) cmocka_unit_test_setup_teardown(fn, start_capture, stop_capture)

int main(void) {
  int started = pg_cluster_start(&cluster);
  if (started <= 0) return started < 0; /* 0: skipped, the reason printed */
  int failed = db_suite_run("postgresql: shared suite", fresh_pg_db, NULL);
  const struct CMUnitTest tests[] = {
      PG_TEST(test_init_twice_records_each_migration_once),
      PG_TEST(test_newer_schema_is_refused_with_a_clear_message),
      PG_TEST(test_operations_before_init_say_to_run_init),
      PG_TEST(test_unreachable_server_is_a_prompt_eio_naming_the_redacted_uri),
      PG_TEST(test_passwords_never_appear_in_messages_or_db_uri),
      PG_TEST(test_bad_connection_strings_are_einval),
      PG_TEST(test_four_processes_commit_exactly_4000_records),
      PG_TEST(test_every_insert_method_stores_the_same_records),
      PG_TEST(test_large_batches_span_chunks_in_one_transaction),
      PG_TEST(test_a_killed_connection_is_retried_without_loss),
      PG_TEST(test_top_k_is_an_index_scan_of_the_partial_index),
      PG_TEST(test_lookup_by_id_is_a_primary_key_scan_even_in_a_generic_plan),
      PG_TEST(test_an_acquire_in_progress_elsewhere_makes_others_give_up_at_once),
  };
  failed += cmocka_run_group_tests_name("postgresql backend", tests, NULL, stop_cluster);
  return failed;
}
