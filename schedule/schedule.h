/*
 * schedule.h - TVM-style schedules over a PrimFunc: random variables for
 * blocks, loops and sampled integers; the schedule primitives; traces (every
 * primitive call is recorded, replayed, serialised as TVM's trace JSON and
 * printed as the `sch.split(...)` script TVM users read); tensor intrinsics.
 *
 * Names and semantics follow TVM's tir.Schedule so a TVM user can predict
 * them (see docs/schedule.md for each primitive's preconditions and an
 * example). A failed primitive returns MLC_ESCHEDULE, leaves the schedule
 * unchanged and records nothing; its message names the block or loop and the
 * violated condition (sch_error / mlc_error_last).
 *
 * Memory: a schedule owns a private copy of its function and an arena for
 * everything it creates; results that are arrays (sch_get_loops, ...) live in
 * that arena until sch_free. tir nodes reached through sch_func() are valid
 * until the next primitive call (later calls may replace them).
 */
#ifndef MLC_SCHEDULE_H
#define MLC_SCHEDULE_H

#include "tir/tir.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sch sch_t;

/* A random variable: an index into the schedule's table. Block and loop
 * variables refer to a block or loop by its stable uid (tir.h), so they stay
 * valid while other parts of the program are rewritten; an expression
 * variable holds a sampled integer. */
typedef int32_t sch_rv_t;
#define SCH_RV_NONE ((sch_rv_t)-1)

typedef enum { SCH_RV_BLOCK, SCH_RV_LOOP, SCH_RV_EXPR } sch_rv_kind_t;

/* How much a failed primitive says. FAST (what the search uses, since it
 * raises thousands): one line naming the primitive, the block/loop and the
 * condition, built without printing IR. RICH: the same plus the offending
 * subtree as TVMScript. */
typedef enum { SCH_ERRORS_FAST, SCH_ERRORS_RICH } sch_error_mode_t;

/* ------------------------------------------------------------------------ */
/* Arguments: instruction inputs, attributes and decisions                   */
/* ------------------------------------------------------------------------ */

typedef enum {
  SCH_ARG_NONE,  /* Python None (e.g. the inferred split factor) */
  SCH_ARG_RV,    /* a random variable */
  SCH_ARG_INT,
  SCH_ARG_FLOAT,
  SCH_ARG_STR,
  SCH_ARG_LIST,  /* a list of args */
} sch_arg_kind_t;

typedef struct sch_arg sch_arg_t;
struct sch_arg {
  sch_arg_kind_t kind;
  union {
    sch_rv_t rv;
    int64_t i;
    double f;
    const char *s;
    struct { int n; sch_arg_t *items; } list;
  } u;
};

static inline sch_arg_t sch_arg_none(void) { sch_arg_t a = {SCH_ARG_NONE, {0}}; return a; }
static inline sch_arg_t sch_arg_int(int64_t v) { sch_arg_t a = {SCH_ARG_INT, {0}}; a.u.i = v; return a; }
static inline sch_arg_t sch_arg_rv(sch_rv_t v) { sch_arg_t a = {SCH_ARG_RV, {0}}; a.u.rv = v; return a; }
static inline sch_arg_t sch_arg_str(const char *s) { sch_arg_t a = {SCH_ARG_STR, {0}}; a.u.s = s; return a; }
static inline sch_arg_t sch_arg_float(double f) { sch_arg_t a = {SCH_ARG_FLOAT, {0}}; a.u.f = f; return a; }

/* ------------------------------------------------------------------------ */
/* Lifetime and state                                                        */
/* ------------------------------------------------------------------------ */

/* A schedule over a private copy of `func` (the caller keeps func). `seed`
 * seeds the sampling RNG (mlc_rng_t). MLC_ENOMEM on failure. */
int sch_create(sch_t **out, const tir_func_t *func, uint64_t seed, sch_error_mode_t mode);
void sch_free(sch_t *sch); /* NULL is fine */
/* An independent copy: program, random variables, trace and RNG state. */
int sch_copy(sch_t **out, const sch_t *sch);

/* The current program (borrowed; valid until the next primitive call). */
tir_func_t *sch_func(const sch_t *sch);
/* The message of the last failed primitive ("" when none). Borrowed. */
const char *sch_error(const sch_t *sch);
sch_error_mode_t sch_error_mode(const sch_t *sch);
void sch_set_error_mode(sch_t *sch, sch_error_mode_t mode);
/* Reseeds the sampling RNG. */
void sch_seed(sch_t *sch, uint64_t seed);
mlc_rng_t *sch_rng(sch_t *sch);

