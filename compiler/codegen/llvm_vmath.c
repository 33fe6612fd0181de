/*
 * llvm_vmath.c - float32 exp, exp2, log, log2 and tanh as inline LLVM IR.
 *
 * LLVM 14 has no vector math library on our JIT path: `llvm.exp.v16f32`
 * becomes sixteen calls to expf, which made the tuned softmax 8x slower
 * than oneDNN's. These generators emit the Cephes single-precision
 * algorithms (the ones SLEEF's and most SIMD libraries' float paths
 * follow) with plain fmul/fadd/select/integer ops, so a vector stays a
 * vector, and a scalar gets the same code (a kernel gives the same bits
 * whether or not the tuner vectorised it).
 *
 * exp(x) = 2^k * p(r): k = round(x log2 e), r = x - k ln2 with ln2 in two
 * parts (Cody-Waite: k * C1 is exact, C1 having 9 significant bits), p a
 * degree-6 polynomial on |r| <= ln2 / 2. 2^k is built from exponent bits in
 * two halves, 2^(k/2) * 2^(k - k/2), so results that are subnormal round
 * once and overflow rounds to +inf without a separate test. The input is
 * clamped first (to [-104, 89]: outside it every result is 0 or +inf) so
 * that fptosi never sees a value it cannot convert; NaN comes back as NaN.
 * Rounding uses fptosi(t +- 0.5) and not the 1.5 * 2^23 trick, which a
 * -fast-math backend may fold away.
 *
 * log(x) = e ln2 + log(m): m in [sqrt(1/2), sqrt(2)) from the exponent and
 * mantissa bits (subnormals scaled by 2^23 first), log(1 + f) = f - f^2/2 +
 * f^3 P(f) with a degree-8 P, and e ln2 again in two parts. log2 weighs the
 * same pieces with log2(e) - 1 to keep the error near 1 ulp. tanh is a
 * polynomial near 0 and a rational function of exp further out.
 *
 * exp and exp2 come in three forms, by what the target has (docs/decisions.md,
 * "Inline float32 exp and log on CPUs" and "exp with FMA and VSCALEFPS"):
 * - no FMA: fmul and fadd as above;
 * - FMA: the polynomial and the Cody-Waite steps fused (llvm.fma), k
 *   rounded with llvm.rint (ties to even) instead of the +-0.5 select;
 * - FMA and AVX-512F: also 2^k applied by VSCALEFPS on the float k (one
 *   instruction, one rounding, overflow and underflow exact), and the
 *   clamp written so NaN goes through it, with no separate NaN select.
 * That is about 15 vector instructions per exp instead of 35; softmax
 * spends most of its time there. One target gives one set of bits: the
 * scalar code takes the same path (on lane 0 of a vector for VSCALEFPS) as
 * the vector code. log, log2 and tanh keep fmul and fadd everywhere.
 */
#include "compiler/codegen/llvm_vmath.h"

#include <math.h>

/* ------------------------------------------------------------------------ */
/* Building blocks                                                           */
/* ------------------------------------------------------------------------ */

/* Float32 constant v in x's shape. */
static LLVMValueRef fc(cg_t *cg, LLVMValueRef x, double v) {
  return cg_splat(cg, LLVMConstReal(cg->t_f32, v), lanes_of(x));
}

/* Int32 constant v in x's shape. */
static LLVMValueRef ic(cg_t *cg, LLVMValueRef x, int64_t v) { return cg_splat(cg, cg_i32(cg, v), lanes_of(x)); }

/* The int32 type in x's shape. */
static LLVMTypeRef int_type(cg_t *cg, LLVMValueRef x) {
  int lanes = lanes_of(x);
  return lanes > 1 ? LLVMVectorType(cg->t_i32, (unsigned)lanes) : cg->t_i32;
}

static LLVMValueRef mul(cg_t *cg, LLVMValueRef a, LLVMValueRef b) { return LLVMBuildFMul(cg->b, a, b, ""); }
static LLVMValueRef add(cg_t *cg, LLVMValueRef a, LLVMValueRef b) { return LLVMBuildFAdd(cg->b, a, b, ""); }
static LLVMValueRef sub(cg_t *cg, LLVMValueRef a, LLVMValueRef b) { return LLVMBuildFSub(cg->b, a, b, ""); }

