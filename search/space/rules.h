/*
 * rules.h - private to search/space/: the schedule rules of the design space
 * (MetaSchedule's ScheduleRule family, the files of src/meta_schedule/schedule_rule),
 * their parameters, and the helpers they share (finding a block's random
 * variable by name, forking a schedule, handing schedules out, and the block
 * analyses the rules check their preconditions with).
 *
 * A rule object is static and carries its settings in `params` (one of the
 * ms_*_params_t below). A variant is the same apply() with other settings:
 * the CUDA ones (ms_rule_*_cuda) are defined beside the CPU ones, and a test
 * makes its own by copying an object and pointing `params` elsewhere;
 * apply() reads only self->params (and the target's limits from the
 * context).
 *
 * The analyses work on the schedule's current program through the schedule
 * library's private path and analysis helpers (schedule/analysis/
 * analysis.h): they record nothing in the trace, as TVM's rules use
 * sch->GetSRef() and the tir analyses rather than traced lookups.
 */
#ifndef MLC_SEARCH_SPACE_RULES_H
#define MLC_SEARCH_SPACE_RULES_H

#include "schedule/analysis/analysis.h"
#include "search/search.h"

/* ------------------------------------------------------------------------ */
/* The rules and their settings                                              */
/* ------------------------------------------------------------------------ */

/* AutoInline (auto_inline.cc). CPU defaults (TVM's ScheduleRule::DefaultLLVM):
 * into_producer false, into_consumer true, inline_const_tensor true,
 * disallow_if_then_else true, require_injective true, require_ordered true,
 * disallowed ops {exp}. */
typedef struct {
  bool into_producer;         /* reverse_compute_inline into a single complete producer */
  bool into_consumer;         /* compute_inline into the consumers */
  bool inline_const_tensor;   /* blocks that read nothing are always inlined */
  bool disallow_if_then_else; /* no if/Select/if_then_else/predicate in the block */
  bool require_injective;     /* every read maps to the write injectively ... */
  bool require_ordered;       /* ... and in the same order of dimensions */
  int ndisallow_ops;
  const tir_op_t *disallow_ops; /* blocks calling these are not inlined */
} ms_auto_inline_params_t;

/* AddRFactor (add_rfactor.cc): max_jobs_per_core 16, max_innermost_factor 64. */
typedef struct {
  int max_jobs_per_core;
  int max_innermost_factor;
} ms_add_rfactor_params_t;

/* How MultiLevelTiling adds a write cache (ReuseConfig): none, "may" (fork:
 * without the cache, and with it at each level) or "must" (with it only). */
typedef enum { MS_REUSE_NONE, MS_REUSE_MAY, MS_REUSE_MUST } ms_reuse_kind_t;
#define MS_REUSE_MAX_LEVELS 4
typedef struct {
  ms_reuse_kind_t req;
  int nlevels;
  int levels[MS_REUSE_MAX_LEVELS]; /* 1-based tile levels: the cache goes under the last loop of that level */
  const char *scope;               /* "global" */
} ms_reuse_t;

/* MultiLevelTiling (multi_level_tiling.cc): CPU "SSRSRS", max innermost
 * factor 64, write cache `may` in "global" at levels 1 and 2. CUDA
 * (ms_rule_mlt_cuda): "SSSRRSRS", the loops of the first three levels fused
 * and bound to blockIdx.x, vthread.x, threadIdx.x, read caches `must` in
 * "shared" at level 4 (each fetch loop fused and annotated for cooperative
 * fetch with a sampled vector length), write cache `must` in "local" at
 * level 3. */
#define MS_MLT_MAX_BINDS 4
#define MS_MLT_MAX_VECTOR_LENS 8
typedef struct {
  const char *structure; /* 'S' and 'R' per level, outermost first */
  int max_innermost_factor;
  ms_reuse_t reuse_write;
  ms_reuse_t reuse_read; /* MS_REUSE_NONE or MUST ("may" is not TVM's either) */
  int ntile_binds;       /* the first ntile_binds levels are fused and bound */
  const char *tile_binds[MS_MLT_MAX_BINDS];
  int nvector_load_lens; /* cooperative fetch vector lengths (0: no annotation) */
  int vector_load_lens[MS_MLT_MAX_VECTOR_LENS];
} ms_mlt_params_t;

