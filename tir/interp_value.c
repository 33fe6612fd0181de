/*
 * interp_value.c - scalar semantics of the reference interpreter: what one
 * lane of an operation computes.
 *
 * Integers are computed in 64-bit unsigned arithmetic (no undefined overflow)
 * and cut back to the dtype's width, so int8 127 + 1 is -128 as on hardware.
 * Floats are computed in double and rounded to the dtype after every
 * operation. For +, -, *, / and sqrt of float32 operands that equals IEEE
 * float32 arithmetic exactly, because double has at least 2p + 2 bits for
 * p = 24 and double rounding is then harmless. float16 and bfloat16 are
 * rounded from double through a float rounded to odd, which makes the final
 * round-to-nearest-even correct for any double (round-to-odd keeps a sticky
 * bit; float has far more than the p + 2 bits needed).
 */
#include "tir/interp_internal.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

bool interp_dtype_supported(tir_dtype_t t) {
  switch (t.code) {
  case TIR_CODE_INT: return t.bits == 8 || t.bits == 16 || t.bits == 32 || t.bits == 64;
  case TIR_CODE_UINT:
    return t.bits == 1 || t.bits == 8 || t.bits == 16 || t.bits == 32 || t.bits == 64;
  case TIR_CODE_FLOAT: return t.bits == 16 || t.bits == 32 || t.bits == 64;
  case TIR_CODE_BFLOAT: return t.bits == 16;
  default: return false;
  }
}

/* x rounded toward zero to float, with the last bit set when inexact. */
static float round_to_odd_float(double x) {
  float f = (float)x;
  if (isnan(x) || (double)f == x) return f;
  if (fabs((double)f) > fabs(x)) f = nextafterf(f, 0.0f);
  uint32_t bits;
  memcpy(&bits, &f, sizeof(bits));
  bits |= 1u;
  memcpy(&f, &bits, sizeof(bits));
  return f;
}

double interp_round(tir_dtype_t t, double x) {
  if (t.code == TIR_CODE_BFLOAT) return tir_bf16_to_f32(tir_f32_to_bf16(round_to_odd_float(x)));
  switch (t.bits) {
  case 16: return tir_f16_to_f32(tir_f32_to_f16(round_to_odd_float(x)));
  case 32: return (float)x;
  default: return x;
  }
}

/* ------------------------------------------------------------------------ */
/* Memory                                                                    */
/* ------------------------------------------------------------------------ */

#define READ_AS_(type, field)        \
  do {                               \
    type v_;                         \
    memcpy(&v_, p, sizeof(v_));      \
    s.field = v_;                    \
  } while (0)

interp_scalar_t interp_read_any(tir_dtype_t t, const unsigned char *p) {
  interp_scalar_t s = {0};
  uint16_t h;
  switch (interp_class(t) * 100 + t.bits) {
  case INTERP_INT * 100 + 8: READ_AS_(int8_t, i); break;
  case INTERP_INT * 100 + 16: READ_AS_(int16_t, i); break;
  case INTERP_INT * 100 + 32: READ_AS_(int32_t, i); break;
  case INTERP_INT * 100 + 64: READ_AS_(int64_t, i); break;
  case INTERP_UINT * 100 + 1: s.u = p[0] != 0; break;
  case INTERP_UINT * 100 + 8: READ_AS_(uint8_t, u); break;
  case INTERP_UINT * 100 + 16: READ_AS_(uint16_t, u); break;
  case INTERP_UINT * 100 + 32: READ_AS_(uint32_t, u); break;
  case INTERP_UINT * 100 + 64: READ_AS_(uint64_t, u); break;
  case INTERP_FLOAT * 100 + 16:
    memcpy(&h, p, sizeof(h));
    s.f = t.code == TIR_CODE_BFLOAT ? tir_bf16_to_f32(h) : tir_f16_to_f32(h);
    break;
  case INTERP_FLOAT * 100 + 32: READ_AS_(float, f); break;
  case INTERP_FLOAT * 100 + 64: READ_AS_(double, f); break;
  default: MLC_PANIC("interp_read_any: unchecked dtype code %d bits %d", t.code, t.bits);
  }
  return s;
}
#undef READ_AS_