static LLVMValueRef fcmp(cg_t *cg, LLVMRealPredicate p, LLVMValueRef a, LLVMValueRef b) {
  return LLVMBuildFCmp(cg->b, p, a, b, "");
}

static LLVMValueRef sel(cg_t *cg, LLVMValueRef c, LLVMValueRef a, LLVMValueRef b) {
  return LLVMBuildSelect(cg->b, c, a, b, "");
}

/* Horner's rule: ((c[0] x + c[1]) x + ...) + c[n-1]. */
static LLVMValueRef horner(cg_t *cg, LLVMValueRef x, const double *c, int n) {
  LLVMValueRef y = fc(cg, x, c[0]);
  for (int i = 1; i < n; i++) y = add(cg, mul(cg, y, x), fc(cg, x, c[i]));
  return y;
}

/* x clamped to [lo, hi]; NaN gives lo (ordered compares). */
static LLVMValueRef clamp(cg_t *cg, LLVMValueRef x, double lo, double hi) {
  LLVMValueRef l = fc(cg, x, lo), h = fc(cg, x, hi);
  x = sel(cg, fcmp(cg, LLVMRealOGT, x, l), x, l);
  return sel(cg, fcmp(cg, LLVMRealOLT, x, h), x, h);
}

/* t rounded to the nearest integer (halves away from zero), as int32;
 * |t| < 2^30. */
static LLVMValueRef round_to_int(cg_t *cg, LLVMValueRef t) {
  LLVMValueRef half = sel(cg, fcmp(cg, LLVMRealOLT, t, fc(cg, t, 0)), fc(cg, t, -0.5), fc(cg, t, 0.5));
  return LLVMBuildFPToSI(cg->b, add(cg, t, half), int_type(cg, t), "");
}

/* 2^k as a float, for k in [-126, 127] (int32). */
static LLVMValueRef pow2i(cg_t *cg, LLVMValueRef k, LLVMValueRef like) {
  LLVMValueRef bits = LLVMBuildShl(cg->b, LLVMBuildAdd(cg->b, k, ic(cg, k, 127), ""), ic(cg, k, 23), "");
  return LLVMBuildBitCast(cg->b, bits, LLVMTypeOf(like), "");
}

/* y * 2^k for k in [-252, 254], rounded once: 2^k is applied in two
 * halves, each a normal float, the first product exact. */
static LLVMValueRef ldexp2(cg_t *cg, LLVMValueRef y, LLVMValueRef k) {
  LLVMValueRef k1 = LLVMBuildAShr(cg->b, k, ic(cg, k, 1), "");
  LLVMValueRef k2 = LLVMBuildSub(cg->b, k, k1, "");
  return mul(cg, mul(cg, y, pow2i(cg, k1, y)), pow2i(cg, k2, y));
}

/* x itself (quietened) where x is NaN, r elsewhere. */
static LLVMValueRef nan_passes(cg_t *cg, LLVMValueRef x, LLVMValueRef r) {
  return sel(cg, fcmp(cg, LLVMRealUNO, x, x), add(cg, x, x), r);
}

/* ------------------------------------------------------------------------ */
/* exp, exp2                                                                 */
/* ------------------------------------------------------------------------ */

#define VM_LOG2E 1.44269504088896341
#define VM_LN2 0.693147180559945309
/* ln 2 = C1 + C2; C1 = 355/512 has 9 significant bits, so k * C1 is exact
 * for |k| < 2^15. */
#define VM_LN2_C1 0.693359375
#define VM_LN2_C2 (-2.12194440e-4)

/* e^r for |r| <= ln2 / 2 (a little beyond is fine): Cephes expf's
 * minimax polynomial, 1 + r + r^2 P(r). */
static LLVMValueRef exp_reduced(cg_t *cg, LLVMValueRef r) {
  static const double p[] = {1.9875691500e-4, 1.3981999507e-3, 8.3334519073e-3,
                             4.1665795894e-2, 1.6666665459e-1, 5.0000001201e-1};
  LLVMValueRef r2 = mul(cg, r, r);
  LLVMValueRef y = mul(cg, horner(cg, r, p, 6), r2);
  return add(cg, add(cg, y, r), fc(cg, r, 1.0));
}

/* What the target's exp and exp2 may use (the file comment). */
typedef enum { VM_PLAIN, VM_FMA, VM_SCALEF } vm_isa_t;

