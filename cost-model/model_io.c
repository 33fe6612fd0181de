/*
 * model_io.c - the files of a saved model other than the booster:
 *
 * data.bin, the training data, little-endian:
 *     0   8 bytes  magic "MLCCMDAT"
 *     8   u32      format version (1)
 *     12  u32      feature width (CM_FEATURE_DIM)
 *     16  u64      samples
 *     24  u64      feature rows
 *     32  samples x (u64 group, f64 secs, u32 rows, u32 0)
 *         rows x width x f32
 *         u64      XXH64 (seed 0) of every byte before it
 * Loading checks the size against the counts, the rows against the samples
 * and the checksum, so a truncated or damaged file is an error naming it.
 *
 * meta.json: {"format": "mlc-cost-model", "version": 1, "kind": "xgb",
 * "feature_dim": 164, "seed": "<16 hex>", "rng": ["<16 hex>" x 4],
 * "nsamples": N, "ntrained": T, "rounds": R}.
 */
#include <math.h>
#include <string.h>

#include "cost-model/model.h"

#define DATA_MAGIC "MLCCMDAT"
#define DATA_VERSION 1
#define HEADER_BYTES 32
#define SAMPLE_BYTES 24

static void put_u32(uint8_t *p, uint32_t v) {
  for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}
static void put_u64(uint8_t *p, uint64_t v) {
  for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i));
}
static uint32_t get_u32(const uint8_t *p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; i++) v |= (uint32_t)p[i] << (8 * i);
  return v;
}
static uint64_t get_u64(const uint8_t *p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; i++) v |= (uint64_t)p[i] << (8 * i);
  return v;
}

int cm_data_save(const cm_data_t *d, const char *path) {
  size_t ns = d->samples.len, nfloats = d->rows.len;
  size_t size = HEADER_BYTES + ns * SAMPLE_BYTES + nfloats * 4 + 8;
  uint8_t *buf = mlc_malloc(size);
  if (!buf) return mlc_error_set(MLC_ENOMEM, "%s: out of memory for %zu bytes", path, size);
  memcpy(buf, DATA_MAGIC, 8);
  put_u32(buf + 8, DATA_VERSION);
  put_u32(buf + 12, CM_FEATURE_DIM);
  put_u64(buf + 16, ns);
  put_u64(buf + 24, nfloats / CM_FEATURE_DIM);
  uint8_t *p = buf + HEADER_BYTES;
  for (size_t i = 0; i < ns; i++, p += SAMPLE_BYTES) {
    const cm_sample_t *s = &d->samples.data[i];
    uint64_t secs;
    memcpy(&secs, &s->secs, 8);
    put_u64(p, s->group);
    put_u64(p + 8, secs);
    put_u32(p + 16, (uint32_t)s->nrows);
    put_u32(p + 20, 0);
  }
  for (size_t i = 0; i < nfloats; i++, p += 4) {
    uint32_t bits;
    memcpy(&bits, &d->rows.data[i], 4);
    put_u32(p, bits);
  }
  put_u64(p, mlc_hash64(buf, size - 8, 0));
  int rc = mlc_write_file(path, buf, size);
  mlc_free(buf);
  return rc;
}

/* The header's counts against the file size; MLC_OK and the counts. */
static int check_header(const uint8_t *buf, size_t len, const char *path, uint64_t *ns, uint64_t *nrows) {
  if (len < HEADER_BYTES + 8 || memcmp(buf, DATA_MAGIC, 8) != 0)
    return mlc_error_set(MLC_EPARSE, "%s: not a cost model data file", path);
  if (get_u32(buf + 8) != DATA_VERSION)
    return mlc_error_set(MLC_EPARSE, "%s: format version %u, expected %d", path, get_u32(buf + 8), DATA_VERSION);
  if (get_u32(buf + 12) != CM_FEATURE_DIM)
    return mlc_error_set(MLC_EINVAL, "%s: feature width %u, this build has %d", path, get_u32(buf + 12),
                         CM_FEATURE_DIM);
  *ns = get_u64(buf + 16);
  *nrows = get_u64(buf + 24);
  size_t body = len - HEADER_BYTES - 8;
  if (*ns > body / SAMPLE_BYTES || *nrows > body / (4 * CM_FEATURE_DIM) ||
      *ns * SAMPLE_BYTES + *nrows * 4 * CM_FEATURE_DIM != body)
    return mlc_error_set(MLC_EPARSE, "%s: %zu bytes do not hold %llu samples and %llu rows (truncated?)", path, len,
                         (unsigned long long)*ns, (unsigned long long)*nrows);
  if (get_u64(buf + len - 8) != mlc_hash64(buf, len - 8, 0))
    return mlc_error_set(MLC_EPARSE, "%s: checksum mismatch (the file is damaged)", path);
  return MLC_OK;
}

