/*
 * test_db_file.c - the file backend: the shared suite (db_suite.h) on
 * temporary directories, then what only the file backend has: schema lines,
 * a newer schema refused, torn and corrupt lines skipped with warnings,
 * lazy loading and refresh after another process appended or pruned, the
 * record line format, URI forms and password redaction in db.c.
 */
#include "db_suite.h"

#include <fcntl.h>
#include <sys/stat.h>

#include "database/db_priv.h"

/* ---- helpers ------------------------------------------------------------ */

static char tmp_root[512];
static int tmp_count;

/* A new directory path (not created) under this run's temporary root. */
static void new_dir(char *out, size_t cap) {
  snprintf(out, cap, "%s/db%d", tmp_root, tmp_count++);
}

static int fresh_file_db(char *uri, size_t cap, void *payload) {
  (void)payload;
  char dir[600];
  new_dir(dir, sizeof dir);
  snprintf(uri, cap, "file:%s", dir);
  return MLC_OK;
}

/* Captured warnings, one per line. */
static char warnings[16384];

static void capture(mlc_log_level_t level, const char *line, void *payload) {
  (void)level, (void)payload;
  size_t len = strlen(warnings);
  snprintf(warnings + len, sizeof warnings - len, "%s\n", line);
}

static int start_capture(void **state) {
  (void)state;
  warnings[0] = '\0';
  mlc_log_set_sink(capture, NULL);
  return 0;
}

static int stop_capture(void **state) {
  (void)state;
  mlc_log_set_sink(NULL, NULL);
  return 0;
}

static void append_text(const char *path, const char *text) {
  int fd = open(path, O_WRONLY | O_APPEND);
  assert_true(fd >= 0);
  assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
  close(fd);
}

/* The whole file (mlc_free it). */
static char *read_text(const char *path) {
  char *text = NULL;
  int rc = mlc_read_file(&text, NULL, path);
  if (rc != MLC_OK) fail_msg("%s", mlc_error_last());
  return text;
}

static int count_lines(const char *text) {
  int n = 0;
  for (; *text; text++) n += *text == '\n';
  return n;
}

static db_t *open_dir(const char *dir) {
  char uri[1024];
  snprintf(uri, sizeof uri, "file:%s", dir);
  db_t *db = NULL;
  int rc = db_open(&db, uri);
  if (rc != MLC_OK) fprintf(stderr, "open: %s\n", mlc_error_last());
  assert_int_equal(rc, MLC_OK);
  return db;
}

static int64_t nrecords(db_t *db) {
  db_stats_t st;
  assert_int_equal(db_stats(db, &st), MLC_OK);
  int64_t n = st.nrecords;
  db_stats_free(&st);
  return n;
}

static void commit_one(db_t *db, int variant, double secs) {
  suite_rec_t s;
  suite_ok(&s, SUITE_W1, SUITE_CPU, variant, secs, SUITE_T0 + variant);
  suite_commit(db, &s, 1);
}

/* Runs fn in a child process (another writer) and waits for it. The child
 * uses no cmocka assertions: a failure there must not unwind into the
 * parent's test runner inside the child. */
static void in_child(int (*fn)(const char *dir), const char *dir) {
  fflush(NULL);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) _exit(fn(dir));
  int status = 0;
  assert_int_equal(waitpid(pid, &status, 0), pid);
  assert_true(WIFEXITED(status));
  assert_int_equal(WEXITSTATUS(status), 0);
}

static int child_open(db_t **db, const char *dir) {
  char uri[700];
  snprintf(uri, sizeof uri, "file:%s", dir);
  return db_open(db, uri);
}

static int child_commit(db_t *db, int variant, double secs) {
  suite_rec_t s;
  suite_ok(&s, SUITE_W1, SUITE_CPU, variant, secs, SUITE_T0 + variant);
  return db_commit_records(db, &s.r, 1);
}

