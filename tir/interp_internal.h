/*
 * interp_internal.h - private to the reference interpreter (tir/interp*.c).
 *
 * The interpreter walks the IR tree directly. Its state:
 *   - values: a scalar inline, or lanes in a stack-like scratch area (vectors);
 *   - an environment: variables and buffers are looked up by node identity in
 *     two pointer maps whose slots hold the current binding. Binding pushes the
 *     old slot content on an undo log; leaving a statement pops back to where
 *     it started, so scopes cost nothing to enter and never allocate;
 *   - storages: the memory behind buffers (host arguments, or allocations made
 *     for alloc_buffer / T.decl_buffer, freed when their scope ends). A handle
 *     variable's value is the index of its storage.
 *
 * Files: interp.c (entry point, arguments), interp_env.c (maps, undo, scratch,
 * storages, errors), interp_value.c (scalar semantics: wrap-around, rounding,
 * casts, memory), interp_expr.c (expressions, loads), interp_call.c (calls),
 * interp_access.c (buffer views, addresses and bounds checks), interp_stmt.c
 * (statements, stores, allocations), interp_block.c (blocks, match_buffer),
 * interp_wmma.c (the WMMA tensor-core calls), interp_mma.c (the mma.sync
 * calls of the warp layout, run lane by lane).
 *
 * The hot path of a kernel (a scalar load or store with variable indices, a
 * float32 multiply-add, a block instance) is kept short: small helpers are
 * inline here and error formatting is out of line (INTERP_COLD).
 */
#ifndef MLC_TIR_INTERP_INTERNAL_H
#define MLC_TIR_INTERP_INTERNAL_H

#include "tir/ptrmap.h"
#include "tir/tir.h"

#include <string.h>

/* Error paths kept out of the hot functions, so those stay small leaves. */
#if defined(__GNUC__)
#define INTERP_COLD __attribute__((noinline, cold))
#else
#define INTERP_COLD
#endif

/* One lane. Representation by dtype class: signed ints sign-extended in i,
 * unsigned ints and bool zero-extended in u, floats in f already rounded to
 * their dtype, handles in u as a storage index. */
typedef union {
  int64_t i;
  uint64_t u;
  double f;
} interp_scalar_t;

typedef struct {
  tir_dtype_t t;
  interp_scalar_t s;  /* the value when t.lanes == 1 */
  interp_scalar_t *v; /* t.lanes > 1: the lanes, in the scratch area */
} interp_value_t;

static inline interp_scalar_t interp_lane(const interp_value_t *v, int l) {
  return v->t.lanes == 1 ? v->s : v->v[l];
}
static inline interp_scalar_t *interp_lanes(interp_value_t *v) {
  return v->t.lanes == 1 ? &v->s : v->v;
}

typedef enum { INTERP_INT, INTERP_UINT, INTERP_FLOAT, INTERP_HANDLE } interp_class_t;

static inline interp_class_t interp_class(tir_dtype_t t) {
  switch (t.code) {
  case TIR_CODE_INT: return INTERP_INT;
  case TIR_CODE_UINT: return INTERP_UINT;
  case TIR_CODE_FLOAT:
  case TIR_CODE_BFLOAT: return INTERP_FLOAT;
  default: return INTERP_HANDLE;
  }
}