static int read_samples(cm_data_t *d, const uint8_t *p, uint64_t ns, uint64_t nrows, const char *path) {
  uint64_t row = 0;
  for (uint64_t i = 0; i < ns; i++, p += SAMPLE_BYTES) {
    cm_sample_t s;
    uint64_t secs = get_u64(p + 8);
    s.group = get_u64(p);
    memcpy(&s.secs, &secs, 8);
    s.nrows = (int32_t)get_u32(p + 16);
    s.row = (int64_t)row;
    if (s.nrows <= 0 || !isfinite(s.secs) || s.secs < 0 || (uint64_t)s.nrows > nrows - row)
      return mlc_error_set(MLC_EPARSE, "%s: sample %llu is malformed", path, (unsigned long long)i);
    row += (uint64_t)s.nrows;
    d->samples.data[d->samples.len++] = s;
  }
  if (row != nrows)
    return mlc_error_set(MLC_EPARSE, "%s: samples cover %llu rows of %llu", path, (unsigned long long)row,
                         (unsigned long long)nrows);
  return MLC_OK;
}

int cm_data_load(cm_data_t *d, const char *path) {
  char *text = NULL;
  size_t len = 0;
  uint64_t ns = 0, nrows = 0;
  int rc = mlc_read_file(&text, &len, path);
  if (rc != MLC_OK) return rc;
  const uint8_t *buf = (const uint8_t *)text;
  if ((rc = check_header(buf, len, path, &ns, &nrows)) != MLC_OK) goto done;
  size_t nfloats = (size_t)nrows * CM_FEATURE_DIM;
  if (mlc_vec_reserve(&d->samples, (size_t)ns) != MLC_OK || mlc_vec_reserve(&d->rows, nfloats) != MLC_OK) {
    rc = mlc_error_set(MLC_ENOMEM, "%s: out of memory for %llu samples", path, (unsigned long long)ns);
    goto done;
  }
  d->samples.len = d->rows.len = 0;
  if ((rc = read_samples(d, buf + HEADER_BYTES, ns, nrows, path)) != MLC_OK) goto done;
  const uint8_t *p = buf + HEADER_BYTES + ns * SAMPLE_BYTES;
  for (size_t i = 0; i < nfloats; i++, p += 4) {
    uint32_t bits = get_u32(p);
    memcpy(&d->rows.data[i], &bits, 4);
    if (!isfinite(d->rows.data[i])) {
      rc = mlc_error_set(MLC_EPARSE, "%s: feature value %zu is not finite", path, i);
      goto done;
    }
  }
  d->rows.len = nfloats;
done:
  if (rc != MLC_OK) d->samples.len = d->rows.len = 0;
  mlc_free(text);
  return rc;
}

/* ------------------------------------------------------------------------ */
/* meta.json                                                                 */
/* ------------------------------------------------------------------------ */

static json_t *hex_u64(uint64_t v) {
  char buf[17];
  mlc_hash_hex(v, buf);
  return json_string(buf);
}

static bool parse_hex_u64(const json_t *j, uint64_t *out) {
  const char *s = json_string_value(j);
  if (!s || strlen(s) != 16) return false;
  uint64_t v = 0;
  for (int i = 0; i < 16; i++) {
    char c = s[i];
    int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
    if (d < 0) return false;
    v = v << 4 | (uint64_t)d;
  }
  *out = v;
  return true;
}

