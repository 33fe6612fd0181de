/*
 * gpu_warp.c - "warp" buffers in kernels (docs/compiler/gpu.md#mmasync).
 *
 * A warp buffer of shape (..., 32, W) holds, at [..., lane, j], register j
 * of lane `lane` (the threadIdx.x of the loop that touches it): the operands
 * of mma.sync and ldmatrix live there (schedule/intrin/builtin_cuda.c). In
 * the interpreter it is plain memory; here each thread keeps only its own
 * lane's registers, a private array of 1/32 of the buffer that LLVM
 * promotes to registers. After lowering, an access is a flat index
 *
 *   tile * 32W + lane * W + j        (0 <= j < W)
 *
 * and the thread's register is tile * W + j. That is only the same program
 * if every access is made by the lane whose registers it names: the scan
 * (cg_warp_check) proves for each access that the index is the lane loop's
 * variable times a constant W plus a rest e0 that stays inside one lane's
 * W registers (e0 mod 32W + lanes - 1 < W), and code generation
 * (cg_warp_index) drops the lane: e0 // 32W * W + e0 % 32W. A program that
 * reads another lane's registers (an untensorized block of the warp layout)
 * is refused; moving values between lanes takes shuffles, which TVM's
 * LowerWarpMemory generates and this code generator does not.
 */
#include "compiler/codegen/gpu.h"

#include <string.h>

static tir_expr_t *int_like(mlc_arena_t *a, const tir_expr_t *e, int64_t v) {
  return tir_int(a, tir_dtype_scalar(e->dtype), v);
}

/* e with v replaced by the constant c. */
static tir_expr_t *at(mlc_arena_t *a, const tir_expr_t *e, tir_var_t *v, int64_t c) {
  tir_var_map_t map = {0};
  tir_var_map_set(a, &map, v, tir_int(a, v->dtype, c));
  return tir_substitute_expr(a, (tir_expr_t *)e, &map);
}

/* The scalar part of an index and the number of consecutive elements it
 * covers; NULL for a gather. */
static const tir_expr_t *index_base(const tir_expr_t *idx, int *lanes) {
  *lanes = 1;
  if (idx->kind == TIR_BROADCAST) return idx->u.broadcast.value;
  if (idx->kind != TIR_RAMP) return idx->dtype.lanes == 1 ? idx : NULL;
  if (!tir_is_const_int(idx->u.ramp.stride, 1)) return NULL;
  *lanes = idx->u.ramp.lanes;
  return idx->u.ramp.base;
}

static int refuse(const tir_buffer_t *b, const tir_expr_t *idx, const char *why) {
  mlc_strbuf_t sb;
  mlc_sb_init(&sb);
  tir_print_expr(&sb, idx);
  int rc = mlc_error_set(MLC_EUNSUPPORTED, "warp buffer %s[%s]: %s; element [..., lane, j] of a warp buffer "
                         "is register j of lane `lane`, so only that lane may touch it (another lane's registers "
                         "would need shuffles, which are not generated)", b->name,
                         mlc_sb_str(&sb) ? mlc_sb_str(&sb) : "?", why);
  mlc_sb_free(&sb);
  return rc;
}

int64_t cg_warp_width(const cg_warp_table_t *t, const tir_var_t *data) {
  for (int i = 0; i < t->n; i++)
    if (t->buf[i].data == data) return t->buf[i].width;
  return 0;
}

static int record_width(cg_warp_table_t *t, const tir_buffer_t *b, const tir_expr_t *idx,
                        int64_t w) {
  int64_t known = cg_warp_width(t, b->data);
  if (known == w) return MLC_OK;
  if (known) return refuse(b, idx, "accesses disagree on the number of registers per lane");
  if (t->n == CG_MAX_WARP_BUFFERS)
    return mlc_error_set(MLC_EUNSUPPORTED, "%s: more than %d warp buffers in one kernel", b->name, CG_MAX_WARP_BUFFERS);
  t->buf[t->n].data = b->data;
  t->buf[t->n++].width = w;
  return MLC_OK;
}

