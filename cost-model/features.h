/*
 * features.h - what the feature extraction files share (private to
 * cost-model/): the walk of a lowered program into buffer stores and their
 * loop nests (features_walk.c), the affine form of flat indices and the
 * footprint estimates built on it (features_access.c), and the per-store
 * feature rows (features.c). docs/cost-model.md explains every feature.
 *
 * Everything lives in one arena per extraction, with the arena's
 * out-of-memory handler set: an allocation failure longjmps back to
 * cm_extract, which frees the arena and returns MLC_ENOMEM.
 */
#ifndef MLC_COST_MODEL_FEATURES_H
#define MLC_COST_MODEL_FEATURES_H

#include "cost-model/cost_model.h"

/* Feature layout: MetaSchedule's per-store feature groups, 164 wide. */
#define FX_NARITH 16       /* group 1: arithmetic counts */
#define FX_NFORKIND 11     /* group 1: per loop kind (vectorize, unroll, parallel) */
#define FX_NPOS 8          /* positions one-hot inside a loop-kind block */
#define FX_NTHREAD 8       /* group 1: is_gpu and the thread extents */
#define FX_NBUF 5          /* group 2: buffers per store */
#define FX_NBUFFEAT 18     /* group 2: features per buffer */
#define FX_NCURVE 10       /* group 3: arithmetic intensity samples */
#define FX_NALLOC 4        /* group 4 */
#define FX_NOUTER 3        /* group 5 */

#define FX_OFF_ARITH 0
#define FX_OFF_VEC (FX_OFF_ARITH + FX_NARITH)
#define FX_OFF_UNROLL (FX_OFF_VEC + FX_NFORKIND)
#define FX_OFF_PARALLEL (FX_OFF_UNROLL + FX_NFORKIND)
#define FX_OFF_THREAD (FX_OFF_PARALLEL + FX_NFORKIND)
#define FX_OFF_BUF (FX_OFF_THREAD + FX_NTHREAD)
#define FX_OFF_CURVE (FX_OFF_BUF + FX_NBUF * FX_NBUFFEAT)
#define FX_OFF_ALLOC (FX_OFF_CURVE + FX_NCURVE)
#define FX_OFF_OUTER (FX_OFF_ALLOC + FX_NALLOC)
#define FX_DIM (FX_OFF_OUTER + FX_NOUTER)

/* Arithmetic counters (group 1), in feature order. */
enum {
  FX_FLOAT_MAD, FX_FLOAT_ADD_SUB, FX_FLOAT_MUL, FX_FLOAT_DIV_MOD, FX_FLOAT_CMP,
  FX_FLOAT_MATH_FUNC, FX_FLOAT_OTHER_FUNC, FX_INT_MAD, FX_INT_ADD_SUB, FX_INT_MUL,
  FX_INT_DIV_MOD, FX_INT_CMP, FX_INT_MATH_FUNC, FX_INT_OTHER_FUNC, FX_BOOL_OP, FX_SELECT_OP
};

/* Positions of an annotated loop (one-hot inside a loop-kind block). */
typedef enum {
  FX_POS_NONE, FX_POS_INNER_SPATIAL, FX_POS_MIDDLE_SPATIAL, FX_POS_OUTER_SPATIAL,
  FX_POS_INNER_REDUCE, FX_POS_MIDDLE_REDUCE, FX_POS_OUTER_REDUCE, FX_POS_MIXED
} fx_pos_t;

/* Offsets inside one buffer's block of group 2. */
enum {
  FX_B_ACC_READ, FX_B_ACC_WRITE, FX_B_ACC_RW, FX_B_BYTES, FX_B_UNIQUE_BYTES, FX_B_LINES,
  FX_B_UNIQUE_LINES, FX_B_REUSE_LOOP, FX_B_REUSE_SERIAL, FX_B_REUSE_NONE, FX_B_REUSE_DIS_ITER,
  FX_B_REUSE_DIS_BYTES, FX_B_REUSE_CT, FX_B_BYTES_D_REUSE, FX_B_UNIQUE_BYTES_D_REUSE,
  FX_B_LINES_D_REUSE, FX_B_UNIQUE_LINES_D_REUSE, FX_B_STRIDE
};

#define FX_CACHE_LINE 64 /* bytes */

/* ------------------------------------------------------------------------ */
/* The walk: stores, loops, allocations                                     */
/* ------------------------------------------------------------------------ */

