/*
 * state.h - the schedule's state, private to schedule/: how primitives find
 * the nodes random variables refer to, replace subtrees copy-on-write, make
 * new loops and blocks, fail cheaply, and record themselves in the trace.
 *
 * The program is immutable-by-convention TIR (tir.h). A primitive locates its
 * target as a path of statements from the function body down to the node,
 * builds the replacement subtree, and calls sch_replace, which copies each
 * ancestor on the path with the new child (everything else stays shared).
 * Loops and blocks carry a uid that copies keep, so random variables (which
 * hold uids) stay valid across rewrites of other parts.
 */
#ifndef MLC_SCHEDULE_STATE_H
#define MLC_SCHEDULE_STATE_H

#include "schedule/schedule.h"

/* Deepest statement nesting a path can hold (loops, blocks, seqs, ifs...). */
#define SCH_MAX_DEPTH 256

/* ------------------------------------------------------------------------ */
/* Instruction kinds (TVM names and input/attr layouts)                      */
/* ------------------------------------------------------------------------ */

/* Every kind, in TVM's layout: inputs | attrs | outputs | decision.
 *      enum                     TVM name                  pure */
#define SCH_INST_KINDS(X)                                                   \
  /* - | name:STR, func_name:STR | block */                                 \
  X(GET_BLOCK,               "GetBlock",               true)                \
  /* block | - | loops... */                                                \
  X(GET_LOOPS,               "GetLoops",               true)                \
  /* block_or_loop | - | blocks... */                                       \
  X(GET_CHILD_BLOCKS,        "GetChildBlocks",         true)                \
  /* block | - | blocks... */                                               \
  X(GET_PRODUCERS,           "GetProducers",           true)                \
  X(GET_CONSUMERS,           "GetConsumers",           true)                \
  /* loop, factors...(RV|INT|NONE) | preserve_unit_iters:INT(bool), disable_predication:INT | loops... */ \
  X(SPLIT,                   "Split",                  false)               \
  /* loops... | preserve_unit_iters | loop */                               \
  X(FUSE,                    "Fuse",                   false)               \
  /* loops... | - | - */                                                    \
  X(REORDER,                 "Reorder",                false)               \
  /* block_or_loop | - | loop */                                            \
  X(ADD_UNIT_LOOP,           "AddUnitLoop",            false)               \
  /* loop | - | - */                                                        \
  X(PARALLEL,                "Parallel",               false)               \
  X(VECTORIZE,               "Vectorize",              false)               \
  X(UNROLL,                  "Unroll",                 false)               \
  /* loop | thread_axis:STR | - */                                          \
  X(BIND,                    "Bind",                   false)               \
  /* block_or_loop, value(RV|INT|FLOAT|STR) | key:STR | - */                \
  X(ANNOTATE,                "Annotate",               false)               \
  /* block_or_loop | key:STR | - */                                         \
  X(UNANNOTATE,              "Unannotate",             false)               \
  /* block, loop | preserve_unit_loops:INT(bool), index:INT | - */          \
  X(COMPUTE_AT,              "ComputeAt",              false)               \
  X(REVERSE_COMPUTE_AT,      "ReverseComputeAt",       false)               \
  /* block | - | - */                                                       \
  X(COMPUTE_INLINE,          "ComputeInline",          false)               \
  X(REVERSE_COMPUTE_INLINE,  "ReverseComputeInline",   false)               \
  /* block, consumer_blocks:LIST(RV) | buffer_index:INT, scope:STR | block */ \
  X(CACHE_READ,              "CacheRead",              false)               \
  X(CACHE_WRITE,             "CacheWrite",             false)               \
  /* block | buffer_index:INT, scope:STR | - */                             \
  X(SET_SCOPE,               "SetScope",               false)               \
  /* block | buffer_index, axis, factor, offset (INT) | - */                \
  X(STORAGE_ALIGN,           "StorageAlign",           false)               \
  /* block | buffer_index:INT, buffer_kind:INT(0 read, 1 write), index_map:STR (lambda text) | - */ \
  X(TRANSFORM_LAYOUT,        "TransformLayout",        false)               \
  /* block, loop | - | block */                                             \
  X(DECOMPOSE_REDUCTION,     "DecomposeReduction",     false)               \
  /* loop | factor_axis:INT | block */                                      \
  X(RFACTOR,                 "RFactor",                false)               \
  /* loop | preserve_unit_iters | block */                                  \
  X(BLOCKIZE,                "Blockize",               false)               \
  /* block_or_loop | intrin:STR, preserve_unit_iters | - */                 \
  X(TENSORIZE,               "Tensorize",              false)               \
  /* loop | n:INT, max_innermost_factor:INT | vars... | decision LIST(INT) */ \
  X(SAMPLE_PERFECT_TILE,     "SamplePerfectTile",      true)                \
  /* - | candidates:LIST(INT), probs:LIST(FLOAT) | var | decision INT (index) */ \
  X(SAMPLE_CATEGORICAL,      "SampleCategorical",      true)                \
  /* block | - | loop | decision INT */                                     \
  X(SAMPLE_COMPUTE_LOCATION, "SampleComputeLocation",  true)                \
  /* - | - | - : marks where postprocessing starts (search, step 5) */      \
  X(ENTER_POSTPROC,          "EnterPostproc",          false)