static vm_isa_t vm_isa(const cg_t *cg) {
  if (!cg->target || !mlc_target_has_feature(cg->target, "fma")) return VM_PLAIN;
  return mlc_target_has_feature(cg->target, "avx512f") ? VM_SCALEF : VM_FMA;
}

static LLVMValueRef fma3(cg_t *cg, LLVMValueRef a, LLVMValueRef b, LLVMValueRef c) {
  LLVMTypeRef t = LLVMTypeOf(a);
  LLVMValueRef args[3] = {a, b, c};
  return cg_call_intrinsic(cg, "llvm.fma", &t, 1, args, 3);
}

/* t rounded to an integral float, ties to even (VRNDSCALEPS). */
static LLVMValueRef rint_f(cg_t *cg, LLVMValueRef t) {
  LLVMTypeRef ty = LLVMTypeOf(t);
  return cg_call_intrinsic(cg, "llvm.rint", &ty, 1, &t, 1);
}

/* Horner's rule with fused steps. */
static LLVMValueRef horner_fma(cg_t *cg, LLVMValueRef x, const double *c, int n) {
  LLVMValueRef y = fc(cg, x, c[0]);
  for (int i = 1; i < n; i++) y = fma3(cg, y, x, fc(cg, x, c[i]));
  return y;
}

/* exp_reduced's polynomial, fused, all of it by Horner's rule:
 * 1 + r (1 + r P(r)), seven FMAs. */
static LLVMValueRef exp_reduced_fma(cg_t *cg, LLVMValueRef r) {
  static const double p[] = {1.9875691500e-4, 1.3981999507e-3, 8.3334519073e-3, 4.1665795894e-2,
                             1.6666665459e-1, 5.0000001201e-1, 1.0,             1.0};
  return horner_fma(cg, r, p, 8);
}

/* x clamped to [lo, hi] with NaN going through (VMAXPS / VMINPS with the
 * bound first return the other operand for NaN). */
static LLVMValueRef clamp_keep_nan(cg_t *cg, LLVMValueRef x, double lo, double hi) {
  LLVMValueRef l = fc(cg, x, lo), h = fc(cg, x, hi);
  x = sel(cg, fcmp(cg, LLVMRealOGT, l, x), l, x);
  return sel(cg, fcmp(cg, LLVMRealOLT, h, x), h, x);
}

/* VSCALEFPS on 16 lanes: a * 2^floor(b), rounded once. */
static LLVMValueRef scalef16(cg_t *cg, LLVMValueRef a, LLVMValueRef b) {
  LLVMValueRef args[5] = {a, b, LLVMGetUndef(LLVMTypeOf(a)), LLVMConstInt(cg->t_i16, 0xffff, false), cg_i32(cg, 4)};
  return cg_call_intrinsic(cg, "llvm.x86.avx512.mask.scalef.ps.512", NULL, 0, args, 5);
}

/* Lanes [from, from + n) of v (undef where v has no such lane) as an n-lane
 * vector. */
static LLVMValueRef lanes_slice(cg_t *cg, LLVMValueRef v, int from, int n) {
  int lanes = lanes_of(v);
  LLVMValueRef *mask = mlc_malloc(sizeof(LLVMValueRef) * (size_t)n);
  MLC_ASSERT(mask);
  for (int j = 0; j < n; j++)
    mask[j] = from + j >= 0 && from + j < lanes ? cg_i32(cg, from + j) : LLVMGetUndef(cg->t_i32);
  LLVMValueRef m = LLVMConstVector(mask, (unsigned)n);
  mlc_free(mask);
  return LLVMBuildShuffleVector(cg->b, v, LLVMGetUndef(LLVMTypeOf(v)), m, "");
}

/* acc with lanes [from, from + 16) replaced by those of the 16-lane part
 * (the ones that exist). */
static LLVMValueRef lanes_put(cg_t *cg, LLVMValueRef acc, LLVMValueRef part, int from) {
  int lanes = lanes_of(acc);
  LLVMValueRef wide = lanes_slice(cg, part, -from, lanes); /* part's lane j at from + j */
  LLVMValueRef *mask = mlc_malloc(sizeof(LLVMValueRef) * (size_t)lanes);
  MLC_ASSERT(mask);
  for (int j = 0; j < lanes; j++) mask[j] = cg_i32(cg, j >= from && j < from + 16 ? lanes + j : j);
  LLVMValueRef m = LLVMConstVector(mask, (unsigned)lanes);
  mlc_free(mask);
  return LLVMBuildShuffleVector(cg->b, acc, wide, m, "");
}

