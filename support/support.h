/*
 * support.h - the support library every other folder of mlc-tune builds on.
 *
 * What is here: status codes and a per-thread last-error detail, one allocation
 * entry point (failure injectable in tests), arenas, growable arrays, a string
 * builder, levelled logging, a seeded portable RNG, a stable 64-bit hash (XXH64),
 * JSON helpers over jansson, and target strings.
 *
 * Conventions (see STYLE.md): functions return mlc_status_t (MLC_OK = 0, negative
 * codes from MLC_STATUS_MAP); details go to the per-thread last error
 * (mlc_error_last). Out-parameters first. Every type handed out has a _free.
 */
#ifndef MLC_SUPPORT_H
#define MLC_SUPPORT_H

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define MLC_PRINTF(f, a) __attribute__((format(printf, f, a)))
#define MLC_NORETURN __attribute__((noreturn))
#define MLC_UNUSED __attribute__((unused))
#else
#define MLC_PRINTF(f, a)
#define MLC_NORETURN
#define MLC_UNUSED
#endif

/* ------------------------------------------------------------------------ */
/* Status codes                                                              */
/* ------------------------------------------------------------------------ */

/*        name          value  message */
#define MLC_STATUS_MAP(X)                                  \
  X(OK,           0,   "ok")                               \
  X(ENOMEM,      -1,   "out of memory")                    \
  X(EINVAL,      -2,   "invalid argument")                 \
  X(EPARSE,      -3,   "parse error")                      \
  X(EIO,         -4,   "input/output error")               \
  X(ENOTFOUND,   -5,   "not found")                        \
  X(EVERIFY,     -6,   "verification failed")              \
  X(ESCHEDULE,   -7,   "schedule error")                   \
  X(EUNSUPPORTED,-8,   "unsupported")                      \
  X(ERANGE,      -9,   "out of range")                     \
  X(ERUNTIME,   -10,   "runtime error")                    \
  X(ETIMEOUT,   -11,   "timed out")                        \
  X(EINTERNAL,  -12,   "internal error")                   \
  X(EAUTH,      -13,   "not authorised")

typedef enum {
#define MLC_STATUS_ENUM_(name, value, msg) MLC_##name = value,
  MLC_STATUS_MAP(MLC_STATUS_ENUM_)
#undef MLC_STATUS_ENUM_
} mlc_status_t;

/* Static message for a status code ("unknown status" for anything else). */
const char *mlc_status_str(int status);

/* Sets the calling thread's last error detail and returns `code`, so a failing
 * path can `return mlc_error_set(MLC_EINVAL, "bad %s", x);`. */
int mlc_error_set(int code, const char *fmt, ...) MLC_PRINTF(2, 3);
int mlc_error_setv(int code, const char *fmt, va_list ap);
/* Prefixes the current detail with "<prefix>: " (context as an error climbs). */
void mlc_error_prefix(const char *fmt, ...) MLC_PRINTF(1, 2);
/* The calling thread's last detail; "" when none. Borrowed: valid until the next
 * mlc_error_* call on this thread. */
const char *mlc_error_last(void);
/* mlc_error_last(), or `fallback` when the thread has no detail (a failed
 * call that set none): what an error message should say about a status,
 * e.g. mlc_error_or(mlc_status_str(st)). Borrowed like mlc_error_last. */
const char *mlc_error_or(const char *fallback);
/* The code passed with the last detail (MLC_OK when cleared). */
int mlc_error_last_code(void);
void mlc_error_clear(void);

/* Internal invariant failures (bugs, never user input): print and abort. */
MLC_NORETURN void mlc_panic_at(const char *file, int line, const char *fmt, ...)
    MLC_PRINTF(3, 4);