/* Random variables. */
sch_rv_kind_t sch_rv_kind(const sch_t *sch, sch_rv_t rv);
/* The value of an expression variable (MLC_EINVAL if rv is not one). */
int sch_rv_value(const sch_t *sch, sch_rv_t rv, int64_t *out);
/* The node a block/loop variable refers to now: MLC_ESCHEDULE when it was
 * removed by an earlier primitive (e.g. a loop that was split). */
int sch_get_block_node(const sch_t *sch, sch_rv_t rv, tir_block_t **out);
int sch_get_loop_node(const sch_t *sch, sch_rv_t rv, tir_stmt_t **out);
/* A block/loop variable for a node of the current program (no trace entry). */
sch_rv_t sch_rv_for_block(sch_t *sch, const tir_block_t *block);
sch_rv_t sch_rv_for_loop(sch_t *sch, const tir_stmt_t *loop);

/* ------------------------------------------------------------------------ */
/* Primitives (TVM's tir.Schedule). Outputs first; arrays in the schedule's  */
/* arena. Each returns MLC_OK or MLC_ESCHEDULE (schedule unchanged).         */
/* ------------------------------------------------------------------------ */

/* Lookup */
int sch_get_block(sch_t *sch, sch_rv_t *out, const char *name);
int sch_get_loops(sch_t *sch, const sch_rv_t **out, int *n, sch_rv_t block);
/* Blocks directly under a block or loop (not nested deeper in other blocks). */
int sch_get_child_blocks(sch_t *sch, const sch_rv_t **out, int *n, sch_rv_t block_or_loop);
int sch_get_producers(sch_t *sch, const sch_rv_t **out, int *n, sch_rv_t block);
int sch_get_consumers(sch_t *sch, const sch_rv_t **out, int *n, sch_rv_t block);

/* Loops. split: factors are INT, expression RVs, or at most one NONE (inferred
 * as ceil(extent / product of the others)); a product that does not divide
 * the extent adds a T.where predicate. fuse: adjacent single-child loops,
 * outer first. reorder: loops of one chain, any order given. */
int sch_split(sch_t *sch, const sch_rv_t **out, sch_rv_t loop, const sch_arg_t *factors, int nfactors,
              bool preserve_unit_iters);
int sch_fuse(sch_t *sch, sch_rv_t *out, const sch_rv_t *loops, int nloops, bool preserve_unit_iters);
int sch_reorder(sch_t *sch, const sch_rv_t *loops, int nloops);
int sch_add_unit_loop(sch_t *sch, sch_rv_t *out, sch_rv_t block_or_loop);

/* Annotation. thread_axis: "blockIdx.x", "threadIdx.y", "vthread.x", ... */
int sch_parallel(sch_t *sch, sch_rv_t loop);
int sch_vectorize(sch_t *sch, sch_rv_t loop);
int sch_unroll(sch_t *sch, sch_rv_t loop);
int sch_bind(sch_t *sch, sch_rv_t loop, const char *thread_axis);
/* value: INT, FLOAT, STR, or an expression RV (its value is annotated). */
int sch_annotate(sch_t *sch, sch_rv_t block_or_loop, const char *key, sch_arg_t value);
int sch_unannotate(sch_t *sch, sch_rv_t block_or_loop, const char *key);

/* Compute location. index (TVM's): -1 the last valid position (before the
 * first consumer under the loop, or the end of its body when none), -2 the
 * first valid position, k >= 0 an explicit position among the children.
 * loop may be one of sample_compute_location's special locations, as in
 * TVM: "root" leaves the block where it is, "inline" inlines it
 * (compute_inline; reverse_compute_inline for reverse_compute_at); either
 * way the call is recorded as itself. */
int sch_compute_at(sch_t *sch, sch_rv_t block, sch_rv_t loop, bool preserve_unit_loops, int index);
int sch_reverse_compute_at(sch_t *sch, sch_rv_t block, sch_rv_t loop, bool preserve_unit_loops,
                           int index);
int sch_compute_inline(sch_t *sch, sch_rv_t block);
int sch_reverse_compute_inline(sch_t *sch, sch_rv_t block);

/* Storage. consumer_blocks may be NULL/0 (all consumers). */
int sch_cache_read(sch_t *sch, sch_rv_t *out, sch_rv_t block, int read_buffer_index, const char *scope,
                   const sch_rv_t *consumer_blocks, int nconsumers);
