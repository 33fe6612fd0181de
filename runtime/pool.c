/*
 * pool.c - the thread pool that runs the parallel loops of generated code
 * (mlc_rt_parallel_for).
 *
 * A kernel call is short (a GMM-512 runs in about a millisecond), so the
 * hand-off must cost microseconds, not a scheduler round trip:
 *  - workers are created on first use and kept alive between calls;
 *  - each worker waits on its own generation word (one cache line each); the
 *    caller writes the worker's chunk, bumps the word and calls futex_wake
 *    only when the worker has actually gone to sleep;
 *  - a waiting thread (worker between jobs, caller waiting for the workers)
 *    first spins for a short while (MLC_RT_SPIN_US, default 100 us) so
 *    back-to-back calls, as in a timing loop, never sleep at all; after the
 *    first 2 us it yields while spinning, because on a busy machine the
 *    thread it waits for may need its CPU (pure spinning made each hand-off
 *    cost the whole spin budget there).
 * Only the workers a job uses are woken: a loop of extent 1 wakes nobody.
 *
 * The iterations [0, extent) are split into n contiguous chunks whose sizes
 * differ by at most one, n = min(num_threads, pool size, extent); the caller
 * owns chunk 0 and worker k chunk k. An owner runs its chunk in blocks of an
 * eighth from the front; a thread done with its own chunk takes the back
 * half of what another has left, if that is two blocks or more. On a machine
 * where a core is slowed (another process, a VM's neighbour), the others
 * take over part of its work instead of waiting for it; when the threads
 * keep pace nothing moves, so each keeps its chunk (and its data in its
 * caches) from call to call. MLC_RT_STEAL=0 or mlc_rt_set_work_stealing(0)
 * runs each chunk whole on its owner. One job runs at a time (a second
 * top-level caller waits for the pool); a parallel_for called from inside a
 * task runs serially in the calling thread. The first nonzero task result is
 * returned and its message copied to the caller's mlc_last_error().
 *
 * fork: the prepare handler waits for the job in flight, the child forgets
 * the parent's workers (they do not exist in the child) and starts its own on
 * first use. A destructor stops and joins the workers, so an emitted shared
 * library holding this runtime can be dlclose'd while its pool is alive.
 *
 * Linux only (futex); libc and pthreads only, since it ships inside emitted
 * shared libraries.
 */
#include "runtime_priv.h"

#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

enum { CACHE_LINE = 64, SPIN_CHECK_EVERY = 16, DEFAULT_SPIN_US = 100, PURE_SPIN_NS = 2000 };

typedef struct {
  alignas(CACHE_LINE) atomic_uint gen; /* bumped by the caller to hand over a chunk */
  atomic_uint sleeping;                /* 1 while the worker may be in futex_wait */
  int slot;                            /* its chunk's index in the job (1...) */
  pthread_t thread;
} pool_worker_t;

static struct {
  pthread_mutex_t lock;  /* held by the caller for a whole job */
  atomic_int size;       /* threads a job may use, the caller included */
  atomic_bool steal;     /* threads done early take others' iterations */
  long spin_ns;          /* how long a waiter spins before sleeping */
  int nstarted;          /* worker threads running (under lock) */
  pool_worker_t *workers[MLC_RT_MAX_THREADS - 1];
  bool fork_locked;      /* the prepare handler took the lock */
  /* The job in flight: written under the lock before workers are released. */
  mlc_rt_task_fn fn;
  void *closure;
  int nparts;      /* chunks (threads taking part) */
  bool job_steal;  /* stealing in this job (off for chunks over 2^32) */
  alignas(CACHE_LINE) atomic_uint pending; /* workers not yet done */
  atomic_uint caller_sleeping;
  atomic_int status;               /* first nonzero task result */
  atomic_bool stop;                /* workers exit (destructor) */
  char error[MLC_RT_ERROR_MAX];    /* the message that went with status */
} pool = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* A chunk of the job in flight: [base, base + len). With stealing, what is
 * not yet handed out is [base + front, base + back), both packed in `range`
 * so that the owner (taking blocks from the front) and a thief (taking from
 * the back) each claim with one compare-and-swap and never overlap. Written
 * by the caller before it releases the workers, one job at a time. */
