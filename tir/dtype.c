/*
 * dtype.c - dtype names and the 16-bit float conversions.
 *
 * The conversions are written out rather than taken from the compiler's _Float16
 * support because the interpreter (the correctness oracle) must round the same way
 * on every compiler: round to nearest, ties to even, with subnormals, infinities
 * and NaN handled explicitly.
 */
#include "tir/tir.h"

#include <stdio.h>
#include <string.h>

static const struct {
  const char *name;
  uint8_t code, bits;
} dtype_table[] = {
#define ROW_(e, name, code, bits) {name, code, bits},
    TIR_DTYPE_MAP(ROW_)
#undef ROW_
};

int tir_dtype_parse(tir_dtype_t *out, const char *s, size_t len) {
  size_t base = len;
  long lanes = 1;
  /* "float32x8": split at the last 'x' followed only by digits. */
  for (size_t i = len; i > 0; i--) {
    if (s[i - 1] == 'x') {
      if (i < len) {
        char *end;
        char num[16];
        size_t n = len - i;
        if (n >= sizeof(num)) break;
        memcpy(num, s + i, n);
        num[n] = '\0';
        lanes = strtol(num, &end, 10);
        if (*end != '\0' || lanes < 1 || lanes > 65535) return mlc_error_set(MLC_EINVAL, "bad vector lanes in dtype '%.*s'", (int)len, s);
        base = i - 1;
      }
      break;
    }
    if (s[i - 1] < '0' || s[i - 1] > '9') break;
  }
  for (size_t k = 0; k < sizeof(dtype_table) / sizeof(dtype_table[0]); k++) {
    const char *name = dtype_table[k].name;
    if (strlen(name) == base && memcmp(name, s, base) == 0) {
      *out = tir_dtype(dtype_table[k].code, dtype_table[k].bits, (int)lanes);
      return MLC_OK;
    }
  }
  return mlc_error_set(MLC_EINVAL, "unknown dtype '%.*s'", (int)len, s);
}

char *tir_dtype_str(tir_dtype_t t, char *buf) {
  const char *name = NULL;
  for (size_t k = 0; k < sizeof(dtype_table) / sizeof(dtype_table[0]); k++) {
    if (dtype_table[k].code == t.code && dtype_table[k].bits == t.bits) {
      name = dtype_table[k].name;
      break;
    }
  }
  if (name && t.lanes == 1)
    snprintf(buf, 24, "%s", name);
  else if (name)
    snprintf(buf, 24, "%sx%u", name, (unsigned)t.lanes);
  else
    snprintf(buf, 24, "type%u_%u_x%u", (unsigned)t.code, (unsigned)t.bits, (unsigned)t.lanes);
  return buf;
}

static uint32_t f32_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}

static float bits_f32(uint32_t u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}

uint16_t tir_f32_to_f16(float f) {
  uint32_t x = f32_bits(f);
  uint16_t sign = (uint16_t)((x >> 16) & 0x8000u);
  uint32_t exp = (x >> 23) & 0xffu;
  uint32_t mant = x & 0x7fffffu;
  if (exp == 0xff) /* inf or NaN (keep NaN quiet and non-zero) */
    return (uint16_t)(sign | 0x7c00u | (mant ? 0x200u | (mant >> 13) : 0));
  int32_t e = (int32_t)exp - 127 + 15;
  if (e >= 31) return (uint16_t)(sign | 0x7c00u); /* overflow to inf */
  if (e <= 0) {
    /* Subnormal half (or zero): shift the full mantissa with its hidden bit. */
    if (e < -10) return sign;
    uint32_t m = mant | 0x800000u;
    int shift = 14 - e; /* 24-bit mantissa down to 10 - (1 - e) bits */
    uint32_t half = m >> shift;
    uint32_t rem = m & ((1u << shift) - 1);
    uint32_t mid = 1u << (shift - 1);
    if (rem > mid || (rem == mid && (half & 1u))) half++;
    return (uint16_t)(sign | half);
  }
  uint32_t half = ((uint32_t)e << 10) | (mant >> 13);
  uint32_t rem = mant & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (half & 1u))) half++; /* may carry into inf: right */
  return (uint16_t)(sign | half);
}

float tir_f16_to_f32(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  if (exp == 0x1f) return bits_f32(sign | 0x7f800000u | (mant << 13));
  if (exp == 0) {
    if (mant == 0) return bits_f32(sign);
    /* Subnormal: normalise. */
    int e = -1;
    do {
      e++;
      mant <<= 1;
    } while (!(mant & 0x400u));
    mant &= 0x3ffu;
    return bits_f32(sign | ((uint32_t)(127 - 15 - e) << 23) | (mant << 13));
  }
  return bits_f32(sign | ((exp - 15 + 127) << 23) | (mant << 13));
}

uint16_t tir_f32_to_bf16(float f) {
  uint32_t x = f32_bits(f);
  if ((x & 0x7f800000u) == 0x7f800000u && (x & 0x7fffffu)) /* NaN stays NaN */
    return (uint16_t)((x >> 16) | 0x40u);
  uint32_t rounding = 0x7fffu + ((x >> 16) & 1u);
  return (uint16_t)((x + rounding) >> 16);
}

float tir_bf16_to_f32(uint16_t h) { return bits_f32((uint32_t)h << 16); }