static int child_commits_two(const char *dir) {
  db_t *db = NULL;
  int bad = child_open(&db, dir) != MLC_OK || child_commit(db, 100, 1e-3) != MLC_OK ||
            child_commit(db, 101, 2e-3) != MLC_OK;
  db_close(db);
  return bad;
}

static int child_commits_variant_1(const char *dir) {
  db_t *db = NULL;
  int bad = child_open(&db, dir) != MLC_OK || child_commit(db, 1, 1e-3) != MLC_OK;
  db_close(db);
  return bad;
}

static int child_prunes_to_one(const char *dir) {
  db_t *db = NULL;
  int64_t removed = 0;
  int bad = child_open(&db, dir) != MLC_OK || db_prune(db, &removed, 1) != MLC_OK || removed != 3;
  db_close(db);
  return bad;
}

/* ---- files and schema --------------------------------------------------- */

static void test_new_database_files_start_with_the_schema_line(void **state) {
  (void)state;
  char dir[600], path[700];
  new_dir(dir, sizeof dir);
  snprintf(path, sizeof path, "%s/nested/deeper", dir);
  db_t *db = open_dir(path); /* missing parents are created */
  db_close(db);
  const char *files[] = {"workloads.jsonl", "records.jsonl"};
  for (int i = 0; i < 2; i++) {
    char file[800];
    snprintf(file, sizeof file, "%s/%s", path, files[i]);
    char *text = read_text(file);
    assert_string_equal(text, "{\"mlc_db_schema\": 1}\n");
    mlc_free(text);
  }
  db = open_dir(path); /* opening again adds nothing */
  assert_int_equal(db_init(db), MLC_OK);
  db_close(db);
  snprintf(path + strlen(path), sizeof path - strlen(path), "/records.jsonl");
  char *text = read_text(path);
  assert_int_equal(count_lines(text), 1);
  mlc_free(text);
}

static void test_newer_schema_is_refused_with_a_clear_message(void **state) {
  (void)state;
  char dir[600], file[700], want[900];
  new_dir(dir, sizeof dir);
  assert_int_equal(mkdir(dir, 0777), 0);
  snprintf(file, sizeof file, "%s/records.jsonl", dir);
  assert_int_equal(mlc_write_file(file, "{\"mlc_db_schema\": 2}\n", 21), MLC_OK);
  char uri[700];
  snprintf(uri, sizeof uri, "file:%s", dir);
  db_t *db = NULL;
  assert_int_equal(db_open(&db, uri), MLC_EIO);
  assert_null(db);
  snprintf(want, sizeof want,
           "database %s has schema 2; this mlc-db understands up to 1: upgrade mlc-tune", dir);
  assert_string_equal(mlc_error_last(), want);
  /* A file that is not a database at all. */
  assert_int_equal(mlc_write_file(file, "hello\n", 6), MLC_OK);
  assert_int_equal(db_open(&db, uri), MLC_EIO);
  assert_non_null(strstr(mlc_error_last(), "not an mlc-db file"));
}

static void test_record_lines_hold_every_field_with_the_trace_as_json(void **state) {
  (void)state;
  char dir[600], file[700];
  new_dir(dir, sizeof dir);
  db_t *db = open_dir(dir);
  commit_one(db, 3, 1.5e-3);
  db_close(db);
  snprintf(file, sizeof file, "%s/records.jsonl", dir);
  char *text = read_text(file);
  const char *line = text + strcspn(text, "\n") + 1; /* after the schema line */
  json_t *j = mlc_json_loads(line, "line");
  assert_non_null(j);
  const char *keys[] = {"id", "workload", "target", "device_key", "device", "trace", "trace_hash",
                        "run_secs", "error_kind", "error_msg", "compiler_version", "worker_id",
                        "created_at"};
  assert_int_equal(json_object_size(j), sizeof keys / sizeof keys[0]);
  const char *at = line;
  for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) { /* in this order */
    char quoted[40];
    snprintf(quoted, sizeof quoted, "\"%s\":", keys[i]);
    const char *p = strstr(line, quoted);
    assert_non_null(p);
    assert_true(p >= at);
    at = p;
  }
  assert_true(json_is_array(json_object_get(j, "trace")));
  assert_true(json_is_object(json_object_get(j, "device")));
  assert_string_equal(json_string_value(json_object_get(j, "workload")), "8badf00d12345678");
  assert_string_equal(json_string_value(json_object_get(j, "created_at")),
                      "2024-05-01T12:34:56.123459Z"); /* SUITE_T0 + 3 us */
  assert_int_equal(json_array_size(json_object_get(j, "run_secs")), 3);
  json_decref(j);
  mlc_free(text);
}

