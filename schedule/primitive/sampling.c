/*
 * sampling.c - the sampling primitives (TVM's src/tir/schedule/primitive/
 * sampling.cc): sample_perfect_tile, sample_categorical and
 * sample_compute_location. They do not change the program; they create
 * expression (or location) random variables and record the decision taken,
 * so a trace replayed with its decisions gives the same program on any
 * machine, and replayed without them samples afresh.
 *
 * Randomness comes only from the schedule's mlc_rng_t (portable: same seed,
 * same decisions everywhere). The distributions follow TVM's procedures:
 * - perfect tiles: the extent is factorised and each prime power p^e is
 *   shared among the n factors by a uniform composition of e (so every
 *   ordered factorisation is equally likely), redrawing while the innermost
 *   factor exceeds max_innermost_factor;
 * - categorical: index i with probability probs[i] / sum(probs);
 * - compute location: uniform among the valid locations (TVM's
 *   CollectComputeLocation: inline when compute_inline would succeed, root,
 *   then the loops of the first consumer down to the consumers' lowest
 *   common ancestor where compute_at would succeed).
 */
#include "schedule/analysis/analysis.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Most factors a perfect tile may have (TVM's tilings use at most 8). */
#define MAX_TILE_SPLITS 32
/* Redraws before the rejection loop settles for innermost 1 (never needed in
 * practice: innermost 1 has probability >= 1/(e+1) per prime power). */
#define MAX_TILE_REDRAWS 100000

/* ------------------------------------------------------------------------ */
/* Integer sampling helpers (TVM's SampleInt, SampleWithoutReplacement)     */
/* ------------------------------------------------------------------------ */

/* Uniform in [lo, hi_excl); no draw when there is one choice. */
static int64_t sample_int(mlc_rng_t *rng, int64_t lo, int64_t hi_excl) {
  if (lo + 1 == hi_excl) return lo;
  return mlc_rng_range(rng, lo, hi_excl - 1);
}

/* k distinct values of [0, n), in draw order. */
static void sample_without_replacement(mlc_rng_t *rng, int n, int k, int *out) {
  if (k == 1) {
    out[0] = (int)sample_int(rng, 0, n);
    return;
  }
  if (k == 2) {
    out[0] = (int)sample_int(rng, 0, n);
    out[1] = (int)sample_int(rng, 0, n - 1);
    if (out[1] >= out[0]) out[1]++;
    return;
  }
  int order[MAX_TILE_SPLITS + 64];
  for (int i = 0; i < n; i++) order[i] = i;
  for (int i = 0; i < k; i++) {
    int j = (int)sample_int(rng, i, n);
    int t = order[i];
    order[i] = order[j];
    order[j] = t;
  }
  memcpy(out, order, sizeof(int) * (size_t)k);
}

static int cmp_int(const void *a, const void *b) {
  int x = *(const int *)a, y = *(const int *)b;
  return (x > y) - (x < y);
}

static int64_t ipow(int64_t p, int e) {
  int64_t r = 1;
  while (e-- > 0) r *= p;
  return r;
}

/* ------------------------------------------------------------------------ */
/* sample_perfect_tile                                                       */
/* ------------------------------------------------------------------------ */

/* Prime factorisation by trial division (extents are loop extents, small
 * enough): primes[i]^exps[i]. Returns the number of distinct primes. */
static int factorize(int64_t x, int64_t *primes, int *exps) {
  int n = 0;
  for (int64_t p = 2; p * p <= x; p += (p == 2 ? 1 : 2)) {
    if (x % p) continue;
    int e = 0;
    while (x % p == 0) x /= p, e++;
    primes[n] = p;
    exps[n++] = e;
  }
  if (x > 1) primes[n] = x, exps[n++] = 1;
  return n;
}