/* CrossThreadReduction (cross_thread_reduction.cc): thread extents
 * {4, 8, ..., 512} sampled uniformly; the target's max_threads_per_block
 * and thread_warp_size decide which blocks need it. */
#define MS_MAX_THREAD_EXTENTS 8
typedef struct {
  int nthread_extents;
  int64_t thread_extents[MS_MAX_THREAD_EXTENTS];
} ms_cross_thread_params_t;

/* AutoBind (auto_bind.cc): max_threadblocks 256, thread extents
 * {32, 64, ..., 1024} (those within the target's max_threads_per_block). */
typedef struct {
  int64_t max_threadblocks;
  int nthread_extents;
  int64_t thread_extents[MS_MAX_THREAD_EXTENTS];
} ms_auto_bind_params_t;

/* ParallelizeVectorizeUnroll (parallel_vectorize_unroll.cc): annotates the
 * root block; max_jobs_per_core 16, max_vectorize_extent 64, unroll steps
 * {0, 16, 64, 512} sampled uniformly, explicit unroll. -1 / 0 steps disable
 * the part. */
#define MS_PVU_MAX_STEPS 8
typedef struct {
  int max_jobs_per_core;
  int max_vectorize_extent;
  int nunroll_steps;
  int64_t unroll_max_steps[MS_PVU_MAX_STEPS];
  bool unroll_explicit; /* meta_schedule.unroll_explicit, else unroll_implicit */
} ms_pvu_params_t;

/* MultiLevelTilingTensorCore (search/space/rule_mlt_tensor_core.c,
 * multi_level_tiling_tensor_core.cc): the intrinsics of one tensor-core
 * tile (TVM's intrin group), by registered name. */
typedef struct {
  const char *init, *load_a, *load_b, *compute, *store;
} ms_tc_intrins_t;

/* Its settings. CUDA (ms_rule_mlt_tensor_core): the WMMA 16x16x16 fp16
 * group, sm_70 and newer, "SSSRRSRS" with levels 1-3 bound to blockIdx.y,
 * blockIdx.x, threadIdx.y, max innermost factor 4, the accumulator under
 * level 3, shared read caches under level 4 (cooperative fetch, vector
 * lengths {1, 2, 3, 4, 8, 16} filtered by dtype), fragments under level 5;
 * other blocks and targets go to `fallback` (the GPU MultiLevelTiling). */
#define MS_TC_MAX_GROUPS 4
#define MS_TC_NBINDS 3
typedef struct {
  int ngroups;
  ms_tc_intrins_t groups[MS_TC_MAX_GROUPS]; /* tried in order */
  int min_sm;                               /* cuda -arch=sm_XY with XY >= this */
  const char *structure;
  int max_innermost_factor;
  const char *tile_binds[MS_TC_NBINDS];
  int acc_level, read_level, frag_level; /* 1-based tile levels */
  const char *read_scope;                /* "shared" */
  int nvector_load_lens;
  int vector_load_lens[MS_MLT_MAX_VECTOR_LENS];
  const ms_rule_t *fallback;
} ms_mlt_tc_params_t;

extern const ms_rule_t ms_rule_auto_inline;
extern const ms_rule_t ms_rule_add_rfactor;
extern const ms_rule_t ms_rule_mlt;
extern const ms_rule_t ms_rule_pvu;
extern const ms_rule_t ms_rule_random_compute_location;
/* The CUDA variants and rules (ScheduleRule::DefaultCUDA). */
extern const ms_rule_t ms_rule_mlt_cuda;
extern const ms_rule_t ms_rule_auto_inline_cuda;
extern const ms_rule_t ms_rule_pvu_cuda;
extern const ms_rule_t ms_rule_cross_thread_reduction;
extern const ms_rule_t ms_rule_auto_bind;
/* ScheduleRule::DefaultCUDATensorCore's tiling: replaces ms_rule_mlt_cuda
 * in the defaults of cuda targets of sm_70 and newer; registered by the name
 * "MultiLevelTilingTensorCore". */
