/*
 * jsonl.c - one append-only JSON Lines file of the file database: the schema
 * line, reading only what was appended since the last read, torn tails, and
 * durable appends.
 *
 * A line is complete when its newline is on disk; nothing past the last
 * newline is ever consumed. A writer that crashed mid-write leaves an
 * unterminated tail: readers skip it (one warning), and the next writer,
 * holding the lock, cuts it off before appending so its own lines are not
 * glued to the torn one. Complete lines that do not parse are skipped with a
 * warning naming file:line and never stop loading.
 */

#include "database/file/file_priv.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum { JL_CHUNK = 1 << 20 }; /* bytes read per read(2) when loading */

static int io_error(const char *path, const char *what) {
  return mlc_error_set(MLC_EIO, "%s: %s: %s", path, what, strerror(errno));
}

/* Checks the first line, {"mlc_db_schema": N} with N <= FDB_SCHEMA, and
 * keeps N in f->schema. */
static int schema_check(jl_file_t *f, const char *line, size_t len, const char *dir) {
  const char *path = f->path;
  json_error_t err;
  json_t *j = json_loadb(line, len, 0, &err);
  json_t *v = json_is_object(j) ? json_object_get(j, "mlc_db_schema") : NULL;
  int rc = MLC_OK;
  if (!json_is_integer(v)) {
    rc = mlc_error_set(
        MLC_EIO, "%s: not an mlc-db file (the first line is not {\"mlc_db_schema\": N})", path);
  } else if (json_integer_value(v) > FDB_SCHEMA || json_integer_value(v) < 1) {
    rc = mlc_error_set(MLC_EIO, "database %s has schema %lld; this mlc-db understands up to %d: "
                       "upgrade mlc-tune", dir, (long long)json_integer_value(v), FDB_SCHEMA);
  } else {
    f->schema = (int)json_integer_value(v);
  }
  json_decref(j);
  return rc;
}

int jl_fsync_dir(const char *dir) {
  int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return io_error(dir, "cannot open the directory");
  int rc = fsync(fd) == 0 ? MLC_OK : io_error(dir, "fsync");
  close(fd);
  return rc;
}

/* Reads the first line (up to 256 bytes: a schema line is short). */
static int read_first_line(jl_file_t *f, const char *dir) {
  char buf[257];
  ssize_t n;
  do n = pread(f->fd, buf, sizeof buf - 1, 0);
  while (n < 0 && errno == EINTR);
  if (n < 0) return io_error(f->path, "read");
  const char *nl = memchr(buf, '\n', (size_t)n);
  if (!nl)
    return mlc_error_set(MLC_EIO, "%s: not an mlc-db file (no schema line)", f->path);
  return schema_check(f, buf, (size_t)(nl - buf), dir);
}

static int open_fd(jl_file_t *f) {
  f->fd = open(f->path, O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC, 0666);
  if (f->fd < 0) return io_error(f->path, "cannot open");
  struct stat st;
  if (fstat(f->fd, &st) != 0) return io_error(f->path, "stat");
  f->dev = st.st_dev;
  f->ino = st.st_ino;
  f->off = 0;
  f->line = 0;
  f->torn_warned = -1;
  return MLC_OK;
}

int jl_open(jl_file_t *f, const char *path, const char *dir) {
  memset(f, 0, sizeof *f);
  f->fd = -1;
  f->path = mlc_strdup(path);
  if (!f->path) return mlc_error_set(MLC_ENOMEM, "out of memory");
  int rc = open_fd(f);
  if (rc != MLC_OK) return rc;
  struct stat st;
  if (fstat(f->fd, &st) != 0) return io_error(path, "stat");
  if (st.st_size == 0) { /* new (or created by a process that died at once) */
    if (!mlc_write_full(f->fd, JL_SCHEMA_LINE, strlen(JL_SCHEMA_LINE)) || fsync(f->fd) != 0)
      return io_error(path, "cannot write the schema line");
    int rc = jl_fsync_dir(dir); /* the new file's name is durable too */
    if (rc != MLC_OK) return rc;
  }
  return read_first_line(f, dir);
}

void jl_close(jl_file_t *f) {
  if (f->fd >= 0) close(f->fd);
  mlc_free(f->path);
  f->fd = -1;
  f->path = NULL;
}