/* Bytes of one lane in memory (bool takes a byte). */
static inline int interp_lane_bytes(tir_dtype_t t) { return t.bits <= 8 ? 1 : t.bits / 8; }
/* Bytes of one element of t (all lanes). */
static inline int64_t interp_elem_bytes(tir_dtype_t t) {
  return (int64_t)interp_lane_bytes(tir_dtype_scalar(t)) * t.lanes;
}
/* v cut to t's width: sign-extended for signed, zero-extended otherwise. */
static inline interp_scalar_t interp_wrap(tir_dtype_t t, uint64_t v) {
  interp_scalar_t s;
  if (t.bits == 32) { /* the common width, without variable shifts */
    if (t.code == TIR_CODE_INT)
      s.i = (int32_t)(uint32_t)v; /* modulo conversion (gcc, clang) */
    else
      s.u = (uint32_t)v;
    return s;
  }
  if (t.bits < 64 && t.bits > 0) {
    v &= (UINT64_C(1) << t.bits) - 1;
    if (t.code == TIR_CODE_INT) {
      uint64_t sign = UINT64_C(1) << (t.bits - 1);
      v = (v ^ sign) - sign; /* sign-extend without shifting negative values */
    }
  }
  s.u = v;
  return s;
}
interp_scalar_t interp_read_any(tir_dtype_t t, const unsigned char *p);
void interp_write_any(tir_dtype_t t, unsigned char *p, interp_scalar_t s);
/* One lane from / to memory; float32 and int32 without a call. */
static inline interp_scalar_t interp_read(tir_dtype_t t, const unsigned char *p) {
  interp_scalar_t s;
  if (t.code == TIR_CODE_FLOAT && t.bits == 32) {
    float f;
    memcpy(&f, p, sizeof(f));
    s.f = f;
    return s;
  }
  if (t.code == TIR_CODE_INT && t.bits == 32) {
    int32_t i;
    memcpy(&i, p, sizeof(i));
    s.i = i;
    return s;
  }
  return interp_read_any(t, p);
}
static inline void interp_write(tir_dtype_t t, unsigned char *p, interp_scalar_t s) {
  if (t.code == TIR_CODE_FLOAT && t.bits == 32) {
    float f = (float)s.f;
    memcpy(p, &f, sizeof(f));
  } else if (t.code == TIR_CODE_INT && t.bits == 32) {
    int32_t i = (int32_t)s.i;
    memcpy(p, &i, sizeof(i));
  } else {
    interp_write_any(t, p, s);
  }
}

/* Memory behind buffers. */
typedef struct {
  unsigned char *data;
  int64_t nbytes;
  bool owned;       /* allocated by the interpreter (freed with its scope) */
  const char *name; /* the buffer or parameter it was made for */
} interp_storage_t;

/* A buffer as the running program sees it: where its element 0 of storage
 * is, how many elements of its dtype the storage holds, and its layout. */
typedef struct {
  unsigned char *base; /* storage start */
  int64_t limit;       /* elements of `dtype` that fit in the storage */
  int64_t storage;     /* index in interp_t.storages */
  tir_dtype_t dtype;
  int ndim;
  int64_t elem_offset;
  int64_t shape[TIR_MAX_DIMS];
  int64_t strides[TIR_MAX_DIMS];
} interp_view_t;

typedef struct {
  interp_value_t val;
  bool bound;
} interp_var_slot_t;

typedef struct {
  interp_view_t view;
  bool bound;
} interp_buf_slot_t;

typedef struct {
  interp_var_slot_t *slot;
  interp_var_slot_t old;
} interp_var_undo_t;

typedef struct {
  interp_buf_slot_t *slot;
  interp_buf_slot_t old;
} interp_buf_undo_t;

typedef struct {
  interp_scalar_t *data;
  size_t cap;
} interp_chunk_t;

/* The innermost loop bound to threadIdx.x being run: the lanes of a warp,
 * whose mma.sync calls (interp_mma.c) evaluate their operands for other
 * lanes by setting `var`. var == NULL outside any such loop. */
typedef struct {
  const tir_var_t *var;
  int64_t min, extent;
  size_t var_undo; /* var_undo.len in its body: more at a call means a
                      variable was bound between the loop and the call */
} interp_lane_loop_t;

/* Everything a scope may add, so leaving it can take it back. */
typedef struct {
  size_t var_undo, buf_undo, storages, chunk, used;
} interp_mark_t;

/* Lookups by node identity are the interpreter's hottest operation (every
 * variable and buffer reference), so a direct-mapped cache of recent ones
 * sits in front of the two maps. Slots never move or go away, so an entry
 * never goes stale. */