extern const ms_rule_t ms_rule_mlt_tensor_core;
/* MultiLevelTilingWithIntrin for AVX-512 (search/space/rule_mlt_intrin.c,
 * written separately); registered by the name "MultiLevelTilingWithIntrin". */
extern const ms_rule_t ms_rule_mlt_intrin_avx512;

/* A block annotated "disable" under this key is never auto-inlined. */
#define MS_ANN_INLINE_RULE "meta_schedule.inline_rule"

/* ------------------------------------------------------------------------ */
/* Handing schedules out                                                     */
/* ------------------------------------------------------------------------ */

/* Appends s to the rule's output array (growing it). Takes s in every case:
 * on MLC_ENOMEM it is freed. */
int ms_out_push(sch_t ***out, int *nout, int *cap, sch_t *s);

/* An independent copy of sch for a fork, its RNG reseeded from sch's (TVM's
 * Copy + ForkSeed), so forks sample differently but deterministically.
 * MLC_ENOMEM. */
int ms_fork(sch_t **out, sch_t *sch);

/* Drops a fork whose primitive failed: logs why at debug level (the rule
 * and the schedule's error) and frees it. */
void ms_drop_fork(sch_t *sch, const char *rule);

/* ------------------------------------------------------------------------ */
/* Blocks                                                                    */
/* ------------------------------------------------------------------------ */

/* The random variable the trace already has for the block named `name`
 * (the space generator looks every block up once, as TVM's BlockCollector
 * does; rules reuse those variables so the trace names each block once);
 * when the trace has none, sch_get_block records one. MLC_ENOTFOUND when
 * the program has no such block. */
int ms_block_rv(sch_t *sch, const char *name, sch_rv_t *out);

/* Path to the block named `name` in sch's current program; false if none. */
bool ms_find_block(const sch_t *sch, const char *name, sch_path_t *path);
/* The block at the end of a block path. */
static inline tir_block_t *ms_path_block(const sch_path_t *p) { return p->stmts[p->n - 1]->u.realize.block; }
/* True for the function's root block (no enclosing block). */
bool ms_is_root(const sch_path_t *path);
/* True when the block's scope is the root block (a direct child of it). */
bool ms_scope_is_root(const sch_path_t *path);
/* The loops between the block's scope and the block, outermost first; the
 * count (at most cap written). */
int ms_block_loops(const sch_path_t *path, tir_stmt_t **loops, int cap);

/* ------------------------------------------------------------------------ */
/* MultiLevelTiling's GPU steps (rule_mlt.c), shared with the tensor cores   */
/* ------------------------------------------------------------------------ */

/* AddReadReuse for read `read` (ndim dimensions) of `block`: cache_read into
 * `scope` for the block alone, computed at `loop`, the cache's last ndim
 * loops fused and annotated meta_schedule.cooperative_fetch with a vector
 * length sampled uniformly among lens[0..nlens) that suit the dtype (16
 * bytes at most for float32/float16; no annotation when none does). A
 * failed primitive's status (the fork is then unusable). */
int ms_mlt_cooperative_read(sch_t *sch, sch_rv_t block, int read, int ndim, const char *scope, sch_rv_t loop,
                            const int *lens, int nlens);
/* On GPU targets: `block` annotated with the threads per block its kernel
 * may use (TVM's thread_extent_{low,high}_inclusive, checked by
 * VerifyGPUCode): at least a warp when spatial_product (the spatial loops'
 * extents multiplied) exceeds two warps, at most max_threads_per_block.
 * Nothing on other targets. A failed primitive's status. */
int ms_mlt_annotate_thread_extents(sch_t *sch, sch_rv_t block, const mlc_target_t *t, int64_t spatial_product);

/* ------------------------------------------------------------------------ */
/* GPU threads (thread_bind.c)                                               */
/* ------------------------------------------------------------------------ */