int jl_reopen_if_replaced(jl_file_t *f, const char *dir, bool *replaced) {
  *replaced = false;
  struct stat st;
  if (stat(f->path, &st) != 0) return io_error(f->path, "stat");
  if (st.st_dev == f->dev && st.st_ino == f->ino) return MLC_OK;
  close(f->fd);
  int rc = open_fd(f);
  if (rc == MLC_OK) rc = read_first_line(f, dir);
  *replaced = true;
  return rc;
}

/* One complete line: the schema line is checked, any other is parsed and
 * handed to fn; unparseable lines are skipped with a warning. */
static int consume_line(jl_file_t *f, const char *dir, const char *line, size_t len,
                        jl_line_fn fn, void *payload) {
  int64_t lineno = f->line + 1;
  int rc = MLC_OK;
  if (lineno == 1) {
    rc = schema_check(f, line, len, dir);
  } else {
    rc = fn(payload, line, len, f->off);
    if (rc == MLC_EPARSE) {
      MLC_WARN("%s:%lld: skipping a corrupt line (%s)", f->path, (long long)lineno,
               mlc_error_last());
      rc = MLC_OK;
    }
  }
  if (rc == MLC_OK) {
    f->off += (int64_t)len + 1;
    f->line = lineno;
  }
  return rc;
}

/* What is left after the last newline: a torn write. */
static int torn_tail(jl_file_t *f, int64_t size, bool writer) {
  long long bytes = (long long)(size - f->off);
  if (writer) {
    MLC_WARN("%s:%lld: cutting off a torn last line (%lld bytes; a writer died mid-write)",
             f->path, (long long)f->line + 1, bytes);
    if (ftruncate(f->fd, f->off) != 0) return io_error(f->path, "cannot cut the torn last line");
    f->torn_warned = -1;
  } else if (f->torn_warned != f->off) {
    MLC_WARN("%s:%lld: skipping a torn last line (%lld bytes without a newline)", f->path,
             (long long)f->line + 1, bytes);
    f->torn_warned = f->off;
  }
  return MLC_OK;
}

/* Reads [f->off, size) in chunks; a line longer than a chunk grows the buffer. */
int jl_read_tail(jl_file_t *f, const char *dir, jl_line_fn fn, void *payload, bool writer) {
  struct stat st;
  if (fstat(f->fd, &st) != 0) return io_error(f->path, "stat");
  int64_t size = st.st_size, pos = f->off;
  if (size <= f->off) return MLC_OK;
  size_t cap = (size_t)(size - pos) + 1 < JL_CHUNK ? (size_t)(size - pos) + 1 : JL_CHUNK;
  char *buf = mlc_malloc(cap);
  size_t have = 0; /* bytes in buf, starting at file offset f->off */
  int rc = buf ? MLC_OK : mlc_error_set(MLC_ENOMEM, "%s: out of memory loading", f->path);
  while (rc == MLC_OK && pos < size) {
    if (have == cap) {
      char *bigger = mlc_realloc(buf, cap * 2);
      if (!bigger) {
        rc = mlc_error_set(MLC_ENOMEM, "%s: out of memory loading", f->path);
        break;
      }
      buf = bigger;
      cap *= 2;
    }
    size_t want = cap - have < (size_t)(size - pos) ? cap - have : (size_t)(size - pos);
    ssize_t n = pread(f->fd, buf + have, want, pos);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) { /* n == 0: the file shrank under us; stop at what we have */
      if (n < 0) rc = io_error(f->path, "read");
      size = pos;
      break;
    }
    have += (size_t)n;
    pos += n;
    size_t start = 0;
    char *nl;
    while (rc == MLC_OK && (nl = memchr(buf + start, '\n', have - start)) != NULL) {
      size_t len = (size_t)(nl - (buf + start));
      rc = consume_line(f, dir, buf + start, len, fn, payload);
      start += len + 1;
    }
    memmove(buf, buf + start, have - start);
    have -= start;
  }
  if (rc == MLC_OK && have > 0) rc = torn_tail(f, f->off + (int64_t)have, writer);
  mlc_free(buf);
  return rc;
}

/* fdatasync, not fsync: the data and the size that makes it readable are
 * what an acknowledged record needs; timestamps may lag. */
int jl_append(jl_file_t *f, const char *data, size_t len, int nlines) {
  if (!mlc_write_full(f->fd, data, len)) {
    int rc = io_error(f->path, "cannot append");
    if (ftruncate(f->fd, f->off) != 0) { /* leave no partial batch behind */ }
    return rc;
  }
  if (fdatasync(f->fd) != 0) return io_error(f->path, "fdatasync");
  f->off += (int64_t)len;
  f->line += nlines;
  return MLC_OK;
}
