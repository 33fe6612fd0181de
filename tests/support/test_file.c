/*
 * test_file.c - whole-file reads (regular files, standard input, errors) and
 * atomic writes (replace in one step, no temporary left behind, errors).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "support/support.h"

typedef struct {
  char dir[64];
  char path[128];
} scratch_t;

static int make_scratch(void **state) {
  scratch_t *s = calloc(1, sizeof *s);
  snprintf(s->dir, sizeof s->dir, "/tmp/mlc-test-file-XXXXXX");
  if (!mkdtemp(s->dir)) return -1;
  snprintf(s->path, sizeof s->path, "%s/out.bin", s->dir);
  *state = s;
  return 0;
}

static int n_entries(const char *dir) {
  DIR *d = opendir(dir);
  int n = 0;
  for (struct dirent *e; (e = readdir(d));)
    if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) n++;
  closedir(d);
  return n;
}

static int remove_scratch(void **state) {
  scratch_t *s = *state;
  unlink(s->path);
  rmdir(s->dir);
  free(s);
  mlc_alloc_fail_after(-1);
  return 0;
}

static void test_write_then_read_round_trips_binary_data(void **state) {
  scratch_t *s = *state;
  const char data[] = {'a', 0, 'b', '\n', (char)0xff};
  assert_int_equal(mlc_write_file(s->path, data, sizeof data), MLC_OK);
  char *back = NULL;
  size_t len = 0;
  assert_int_equal(mlc_read_file(&back, &len, s->path), MLC_OK);
  assert_int_equal(len, sizeof data);
  assert_memory_equal(back, data, sizeof data);
  assert_int_equal(back[len], '\0');
  mlc_free(back);
}

static void test_read_of_a_large_file_is_complete(void **state) {
  scratch_t *s = *state;
  size_t n = 300 * 1000;
  char *data = mlc_malloc(n);
  for (size_t i = 0; i < n; i++) data[i] = (char)('a' + i % 23);
  assert_int_equal(mlc_write_file(s->path, data, n), MLC_OK);
  char *back = NULL;
  size_t len = 0;
  assert_int_equal(mlc_read_file(&back, &len, s->path), MLC_OK);
  assert_int_equal(len, n);
  assert_memory_equal(back, data, n);
  mlc_free(back);
  mlc_free(data);
}

static void test_write_replaces_and_leaves_no_temporary(void **state) {
  scratch_t *s = *state;
  assert_int_equal(mlc_write_file(s->path, "old contents, longer", 20), MLC_OK);
  assert_int_equal(mlc_write_file(s->path, "new", 3), MLC_OK);
  char *back = NULL;
  assert_int_equal(mlc_read_file(&back, NULL, s->path), MLC_OK);
  assert_string_equal(back, "new");
  mlc_free(back);
  assert_int_equal(n_entries(s->dir), 1);
}

static void test_read_dash_reads_standard_input(void **state) {
  scratch_t *s = *state;
  assert_int_equal(mlc_write_file(s->path, "from stdin", 10), MLC_OK);
  int fd = open(s->path, O_RDONLY);
  int saved = dup(STDIN_FILENO);
  dup2(fd, STDIN_FILENO);
  close(fd);
  char *back = NULL;
  size_t len = 0;
  int rc = mlc_read_file(&back, &len, "-");
  dup2(saved, STDIN_FILENO);
  close(saved);
  assert_int_equal(rc, MLC_OK);
  assert_string_equal(back, "from stdin");
  assert_int_equal(len, 10);
  mlc_free(back);
}

static void test_read_missing_file_is_eio_naming_the_path(void **state) {
  scratch_t *s = *state;
  char *back = (char *)"untouched";
  assert_int_equal(mlc_read_file(&back, NULL, s->path), MLC_EIO);
  assert_null(back);
  char want[200];
  snprintf(want, sizeof want, "%s: No such file or directory", s->path);
  assert_string_equal(mlc_error_last(), want);
}

static void test_read_a_directory_is_eio(void **state) {
  scratch_t *s = *state;
  char *back = NULL;
  assert_int_equal(mlc_read_file(&back, NULL, s->dir), MLC_EIO);
  assert_null(back);
}

static void test_write_into_missing_directory_fails_cleanly(void **state) {
  scratch_t *s = *state;
  char path[200];
  snprintf(path, sizeof path, "%s/no/such/dir/f.txt", s->dir);
  assert_int_equal(mlc_write_file(path, "x", 1), MLC_EIO);
  assert_non_null(strstr(mlc_error_last(), path));
  assert_int_equal(n_entries(s->dir), 0);
}

static void test_out_of_memory_is_reported_without_leaks(void **state) {
  scratch_t *s = *state;
  assert_int_equal(mlc_write_file(s->path, "abc", 3), MLC_OK);
  char *back = NULL;
  mlc_alloc_fail_after(0);
  assert_int_equal(mlc_read_file(&back, NULL, s->path), MLC_ENOMEM);
  assert_int_equal(mlc_write_file(s->path, "xyz", 3), MLC_ENOMEM);
  mlc_alloc_fail_after(-1);
  assert_null(back);
  assert_int_equal(mlc_read_file(&back, NULL, s->path), MLC_OK);
  assert_string_equal(back, "abc"); /* the failed write changed nothing */
  mlc_free(back);
}

int main(void) {
  const struct CMUnitTest tests[] = {
#define T_(f) cmocka_unit_test_setup_teardown(f, make_scratch, remove_scratch)
      T_(test_write_then_read_round_trips_binary_data),
      T_(test_read_of_a_large_file_is_complete),
      T_(test_write_replaces_and_leaves_no_temporary),
      T_(test_read_dash_reads_standard_input),
      T_(test_read_missing_file_is_eio_naming_the_path),
      T_(test_read_a_directory_is_eio),
      T_(test_write_into_missing_directory_fails_cleanly),
      T_(test_out_of_memory_is_reported_without_leaks),
#undef T_
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
