/*
 * post_order_apply.c - design-space generation (search.h: ms_space_generate),
 * MetaSchedule's PostOrderApply.
 *
 * The workload's blocks are collected once, in post-order of the block tree
 * (children before their parent, so the root block comes last), and a
 * get_block is recorded for each, as TVM's BlockCollector does. Then, rule
 * by rule, every schedule of the space so far is run through the blocks
 * with a stack: the top schedule takes its next unvisited block (from the
 * end of the list: the root first, then outputs before their producers),
 * the rule turns it into one or more schedules, and those go back on the
 * stack with the rest of the blocks to visit. A schedule that has visited
 * every block joins the next generation. Blocks are named, not held, since
 * every fork is its own program: a block a rule removed (inlined) is
 * skipped in that fork, and blocks a rule created (caches, rfactor blocks)
 * are never visited because they were not collected.
 *
 * The order in which schedules leave the stack is TVM's, so the space comes
 * out in the same order as MetaSchedule's (for a matmul on CPU: write cache
 * at level 2, at level 1, none). Sampling draws from each schedule's RNG,
 * seeded from ctx->seed and forked at every fork: the same seed gives the
 * same space.
 */
#include "search/space/rules.h"

#include <string.h>

/* ------------------------------------------------------------------------ */
/* Collecting blocks                                                         */
/* ------------------------------------------------------------------------ */

typedef struct {
  MLC_VEC(const char *) names;
  bool failed, duplicate;
  const char *dup_name;
} block_names_t;

static void collect_post(tir_visitor_t *v, tir_stmt_t *s) {
  block_names_t *c = v->payload;
  if (s->kind != TIR_BLOCK_REALIZE || c->failed) return;
  const char *name = s->u.realize.block->name;
  for (size_t i = 0; i < c->names.len; i++)
    if (strcmp(c->names.data[i], name) == 0) {
      c->duplicate = true;
      c->dup_name = name;
    }
  if (mlc_vec_push(&c->names, name) != MLC_OK) c->failed = true;
}

/* Block names of f in post-order (borrowed from f). */
static int collect_blocks(block_names_t *c, const tir_func_t *f) {
  memset(c, 0, sizeof *c);
  tir_visitor_t v = {0};
  v.stmt_post = collect_post;
  v.payload = c;
  tir_visit_stmt(&v, f->body);
  if (c->failed) return mlc_error_set(MLC_ENOMEM, "design space: out of memory");
  if (c->duplicate)
    return mlc_error_set(MLC_EINVAL, "design space: function %s has two blocks named \"%s\"",
                         f->name ? f->name : "main", c->dup_name);
  if (c->names.len == 0)
    return mlc_error_set(MLC_EINVAL, "design space: function %s has no blocks", f->name ? f->name : "main");
  return MLC_OK;
}

/* ------------------------------------------------------------------------ */
/* The stack of schedules and blocks left to visit                           */
/* ------------------------------------------------------------------------ */

typedef struct {
  sch_t *sch;
  int left; /* blocks[0 .. left) are still to visit */
} entry_t;

typedef MLC_VEC(entry_t) entry_vec_t;
typedef MLC_VEC(sch_t *) sch_vec_t;

static void free_entries(entry_vec_t *v) {
  for (size_t i = 0; i < v->len; i++) sch_free(v->data[i].sch);
  mlc_vec_free(v);
}

static void free_schs(sch_vec_t *v) {
  for (size_t i = 0; i < v->len; i++) sch_free(v->data[i]);
  mlc_vec_free(v);
}

static int push_entry(entry_vec_t *stack, sch_t *sch, int left) {
  entry_t e = {sch, left};
  if (mlc_vec_push(stack, e) == MLC_OK) return MLC_OK;
  sch_free(sch);
  return mlc_error_set(MLC_ENOMEM, "design space: out of memory");
}

/* One visit: rule on the top schedule's next block; results go back on the
 * stack. Takes e.sch. */
static int visit(const ms_rule_t *rule, const ms_ctx_t *ctx, const block_names_t *blocks, entry_t e,
                 entry_vec_t *stack) {
  const char *name = blocks->names.data[--e.left];
  sch_path_t path;
  if (!ms_find_block(e.sch, name, &path)) return push_entry(stack, e.sch, e.left);
  sch_t **applied = NULL;
  int napplied = 0, cap = 0;
  int rc = rule->apply(rule, ctx, e.sch, name, &applied, &napplied, &cap);
  for (int i = 0; i < napplied; i++) {
    if (rc == MLC_OK) rc = push_entry(stack, applied[i], e.left);
    else sch_free(applied[i]);
  }
  mlc_free(applied);
  if (rc != MLC_OK) mlc_error_prefix("%s on block %s", rule->name, name);
  return rc;
}