#define INTERP_CACHE_BITS 9
#define INTERP_CACHE_SIZE (1 << INTERP_CACHE_BITS)
typedef struct {
  const void *key;
  void *slot;
} interp_cache_entry_t;

typedef struct {
  const tir_func_t *func;
  interp_cache_entry_t cache[INTERP_CACHE_SIZE];
  mlc_arena_t *arena; /* slots and maps: live for the whole run */
  tir_ptrmap_t vars;  /* tir_var_t* -> interp_var_slot_t* */
  tir_ptrmap_t bufs;  /* tir_buffer_t* -> interp_buf_slot_t* */
  MLC_VEC(interp_var_undo_t) var_undo;
  MLC_VEC(interp_buf_undo_t) buf_undo;
  MLC_VEC(interp_storage_t) storages;
  MLC_VEC(interp_chunk_t) chunks; /* the scratch area for vector lanes */
  size_t chunk, used;             /* scratch top: chunk index and lanes used in it */
  const char *block;              /* innermost block being run; NULL outside blocks */
  interp_lane_loop_t lane_loop;   /* innermost threadIdx.x loop being run */
} interp_t;

/* ---- interp_env.c ------------------------------------------------------- */

int interp_init(interp_t *it, const tir_func_t *f);
void interp_free(interp_t *it);

/* Scopes are entered and left once per statement run, so both are inline and
 * leaving one that bound nothing costs two comparisons. */
static inline interp_mark_t interp_mark(const interp_t *it) {
  interp_mark_t m = {it->var_undo.len, it->buf_undo.len, it->storages.len, it->chunk, it->used};
  return m;
}
void interp_release_slow(interp_t *it, interp_mark_t m);
/* Undoes bindings, frees storages and scratch made since `m`. */
static inline void interp_release(interp_t *it, interp_mark_t m) {
  if (it->var_undo.len != m.var_undo || it->buf_undo.len != m.buf_undo ||
      it->storages.len != m.storages)
    interp_release_slow(it, m);
  it->chunk = m.chunk;
  it->used = m.used;
}

static inline void *interp_cache_get(interp_t *it, const tir_ptrmap_t *map, const void *key) {
  /* Fibonacci hashing: the top bits of the product mix every bit of the key. */
  uint64_t h = (uint64_t)(uintptr_t)key * UINT64_C(0x9E3779B97F4A7C15);
  interp_cache_entry_t *c = &it->cache[h >> (64 - INTERP_CACHE_BITS)];
  if (c->key == key) return c->slot;
  void *slot = tir_ptrmap_get(map, key);
  if (slot) {
    c->key = key;
    c->slot = slot;
  }
  return slot;
}
/* The slot of v (NULL when v was never bound). */
static inline interp_var_slot_t *interp_var_slot(interp_t *it, const tir_var_t *v) {
  return interp_cache_get(it, &it->vars, v);
}
/* Binds v to *val until the enclosing scope ends; *slot_out (may be NULL)
 * gets the slot so a loop can update the value in place. */
int interp_bind_var(interp_t *it, const tir_var_t *v, const interp_value_t *val,
                    interp_var_slot_t **slot_out);
int interp_bind_int(interp_t *it, const tir_var_t *v, int64_t value);
/* interp_bind_int for an integer variable bound before (an iter var or loop
 * variable met again), without a call; anything else goes the long way. */
static inline int interp_rebind_int(interp_t *it, const tir_var_t *v, int64_t value) {
  interp_var_slot_t *slot = interp_var_slot(it, v);
  if (!slot || v->dtype.code > TIR_CODE_UINT || v->dtype.lanes != 1 ||
      it->var_undo.len == it->var_undo.cap)
    return interp_bind_int(it, v, value);
  it->var_undo.data[it->var_undo.len++] = (interp_var_undo_t){slot, *slot};
  slot->val.t = v->dtype;
  slot->val.s = interp_wrap(v->dtype, (uint64_t)value);
  slot->bound = true;
  return MLC_OK;
}
int interp_bind_buffer(interp_t *it, const tir_buffer_t *b, const interp_view_t *view);
static inline interp_buf_slot_t *interp_buf_slot(interp_t *it, const tir_buffer_t *b) {
  return interp_cache_get(it, &it->bufs, b);
}

