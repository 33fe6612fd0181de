/*
 * local_farm.c - a farm on this machine (runner_farm.h, ms_local_farm_*):
 * the broker on a thread of the calling process, bound to an ipc://
 * endpoint in a private temporary directory, and K mlc-worker processes
 * connected to it. mlc-tune --local-farm K runs the same broker, worker and
 * client code as a fleet does, with nothing to set up.
 *
 * Workers are programs, not forks of this process: by the time they start,
 * the broker's thread and ZeroMQ's I/O threads exist, and a forked copy of a
 * threaded process may only call exec-safe functions. So everything the
 * child needs (argv, envp, the path) is built before fork(), and the child
 * only moves to its own process group, asks for SIGTERM when its parent
 * dies, and execs. (PR_SET_PDEATHSIG fires when the forking *thread* exits:
 * call ms_local_farm_start from the thread that outlives the farm, the main
 * thread in mlc-tune.)
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "rpc/rpc.h"
#include "search/tune/runner_farm.h"
#include "workers/measure_wire.h"

#define READY_TIMEOUT_MS 30000
#define STOP_GRACE_MS 5000
#define MAX_LOCAL_WORKERS 256

extern char **environ;

struct ms_local_farm {
  char dir[PATH_MAX];
  char endpoint[PATH_MAX + 16];
  rpc_broker_t *broker;
  int nworkers;
  pid_t *pids;          /* 0 once reaped */
};

