/*
 * rewrite_tensorize.c - the RewriteTensorize postprocessor (MetaSchedule's
 * rewrite_tensorize.cc, with vectorize_init_loop as on CPU).
 *
 * A rule that blockized a tile for a tensor intrinsic annotated the outer
 * block meta_schedule.auto_tensorize = "intrinsic name"; once the other
 * postprocessors have settled the loops, the reduction's init and the
 * layouts, the annotation is removed and the block tensorized. An init
 * block annotated with "" (RewriteReductionBlock leaves that) gets its one
 * inner loop vectorized instead, when it has exactly one child block under
 * exactly one loop. Blocks are handled in post-order (inner first), as TVM
 * collects them.
 *
 * Departure from TVM, which logs a failed tensorize and keeps the
 * untensorized candidate: a block that does not tensorize rejects the
 * candidate (MLC_ESCHEDULE with the primitive's reason), since the design
 * said it must, and the search should not measure what it did not mean.
 *
 * Extension (CPU targets; docs/decisions.md, "A register tile must fit the
 * register file"): the calls between the block and the innermost loop that
 * carries its reduction (the spatial loops inside it) each keep their
 * accumulator live across that loop; when those accumulators (a call's
 * output over the 64-byte vector) and two operands would need more than the
 * 32 vector registers the AVX-512 intrinsics have, the candidate is
 * rejected. Such tiles spill and never won: in three tuning databases
 * (GMM-512, GMM-1024, BMM) the 23-51% of trials this rejects reached at
 * best 0.85-0.93x the run's best; each run's five best had 16.
 */
#include "search/postproc/postproc.h"

#define RT "RewriteTensorize"

/* The last annotated block in post-order among the collected ones: a
 * block's nested blocks come after it in pre-order, so walking backwards
 * meets inner ones first. */
static const pp_block_t *next_block(const pp_block_t *blocks, int n, const char **intrin) {
  for (int i = n - 1; i >= 0; i--)
    if (pp_block_ann_str(blocks[i].block, MS_ANN_AUTO_TENSORIZE, intrin)) return &blocks[i];
  return NULL;
}

static int vectorize_init(sch_t *sch, sch_rv_t block, const char *name) {
  const sch_rv_t *kids, *loops;
  int nkids, nloops;
  if (sch_get_child_blocks(sch, &kids, &nkids, block) != MLC_OK) return pp_fail_sch(RT, sch, "block %s", name);
  if (nkids != 1) return MLC_OK;
  if (sch_get_loops(sch, &loops, &nloops, kids[0]) != MLC_OK) return pp_fail_sch(RT, sch, "block %s", name);
  if (nloops != 1) return MLC_OK;
  tir_stmt_t *loop;
  if (sch_get_loop_node(sch, loops[0], &loop) != MLC_OK) return pp_fail_sch(RT, sch, "block %s", name);
  if (loop->u.loop.kind == TIR_FOR_VECTORIZED) return MLC_OK;
  if (sch_vectorize(sch, loops[0]) != MLC_OK) return pp_fail_sch(RT, sch, "block %s: vectorizing its init", name);
  return MLC_OK;
}

#define CPU_VECTOR_REGISTERS 32 /* zmm0-31: the CPU intrinsics are AVX-512 ones */
#define CPU_VECTOR_BYTES 64
#define OPERAND_REGISTERS 2     /* a broadcast and a loaded operand beside the accumulators */

static bool first_write(tir_visitor_t *v, tir_block_t *b, tir_stmt_t *realize) {
  (void)realize;
  const tir_buffer_t **out = v->payload;
  if (!*out && b->nwrites > 0) *out = b->writes[0].buffer;
  return !*out;
}

/* Vector registers one call's output takes (its description's written
 * buffer), or 0 when that is not a constant size. */