typedef struct {
  alignas(CACHE_LINE) _Atomic uint64_t range;
  int64_t base, len, block;
} pool_chunk_t;

static pool_chunk_t chunks[MLC_RT_MAX_THREADS];

static pthread_once_t pool_once = PTHREAD_ONCE_INIT;

/* Depth of parallel regions the thread is in: workers are always inside one,
 * the caller while it runs its own chunk. Nonzero means "run serially". */
static _Thread_local int rt_depth;

/* ------------------------------------------------------------------------ */
/* Waiting: spin, then futex                                                 */
/* ------------------------------------------------------------------------ */

static void futex_wait(atomic_uint *word, unsigned old) {
  syscall(SYS_futex, (unsigned *)word, FUTEX_WAIT_PRIVATE, old, NULL, NULL, 0);
}

static void futex_wake(atomic_uint *word) {
  syscall(SYS_futex, (unsigned *)word, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#endif
}

static long now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (long)ts.tv_sec * 1000000000L + ts.tv_nsec;
}

/* Waits until *word differs from old and returns its new value: a few
 * microseconds of pure spinning, then spinning with sched_yield (on a busy
 * machine the thread we wait for may need this CPU), then the futex.
 * `sleeping` is raised before the futex wait; whoever changes *word checks it
 * after the change (both sequentially consistent), so either the waker sees
 * the flag and wakes, or the waiter sees the change and does not sleep. */
static unsigned wait_change(atomic_uint *word, unsigned old, atomic_uint *sleeping) {
  unsigned v;
  long start = 0, t = 0;
  for (long i = 0;; i++) {
    if ((v = atomic_load(word)) != old) return v;
    if (i % SPIN_CHECK_EVERY == 0) {
      t = now_ns();
      if (i == 0) start = t;
      if (t - start >= pool.spin_ns) break;
    }
    if (t - start < PURE_SPIN_NS) cpu_relax();
    else sched_yield();
  }
  atomic_store(sleeping, 1);
  while ((v = atomic_load(word)) == old) futex_wait(word, old);
  atomic_store(sleeping, 0);
  return v;
}

static void wake_if_sleeping(atomic_uint *word, atomic_uint *sleeping) {
  if (atomic_load(sleeping)) futex_wake(word);
}

/* ------------------------------------------------------------------------ */
/* Size, fork, shutdown                                                      */
/* ------------------------------------------------------------------------ */

static int clamp_threads(long n) {
  return n < 1 ? 1 : n > MLC_RT_MAX_THREADS ? MLC_RT_MAX_THREADS : (int)n;
}

/* A positive integer from the environment, or 0. */
static long env_positive(const char *name) {
  const char *s = getenv(name);
  if (!s || !*s) return 0;
  char *end;
  long v = strtol(s, &end, 10);
  return *end == '\0' && v > 0 ? v : 0;
}

/* MLC_NUM_THREADS, else the CPUs this process may run on. */
static int default_size(void) {
  long n = env_positive("MLC_NUM_THREADS");
  if (n > 0) return clamp_threads(n);
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) return clamp_threads(CPU_COUNT(&set));
  return clamp_threads(sysconf(_SC_NPROCESSORS_ONLN));
}

/* A fork while a job runs would leave the child with a held lock and
 * workers that do not exist; waiting for the job avoids the first, the child
 * handler the second. A fork from inside a task cannot wait (its own job
 * holds the lock), so it only resets. */
static void fork_prepare(void) {
  pool.fork_locked = rt_depth == 0;
  if (pool.fork_locked) pthread_mutex_lock(&pool.lock);
}

static void fork_parent(void) {
  if (pool.fork_locked) pthread_mutex_unlock(&pool.lock);
}

static void fork_child(void) {
  pthread_mutex_init(&pool.lock, NULL);
  pool.nstarted = 0; /* worker memory is reused when the child starts its own */
  atomic_store(&pool.pending, 0);
  atomic_store(&pool.caller_sleeping, 0);
  atomic_store(&pool.status, 0);
}

