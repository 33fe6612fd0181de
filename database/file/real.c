/*
 * real.c - run times as text that reads back as the same double.
 *
 * Every record carries its run times, so this runs a few times per record
 * on the commit path. The form is what printf's "%.15g" gives when that
 * reads back as the value (short for values a person typed), else "%.17g"
 * (always exact); writing it through snprintf (twice) and checking it with
 * strtod cost about a third of a commit's CPU time, so the digits are made
 * here with one extended-precision multiplication instead, and snprintf is
 * only the fallback for what the fast path cannot prove.
 *
 * Why the fast path is exact (x86-64's long double: a 64-bit mantissa):
 *   - powers of ten up to 10^27 are exact in it (5^27 < 2^64), and so is v;
 *   - s = v * 10^k (or v / 10^-k) is rounded once, relative error <= 2^-64,
 *     so with s in [1e16, 1e17) its absolute error is below 0.0055: unless
 *     s's fraction is within 0.01 of one half (then snprintf decides, as
 *     values with few digits often land there: 663915217146670.125),
 *     n = round(s) is v's 17 significant digits rounded exactly as %.17g
 *     rounds them, and the same double when read back;
 *   - the 15-digit candidate's distance to v, computed the same way, is off
 *     by less than 2^-11 ulp: below 0.499 ulp it reads back, above 0.501
 *     it does not, in between snprintf and strtod decide.
 * The text then follows %g's layout, so the files read as they did. A test
 * compares this with the snprintf form on millions of values
 * (tests/database/test_db_real.c).
 */
#include "database/file/file_priv.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The snprintf form (the reference; also the fallback). */
static void real_slow(char *buf, size_t cap, double v) {
  int n = snprintf(buf, cap, "%.17g", v);
  const char *e = memchr(buf, 'e', (size_t)n);
  const char *end = e ? e : buf + n; /* the mantissa's last digit is end[-1] */
  bool two = end - buf >= 2 && end[-1] >= '0' && end[-1] <= '9' && end[-2] >= '0' && end[-2] <= '9';
  int last2 = two ? (end[-2] - '0') * 10 + (end[-1] - '0') : 0;
  if (!two || last2 <= 11 || last2 >= 89) {
    char short_form[40];
    snprintf(short_form, sizeof short_form, "%.15g", v);
    if (strtod(short_form, NULL) == v) snprintf(buf, cap, "%s", short_form);
  }
}

#if LDBL_MANT_DIG >= 64

enum { POW_MAX = 27 };

static const long double pow10_ld[POW_MAX + 1] = {
    1e0L,  1e1L,  1e2L,  1e3L,  1e4L,  1e5L,  1e6L,  1e7L,  1e8L,  1e9L,
    1e10L, 1e11L, 1e12L, 1e13L, 1e14L, 1e15L, 1e16L, 1e17L, 1e18L, 1e19L,
    1e20L, 1e21L, 1e22L, 1e23L, 1e24L, 1e25L, 1e26L, 1e27L};

/* v * 10^k for |k| <= POW_MAX, rounded once. */
static long double scale(long double v, int k) {
  return k >= 0 ? v * pow10_ld[k] : v / pow10_ld[-k];
}

/* v's 17 significant digits: v ~ n * 10^-k with n in [1e16, 1e17).
 * false when k would leave the exact range. */
static bool digits17(double v, uint64_t *n, int *k) {
  int e2;
  frexp(v, &e2);
  int x = (int)floor((e2 - 1) * 0.30102999566398119521); /* ~ floor(log10 v) */
  int kk = 16 - x;
  for (int tries = 0; tries < 3; tries++) {
    if (kk < -POW_MAX || kk > POW_MAX) return false;
    long double s = scale(v, kk);
    if (s < 1e16L) {
      kk++;
    } else if (s >= 1e17L) {
      kk--;
    } else {
      long double frac = s - floorl(s);
      if (fabsl(frac - 0.5L) < 0.01L) return false; /* too close to call */
      uint64_t r = (uint64_t)llroundl(s);
      if (r == 100000000000000000ULL) { /* rounded up to 18 digits */
        r = 10000000000000000ULL;
        kk--;
      }
      *n = r;
      *k = kk;
      return true;
    }
  }
  return false;
}

