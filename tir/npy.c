/*
 * npy.c - NumPy .npy files for `mlc-tir eval` (see npy.h for what is held).
 *
 * The format: the magic "\x93NUMPY", a major and a minor version byte, the
 * header length (2 bytes little-endian in 1.0, 4 bytes in 2.0 and 3.0), then
 * a Python dict literal such as
 *   {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
 * padded with spaces and a newline so the data starts at a multiple of 64,
 * then the raw elements. The header is untrusted input: it is parsed by a
 * small recursive reader that accepts exactly the three keys NumPy writes,
 * with every size checked for overflow before use.
 */
#include "tir/npy.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#define NPY_MAGIC "\x93NUMPY"
#define NPY_MAGIC_LEN 6
#define NPY_ALIGN 64

/* The dtypes mlc-tune reads and writes. The first spelling is what NumPy
 * writes; the second is also accepted on reading.
 *      descr   also    dtype */
#define NPY_DTYPES(X)                 \
  X("<f2", "<f2", FLOAT16)            \
  X("<f4", "<f4", FLOAT32)            \
  X("<f8", "<f8", FLOAT64)            \
  X("|i1", "<i1", INT8)               \
  X("<i2", "<i2", INT16)              \
  X("<i4", "<i4", INT32)              \
  X("<i8", "<i8", INT64)              \
  X("|u1", "<u1", UINT8)              \
  X("<u2", "<u2", UINT16)             \
  X("<u4", "<u4", UINT32)             \
  X("<u8", "<u8", UINT64)             \
  X("|b1", "<b1", BOOL)

static const struct {
  const char *descr, *also;
  tir_dtype_t (*dtype)(void);
} npy_dtypes[] = {
#define ROW_(descr, also, dt) {descr, also, tir_dt_##dt},
    NPY_DTYPES(ROW_)
#undef ROW_
};
#define N_NPY_DTYPES ((int)(sizeof(npy_dtypes) / sizeof(npy_dtypes[0])))

const char *tir_npy_descr(tir_dtype_t t) {
  /* NumPy has no bfloat16: its bits travel as uint16. */
  if (t.code == TIR_CODE_BFLOAT && t.bits == 16 && t.lanes == 1) return "<u2";
  for (int i = 0; i < N_NPY_DTYPES; i++)
    if (tir_dtype_eq(npy_dtypes[i].dtype(), t)) return npy_dtypes[i].descr;
  return NULL;
}

/* ------------------------------------------------------------------------ */
/* Writing                                                                   */
/* ------------------------------------------------------------------------ */

int tir_npy_header(mlc_strbuf_t *sb, tir_dtype_t t, int ndim, const int64_t *shape) {
  char buf[32];
  const char *descr = tir_npy_descr(t);
  if (!descr) return mlc_error_set(MLC_EINVAL, "dtype %s cannot be stored in .npy", tir_dtype_str(t, buf));
  mlc_strbuf_t dict;
  mlc_sb_init(&dict);
  mlc_sb_printf(&dict, "{'descr': '%s', 'fortran_order': False, 'shape': (", descr);
  for (int i = 0; i < ndim; i++) mlc_sb_printf(&dict, i ? ", %lld" : "%lld", (long long)shape[i]);
  mlc_sb_append(&dict, ndim == 1 ? ",), }" : "), }");
  /* Version 1.0 holds headers up to 65535 bytes; 2.0 widens the length field. */
  size_t prefix = NPY_MAGIC_LEN + 2 + 2;
  size_t hlen = dict.len + 1; /* + '\n' */
  int major = 1;
  if (prefix + hlen + NPY_ALIGN > 65535) {
    major = 2;
    prefix += 2;
  }
  size_t pad = (NPY_ALIGN - (prefix + hlen) % NPY_ALIGN) % NPY_ALIGN;
  hlen += pad;
  mlc_sb_appendn(sb, NPY_MAGIC, NPY_MAGIC_LEN);
  mlc_sb_putc(sb, (char)major);
  mlc_sb_putc(sb, 0);
  for (int i = 0; i < (major == 1 ? 2 : 4); i++) mlc_sb_putc(sb, (char)((hlen >> (8 * i)) & 0xff));
  mlc_sb_appendn(sb, dict.data ? dict.data : "", dict.len);
  for (size_t i = 0; i < pad; i++) mlc_sb_putc(sb, ' ');
  mlc_sb_putc(sb, '\n');
  bool failed = dict.failed || sb->failed;
  mlc_sb_free(&dict);
  return failed ? mlc_error_set(MLC_ENOMEM, "out of memory writing a .npy header") : MLC_OK;
}

