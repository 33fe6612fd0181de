/*
 * log.c - levelled log lines: "<program>: <level>: <message>".
 *
 * Programs set their name once (mlc_log_set_program); the level starts at INFO
 * or at what the MLC_LOG environment variable says (read once, on first use),
 * and an explicit mlc_log_set_level wins over the environment. Each line is
 * formatted whole and written with one call so lines from different threads do
 * not interleave. Tests capture lines with a sink; the sink gets the line
 * without its trailing newline, is called under a lock (one line at a time,
 * so a simple test sink needs no locking of its own) and must not log.
 */
#include "support/support.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Lines longer than this are cut (and end in "..."); logs are for people. */
#define MLC_LOG_LINE_MAX 4096

/*      level  printed    MLC_LOG value */
#define MLC_LOG_LEVEL_MAP(X)    \
  X(DEBUG, "debug",   "debug")  \
  X(INFO,  "info",    "info")   \
  X(WARN,  "warning", "warn")   \
  X(ERROR, "error",   "error")  \
  X(OFF,   "off",     "off")

static const struct {
  mlc_log_level_t level;
  const char *word, *env;
} log_levels[] = {
#define MLC_LOG_LEVEL_ROW_(name, word, env) {MLC_LOG_##name, word, env},
    MLC_LOG_LEVEL_MAP(MLC_LOG_LEVEL_ROW_)
#undef MLC_LOG_LEVEL_ROW_
};

static _Atomic(const char *) log_program = "mlc";
static atomic_int log_level = MLC_LOG_INFO;
static pthread_once_t log_env_once = PTHREAD_ONCE_INIT;

static pthread_mutex_t sink_lock = PTHREAD_MUTEX_INITIALIZER;
static mlc_log_sink_fn sink_fn;
static void *sink_payload;

/* MLC_LOG=debug|info|warn|error|off ("warning" too); anything else is ignored
 * with a warning rather than failing a program over its logging. */
static void log_read_env(void) {
  const char *env = getenv("MLC_LOG");
  if (!env || !*env) return;
  for (size_t i = 0; i < sizeof log_levels / sizeof log_levels[0]; i++) {
    if (strcmp(env, log_levels[i].env) == 0 || strcmp(env, log_levels[i].word) == 0) {
      atomic_store(&log_level, (int)log_levels[i].level);
      return;
    }
  }
  fprintf(stderr, "%s: warning: ignoring MLC_LOG=%s (want debug, info, warn, error or off)\n",
          atomic_load(&log_program), env);
}

static void log_init(void) { pthread_once(&log_env_once, log_read_env); }

void mlc_log_set_program(const char *name) { atomic_store(&log_program, name ? name : "mlc"); }

const char *mlc_log_program(void) { return atomic_load(&log_program); }

void mlc_log_set_level(mlc_log_level_t level) {
  log_init(); /* so a later first use cannot overwrite this with the env */
  atomic_store(&log_level, (int)level);
}

mlc_log_level_t mlc_log_level(void) {
  log_init();
  return (mlc_log_level_t)atomic_load(&log_level);
}

void mlc_log_set_sink(mlc_log_sink_fn fn, void *payload) {
  pthread_mutex_lock(&sink_lock);
  sink_fn = fn;
  sink_payload = payload;
  pthread_mutex_unlock(&sink_lock);
}

static const char *level_word(mlc_log_level_t level) {
  for (size_t i = 0; i < sizeof log_levels / sizeof log_levels[0]; i++)
    if (log_levels[i].level == level) return log_levels[i].word;
  return "?";
}

/* Formats "<program>: <level>: <message>" into line; returns its length. */
static size_t log_format(char *line, mlc_log_level_t level, const char *fmt, va_list ap) {
  int head = snprintf(line, MLC_LOG_LINE_MAX, "%s: %s: ", mlc_log_program(), level_word(level));
  if (head < 0) head = 0;
  if (head >= MLC_LOG_LINE_MAX) head = MLC_LOG_LINE_MAX - 1;
  int body = vsnprintf(line + head, MLC_LOG_LINE_MAX - (size_t)head, fmt, ap);
  if (body < 0) body = 0;
  size_t len = (size_t)head + (size_t)body;
  if (len >= MLC_LOG_LINE_MAX) {
    len = MLC_LOG_LINE_MAX - 1;
    memcpy(line + len - 3, "...", 3);
  }
  return len;
}

void mlc_log(mlc_log_level_t level, const char *fmt, ...) {
  if (level >= MLC_LOG_OFF || level < mlc_log_level()) return;
  char line[MLC_LOG_LINE_MAX + 1]; /* + the newline for stderr */
  va_list ap;
  va_start(ap, fmt);
  size_t len = log_format(line, level, fmt, ap);
  va_end(ap);
  pthread_mutex_lock(&sink_lock);
  if (sink_fn) {
    sink_fn(level, line, sink_payload);
  } else {
    line[len] = '\n';
    fwrite(line, 1, len + 1, stderr);
  }
  pthread_mutex_unlock(&sink_lock);
}
