/*
 * state.c - a schedule's lifetime, its random-variable table and its errors.
 *
 * A schedule owns a private clone of the function. On creation every loop and
 * block of the clone gets a uid (in place: nobody else sees the clone), and
 * random variables hold those uids, so a variable keeps naming its loop or
 * block while primitives rewrite other parts of the program copy-on-write
 * (path.c). A variable whose node was removed (a loop that was split) fails
 * cleanly when used.
 *
 * Errors come in two forms (schedule.h): FAST, one formatted line, which the
 * search raises by the thousand; RICH, the same line plus the offending
 * subtree printed as TVMScript, for people.
 */
#include "schedule/state.h"
#include "schedule/trace/trace_internal.h"

#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------------------------ */
/* Uids                                                                      */
/* ------------------------------------------------------------------------ */

/* Gives every loop and block of a private clone a fresh uid. */
static bool assign_uid_stmt(tir_visitor_t *v, tir_stmt_t *s) {
  sch_t *sch = v->payload;
  if (s->kind == TIR_FOR) s->u.loop.uid = sch->next_uid++;
  return true;
}

static bool assign_uid_block(tir_visitor_t *v, tir_block_t *b, tir_stmt_t *realize) {
  sch_t *sch = v->payload;
  b->uid = sch->next_uid++;
  return true;
}

static void assign_uids(sch_t *sch) {
  tir_visitor_t v = {0};
  v.stmt = assign_uid_stmt;
  v.block = assign_uid_block;
  v.payload = sch;
  tir_visit_stmt(&v, sch->func->body);
}

uint32_t sch_new_uid(sch_t *sch) { return sch->next_uid++; }

/* ------------------------------------------------------------------------ */
/* Lifetime                                                                  */
/* ------------------------------------------------------------------------ */

int sch_create(sch_t **out, const tir_func_t *func, uint64_t seed, sch_error_mode_t mode) {
  *out = NULL;
  sch_t *sch = mlc_calloc(1, sizeof(*sch));
  if (!sch) return mlc_error_set(MLC_ENOMEM, "sch_create: out of memory");
  sch->func = tir_func_clone(func);
  sch->trace = sch_trace_new();
  if (!sch->func || !sch->trace) {
    sch_free(sch);
    return mlc_error_set(MLC_ENOMEM, "sch_create: out of memory");
  }
  sch->next_uid = 1;
  assign_uids(sch);
  mlc_rng_seed(&sch->rng, seed);
  sch->mode = mode;
  *out = sch;
  return MLC_OK;
}

void sch_free(sch_t *sch) {
  if (!sch) return;
  tir_func_free(sch->func);
  mlc_free(sch->rvs);
  mlc_free(sch->affine);
  sch_trace_free(sch->trace);
  mlc_free(sch->error_detail);
  mlc_free(sch);
}

/* The clone keeps uids (tir_func_clone copies them), so the copied random
 * variables name the same loops and blocks in the copied program. The copy
 * starts with no remembered affine bindings (its nodes are new). */
int sch_copy(sch_t **out, const sch_t *src) {
  *out = NULL;
  sch_t *sch = mlc_calloc(1, sizeof(*sch));
  if (!sch) return mlc_error_set(MLC_ENOMEM, "sch_copy: out of memory");
  sch->func = tir_func_clone(src->func);
  sch->trace = sch_trace_copy(src->trace);
  if (src->nrvs > 0) {
    sch->rvs = mlc_malloc(sizeof(*sch->rvs) * (size_t)src->nrvs);
    if (sch->rvs) memcpy(sch->rvs, src->rvs, sizeof(*sch->rvs) * (size_t)src->nrvs);
  }
  if (!sch->func || !sch->trace || (src->nrvs > 0 && !sch->rvs)) {
    sch_free(sch);
    return mlc_error_set(MLC_ENOMEM, "sch_copy: out of memory");
  }
  sch->nrvs = sch->cap_rvs = src->nrvs;
  sch->next_uid = src->next_uid;
  sch->rng = src->rng;
  sch->mode = src->mode;
  *out = sch;
  return MLC_OK;
}

tir_func_t *sch_func(const sch_t *sch) { return sch->func; }
sch_error_mode_t sch_error_mode(const sch_t *sch) { return sch->mode; }
void sch_set_error_mode(sch_t *sch, sch_error_mode_t mode) { sch->mode = mode; }
void sch_seed(sch_t *sch, uint64_t seed) { mlc_rng_seed(&sch->rng, seed); }
mlc_rng_t *sch_rng(sch_t *sch) { return &sch->rng; }
const sch_trace_t *sch_get_trace(const sch_t *sch) { return sch->trace; }

