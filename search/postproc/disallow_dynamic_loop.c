/*
 * disallow_dynamic_loop.c - the DisallowDynamicLoop postprocessor
 * (MetaSchedule's disallow_dynamic_loop.cc): a candidate with a loop whose
 * extent is not a constant is rejected. Such loops come from symbolic
 * shapes; the search measures static kernels only, and the cost model's
 * features need constant trip counts.
 */
#include "search/postproc/postproc.h"

typedef struct {
  const tir_stmt_t *bad; /* the first dynamic loop met, or NULL */
} dyn_t;

static bool find_dynamic(tir_visitor_t *v, tir_stmt_t *s) {
  dyn_t *d = v->payload;
  if (d->bad) return false;
  if (s->kind == TIR_FOR && s->u.loop.extent->kind != TIR_INT_IMM) {
    d->bad = s;
    return false;
  }
  return true;
}

static int disallow_dynamic_loop(const ms_postproc_t *self, const ms_ctx_t *ctx, sch_t *sch) {
  dyn_t d = {NULL};
  tir_visitor_t v = {.stmt = find_dynamic, .payload = &d};
  tir_visit_stmt(&v, sch_func(sch)->body);
  if (!d.bad) return MLC_OK;
  mlc_strbuf_t sb;
  mlc_sb_init(&sb);
  tir_print_expr(&sb, d.bad->u.loop.extent);
  int rc = pp_fail(self->name, "loop %s has extent %s, not a constant", d.bad->u.loop.var->u.var.name,
                   mlc_sb_str(&sb));
  mlc_sb_free(&sb);
  return rc;
}

const ms_postproc_t ms_postproc_disallow_dynamic_loop = {"DisallowDynamicLoop", disallow_dynamic_loop};