/* One draw: shares every prime power among the n factors uniformly. */
static void draw_tile(mlc_rng_t *rng, const int64_t *primes, const int *exps, int nprimes, int n,
                      int64_t *out) {
  for (int i = 0; i < n; i++) out[i] = 1;
  for (int k = 0; k < nprimes; k++) {
    int64_t p = primes[k];
    int e = exps[k];
    if (n == 2) {
      int x1 = (int)sample_int(rng, 0, e + 1);
      out[0] *= ipow(p, x1);
      out[1] *= ipow(p, e - x1);
    } else if (e == 1) {
      out[sample_int(rng, 0, n)] *= p;
    } else {
      /* Stars and bars: n - 1 bars among e + n - 1 slots, uniformly. */
      int bars[MAX_TILE_SPLITS + 64];
      sample_without_replacement(rng, e + n - 1, n - 1, bars);
      qsort(bars, (size_t)(n - 1), sizeof(int), cmp_int);
      bars[n - 1] = e + n - 1;
      for (int i = 0, last = -1; i < n; i++) {
        out[i] *= ipow(p, bars[i] - last - 1);
        last = bars[i];
      }
    }
  }
}

static void sample_tile(mlc_rng_t *rng, int64_t extent, int n, int max_innermost, int64_t *out) {
  if (n == 1) {
    out[0] = extent;
    return;
  }
  int64_t primes[64];
  int exps[64];
  int nprimes = factorize(extent, primes, exps);
  for (int tries = 0; tries < MAX_TILE_REDRAWS; tries++) {
    draw_tile(rng, primes, exps, nprimes, n, out);
    if (max_innermost < 0 || out[n - 1] <= max_innermost) return;
  }
  for (int i = 0; i < n; i++) out[i] = 1;
  out[0] = extent;
}

/* A given decision must be n positive factors whose product is the extent. */
static int check_tile_decision(sch_t *sch, const tir_stmt_t *loop, int64_t extent, int n,
                               const int64_t *decision) {
  int64_t prod = 1;
  for (int i = 0; i < n; i++) {
    if (decision[i] < 1 || decision[i] > extent)
      return sch_fail(sch, "sample_perfect_tile", "decision factor %lld for loop %s is not in [1, %lld]",
                      (long long)decision[i], sch_loop_name(loop), (long long)extent);
    prod *= decision[i];
    if (prod > extent) break;
  }
  if (prod != extent)
    return sch_fail(sch, "sample_perfect_tile",
                    "decision factors of loop %s multiply to %lld%s, not its extent %lld", sch_loop_name(loop),
                    (long long)prod, prod > extent ? " or more" : "", (long long)extent);
  return MLC_OK;
}

int sch_sample_perfect_tile(sch_t *sch, const sch_rv_t **out, sch_rv_t loop, int n, int max_innermost_factor,
                            const int64_t *decision) {
  static const char *prim = "sample_perfect_tile";
  sch_path_t path;
  *out = NULL;
  int rc = sch_find_loop(sch, prim, loop, &path);
  if (rc != MLC_OK) return rc;
  tir_stmt_t *node = path.stmts[path.n - 1];
  int64_t extent;
  if (!tir_as_int(node->u.loop.extent, &extent))
    return sch_fail_at(sch, prim, node, "loop %s has a non-constant extent", sch_loop_name(node));
  if (n < 1 || n > MAX_TILE_SPLITS)
    return sch_fail(sch, prim, "n = %d is not in [1, %d]", n, MAX_TILE_SPLITS);
  if (max_innermost_factor == 0 || max_innermost_factor < -1)
    return sch_fail(sch, prim, "max_innermost_factor = %d must be -1 (no limit) or positive", max_innermost_factor);
  if (extent < 1) return sch_fail_at(sch, prim, node, "loop %s has extent %lld", sch_loop_name(node), (long long)extent);
  int64_t factors[MAX_TILE_SPLITS];
  if (decision) {
    if ((rc = check_tile_decision(sch, node, extent, n, decision)) != MLC_OK) return rc;
    memcpy(factors, decision, sizeof(int64_t) * (size_t)n);
  } else {
    sample_tile(&sch->rng, extent, n, max_innermost_factor, factors);
  }
  sch_rv_t *rvs = mlc_arena_alloc(sch_arena(sch), sizeof(sch_rv_t) * (size_t)n);
  if (!rvs) return mlc_error_set(MLC_ENOMEM, "%s: out of memory", prim);
  sch_arg_t items[MAX_TILE_SPLITS];
  for (int i = 0; i < n; i++) {
    rvs[i] = sch_new_rv(sch, SCH_RV_EXPR, 0, factors[i]);
    items[i] = sch_arg_int(factors[i]);
  }
  sch_arg_t input = sch_arg_rv(loop);
  sch_arg_t attrs[2] = {sch_arg_int(n), sch_arg_int(max_innermost_factor)};
  sch_arg_t dec = {SCH_ARG_LIST, {0}};
  dec.u.list.n = n;
  dec.u.list.items = items;
  sch_record(sch, SCH_INST_SAMPLE_PERFECT_TILE, &input, 1, attrs, 2, rvs, n, &dec);
  *out = rvs;
  return MLC_OK;
}