/* ---- torn and corrupt lines --------------------------------------------- */

static void test_torn_last_line_is_skipped_then_cut_by_the_next_writer(void **state) {
  (void)state;
  char dir[600], file[700];
  new_dir(dir, sizeof dir);
  db_t *db = open_dir(dir);
  commit_one(db, 1, 1e-3);
  commit_one(db, 2, 2e-3);
  db_close(db);
  snprintf(file, sizeof file, "%s/records.jsonl", dir);
  append_text(file, "{\"id\":\"0123456789abcdef\",\"workload\":\"8bad"); /* a crash mid-write */

  db = open_dir(dir);
  assert_int_equal(nrecords(db), 2);
  assert_non_null(strstr(warnings, "records.jsonl:4: skipping a torn last line"));
  assert_int_equal(nrecords(db), 2); /* still loadable, warned once */
  assert_null(strstr(strstr(warnings, "torn") + 1, "torn"));

  commit_one(db, 3, 3e-3); /* the writer cuts the torn tail first */
  assert_non_null(strstr(warnings, "cutting off a torn last line"));
  assert_int_equal(nrecords(db), 3);
  db_close(db);
  char *text = read_text(file);
  assert_int_equal(count_lines(text), 4);
  assert_int_equal(text[strlen(text) - 1], '\n');
  assert_null(strstr(text, "0123456789abcdef")); /* the torn line is gone */
  mlc_free(text);
  db = open_dir(dir);
  assert_int_equal(nrecords(db), 3);
  db_close(db);
}

static void test_corrupt_middle_lines_are_skipped_with_file_and_line(void **state) {
  (void)state;
  char dir[600], file[700];
  new_dir(dir, sizeof dir);
  db_t *db = open_dir(dir);
  commit_one(db, 1, 1e-3);
  db_close(db);
  snprintf(file, sizeof file, "%s/records.jsonl", dir);
  append_text(file, "this is not json\n{\"id\":\"not hex\"}\n");
  db = open_dir(dir);
  commit_one(db, 2, 2e-3);
  db_close(db);

  warnings[0] = '\0';
  db = open_dir(dir);
  assert_int_equal(nrecords(db), 2);
  char want[800];
  snprintf(want, sizeof want, "%s:3: skipping a corrupt line", file);
  assert_non_null(strstr(warnings, want));
  snprintf(want, sizeof want, "%s:4: skipping a corrupt line", file);
  assert_non_null(strstr(warnings, want));
  assert_non_null(strstr(warnings, "missing field 'workload'"));
  db_result_t *best = NULL;
  bool found = false;
  assert_int_equal(db_best(db, &best, &found, SUITE_W1, SUITE_CPU), MLC_OK);
  assert_true(found);
  db_result_free(best);
  db_close(db);
}

/* ---- lazy loading and other processes ----------------------------------- */