/* One FOR of the program. */
typedef struct {
  tir_var_t *var;
  int64_t extent;          /* the constant extent; 1 when symbolic */
  tir_for_kind_t kind;
  const char *thread_tag;  /* THREAD_BINDING only */
} fx_loop_t;

/* Persistent (shared-tail) lists, so each store keeps its context for free. */
typedef struct fx_frame fx_frame_t;
struct fx_frame {          /* the loop stack: innermost first */
  int loop;                /* index into fx_walk_t.loops */
  int depth;               /* 1 for the outermost loop */
  fx_frame_t *up;
};
typedef struct fx_bind fx_bind_t;
struct fx_bind {           /* let variables and block iter vars */
  tir_var_t *var;
  tir_expr_t *value;
  fx_bind_t *up;
};
typedef struct fx_pin fx_pin_t;
struct fx_pin {            /* loop variables fixed by an enclosing `if v == c` */
  tir_var_t *var;
  fx_pin_t *up;
};
typedef struct fx_alloc fx_alloc_t;
struct fx_alloc {          /* enclosing allocations */
  tir_var_t *data;         /* the buffer's data variable */
  double bytes;
  int depth;               /* loops around the allocation */
  fx_alloc_t *up;
};

typedef struct {
  tir_stmt_t *store;
  fx_frame_t *frame;       /* innermost enclosing loop, NULL at top level */
  fx_bind_t *binds;
  fx_pin_t *pins;
  fx_alloc_t *alloc;       /* the allocation of the stored buffer, NULL for params */
  int64_t auto_unroll;     /* innermost pragma_auto_unroll_max_step, 0 when none */
  uint64_t sig;            /* structure hash: unrolled copies hash alike */
  int group;               /* index of its group */
} fx_store_t;

/* Stores of one buffer with one structure: an unrolled loop's copies, or a
 * store alone. Its row is computed from `rep` with a virtual unrolled loop of
 * extent `ncopies` placed below the first `lca` loops they share. */
typedef struct {
  int rep;                 /* first store */
  int ncopies;
  int lca;                 /* loops (stack entries) all copies share */
  int *members;            /* ncopies store indices, program order */
} fx_group_t;

typedef struct {
  mlc_arena_t *arena;
  bool is_gpu;
  fx_loop_t *loops;
  int nloops, caploops;
  fx_store_t *stores;
  int nstores, capstores;
  fx_group_t *groups;
  int ngroups;
} fx_walk_t;

/* Walks f's body (lowered TIR, or scheduled TIR with blocks) into w's stores
 * and groups them. w->arena must be set; allocation failures longjmp. */
void fx_walk(fx_walk_t *w, const tir_func_t *f);
/* The stack of a frame as loop indices, outermost first (arena array). */
int *fx_frame_loops(fx_walk_t *w, const fx_frame_t *fr, int *n);
/* True when v is fixed by one of pins. */
bool fx_pinned(const fx_pin_t *pins, const tir_var_t *v);

/* ------------------------------------------------------------------------ */
/* Loop nests and accesses                                                   */
/* ------------------------------------------------------------------------ */

/* One level of a store's loop nest: a real loop, the virtual loop standing
 * for unrolled copies, or the vector lanes (innermost). */
typedef struct {
  tir_var_t *var;          /* NULL for the virtual levels */
  int64_t extent;
  tir_for_kind_t kind;
  const char *thread_tag;
  int id;                  /* identity for the touched-bytes map */
  int stack_depth;         /* real loops: depth in the program; others: -1 */
} fx_level_t;

#define FX_MAX_TERMS 24
#define FX_MAX_LEVELS 64

typedef enum {
  FX_ATOM_LOOP,    /* a loop variable (key: the variable's address) */
  FX_ATOM_LANES,   /* the lanes of a ramp */
  FX_ATOM_COPIES,  /* the copies of an unrolled body */
  FX_ATOM_DIVMOD,  /* floordiv/floormod by a constant (key: structure hash) */
  FX_ATOM_OPAQUE   /* anything else (key: the expression's address) */
} fx_atom_kind_t;

/* coef * atom, the atom ranging over [0, extent), relaxed from `level` in
 * (its innermost level); `mask` has a bit per level it depends on. */
