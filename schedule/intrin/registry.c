/*
 * registry.c - the process-wide table of tensor intrinsics (schedule.h:
 * sch_intrin_register / sch_intrin_get / sch_intrin_names).
 *
 * An intrinsic is parsed once, when registered, into two functions that live
 * until the process ends (tensorize copies what it needs out of them, so they
 * are never modified). The table is a fixed array, so the pointers and the
 * name list handed out stay valid while more intrinsics are registered. The
 * built-in intrinsics (builtin_x86.c, builtin_cuda.c) are registered on the
 * first call to any of the three functions, under pthread_once; a mutex
 * guards the table.
 */
#include "schedule/intrin/intrin.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

/* Most intrinsics the table holds (the built-ins take about 20). */
#define SCH_INTRIN_MAX 256

static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t builtins_once = PTHREAD_ONCE_INIT;
static sch_intrin_t table[SCH_INTRIN_MAX];
static const char *names[SCH_INTRIN_MAX + 1];
static int ntable;

static const sch_intrin_t *find_locked(const char *name) {
  for (int i = 0; i < ntable; i++)
    if (strcmp(table[i].name, name) == 0) return &table[i];
  return NULL;
}

/* A function fit to be a desc or impl: its body is the root block (no iter
 * vars) and every parameter is a buffer. */
static int check_shape(const char *name, const char *which, const tir_func_t *f) {
  if (!f->body || f->body->kind != TIR_BLOCK_REALIZE || f->body->u.realize.block->niter_vars != 0)
    return mlc_error_set(MLC_EINVAL, "intrinsic %s: the %s's body is not a root block", name, which);
  if (f->nparams > SCH_INTRIN_MAX_BUFFERS)
    return mlc_error_set(MLC_EINVAL, "intrinsic %s: the %s has more than %d parameters", name, which,
                         SCH_INTRIN_MAX_BUFFERS);
  for (int i = 0; i < f->nparams; i++)
    if (!f->buffer_map || !f->buffer_map[i])
      return mlc_error_set(MLC_EINVAL, "intrinsic %s: parameter %d of the %s is not a buffer", name, i, which);
  return MLC_OK;
}

static int parse_one(tir_func_t **out, const char *name, const char *which, const char *src) {
  tir_parse_error_t err;
  char file[128];
  snprintf(file, sizeof file, "<intrinsic %s %s>", name, which);
  if (!src) return mlc_error_set(MLC_EINVAL, "intrinsic %s: no %s text", name, which);
  int rc = tir_parse_func(out, src, strlen(src), file, &err);
  if (rc == MLC_ENOMEM) return rc;
  if (rc != MLC_OK) { /* the parser's message names the file and position */
    char msg[512];
    snprintf(msg, sizeof msg, "%s", mlc_error_last());
    return mlc_error_set(MLC_EINVAL, "%s", msg);
  }
  rc = check_shape(name, which, *out);
  if (rc != MLC_OK) {
    tir_func_free(*out);
    *out = NULL;
  }
  return rc;
}

static int add_locked(const char *name, const char *desc_src, const char *impl_src) {
  tir_func_t *desc = NULL, *impl = NULL;
  if (!name || !name[0]) return mlc_error_set(MLC_EINVAL, "sch_intrin_register: empty name");
  if (find_locked(name)) return mlc_error_set(MLC_EINVAL, "intrinsic %s is already registered", name);
  if (ntable == SCH_INTRIN_MAX)
    return mlc_error_set(MLC_EINVAL, "intrinsic %s: the table is full (%d intrinsics)", name, SCH_INTRIN_MAX);
  int rc = parse_one(&desc, name, "description", desc_src);
  if (rc == MLC_OK) rc = parse_one(&impl, name, "implementation", impl_src);
  if (rc == MLC_OK && desc->nparams != impl->nparams)
    rc = mlc_error_set(MLC_EINVAL, "intrinsic %s: the description has %d parameters, the implementation %d", name,
                       desc->nparams, impl->nparams);
  char *copy = rc == MLC_OK ? mlc_strdup(name) : NULL;
  if (rc == MLC_OK && !copy) rc = mlc_error_set(MLC_ENOMEM, "intrinsic %s: out of memory", name);
  if (rc != MLC_OK) {
    tir_func_free(desc);
    tir_func_free(impl);
    return rc;
  }
  table[ntable].name = copy;
  table[ntable].desc = desc;
  table[ntable].impl = impl;
  names[ntable++] = copy;
  names[ntable] = NULL;
  return MLC_OK;
}

/* The built-ins are part of the program: one that does not register is a
 * bug, not a user error. */
static void register_builtins(void) {
  pthread_mutex_lock(&table_lock);
  int rc = sch_intrin_register_x86(add_locked);
  if (rc == MLC_OK) rc = sch_intrin_register_cuda(add_locked);
  pthread_mutex_unlock(&table_lock);
  if (rc != MLC_OK) MLC_PANIC("built-in tensor intrinsics: %s", mlc_error_last());
}

int sch_intrin_register(const char *name, const char *desc_tvmscript, const char *impl_tvmscript) {
  pthread_once(&builtins_once, register_builtins);
  pthread_mutex_lock(&table_lock);
  int rc = add_locked(name, desc_tvmscript, impl_tvmscript);
  pthread_mutex_unlock(&table_lock);
  return rc;
}

const sch_intrin_t *sch_intrin_get(const char *name) {
  pthread_once(&builtins_once, register_builtins);
  pthread_mutex_lock(&table_lock);
  const sch_intrin_t *out = name ? find_locked(name) : NULL;
  pthread_mutex_unlock(&table_lock);
  return out;
}

const char *const *sch_intrin_names(int *n) {
  pthread_once(&builtins_once, register_builtins);
  pthread_mutex_lock(&table_lock);
  *n = ntable;
  pthread_mutex_unlock(&table_lock);
  return names;
}
