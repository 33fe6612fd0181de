/*
 * npy.h - a private reader and writer of NumPy .npy files (format 1.0 and 2.0;
 * 3.0 is read too), for `mlc-tir eval`'s inputs and outputs.
 *
 * Only C-order arrays of the dtypes the interpreter holds: '<f2' '<f4' '<f8'
 * '|i1' '<i2' '<i4' '<i8' '|u1' '<u2' '<u4' '<u8' '|b1' ('<i1'/'<u1'/'<b1' are
 * read as well). NumPy has no bfloat16: bfloat16 data is written as '<u2' (the
 * raw bits) and a '<u2' array is accepted where bfloat16 is expected. Data is
 * little-endian, as on every host mlc-tune runs on.
 */
#ifndef MLC_TIR_NPY_H
#define MLC_TIR_NPY_H

#include "tir/tir.h"

typedef struct {
  tir_dtype_t dtype;
  int ndim;
  int64_t shape[TIR_MAX_DIMS];
  void *data;    /* row-major elements, owned (tir_npy_free) */
  size_t nbytes; /* elements * dtype bytes */
} tir_npy_t;

/* The descr string of a dtype ("<f4"), NULL when .npy cannot hold it. */
const char *tir_npy_descr(tir_dtype_t t);

/* The preamble (magic, version, header length, header dict padded to a
 * multiple of 64 bytes) for an array; version 1.0 unless the header needs 2.0. */
int tir_npy_header(mlc_strbuf_t *sb, tir_dtype_t t, int ndim, const int64_t *shape);

/* Writes an array (nbytes of data must match shape and dtype). MLC_EIO with
 * the path on failure; MLC_EINVAL for a dtype .npy cannot hold. */
int tir_npy_write(const char *path, tir_dtype_t t, int ndim, const int64_t *shape, const void *data);

/* Parses a whole .npy image; the data is copied into out. `what` names the
 * source in messages. MLC_EPARSE with a detail on malformed input,
 * MLC_EUNSUPPORTED for valid arrays mlc-tune cannot hold (Fortran order,
 * big-endian, other dtypes, more than TIR_MAX_DIMS dimensions). */
int tir_npy_parse(tir_npy_t *out, const void *buf, size_t len, const char *what);
int tir_npy_read(tir_npy_t *out, const char *path);
void tir_npy_free(tir_npy_t *arr); /* frees the data; NULL is fine */

#endif /* MLC_TIR_NPY_H */