/* Runs one rule over every block of every schedule in *gen (replaced by
 * the next generation). */
static int apply_rule(const ms_rule_t *rule, const ms_ctx_t *ctx, const block_names_t *blocks, sch_vec_t *gen) {
  entry_vec_t stack = {0};
  sch_vec_t next = {0};
  int rc = MLC_OK;
  for (size_t i = 0; i < gen->len; i++) {
    sch_t *s = gen->data[i];
    gen->data[i] = NULL;
    if (rc == MLC_OK) rc = push_entry(&stack, s, (int)blocks->names.len);
    else sch_free(s);
  }
  gen->len = 0;
  while (rc == MLC_OK && stack.len > 0) {
    entry_t e = stack.data[--stack.len];
    if (e.left > 0) {
      rc = visit(rule, ctx, blocks, e, &stack);
    } else if (mlc_vec_push(&next, e.sch) != MLC_OK) {
      sch_free(e.sch);
      rc = mlc_error_set(MLC_ENOMEM, "design space: out of memory");
    }
  }
  free_entries(&stack);
  mlc_vec_free(gen);
  *gen = next;
  return rc;
}

/* ------------------------------------------------------------------------ */
/* Entry points                                                              */
/* ------------------------------------------------------------------------ */

/* The first schedule: the workload with every block looked up. */
static int first_schedule(sch_t **out, const ms_ctx_t *ctx, const block_names_t *blocks) {
  int rc = sch_create(out, ctx->workload, ctx->seed, SCH_ERRORS_FAST);
  for (size_t i = 0; rc == MLC_OK && i < blocks->names.len; i++) {
    sch_rv_t rv;
    rc = sch_get_block(*out, &rv, blocks->names.data[i]);
  }
  if (rc != MLC_OK) {
    sch_free(*out);
    *out = NULL;
  }
  return rc;
}

static int take_traces(ms_space_t *out, sch_vec_t *gen) {
  out->traces = mlc_calloc(gen->len ? gen->len : 1, sizeof(*out->traces));
  if (!out->traces) return mlc_error_set(MLC_ENOMEM, "design space: out of memory");
  for (size_t i = 0; i < gen->len; i++) {
    out->traces[i] = sch_trace_copy(sch_get_trace(gen->data[i]));
    if (!out->traces[i]) return mlc_error_set(MLC_ENOMEM, "design space: out of memory");
    out->n++;
  }
  return MLC_OK;
}

static int check_args(const ms_space_t *out, const ms_ctx_t *ctx, const ms_rule_t *const *rules, int nrules) {
  if (!out || !ctx || !ctx->workload) return mlc_error_set(MLC_EINVAL, "ms_space_generate: no context or workload");
  if (nrules < 0 || (nrules > 0 && !rules))
    return mlc_error_set(MLC_EINVAL, "ms_space_generate: bad rule list (%d rules)", nrules);
  for (int i = 0; i < nrules; i++)
    if (!rules[i] || !rules[i]->apply) return mlc_error_set(MLC_EINVAL, "ms_space_generate: rule %d is not a rule", i);
  return MLC_OK;
}

int ms_space_generate(ms_space_t *out, const ms_ctx_t *ctx, const ms_rule_t *const *rules, int nrules) {
  if (out) memset(out, 0, sizeof *out);
  int rc = check_args(out, ctx, rules, nrules);
  if (rc != MLC_OK) return rc;
  block_names_t blocks;
  sch_vec_t gen = {0};
  sch_t *sch = NULL;
  rc = collect_blocks(&blocks, ctx->workload);
  if (rc == MLC_OK) rc = first_schedule(&sch, ctx, &blocks);
  if (rc == MLC_OK && mlc_vec_push(&gen, sch) != MLC_OK) {
    sch_free(sch);
    rc = mlc_error_set(MLC_ENOMEM, "design space: out of memory");
  }
  for (int i = 0; rc == MLC_OK && i < nrules; i++) rc = apply_rule(rules[i], ctx, &blocks, &gen);
  if (rc == MLC_OK && gen.len == 0)
    rc = mlc_error_set(MLC_ESCHEDULE, "design space of %s is empty: every schedule failed in a rule",
                       ctx->task_name ? ctx->task_name : "the workload");
  if (rc == MLC_OK) rc = take_traces(out, &gen);
  free_schs(&gen);
  mlc_vec_free(&blocks.names);
  if (rc != MLC_OK) ms_space_free(out);
  return rc;
}

void ms_space_free(ms_space_t *s) {
  if (!s) return;
  for (int i = 0; i < s->n; i++) sch_trace_free(s->traces[i]);
  mlc_free(s->traces);
  s->traces = NULL;
  s->n = 0;
}
