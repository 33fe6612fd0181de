/*
 * pg_cluster.h - a throwaway PostgreSQL cluster for tests (header-only).
 *
 * pg_cluster_start makes a temp dir, runs initdb (trust auth, C locale, no
 * sync), writes a config that listens only on a unix socket inside that dir
 * with fsync and full-page writes off, starts the server with pg_ctl, waits
 * until it accepts connections and creates the database `mlc`. The test then
 * connects with c->conninfo ("postgresql:///mlc?host=DIR&port=5432").
 *
 * initdb and postgres refuse to run as root, so when the test runs as root
 * the server runs as the `postgres` system user (runuser -u postgres --, the
 * temp dir chowned to it); otherwise as the current user. The bootstrap
 * superuser is named after the test's own user, so libpq's default user name
 * works without a user in the connection string.
 *
 * The cluster is always stopped: pg_cluster_stop from the group teardown, an
 * atexit handler for a test that exits early, and a watchdog process that
 * holds the read end of a pipe and stops the server and removes the dir when
 * the test process dies without saying goodbye (a crash, SIGKILL, a ctest
 * timeout). Only the process that started a cluster stops it: forked test
 * children never do.
 *
 * When no /usr/lib/postgresql/<version>/bin/initdb exists (and MLC_PG_BINDIR
 * does not name a directory with one), pg_cluster_start returns 0 and prints
 * why, and the tests skip.
 */
#ifndef MLC_TESTS_PG_CLUSTER_H
#define MLC_TESTS_PG_CLUSTER_H

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <glob.h>
#include <pwd.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <libpq-fe.h>

typedef struct {
  char dir[128];        /* temp dir: data/, the socket, server.log */
  char data[160];       /* dir/data */
  char log[160];        /* dir/server.log (server) and dir/tools.log (initdb, pg_ctl) */
  char tools_log[160];
  char bindir[256];
  char conninfo[256];   /* libpq URI of the database `mlc` */
  char superuser[64];
  bool as_postgres;     /* server runs as the postgres system user (we are root) */
  bool running;
  pid_t owner;          /* the process that started it */
  pid_t guard_pid;      /* the watchdog */
  int guard_fd;         /* write end of the watchdog's pipe */
} pg_cluster_t;

/* Clusters this process started, for the atexit handler. */
#define PG_CLUSTER_MAX_ 4
static pg_cluster_t *pg_cluster_live_[PG_CLUSTER_MAX_];

static inline int pg_cluster_rm_entry_(const char *path, const struct stat *st, int flag,
                                       struct FTW *ftw) {
  (void)st, (void)flag, (void)ftw;
  remove(path);
  return 0;
}

static inline void pg_cluster_rmdir_(const char *dir) {
  if (dir[0]) nftw(dir, pg_cluster_rm_entry_, 16, FTW_DEPTH | FTW_PHYS);
}

/* Finds the newest /usr/lib/postgresql/<v>/bin with an initdb (or
 * MLC_PG_BINDIR). False when there is none. */
static inline bool pg_cluster_find_bindir_(char *out, size_t len) {
  const char *env = getenv("MLC_PG_BINDIR");
  char path[512];
  if (env && env[0]) {
    snprintf(path, sizeof path, "%s/initdb", env);
    if (access(path, X_OK) != 0) return false;
    snprintf(out, len, "%s", env);
    return true;
  }
  glob_t g;
  if (glob("/usr/lib/postgresql/*/bin/initdb", 0, NULL, &g) != 0) return false;
  int best = -1;
  long best_version = -1;
  for (size_t i = 0; i < g.gl_pathc; i++) {
    long v = strtol(g.gl_pathv[i] + strlen("/usr/lib/postgresql/"), NULL, 10);
    if (access(g.gl_pathv[i], X_OK) == 0 && v > best_version) best = (int)i, best_version = v;
  }
  if (best >= 0) {
    snprintf(out, len, "%s", g.gl_pathv[best]);
    *strrchr(out, '/') = '\0';
  }
  globfree(&g);
  return best >= 0;
}

/* Runs bindir/tool with args (NULL-terminated), as postgres when root, its
 * output appended to tools.log. Returns the exit status (-1 if it could not
 * run or died of a signal). */