static void test_loading_is_lazy_and_refresh_reads_only_new_lines(void **state) {
  (void)state;
  char dir[600], file[700];
  new_dir(dir, sizeof dir);
  db_t *db = open_dir(dir);
  commit_one(db, 1, 1e-3);
  db_close(db);
  snprintf(file, sizeof file, "%s/records.jsonl", dir);
  append_text(file, "corrupt\n"); /* a marker: a warning shows when it is read */

  warnings[0] = '\0';
  db = open_dir(dir);
  assert_string_equal(warnings, ""); /* open read no record */
  assert_int_equal(nrecords(db), 1); /* the first query loads */
  assert_non_null(strstr(warnings, "skipping a corrupt line"));

  warnings[0] = '\0';
  in_child(child_commits_two, dir); /* another process appends */
  assert_int_equal(nrecords(db), 3);
  assert_string_equal(warnings, ""); /* only the new tail was read */
  db_result_t *best = NULL;
  bool found = false;
  assert_int_equal(db_best(db, &best, &found, SUITE_W1, SUITE_CPU), MLC_OK);
  assert_true(found && best->records[0].run_secs[0] == 1e-3);
  db_result_free(best);
  db_close(db);
}

static void test_commit_skips_a_record_another_process_stored_meanwhile(void **state) {
  (void)state;
  char dir[600];
  new_dir(dir, sizeof dir);
  db_t *db = open_dir(dir);
  assert_int_equal(nrecords(db), 0); /* loaded (empty) before the other process writes */
  in_child(child_commits_variant_1, dir);
  commit_one(db, 1, 1e-3); /* the same record */
  db_close(db);
  db = open_dir(dir);
  assert_int_equal(nrecords(db), 1);
  db_close(db);
}

static void test_a_prune_by_another_process_is_seen_and_appends_go_to_the_new_file(void **state) {
  (void)state;
  char dir[600];
  new_dir(dir, sizeof dir);
  db_t *db = open_dir(dir);
  for (int i = 0; i < 4; i++) commit_one(db, i, (i + 1) * 1e-3);
  assert_int_equal(nrecords(db), 4);
  in_child(child_prunes_to_one, dir);
  assert_int_equal(nrecords(db), 1);
  commit_one(db, 9, 9e-3);
  db_close(db);
  db = open_dir(dir);
  assert_int_equal(nrecords(db), 2);
  db_close(db);
}

static void test_long_lines_round_trip(void **state) {
  (void)state;
  char dir[600];
  new_dir(dir, sizeof dir);
  db_t *db = open_dir(dir);
  /* A trace far longer than PIPE_BUF and than one read chunk's start. */
  mlc_strbuf_t trace;
  mlc_sb_init(&trace);
  mlc_sb_putc(&trace, '[');
  for (int i = 0; i < 20000; i++) mlc_sb_printf(&trace, "%s[\"split\",[%d,4]]", i ? "," : "", i);
  mlc_sb_putc(&trace, ']');
  suite_rec_t s;
  suite_ok(&s, SUITE_W1, SUITE_CPU, 1, 1e-3, SUITE_T0);
  s.r.trace_json = mlc_sb_str(&trace);
  db_record_finish(&s.r);
  suite_commit(db, &s, 1);
  db_close(db);
  db = open_dir(dir);
  db_result_t *res = suite_records(db, NULL);
  assert_int_equal(res->nrecords, 1);
  assert_string_equal(res->records[0].trace_json, mlc_sb_str(&trace));
  db_result_free(res);
  db_close(db);
  mlc_sb_free(&trace);
}

/* Run times come back bit for bit, and a value a person would type is
 * written the way they typed it (the writer tries the 15-digit form only
 * when a 17-digit mantissa says it can work: this checks that shortcut on
 * thousands of random doubles and on the edges). */
