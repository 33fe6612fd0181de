/*
 * mutate_parallel.c - MutateParallel (MetaSchedule's mutate_parallel.cc):
 * ParallelizeVectorizeUnroll annotates a block (the root) with
 * `meta_schedule.parallel` = the largest parallel extent, and the
 * postprocessor fuses and parallelises as many outer loops of each block
 * below as fit under it. This mutator changes that value to one that gives
 * a different plan (a different number of fused loops for some block).
 *
 * The plans come from the program the design trace makes (replayed with its
 * decisions): for each block directly under the annotated one, the outer
 * run of constant-extent loops that no reduction (or other non-spatial)
 * binding uses, and the products of its extents from the outermost in,
 * stopping at the first that reaches the limit (16 x cores). Each product
 * is a candidate value; its plan is, per block, how many loops
 * RewriteParallelVectorizeUnroll would fuse for it (TVM's
 * GetNumFusedLoops). Values with the current plan are left out; one of the
 * other plans is picked uniformly, plans ordered as vectors (as TVM's
 * std::map), each with the last value that gave it.
 */
#include "search/evolve/evolve.h"


/* Loop depth and blocks one scope may have here. */
#define MAX_DEPTH 64
#define MAX_REALIZES 64
#define MAX_PLANS 256

/* Blocks directly under the scope, with the loops above each. */
typedef struct {
  int n;
  tir_stmt_t *realize[MAX_REALIZES];
  int nloops[MAX_REALIZES];
  tir_stmt_t *loops[MAX_REALIZES][MAX_DEPTH]; /* outermost first */
} scope_t;

static void collect(scope_t *sc, tir_stmt_t *s, tir_stmt_t **stack, int depth) {
  if (!s) return;
  switch (s->kind) {
  case TIR_FOR:
    if (depth < MAX_DEPTH) stack[depth] = s;
    collect(sc, s->u.loop.body, stack, depth + 1);
    break;
  case TIR_SEQ:
    for (int i = 0; i < s->u.seq.n; i++) collect(sc, s->u.seq.stmts[i], stack, depth);
    break;
  case TIR_IF:
    collect(sc, s->u.if_.then_case, stack, depth);
    collect(sc, s->u.if_.else_case, stack, depth);
    break;
  case TIR_LET: collect(sc, s->u.let.body, stack, depth); break;
  case TIR_ATTR: collect(sc, s->u.attr.body, stack, depth); break;
  case TIR_ASSERT: collect(sc, s->u.assert_.body, stack, depth); break;
  case TIR_ALLOCATE: collect(sc, s->u.allocate.body, stack, depth); break;
  case TIR_BLOCK_REALIZE:
    if (sc->n < MAX_REALIZES && depth <= MAX_DEPTH) {
      sc->realize[sc->n] = s;
      sc->nloops[sc->n] = depth;
      memcpy(sc->loops[sc->n], stack, sizeof(tir_stmt_t *) * (size_t)depth);
      sc->n++;
    }
    break; /* not into the block: its loops belong to its own scope */
  default: break;
  }
}

/* Whether a binding of a non-spatial block variable anywhere in the scope
 * uses the loop's variable (TVM's non_spatial_vars). */
static bool non_spatial(const scope_t *sc, const tir_stmt_t *loop) {
  for (int r = 0; r < sc->n; r++) {
    const tir_stmt_t *rz = sc->realize[r];
    const tir_block_t *b = rz->u.realize.block;
    for (int k = 0; k < b->niter_vars && k < rz->u.realize.n; k++)
      if (b->iter_vars[k].type != TIR_ITER_SPATIAL &&
          tir_expr_uses_var(rz->u.realize.iter_values[k], loop->u.loop.var))
        return true;
  }
  return false;
}

/* Per block: prefix products of the outer spatial run, up to the limit. */
typedef struct {
  int n;
  int nprods[MAX_REALIZES];
  int64_t prods[MAX_REALIZES][MAX_DEPTH];
} analysis_t;