static void pool_init(void) {
  atomic_store(&pool.size, default_size());
  long spin_us = env_positive("MLC_RT_SPIN_US");
  const char *s = getenv("MLC_RT_SPIN_US");
  if (s && strcmp(s, "0") == 0) spin_us = 0;
  else if (spin_us == 0) spin_us = DEFAULT_SPIN_US;
  pool.spin_ns = spin_us * 1000;
  const char *steal = getenv("MLC_RT_STEAL");
  atomic_store(&pool.steal, !(steal && strcmp(steal, "0") == 0));
  pthread_atfork(fork_prepare, fork_parent, fork_child);
}

static void pool_ensure_init(void) { pthread_once(&pool_once, pool_init); }

/* Stops and joins the workers (process exit, dlclose of an emitted library). */
__attribute__((destructor)) static void pool_shutdown(void) {
  if (pool.nstarted == 0) return;
  atomic_store(&pool.stop, true);
  for (int k = 0; k < pool.nstarted; k++) {
    atomic_fetch_add(&pool.workers[k]->gen, 1);
    futex_wake(&pool.workers[k]->gen);
  }
  for (int k = 0; k < pool.nstarted; k++) {
    pool_worker_t *w = pool.workers[k];
    if (!pthread_equal(w->thread, pthread_self())) pthread_join(w->thread, NULL);
    free(w);
    pool.workers[k] = NULL;
  }
  pool.nstarted = 0;
  atomic_store(&pool.stop, false);
}

void mlc_rt_set_num_threads(int32_t n) {
  pool_ensure_init();
  atomic_store(&pool.size, n <= 0 ? default_size() : clamp_threads(n));
}

int32_t mlc_rt_num_threads(void) {
  pool_ensure_init();
  return atomic_load(&pool.size);
}

void mlc_rt_set_work_stealing(int32_t on) {
  pool_ensure_init();
  atomic_store(&pool.steal, on != 0);
}

/* ------------------------------------------------------------------------ */
/* Jobs                                                                      */
/* ------------------------------------------------------------------------ */

/* Chunk k of n over [0, extent): sizes differ by at most one, larger first. */
static void chunk_of(int64_t extent, int n, int k, int64_t *begin, int64_t *end) {
  int64_t base = extent / n, rem = extent % n;
  *begin = k * base + (k < rem ? k : rem);
  *end = *begin + base + (k < rem ? 1 : 0);
}

/* Keeps the first failure and its message (a worker's message lives in the
 * worker's thread-local buffer, so it is copied out here). */
static void run_chunk(int64_t begin, int64_t end) {
  int32_t rc = pool.fn(begin, end, pool.closure);
  int expected = 0;
  if (rc != 0 && atomic_compare_exchange_strong(&pool.status, &expected, rc))
    mlc_rt_error_copy(pool.error, sizeof pool.error);
}

static uint64_t pack_range(uint64_t front, uint64_t back) { return front << 32 | back; }

static void unpack_range(uint64_t v, int64_t *front, int64_t *back) {
  *front = (int64_t)(v >> 32);
  *back = (int64_t)(v & 0xffffffffu);
}

/* Runs chunk k's iterations, then (stealing) others' leftovers until none
 * is left that is worth taking. */
static void run_share(int k) {
  pool_chunk_t *own = &chunks[k];
  if (!pool.job_steal) {
    run_chunk(own->base, own->base + own->len);
    return;
  }
  for (;;) {
    uint64_t v = atomic_load(&own->range);
    int64_t f, b;
    unpack_range(v, &f, &b);
    if (f >= b) break;
    int64_t take = b - f < own->block ? b - f : own->block;
    if (atomic_compare_exchange_weak(&own->range, &v, pack_range((uint64_t)(f + take), (uint64_t)b)))
      run_chunk(own->base + f, own->base + f + take);
  }
  /* A chunk less than two blocks from done is on time (the caller starts
   * before the workers it wakes): taking from it would only move its data
   * between caches on every call. */
  for (int tries = 1; tries < pool.nparts;) {
    pool_chunk_t *victim = &chunks[(k + tries) % pool.nparts];
    uint64_t v = atomic_load(&victim->range);
    int64_t f, b;
    unpack_range(v, &f, &b);
    if (b - f < 2 * victim->block) {
      tries++;
      continue;
    }
    int64_t take = (b - f) / 2;
    if (atomic_compare_exchange_weak(&victim->range, &v, pack_range((uint64_t)f, (uint64_t)(b - take))))
      run_chunk(victim->base + b - take, victim->base + b);
  }
}