/* Elements of a shape times bytes each, or false on overflow. */
static bool shape_bytes(int ndim, const int64_t *shape, size_t elem, size_t *out) {
  size_t n = elem;
  for (int i = 0; i < ndim; i++) {
    if (shape[i] < 0) return false;
    if (shape[i] != 0 && n > SIZE_MAX / (size_t)shape[i]) return false;
    n *= (size_t)shape[i];
  }
  *out = n;
  return true;
}

int tir_npy_write(const char *path, tir_dtype_t t, int ndim, const int64_t *shape, const void *data) {
  mlc_strbuf_t sb;
  mlc_sb_init(&sb);
  size_t nbytes = 0;
  FILE *fp = NULL;
  int st = tir_npy_header(&sb, t, ndim, shape);
  if (st != MLC_OK) goto done;
  if (!shape_bytes(ndim, shape, (size_t)tir_dtype_bytes(t), &nbytes)) {
    st = mlc_error_set(MLC_EINVAL, "%s: shape too large", path);
    goto done;
  }
  fp = fopen(path, "wb");
  if (!fp || fwrite(sb.data, 1, sb.len, fp) != sb.len ||
      (nbytes && fwrite(data, 1, nbytes, fp) != nbytes)) {
    st = mlc_error_set(MLC_EIO, "%s: %s", path, strerror(errno));
    goto done;
  }
  if (fclose(fp) != 0) {
    fp = NULL;
    st = mlc_error_set(MLC_EIO, "%s: %s", path, strerror(errno));
    goto done;
  }
  fp = NULL;
done:
  if (fp) fclose(fp);
  mlc_sb_free(&sb);
  return st;
}

/* ------------------------------------------------------------------------ */
/* Reading                                                                   */
/* ------------------------------------------------------------------------ */

/* A cursor over the header dict. */
typedef struct {
  const char *p, *end;
  const char *what;
} hdr_t;

static int hdr_error(const hdr_t *h, const char *expected) {
  return mlc_error_set(MLC_EPARSE, "%s: malformed .npy header: expected %s", h->what, expected);
}

static void skip_ws(hdr_t *h) {
  while (h->p < h->end && (*h->p == ' ' || *h->p == '\t' || *h->p == '\n' || *h->p == '\r')) h->p++;
}

static bool eat(hdr_t *h, char c) {
  skip_ws(h);
  if (h->p < h->end && *h->p == c) {
    h->p++;
    return true;
  }
  return false;
}

/* 'text' or "text" (no escapes: NumPy's keys and descrs need none). */
static int parse_str(hdr_t *h, char *buf, size_t len) {
  skip_ws(h);
  if (h->p >= h->end || (*h->p != '\'' && *h->p != '"')) return hdr_error(h, "a string");
  char q = *h->p++;
  const char *start = h->p;
  while (h->p < h->end && *h->p != q) h->p++;
  if (h->p >= h->end) return hdr_error(h, "the end of a string");
  size_t n = (size_t)(h->p - start);
  h->p++;
  if (n >= len) return hdr_error(h, "a short string");
  memcpy(buf, start, n);
  buf[n] = '\0';
  return MLC_OK;
}