static void sleep_ms(int ms) {
  struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

/* ------------------------------------------------------------------------ */
/* Finding mlc-worker                                                        */
/* ------------------------------------------------------------------------ */

static bool executable(const char *path) { return access(path, X_OK) == 0; }

/* mlc-worker beside this program, else the first on $PATH. */
static int find_worker(char *out, size_t len, const char *given) {
  if (given) {
    if (!executable(given)) return mlc_error_set(MLC_ENOTFOUND, "local farm: %s: %s", given, strerror(errno));
    snprintf(out, len, "%s", given);
    return MLC_OK;
  }
  char self[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n > 0) {
    self[n] = '\0';
    char *slash = strrchr(self, '/');
    if (slash) {
      *slash = '\0';
      int n_out = snprintf(out, len, "%s/mlc-worker", self);
      if (n_out > 0 && (size_t)n_out < len && executable(out)) return MLC_OK;
    }
  }
  const char *path = getenv("PATH");
  for (const char *p = path ? path : ""; *p;) {
    size_t k = strcspn(p, ":");
    int n_out = snprintf(out, len, "%.*s/mlc-worker", (int)k, p);
    if (k > 0 && n_out > 0 && (size_t)n_out < len && executable(out)) return MLC_OK;
    p += k;
    if (*p == ':') p++;
  }
  return mlc_error_set(MLC_ENOTFOUND, "local farm: no mlc-worker beside this program or on $PATH");
}

/* ------------------------------------------------------------------------ */
/* Workers                                                                   */
/* ------------------------------------------------------------------------ */

/* The environment for workers: ours, with MLC_LOG=warn unless it is set. */
static char **worker_env(void) {
  size_t n = 0;
  while (environ && environ[n]) n++;
  char **env = mlc_calloc(n + 2, sizeof *env);
  if (!env) return NULL;
  for (size_t i = 0; i < n; i++) env[i] = environ[i];
  if (!getenv("MLC_LOG")) env[n] = "MLC_LOG=warn";
  return env;
}

/* Forks and execs one worker; only exec-safe calls in the child. */
static pid_t spawn(const char *exe, char *const argv[], char *const envp[], pid_t parent) {
  pid_t pid = fork();
  if (pid != 0) return pid;
  setpgid(0, 0);
  prctl(PR_SET_PDEATHSIG, SIGTERM);
  if (getppid() != parent) _exit(127);
  execve(exe, argv, envp);
  _exit(127);
}

static int spawn_workers(ms_local_farm_t *f, const char *exe, const mlc_target_t *target) {
  char target_str[512], id[64];
  mlc_target_str(target, target_str, sizeof target_str);
  char **env = worker_env();
  if (!env) return mlc_error_set(MLC_ENOMEM, "local farm: out of memory");
  pid_t parent = getpid();
  int st = MLC_OK;
  fflush(NULL);
  for (int k = 0; k < f->nworkers && st == MLC_OK; k++) {
    snprintf(id, sizeof id, "local-%d-w%d", (int)parent, k);
    char *argv[] = {(char *)exe, "--broker", f->endpoint, "--target", target_str, "--worker-id", id, NULL};
    f->pids[k] = spawn(exe, argv, env, parent);
    if (f->pids[k] < 0) {
      f->pids[k] = 0;
      st = mlc_error_set(MLC_EIO, "local farm: fork: %s", strerror(errno));
    }
  }
  mlc_free(env);
  return st;
}

/* A worker that has exited: MLC_EIO describing how. */
static int check_exits(ms_local_farm_t *f) {
  for (int k = 0; k < f->nworkers; k++) {
    int status;
    if (f->pids[k] <= 0 || waitpid(f->pids[k], &status, WNOHANG) != f->pids[k]) continue;
    f->pids[k] = 0;
    if (WIFEXITED(status))
      return mlc_error_set(MLC_EIO, "local farm: mlc-worker %d exited with status %d%s", k, WEXITSTATUS(status),
                           WEXITSTATUS(status) == 127 ? " (could not be run)" : " (its error is above)");
    return mlc_error_set(MLC_EIO, "local farm: mlc-worker %d was killed by signal %d", k, WTERMSIG(status));
  }
  return MLC_OK;
}

/* How many workers the broker has for device key `key`: STATS replies
 * {"<device key>": {"workers": N, ...}, ...}. */
static int count_workers(const json_t *stats, const char *key) {
  const json_t *n = json_object_get(json_object_get(stats, key), "workers");
  return json_is_integer(n) ? (int)json_integer_value(n) : 0;
}

/* Waits until the broker counts every worker, or one exits, or time is up. */
static int wait_ready(ms_local_farm_t *f, const mlc_target_t *target) {
  char key[64];
  int have = 0, st = mlc_device_key(key, sizeof key, target);
  if (st != MLC_OK) return st;
  for (int waited = 0; waited < READY_TIMEOUT_MS; waited += 100) {
    if ((st = check_exits(f)) != MLC_OK) return st;
    json_t *stats = NULL;
    if (rpc_broker_stats(&stats, f->endpoint, NULL, 1000) == MLC_OK) {
      have = count_workers(stats, key);
      json_decref(stats);
      if (have >= f->nworkers) return MLC_OK;
    }
    sleep_ms(100);
  }
  return mlc_error_set(MLC_ETIMEOUT, "local farm: %d of %d workers ready after %d s", have, f->nworkers,
                       READY_TIMEOUT_MS / 1000);
}

/* A worker that did not stop cleanly on SIGTERM says so. */
static void note_exit(int k, pid_t pid, int status) {
  if (WIFEXITED(status) && WEXITSTATUS(status) != 0)
    MLC_WARN("local farm: mlc-worker %d (pid %d) exited with status %d", k, (int)pid, WEXITSTATUS(status));
  else if (WIFSIGNALED(status))
    MLC_WARN("local farm: mlc-worker %d (pid %d) was killed by signal %d", k, (int)pid, WTERMSIG(status));
}

/* SIGTERM, a grace period, then SIGKILL; every worker reaped. */
static void stop_workers(ms_local_farm_t *f) {
  for (int k = 0; k < f->nworkers; k++)
    if (f->pids[k] > 0) kill(f->pids[k], SIGTERM);
  for (int waited = 0;; waited += 50) {
    int left = 0, status;
    for (int k = 0; k < f->nworkers; k++) {
      if (f->pids[k] <= 0) continue;
      if (waitpid(f->pids[k], &status, WNOHANG) == f->pids[k]) {
        note_exit(k, f->pids[k], status);
        f->pids[k] = 0;
      } else {
        left++;
      }
    }
    if (left == 0) return;
    if (waited >= STOP_GRACE_MS) break;
    sleep_ms(50);
  }
  for (int k = 0; k < f->nworkers; k++) {
    if (f->pids[k] <= 0) continue;
    MLC_WARN("local farm: mlc-worker %d (pid %d) did not stop; killing it", k, (int)f->pids[k]);
    kill(f->pids[k], SIGKILL);
    while (waitpid(f->pids[k], NULL, 0) < 0 && errno == EINTR) {
    }
    f->pids[k] = 0;
  }
}

/* ------------------------------------------------------------------------ */
/* The farm                                                                  */
/* ------------------------------------------------------------------------ */

/* Removes the directory and whatever the broker left in it. */
static void remove_dir(const char *dir) {
  DIR *d = opendir(dir);
  if (d) {
    struct dirent *e;
    char path[PATH_MAX + 260];
    while ((e = readdir(d)) != NULL) {
      if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
      snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
      unlink(path);
    }
    closedir(d);
  }
  rmdir(dir);
}

static int make_dir(ms_local_farm_t *f) {
  const char *tmp = getenv("TMPDIR");
  if (!tmp || !*tmp) tmp = "/tmp";
  /* ipc:// paths are limited by sockaddr_un (107 bytes). */
  if (strlen(tmp) > 60) tmp = "/tmp";
  snprintf(f->dir, sizeof f->dir, "%s/mlc-farm-XXXXXX", tmp);
  if (!mkdtemp(f->dir)) {
    f->dir[0] = '\0';
    return mlc_error_set(MLC_EIO, "local farm: mkdtemp in %s: %s", tmp, strerror(errno));
  }
  snprintf(f->endpoint, sizeof f->endpoint, "ipc://%s/broker", f->dir);
  return MLC_OK;
}

static int start(ms_local_farm_t *f, const mlc_target_t *target, const char *exe) {
  int st = make_dir(f);
  if (st != MLC_OK) return st;
  rpc_broker_options_t bo;
  rpc_broker_options_default(&bo);
  bo.bind = f->endpoint;
  bo.stats_log_s = 0;
  st = rpc_broker_start(&f->broker, &bo);
  if (st != MLC_OK) {
    mlc_error_prefix("local farm: broker on %s", f->endpoint);
    return st;
  }
  st = spawn_workers(f, exe, target);
  if (st == MLC_OK) st = wait_ready(f, target);
  return st;
}

int ms_local_farm_start(ms_local_farm_t **out, int workers, const mlc_target_t *target, const char *worker_exe) {
  if (!out) return mlc_error_set(MLC_EINVAL, "ms_local_farm_start: NULL out");
  *out = NULL;
  if (!target) return mlc_error_set(MLC_EINVAL, "local farm: NULL target");
  if (workers < 1 || workers > MAX_LOCAL_WORKERS)
    return mlc_error_set(MLC_EINVAL, "local farm: %d workers, want 1 to %d", workers, MAX_LOCAL_WORKERS);
  char exe[PATH_MAX];
  int st = find_worker(exe, sizeof exe, worker_exe);
  if (st != MLC_OK) return st;
  ms_local_farm_t *f = mlc_calloc(1, sizeof *f);
  if (f) f->pids = mlc_calloc((size_t)workers, sizeof *f->pids);
  if (!f || !f->pids) {
    mlc_free(f);
    return mlc_error_set(MLC_ENOMEM, "local farm: out of memory");
  }
  f->nworkers = workers;
  st = start(f, target, exe);
  if (st != MLC_OK) {
    char why[1024];
    snprintf(why, sizeof why, "%s", mlc_error_last());
    ms_local_farm_stop(f);
    return mlc_error_set(st, "%s", why);
  }
  *out = f;
  return MLC_OK;
}

const char *ms_local_farm_endpoint(const ms_local_farm_t *f) { return f ? f->endpoint : ""; }

void ms_local_farm_stop(ms_local_farm_t *f) {
  if (!f) return;
  stop_workers(f);
  rpc_broker_stop(f->broker);
  if (f->dir[0]) remove_dir(f->dir);
  mlc_free(f->pids);
  mlc_free(f);
}
