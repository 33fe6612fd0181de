/*
 * worker_server.c - mlc-worker's measuring process (worker.h).
 *
 * Why a process: mlc_measure forks a child per candidate, and that child
 * compiles with LLVM and allocates freely. In a process with other threads
 * (ZeroMQ starts I/O threads as soon as the protocol opens its context) the
 * child could inherit a lock one of them held (malloc's, the sanitizers'
 * allocator's) and hang. So mlc-worker forks this process first, while it
 * has one thread, and keeps it for its whole life; the protocol side hands
 * it each job over a pipe and reads the result from another.
 *
 * Framing on both pipes: an 8-byte length (host order: both ends are one
 * program on one machine), then that many bytes of JSON (rpc_job_to_json /
 * rpc_result_to_json), at most MLC_RPC_MAX_MESSAGE.
 *
 * Signals: the measuring process ignores SIGINT and SIGTERM (a Ctrl-C at the
 * terminal reaches the whole process group; the worker decides when to stop,
 * after the running job) and exits when its job pipe closes. It asks the
 * kernel for SIGKILL when the worker dies, so a killed worker leaves nothing
 * behind but the candidate being measured, which its own deadline ends.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "workers/worker.h"

struct worker_server {
  pid_t pid;
  int to_fd;   /* jobs to the measuring process */
  int from_fd; /* results from it */
};

/* ------------------------------------------------------------------------ */
/* Framing                                                                   */
/* ------------------------------------------------------------------------ */

static bool send_json(int fd, const json_t *j) {
  char *text = mlc_json_dumps(j);
  if (!text) return false;
  uint64_t len = strlen(text);
  bool ok = mlc_write_full(fd, &len, sizeof len) && mlc_write_full(fd, text, len);
  free(text);
  return ok;
}

/* The next frame as JSON (NULL at end of file or on a bad frame). */
static json_t *recv_json(int fd) {
  uint64_t len;
  if (!mlc_read_full(fd, &len, sizeof len) || len > MLC_RPC_MAX_MESSAGE) return NULL;
  char *text = mlc_malloc(len + 1);
  if (!text) return NULL;
  json_t *j = NULL;
  if (mlc_read_full(fd, text, len)) {
    text[len] = '\0';
    j = mlc_json_loads(text, "measuring process");
  }
  mlc_free(text);
  return j;
}

/* ------------------------------------------------------------------------ */
/* The measuring process                                                     */
/* ------------------------------------------------------------------------ */

/* One job: its result as JSON, or NULL when the job did not decode (cannot
 * happen: the protocol side encoded it) or memory ran out. */
static json_t *serve_one(worker_device_t *dev, const json_t *jj) {
  rpc_job_t job;
  memset(&job, 0, sizeof job);
  if (rpc_job_from_json(&job, jj) != MLC_OK) return NULL;
  rpc_result_t res;
  worker_run_job(dev, &job, &res); /* a result in every case but out of memory */
  json_t *out = rpc_result_to_json(&res);
  rpc_result_free(&res);
  rpc_job_free(&job);
  return out;
}

static MLC_NORETURN void server_main(worker_device_t dev, int in_fd, int out_fd, pid_t parent) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) _exit(0); /* the worker died before prctl */
  signal(SIGINT, SIG_IGN);
  signal(SIGTERM, SIG_IGN);
  signal(SIGPIPE, SIG_IGN);
  for (;;) {
    json_t *jj = recv_json(in_fd);
    if (!jj) break;
    json_t *res = serve_one(&dev, jj);
    json_decref(jj);
    bool ok = res && send_json(out_fd, res);
    json_decref(res);
    if (!ok) break;
  }
  _exit(0); /* not exit(): the worker's atexit handlers and buffers are its own */
}

int worker_server_start(worker_server_t **out, const worker_device_t *dev) {
  if (!out || !dev) return mlc_error_set(MLC_EINVAL, "measuring process: NULL argument");
  *out = NULL;
  worker_server_t *s = mlc_calloc(1, sizeof *s);
  int to[2] = {-1, -1}, from[2] = {-1, -1};
  if (!s) return mlc_error_set(MLC_ENOMEM, "measuring process: out of memory");
  if (pipe2(to, O_CLOEXEC) != 0 || pipe2(from, O_CLOEXEC) != 0) {
    int e = errno;
    for (int i = 0; i < 2; i++) {
      if (to[i] >= 0) close(to[i]);
      if (from[i] >= 0) close(from[i]);
    }
    mlc_free(s);
    return mlc_error_set(MLC_EIO, "measuring process: pipe: %s", strerror(e));
  }
  worker_device_t copy = *dev;
  pid_t parent = getpid();
  fflush(NULL);
  s->pid = fork();
  if (s->pid == 0) {
    close(to[1]);
    close(from[0]);
    server_main(copy, to[0], from[1], parent);
  }
  int e = errno;
  close(to[0]);
  close(from[1]);
  s->to_fd = to[1];
  s->from_fd = from[0];
  if (s->pid < 0) {
    close(s->to_fd);
    close(s->from_fd);
    mlc_free(s);
    return mlc_error_set(MLC_EIO, "measuring process: fork: %s", strerror(e));
  }
  *out = s;
  return MLC_OK;
}

int worker_server_run(worker_server_t *s, const rpc_job_t *job, rpc_result_t *out) {
  if (!s || !job || !out) return mlc_error_set(MLC_EINVAL, "measuring process: NULL argument");
  memset(out, 0, sizeof *out);
  json_t *jj = rpc_job_to_json(job);
  if (!jj) return mlc_error_set(MLC_ENOMEM, "measuring process: out of memory");
  bool sent = send_json(s->to_fd, jj);
  json_decref(jj);
  json_t *res = sent ? recv_json(s->from_fd) : NULL;
  int st = res ? rpc_result_from_json(out, res) : MLC_EIO;
  json_decref(res);
  if (st == MLC_OK) return MLC_OK;
  memset(out, 0, sizeof *out);
  snprintf(out->id, sizeof out->id, "%s", job->id);
  out->error = MLC_ERROR_KIND_CRASH;
  snprintf(out->message, sizeof out->message, "the worker's measuring process died");
  return mlc_error_set(MLC_EIO, "the measuring process (pid %ld) died", (long)s->pid);
}

void worker_server_stop(worker_server_t *s) {
  if (!s) return;
  close(s->to_fd); /* end of file: the process exits after its running job */
  close(s->from_fd);
  while (waitpid(s->pid, NULL, 0) < 0 && errno == EINTR) {
  }
  mlc_free(s);
}
