/*
 * features_row.c - the columns of one store's row from its nest, buffers
 * and arithmetic counts (features.c builds those): loop kinds and GPU
 * threads (group 1), per-buffer access, reuse and stride (group 2), the
 * arithmetic intensity curve (group 3), allocation (group 4) and outer loops
 * (group 5). The definitions follow MetaSchedule's per_store_feature.cc;
 * docs/cost-model.md says where ours differ.
 */
#include <math.h>
#include <string.h>

#include "cost-model/features.h"

static bool uses_level(const fx_affine_t *f, int level) {
  for (int i = 0; i < f->nterms; i++)
    if (f->terms[i].mask & ((uint64_t)1 << level)) return true;
  return false;
}

/* ------------------------------------------------------------------------ */
/* Group 1: loop kinds and threads                                           */
/* ------------------------------------------------------------------------ */

/* Where level i sits for the store: a spatial loop (its index moves with it)
 * ranked by its stride among the store's spatial atoms, or a reduction loop
 * ranked by nesting among the loops the store's index ignores; mixed when the
 * index uses it through a division or a non-affine expression. */
static fx_pos_t level_pos(const fx_row_t *r, int i) {
  const fx_affine_t *wf = r->write_form;
  int64_t coef = 0;
  bool used = false, plain = true;
  for (int t = 0; t < wf->nterms; t++) {
    if (!(wf->terms[t].mask & ((uint64_t)1 << i))) continue;
    used = true;
    if (wf->terms[t].kind == FX_ATOM_DIVMOD || wf->terms[t].kind == FX_ATOM_OPAQUE) plain = false;
    else if (!coef || fx_abs(wf->terms[t].coef) < coef) coef = fx_abs(wf->terms[t].coef);
  }
  if (!used) {
    bool inner = false, outer = false;
    for (int l = 0; l < r->nlevels; l++) {
      if (l == i || uses_level(wf, l)) continue;
      if (l > i) inner = true;
      else outer = true;
    }
    return !inner ? FX_POS_INNER_REDUCE : !outer ? FX_POS_OUTER_REDUCE : FX_POS_MIDDLE_REDUCE;
  }
  if (!plain) return FX_POS_MIXED;
  bool smaller = false, larger = false;
  for (int t = 0; t < wf->nterms; t++) {
    if (wf->terms[t].kind == FX_ATOM_DIVMOD || wf->terms[t].kind == FX_ATOM_OPAQUE) continue;
    if (fx_abs(wf->terms[t].coef) < coef) smaller = true;
    if (fx_abs(wf->terms[t].coef) > coef) larger = true;
  }
  return !smaller ? FX_POS_INNER_SPATIAL : !larger ? FX_POS_OUTER_SPATIAL : FX_POS_MIDDLE_SPATIAL;
}

/* num, prod, len (the innermost one's extent) and the position one-hot of
 * the levels of one kind. */
static void forkind_features(const fx_row_t *r, double *out, tir_for_kind_t kind) {
  int num = 0, inner = -1;
  double prod = 1;
  for (int l = 0; l < r->nlevels; l++) {
    if (r->levels[l].kind != kind) continue;
    num++;
    prod *= (double)r->levels[l].extent;
    inner = l;
  }
  if (!num) {
    out[3 + FX_POS_NONE] = 1;
    return;
  }
  out[0] = num;
  out[1] = prod;
  out[2] = (double)r->levels[inner].extent;
  out[3 + level_pos(r, inner)] = 1;
}

static double thread_len(const fx_row_t *r, const char *tag, size_t prefix_len) {
  for (int l = 0; l < r->nlevels; l++) {
    const char *t = r->levels[l].thread_tag;
    if (t && (prefix_len ? strncmp(t, tag, prefix_len) == 0 : strcmp(t, tag) == 0))
      return (double)r->levels[l].extent;
  }
  return 0;
}

void fx_row_loop_features(fx_row_t *r, bool is_gpu) {
  forkind_features(r, r->raw + FX_OFF_VEC, TIR_FOR_VECTORIZED);
  forkind_features(r, r->raw + FX_OFF_UNROLL, TIR_FOR_UNROLLED);
  forkind_features(r, r->raw + FX_OFF_PARALLEL, TIR_FOR_PARALLEL);
  double *t = r->raw + FX_OFF_THREAD;
  t[0] = is_gpu;
  t[1] = thread_len(r, "blockIdx.x", 0);
  t[2] = thread_len(r, "blockIdx.y", 0);
  t[3] = thread_len(r, "blockIdx.z", 0);
  t[4] = thread_len(r, "threadIdx.x", 0);
  t[5] = thread_len(r, "threadIdx.y", 0);
  t[6] = thread_len(r, "threadIdx.z", 0);
  t[7] = thread_len(r, "vthread", 7);
}

/* ------------------------------------------------------------------------ */
/* Group 2: buffers                                                          */
/* ------------------------------------------------------------------------ */