int sch_cache_write(sch_t *sch, sch_rv_t *out, sch_rv_t block, int write_buffer_index, const char *scope,
                    const sch_rv_t *consumer_blocks, int nconsumers);
int sch_set_scope(sch_t *sch, sch_rv_t block, int buffer_index, const char *scope);
int sch_storage_align(sch_t *sch, sch_rv_t block, int buffer_index, int axis, int factor, int offset);

/* An index map `lambda i, j: (i // 16, j, i % 16)`: src vars and the
 * expressions of the new indices over them. */
typedef struct {
  int nsrc;
  tir_var_t **src;
  int ndst;
  tir_expr_t **dst;
} sch_index_map_t;
typedef enum { SCH_BUFFER_READ, SCH_BUFFER_WRITE } sch_buffer_kind_t;
int sch_transform_layout(sch_t *sch, sch_rv_t block, int buffer_index, sch_buffer_kind_t kind,
                         const sch_index_map_t *index_map);

/* Reduction */

/* The reducers a reduction block is recognised by (TVM's common
 * reducers), in this order: the update is `B[i] = op(B[i], rhs)` (either
 * operand order) and the init `B[i] = identity` of op for B's dtype (0; 1;
 * the largest value or +inf for min; the lowest or -inf for max). */
typedef enum { SCH_REDUCER_SUM, SCH_REDUCER_PRODUCT, SCH_REDUCER_MIN, SCH_REDUCER_MAX } sch_reducer_kind_t;
typedef struct {
  sch_reducer_kind_t kind;
  tir_expr_kind_t op;          /* TIR_ADD, TIR_MUL, TIR_MIN or TIR_MAX */
  tir_stmt_t *init, *update;   /* the block's two BufferStores (borrowed) */
  tir_expr_t *lhs, *rhs;       /* update value = op(lhs, rhs); lhs loads the stored element */
} sch_reducer_t;
/* True, filling *out (pointers into block), when block's init and body are
 * one of the reducers; false otherwise (no error set). */
bool sch_match_reducer(const tir_block_t *block, sch_reducer_t *out);

int sch_decompose_reduction(sch_t *sch, sch_rv_t *out, sch_rv_t block, sch_rv_t loop);
int sch_rfactor(sch_t *sch, sch_rv_t *out, sch_rv_t loop, int factor_axis);

/* Blockize / tensorize */
int sch_blockize(sch_t *sch, sch_rv_t *out, sch_rv_t loop, bool preserve_unit_iters);
int sch_tensorize(sch_t *sch, sch_rv_t block_or_loop, const char *intrin, bool preserve_unit_iters);

/* Sampling. `decision` NULL samples with the RNG; otherwise it is used (and
 * checked). The decision taken is recorded in the trace. */
int sch_sample_perfect_tile(sch_t *sch, const sch_rv_t **out, sch_rv_t loop, int n,
                            int max_innermost_factor, const int64_t *decision);
int sch_sample_categorical(sch_t *sch, sch_rv_t *out, const int64_t *candidates, const double *probs,
                           int n, const int64_t *decision);
/* *out is a loop RV, or the special "root"/"inline" locations as TVM does
 * (decision -1 = root, -2 = inline; otherwise the index among the block's
 * valid compute-at loops). */
int sch_sample_compute_location(sch_t *sch, sch_rv_t *out, sch_rv_t block, const int64_t *decision);

/* Records TVM's EnterPostproc marker: the instructions after it are the
 * search's postprocessing (search/), which a mutation drops and redoes.
 * Changes nothing in the program. MLC_EINVAL when sch is NULL. */
int sch_enter_postproc(sch_t *sch);

/* ------------------------------------------------------------------------ */
/* Instructions and traces                                                   */
/* ------------------------------------------------------------------------ */

typedef struct sch_inst sch_inst_t;

/* An instruction kind (TVM's InstructionKind): the name TVM uses in trace
 * JSON ("Split"), whether it is pure (no effect on the program: lookups and
 * sampling), and how to replay it. Listed once in schedule/trace/inst_kinds.c. */
