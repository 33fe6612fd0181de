/*
 * interp_mma.c - the mma.sync calls of the warp-layout tensor intrinsics in
 * the reference interpreter (tir_ptx_op in tir.h; schedule/intrin/
 * builtin_cuda.c writes them):
 *
 *   W[tx, T.Ramp(0, 1, 8)] = T.call_extern("float16x8", "ptx_ldmatrix_x4", S[row, T.Ramp(col, 1, 8)])
 *   W[tx, T.Ramp(0, 1, 4)] = T.call_extern("float16x4", "ptx_ldmatrix_x2", ...)
 *   C[tx, T.Ramp(0, 1, 4)] = T.call_extern("float32x4",
 *       "ptx_mma_m16n8k16_row_col_f16f16f32", A[tx, 0:8], B[tx, 0:4], C[tx, 0:4])
 *
 * each inside a loop over the 32 lanes of a warp bound to threadIdx.x. A
 * call's value for lane L is what the hardware gives that lane, and it
 * depends on the operands the OTHER lanes supply: ldmatrix distributes the
 * rows whose addresses lanes 0..31 give, mma combines the fragments every
 * lane holds. The interpreter runs the lanes one after another, so for lane
 * L it evaluates the call's operand expressions again with the lane
 * variable (the innermost threadIdx.x loop's) set to each lane it needs,
 * then restores it. Only the lanes whose registers lane L's result reads
 * are evaluated, each once per call: ldmatrix .x4 the 4 lanes 8m + L/4,
 * .x2 two of them, mma the 4 lanes holding A's rows of L and the 8 holding
 * B's columns; C is read at lane L only (D's registers are C's), so a call
 * that stores into its own C, as the intrinsic does, never sees another
 * lane's result.
 *
 * Re-evaluation changes the lane variable and nothing else, so a variable
 * bound between the lane loop and the call (a let, a loop, a block's iter
 * vars) would keep lane L's value while the operand is evaluated for lane
 * S: such a call is refused. The intrinsics' implementations and their
 * lowering (flat indices like `A_warp[T.Ramp(tx * 8, 1, 8)]`) use the lane
 * variable directly.
 *
 * mma accumulates in float32 over k in order, rounding each product and
 * each sum to float32: what the intrinsic's description (and the
 * untensorized `C = C + float32(A) * float32(B)`) computes, to the bit.
 */
#include "tir/interp_internal.h"

#include <stdio.h>

#define WARP 32
#define MAX_REGS 8 /* registers per lane in one operand (A of mma: 8 halves) */

/* What a call takes and gives: its result and operand dtypes. */
typedef struct {
  tir_dtype_t result;
  int nops;
  tir_dtype_t ops[3];
} ptx_sig_t;

static const ptx_sig_t sigs[] = {
    [TIR_PTX_LDMATRIX_X4] = {{TIR_CODE_FLOAT, 16, 8}, 1, {{TIR_CODE_FLOAT, 16, 8}}},
    [TIR_PTX_LDMATRIX_X2] = {{TIR_CODE_FLOAT, 16, 4}, 1, {{TIR_CODE_FLOAT, 16, 8}}},
    [TIR_PTX_MMA_M16N8K16] = {{TIR_CODE_FLOAT, 32, 4},
                              3,
                              {{TIR_CODE_FLOAT, 16, 8}, {TIR_CODE_FLOAT, 16, 4}, {TIR_CODE_FLOAT, 32, 4}}},
};

/* One call being run for one lane, with the operands of the lanes it has
 * evaluated so far (bit S of have[i]: operand i of lane S is in regs). */
typedef struct {
  interp_t *it;
  const tir_expr_t *call;
  tir_ptx_op_t op;
  interp_var_slot_t *slot; /* the lane variable's */
  int lane;
  uint32_t have[3];
  double regs[3][WARP][MAX_REGS];
} warp_call_t;

/* ------------------------------------------------------------------------ */
/* Checks                                                                    */
/* ------------------------------------------------------------------------ */

static int bad_dtype(interp_t *it, tir_ptx_op_t op, const char *what, tir_dtype_t got, tir_dtype_t want) {
  char g[24], w[24];
  return interp_fail(it, "%s: %s is %s, expected %s", tir_ptx_name(op), what, tir_dtype_str(got, g),
                     tir_dtype_str(want, w));
}