/* ------------------------------------------------------------------------ */
/* sample_categorical                                                        */
/* ------------------------------------------------------------------------ */

/* The first index whose cumulative weight exceeds u * total; zero weights
 * are never chosen. */
static int draw_categorical(mlc_rng_t *rng, const double *probs, int n, double total) {
  double u = mlc_rng_uniform(rng) * total, cum = 0;
  int last = 0;
  for (int i = 0; i < n; i++) {
    if (probs[i] <= 0) continue;
    cum += probs[i];
    last = i;
    if (u < cum) return i;
  }
  return last; /* rounding at the very top */
}

int sch_sample_categorical(sch_t *sch, sch_rv_t *out, const int64_t *candidates, const double *probs, int n,
                           const int64_t *decision) {
  static const char *prim = "sample_categorical";
  *out = SCH_RV_NONE;
  if (n < 1) return sch_fail(sch, prim, "no candidates");
  double total = 0;
  for (int i = 0; i < n; i++) {
    if (!isfinite(probs[i]) || probs[i] < 0)
      return sch_fail(sch, prim, "probability %d (%g) is not a finite non-negative number", i, probs[i]);
    total += probs[i];
  }
  if (!(total > 0)) return sch_fail(sch, prim, "the probabilities sum to 0");
  int64_t index;
  if (decision) {
    index = *decision;
    if (index < 0 || index >= n)
      return sch_fail(sch, prim, "decision %lld is not an index of the %d candidates", (long long)index, n);
  } else {
    index = draw_categorical(&sch->rng, probs, n, total);
  }
  sch_arg_t cand_items[64], prob_items[64];
  sch_arg_t *ci = n <= 64 ? cand_items : mlc_arena_alloc(sch_arena(sch), sizeof(sch_arg_t) * (size_t)n);
  sch_arg_t *pi = n <= 64 ? prob_items : mlc_arena_alloc(sch_arena(sch), sizeof(sch_arg_t) * (size_t)n);
  if (!ci || !pi) return mlc_error_set(MLC_ENOMEM, "%s: out of memory", prim);
  for (int i = 0; i < n; i++) {
    ci[i] = sch_arg_int(candidates[i]);
    pi[i] = sch_arg_float(probs[i]);
  }
  sch_arg_t attrs[2] = {{SCH_ARG_LIST, {0}}, {SCH_ARG_LIST, {0}}};
  attrs[0].u.list.n = attrs[1].u.list.n = n;
  attrs[0].u.list.items = ci;
  attrs[1].u.list.items = pi;
  sch_arg_t dec = sch_arg_int(index);
  sch_rv_t rv = sch_new_rv(sch, SCH_RV_EXPR, 0, candidates[index]);
  sch_record(sch, SCH_INST_SAMPLE_CATEGORICAL, NULL, 0, attrs, 2, &rv, 1, &dec);
  *out = rv;
  return MLC_OK;
}

/* ------------------------------------------------------------------------ */
/* sample_compute_location                                                   */
/* ------------------------------------------------------------------------ */

/* Trying a primitive without keeping its effect. The program is immutable by
 * convention (primitives rewrite copy-on-write and only swap the function's
 * fields), so restoring the function struct, the random-variable count and
 * the trace length undoes a successful probe completely. Probes run with
 * FAST errors: a failure is an answer here, not something to show. */
