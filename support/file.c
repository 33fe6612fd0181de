/*
 * file.c - whole-file reads and atomic whole-file writes.
 *
 * Reads work on anything readable (regular files, pipes, "-" for standard
 * input) by growing a buffer until end of file. Writes go to a temporary file
 * in the destination's directory which is then renamed over the destination,
 * so a reader (or a crash) sees the old contents or the new, never half.
 */
#include "support/support.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum { MLC_READ_CHUNK = 64 * 1024 };

/* Reads fd to its end into a NUL-terminated buffer. */
static int read_fd(char **out, size_t *len_out, int fd, const char *path) {
  size_t len = 0, cap = MLC_READ_CHUNK;
  struct stat st;
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (size_t)st.st_size >= cap)
    cap = (size_t)st.st_size + 1; /* one read, plus one to see the end */
  char *buf = mlc_malloc(cap);
  if (!buf) return mlc_error_set(MLC_ENOMEM, "%s: out of memory reading the file", path);
  for (;;) {
    if (len + 1 >= cap) {
      char *bigger = cap <= SIZE_MAX / 2 ? mlc_realloc(buf, cap * 2) : NULL;
      if (!bigger) {
        mlc_free(buf);
        return mlc_error_set(MLC_ENOMEM, "%s: out of memory reading the file", path);
      }
      buf = bigger;
      cap *= 2;
    }
    ssize_t n = read(fd, buf + len, cap - len - 1);
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      int e = errno;
      mlc_free(buf);
      return mlc_error_set(MLC_EIO, "%s: %s", path, strerror(e));
    }
    len += (size_t)n;
  }
  buf[len] = '\0';
  *out = buf;
  if (len_out) *len_out = len;
  return MLC_OK;
}

int mlc_read_file(char **out, size_t *len_out, const char *path) {
  *out = NULL;
  if (strcmp(path, "-") == 0) return read_fd(out, len_out, STDIN_FILENO, "<stdin>");
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return mlc_error_set(MLC_EIO, "%s: %s", path, strerror(errno));
  int rc = read_fd(out, len_out, fd, path);
  close(fd);
  return rc;
}

bool mlc_read_full(int fd, void *buf, size_t len) {
  char *p = buf;
  while (len > 0) {
    ssize_t n = read(fd, p, len);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n == 0) errno = 0;
      return false;
    }
    p += n;
    len -= (size_t)n;
  }
  return true;
}

bool mlc_write_full(int fd, const void *buf, size_t len) {
  const char *p = buf;
  while (len > 0) {
    ssize_t n = write(fd, p, len);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n == 0) errno = EIO;
      return false;
    }
    p += n;
    len -= (size_t)n;
  }
  return true;
}

/* Creates "<path>.tmp.<pid>.<counter>" next to path; the name is unique per
 * process and call, and O_EXCL guards against a stale file of that name. The
 * mode 0666 is narrowed by the umask, as for any file a program creates. */
static int open_temp(char **tmp_out, const char *path) {
  static atomic_ulong counter;
  size_t cap = strlen(path) + 64;
  char *tmp = mlc_malloc(cap);
  if (!tmp) return mlc_error_set(MLC_ENOMEM, "%s: out of memory", path);
  for (int attempt = 0; attempt < 100; attempt++) {
    snprintf(tmp, cap, "%s.tmp.%ld.%lu", path, (long)getpid(), atomic_fetch_add(&counter, 1));
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0) {
      *tmp_out = tmp;
      return fd;
    }
    if (errno != EEXIST) break;
  }
  int e = errno;
  mlc_free(tmp);
  return mlc_error_set(MLC_EIO, "%s: cannot create a temporary file: %s", path, strerror(e));
}

/* "-" writes to standard output (no rename possible there). */
int mlc_write_file(const char *path, const void *data, size_t len) {
  if (strcmp(path, "-") == 0) {
    if (!mlc_write_full(STDOUT_FILENO, data, len))
      return mlc_error_set(MLC_EIO, "<stdout>: %s", strerror(errno));
    return MLC_OK;
  }
  char *tmp = NULL;
  int rc = MLC_OK;
  int fd = open_temp(&tmp, path);
  if (fd < 0) return fd;
  if (!mlc_write_full(fd, data, len) || fsync(fd) != 0) {
    rc = mlc_error_set(MLC_EIO, "%s: %s", path, strerror(errno));
    close(fd);
    goto done;
  }
  if (close(fd) != 0) {
    rc = mlc_error_set(MLC_EIO, "%s: %s", path, strerror(errno));
    goto done;
  }
  if (rename(tmp, path) != 0) rc = mlc_error_set(MLC_EIO, "%s: %s", path, strerror(errno));
done:
  if (rc != MLC_OK) unlink(tmp);
  mlc_free(tmp);
  return rc;
}