static void analyze(const scope_t *sc, int64_t limit, analysis_t *an) {
  an->n = 0;
  for (int r = 0; r < sc->n; r++) {
    int run = 0;
    int64_t ext;
    while (run < sc->nloops[r] && tir_as_int(sc->loops[r][run]->u.loop.extent, &ext) &&
           !non_spatial(sc, sc->loops[r][run]))
      run++;
    if (run == 0) continue;
    int k = 0;
    int64_t prod = 1;
    for (int i = 0; i < run; i++) {
      tir_as_int(sc->loops[r][i]->u.loop.extent, &ext);
      prod *= ext;
      an->prods[an->n][k++] = prod;
      if (prod >= limit) break;
    }
    an->nprods[an->n++] = k;
  }
}

/* TVM's GetNumFusedLoops for one limit: per block, how many loops fuse. */
static void plan_of(const analysis_t *an, int64_t limit, int *plan) {
  for (int r = 0; r < an->n; r++) {
    int n = an->nprods[r], i = 0;
    while (i < n && an->prods[r][i] <= limit) i++; /* upper_bound */
    if (i > 0 && an->prods[r][i - 1] == limit) i--;
    if (i != n) i++;
    plan[r] = i;
  }
}

typedef struct {
  int plan[MAX_REALIZES];
  int64_t value;
} plan_t;

static int cmp_plan(const plan_t *x, const plan_t *y, int n) {
  for (int i = 0; i < n; i++)
    if (x->plan[i] != y->plan[i]) return x->plan[i] < y->plan[i] ? -1 : 1;
  return 0;
}

/* Insertion sort by plan (n is small; qsort would need the width global). */
static void sort_plans(plan_t *p, int n, int width) {
  for (int i = 1; i < n; i++) {
    plan_t key = p[i];
    int j = i - 1;
    while (j >= 0 && cmp_plan(&p[j], &key, width) > 0) {
      p[j + 1] = p[j];
      j--;
    }
    p[j + 1] = key;
  }
}

/* Distinct plans of the candidate values, ordered, without the plan of
 * `current`. As TVM: each value is looked at once, in order, and a plan
 * keeps the last value that gave it. */
static int plans(const analysis_t *an, int64_t limit, int64_t current, plan_t *out) {
  int n = 0, nseen = 0;
  int64_t seen[MAX_PLANS];
  for (int r = 0; r < an->n; r++)
    for (int k = 0; k < an->nprods[r]; k++) {
      int64_t v = an->prods[r][k];
      bool was = false;
      for (int i = 0; i < nseen && !was; i++) was = seen[i] == v;
      if (v > limit || was || nseen == MAX_PLANS) continue;
      seen[nseen++] = v;
      plan_t p = {{0}, v};
      plan_of(an, v, p.plan);
      int same = -1;
      for (int i = 0; i < n && same < 0; i++)
        if (cmp_plan(&out[i], &p, an->n) == 0) same = i;
      if (same >= 0) out[same].value = v;
      else out[n++] = p;
    }
  plan_t cur = {{0}, current};
  plan_of(an, current, cur.plan);
  int kept = 0;
  for (int i = 0; i < n; i++)
    if (cmp_plan(&out[i], &cur, an->n) != 0) out[kept++] = out[i];
  sort_plans(out, kept, an->n);
  return kept;
}

/* The Annotate instructions setting the parallel extent to an integer, on a
 * block a GetBlock named. */
static bool is_parallel_ann(const sch_trace_t *t, int i) {
  const char *key = ms_annotate_key(&t->insts[i]);
  if (!key || strcmp(key, MS_ANN_PARALLEL) != 0) return false;
  const sch_inst_t *inst = &t->insts[i];
  if (inst->ninputs < 2 || inst->inputs[0].kind != SCH_ARG_RV || inst->inputs[1].kind != SCH_ARG_INT) return false;
  int g = ms_trace_def_inst(t, i, inst->inputs[0].u.rv);
  return g >= 0 && ms_inst_is(&t->insts[g], "GetBlock") && t->insts[g].nattrs >= 1 &&
         t->insts[g].attrs[0].kind == SCH_ARG_STR;
}