static void *worker_main(void *arg) {
  pool_worker_t *w = arg;
  unsigned seen = 0; /* gen is 0 when the thread starts */
  rt_depth = 1;
  for (;;) {
    seen = wait_change(&w->gen, seen, &w->sleeping);
    if (atomic_load(&pool.stop)) break;
    run_share(w->slot);
    atomic_fetch_sub(&pool.pending, 1);
    wake_if_sleeping(&pool.pending, &pool.caller_sleeping);
  }
  return NULL;
}

/* Workers get no asynchronous signals: a SIGALRM or SIGINT meant for the
 * process goes to a thread that expects it. Signals a fault raises stay
 * unblocked, so a crashing task reaches the program's handler (ASan's, a
 * measurement child's) instead of killing the process silently. */
static bool start_worker(int k) {
  pool_worker_t *w = pool.workers[k];
  if (!w) {
    w = aligned_alloc(CACHE_LINE, (sizeof *w + CACHE_LINE - 1) / CACHE_LINE * CACHE_LINE);
    if (!w) return false;
    pool.workers[k] = w;
  }
  w->slot = k + 1;
  atomic_store(&w->gen, 0);
  atomic_store(&w->sleeping, 0);
  sigset_t all, old;
  sigfillset(&all);
  static const int faults[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGSYS};
  for (size_t i = 0; i < sizeof faults / sizeof faults[0]; i++) sigdelset(&all, faults[i]);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  int rc = pthread_create(&w->thread, NULL, worker_main, w);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  return rc == 0;
}

/* Starts workers until n threads (the caller included) can take part;
 * returns how many can (fewer when a thread cannot be created). */
static int ensure_workers(int n) {
  while (pool.nstarted < n - 1 && start_worker(pool.nstarted)) pool.nstarted++;
  return pool.nstarted + 1 < n ? pool.nstarted + 1 : n;
}

static int32_t run_serial(mlc_rt_task_fn fn, void *closure, int64_t extent) {
  rt_depth++;
  int32_t rc = fn(0, extent, closure);
  rt_depth--;
  return rc;
}

static int32_t run_job(mlc_rt_task_fn fn, void *closure, int64_t extent, int n) {
  pool.fn = fn;
  pool.closure = closure;
  atomic_store(&pool.status, 0);
  atomic_store(&pool.pending, (unsigned)(n - 1));
  pool.nparts = n;
  pool.job_steal = atomic_load(&pool.steal) && extent / n < INT64_C(0xffffffff);
  for (int k = 0; k < n; k++) {
    pool_chunk_t *c = &chunks[k];
    int64_t end;
    chunk_of(extent, n, k, &c->base, &end);
    c->len = end - c->base;
    c->block = c->len >= 16 ? c->len / 8 : 1;
    if (pool.job_steal) atomic_store(&c->range, pack_range(0, (uint64_t)c->len));
  }
  for (int k = 1; k < n; k++) {
    pool_worker_t *w = pool.workers[k - 1];
    atomic_fetch_add(&w->gen, 1);
    wake_if_sleeping(&w->gen, &w->sleeping);
  }
  rt_depth++;
  run_share(0);
  rt_depth--;
  unsigned left;
  while ((left = atomic_load(&pool.pending)) != 0)
    wait_change(&pool.pending, left, &pool.caller_sleeping);
  int32_t rc = atomic_load(&pool.status);
  if (rc != 0) mlc_rt_error_set_str(pool.error);
  return rc;
}

int32_t mlc_rt_parallel_for(mlc_rt_task_fn fn, void *closure, int64_t extent, int32_t num_threads) {
  if (extent <= 0) return 0;
  if (rt_depth > 0) return run_serial(fn, closure, extent);
  pool_ensure_init();
  int size = atomic_load(&pool.size);
  int n = num_threads <= 0 || num_threads > size ? size : num_threads;
  if (extent < n) n = (int)extent;
  if (n <= 1) return run_serial(fn, closure, extent);
  pthread_mutex_lock(&pool.lock);
  n = ensure_workers(n);
  int32_t rc = n <= 1 ? run_serial(fn, closure, extent) : run_job(fn, closure, extent, n);
  pthread_mutex_unlock(&pool.lock);
  return rc;
}
