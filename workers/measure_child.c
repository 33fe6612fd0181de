/*
 * measure_child.c - running a job in a forked child so that whatever the
 * candidate does (segfault, infinite loop, abort, running out of memory)
 * costs only that candidate.
 *
 * Protocol: the child writes fixed-size messages into a pipe, each with one
 * write(2) of less than PIPE_BUF bytes (so it is atomic): a PHASE message
 * when it enters a phase (entering "warm-up" means the build finished) and a
 * RESULT message at the end. The parent reads them with deadlines: the build
 * must finish within build_timeout_s of the job's start, the rest within
 * run_timeout_s of the end of the build; past a deadline the child is killed
 * (SIGKILL) and reaped. A child killed by a signal is a "crash" naming the
 * signal and the phase it was in; one that exits without a result too.
 *
 * The parent never trusts the child: messages are checked for their magic,
 * kind and size, a short read at the end is reported, and the child is
 * always reaped (no zombies) and the pipe always closed.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include "workers/measure_internal.h"

#define MSG_MAGIC 0x4d4c434du /* "MLCM" */
/* How often the parent looks at the child while waiting (ms). */
#define WAIT_TICK_MS 50
/* How long a child that sent its result may take to exit. */
#define EXIT_GRACE_S 1.0

typedef enum { MSG_PHASE = 1, MSG_RESULT = 2 } msg_kind_t;

typedef struct {
  uint32_t magic;
  uint32_t kind;      /* msg_kind_t */
  int32_t phase;      /* MSG_PHASE: the phase entered */
  double build_secs;  /* MSG_PHASE from warm-up on */
  mlc_measure_result_t result; /* MSG_RESULT */
} measure_msg_t;

_Static_assert(sizeof(measure_msg_t) <= PIPE_BUF, "a message must be written atomically");

/* ------------------------------------------------------------------------ */
/* Child                                                                     */
/* ------------------------------------------------------------------------ */

static void send_msg(int fd, const measure_msg_t *msg) {
  const char *p = (const char *)msg;
  size_t left = sizeof *msg;
  while (left) { /* one write in practice (atomic below PIPE_BUF) */
    ssize_t n = write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) _exit(3); /* the parent is gone: nobody to report to */
    p += n;
    left -= (size_t)n;
  }
}

static void child_enter(measure_phase_t phase, double build_secs, void *payload) {
  measure_msg_t msg;
  memset(&msg, 0, sizeof msg);
  msg.magic = MSG_MAGIC;
  msg.kind = MSG_PHASE;
  msg.phase = (int32_t)phase;
  msg.build_secs = build_secs;
  send_msg(*(int *)payload, &msg);
}

/* The child dies of what it does: default dispositions for the signals a
 * bad kernel raises (the caller, or a sanitizer, may have installed
 * handlers), nothing blocked, and no descriptor of the parent's but the pipe
 * (moved to 3; returned), so a sibling's pipe never stays open in here.
 * SIGINT is ignored: a Ctrl-C at the terminal reaches the whole foreground
 * process group, and what to do about it (finish the round, as mlc-tune
 * does) is the caller's decision; the caller's deadlines and PDEATHSIG still
 * end the child. */
static int child_setup(int fd, pid_t parent) {
  static const int sigs[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTRAP,
                             SIGSYS,  SIGPIPE, SIGTERM, SIGXCPU};
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = SIG_DFL;
  sigemptyset(&sa.sa_mask);
  for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++) sigaction(sigs[i], &sa, NULL);
  sa.sa_handler = SIG_IGN;
  sigaction(SIGINT, &sa, NULL);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, NULL);
#ifdef __linux__
  prctl(PR_SET_PDEATHSIG, SIGKILL); /* never outlive a parent that died */