/* The call's shape: operand count and dtypes as the signature says. */
static int check_call(interp_t *it, const tir_expr_t *e, tir_ptx_op_t op) {
  const ptx_sig_t *sig = &sigs[op];
  if (e->u.call.nargs - 1 != sig->nops)
    return interp_fail(it, "%s takes %d operand(s), got %d", tir_ptx_name(op), sig->nops, e->u.call.nargs - 1);
  if (!tir_dtype_eq(e->dtype, sig->result)) return bad_dtype(it, op, "the result", e->dtype, sig->result);
  for (int i = 0; i < sig->nops; i++) {
    const tir_expr_t *arg = e->u.call.args[1 + i];
    if (!tir_dtype_eq(arg->dtype, sig->ops[i])) {
      char what[32];
      snprintf(what, sizeof what, "operand %d", i);
      return bad_dtype(it, op, what, arg->dtype, sig->ops[i]);
    }
  }
  return MLC_OK;
}

/* The lane loop around the call: it exists, has 32 lanes, and nothing was
 * bound inside it before the call. *lane gets the lane being run. */
static int check_lane_loop(interp_t *it, tir_ptx_op_t op, int *lane) {
  const interp_lane_loop_t *ll = &it->lane_loop;
  if (!ll->var)
    return interp_fail(it, "%s: a warp-collective call outside any threadIdx.x loop (it must run in "
                       "a loop over the 32 lanes of a warp)", tir_ptx_name(op));
  if (ll->extent != WARP)
    return interp_fail(it, "%s: a warp-collective call in threadIdx.x loop %s of extent %lld, not %d",
                       tir_ptx_name(op), ll->var->u.var.name, (long long)ll->extent, WARP);
  if (it->var_undo.len != ll->var_undo)
    return interp_fail(it, "%s: variables are bound between threadIdx.x loop %s and the call (a let, loop or "
                       "block): its operands must depend on the lane through %s only",
                       tir_ptx_name(op), ll->var->u.var.name, ll->var->u.var.name);
  const interp_var_slot_t *slot = interp_var_slot(it, ll->var);
  *lane = (int)(slot->val.s.i - ll->min);
  return MLC_OK;
}

/* ------------------------------------------------------------------------ */
/* Operands of other lanes                                                   */
/* ------------------------------------------------------------------------ */

/* Operand i as lane src computes it: evaluated with the lane variable set to
 * src's value, then restored; its scratch lanes are given back at once. */
static int eval_for_lane(warp_call_t *w, int i, int src) {
  interp_t *it = w->it;
  const tir_var_t *var = it->lane_loop.var;
  tir_dtype_t want = sigs[w->op].ops[i];
  interp_value_t saved = w->slot->val, v;
  size_t chunk = it->chunk, used = it->used;
  w->slot->val.s = interp_wrap(var->dtype, (uint64_t)(it->lane_loop.min + src));
  int rc = interp_eval(it, w->call->u.call.args[1 + i], &v);
  if (rc == MLC_OK && !tir_dtype_eq(v.t, want)) {
    char g[24], x[24];
    rc = interp_fail(it, "a %s value, expected %s", tir_dtype_str(v.t, g), tir_dtype_str(want, x));
  }
  for (int r = 0; rc == MLC_OK && r < want.lanes; r++) w->regs[i][src][r] = interp_lane(&v, r).f;
  w->slot->val = saved;
  it->chunk = chunk;
  it->used = used;
  if (rc != MLC_OK)
    return interp_fail_within(it, rc, "%s: operand %d evaluated for lane %d (%s = %lld)", tir_ptx_name(w->op),
                              i, src, var->u.var.name, (long long)(it->lane_loop.min + src));
  w->have[i] |= UINT32_C(1) << src;
  return MLC_OK;
}

/* Register reg of operand i in lane src. */
static int lane_reg(warp_call_t *w, int i, int src, int reg, double *out) {
  int rc = MLC_OK;
  if (!(w->have[i] & (UINT32_C(1) << src))) rc = eval_for_lane(w, i, src);
  if (rc == MLC_OK) *out = w->regs[i][src][reg];
  return rc;
}