typedef struct {
  const char *name;
  bool is_pure;
  /* Replays `inst` on sch: inputs already translated to sch's RVs; writes
   * the new RVs to outputs (inst->noutputs entries; may be fewer for
   * variadic outputs: *noutputs is set). decision may be NULL. */
  int (*apply)(sch_t *sch, const sch_inst_t *inst, const sch_arg_t *decision, sch_rv_t *outputs,
               int *noutputs);
  /* Appends the Python form of the call, e.g. `l2, l3 = sch.split(loop=l1, factors=[None, 16])`,
   * with `decision=...` last when decision is not NULL or NONE. */
  void (*to_python)(mlc_strbuf_t *sb, const sch_inst_t *inst, const char *const *input_names,
                    const char *const *output_names, const sch_arg_t *decision);
} sch_inst_kind_t;

struct sch_inst {
  const sch_inst_kind_t *kind;
  int ninputs;
  sch_arg_t *inputs;   /* RVs refer to the trace's variables */
  int nattrs;
  sch_arg_t *attrs;
  int noutputs;
  sch_rv_t *outputs;
};

/* A trace: instructions in order plus a decision per sampling instruction
 * (kind NONE when there is none). Owns an arena. */
typedef struct {
  mlc_arena_t *arena;
  int n, cap;
  sch_inst_t *insts;
  sch_arg_t *decisions; /* n entries */
  int nrvs;             /* RVs are 0..nrvs-1 */
} sch_trace_t;

/* The trace recorded by a schedule (borrowed). */
const sch_trace_t *sch_get_trace(const sch_t *sch);
/* A copy the caller owns (sch_trace_free). */
sch_trace_t *sch_trace_copy(const sch_trace_t *t);
void sch_trace_free(sch_trace_t *t);
const sch_inst_kind_t *sch_inst_kind_find(const char *name);

/* Replays t on sch (normally a fresh schedule of the same workload). With
 * use_decisions, sampling instructions take the trace's decisions and the
 * result is the recorded program on any machine; without, they sample
 * afresh from sch's RNG. MLC_ESCHEDULE with the instruction's index and the
 * primitive's error when an instruction does not apply. */
int sch_trace_apply(sch_t *sch, const sch_trace_t *t, bool use_decisions);
/* A copy of t with the decision of instruction `inst` replaced. */
int sch_trace_with_decision(sch_trace_t **out, const sch_trace_t *t, int inst, const sch_arg_t *decision);
/* A copy without pure instructions whose outputs are never used. */
int sch_trace_simplified(sch_trace_t **out, const sch_trace_t *t);

/* TVM's JSON layout: [[[kind, inputs, attrs, outputs], ...], [[index, decision], ...]]
 * with RVs named b0, l1, v2 by kind and order of definition. */
int sch_trace_to_json(json_t **out, const sch_trace_t *t);
int sch_trace_from_json(sch_trace_t **out, const json_t *json);
/* The same from JSON text (a record's trace_json, a file's contents): the
 * text's parse errors read "<what>:LINE:COL: ..." (mlc_json_loads), the
 * trace's "<what>: ..." (sch_trace_from_json's detail). NULL text is
 * MLC_EPARSE ("<what>: missing"). MLC_ENOMEM when out of memory. */
int sch_trace_from_json_text(sch_trace_t **out, const char *text, const char *what);
/* The Python form TVM prints (`b0 = sch.get_block(name="C", func_name="main")`). */
char *sch_trace_to_python(const sch_trace_t *t); /* mlc_free */
/* Parses that form (one call per line; comments and blank lines skipped).
 * MLC_EPARSE with "LINE:COL: message" on bad input. */
int sch_trace_from_python(sch_trace_t **out, const char *src, size_t len, const char *filename);

/* ------------------------------------------------------------------------ */
/* Tensor intrinsics                                                         */
/* ------------------------------------------------------------------------ */

/* A registered intrinsic: `desc` is the computation tensorize matches (its
 * body is one block over the intrinsic's tile), `impl` what replaces it (calls
 * that code generation lowers to LLVM intrinsics). */
typedef struct {
  const char *name;       /* "avx512_fp32_fma_16x4", "vnni_u8s8s32_16x4", ... */
  tir_func_t *desc;
  tir_func_t *impl;
} sch_intrin_t;

/* Registers an intrinsic from TVMScript texts of its two functions (parsed
 * once; thread-safe). MLC_EINVAL if the name is taken or a text is bad. */
int sch_intrin_register(const char *name, const char *desc_tvmscript, const char *impl_tvmscript);
/* NULL when unknown. Built-in intrinsics are registered on first lookup. */
const sch_intrin_t *sch_intrin_get(const char *name);
/* Names of all registered intrinsics (borrowed). */
const char *const *sch_intrin_names(int *n);

#ifdef __cplusplus
}
#endif
#endif /* MLC_SCHEDULE_H */