int interp_value_alloc_lanes(interp_t *it, interp_value_t *out, tir_dtype_t t);
/* Sets out's dtype; a vector gets lanes valid until the enclosing statement
 * ends. */
static inline int interp_value_alloc(interp_t *it, interp_value_t *out, tir_dtype_t t) {
  out->t = t;
  out->v = NULL;
  return t.lanes <= 1 ? MLC_OK : interp_value_alloc_lanes(it, out, t);
}

/* A new storage of nbytes; owned ones are filled with the poison pattern of
 * `dtype` (see interp_poison). data == NULL allocates. */
int interp_storage_add(interp_t *it, int64_t *id_out, const char *name, void *data,
                       int64_t nbytes, tir_dtype_t dtype);

/* MLC_ERUNTIME with "block \"B\": <message>" (or "function \"F\": ..."
 * outside blocks). */
int interp_fail(interp_t *it, const char *fmt, ...) MLC_PRINTF(2, 3);
/* The error rc just raised, again with "<context>: " after its location:
 * `block "B": <context>: <message>`. Returns rc. */
int interp_fail_within(interp_t *it, int rc, const char *fmt, ...) MLC_PRINTF(3, 4);
int interp_oom(interp_t *it);

/* ---- interp_value.c ----------------------------------------------------- */

bool interp_dtype_supported(tir_dtype_t t);
/* x rounded to float dtype t (round to nearest even, correctly rounded). */
double interp_round(tir_dtype_t t, double x);
/* Fills n lanes of dtype t at p with the poison pattern. */
void interp_poison(tir_dtype_t t, unsigned char *p, int64_t n);
/* Scalar `a kind b` with operands of dtype ot and result dtype rt. */
int interp_binop(interp_t *it, tir_expr_kind_t kind, tir_dtype_t rt, tir_dtype_t ot,
                 interp_scalar_t a, interp_scalar_t b, interp_scalar_t *out);
int interp_cast(interp_t *it, tir_dtype_t to, tir_dtype_t from, interp_scalar_t x,
                interp_scalar_t *out);
int interp_reinterpret(interp_t *it, tir_dtype_t to, tir_dtype_t from, interp_scalar_t x,
                       interp_scalar_t *out);
bool interp_truthy(tir_dtype_t t, interp_scalar_t s);
/* The value as text, for messages. */
char *interp_scalar_str(tir_dtype_t t, interp_scalar_t s, char *buf, size_t len);

/* ---- interp_expr.c / interp_call.c -------------------------------------- */

int interp_eval(interp_t *it, const tir_expr_t *e, interp_value_t *out);
int interp_eval_int_slow(interp_t *it, const tir_expr_t *e, int64_t *out);
/* A scalar integer (index, extent, binding). Constants and variables, by far
 * the most common, are read here without a call. */
static inline int interp_eval_int(interp_t *it, const tir_expr_t *e, int64_t *out) {
  if (e->kind == TIR_VAR) {
    const interp_var_slot_t *slot = interp_var_slot(it, e);
    if (slot && slot->bound && slot->val.t.lanes == 1 && slot->val.t.code <= TIR_CODE_UINT) {
      *out = slot->val.s.i;
      return MLC_OK;
    }
  } else if (e->kind == TIR_INT_IMM && e->dtype.lanes == 1 && e->dtype.code == TIR_CODE_INT) {
    *out = interp_wrap(e->dtype, (uint64_t)e->u.int_value).i;
    return MLC_OK;
  }
  return interp_eval_int_slow(it, e, out);
}
int interp_eval_bool(interp_t *it, const tir_expr_t *e, bool *out);
int interp_eval_call(interp_t *it, const tir_expr_t *e, interp_value_t *out);
/* interp_wmma.c: running one of the WMMA calls (tir_wmma_op; its operands
 * are tiles; out is int32 0). */
