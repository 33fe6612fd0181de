/*
 * test_db_concurrency.c - several processes appending to one file database
 * at once: 4 processes x 1,000 records in batches of 10 give exactly 4,000
 * records, every line of records.jsonl whole and parseable (no two appends
 * interleaved, no record lost or doubled).
 */
#include "db_suite.h"

static void test_four_processes_commit_4000_records_none_lost_torn_or_doubled(void **state) {
  (void)state;
  char dir[512], uri[600], file[600];
  db_suite_tmpdir(dir, sizeof dir, "dbconc");
  snprintf(uri, sizeof uri, "file:%s/db", dir);
  db_suite_concurrent_commits(uri, 4, 1000, 10);

  snprintf(file, sizeof file, "%s/db/records.jsonl", dir);
  char *text = NULL;
  size_t len = 0;
  assert_int_equal(mlc_read_file(&text, &len, file), MLC_OK);
  assert_true(len > 0 && text[len - 1] == '\n');
  int lines = 0;
  for (char *line = text, *nl; (nl = strchr(line, '\n')) != NULL; line = nl + 1, lines++) {
    *nl = '\0';
    json_t *j = mlc_json_loads(line, "records.jsonl");
    assert_non_null(j);
    assert_true(json_is_object(j));
    json_decref(j);
  }
  assert_int_equal(lines, 1 + 4000); /* the schema line and one line per record */
  mlc_free(text);
  db_suite_rmtree(dir);
}

int main(void) {
  mlc_log_set_level(MLC_LOG_WARN);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_four_processes_commit_4000_records_none_lost_torn_or_doubled),
  };
  return cmocka_run_group_tests_name("file database concurrency", tests, NULL, NULL);
}
