/*
 * mutate_tile_size.c - MutateTileSize (MetaSchedule's mutate_tile_size.cc):
 * picks a SamplePerfectTile decision and moves a factor from one position
 * to another, so the product (the loop's extent) is kept and the trace
 * still replays. Moving into the innermost position respects the
 * instruction's max_innermost_factor.
 *
 * As in MetaSchedule: the source position x has a factor > 1, the
 * destination y is any other position, and the factor moved is a divisor
 * > 1 of tiles[x] (for the innermost destination, the largest allowed one
 * bounds the choice). Two departures, both bounded: a draw whose move
 * would break the innermost limit is drawn again (MetaSchedule gives up on
 * a 2-way tile at once), and when the chosen instruction cannot be changed
 * the others are tried in random order instead of failing the mutation.
 */
#include "search/evolve/evolve.h"

/* Attempts at drawing (x, y) for one instruction before trying another. */
#define MAX_DRAWS 32
/* Splits a decision may have (schedule.h's sample_perfect_tile allows 32). */
#define MAX_SPLITS 32

/* The decision of instruction i when it is a mutable tile: n >= 2 factors
 * whose product is at least 2. */
static bool tile_of(const sch_trace_t *t, int i, int64_t *tiles, int *n) {
  const sch_arg_t *d = &t->decisions[i];
  if (!ms_inst_is(&t->insts[i], "SamplePerfectTile") || d->kind != SCH_ARG_LIST) return false;
  if (d->u.list.n < 2 || d->u.list.n > MAX_SPLITS) return false;
  int64_t prod = 1;
  for (int k = 0; k < d->u.list.n; k++) {
    if (d->u.list.items[k].kind != SCH_ARG_INT || d->u.list.items[k].u.i < 1) return false;
    tiles[k] = d->u.list.items[k].u.i;
    prod *= tiles[k];
  }
  *n = d->u.list.n;
  return prod >= 2;
}

/* Sorted divisors of x into out (at most cap); returns how many. */
static int divisors(int64_t x, int64_t *out, int cap) {
  int lo = 0, hi = 0;
  int64_t small[256], large[256];
  for (int64_t i = 1; i * i <= x && lo < 256 && hi < 256; i++) {
    if (x % i) continue;
    small[lo++] = i;
    if (i * i != x) large[hi++] = x / i;
  }
  int n = 0;
  for (int i = 0; i < lo && n < cap; i++) out[n++] = small[i];
  for (int i = hi - 1; i >= 0 && n < cap; i--) out[n++] = large[i];
  return n;
}

/* One move of a factor between two positions of tiles (n >= 2), in place.
 * limit: the largest innermost factor, or < 0 for none. false when no
 * allowed move was drawn. */
static bool move_factor(mlc_rng_t *rng, int64_t *tiles, int n, int64_t limit) {
  for (int draw = 0; draw < MAX_DRAWS; draw++) {
    int x = (int)mlc_rng_below(rng, (uint64_t)n);
    if (tiles[x] <= 1) continue;
    int y = (int)mlc_rng_below(rng, (uint64_t)n - 1);
    if (y >= x) y++;
    int64_t f[512];
    int nf = divisors(tiles[x], f, 512);
    int max_index = nf - 1;
    if (y == n - 1 && limit > 0)
      while (max_index >= 1 && f[max_index] * tiles[y] > limit) max_index--;
    if (max_index < 1) continue; /* the innermost is full: draw again */
    int64_t factor = f[1 + mlc_rng_below(rng, (uint64_t)max_index)];
    tiles[x] /= factor;
    tiles[y] *= factor;
    return true;
  }
  return false;
}

static int with_tiles(sch_trace_t **out, const sch_trace_t *t, int inst, const int64_t *tiles, int n,
                      int design_len) {
  sch_arg_t items[MAX_SPLITS];
  for (int k = 0; k < n; k++) items[k] = sch_arg_int(tiles[k]);
  sch_arg_t d = {SCH_ARG_LIST, {0}};
  d.u.list.n = n;
  d.u.list.items = items;
  sch_trace_t design = ms_trace_prefix_view(t, design_len);
  return sch_trace_with_decision(out, &design, inst, &d);
}

static int apply(const ms_mutator_t *self, const ms_ctx_t *ctx, const sch_trace_t *t, mlc_rng_t *rng,
                 sch_trace_t **out) {
  *out = NULL;
  int len = ms_trace_design_len(t);
  int *cands = mlc_malloc(sizeof(int) * (size_t)(len > 0 ? len : 1));
  if (!cands) return mlc_error_set(MLC_ENOMEM, "MutateTileSize: out of memory");
  int64_t tiles[MAX_SPLITS];
  int n, ncands = 0;
  for (int i = 0; i < len; i++)
    if (tile_of(t, i, tiles, &n)) cands[ncands++] = i;
  int rc = mlc_error_set(MLC_ENOTFOUND, "MutateTileSize: no tile decision can change");
  /* Uniform among the candidates, then the rest in random order. */
  for (int left = ncands; left > 0; left--) {
    int pick = (int)mlc_rng_below(rng, (uint64_t)left);
    int inst = cands[pick];
    cands[pick] = cands[left - 1];
    tile_of(t, inst, tiles, &n);
    int64_t limit = t->insts[inst].nattrs > 1 && t->insts[inst].attrs[1].kind == SCH_ARG_INT
                        ? t->insts[inst].attrs[1].u.i
                        : -1;
    if (!move_factor(rng, tiles, n, limit)) continue;
    rc = with_tiles(out, t, inst, tiles, n, len);
    break;
  }
  mlc_free(cands);
  return rc;
}

const ms_mutator_t ms_mutate_tile_size = {"MutateTileSize", apply};