#define WRITE_AS_(type, value)       \
  do {                               \
    type v_ = (type)(value);         \
    memcpy(p, &v_, sizeof(v_));      \
  } while (0)

void interp_write_any(tir_dtype_t t, unsigned char *p, interp_scalar_t s) {
  switch (interp_class(t) * 100 + t.bits) {
  case INTERP_INT * 100 + 8:
  case INTERP_UINT * 100 + 8: WRITE_AS_(uint8_t, s.u); break;
  case INTERP_UINT * 100 + 1: p[0] = s.u != 0; break;
  case INTERP_INT * 100 + 16:
  case INTERP_UINT * 100 + 16: WRITE_AS_(uint16_t, s.u); break;
  case INTERP_INT * 100 + 32:
  case INTERP_UINT * 100 + 32: WRITE_AS_(uint32_t, s.u); break;
  case INTERP_INT * 100 + 64:
  case INTERP_UINT * 100 + 64: WRITE_AS_(uint64_t, s.u); break;
  case INTERP_FLOAT * 100 + 16:
    if (t.code == TIR_CODE_BFLOAT)
      WRITE_AS_(uint16_t, tir_f32_to_bf16((float)s.f));
    else
      WRITE_AS_(uint16_t, tir_f32_to_f16((float)s.f));
    break;
  case INTERP_FLOAT * 100 + 32: WRITE_AS_(float, s.f); break;
  case INTERP_FLOAT * 100 + 64: WRITE_AS_(double, s.f); break;
  default: MLC_PANIC("interp_write_any: unchecked dtype code %d bits %d", t.code, t.bits);
  }
}
#undef WRITE_AS_

/* Fresh allocations are poisoned rather than zeroed (TVM does not zero them
 * either): quiet NaNs with a 0x5A-style payload for floats, 0x5A bytes for
 * everything else, so a read before a write shows up in results. */
void interp_poison(tir_dtype_t t, unsigned char *p, int64_t n) {
  int lane = interp_lane_bytes(t);
  memset(p, 0x5A, (size_t)(n * lane));
  if (interp_class(t) != INTERP_FLOAT) return;
  uint64_t pattern = t.code == TIR_CODE_BFLOAT ? 0x7FDA
                     : t.bits == 16            ? 0x7E5A
                     : t.bits == 32            ? 0x7FE5A5A5u
                                               : UINT64_C(0x7FFA5A5A5A5A5A5A);
  for (int64_t i = 0; i < n; i++) {
    switch (lane) {
    case 2: { uint16_t v = (uint16_t)pattern; memcpy(p + i * lane, &v, 2); break; }
    case 4: { uint32_t v = (uint32_t)pattern; memcpy(p + i * lane, &v, 4); break; }
    default: memcpy(p + i * lane, &pattern, 8); break;
    }
  }
}

/* ------------------------------------------------------------------------ */
/* Arithmetic                                                                */
/* ------------------------------------------------------------------------ */

static const char *div_name(tir_expr_kind_t kind) {
  switch (kind) {
  case TIR_DIV: return "truncdiv";
  case TIR_MOD: return "truncmod";
  case TIR_FLOOR_DIV: return "floordiv";
  default: return "floormod";
  }
}

/* Integer division and modulo; b != 0. Truncating for DIV/MOD, flooring for
 * FLOOR_DIV/FLOOR_MOD. INT64_MIN / -1 wraps (as the rest of the arithmetic). */
static uint64_t int_divmod(tir_expr_kind_t kind, bool is_signed, interp_scalar_t a,
                           interp_scalar_t b) {
  bool is_div = kind == TIR_DIV || kind == TIR_FLOOR_DIV;
  if (!is_signed) return is_div ? a.u / b.u : a.u % b.u;
  if (b.i == -1) return is_div ? 0 - a.u : 0;
  int64_t q = a.i / b.i, r = a.i % b.i;
  if ((kind == TIR_FLOOR_DIV || kind == TIR_FLOOR_MOD) && r != 0 && ((r < 0) != (b.i < 0))) {
    q -= 1;
    r += b.i;
  }
  return is_div ? (uint64_t)q : (uint64_t)r;
}