static inline int pg_cluster_tool_(const pg_cluster_t *c, const char *tool, const char *const *args) {
  char exe[512];
  snprintf(exe, sizeof exe, "%s/%s", c->bindir, tool);
  const char *argv[32];
  int n = 0;
  if (c->as_postgres) {
    argv[n++] = "runuser";
    argv[n++] = "-u";
    argv[n++] = "postgres";
    argv[n++] = "--";
  }
  argv[n++] = exe;
  for (int i = 0; args[i] && n < 31; i++) argv[n++] = args[i];
  argv[n] = NULL;
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    int fd = open(c->tools_log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd >= 0) {
      dup2(fd, 1);
      dup2(fd, 2);
    }
    int nul = open("/dev/null", O_RDONLY);
    if (nul >= 0) dup2(nul, 0);
    execvp(argv[0], (char *const *)argv);
    _exit(127);
  }
  int status;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* Prints the last lines of a log file to stderr (why a start failed). */
static inline void pg_cluster_dump_log_(const char *path) {
  FILE *f = fopen(path, "r");
  if (!f) return;
  char buf[4096];
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  buf[n] = '\0';
  fclose(f);
  fprintf(stderr, "---- %s ----\n%s\n----\n", path, buf);
}

static inline int pg_cluster_write_conf_(const pg_cluster_t *c) {
  char path[256];
  snprintf(path, sizeof path, "%s/postgresql.conf", c->data);
  FILE *f = fopen(path, "a");
  if (!f) return -1;
  /* Test settings: no TCP, the socket in our dir, no durability work. */
  fprintf(f,
          "\n# pg_cluster.h\n"
          "listen_addresses = ''\n"
          "unix_socket_directories = '%s'\n"
          "port = 5432\n"
          "fsync = off\n"
          "full_page_writes = off\n"
          "max_connections = 40\n"
          "shared_buffers = 32MB\n"
          "logging_collector = off\n",
          c->dir);
  return fclose(f) == 0 ? 0 : -1;
}

static inline int pg_cluster_ctl_(const pg_cluster_t *c, const char *action, const char *mode) {
  const char *args[] = {"-D", c->data, "-l", c->log, "-w", "-t", "30", "-m", mode, action, NULL};
  return pg_cluster_tool_(c, "pg_ctl", args);
}

/* The watchdog: blocks on the pipe; a 'q' means the owner stopped the
 * cluster itself; EOF without it means the owner died, so stop the server
 * and remove the dir. */
static inline void pg_cluster_guard_main_(pg_cluster_t *c, int rfd) {
  char byte = 0;
  ssize_t n;
  while ((n = read(rfd, &byte, 1)) < 0 && errno == EINTR) {
  }
  if (n == 1 && byte == 'q') _exit(0);
  pg_cluster_ctl_(c, "stop", "immediate");
  pg_cluster_rmdir_(c->dir);
  _exit(0);
}

static inline int pg_cluster_start_guard_(pg_cluster_t *c) {
  int fds[2];
  /* Close-on-exec: the server must not hold the write end, or EOF never comes. */
  if (pipe2(fds, O_CLOEXEC) != 0) return -1;
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return -1;
  }
  if (pid == 0) {
    close(fds[1]);
    signal(SIGINT, SIG_IGN); /* a ^C to the test must still let us clean up */
    pg_cluster_guard_main_(c, fds[0]);
  }
  close(fds[0]);
  c->guard_pid = pid;
  c->guard_fd = fds[1];
  return 0;
}

static inline void pg_cluster_stop_guard_(pg_cluster_t *c) {
  if (c->guard_fd < 0) return;
  ssize_t w = write(c->guard_fd, "q", 1);
  (void)w;
  close(c->guard_fd);
  c->guard_fd = -1;
  while (waitpid(c->guard_pid, NULL, 0) < 0 && errno == EINTR) {
  }
}

/* Creates the database `mlc` through the maintenance database. */
static inline int pg_cluster_create_db_(pg_cluster_t *c) {
  char admin[256];
  snprintf(admin, sizeof admin, "postgresql:///postgres?host=%s&port=5432", c->dir);
  PGconn *conn = PQconnectdb(admin);
  int rc = -1;
  if (PQstatus(conn) == CONNECTION_OK) {
    PGresult *res = PQexec(conn, "CREATE DATABASE mlc");
    rc = PQresultStatus(res) == PGRES_COMMAND_OK ? 0 : -1;
    if (rc != 0) fprintf(stderr, "pg_cluster: CREATE DATABASE: %s", PQerrorMessage(conn));
    PQclear(res);
  } else {
    fprintf(stderr, "pg_cluster: connect: %s", PQerrorMessage(conn));
  }
  PQfinish(conn);
  return rc;
}