int cm_meta_save(const cm_model_t *m, const char *path) {
  json_t *rng = json_array();
  for (int i = 0; i < 4; i++) json_array_append_new(rng, hex_u64(m->rng.s[i]));
  json_t *meta = json_pack("{s:s, s:i, s:s, s:i, s:o, s:o, s:I, s:I, s:i}", "format", "mlc-cost-model", "version",
                           1, "kind", m->ops->name, "feature_dim", CM_FEATURE_DIM, "seed", hex_u64(m->seed), "rng",
                           rng, "nsamples", (json_int_t)m->data.samples.len, "ntrained", (json_int_t)m->ntrained,
                           "rounds", m->rounds);
  char *text = meta ? mlc_json_dumps(meta) : NULL;
  json_decref(meta);
  if (!text) return mlc_error_set(MLC_ENOMEM, "%s: out of memory", path);
  int rc = mlc_write_file(path, text, strlen(text));
  free(text);
  return rc;
}

static int meta_kind(cm_model_t *m, const json_t *meta, const char *path) {
  const char *format, *kind;
  int64_t version, dim;
  if (mlc_json_get_str(meta, "format", &format) != MLC_OK || mlc_json_get_int(meta, "version", &version) != MLC_OK ||
      mlc_json_get_str(meta, "kind", &kind) != MLC_OK || mlc_json_get_int(meta, "feature_dim", &dim) != MLC_OK) {
    mlc_error_prefix("%s", path);
    return MLC_EPARSE;
  }
  if (strcmp(format, "mlc-cost-model") != 0 || version != 1)
    return mlc_error_set(MLC_EPARSE, "%s: not an mlc cost model (format '%s', version %lld)", path, format,
                         (long long)version);
  if (dim != CM_FEATURE_DIM)
    return mlc_error_set(MLC_EINVAL, "%s: feature width %lld, this build has %d", path, (long long)dim,
                         CM_FEATURE_DIM);
  if (strcmp(kind, cm_xgb_ops.name) == 0) m->ops = &cm_xgb_ops, m->kind = CM_MODEL_XGB;
  else if (strcmp(kind, cm_random_ops.name) == 0) m->ops = &cm_random_ops, m->kind = CM_MODEL_RANDOM;
  else return mlc_error_set(MLC_EPARSE, "%s: unknown model kind '%s'", path, kind);
  return MLC_OK;
}

static int meta_state(cm_model_t *m, const json_t *meta, int64_t *nsamples, const char *path) {
  int64_t ntrained, rounds;
  const json_t *rng = json_object_get(meta, "rng");
  if (mlc_json_get_int(meta, "nsamples", nsamples) != MLC_OK ||
      mlc_json_get_int(meta, "ntrained", &ntrained) != MLC_OK || mlc_json_get_int(meta, "rounds", &rounds) != MLC_OK) {
    mlc_error_prefix("%s", path);
    return MLC_EPARSE;
  }
  if (!parse_hex_u64(json_object_get(meta, "seed"), &m->seed))
    return mlc_error_set(MLC_EPARSE, "%s: field 'seed' must be 16 hex digits", path);
  if (!json_is_array(rng) || json_array_size(rng) != 4)
    return mlc_error_set(MLC_EPARSE, "%s: field 'rng' must be 4 hex strings", path);
  for (int i = 0; i < 4; i++)
    if (!parse_hex_u64(json_array_get(rng, (size_t)i), &m->rng.s[i]))
      return mlc_error_set(MLC_EPARSE, "%s: field 'rng' must be 4 hex strings", path);
  if (*nsamples < 0 || ntrained < 0 || rounds < 0 || rounds > 1000000 || (ntrained > 0) != (rounds > 0))
    return mlc_error_set(MLC_EPARSE, "%s: inconsistent counts (nsamples %lld, ntrained %lld, rounds %lld)", path,
                         (long long)*nsamples, (long long)ntrained, (long long)rounds);
  m->ntrained = ntrained;
  m->rounds = (int)rounds;
  return MLC_OK;
}

int cm_meta_load(cm_model_t *m, int64_t *nsamples, const char *path) {
  json_t *meta = mlc_json_load_file(path);
  if (!meta) return mlc_error_last_code() == MLC_EIO ? MLC_EIO : MLC_EPARSE;
  int rc = meta_kind(m, meta, path);
  if (rc == MLC_OK) rc = meta_state(m, meta, nsamples, path);
  json_decref(meta);
  return rc;
}