typedef enum {
#define SCH_ENUM_(e, name, pure) SCH_INST_##e,
  SCH_INST_KINDS(SCH_ENUM_)
#undef SCH_ENUM_
  SCH_INST_COUNT
} sch_inst_id_t;

/* The table (schedule/trace/inst_kinds.c), indexed by sch_inst_id_t. */
extern const sch_inst_kind_t sch_inst_kinds[SCH_INST_COUNT];

/* ------------------------------------------------------------------------ */
/* State                                                                     */
/* ------------------------------------------------------------------------ */

typedef struct {
  sch_rv_kind_t kind;
  uint32_t uid;   /* BLOCK, LOOP */
  int64_t value;  /* EXPR */
  /* Special compute locations from sample_compute_location: a LOOP rv whose
   * uid is SCH_UID_ROOT or SCH_UID_INLINE. */
} sch_rv_entry_t;

#define SCH_UID_ROOT 0xfffffffeu
#define SCH_UID_INLINE 0xfffffffdu

/* A block known to have an affine binding (TVM's BlockInfo::affine_binding),
 * remembered by analysis/block_kind.c because the check (an iteration-map
 * detection) is the costliest part of replaying a trace. The answer depends
 * only on the block's bindings and predicate and on the variables and
 * ranges of the loops between it and its scope, so the entry keeps exactly
 * those: the binding array, the predicate, and each loop's var, min and
 * extent. The program is never changed in place (copy-on-write; a copied
 * node shares the arrays and expressions it does not change) and the arena
 * never reuses memory (nothing is freed before sch_free), so the same
 * addresses mean the same values, and any change to a binding, the
 * predicate or a loop range makes new ones. Annotating, binding or
 * parallelizing a loop or block copies the node but keeps these, so the
 * answer survives them. Every lookup compares all of them, in order
 * (nothing to invalidate): an entry only ever gives what the iteration map
 * would give for the same input. Keyed by the block's uid. */
#define SCH_AFFINE_MAX_LOOPS 24
typedef struct {
  const tir_var_t *var;
  const tir_expr_t *min, *extent;
} sch_affine_loop_t;
typedef struct {
  uint32_t uid;
  int nvalues;
  tir_expr_t *const *values;
  const tir_expr_t *predicate;
  int nloops;
  sch_affine_loop_t loops[SCH_AFFINE_MAX_LOOPS];
} sch_affine_entry_t;

struct sch {
  tir_func_t *func;        /* private copy; its arena holds every new node */
  uint32_t next_uid;
  int nrvs, cap_rvs;
  sch_rv_entry_t *rvs;     /* mlc_realloc'd */
  sch_trace_t *trace;      /* owned; RVs are the schedule's */
  mlc_rng_t rng;
  sch_error_mode_t mode;
  char error[1024];
  char *error_detail;      /* RICH: error plus the offending subtree (heap), or NULL */
  int naffine, cap_affine;
  sch_affine_entry_t *affine; /* mlc_realloc'd; see sch_affine_entry_t */
};

/* True when rv names an entry of the table (any kind). */
static inline bool sch_rv_valid(const sch_t *sch, sch_rv_t rv) { return rv >= 0 && rv < sch->nrvs; }

/* The arena where a primitive allocates new nodes. */
static inline mlc_arena_t *sch_arena(const sch_t *sch) { return sch->func->arena; }

/* ------------------------------------------------------------------------ */
/* Paths                                                                     */
/* ------------------------------------------------------------------------ */