#endif
  if (getppid() != parent) _exit(3); /* it died before prctl */
  if (fd != 3 && dup2(fd, 3) == 3) {
    close(fd);
    fd = 3;
  }
  if (close_range((unsigned)fd + 1, ~0u, 0) != 0) { /* kernels before 5.9 */
    long maxfd = sysconf(_SC_OPEN_MAX);
    for (long i = fd + 1; i < (maxfd > 0 && maxfd < 65536 ? maxfd : 65536); i++) close((int)i);
  }
  for (int i = 3; i < fd; i++) close(i);
  return fd;
}

static MLC_NORETURN void child_main(int fd, pid_t parent, const measure_job_t *job) {
  fd = child_setup(fd, parent);
  measure_reporter_t rep = {.enter = child_enter, .payload = &fd};
  measure_msg_t msg;
  memset(&msg, 0, sizeof msg);
  measure_job_run(&msg.result, job, &rep);
  msg.magic = MSG_MAGIC;
  msg.kind = MSG_RESULT;
  msg.build_secs = msg.result.build_secs;
  send_msg(fd, &msg);
  _exit(0); /* no atexit handlers, no stdio flush of the parent's buffers */
}

/* ------------------------------------------------------------------------ */
/* Parent                                                                    */
/* ------------------------------------------------------------------------ */

typedef struct {
  pid_t pid;
  int fd;
  union { measure_msg_t msg; unsigned char bytes[sizeof(measure_msg_t)]; } in;
  size_t have;              /* bytes of a message read so far */
  measure_phase_t phase;
  double build_done_at;     /* 0 until the child enters warm-up */
  double build_secs;
  bool got_result;
  double result_at;
  mlc_measure_result_t result;
  bool malformed;
  bool eof, exited, timed_out;
  int status;               /* waitpid status once exited */
} child_t;

static void on_message(child_t *c) {
  const measure_msg_t *m = &c->in.msg;
  if (m->magic != MSG_MAGIC || (m->kind != MSG_PHASE && m->kind != MSG_RESULT) ||
      m->phase < 0 || m->phase >= MEASURE_PHASE_COUNT) {
    c->malformed = true;
    return;
  }
  if (m->kind == MSG_RESULT) {
    c->got_result = true;
    c->result = m->result;
    c->result.message[sizeof c->result.message - 1] = '\0';
    c->result_at = measure_now();
    if (c->result.nrun_secs < 0 || c->result.nrun_secs > MLC_MEASURE_MAX_REPEAT ||
        (int)c->result.error < 0 || (int)c->result.error >= (int)MLC_ERROR_KIND_COUNT)
      c->malformed = true;
    return;
  }
  c->phase = (measure_phase_t)m->phase;
  if (c->phase != MEASURE_PHASE_BUILD && c->build_done_at == 0) {
    c->build_done_at = measure_now();
    c->build_secs = m->build_secs;
  }
}

/* Reads what the pipe holds now (the read end is non-blocking). */
static void drain(child_t *c) {
  while (!c->eof) {
    ssize_t n = read(c->fd, c->in.bytes + c->have, sizeof c->in.bytes - c->have);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return; /* EAGAIN: nothing more for now */
    if (n == 0) {
      c->eof = true;
      return;
    }
    c->have += (size_t)n;
    if (c->have == sizeof c->in.bytes) {
      on_message(c);
      c->have = 0;
    }
  }
}

static void reap_nohang(child_t *c) {
  if (c->exited) return;
  pid_t r = waitpid(c->pid, &c->status, WNOHANG);
  if (r == c->pid) c->exited = true;
  else if (r < 0 && errno == ECHILD) { /* reaped behind our back (SIGCHLD ignored) */
    c->exited = true;
    c->status = -1;
  }
}

static void kill_and_reap(child_t *c) {
  if (c->exited) return;
  kill(c->pid, SIGKILL);
  while (waitpid(c->pid, &c->status, 0) < 0 && errno == EINTR) {
  }
  c->exited = true;
}