static double inner_prod(const fx_row_t *r, int level) {
  double p = 1;
  for (int l = level + 1; l < r->nlevels; l++) p *= (double)r->levels[l].extent;
  return p;
}

/* Bytes every buffer touched under the level (this store's and earlier ones'). */
static double touched_bytes(const fx_row_t *r, int id, const void *data, int *count, double *min_bytes) {
  double sum = 0;
  if (count) *count = 0;
  for (int i = 0; i < r->ex->ntouched; i++) {
    const fx_touched_t *t = &r->ex->touched[i];
    if (t->id != id) continue;
    sum += t->bytes;
    if (count && t->data == data) {
      if (!*count || t->bytes < *min_bytes) *min_bytes = t->bytes;
      (*count)++;
    }
  }
  return sum;
}

/* Stride: the smallest coefficient of the innermost level the buffer's index
 * moves with; the loops inside it do not move it. */
static void stride_features(const fx_row_t *r, const fx_buf_t *b, double *stride, double *prod_non_strided) {
  *stride = 0;
  *prod_non_strided = r->prod;
  for (int l = r->nlevels - 1; l >= 0; l--) {
    int64_t s = 0;
    for (int f = 0; f < b->nforms; f++)
      for (int t = 0; t < b->forms[f]->nterms; t++) {
        const fx_term_t *term = &b->forms[f]->terms[t];
        if ((term->mask & ((uint64_t)1 << l)) && (!s || fx_abs(term->coef) < s)) s = fx_abs(term->coef);
      }
    if (s) {
      *stride = (double)s;
      *prod_non_strided = inner_prod(r, l);
      return;
    }
  }
}

/* Reuse: from the innermost level out, the first loop the buffer's index
 * ignores (its iterations re-read the same data), or the first loop under
 * which earlier stores touched the buffer too (serial reuse). */
static void reuse_features(const fx_row_t *r, const fx_buf_t *b, double *f) {
  f[FX_B_REUSE_NONE] = 1;
  for (int l = r->nlevels - 1; l >= 0; l--) {
    bool used = false;
    for (int k = 0; k < b->nforms && !used; k++) used = uses_level(b->forms[k], l);
    double extent = (double)r->levels[l].extent;
    if (!used) {
      f[FX_B_REUSE_NONE] = 0;
      f[FX_B_REUSE_LOOP] = 1;
      f[FX_B_REUSE_CT] = extent;
      f[FX_B_REUSE_DIS_ITER] = inner_prod(r, l);
      if (l == r->nlevels - 1) {
        double bytes = 0;
        for (int i = 0; i < r->nbufs; i++) bytes += r->bufs[i].numel[r->nlevels] * r->bufs[i].elem_bytes;
        f[FX_B_REUSE_DIS_BYTES] = bytes;
      } else {
        f[FX_B_REUSE_DIS_BYTES] = touched_bytes(r, r->levels[l + 1].id, NULL, NULL, NULL);
      }
      return;
    }
    int count;
    double min_bytes = 0;
    double all = touched_bytes(r, r->levels[l].id, b->data, &count, &min_bytes);
    if (count >= 2) {
      f[FX_B_REUSE_NONE] = 0;
      f[FX_B_REUSE_SERIAL] = 1;
      f[FX_B_REUSE_CT] = count - 1;
      f[FX_B_REUSE_DIS_ITER] = min_bytes / b->elem_bytes / extent;
      f[FX_B_REUSE_DIS_BYTES] = all / extent;
      return;
    }
  }
}

static void buffer_features(const fx_row_t *r, fx_buf_t *b) {
  double *f = b->feat;
  f[b->read && b->write ? FX_B_ACC_RW : b->write ? FX_B_ACC_WRITE : FX_B_ACC_READ] = 1;
  f[FX_B_BYTES] = b->bytes;
  f[FX_B_UNIQUE_BYTES] = b->numel[0] * b->elem_bytes;
  double stride, prod_non_strided;
  stride_features(r, b, &stride, &prod_non_strided);
  f[FX_B_STRIDE] = stride;
  if (r->nlevels == 0) {
    f[FX_B_LINES] = f[FX_B_UNIQUE_LINES] = 1;
  } else {
    double frac = stride * b->elem_bytes / FX_CACHE_LINE;
    double lines = r->prod / prod_non_strided * (frac < 1 ? frac : 1);
    f[FX_B_LINES] = lines > 1 ? lines : 1;
    double run = fx_contiguous_elems(b->forms[0]) * b->elem_bytes;
    double ul = f[FX_B_UNIQUE_BYTES] / (run < FX_CACHE_LINE ? run : FX_CACHE_LINE);
    f[FX_B_UNIQUE_LINES] = ul > 1 ? ul : 1;
  }
  reuse_features(r, b, f);
  double proxy = f[FX_B_REUSE_CT] > 0 ? f[FX_B_REUSE_CT] : 0.5;
  f[FX_B_BYTES_D_REUSE] = f[FX_B_BYTES] / proxy;
  f[FX_B_UNIQUE_BYTES_D_REUSE] = f[FX_B_UNIQUE_BYTES] / proxy;
  f[FX_B_LINES_D_REUSE] = f[FX_B_LINES] / proxy;
  f[FX_B_UNIQUE_LINES_D_REUSE] = f[FX_B_UNIQUE_LINES] / proxy;
}

