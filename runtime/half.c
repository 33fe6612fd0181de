/*
 * half.c - float16 <-> float32 conversions under the names LLVM 14 calls
 * on x86 CPUs without F16C (__gnu_h2f_ieee, __gnu_f2h_ieee). libgcc defines
 * them only for ARM, so generated code for such a target would not link into
 * a shared library, nor resolve in the JIT, without these. Exact: every
 * half is a float, and float -> half rounds to nearest even with overflow to
 * infinity and NaNs kept quiet (as F16C's vcvtps2ph does).
 */
#include <stdint.h>
#include <string.h>

#include "runtime/runtime.h"

float __gnu_h2f_ieee(uint16_t h);
uint16_t __gnu_f2h_ieee(float f);

float __gnu_h2f_ieee(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000) << 16, exp = (h >> 10) & 0x1f, man = h & 0x3ff, bits;
  if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (man << 13); /* inf, NaN (payload kept) */
  } else if (exp != 0) {
    bits = sign | ((exp + 112) << 23) | (man << 13);
  } else if (man == 0) {
    bits = sign;
  } else { /* subnormal: normalise */
    int e = -1;
    do {
      man <<= 1;
      e++;
    } while (!(man & 0x400));
    bits = sign | ((uint32_t)(112 - e) << 23) | ((man & 0x3ff) << 13);
  }
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}

uint16_t __gnu_f2h_ieee(float f) {
  uint32_t bits;
  memcpy(&bits, &f, sizeof bits);
  uint16_t sign = (uint16_t)((bits >> 16) & 0x8000);
  uint32_t exp = (bits >> 23) & 0xff, man = bits & 0x7fffff;
  if (exp == 0xff) return (uint16_t)(sign | 0x7c00 | (man ? 0x200 | (man >> 13) : 0));
  int32_t e = (int32_t)exp - 127 + 15;
  if (e >= 0x1f) return sign | 0x7c00; /* overflow */
  if (e <= 0) {                        /* subnormal or zero in half */
    if (e < -10) return sign;
    man |= 0x800000;
    uint32_t shift = (uint32_t)(14 - e);
    uint32_t half = man >> shift, rest = man & ((1u << shift) - 1), mid = 1u << (shift - 1);
    if (rest > mid || (rest == mid && (half & 1))) half++;
    return (uint16_t)(sign | half);
  }
  uint32_t half = ((uint32_t)e << 10) | (man >> 13), rest = man & 0x1fff;
  if (rest > 0x1000 || (rest == 0x1000 && (half & 1))) half++; /* may carry into inf: right */
  return (uint16_t)(sign | half);
}