int interp_eval_wmma(interp_t *it, const tir_expr_t *e, interp_value_t *out);
/* interp_mma.c: running one of the mma.sync calls (tir_ptx_op) for the lane
 * of it->lane_loop being run; out gets that lane's registers. */
int interp_eval_ptx(interp_t *it, const tir_expr_t *e, interp_value_t *out);

/* ---- interp_stmt.c / interp_block.c ------------------------------------- */

int interp_exec(interp_t *it, const tir_stmt_t *s);
int interp_exec_realize(interp_t *it, const tir_stmt_t *s);
/* Evaluates shape, strides and elem_offset of b's declaration into *view. */
int interp_view_from_decl(interp_t *it, const tir_buffer_t *b, interp_view_t *view);
/* Allocates fresh (poisoned) storage for b and binds b and its data var. */
int interp_alloc_buffer(interp_t *it, const tir_buffer_t *b);
/* Binds e to value when e is a variable not bound yet; otherwise evaluates e
 * and sets *match to whether it equals value. */
int interp_bind_or_check(interp_t *it, const tir_expr_t *e, int64_t value, bool *match);

/* ---- interp_access.c ---------------------------------------------------- */

/* The current view of b: its binding, or one derived from its data variable's
 * storage for a buffer used without a declaration of its own (an alias). */
int interp_buffer_view(interp_t *it, const tir_buffer_t *b, const interp_view_t **out);
/* The view of b, checked to have nindices dimensions. */
int interp_buffer_view_checked(interp_t *it, const tir_buffer_t *b, int nindices,
                               const interp_view_t **out);
int interp_out_of_bounds(interp_t *it, const tir_buffer_t *b, const interp_view_t *view,
                         const int64_t *idx, bool in_shape, int64_t flat);
/* Address of the element at idx (one index per dimension), bounds-checked
 * against the shape and against the storage. */
static inline int interp_locate(interp_t *it, const tir_buffer_t *b, const interp_view_t *view,
                                const int64_t *idx, unsigned char **out) {
  uint64_t flat = (uint64_t)view->elem_offset; /* unsigned: no overflow UB */
  for (int k = 0; k < view->ndim; k++) {
    /* One unsigned comparison catches negative indices too. */
    if ((uint64_t)idx[k] >= (uint64_t)view->shape[k])
      return interp_out_of_bounds(it, b, view, idx, false, 0);
    flat += (uint64_t)idx[k] * (uint64_t)view->strides[k];
  }
  if (flat >= (uint64_t)view->limit)
    return interp_out_of_bounds(it, b, view, idx, true, (int64_t)flat);
  *out = view->base + (int64_t)flat * interp_elem_bytes(view->dtype);
  return MLC_OK;
}
/* True when every index is a scalar by its dtype (the fast access path). */
static inline bool interp_indices_scalar(tir_expr_t *const *indices, int n) {
  for (int k = 0; k < n; k++)
    if (indices[k]->dtype.lanes != 1) return false;
  return true;
}
/* Address of the element an access with scalar indices reaches. */
int interp_access_scalar(interp_t *it, const tir_buffer_t *b, tir_expr_t *const *indices, int n,
                         unsigned char **p);
/* Evaluates the n indices of an access to b into idx; *lanes gets their
 * common lane count (a ramp index makes a vector access). */
int interp_eval_indices(interp_t *it, const tir_buffer_t *b, tir_expr_t *const *indices, int n,
                        interp_value_t *idx, int *lanes);
/* Address of lane l of an access whose indices were evaluated into idx. */
int interp_access_lane(interp_t *it, const tir_buffer_t *b, const interp_view_t *view,
                       const interp_value_t *idx, int l, unsigned char **p);

#endif /* MLC_TIR_INTERP_INTERNAL_H */