typedef struct {
  uint64_t key;
  fx_atom_kind_t kind;
  int level;
  uint64_t mask;
  int64_t extent;
  int64_t coef;
} fx_term_t;

/* Wrapping and saturating int64 arithmetic for index forms: they are
 * estimates, and absurd constants must not be undefined behaviour. */
static inline int64_t fx_wadd(int64_t a, int64_t b) { return (int64_t)((uint64_t)a + (uint64_t)b); }
static inline int64_t fx_wmul(int64_t a, int64_t b) { return (int64_t)((uint64_t)a * (uint64_t)b); }
static inline int64_t fx_abs(int64_t v) { return v == INT64_MIN ? INT64_MAX : v < 0 ? -v : v; }

/* An index as c0 + sum of terms (non-affine parts become opaque atoms). */
typedef struct {
  int64_t c0;
  int nterms;
  fx_term_t terms[FX_MAX_TERMS];
} fx_affine_t;

typedef struct {
  const fx_level_t *levels;
  int nlevels;
  int lane_level;          /* the lanes' level, or -1 when scalar */
  const fx_bind_t *binds;
} fx_nest_ctx_t;

/* The affine form of an access to b with n indices over the nest: lowered
 * code has one flat index; several are combined with b's constant row-major
 * strides. Never fails: what is not affine becomes an opaque atom. */
void fx_linearize_access(fx_affine_t *out, const fx_nest_ctx_t *cx, const tir_buffer_t *b,
                         tir_expr_t *const *indices, int n);
/* Adds coef * atom to f, merging with an atom of equal kind and key; mask 0
 * means the bit of `level`. */
void fx_affine_add_term(fx_affine_t *f, fx_atom_kind_t kind, uint64_t key, int level, uint64_t mask,
                        int64_t extent, int64_t coef);

/* Distinct elements touched by accesses forms[0..n) when the levels from
 * `from_level` in are relaxed (the outer ones held fixed). */
double fx_unique_elems(const fx_affine_t *const *forms, int n, int from_level);
/* Elements in the contiguous run the innermost atoms of `form` cover. */
double fx_contiguous_elems(const fx_affine_t *form);

#endif /* MLC_COST_MODEL_FEATURES_H */

/* ------------------------------------------------------------------------ */
/* Rows                                                                      */
/* ------------------------------------------------------------------------ */

/* The buffers touched by earlier stores under each level (by level id): what
 * serial reuse and reuse distances in bytes are measured against. */
typedef struct {
  int id;
  const void *data;        /* the buffer's data variable */
  double bytes;            /* distinct bytes touched under the level */
} fx_touched_t;

typedef struct {
  fx_walk_t walk;
  fx_touched_t *touched;
  int ntouched, captouched;
  int next_id;             /* ids of virtual levels: after the loops' */
} fx_extract_t;

/* One access of a store: the store itself or a load in its value. */
typedef struct {
  tir_buffer_t *buffer;
  bool is_write;
  int lanes;
  tir_expr_t *const *indices;
  int nindices;
} fx_access_t;

/* What a buffer of the store touches. */
typedef struct {
  const void *data;
  int order;               /* first access order (the sort's tie-break) */
  int elem_bytes;
  bool read, write;
  int nforms;
  const fx_affine_t **forms;
  double bytes;            /* bytes moved by its accesses over the nest */
  double *numel;           /* distinct elements under level i, i in [0, nlevels] */
  double feat[FX_NBUFFEAT];
} fx_buf_t;

/* The row being computed for one group. */
typedef struct {
  fx_extract_t *ex;
  const fx_store_t *st;
  const fx_group_t *g;
  fx_level_t levels[FX_MAX_LEVELS];
  int nlevels, lane_level, copies_level;
  double prod;             /* product of every level's extent */
  double prod_scalar;      /* the same without the lanes */
  double arith[FX_NARITH];
  fx_nest_ctx_t cx;
  const fx_affine_t *write_form;
  fx_buf_t *bufs;
  int nbufs;
  double raw[FX_DIM];      /* before log scaling */
} fx_row_t;

/* Group 1 (loop kinds and threads), 2 (buffers), 3, 4 and 5 of r->raw, from
 * the nest, the buffers and the arithmetic counts (features_row.c). */
void fx_row_loop_features(fx_row_t *r, bool is_gpu);
void fx_row_buffer_features(fx_row_t *r);
void fx_row_outer_features(fx_row_t *r);