static int parse_bool(hdr_t *h, bool *out) {
  skip_ws(h);
  size_t left = (size_t)(h->end - h->p);
  if (left >= 4 && memcmp(h->p, "True", 4) == 0) {
    h->p += 4;
    *out = true;
    return MLC_OK;
  }
  if (left >= 5 && memcmp(h->p, "False", 5) == 0) {
    h->p += 5;
    *out = false;
    return MLC_OK;
  }
  return hdr_error(h, "True or False");
}

static int parse_dim(hdr_t *h, int64_t *out) {
  skip_ws(h);
  if (h->p >= h->end || *h->p < '0' || *h->p > '9') return hdr_error(h, "a non-negative integer in the shape");
  int64_t v = 0;
  while (h->p < h->end && *h->p >= '0' && *h->p <= '9') {
    int d = *h->p++ - '0';
    if (v > (INT64_MAX - d) / 10)
      return mlc_error_set(MLC_EPARSE, "%s: malformed .npy header: shape dimension overflows", h->what);
    v = v * 10 + d;
  }
  if (h->p < h->end && *h->p == 'L') h->p++; /* Python 2 longs */
  *out = v;
  return MLC_OK;
}

/* (d0, d1, ...) with an optional trailing comma; () for a scalar. */
static int parse_shape(hdr_t *h, tir_npy_t *out) {
  if (!eat(h, '(')) return hdr_error(h, "'(' starting the shape");
  out->ndim = 0;
  while (!eat(h, ')')) {
    if (out->ndim == TIR_MAX_DIMS)
      return mlc_error_set(MLC_EUNSUPPORTED, "%s: more than %d dimensions", h->what, TIR_MAX_DIMS);
    int st = parse_dim(h, &out->shape[out->ndim++]);
    if (st != MLC_OK) return st;
    if (!eat(h, ',')) {
      if (!eat(h, ')')) return hdr_error(h, "',' or ')' in the shape");
      break;
    }
  }
  return MLC_OK;
}

static int parse_descr(hdr_t *h, tir_dtype_t *out) {
  char descr[32];
  int st = parse_str(h, descr, sizeof(descr));
  if (st != MLC_OK) return st;
  for (int i = 0; i < N_NPY_DTYPES; i++) {
    if (strcmp(descr, npy_dtypes[i].descr) == 0 || strcmp(descr, npy_dtypes[i].also) == 0) {
      *out = npy_dtypes[i].dtype();
      return MLC_OK;
    }
  }
  if (descr[0] == '>')
    return mlc_error_set(MLC_EUNSUPPORTED, "%s: big-endian data ('%s') is not supported", h->what, descr);
  return mlc_error_set(MLC_EUNSUPPORTED, "%s: dtype '%s' is not supported", h->what, descr);
}

/* {'descr': ..., 'fortran_order': ..., 'shape': ...} in any order. */
static int parse_dict(hdr_t *h, tir_npy_t *out) {
  bool seen[3] = {false, false, false}, fortran = false;
  int st = MLC_OK;
  if (!eat(h, '{')) return hdr_error(h, "'{'");
  while (!eat(h, '}')) {
    char key[32];
    if ((st = parse_str(h, key, sizeof(key))) != MLC_OK) return st;
    if (!eat(h, ':')) return hdr_error(h, "':' after a key");
    int k = strcmp(key, "descr") == 0 ? 0 : strcmp(key, "fortran_order") == 0 ? 1
          : strcmp(key, "shape") == 0 ? 2 : -1;
    if (k < 0) return mlc_error_set(MLC_EPARSE, "%s: malformed .npy header: unknown key '%s'", h->what, key);
    if (seen[k]) return mlc_error_set(MLC_EPARSE, "%s: malformed .npy header: key '%s' twice", h->what, key);
    seen[k] = true;
    st = k == 0 ? parse_descr(h, &out->dtype) : k == 1 ? parse_bool(h, &fortran) : parse_shape(h, out);
    if (st != MLC_OK) return st;
    if (!eat(h, ',')) {
      if (!eat(h, '}')) return hdr_error(h, "',' or '}' after a value");
      break;
    }
  }
  skip_ws(h);
  if (h->p != h->end) return hdr_error(h, "the end of the header after '}'");
  if (!seen[0] || !seen[1] || !seen[2])
    return mlc_error_set(MLC_EPARSE, "%s: malformed .npy header: missing '%s'", h->what,
                         !seen[0] ? "descr" : !seen[1] ? "fortran_order" : "shape");
  if (fortran)
    return mlc_error_set(MLC_EUNSUPPORTED, "%s: Fortran-order arrays are not supported (save with C order, "
                         "e.g. numpy.ascontiguousarray)", h->what);
  return MLC_OK;
}