/* Statements from the function body (stmts[0]) down to a target (stmts[n-1]),
 * every statement in between included (SEQ, IF, LET, ... as well as FOR and
 * BLOCK_REALIZE). */
typedef struct {
  int n;
  tir_stmt_t *stmts[SCH_MAX_DEPTH];
} sch_path_t;

/* Locate the node of a block/loop RV: MLC_OK, or MLC_ESCHEDULE (with the
 * schedule's error set, naming `prim`) when rv is of the wrong kind or its
 * node no longer exists. The path ends at the BLOCK_REALIZE / FOR. */
int sch_find_block(sch_t *sch, const char *prim, sch_rv_t rv, sch_path_t *path);
int sch_find_loop(sch_t *sch, const char *prim, sch_rv_t rv, sch_path_t *path);
/* Either kind; *is_loop tells which. */
int sch_find_block_or_loop(sch_t *sch, const char *prim, sch_rv_t rv, sch_path_t *path, bool *is_loop);
/* Path to the statement with uid (FOR or BLOCK_REALIZE); false if absent. */
bool sch_find_uid(const sch_t *sch, uint32_t uid, sch_path_t *path);
/* Path to a block by name; false if absent. */
bool sch_find_block_by_name(const sch_t *sch, const char *name, sch_path_t *path);

/* The innermost BLOCK_REALIZE strictly above path->stmts[depth] (the scope
 * block), and its depth; -1 when none. */
int sch_path_scope_depth(const sch_path_t *path, int depth);
/* The FOR statements between depth `from` (exclusive) and `to` (exclusive),
 * outermost first. Returns their count (written to loops, at most cap). */
int sch_path_loops(const sch_path_t *path, int from, int to, tir_stmt_t **loops, int cap);

/* ------------------------------------------------------------------------ */
/* Rewriting                                                                 */
/* ------------------------------------------------------------------------ */

/* A copy of `parent` whose child `old_child` is replaced by `new_child`
 * (new_child NULL removes it from a SEQ). Handles every statement kind and a
 * BLOCK_REALIZE's block body and init. */
tir_stmt_t *sch_replace_child(sch_t *sch, tir_stmt_t *parent, tir_stmt_t *old_child, tir_stmt_t *new_child);
/* Replaces path->stmts[depth] by `with` (NULL removes it from its SEQ),
 * copying the ancestors up to the function body. The path is stale after. */
void sch_replace(sch_t *sch, const sch_path_t *path, int depth, tir_stmt_t *with);

/* New loops and blocks with fresh uids (use these, not tir_for/tir_block_new,
 * for anything a random variable may later name). */
uint32_t sch_new_uid(sch_t *sch);
tir_stmt_t *sch_new_loop(sch_t *sch, tir_var_t *var, tir_expr_t *min, tir_expr_t *extent,
                         tir_for_kind_t kind, tir_stmt_t *body);
tir_block_t *sch_new_block(sch_t *sch, const char *name);
/* A block name not used in the function yet: `base`, else base_1, base_2 ... */
const char *sch_unique_block_name(sch_t *sch, const char *base);

/* ------------------------------------------------------------------------ */
/* Random variables, errors, recording                                       */
/* ------------------------------------------------------------------------ */

sch_rv_t sch_new_rv(sch_t *sch, sch_rv_kind_t kind, uint32_t uid, int64_t value);

/* Fails a primitive: formats "prim: message" into sch->error and the
 * per-thread error, and returns MLC_ESCHEDULE. Cheap (one vsnprintf). */
int sch_fail(sch_t *sch, const char *prim, const char *fmt, ...) MLC_PRINTF(3, 4);
/* As sch_fail; in RICH mode also appends the TVMScript of `at` (may be NULL). */
int sch_fail_at(sch_t *sch, const char *prim, tir_stmt_t *at, const char *fmt, ...) MLC_PRINTF(4, 5);

/* Appends an instruction to the schedule's trace (arguments deep-copied). */
void sch_record(sch_t *sch, sch_inst_id_t kind, const sch_arg_t *inputs, int ninputs,
                const sch_arg_t *attrs, int nattrs, const sch_rv_t *outputs, int noutputs,
                const sch_arg_t *decision);

/* A loop's name for messages: the loop var's name. */
static inline const char *sch_loop_name(const tir_stmt_t *loop) { return loop->u.loop.var->u.var.name; }

#endif /* MLC_SCHEDULE_STATE_H */