typedef struct {
  tir_func_t func;
  int nrvs, trace_n, trace_nrvs;
  sch_error_mode_t mode;
} probe_t;

static void probe_begin(sch_t *sch, probe_t *p) {
  p->func = *sch->func;
  p->nrvs = sch->nrvs;
  p->trace_n = sch->trace->n;
  p->trace_nrvs = sch->trace->nrvs;
  p->mode = sch->mode;
  sch->mode = SCH_ERRORS_FAST;
}

static void probe_end(sch_t *sch, const probe_t *p) {
  *sch->func = p->func;
  sch->nrvs = p->nrvs;
  sch->trace->n = p->trace_n;
  sch->trace->nrvs = p->trace_nrvs;
  sch->mode = p->mode;
}

static bool can_compute_inline(sch_t *sch, sch_rv_t block) {
  probe_t p;
  probe_begin(sch, &p);
  bool ok = sch_compute_inline(sch, block) == MLC_OK;
  probe_end(sch, &p);
  return ok;
}

static bool can_compute_at(sch_t *sch, sch_rv_t block, const tir_stmt_t *loop) {
  probe_t p;
  probe_begin(sch, &p);
  sch_rv_t lrv = sch_rv_for_loop(sch, loop);
  bool ok = sch_compute_at(sch, block, lrv, true, -1) == MLC_OK;
  probe_end(sch, &p);
  return ok;
}

/* TVM's GetLoopIterType: how the blocks directly under the loop bind its
 * variable, and the loop's kind. */
typedef enum { ITER_DATA_PAR, ITER_REDUCE, ITER_OTHER } loop_iter_type_t;

static loop_iter_type_t loop_iter_type(tir_stmt_t *loop) {
  sch_loop_type_t t = sch_loop_binding_type(loop);
  if (t == SCH_LOOP_OTHER) return ITER_OTHER;
  if (t == SCH_LOOP_REDUCE) return ITER_REDUCE;
  /* Parallel, vectorized and unrolled loops are not plain data-parallel
   * ones for TVM (kParallelized, ...), so nothing is placed under them. */
  if (loop->u.loop.kind != TIR_FOR_SERIAL && loop->u.loop.kind != TIR_FOR_THREAD_BINDING) return ITER_OTHER;
  return ITER_DATA_PAR;
}

/* The deepest loop or block enclosing every consumer (TVM's lowest common
 * ancestor in the sref tree); NULL when the consumers are not found. */
static tir_stmt_t *consumers_boundary(sch_t *sch, tir_stmt_t **consumers, int n, sch_path_t *first) {
  sch_path_t other;
  int common = first->n - 1; /* exclude the consumer itself */
  for (int k = 1; k < n; k++) {
    if (!sch_find_uid(sch, consumers[k]->u.realize.block->uid, &other)) return NULL;
    int d = 0;
    while (d < common && d < other.n && other.stmts[d] == first->stmts[d]) d++;
    common = d;
  }
  for (int d = common - 1; d >= 0; d--) {
    tir_stmt_kind_t kind = first->stmts[d]->kind;
    if (kind == TIR_FOR || kind == TIR_BLOCK_REALIZE) return first->stmts[d];
  }
  return NULL;
}

typedef struct {
  int n;
  int64_t index[SCH_MAX_DEPTH + 2];
  const tir_stmt_t *loop[SCH_MAX_DEPTH + 2]; /* NULL for root and inline */
} locations_t;

static void add_location(locations_t *locs, int64_t index, const tir_stmt_t *loop) {
  locs->index[locs->n] = index;
  locs->loop[locs->n++] = loop;
}

/* Candidate loops of the first consumer (steps 4-6 of TVM's
 * CollectComputeLocation). */