/* Scratch too large for the stack. */
typedef struct {
  scope_t scope;
  analysis_t an;
  plan_t plans[MAX_PLANS];
  tir_stmt_t *stack[MAX_DEPTH];
} work_t;

/* The plans other than the current one for annotation i of design. */
static int other_plans(const ms_ctx_t *ctx, const sch_trace_t *design, int i, work_t *w, int *nplans) {
  const sch_inst_t *ann = &design->insts[i];
  const char *block_name = design->insts[ms_trace_def_inst(design, i, ann->inputs[0].u.rv)].attrs[0].u.s;
  int64_t limit = (int64_t)(ctx->num_cores > 0 ? ctx->num_cores : 1) * MS_MAX_JOBS_PER_CORE;
  sch_t *sch = NULL;
  *nplans = 0;
  int rc = ms_replay_prefix(&sch, ctx, design, design->n);
  if (rc != MLC_OK) return rc == MLC_ESCHEDULE ? MLC_OK : rc; /* an invalid trace offers nothing */
  sch_rv_t rv;
  tir_block_t *block;
  if (sch_get_block(sch, &rv, block_name) == MLC_OK && sch_get_block_node(sch, rv, &block) == MLC_OK) {
    w->scope.n = 0;
    collect(&w->scope, block->body, w->stack, 0);
    analyze(&w->scope, limit, &w->an);
    *nplans = plans(&w->an, limit, ann->inputs[1].u.i, w->plans);
  }
  sch_free(sch);
  return MLC_OK;
}

/* A copy of the design part with annotation i's value replaced. */
static int with_value(sch_trace_t **out, const sch_trace_t *design, int i, int64_t value) {
  int rc = ms_trace_copy_prefix(out, design, design->n);
  if (rc != MLC_OK) return rc;
  sch_inst_t *inst = &(*out)->insts[i];
  sch_arg_t *inputs = mlc_arena_memdup((*out)->arena, inst->inputs, sizeof(sch_arg_t) * (size_t)inst->ninputs);
  if (!inputs) {
    sch_trace_free(*out);
    *out = NULL;
    return mlc_error_set(MLC_ENOMEM, "MutateParallel: out of memory");
  }
  inputs[1] = sch_arg_int(value);
  inst->inputs = inputs;
  return MLC_OK;
}

static int apply(const ms_mutator_t *self, const ms_ctx_t *ctx, const sch_trace_t *t, mlc_rng_t *rng,
                 sch_trace_t **out) {
  *out = NULL;
  if (!ctx || !ctx->workload) return mlc_error_set(MLC_EINVAL, "MutateParallel: no workload");
  sch_trace_t design = ms_trace_prefix_view(t, ms_trace_design_len(t));
  int *anns = mlc_malloc(sizeof(int) * (size_t)(design.n > 0 ? design.n : 1));
  work_t *w = mlc_malloc(sizeof(*w));
  int rc = MLC_OK, nanns = 0, nplans = 0;
  if (!anns || !w) {
    rc = mlc_error_set(MLC_ENOMEM, "MutateParallel: out of memory");
    goto done;
  }
  for (int i = 0; i < design.n; i++)
    if (is_parallel_ann(&design, i)) anns[nanns++] = i;
  if (nanns == 0) {
    rc = mlc_error_set(MLC_ENOTFOUND, "MutateParallel: no parallel extent annotation");
    goto done;
  }
  int i = anns[mlc_rng_below(rng, (uint64_t)nanns)];
  if ((rc = other_plans(ctx, &design, i, w, &nplans)) != MLC_OK) goto done;
  if (nplans == 0) {
    rc = mlc_error_set(MLC_ENOTFOUND, "MutateParallel: no other parallel plan");
    goto done;
  }
  rc = with_value(out, &design, i, w->plans[mlc_rng_below(rng, (uint64_t)nplans)].value);
done:
  mlc_free(anns);
  mlc_free(w);
  return rc;
}

const ms_mutator_t ms_mutate_parallel = {"MutateParallel", apply};