static void test_run_times_round_trip_exactly_and_short_values_stay_short(void **state) {
  (void)state;
  char dir[600];
  new_dir(dir, sizeof dir);
  db_t *db = open_dir(dir);
  enum { N = 2000 };
  static suite_rec_t recs[N];
  const double edges[] = {0.1, 1e-3, 2.5e-5, 0.30000000000000004, 1.0, 9.999999999999999e-6,
                          5e-324, 1.7976931348623157e308, 123456789012345.0, 0.9999999999999999};
  const int nedges = (int)(sizeof edges / sizeof *edges);
  mlc_rng_t rng;
  mlc_rng_seed(&rng, 7);
  for (int i = 0; i < N; i++) {
    double runs[3];
    for (int j = 0; j < 3; j++) {
      uint64_t bits = mlc_rng_next(&rng) >> 2; /* positive, finite, any magnitude */
      double v;
      memcpy(&v, &bits, sizeof v);
      runs[j] = i < nedges && j == 0 ? edges[i] : v;
    }
    suite_rec(&recs[i], SUITE_W1, SUITE_CPU, "cpu-znver4", i, runs, 3, MLC_ERROR_KIND_NONE, SUITE_T0 + i);
  }
  for (int i = 0; i < N; i += 100) suite_commit(db, &recs[i], 100);
  db_close(db);
  db = open_dir(dir);
  db_result_t *res = suite_records(db, NULL);
  assert_int_equal(res->nrecords, N);
  int matched = 0;
  for (int i = 0; i < res->nrecords; i++)
    for (int k = 0; k < N; k++)
      if (strcmp(res->records[i].id, recs[k].r.id) == 0) {
        assert_int_equal(res->records[i].nrun_secs, 3);
        assert_memory_equal(res->records[i].run_secs, recs[k].runs, 3 * sizeof(double));
        matched++;
        break;
      }
  assert_int_equal(matched, N);
  db_result_free(res);
  db_close(db);
  char path[700];
  snprintf(path, sizeof path, "%s/records.jsonl", dir);
  char *text = read_text(path);
  assert_non_null(strstr(text, "[0.1,"));
  assert_non_null(strstr(text, "[0.001,"));
  assert_non_null(strstr(text, "[2.5e-05,"));
  assert_non_null(strstr(text, "[0.30000000000000004,"));
  assert_non_null(strstr(text, "[123456789012345.0,"));
  mlc_free(text);
}

/* ---- URIs ---------------------------------------------------------------- */

static void test_bare_paths_and_file_uris_name_the_same_database(void **state) {
  (void)state;
  char dir[600], uri[700];
  new_dir(dir, sizeof dir);
  db_t *db = NULL;
  assert_int_equal(db_open(&db, dir), MLC_OK); /* a bare path */
  snprintf(uri, sizeof uri, "file:%s", dir);
  assert_string_equal(db_uri(db), uri);
  commit_one(db, 1, 1e-3);
  db_close(db);
  snprintf(uri, sizeof uri, "file://%s", dir);
  assert_int_equal(db_open(&db, uri), MLC_OK);
  assert_int_equal(nrecords(db), 1);
  db_close(db);
}

static void test_bad_uris_are_refused_with_einval(void **state) {
  (void)state;
  db_t *db = NULL;
  assert_int_equal(db_open(&db, "file:"), MLC_EINVAL);
  assert_int_equal(db_open(&db, ""), MLC_EINVAL);
  assert_int_equal(db_open(&db, "mysql://root:hunter2@localhost/db"), MLC_EINVAL);
  assert_non_null(strstr(mlc_error_last(), "unknown database scheme 'mysql'"));
  assert_null(strstr(mlc_error_last(), "hunter2"));
  assert_null(db);
}