/* Buffers by bytes moved, then distinct bytes, then first access. */
static int cmp_buf(const void *x, const void *y) {
  const fx_buf_t *a = x, *b = y;
  if (a->bytes != b->bytes) return a->bytes > b->bytes ? -1 : 1;
  if (a->feat[FX_B_UNIQUE_BYTES] != b->feat[FX_B_UNIQUE_BYTES])
    return a->feat[FX_B_UNIQUE_BYTES] > b->feat[FX_B_UNIQUE_BYTES] ? -1 : 1;
  return (a->order > b->order) - (a->order < b->order);
}

void fx_row_buffer_features(fx_row_t *r) {
  for (int i = 0; i < r->nbufs; i++) buffer_features(r, &r->bufs[i]);
  qsort(r->bufs, (size_t)r->nbufs, sizeof(fx_buf_t), cmp_buf);
  for (int i = 0; i < r->nbufs && i < FX_NBUF; i++)
    memcpy(r->raw + FX_OFF_BUF + i * FX_NBUFFEAT, r->bufs[i].feat, sizeof r->bufs[i].feat);
}

/* ------------------------------------------------------------------------ */
/* Groups 3, 4, 5                                                            */
/* ------------------------------------------------------------------------ */

/* Floating-point operations per iteration of the whole nest (a mad is 2). */
static double flops(const fx_row_t *r) {
  const double *a = r->arith;
  return 2 * a[FX_FLOAT_MAD] + a[FX_FLOAT_ADD_SUB] + a[FX_FLOAT_MUL] + a[FX_FLOAT_DIV_MOD] + a[FX_FLOAT_CMP] +
         a[FX_FLOAT_MATH_FUNC] + a[FX_FLOAT_OTHER_FUNC];
}

/* Arithmetic intensity (flops / distinct bytes) under each level, from the
 * innermost out, sampled at 10 evenly spaced points of log2(flops) and
 * interpolated linearly between levels. */
static void intensity_curve(const fx_row_t *r, double *out) {
  int n = r->nlevels;
  double total = flops(r);
  if (n == 0 || total <= 0) return;
  double x[FX_MAX_LEVELS], y[FX_MAX_LEVELS];
  double ops = total / r->prod;
  for (int k = 0; k < n; k++) {
    int l = n - 1 - k;
    ops *= (double)r->levels[l].extent;
    double bytes = 0;
    for (int i = 0; i < r->nbufs; i++) bytes += r->bufs[i].numel[l] * r->bufs[i].elem_bytes;
    x[k] = log2(ops > 1 ? ops : 1);
    y[k] = bytes > 0 ? ops / bytes : 0;
  }
  int pt = 0;
  for (int s = 0; s < FX_NCURVE; s++) {
    double target = x[n - 1] * (s + 1) / FX_NCURVE;
    while (pt < n - 1 && x[pt] < target - 1e-9) pt++;
    if (pt == 0 || x[pt] <= x[pt - 1]) out[s] = y[pt];
    else out[s] = y[pt - 1] + (y[pt] - y[pt - 1]) * (target - x[pt - 1]) / (x[pt] - x[pt - 1]);
  }
}

/* The stored buffer's allocation: its bytes, how often it is made (the
 * loops around it), that times its size, and the store's loops inside it. */
static void alloc_features(const fx_row_t *r, double *out) {
  const fx_alloc_t *a = r->st->alloc;
  if (!a) return;
  int n;
  int *stack = fx_frame_loops(&r->ex->walk, r->st->frame, &n);
  double outer = 1, nest_outer = 1;
  for (int d = 0; d < a->depth && d < n; d++) outer *= (double)r->ex->walk.loops[stack[d]].extent;
  for (int l = 0; l < r->nlevels; l++)
    if (r->levels[l].stack_depth > 0 && r->levels[l].stack_depth <= a->depth)
      nest_outer *= (double)r->levels[l].extent;
  out[0] = a->bytes;
  out[1] = a->bytes * outer;
  out[2] = outer;
  out[3] = r->prod / nest_outer;
}

void fx_row_outer_features(fx_row_t *r) {
  intensity_curve(r, r->raw + FX_OFF_CURVE);
  alloc_features(r, r->raw + FX_OFF_ALLOC);
  double *o = r->raw + FX_OFF_OUTER;
  o[0] = r->prod;
  o[1] = r->nlevels;
  o[2] = (double)r->st->auto_unroll;
}