static void collect_loop_locations(sch_t *sch, sch_rv_t block, tir_stmt_t *boundary, const sch_path_t *cpath,
                                   locations_t *locs) {
  tir_stmt_t *loops[SCH_MAX_DEPTH];
  int scope = sch_path_scope_depth(cpath, cpath->n - 1);
  int nloops = sch_path_loops(cpath, scope, cpath->n - 1, loops, SCH_MAX_DEPTH);
  int lca_pos = -1;
  for (int i = 0; i < nloops; i++)
    if (loops[i] == boundary) lca_pos = i;
  if (lca_pos < 0) return;
  loop_iter_type_t types[SCH_MAX_DEPTH];
  int last_datapar = -1;
  for (int i = 0; i <= lca_pos; i++) {
    types[i] = loop_iter_type(loops[i]);
    if (types[i] == ITER_DATA_PAR) last_datapar = i;
  }
  bool visited_reduce = false;
  for (int i = 0; i <= lca_pos; i++) {
    if (tir_is_const_int(loops[i]->u.loop.extent, 1)) continue; /* unit loops */
    if (types[i] == ITER_DATA_PAR) {
      if (visited_reduce) break;
    } else {
      visited_reduce = true;
      if (i > last_datapar) break;
    }
    if (can_compute_at(sch, block, loops[i])) add_location(locs, i, loops[i]);
  }
}

/* Every valid location of the block, ordered by index (-2 inline, -1 root,
 * then loop positions among the first consumer's loops). */
static int collect_locations(sch_t *sch, sch_rv_t block, const sch_path_t *bpath, locations_t *locs) {
  locs->n = 0;
  if (can_compute_inline(sch, block)) add_location(locs, -2, NULL);
  add_location(locs, -1, NULL);
  tir_stmt_t **consumers;
  int nconsumers;
  int rc = sch_block_consumers(sch, bpath, &consumers, &nconsumers);
  if (rc != MLC_OK || nconsumers == 0) return rc;
  sch_path_t cpath;
  if (!sch_find_uid(sch, consumers[0]->u.realize.block->uid, &cpath)) return MLC_OK;
  tir_stmt_t *boundary = consumers_boundary(sch, consumers, nconsumers, &cpath);
  if (!boundary || boundary->kind != TIR_FOR) return MLC_OK;
  collect_loop_locations(sch, block, boundary, &cpath, locs);
  return MLC_OK;
}

static void format_locations(const locations_t *locs, char *buf, size_t len) {
  size_t at = 0;
  buf[0] = '\0';
  for (int i = 0; i < locs->n && at < len; i++)
    at += (size_t)snprintf(buf + at, len - at, i ? ", %lld" : "%lld", (long long)locs->index[i]);
}

int sch_sample_compute_location(sch_t *sch, sch_rv_t *out, sch_rv_t block, const int64_t *decision) {
  static const char *prim = "sample_compute_location";
  sch_path_t bpath;
  *out = SCH_RV_NONE;
  int rc = sch_find_block(sch, prim, block, &bpath);
  if (rc != MLC_OK) return rc;
  const char *name = bpath.stmts[bpath.n - 1]->u.realize.block->name;
  locations_t locs;
  if ((rc = collect_locations(sch, block, &bpath, &locs)) != MLC_OK) return rc;
  int pick = -1;
  if (decision) {
    for (int i = 0; i < locs.n; i++)
      if (locs.index[i] == *decision) pick = i;
    if (pick < 0) {
      char valid[256];
      format_locations(&locs, valid, sizeof valid);
      return sch_fail(sch, prim, "decision %lld is not a valid compute location of block %s (valid: %s)",
                      (long long)*decision, name, valid);
    }
  } else {
    pick = (int)sample_int(&sch->rng, 0, locs.n);
  }
  uint32_t uid = locs.index[pick] == -2 ? SCH_UID_INLINE
                 : locs.index[pick] == -1 ? SCH_UID_ROOT
                                          : locs.loop[pick]->u.loop.uid;
  sch_rv_t rv = sch_new_rv(sch, SCH_RV_LOOP, uid, 0);
  sch_arg_t input = sch_arg_rv(block), dec = sch_arg_int(locs.index[pick]);
  sch_record(sch, SCH_INST_SAMPLE_COMPUTE_LOCATION, &input, 1, NULL, 0, &rv, 1, &dec);
  *out = rv;
  return MLC_OK;
}