const char *sch_error(const sch_t *sch) {
  return sch->error_detail ? sch->error_detail : sch->error;
}

/* ------------------------------------------------------------------------ */
/* Random variables                                                          */
/* ------------------------------------------------------------------------ */

sch_rv_t sch_new_rv(sch_t *sch, sch_rv_kind_t kind, uint32_t uid, int64_t value) {
  if (sch->nrvs == sch->cap_rvs) {
    int cap = sch->cap_rvs ? sch->cap_rvs * 2 : 16;
    sch_rv_entry_t *rvs = mlc_realloc(sch->rvs, sizeof(*rvs) * (size_t)cap);
    if (!rvs) MLC_PANIC("sch_new_rv: out of memory");
    sch->rvs = rvs;
    sch->cap_rvs = cap;
  }
  sch_rv_entry_t *e = &sch->rvs[sch->nrvs];
  e->kind = kind;
  e->uid = uid;
  e->value = value;
  sch->trace->nrvs = sch->nrvs + 1;
  return sch->nrvs++;
}

sch_rv_kind_t sch_rv_kind(const sch_t *sch, sch_rv_t rv) {
  MLC_ASSERT(sch_rv_valid(sch, rv));
  return sch->rvs[rv].kind;
}

int sch_rv_value(const sch_t *sch, sch_rv_t rv, int64_t *out) {
  if (!sch_rv_valid(sch, rv) || sch->rvs[rv].kind != SCH_RV_EXPR)
    return mlc_error_set(MLC_EINVAL, "random variable %d is not an expression variable", (int)rv);
  *out = sch->rvs[rv].value;
  return MLC_OK;
}

int sch_get_block_node(const sch_t *sch, sch_rv_t rv, tir_block_t **out) {
  sch_path_t path;
  *out = NULL;
  if (sch_find_block((sch_t *)sch, "get_block_node", rv, &path) != MLC_OK) return MLC_ESCHEDULE;
  *out = path.stmts[path.n - 1]->u.realize.block;
  return MLC_OK;
}

int sch_get_loop_node(const sch_t *sch, sch_rv_t rv, tir_stmt_t **out) {
  sch_path_t path;
  *out = NULL;
  if (sch_find_loop((sch_t *)sch, "get_loop_node", rv, &path) != MLC_OK) return MLC_ESCHEDULE;
  *out = path.stmts[path.n - 1];
  return MLC_OK;
}

sch_rv_t sch_rv_for_block(sch_t *sch, const tir_block_t *block) {
  return sch_new_rv(sch, SCH_RV_BLOCK, block->uid, 0);
}

sch_rv_t sch_rv_for_loop(sch_t *sch, const tir_stmt_t *loop) {
  return sch_new_rv(sch, SCH_RV_LOOP, loop->u.loop.uid, 0);
}

/* ------------------------------------------------------------------------ */
/* Errors                                                                    */
/* ------------------------------------------------------------------------ */

static int fail_v(sch_t *sch, const char *prim, tir_stmt_t *at, const char *fmt, va_list ap) {
  int len = snprintf(sch->error, sizeof sch->error, "%s: ", prim);
  if (len < 0 || (size_t)len >= sizeof sch->error) len = (int)strlen(sch->error);
  vsnprintf(sch->error + len, sizeof sch->error - (size_t)len, fmt, ap);
  mlc_free(sch->error_detail);
  sch->error_detail = NULL;
  if (at && sch->mode == SCH_ERRORS_RICH) {
    /* The rich form is unbounded, so it lives on the heap; sch->error keeps
     * the one line for the per-thread error. */
    mlc_strbuf_t sb;
    mlc_sb_init(&sb);
    mlc_sb_append(&sb, sch->error);
    mlc_sb_append(&sb, "\n");
    tir_print_stmt(&sb, at, 0);
    sch->error_detail = mlc_sb_take(&sb);
  }
  return mlc_error_set(MLC_ESCHEDULE, "%s", sch->error);
}

int sch_fail(sch_t *sch, const char *prim, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int rc = fail_v(sch, prim, NULL, fmt, ap);
  va_end(ap);
  return rc;
}

int sch_fail_at(sch_t *sch, const char *prim, tir_stmt_t *at, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int rc = fail_v(sch, prim, at, fmt, ap);
  va_end(ap);
  return rc;
}