static void test_passwords_never_appear_in_uris_or_messages(void **state) {
  (void)state;
  struct {
    const char *uri, *want;
  } cases[] = {
      {"postgresql://tuner:s3cret@db.example:5432/mlc",
       "postgresql://tuner:***@db.example:5432/mlc"},
      {"postgres://tuner:p@ss/w0rd@host/mlc", "postgres://tuner:***@host/mlc"},
      {"postgresql://tuner@host/mlc?password=s3cret&sslmode=require",
       "postgresql://tuner@host/mlc?password=***&sslmode=require"},
      {"host=/tmp dbname=mlc password=s3cret user=x", "host=/tmp dbname=mlc password=*** user=x"},
      {"host=/tmp password = 'it\\'s secret' dbname=mlc", "host=/tmp password = *** dbname=mlc"},
      {"host=/tmp password='unterminated secret", "host=/tmp password=***"},
      {"host=/tmp password=x'y junk secret", "host=/tmp password=*** ***"},
      {"user=a password=pw broken syntax secret", "user=a password=*** ***"},
      {"file:/var/lib/mlc-db", "file:/var/lib/mlc-db"},
      {"postgresql://host/mlc", "postgresql://host/mlc"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char out[256];
    db_uri_redact(out, sizeof out, cases[i].uri);
    assert_string_equal(out, cases[i].want);
  }
  /* A backend's message that quotes the password (raw or percent-decoded)
   * is scrubbed. */
  mlc_error_set(MLC_EIO, "connect to tuner:s3cr%%t and s3cr%%25t failed");
  db_error_scrub("postgresql://tuner:s3cr%25t@host/mlc");
  assert_string_equal(mlc_error_last(), "connect to tuner:*** and *** failed");
  assert_int_equal(mlc_error_last_code(), MLC_EIO);
}

static void test_uris_pick_their_backend(void **state) {
  (void)state;
  assert_ptr_equal(db_backend_for_uri(NULL), &db_backend_file);
  assert_ptr_equal(db_backend_for_uri("file:x"), &db_backend_file);
  assert_ptr_equal(db_backend_for_uri("./relative/dir"), &db_backend_file);
  assert_ptr_equal(db_backend_for_uri("/abs/dir"), &db_backend_file);
  const db_backend_t *pg = db_backend_for_uri("postgresql://h/db");
  const db_backend_t *kv = db_backend_for_uri("host=/tmp dbname=x");
  assert_ptr_equal(pg, kv);
  if (pg) assert_string_equal(pg->scheme, "postgresql");
  else assert_int_equal(mlc_error_last_code(), MLC_EUNSUPPORTED); /* built without it */
}

int main(void) {
  mlc_log_set_level(MLC_LOG_WARN);
  db_suite_tmpdir(tmp_root, sizeof tmp_root, "dbfile");
  int failed = db_suite_run("file backend: shared suite", fresh_file_db, NULL);
#define FILE_TEST(fn) cmocka_unit_test_setup_teardown(fn, start_capture, stop_capture)
  const struct CMUnitTest tests[] = {
      FILE_TEST(test_new_database_files_start_with_the_schema_line),
      FILE_TEST(test_newer_schema_is_refused_with_a_clear_message),
      FILE_TEST(test_record_lines_hold_every_field_with_the_trace_as_json),
      FILE_TEST(test_torn_last_line_is_skipped_then_cut_by_the_next_writer),
      FILE_TEST(test_corrupt_middle_lines_are_skipped_with_file_and_line),
      FILE_TEST(test_loading_is_lazy_and_refresh_reads_only_new_lines),
      FILE_TEST(test_commit_skips_a_record_another_process_stored_meanwhile),
      FILE_TEST(test_a_prune_by_another_process_is_seen_and_appends_go_to_the_new_file),
      FILE_TEST(test_long_lines_round_trip),
      FILE_TEST(test_run_times_round_trip_exactly_and_short_values_stay_short),
      FILE_TEST(test_bare_paths_and_file_uris_name_the_same_database),
      FILE_TEST(test_bad_uris_are_refused_with_einval),
      FILE_TEST(test_passwords_never_appear_in_uris_or_messages),
      FILE_TEST(test_uris_pick_their_backend),
  };
  failed += cmocka_run_group_tests_name("file backend", tests, NULL, NULL);
  db_suite_rmtree(tmp_root);
  return failed;
}