/* Whether m * 10^-k reads back as v: 1 yes, 0 no, -1 too close to tell. */
static int reads_back(double v, uint64_t m, int k) {
  if (k < -POW_MAX || k > POW_MAX) return -1;
  int e2;
  frexp(v, &e2);
  long double ulp = ldexpl(1.0L, e2 - DBL_MANT_DIG);
  long double diff = fabsl(scale((long double)m, -k) - (long double)v);
  return diff < 0.499L * ulp ? 1 : diff > 0.501L * ulp ? 0 : -1;
}

/* %g's layout of the significant digits d (ndig of them, no trailing
 * zeros) with decimal exponent x (the first digit's), precision p. */
static void layout(char *buf, const char *d, int ndig, int x, int p, bool neg) {
  char *o = buf;
  if (neg) *o++ = '-';
  if (x < -4 || x >= p) {
    *o++ = d[0];
    if (ndig > 1) {
      *o++ = '.';
      memcpy(o, d + 1, (size_t)ndig - 1);
      o += ndig - 1;
    }
    int ax = x < 0 ? -x : x;
    *o++ = 'e';
    *o++ = x < 0 ? '-' : '+';
    if (ax >= 100) *o++ = (char)('0' + ax / 100);
    *o++ = (char)('0' + ax / 10 % 10);
    *o++ = (char)('0' + ax % 10);
  } else if (x >= 0) {
    for (int i = 0; i <= x; i++) *o++ = i < ndig ? d[i] : '0';
    if (ndig > x + 1) {
      *o++ = '.';
      memcpy(o, d + x + 1, (size_t)(ndig - x - 1));
      o += ndig - x - 1;
    }
  } else {
    *o++ = '0';
    *o++ = '.';
    for (int i = 0; i < -x - 1; i++) *o++ = '0';
    memcpy(o, d, (size_t)ndig);
    o += ndig;
  }
  *o = '\0';
}

/* The digits of m (exactly `width` of them, m < 10^width), trailing zeros
 * dropped; returns how many are left (at least 1). */
static int digits_of(char *d, uint64_t m, int width) {
  for (int i = width - 1; i >= 0; i--) {
    d[i] = (char)('0' + m % 10);
    m /= 10;
  }
  int n = width;
  while (n > 1 && d[n - 1] == '0') n--;
  return n;
}

static bool real_fast(char *buf, double v) {
  bool neg = signbit(v);
  double a = fabs(v);
  if (!(a >= DBL_MIN && a <= DBL_MAX)) return false; /* 0, subnormal, inf, nan */
  uint64_t n;
  int k;
  if (!digits17(a, &n, &k)) return false;
  char d[17];
  int last2 = (int)(n % 100);
  if (last2 <= 11 || last2 >= 89) {
    uint64_t m = (n + 50) / 100; /* 15 digits, or 10^15 after a carry */
    int mk = k - 2, width = 15;
    if (m == 1000000000000000ULL) {
      m /= 10;
      mk--;
    }
    int back = reads_back(a, m, mk);
    if (back < 0) return false;
    if (back) {
      int nd = digits_of(d, m, width);
      layout(buf, d, nd, width - 1 - mk, 15, neg);
      return true;
    }
  }
  int nd = digits_of(d, n, 17);
  layout(buf, d, nd, 16 - k, 17, neg);
  return true;
}

#else
static bool real_fast(char *buf, double v) {
  (void)buf;
  (void)v;
  return false;
}
#endif

void fcodec_real(char buf[FCODEC_REAL_MAX], double v) {
  if (!real_fast(buf, v)) real_slow(buf, FCODEC_REAL_MAX, v);
}

void fcodec_real_reference(char buf[FCODEC_REAL_MAX], double v) {
  real_slow(buf, FCODEC_REAL_MAX, v);
}