static double deadline_of(const child_t *c, const mlc_measure_options_t *o, double job_start) {
  double d = c->build_done_at ? c->build_done_at + o->run_timeout_s : job_start + o->build_timeout_s;
  return c->got_result && c->result_at + EXIT_GRACE_S < d ? c->result_at + EXIT_GRACE_S : d;
}

/* Waits until the child exited and its messages are read, or a deadline
 * passed (then the child is killed). */
static void wait_child(child_t *c, const mlc_measure_options_t *o, double job_start) {
  for (;;) {
    drain(c);
    reap_nohang(c);
    if (c->exited) {
      drain(c); /* everything it wrote is in the pipe now */
      return;
    }
    double left = deadline_of(c, o, job_start) - measure_now();
    if (left <= 0) {
      kill_and_reap(c);
      c->timed_out = true;
      return;
    }
    /* After EOF only the exit is awaited: short sleeps, no busy loop. */
    int tick = c->eof ? 1 : WAIT_TICK_MS;
    int ms = left * 1e3 < tick ? (int)(left * 1e3) + 1 : tick;
    struct pollfd p = {.fd = c->fd, .events = POLLIN};
    if (poll(&p, c->eof ? 0 : 1, ms) < 0 && errno != EINTR) {
      struct timespec ts = {0, 1000000};
      nanosleep(&ts, NULL);
    }
  }
}

static void describe(mlc_measure_result_t *out, const child_t *c, const mlc_measure_options_t *o) {
  const char *phase = measure_phase_name(c->phase);
  if (c->got_result && !c->malformed) { /* even if it hung or died after sending it */
    *out = c->result;
    return;
  }
  if (c->timed_out && !c->build_done_at) {
    measure_fail(out, MLC_ERROR_KIND_TIMEOUT, "the build did not finish within %g s of the job's start",
                 o->build_timeout_s);
  } else if (c->timed_out) {
    measure_fail(out, MLC_ERROR_KIND_TIMEOUT,
                 "the run did not finish within %g s of the end of the build (during %s)",
                 o->run_timeout_s, phase);
  } else if (c->malformed) {
    measure_fail(out, MLC_ERROR_KIND_CRASH, "the measuring process sent a malformed message during %s",
                 phase);
  } else if (c->status != -1 && WIFSIGNALED(c->status)) {
    int sig = WTERMSIG(c->status);
    measure_fail(out, MLC_ERROR_KIND_CRASH, "killed by signal %d (%s) during %s", sig, strsignal(sig),
                 phase);
  } else if (c->status != -1 && WIFEXITED(c->status)) {
    measure_fail(out, MLC_ERROR_KIND_CRASH, "exited with status %d during %s without a result%s",
                 WEXITSTATUS(c->status), phase, c->have ? " (a message was cut short)" : "");
  } else {
    measure_fail(out, MLC_ERROR_KIND_CRASH, "ended during %s without a result", phase);
  }
  out->build_secs = c->build_secs;
}

int measure_forked(mlc_measure_result_t *out, const measure_job_t *job, double job_start) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0)
    return mlc_error_set(MLC_EIO, "measure: pipe: %s", strerror(errno));
  pid_t parent = getpid();
  pid_t pid = fork();
  if (pid < 0) {
    int e = errno;
    close(fds[0]);
    close(fds[1]);
    return mlc_error_set(MLC_EIO, "measure: fork: %s", strerror(e));
  }
  if (pid == 0) {
    close(fds[0]);
    child_main(fds[1], parent, job);
  }
  close(fds[1]);
  fcntl(fds[0], F_SETFL, fcntl(fds[0], F_GETFL) | O_NONBLOCK);
  child_t c;
  memset(&c, 0, sizeof c);
  c.pid = pid;
  c.fd = fds[0];
  c.phase = MEASURE_PHASE_BUILD;
  wait_child(&c, job->opts, job_start);
  close(fds[0]);
  memset(out, 0, sizeof *out);
  describe(out, &c, job->opts);
  return MLC_OK;
}