/* Comparisons and min/max: -1, 0 or 1 by operand class. NaN compares as
 * "unordered": every ordered comparison is false (handled by the caller). */
static int compare(interp_class_t c, interp_scalar_t a, interp_scalar_t b) {
  switch (c) {
  case INTERP_INT: return (a.i > b.i) - (a.i < b.i);
  case INTERP_FLOAT: return (a.f > b.f) - (a.f < b.f);
  default: return (a.u > b.u) - (a.u < b.u);
  }
}

static bool is_unordered(interp_class_t c, interp_scalar_t a, interp_scalar_t b) {
  return c == INTERP_FLOAT && (isnan(a.f) || isnan(b.f));
}

/* Comparisons, logic, min and max: the same for every class. */
static bool relational(tir_expr_kind_t kind, tir_dtype_t ot, interp_scalar_t a,
                       interp_scalar_t b, interp_scalar_t *out) {
  interp_class_t c = interp_class(ot);
  bool nan = is_unordered(c, a, b);
  int cmp = compare(c, a, b);
  switch (kind) {
  case TIR_EQ: out->u = !nan && cmp == 0; return true;
  case TIR_NE: out->u = nan || cmp != 0; return true;
  case TIR_LT: out->u = !nan && cmp < 0; return true;
  case TIR_LE: out->u = !nan && cmp <= 0; return true;
  case TIR_GT: out->u = !nan && cmp > 0; return true;
  case TIR_GE: out->u = !nan && cmp >= 0; return true;
  case TIR_AND: out->u = interp_truthy(ot, a) && interp_truthy(ot, b); return true;
  case TIR_OR: out->u = interp_truthy(ot, a) || interp_truthy(ot, b); return true;
  /* As TVM's LLVM codegen: select(a < b, a, b), so a NaN in a gives b. */
  case TIR_MIN: *out = !nan && cmp < 0 ? a : b; return true;
  case TIR_MAX: *out = !nan && cmp > 0 ? a : b; return true;
  default: return false;
  }
}

static int int_binop(interp_t *it, tir_expr_kind_t kind, tir_dtype_t rt, tir_dtype_t ot,
                     interp_scalar_t a, interp_scalar_t b, interp_scalar_t *out) {
  uint64_t r;
  switch (kind) {
  case TIR_ADD: r = a.u + b.u; break;
  case TIR_SUB: r = a.u - b.u; break;
  case TIR_MUL: r = a.u * b.u; break;
  default:
    if (b.u == 0) {
      char x[40], y[40];
      return interp_fail(it, "division by zero in %s(%s, %s)", div_name(kind),
                         interp_scalar_str(ot, a, x, sizeof(x)),
                         interp_scalar_str(ot, b, y, sizeof(y)));
    }
    r = int_divmod(kind, interp_class(ot) == INTERP_INT, a, b);
  }
  *out = interp_wrap(rt, r);
  return MLC_OK;
}

static double float_arith(tir_expr_kind_t kind, double a, double b) {
  switch (kind) {
  case TIR_ADD: return a + b;
  case TIR_SUB: return a - b;
  case TIR_MUL: return a * b;
  case TIR_DIV: return a / b;
  case TIR_MOD: return fmod(a, b);
  case TIR_FLOOR_DIV: return floor(a / b);
  default: return a - floor(a / b) * b; /* FLOOR_MOD, as TVM defines it */
  }
}

int interp_binop(interp_t *it, tir_expr_kind_t kind, tir_dtype_t rt, tir_dtype_t ot,
                 interp_scalar_t a, interp_scalar_t b, interp_scalar_t *out) {
  if (relational(kind, ot, a, b, out)) return MLC_OK;
  switch (interp_class(ot)) {
  case INTERP_FLOAT:
    out->f = interp_round(rt, float_arith(kind, a.f, b.f));
    return MLC_OK;
  case INTERP_INT:
  case INTERP_UINT: return int_binop(it, kind, rt, ot, a, b, out);
  default: return interp_fail(it, "arithmetic on handles (%s)", tir_expr_kind_name(kind));
  }
}