/* a * 2^b for integral b, any number of lanes: 16 at a time, a scalar on
 * lane 0 of a vector. */
static LLVMValueRef scalef(cg_t *cg, LLVMValueRef a, LLVMValueRef b) {
  int lanes = lanes_of(a);
  if (lanes == 16) return scalef16(cg, a, b);
  LLVMTypeRef v16 = LLVMVectorType(cg->t_f32, 16);
  if (LLVMGetTypeKind(LLVMTypeOf(a)) != LLVMVectorTypeKind) {
    LLVMValueRef zero = cg_i32(cg, 0);
    LLVMValueRef va = LLVMBuildInsertElement(cg->b, LLVMGetUndef(v16), a, zero, "");
    LLVMValueRef vb = LLVMBuildInsertElement(cg->b, LLVMGetUndef(v16), b, zero, "");
    return LLVMBuildExtractElement(cg->b, scalef16(cg, va, vb), zero, "");
  }
  LLVMValueRef acc = LLVMGetUndef(LLVMTypeOf(a));
  for (int from = 0; from < lanes; from += 16) {
    LLVMValueRef part = scalef16(cg, lanes_slice(cg, a, from, 16), lanes_slice(cg, b, from, 16));
    acc = lanes < 16 ? lanes_slice(cg, part, 0, lanes) : lanes_put(cg, acc, part, from);
  }
  return acc;
}

/* The fused forms' input clamp: NaN goes through it with VSCALEFPS (which
 * propagates it), and is caught by nan_passes after ldexp2 otherwise. */
static LLVMValueRef clamp_fused(cg_t *cg, vm_isa_t isa, LLVMValueRef x, double lo, double hi) {
  return isa == VM_SCALEF ? clamp_keep_nan(cg, x, lo, hi) : clamp(cg, x, lo, hi);
}

/* The fused forms' last step: p * 2^kf (kf integral), NaN where x is. */
static LLVMValueRef scale_fused(cg_t *cg, vm_isa_t isa, LLVMValueRef x, LLVMValueRef p, LLVMValueRef kf) {
  if (isa == VM_SCALEF) return scalef(cg, p, kf);
  return nan_passes(cg, x, ldexp2(cg, p, LLVMBuildFPToSI(cg->b, kf, int_type(cg, x), "")));
}

/* exp(x): below -104 every result rounds to 0, above 89 to +inf; the
 * clamped input still produces those through ldexp2 or VSCALEFPS. */
static LLVMValueRef vm_exp(cg_t *cg, LLVMValueRef x) {
  vm_isa_t isa = vm_isa(cg);
  if (isa == VM_PLAIN) {
    LLVMValueRef xc = clamp(cg, x, -104.0, 89.0);
    LLVMValueRef k = round_to_int(cg, mul(cg, xc, fc(cg, x, VM_LOG2E)));
    LLVMValueRef kf = LLVMBuildSIToFP(cg->b, k, LLVMTypeOf(x), "");
    LLVMValueRef r = sub(cg, xc, mul(cg, kf, fc(cg, x, VM_LN2_C1)));
    r = sub(cg, r, mul(cg, kf, fc(cg, x, VM_LN2_C2)));
    return nan_passes(cg, x, ldexp2(cg, exp_reduced(cg, r), k));
  }
  LLVMValueRef xc = clamp_fused(cg, isa, x, -104.0, 89.0);
  LLVMValueRef kf = rint_f(cg, mul(cg, xc, fc(cg, x, VM_LOG2E)));
  LLVMValueRef r = fma3(cg, kf, fc(cg, x, -VM_LN2_C1), xc);
  r = fma3(cg, kf, fc(cg, x, -VM_LN2_C2), r);
  return scale_fused(cg, isa, x, exp_reduced_fma(cg, r), kf);
}