int cg_warp_check(cg_warp_table_t *t, const tir_buffer_t *b, const tir_expr_t *idx,
                  const tir_stmt_t *lane_loop, tir_analyzer_t *an, mlc_arena_t *a) {
  int64_t ext, w;
  int lanes;
  if (!lane_loop) return refuse(b, idx, "accessed outside every threadIdx.x loop");
  if (!tir_as_int(lane_loop->u.loop.extent, &ext) || ext > 32)
    return refuse(b, idx, "the threadIdx.x loop around it is not a constant of at most 32 lanes");
  const tir_expr_t *base = index_base(idx, &lanes);
  if (!base) return refuse(b, idx, "a vector index that is not consecutive elements");
  tir_var_t *lane = lane_loop->u.loop.var;
  tir_expr_t *e0 = tir_simplify(an, at(a, base, lane, 0));
  tir_expr_t *step = tir_simplify(an, tir_binary(a, TIR_SUB, at(a, base, lane, 1), e0));
  if (!tir_as_int(step, &w) || w <= 0)
    return refuse(b, idx, "the index is not the lane times a constant number of registers plus the rest");
  tir_expr_t *lane_term = lane->dtype.bits == base->dtype.bits ? lane : tir_cast(a, tir_dtype_scalar(base->dtype), lane);
  tir_expr_t *linear = tir_binary(a, TIR_ADD, e0, tir_binary(a, TIR_MUL, lane_term, int_like(a, base, w)));
  if (!tir_is_const_int(tir_simplify(an, tir_binary(a, TIR_SUB, (tir_expr_t *)base, linear)), 0))
    return refuse(b, idx, "the index is not linear in the lane");
  tir_expr_t *reg = tir_binary(a, TIR_FLOOR_MOD, e0, int_like(a, base, 32 * w));
  tir_expr_t *last = tir_binary(a, TIR_ADD, reg, int_like(a, base, lanes - 1));
  if (!tir_prove(an, tir_binary(a, TIR_LT, last, int_like(a, base, w))))
    return refuse(b, idx, "its elements are not proven to stay within the lane's registers");
  return record_width(t, b, idx, w);
}

/* e0 // 32W * W + e0 % 32W: the register of element e0 + lane * W. */
static tir_expr_t *own_register(mlc_arena_t *a, tir_analyzer_t *an, tir_expr_t *e0, int64_t w) {
  tir_expr_t *span = int_like(a, e0, 32 * w);
  tir_expr_t *tile = tir_binary(a, TIR_MUL, tir_binary(a, TIR_FLOOR_DIV, e0, span), int_like(a, e0, w));
  return tir_simplify(an, tir_binary(a, TIR_ADD, tile, tir_binary(a, TIR_FLOOR_MOD, e0, span)));
}

const tir_expr_t *cg_warp_index(cg_t *cg, const tir_buffer_t *b, const tir_expr_t *idx) {
  if (!tir_is_warp_buffer(b)) return idx;
  cg_kernel_state_t *k = cg->gpu;
  int64_t w = cg_warp_width(&k->warps, b->data);
  int lanes;
  const tir_expr_t *base = index_base(idx, &lanes);
  if (!w || !k->lane || !base) /* the scan checked every access */
    return mlc_error_set(MLC_EINTERNAL, "codegen: warp buffer %s: an access the kernel scan did not check", b->name),
           NULL;
  mlc_arena_t *a = cg->arena;
  tir_analyzer_t *an = tir_analyzer_new(a);
  if (!an) return mlc_error_set(MLC_ENOMEM, "codegen: out of memory"), NULL;
  tir_expr_t *reg = own_register(a, an, tir_simplify(an, at(a, base, k->lane, 0)), w);
  if (idx->kind == TIR_RAMP) return tir_ramp(a, reg, idx->u.ramp.stride, idx->u.ramp.lanes);
  if (idx->kind == TIR_BROADCAST) return tir_broadcast(a, reg, idx->u.broadcast.lanes);
  return reg;
}