bool interp_truthy(tir_dtype_t t, interp_scalar_t s) {
  return interp_class(t) == INTERP_FLOAT ? s.f != 0.0 : s.u != 0;
}

/* ------------------------------------------------------------------------ */
/* Casts                                                                     */
/* ------------------------------------------------------------------------ */

static double to_double(tir_dtype_t from, interp_scalar_t x) {
  switch (interp_class(from)) {
  case INTERP_INT: return (double)x.i;
  case INTERP_FLOAT: return x.f;
  default: return (double)x.u;
  }
}

/* float -> integer: truncation toward zero; NaN and values outside the
 * target's range are errors (C leaves them undefined, LLVM gives poison). */
static int float_to_int(interp_t *it, tir_dtype_t to, double x, interp_scalar_t *out) {
  double t = trunc(x);
  bool ok;
  if (to.code == TIR_CODE_INT)
    ok = t >= -ldexp(1.0, to.bits - 1) && t < ldexp(1.0, to.bits - 1);
  else
    ok = t >= 0.0 && t < ldexp(1.0, to.bits);
  if (!ok) {
    char buf[24];
    return interp_fail(it, "cast of %.17g to %s is out of range", x, tir_dtype_str(to, buf));
  }
  if (to.code == TIR_CODE_INT)
    out->i = (int64_t)t;
  else
    out->u = (uint64_t)t;
  return MLC_OK;
}

int interp_cast(interp_t *it, tir_dtype_t to, tir_dtype_t from, interp_scalar_t x,
                interp_scalar_t *out) {
  interp_class_t fc = interp_class(from), tc = interp_class(to);
  if (fc == INTERP_HANDLE || tc == INTERP_HANDLE) {
    char a[24], b[24];
    return interp_fail(it, "cannot cast %s to %s", tir_dtype_str(from, a), tir_dtype_str(to, b));
  }
  if (tir_dtype_is_bool(to)) {
    out->u = interp_truthy(from, x);
    return MLC_OK;
  }
  if (tc == INTERP_FLOAT) {
    out->f = interp_round(to, to_double(from, x));
    return MLC_OK;
  }
  if (fc == INTERP_FLOAT) return float_to_int(it, to, x.f, out);
  *out = interp_wrap(to, x.u);
  return MLC_OK;
}

/* The lane's bits as stored in memory. */
static uint64_t scalar_bits(tir_dtype_t t, interp_scalar_t x) {
  unsigned char buf[8] = {0};
  interp_write(t, buf, x);
  uint64_t bits = 0;
  memcpy(&bits, buf, (size_t)interp_lane_bytes(t)); /* little-endian hosts */
  return bits;
}

int interp_reinterpret(interp_t *it, tir_dtype_t to, tir_dtype_t from, interp_scalar_t x,
                       interp_scalar_t *out) {
  if (to.bits != from.bits || !interp_dtype_supported(to) || !interp_dtype_supported(from)) {
    char a[24], b[24];
    return interp_fail(it, "cannot reinterpret %s as %s", tir_dtype_str(from, a),
                       tir_dtype_str(to, b));
  }
  uint64_t bits = scalar_bits(from, x);
  unsigned char buf[8];
  memcpy(buf, &bits, sizeof(buf));
  *out = interp_read(to, buf);
  return MLC_OK;
}

char *interp_scalar_str(tir_dtype_t t, interp_scalar_t s, char *buf, size_t len) {
  switch (interp_class(t)) {
  case INTERP_INT: snprintf(buf, len, "%" PRId64, s.i); break;
  case INTERP_FLOAT: snprintf(buf, len, "%.9g", s.f); break;
  default: snprintf(buf, len, "%" PRIu64, s.u); break;
  }
  return buf;
}