/* exp2(x) = 2^k e^((x - k) ln2); x - k is exact. */
static LLVMValueRef vm_exp2(cg_t *cg, LLVMValueRef x) {
  vm_isa_t isa = vm_isa(cg);
  if (isa == VM_PLAIN) {
    LLVMValueRef xc = clamp(cg, x, -151.0, 129.0);
    LLVMValueRef k = round_to_int(cg, xc);
    LLVMValueRef kf = LLVMBuildSIToFP(cg->b, k, LLVMTypeOf(x), "");
    LLVMValueRef r = mul(cg, sub(cg, xc, kf), fc(cg, x, VM_LN2));
    return nan_passes(cg, x, ldexp2(cg, exp_reduced(cg, r), k));
  }
  LLVMValueRef xc = clamp_fused(cg, isa, x, -151.0, 129.0);
  LLVMValueRef kf = rint_f(cg, xc);
  LLVMValueRef r = mul(cg, sub(cg, xc, kf), fc(cg, x, VM_LN2));
  return scale_fused(cg, isa, x, exp_reduced_fma(cg, r), kf);
}

/* ------------------------------------------------------------------------ */
/* log, log2                                                                 */
/* ------------------------------------------------------------------------ */

#define VM_SQRT_HALF 0.707106781186547524
#define VM_LOG2E_M1 0.44269504088896340736 /* log2(e) - 1 */

/* x = 2^e (1 + f) with 1 + f in [sqrt(1/2), sqrt(2)); *e as float. Only
 * meaningful for positive finite x (the callers select the others). */
static LLVMValueRef log_split(cg_t *cg, LLVMValueRef x, LLVMValueRef *e) {
  LLVMTypeRef it = int_type(cg, x);
  LLVMValueRef subn = fcmp(cg, LLVMRealOLT, x, fc(cg, x, 0x1p-126));
  LLVMValueRef xs = sel(cg, subn, mul(cg, x, fc(cg, x, 0x1p23)), x);
  LLVMValueRef bits = LLVMBuildBitCast(cg->b, xs, it, "");
  /* Biased exponent - 126: the mantissa below is taken in [1/2, 1). */
  LLVMValueRef ei = LLVMBuildAnd(cg->b, LLVMBuildLShr(cg->b, bits, ic(cg, x, 23), ""), ic(cg, x, 0xff), "");
  ei = LLVMBuildSub(cg->b, ei, sel(cg, subn, ic(cg, x, 126 + 23), ic(cg, x, 126)), "");
  LLVMValueRef mbits = LLVMBuildOr(cg->b, LLVMBuildAnd(cg->b, bits, ic(cg, x, 0x007fffff), ""), ic(cg, x, 0x3f000000), "");
  LLVMValueRef m = LLVMBuildBitCast(cg->b, mbits, LLVMTypeOf(x), "");
  LLVMValueRef small = fcmp(cg, LLVMRealOLT, m, fc(cg, x, VM_SQRT_HALF));
  ei = LLVMBuildSub(cg->b, ei, LLVMBuildZExt(cg->b, small, it, ""), "");
  *e = LLVMBuildSIToFP(cg->b, ei, LLVMTypeOf(x), "");
  return sub(cg, sel(cg, small, add(cg, m, m), m), fc(cg, x, 1.0));
}

/* log(1 + f) - f, for f in [sqrt(1/2) - 1, sqrt(2) - 1): Cephes logf's
 * f^3 P(f) - f^2 / 2. */
static LLVMValueRef log1p_minus_f(cg_t *cg, LLVMValueRef f) {
  static const double p[] = {7.0376836292e-2,  -1.1514610310e-1, 1.1676998740e-1,
                             -1.2420140846e-1, 1.4249322787e-1,  -1.6668057665e-1,
                             2.0000714765e-1,  -2.4999993993e-1, 3.3333331174e-1};
  LLVMValueRef f2 = mul(cg, f, f);
  LLVMValueRef y = mul(cg, mul(cg, horner(cg, f, p, 9), f), f2);
  return sub(cg, y, mul(cg, f2, fc(cg, f, 0.5)));
}

/* The special cases: log(+inf) = +inf, log(+-0) = -inf, negative -> NaN,
 * NaN -> NaN. */
static LLVMValueRef log_specials(cg_t *cg, LLVMValueRef x, LLVMValueRef r) {
  r = sel(cg, fcmp(cg, LLVMRealOEQ, x, fc(cg, x, INFINITY)), x, r);
  r = sel(cg, fcmp(cg, LLVMRealOEQ, x, fc(cg, x, 0.0)), fc(cg, x, -INFINITY), r);
  r = sel(cg, fcmp(cg, LLVMRealOLT, x, fc(cg, x, 0.0)), fc(cg, x, NAN), r);
  return nan_passes(cg, x, r);
}