#define MLC_PANIC(...) mlc_panic_at(__FILE__, __LINE__, __VA_ARGS__)
#define MLC_ASSERT(cond)                                                   \
  do {                                                                     \
    if (!(cond)) mlc_panic_at(__FILE__, __LINE__, "assertion failed: %s", #cond); \
  } while (0)

/* Why a measurement produced no time (DESIGN.md: Measurement, Wire protocol).
 * Stored in records, sent over the wire, counted in stats.
 *      enum           name            what it means */
#define MLC_ERROR_KINDS(X)                                                         \
  X(NONE,          "",             "measured")                                      \
  X(BUILD,         "build",        "the candidate did not apply, lower or compile") \
  X(RUN,           "run",          "the kernel returned an error")                  \
  X(TIMEOUT,       "timeout",      "build or run exceeded its time limit")          \
  X(WRONG_RESULT,  "wrong-result", "outputs differ from the reference interpreter") \
  X(CRASH,         "crash",        "the measuring process died (signal)")           \
  X(WORKER_LOST,   "worker-lost",  "the worker died and retries ran out")

typedef enum {
#define MLC_EK_ENUM_(e, name, what) MLC_ERROR_KIND_##e,
  MLC_ERROR_KINDS(MLC_EK_ENUM_)
#undef MLC_EK_ENUM_
  MLC_ERROR_KIND_COUNT
} mlc_error_kind_t;

const char *mlc_error_kind_name(mlc_error_kind_t k); /* "" for NONE */
/* MLC_OK and *out, or MLC_EINVAL for an unknown name. */
int mlc_error_kind_parse(mlc_error_kind_t *out, const char *name);

/* ------------------------------------------------------------------------ */
/* Allocation: the one entry point                                           */
/* ------------------------------------------------------------------------ */

/* realloc-like: size 0 frees and returns NULL. Returns NULL on failure (real or
 * injected). All project allocation goes through here. */
void *mlc_realloc(void *ptr, size_t size);
void *mlc_malloc(size_t size);
void *mlc_calloc(size_t n, size_t size); /* zeroed; overflow-checked */
void mlc_free(void *ptr);
char *mlc_strdup(const char *s);         /* NULL on failure or NULL input */

/* Test hook: the next `n` allocations succeed, every one after fails, until
 * called again with n < 0 (which disables injection). Process-wide. */
void mlc_alloc_fail_after(long n);
/* Number of allocations since the process started (for picking injection points). */
long mlc_alloc_count(void);

/* ------------------------------------------------------------------------ */
/* Arena: many small objects with one lifetime, freed in one call            */
/* ------------------------------------------------------------------------ */

typedef struct mlc_arena mlc_arena_t;

/* NULL when out of memory. Free with mlc_arena_free. */
mlc_arena_t *mlc_arena_new(void);
void mlc_arena_free(mlc_arena_t *arena); /* NULL is fine */

/* Zeroed, 16-byte aligned memory owned by the arena. On allocation failure:
 * if an out-of-memory handler is set, longjmp(*handler, 1); otherwise return
 * NULL and mark the arena failed. */
void *mlc_arena_alloc(mlc_arena_t *arena, size_t size);
void *mlc_arena_memdup(mlc_arena_t *arena, const void *p, size_t size);
char *mlc_arena_strdup(mlc_arena_t *arena, const char *s);
char *mlc_arena_strndup(mlc_arena_t *arena, const char *s, size_t len);
char *mlc_arena_printf(mlc_arena_t *arena, const char *fmt, ...) MLC_PRINTF(2, 3);
/* Grows an array held in the arena: returns a copy of `old` (n_old elements)
 * with room for n_new elements (the old block stays in the arena). */
void *mlc_arena_grow(mlc_arena_t *arena, void *old, size_t n_old, size_t n_new, size_t elem);
bool mlc_arena_failed(const mlc_arena_t *arena);
size_t mlc_arena_bytes(const mlc_arena_t *arena); /* bytes handed out */

/* The out-of-memory handler: code that builds many nodes (the parser, IR
 * clones) sets a jmp_buf so it need not check every allocation, and restores
 * the previous handler (returned) when done. NULL removes it. */
jmp_buf *mlc_arena_set_oom_handler(mlc_arena_t *arena, jmp_buf *handler);

/* ------------------------------------------------------------------------ */
/* Growable arrays (heap, through mlc_realloc)                               */
/* ------------------------------------------------------------------------ */

#define MLC_VEC(T) struct { T *data; size_t len, cap; }

/* Makes room for `need` elements; MLC_OK or MLC_ENOMEM (vector unchanged). */
int mlc_vec_reserve_(void **data, size_t *cap, size_t elem, size_t need);
#define mlc_vec_reserve(v, n) \
  mlc_vec_reserve_((void **)&(v)->data, &(v)->cap, sizeof(*(v)->data), (n))
#define mlc_vec_push(v, x)                                     \
  (mlc_vec_reserve((v), (v)->len + 1) == MLC_OK                \
       ? ((v)->data[(v)->len++] = (x), MLC_OK)                 \
       : MLC_ENOMEM)
#define mlc_vec_free(v) (mlc_free((v)->data), (v)->data = NULL, (v)->len = (v)->cap = 0)

/* ------------------------------------------------------------------------ */
/* String builder                                                            */
/* ------------------------------------------------------------------------ */

/* A growable NUL-terminated string. Allocation failure is sticky: `failed`
 * is set, further appends are ignored, and mlc_sb_take returns NULL. */
typedef struct {
  char *data; /* always NUL-terminated when non-NULL */
  size_t len, cap;
  bool failed;
} mlc_strbuf_t;

void mlc_sb_init(mlc_strbuf_t *sb);
void mlc_sb_free(mlc_strbuf_t *sb);
void mlc_sb_reset(mlc_strbuf_t *sb); /* len = 0, keeps memory */
void mlc_sb_putc(mlc_strbuf_t *sb, char c);
void mlc_sb_append(mlc_strbuf_t *sb, const char *s);
void mlc_sb_appendn(mlc_strbuf_t *sb, const char *s, size_t n);
void mlc_sb_printf(mlc_strbuf_t *sb, const char *fmt, ...) MLC_PRINTF(2, 3);
void mlc_sb_vprintf(mlc_strbuf_t *sb, const char *fmt, va_list ap);
void mlc_sb_indent(mlc_strbuf_t *sb, int spaces);
/* Current contents ("" when empty); borrowed. */
const char *mlc_sb_str(const mlc_strbuf_t *sb);
/* Hands the buffer to the caller (free with mlc_free) and resets sb. NULL if
 * an allocation failed. */
char *mlc_sb_take(mlc_strbuf_t *sb);

/* ------------------------------------------------------------------------ */
/* Logging                                                                   */
/* ------------------------------------------------------------------------ */

typedef enum { MLC_LOG_DEBUG, MLC_LOG_INFO, MLC_LOG_WARN, MLC_LOG_ERROR, MLC_LOG_OFF } mlc_log_level_t;

/* Program name used as the prefix ("mlc-tir: warning: ..."). Not copied. */
void mlc_log_set_program(const char *name);
const char *mlc_log_program(void);

/* Command-line helpers for the programs (DESIGN.md, Programs; support/cli.c).
 * mlc_cli_fail prints "PROG: error: <message>" on stderr (after flushing
 * stdout, so the two stay in order) and returns code, the exit status.
 * mlc_cli_opt_value matches "--name value" or "--name=value" at argv[*i]:
 * true when it matched (advancing *i past a separate value), *value NULL
 * when the value is missing. */
int mlc_cli_fail(const char *prog, int code, const char *fmt, ...) MLC_PRINTF(3, 4);
bool mlc_cli_opt_value(int argc, char **argv, int *i, const char *name, const char **value);
void mlc_log_set_level(mlc_log_level_t level); /* default INFO; env MLC_LOG=debug|info|warn|error|off */
mlc_log_level_t mlc_log_level(void);
/* Writes "<program>: <level>: <message>\n" to stderr (or the sink) if enabled. */
void mlc_log(mlc_log_level_t level, const char *fmt, ...) MLC_PRINTF(2, 3);
/* Redirects log lines (tests); NULL restores stderr. */
typedef void (*mlc_log_sink_fn)(mlc_log_level_t level, const char *line, void *payload);
void mlc_log_set_sink(mlc_log_sink_fn fn, void *payload);

#define MLC_DEBUG(...) mlc_log(MLC_LOG_DEBUG, __VA_ARGS__)
#define MLC_INFO(...) mlc_log(MLC_LOG_INFO, __VA_ARGS__)
#define MLC_WARN(...) mlc_log(MLC_LOG_WARN, __VA_ARGS__)
#define MLC_ERROR(...) mlc_log(MLC_LOG_ERROR, __VA_ARGS__)

/* ------------------------------------------------------------------------ */
/* Random numbers: xoshiro256** seeded through splitmix64                    */
/* ------------------------------------------------------------------------ */

/* Same seed, same sequence, on every machine and compiler (integer-only
 * arithmetic; doubles are formed from the top 53 bits). */
typedef struct { uint64_t s[4]; } mlc_rng_t;

void mlc_rng_seed(mlc_rng_t *rng, uint64_t seed);
uint64_t mlc_rng_next(mlc_rng_t *rng);
/* Uniform in [0, n) without modulo bias; n > 0. */
uint64_t mlc_rng_below(mlc_rng_t *rng, uint64_t n);
/* Uniform integer in [lo, hi] (inclusive); lo <= hi. */
int64_t mlc_rng_range(mlc_rng_t *rng, int64_t lo, int64_t hi);
/* Uniform double in [0, 1). */
double mlc_rng_uniform(mlc_rng_t *rng);
/* n uniform doubles in [0, 1) into out: the values n calls of
 * mlc_rng_uniform would give, at a fraction of the cost (no call each). */
void mlc_rng_uniform_fill(mlc_rng_t *rng, double *out, size_t n);
/* A fresh seed for an independent child stream (advances rng). */
uint64_t mlc_rng_fork_seed(mlc_rng_t *rng);

/* ------------------------------------------------------------------------ */
/* Hashing: XXH64 (libxxhash), stable across machines and versions           */
/* ------------------------------------------------------------------------ */

uint64_t mlc_hash64(const void *data, size_t len, uint64_t seed);

typedef struct mlc_hasher mlc_hasher_t;
/* Streaming form. NULL when out of memory; free with mlc_hasher_free. */
mlc_hasher_t *mlc_hasher_new(uint64_t seed);
void mlc_hasher_free(mlc_hasher_t *h);
void mlc_hasher_update(mlc_hasher_t *h, const void *data, size_t len);
void mlc_hasher_u64(mlc_hasher_t *h, uint64_t v); /* little-endian bytes */
void mlc_hasher_str(mlc_hasher_t *h, const char *s); /* length-prefixed */
uint64_t mlc_hasher_digest(const mlc_hasher_t *h);
/* 16 lower-case hex digits + NUL into buf[17]. */
void mlc_hash_hex(uint64_t h, char buf[17]);

/* ------------------------------------------------------------------------ */
/* JSON (jansson)                                                            */
/* ------------------------------------------------------------------------ */

/* Canonical text: compact, keys sorted, reals with 17 significant digits (read
 * back exactly). Free with
 * free() (jansson's allocator). NULL on failure. */
char *mlc_json_dumps(const json_t *json);
/* Parses `text`; on failure returns NULL and sets the last error to
 * "<what>:LINE:COL: <jansson's message>" with `what` naming the source. */
json_t *mlc_json_loads(const char *text, const char *what);
json_t *mlc_json_load_file(const char *path);
/* Typed field getters: MLC_OK, or MLC_EPARSE with a detail naming `key`. */
int mlc_json_get_int(const json_t *obj, const char *key, int64_t *out);
int mlc_json_get_real(const json_t *obj, const char *key, double *out); /* ints accepted */
int mlc_json_get_str(const json_t *obj, const char *key, const char **out); /* borrowed */

/* ------------------------------------------------------------------------ */
/* JSON scanning (json_scan.c): validation without a tree                    */
/* ------------------------------------------------------------------------ */

/* For hot paths that keep or forward JSON bytes instead of reading them:
 * checks RFC 8259 (grammar, escapes, UTF-8, at most 2048 levels, as jansson)
 * without allocating. Duplicate keys are not detected (callers that care
 * check the keys they read). */
typedef struct {
  const char *p, *end, *start; /* position, end, and the text's first byte */
  const char *why;             /* the first failure (static text), else NULL */
} mlc_jscan_t;

/* A string's bytes between its quotes (escaped: it holds a backslash
 * escape), or a whole value's bytes. Points into the scanned text. */
typedef struct {
  const char *p;
  size_t len;
  bool escaped;
} mlc_jspan_t;

void mlc_jscan_init(mlc_jscan_t *s, const char *text, size_t len);
void mlc_jscan_ws(mlc_jscan_t *s);
/* Skips whitespace; true when the next byte is c (not consumed). */
bool mlc_jscan_at(mlc_jscan_t *s, char c);
/* Records why (the first failure wins) and returns false. */
bool mlc_jscan_fail(mlc_jscan_t *s, const char *why);
/* One value (leading whitespace skipped); depth: the enclosing levels + 1. */
bool mlc_jscan_value(mlc_jscan_t *s, int depth);
/* The string at s->p (which must be '"'); its span into *out (NULL: skip). */
bool mlc_jscan_string(mlc_jscan_t *s, mlc_jspan_t *out);
/* Inside an object (after its '{'): the next member's key into *key, the
 * position left at its value. False at the closing '}' (not consumed) or on
 * bad JSON (s->why set). first: no member read yet. */
bool mlc_jscan_member(mlc_jscan_t *s, bool first, mlc_jspan_t *key);
/* MLC_EPARSE "<what> is not JSON: <why> at byte N" for the scan's state. */
int mlc_jscan_error(const mlc_jscan_t *s, const char *what);
/* MLC_OK when text[0..len) is one JSON value (whitespace around allowed);
 * else mlc_jscan_error's MLC_EPARSE. */
int mlc_json_check(const char *text, size_t len, const char *what);
/* A scanned string's text with escapes decoded into out (room for sp->len +
 * 1 bytes; the decoded form is never longer), NUL-terminated; returns its
 * length. \u0000 is dropped (C strings cannot hold it) and reported in
 * *had_nul (may be NULL); a lone surrogate becomes U+FFFD. */
size_t mlc_jspan_decode(char *out, const mlc_jspan_t *sp, bool *had_nul);
/* The same in arena (NULL: out of memory). */
char *mlc_jspan_string(mlc_arena_t *arena, const mlc_jspan_t *sp);
/* Length of the valid UTF-8 sequence at p (p < end), or 0 when it is not one. */
size_t mlc_utf8_len(const unsigned char *p, const unsigned char *end);

/* ------------------------------------------------------------------------ */
/* Files                                                                     */
/* ------------------------------------------------------------------------ */

/* Reads a whole file (NUL-terminated; *len_out excludes the NUL). Free with
 * mlc_free. "-" reads standard input. Errors: MLC_EIO with the path and errno. */
int mlc_read_file(char **out, size_t *len_out, const char *path);
int mlc_write_file(const char *path, const void *data, size_t len);
/* Exactly len bytes from or to a descriptor (pipes, sockets, files), short
 * transfers continued and EINTR retried. False on an error (errno set) or,
 * reading, at end of file first (errno 0); a write that makes no progress
 * sets EIO. */
bool mlc_read_full(int fd, void *buf, size_t len);
bool mlc_write_full(int fd, const void *buf, size_t len);

/* ------------------------------------------------------------------------ */
/* Targets                                                                   */
/* ------------------------------------------------------------------------ */

typedef enum { MLC_TARGET_LLVM, MLC_TARGET_CUDA, MLC_TARGET_ROCM } mlc_target_kind_t;

/* A parsed target. `llvm` alone is the host CPU (detected). Canonical printing
 * (mlc_target_str) makes two spellings of one target one key. */
typedef struct {
  mlc_target_kind_t kind;
  char mcpu[64];     /* llvm: LLVM CPU name; rocm: gfx arch ("gfx90a") */
  char mtriple[64];  /* llvm: default "x86_64-linux-gnu" */
  char mattr[256];   /* llvm: features, "+avx512f,+fma" sorted; "" when none */
  char arch[16];     /* cuda: "sm_90" */
  int num_cores;     /* llvm: threads for parallel loops; host's when omitted */
  int max_threads_per_block;   /* gpu: from arch defaults unless given */
  int max_shared_memory_per_block; /* bytes */
  int thread_warp_size;        /* 32 on cuda, 64 on rocm */
  int max_registers_per_thread; /* gpu: 32-bit registers one thread may use (255 cuda, 512 rocm) */
  int registers_per_block;      /* gpu: 32-bit registers of one block (65536 cuda, 131072 rocm) */
  int vector_width;            /* llvm: widest SIMD register in bits (128/256/512) */
  bool fast_math;              /* -fast-math given */
} mlc_target_t;

/* Parses "llvm -mcpu=znver4 -num-cores=2", "cuda -arch=sm_90", "rocm -mcpu=gfx90a".
 * Options as -key=value or -key value; GPU limits -max_threads_per_block,
 * -max_shared_memory_per_block, -max_registers_per_thread,
 * -registers_per_block, -thread_warp_size (positive integers; printed only
 * when not the kind's default). Unknown kinds or options: MLC_EINVAL
 * with a detail naming the option. */
int mlc_target_parse(mlc_target_t *out, const char *str);
/* Canonical text into buf (always NUL-terminated); returns buf. */
char *mlc_target_str(const mlc_target_t *t, char *buf, size_t len);
bool mlc_target_has_feature(const mlc_target_t *t, const char *feature); /* "avx512f" */
/* The host cores work for target t may use: its -num-cores when set (llvm
 * targets always have it), else mlc_cpu_host_cores() (GPU targets: the
 * host's side of the work, building and launching). */
int mlc_target_cores(const mlc_target_t *t);
/* The CPU name and -mattr string to give an LLVM of major version
 * llvm_major for an llvm target: the target's own when that LLVM knows its
 * CPU; else the newest older CPU it knows, with every feature the target's
 * CPU implies spelled out in mattr (a znver4 target keeps its AVX-512 on an
 * LLVM 14, which knows only znver3). Both always NUL-terminated. */
void mlc_target_llvm_cpu(const mlc_target_t *t, int llvm_major, char *cpu, size_t cpu_len, char *mattr,
                         size_t mattr_len);
/* The host CPU as an llvm target (name and features detected with cpuid). */
void mlc_target_host(mlc_target_t *out);
/* The host CPU's marketing name (the "model name" line of /proc/cpuinfo,
 * "Intel(R) Xeon(R) Processor"), or "unknown"; always NUL-terminated. For
 * device descriptions in records. */
void mlc_cpu_model(char *buf, size_t len);
/* The CPUs this process may run on (its affinity mask), at least 1. */
int mlc_cpu_host_cores(void);

#ifdef __cplusplus
}
#endif
#endif /* MLC_SUPPORT_H */