/* How ms_bind_block_thread_idx picks the thread count: sampled uniformly
 * among `extents` that fit (AutoBind), or, with nextents 0, the largest
 * allowed (RewriteUnboundBlock). */
typedef struct {
  int64_t max_threadblocks;     /* 256 */
  int64_t max_threads_per_block; /* the target's */
  int nextents;
  const int64_t *extents;
} ms_thread_bind_t;

/* A loop bound to a thread axis whose tag starts with `prefix` ("blockIdx",
 * "threadIdx", "threadIdx.x"). */
bool ms_loop_bound_to(const tir_stmt_t *loop, const char *prefix);
/* TVM's BindBlockThreadIdx on the block named `name` (thread_bind.c says
 * what it does). MLC_OK when bound or left alone (root, tiled, bound
 * already); a failed primitive's status otherwise (sch unusable then). */
int ms_bind_block_thread_idx(sch_t *sch, const char *name, const ms_thread_bind_t *tb);

/* ------------------------------------------------------------------------ */
/* Analyses (TVM's src/tir/schedule/analysis, the parts the rules use)      */
/* ------------------------------------------------------------------------ */

/* Every iter var spatial (IsSpatial). */
bool ms_block_is_spatial(const tir_block_t *b);
/* Every block of f spatial (IsSpatialPrimFunc). */
bool ms_func_is_spatial(const tir_func_t *f);
/* The block carries MS_ANN_TILING_STRUCTURE (HasBeenMultiLevelTiled). */
bool ms_block_is_tiled(const tir_block_t *b);
/* An integer annotation equal to v. */
bool ms_block_ann_int_is(const tir_block_t *b, const char *key, int64_t v);
/* Each binding is exactly the loop variable of the loop at its position
 * (IsTrivialBinding). */
bool ms_is_trivial_binding(const sch_path_t *path);
/* A reduction with data reuse worth multi-level tiling
 * (NeedsMultiLevelTiling): one write, some reads, not spatial, trivial
 * binding, no duplicated read buffer, constant read extents, and some read
 * (other than the output) not indexed by some spatial block var of extent
 * other than 1. */
bool ms_needs_multi_level_tiling(const sch_path_t *path);
/* TVM's NeedsRFactorOrCrossThreadReduction: a reduction block (trivial
 * binding, not tiled, its loops a chain of spatial and reduction loops of
 * constant extent) that has too little spatial parallelism: with data reuse
 * when space < reduce and space <= max_parallel_extent; without, when
 * reduce > max_parallel_basic. */
bool ms_needs_rfactor_or_cross_thread(sch_t *sch, const sch_path_t *path, int64_t max_parallel_extent,
                                      int64_t max_parallel_basic);
/* TVM's ReorderAndFuseReductionLoops: the block's spatial loops first, then
 * its reduction loops fused into *fused; *nspatial counts the spatial
 * loops. MLC_ESCHEDULE when a loop is neither. */
int ms_reorder_and_fuse_reduction(sch_t *sch, sch_rv_t block, sch_rv_t *fused, int *nspatial);


/* TVM's AnalyzeReadWritePattern of one read region against the write
 * region: every write index must be a plain block var and every read index a
 * constant or `var +/- const` of one of them (else exists is false). */
typedef struct {
  bool exists, surjective, injective, ordered, no_const_read, no_shift_read;
} ms_rw_pattern_t;
ms_rw_pattern_t ms_analyze_rw_pattern(const tir_region_t *read, const tir_region_t *write);
/* One write, and every read maps to it injectively and in order
 * (IsWriteCache: an elementwise epilogue counts). */
bool ms_block_is_write_cache(const tir_block_t *b);
/* The statement calls one of ops (HasOp). */
bool ms_stmt_has_op(tir_stmt_t *s, const tir_op_t *ops, int nops);
/* An if, a Select, an if_then_else call or a non-trivial block predicate in s
 * (HasIfThenElse). */
bool ms_stmt_has_if_then_else(tir_stmt_t *s);

#endif /* MLC_SEARCH_SPACE_RULES_H */