static LLVMValueRef vm_log(cg_t *cg, LLVMValueRef x) {
  LLVMValueRef e, f = log_split(cg, x, &e);
  LLVMValueRef y = add(cg, log1p_minus_f(cg, f), mul(cg, e, fc(cg, x, VM_LN2_C2)));
  LLVMValueRef r = add(cg, add(cg, f, y), mul(cg, e, fc(cg, x, VM_LN2_C1)));
  return log_specials(cg, x, r);
}

/* log2(x) = e + (f + y) log2(e), summed as y (l - 1) + f (l - 1) + y + f + e
 * so the large terms are added exactly last (Cephes log2f). */
static LLVMValueRef vm_log2(cg_t *cg, LLVMValueRef x) {
  LLVMValueRef e, f = log_split(cg, x, &e);
  LLVMValueRef y = log1p_minus_f(cg, f);
  LLVMValueRef c = fc(cg, x, VM_LOG2E_M1);
  LLVMValueRef z = add(cg, mul(cg, y, c), mul(cg, f, c));
  z = add(cg, add(cg, add(cg, z, y), f), e);
  return log_specials(cg, x, z);
}

/* ------------------------------------------------------------------------ */
/* tanh                                                                      */
/* ------------------------------------------------------------------------ */

/* tanh(x) = sign(x) tanh(|x|): below 0.625 Cephes tanhf's odd polynomial
 * a + a^3 P(a^2), above it 1 - 2 / (e^(2a) + 1) (e^(2a) overflowing to
 * +inf gives 1). Working on |x| and putting the sign back keeps tanh(-0)
 * = -0; NaN goes through the exp. */
static LLVMValueRef vm_tanh(cg_t *cg, LLVMValueRef x) {
  static const double p[] = {-5.70498872745e-3, 2.06390887954e-2, -5.37397155531e-2, 1.33314422036e-1,
                             -3.33332819422e-1};
  LLVMTypeRef it = int_type(cg, x);
  LLVMValueRef bits = LLVMBuildBitCast(cg->b, x, it, "");
  LLVMValueRef sign = LLVMBuildAnd(cg->b, bits, ic(cg, x, INT32_MIN), "");
  LLVMValueRef a = LLVMBuildBitCast(cg->b, LLVMBuildXor(cg->b, bits, sign, ""), LLVMTypeOf(x), "");
  LLVMValueRef a2 = mul(cg, a, a);
  LLVMValueRef small = add(cg, a, mul(cg, a, mul(cg, a2, horner(cg, a2, p, 5))));
  LLVMValueRef e = vm_exp(cg, add(cg, a, a));
  LLVMValueRef big = sub(cg, fc(cg, x, 1.0), LLVMBuildFDiv(cg->b, fc(cg, x, 2.0), add(cg, e, fc(cg, x, 1.0)), ""));
  LLVMValueRef r = sel(cg, fcmp(cg, LLVMRealOLT, a, fc(cg, x, 0.625)), small, big);
  LLVMValueRef rbits = LLVMBuildOr(cg->b, LLVMBuildBitCast(cg->b, r, it, ""), sign, "");
  return LLVMBuildBitCast(cg->b, rbits, LLVMTypeOf(x), "");
}

/* ------------------------------------------------------------------------ */
/* Entry points                                                              */
/* ------------------------------------------------------------------------ */

bool cg_vmath_handles(cg_t *cg, tir_op_t op, LLVMValueRef x) {
  if (scalar_type_of(x) != cg->t_f32) return false;
  return op == TIR_OP_EXP || op == TIR_OP_EXP2 || op == TIR_OP_LOG || op == TIR_OP_LOG2 || op == TIR_OP_TANH;
}

LLVMValueRef cg_vmath(cg_t *cg, tir_op_t op, LLVMValueRef x) {
  switch (op) {
  case TIR_OP_EXP: return vm_exp(cg, x);
  case TIR_OP_EXP2: return vm_exp2(cg, x);
  case TIR_OP_LOG: return vm_log(cg, x);
  case TIR_OP_LOG2: return vm_log2(cg, x);
  default: return vm_tanh(cg, x);
  }
}