/* Stops the server (fast, then immediate), removes the dir. Idempotent; a
 * no-op in any process but the one that started the cluster. */
static inline void pg_cluster_stop(pg_cluster_t *c) {
  if (!c || c->owner != getpid()) return;
  if (c->running && pg_cluster_ctl_(c, "stop", "fast") != 0) pg_cluster_ctl_(c, "stop", "immediate");
  c->running = false;
  pg_cluster_rmdir_(c->dir);
  c->dir[0] = '\0';
  pg_cluster_stop_guard_(c);
  for (int i = 0; i < PG_CLUSTER_MAX_; i++)
    if (pg_cluster_live_[i] == c) pg_cluster_live_[i] = NULL;
  c->owner = 0;
}

static inline void pg_cluster_atexit_(void) {
  for (int i = 0; i < PG_CLUSTER_MAX_; i++)
    if (pg_cluster_live_[i]) pg_cluster_stop(pg_cluster_live_[i]);
}

static inline void pg_cluster_register_(pg_cluster_t *c) {
  static bool registered;
  if (!registered) atexit(pg_cluster_atexit_);
  registered = true;
  for (int i = 0; i < PG_CLUSTER_MAX_; i++)
    if (!pg_cluster_live_[i]) {
      pg_cluster_live_[i] = c;
      return;
    }
}

/* 1: running, c->conninfo set. 0: skipped (reason printed). -1: failed
 * (reason and logs printed). */
static inline int pg_cluster_start(pg_cluster_t *c) {
  memset(c, 0, sizeof *c);
  c->guard_fd = -1;
  if (!pg_cluster_find_bindir_(c->bindir, sizeof c->bindir)) {
    printf("SKIP: no PostgreSQL server binaries (/usr/lib/postgresql/*/bin/initdb); "
           "install the `postgresql` package (scripts/install-deps.sh) or set MLC_PG_BINDIR\n");
    return 0;
  }
  struct passwd *me = getpwuid(geteuid()), *pg = NULL;
  snprintf(c->superuser, sizeof c->superuser, "%s", me ? me->pw_name : "postgres");
  c->as_postgres = geteuid() == 0;
  if (c->as_postgres && !(pg = getpwnam("postgres"))) {
    fprintf(stderr, "pg_cluster: running as root and there is no `postgres` user to run the server\n");
    return -1;
  }
  snprintf(c->dir, sizeof c->dir, "/tmp/mlc-pg-XXXXXX");
  if (!mkdtemp(c->dir)) {
    fprintf(stderr, "pg_cluster: mkdtemp: %s\n", strerror(errno));
    c->dir[0] = '\0';
    return -1;
  }
  snprintf(c->data, sizeof c->data, "%s/data", c->dir);
  snprintf(c->log, sizeof c->log, "%s/server.log", c->dir);
  snprintf(c->tools_log, sizeof c->tools_log, "%s/tools.log", c->dir);
  snprintf(c->conninfo, sizeof c->conninfo, "postgresql:///mlc?host=%s&port=5432", c->dir);
  c->owner = getpid();
  pg_cluster_register_(c);
  if (pg_cluster_start_guard_(c) != 0) goto fail;
  if (c->as_postgres && chown(c->dir, pg->pw_uid, pg->pw_gid) != 0) goto fail;
  const char *initdb[] = {"-D", c->data, "-A", "trust", "-U", c->superuser, "-E", "UTF8",
                          "--locale=C", "-N", NULL};
  if (pg_cluster_tool_(c, "initdb", initdb) != 0 || pg_cluster_write_conf_(c) != 0) goto fail;
  if (pg_cluster_ctl_(c, "start", "fast") != 0) goto fail;
  c->running = true;
  if (pg_cluster_create_db_(c) != 0) goto fail;
  return 1;
fail:
  fprintf(stderr, "pg_cluster: could not start a cluster in %s\n", c->dir);
  pg_cluster_dump_log_(c->tools_log);
  pg_cluster_dump_log_(c->log);
  pg_cluster_stop(c);
  return -1;
}

/* pg_ctl restart -m fast: connected clients are disconnected (57P01). */
static inline int pg_cluster_restart(pg_cluster_t *c) {
  int rc = pg_cluster_ctl_(c, "restart", "fast");
  if (rc != 0) pg_cluster_dump_log_(c->log);
  return rc;
}

#endif /* MLC_TESTS_PG_CLUSTER_H */