/* ------------------------------------------------------------------------ */
/* ldmatrix                                                                  */
/* ------------------------------------------------------------------------ */

/* ldmatrix .x4 / .x2: 8x8 matrix m is the rows whose addresses lanes 8m ..
 * 8m + 7 give (8 halves each); lane L gets elements (L / 4, 2 (L % 4)) and
 * (L / 4, 2 (L % 4) + 1) of each matrix, as registers 2m and 2m + 1. */
static int run_ldmatrix(warp_call_t *w, interp_scalar_t *o) {
  int nmat = w->op == TIR_PTX_LDMATRIX_X4 ? 4 : 2, L = w->lane;
  for (int m = 0; m < nmat; m++)
    for (int e = 0; e < 2; e++) {
      double h;
      int rc = lane_reg(w, 0, 8 * m + L / 4, 2 * (L % 4) + e, &h);
      if (rc != MLC_OK) return rc;
      o[2 * m + e].f = h;
    }
  return MLC_OK;
}

/* ------------------------------------------------------------------------ */
/* mma.sync m16n8k16                                                         */
/* ------------------------------------------------------------------------ */

/* The PTX fragment layout of mma.m16n8k16 (PTX ISA, "Matrix fragments for
 * mma.m16n8k16"), as the intrinsics' descriptions index warp buffers:
 *   A (16 x 16, row-major) element (row, k): lane (row % 8) * 4 + (k % 8) / 2,
 *     register (k / 8) * 4 + (row / 8) * 2 + k % 2;
 *   B (16 (k) x 8 (n)) element (k, n): lane n * 4 + (k % 8) / 2,
 *     register (k / 8) * 2 + k % 2;
 *   C, D (16 x 8) element (row, col): lane (row % 8) * 4 + col / 2,
 *     register (row / 8) * 2 + col % 2. */
static int a_elem(warp_call_t *w, int row, int k, double *out) {
  return lane_reg(w, 0, (row % 8) * 4 + (k % 8) / 2, (k / 8) * 4 + (row / 8) * 2 + k % 2, out);
}
static int b_elem(warp_call_t *w, int k, int n, double *out) {
  return lane_reg(w, 1, n * 4 + (k % 8) / 2, (k / 8) * 2 + k % 2, out);
}

/* Lane L's register r of D is element (L / 4 + 8 (r / 2), 2 (L % 4) + r % 2):
 * C's register r plus the row of A times the column of B, k in order. */
static int run_mma(warp_call_t *w, interp_scalar_t *o) {
  const tir_dtype_t f32 = tir_dt_FLOAT32();
  int g = w->lane / 4, t = w->lane % 4;
  for (int r = 0; r < 4; r++) {
    int row = g + 8 * (r / 2), col = 2 * t + r % 2;
    double sum, a, b;
    int rc = lane_reg(w, 2, w->lane, r, &sum);
    for (int k = 0; k < 16 && rc == MLC_OK; k++) {
      if ((rc = a_elem(w, row, k, &a)) == MLC_OK && (rc = b_elem(w, k, col, &b)) == MLC_OK)
        sum = interp_round(f32, sum + interp_round(f32, a * b));
    }
    if (rc != MLC_OK) return rc;
    o[r].f = sum;
  }
  return MLC_OK;
}

int interp_eval_ptx(interp_t *it, const tir_expr_t *e, interp_value_t *out) {
  tir_ptx_op_t op = tir_ptx_op(e);
  if (op == TIR_PTX_NONE) return interp_fail(it, "not an mma.sync call");
  warp_call_t w;
  int rc = check_call(it, e, op);
  if (rc == MLC_OK) rc = check_lane_loop(it, op, &w.lane);
  if (rc == MLC_OK) rc = interp_value_alloc(it, out, e->dtype);
  if (rc != MLC_OK) return rc;
  w.it = it;
  w.call = e;
  w.op = op;
  w.slot = interp_var_slot(it, it->lane_loop.var);
  w.have[0] = w.have[1] = w.have[2] = 0;
  return op == TIR_PTX_MMA_M16N8K16 ? run_mma(&w, interp_lanes(out)) : run_ldmatrix(&w, interp_lanes(out));
}