static int64_t call_accumulators(const sch_intrin_t *in) {
  const tir_buffer_t *out = NULL;
  tir_visitor_t v = {.block = first_write, .payload = (void *)&out};
  tir_visit_stmt(&v, in->desc->body);
  if (!out) return 0;
  int64_t bytes = (int64_t)(out->dtype.bits / 8) * out->dtype.lanes;
  for (int d = 0; d < out->ndim; d++) {
    int64_t e;
    if (!tir_as_int(out->shape[d], &e) || e <= 0) return 0;
    bytes *= e;
  }
  return (bytes + CPU_VECTOR_BYTES - 1) / CPU_VECTOR_BYTES;
}

/* MLC_OK when the calls inside the innermost reduction loop around pb keep
 * few enough accumulators for the register file (file comment). */
static int check_register_tile(const pp_block_t *pb, const sch_intrin_t *in) {
  int64_t calls = 1, per_call = call_accumulators(in);
  if (per_call <= 0) return MLC_OK;
  for (int i = pb->nloops - 1; i >= 0; i--) {
    const tir_stmt_t *loop = pb->loops[i];
    int64_t extent;
    if (!tir_as_int(loop->u.loop.extent, &extent) || extent <= 0) return MLC_OK;
    /* The innermost reduction loop, even of one iteration: looking through
     * such a loop rejected the skinny GEMM's memory-bound winners, whose
     * large tiles keep their accumulators in L1 (docs/decisions.md). */
    if (pp_loop_iter_type(loop) == TIR_ITER_REDUCE) {
      int64_t acc = calls * per_call;
      if (acc + OPERAND_REGISTERS <= CPU_VECTOR_REGISTERS) return MLC_OK;
      return pp_fail(RT,
                     "block %s: its %lld %s calls inside reduction loop %s keep %lld accumulator vectors, more than "
                     "the %d of %d vector registers left beside the operands",
                     pb->block->name, (long long)calls, in->name, loop->u.loop.var->u.var.name, (long long)acc,
                     CPU_VECTOR_REGISTERS - OPERAND_REGISTERS, CPU_VECTOR_REGISTERS);
    }
    calls = calls > INT64_MAX / extent ? INT64_MAX : calls * extent;
  }
  return MLC_OK; /* no loop carries the reduction: nothing stays live */
}

static int rewrite_one(sch_t *sch, const pp_block_t *pb, const char *intrin, bool cpu) {
  const char *name = pb->block->name; /* program arena: stays valid */
  sch_rv_t block;
  if (sch_get_block(sch, &block, name) != MLC_OK || sch_unannotate(sch, block, MS_ANN_AUTO_TENSORIZE) != MLC_OK)
    return pp_fail_sch(RT, sch, "block %s", name);
  if (!intrin[0]) return vectorize_init(sch, block, name);
  const sch_intrin_t *in = sch_intrin_get(intrin);
  if (!in) return pp_fail(RT, "block %s: no tensor intrinsic is registered as \"%s\"", name, intrin);
  if (cpu) {
    int rc = check_register_tile(pb, in);
    if (rc != MLC_OK) return rc;
  }
  if (sch_tensorize(sch, block, intrin, true) != MLC_OK)
    return pp_fail_sch(RT, sch, "block %s with %s", name, intrin);
  return MLC_OK;
}

static int rewrite_tensorize(const ms_postproc_t *self, const ms_ctx_t *ctx, sch_t *sch) {
  int rc = MLC_OK;
  /* One block per round: each loses its annotation, so the loop ends. */
  while (rc == MLC_OK) {
    mlc_arena_t *a = mlc_arena_new();
    if (!a) return mlc_error_set(MLC_ENOMEM, RT ": out of memory");
    pp_block_t *blocks;
    int n;
    const char *intrin = NULL;
    rc = pp_collect_blocks(a, sch_func(sch), &blocks, &n);
    const pp_block_t *pb = rc == MLC_OK ? next_block(blocks, n, &intrin) : NULL;
    if (pb) rc = rewrite_one(sch, pb, intrin, !(ctx && ms_target_is_gpu(&ctx->target)));
    mlc_arena_free(a);
    if (!pb) break;
  }
  return rc;
}

const ms_postproc_t ms_postproc_rewrite_tensorize = {"RewriteTensorize", rewrite_tensorize};