/* Magic, version and header length: *hdr and *hlen delimit the dict. */
static int parse_preamble(const unsigned char *b, size_t len, const char *what, size_t *hstart, size_t *hlen) {
  if (len < NPY_MAGIC_LEN + 2 || memcmp(b, NPY_MAGIC, NPY_MAGIC_LEN) != 0)
    return mlc_error_set(MLC_EPARSE, "%s: not a .npy file (bad magic)", what);
  int major = b[6], minor = b[7];
  if (major < 1 || major > 3 || minor != 0)
    return mlc_error_set(MLC_EUNSUPPORTED, "%s: .npy format version %d.%d is not supported", what, major, minor);
  size_t nlen = major == 1 ? 2 : 4;
  if (len < NPY_MAGIC_LEN + 2 + nlen) return mlc_error_set(MLC_EPARSE, "%s: truncated .npy header", what);
  size_t n = 0;
  for (size_t i = 0; i < nlen; i++) n |= (size_t)b[8 + i] << (8 * i);
  *hstart = NPY_MAGIC_LEN + 2 + nlen;
  if (n > len - *hstart) return mlc_error_set(MLC_EPARSE, "%s: truncated .npy header", what);
  *hlen = n;
  return MLC_OK;
}

int tir_npy_parse(tir_npy_t *out, const void *buf, size_t len, const char *what) {
  const unsigned char *b = buf;
  size_t hstart = 0, hlen = 0, nbytes = 0;
  memset(out, 0, sizeof(*out));
  int st = parse_preamble(b, len, what, &hstart, &hlen);
  if (st != MLC_OK) return st;
  hdr_t h = {(const char *)b + hstart, (const char *)b + hstart + hlen, what};
  if ((st = parse_dict(&h, out)) != MLC_OK) return st;
  if (!shape_bytes(out->ndim, out->shape, (size_t)tir_dtype_bytes(out->dtype), &nbytes))
    return mlc_error_set(MLC_EPARSE, "%s: .npy shape overflows", what);
  size_t have = len - hstart - hlen;
  if (have < nbytes)
    return mlc_error_set(MLC_EPARSE, "%s: truncated .npy data: expected %zu bytes, found %zu", what, nbytes, have);
  if (have > nbytes)
    return mlc_error_set(MLC_EPARSE, "%s: %zu unexpected bytes after the .npy data", what, have - nbytes);
  out->data = mlc_malloc(nbytes ? nbytes : 1);
  if (!out->data) return mlc_error_set(MLC_ENOMEM, "%s: out of memory", what);
  if (nbytes) memcpy(out->data, b + hstart + hlen, nbytes);
  out->nbytes = nbytes;
  return MLC_OK;
}

int tir_npy_read(tir_npy_t *out, const char *path) {
  char *buf = NULL;
  size_t len = 0;
  memset(out, 0, sizeof(*out));
  int st = mlc_read_file(&buf, &len, path);
  if (st != MLC_OK) return st;
  st = tir_npy_parse(out, buf, len, path);
  mlc_free(buf);
  return st;
}

void tir_npy_free(tir_npy_t *arr) {
  if (!arr) return;
  mlc_free(arr->data);
  arr->data = NULL;
  arr->nbytes = 0;
}
