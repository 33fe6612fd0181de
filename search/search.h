/*
 * search.h - the tuner's core (DESIGN.md, Search): design-space rules,
 * postprocessors, mutators, candidates, evolutionary search per task, the
 * measurement transport, the task scheduler and the tuning driver behind
 * `mlc-tune`. Names follow MetaSchedule's (ScheduleRule, Postproc, Mutator,
 * EvolutionarySearch, TaskScheduler) so a TVM user can find their way.
 *
 * Layout of the folder (each part one private area):
 *   space/     rules and design-space generation   (ms_rule_*, ms_space_*)
 *   postproc/  postprocessors                      (ms_postproc_*)
 *   evolve/    candidates, mutators, evolutionary search (ms_candidate_*,
 *              ms_mutator_*, ms_search_*)
 *   tune/      transports, task scheduler, driver, progress and plots
 *              (ms_runner_*, ms_tune*)
 *   cli/       mlc-tune
 *
 * Errors: functions return an mlc status; the detail is in mlc_error_last().
 * Ownership is stated per function; "borrowed" pointers must outlive the
 * call (or the object that keeps them, where said).
 */
#ifndef MLC_SEARCH_H
#define MLC_SEARCH_H

#include "cost-model/cost_model.h"
#include "database/database.h"
#include "schedule/schedule.h"
#include "workers/measure.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* Task context                                                              */
/* ------------------------------------------------------------------------ */

/* What every rule, postprocessor and mutator may look at (MetaSchedule's
 * TuneContext). */
typedef struct {
  const tir_func_t *workload; /* the task's PrimFunc, unscheduled (borrowed) */
  const char *task_name;      /* the function's name */
  mlc_target_t target;
  int num_cores;              /* target.num_cores, or the host's */
  uint64_t seed;
} ms_ctx_t;

/* Fills ctx for workload on target (num_cores from the target). */
void ms_ctx_init(ms_ctx_t *ctx, const tir_func_t *workload, const char *task_name,
                 const mlc_target_t *target, uint64_t seed);

/* Block and root annotations the rules leave for the postprocessors
 * (MetaSchedule's keys, so traces read the same as TVM's). */
#define MS_ANN_TILING_STRUCTURE "meta_schedule.tiling_structure"
#define MS_ANN_PARALLEL "meta_schedule.parallel"           /* root: max parallel extent */
#define MS_ANN_VECTORIZE "meta_schedule.vectorize"         /* root: max vector extent */
#define MS_ANN_UNROLL_EXPLICIT "meta_schedule.unroll_explicit" /* root: max unroll step */
#define MS_ANN_UNROLL_IMPLICIT "meta_schedule.unroll_implicit" /* root: loops marked, not copied */
#define MS_ANN_AUTO_TENSORIZE "meta_schedule.auto_tensorize"   /* block: intrinsic name */
/* block: the intrinsic for its init, moved onto the init block by
 * RewriteReductionBlock */
#define MS_ANN_AUTO_TENSORIZE_INIT "meta_schedule.auto_tensorize_init"
/* copy block: pack the copied buffer in strips of this width (RewriteLayout);
 * beside it, MS_ANN_LAYOUT_AXIS names the axis (default the last) */
#define MS_ANN_LAYOUT_REWRITE "meta_schedule.layout_rewrite_preproc"
#define MS_ANN_LAYOUT_AXIS "meta_schedule.layout_rewrite_axis"
#define MS_ANN_RANDOM_COMPUTE_LOCATION "meta_schedule.random_compute_producer"
/* GPU (docs/search/gpu.md). A shared-memory read cache whose fused loop
 * RewriteCooperativeFetch splits over the block's threads; the value is the
 * vector length of each thread's load (a SampleCategorical variable). */
#define MS_ANN_COOPERATIVE_FETCH "meta_schedule.cooperative_fetch"
/* block: the threads per block its kernel may use, [low, high]
 * (MultiLevelTiling on GPUs; VerifyGPUCode checks them). */
#define MS_ANN_THREAD_EXTENT_LOW "meta_schedule.thread_extent_low_inclusive"
#define MS_ANN_THREAD_EXTENT_HIGH "meta_schedule.thread_extent_high_inclusive"
/* block: a tensor-core tile, run by a whole warp (TVM's attr::warp_execution):
 * its kernel has threadIdx.x = the warp's lanes even where no loop binds it
 * (RewriteCooperativeFetch, VerifyGPUCode). */
#define MS_ANN_WARP_EXECUTION "warp_execution"

/* ------------------------------------------------------------------------ */
/* Design space: rules                                                       */
/* ------------------------------------------------------------------------ */

typedef struct ms_rule ms_rule_t;

/* A schedule rule (ScheduleRule). apply() takes `sch` (owned: it frees it
 * or returns it) and the name of one of its blocks, and appends to *out the
 * schedules it makes from it (one or more: forks for variants; the input
 * unchanged when the rule does not apply). A primitive that fails inside a
 * rule drops that fork, never the others. */
struct ms_rule {
  const char *name; /* "AutoInline", "MultiLevelTiling", ... */
  int (*apply)(const ms_rule_t *self, const ms_ctx_t *ctx, sch_t *sch, const char *block,
               sch_t ***out, int *nout, int *cap);
  void (*free)(ms_rule_t *self); /* NULL when static */
  const void *params;            /* the rule's own settings */
};

/* MetaSchedule's CPU defaults (DESIGN.md): AutoInline, AddRFactor,
 * MultiLevelTilingWithIntrin (AVX-512 FMA / VNNI, only when the target has
 * them), MultiLevelTiling SSRSRS (max innermost factor 64, write cache `may`
 * at levels 1-2), ParallelizeVectorizeUnroll (parallel up to 16 x cores,
 * vectorize up to 64, unroll {0, 16, 64, 512}), RandomComputeLocation.
 * The array is static; n is set. */
const ms_rule_t *const *ms_rules_cpu_default(const ms_ctx_t *ctx, int *n);
/* MetaSchedule's CUDA defaults (ScheduleRule::DefaultCUDA; docs/search/gpu.md),
 * for cuda and rocm targets, limits from ctx->target (max_threads_per_block,
 * thread_warp_size): MultiLevelTiling SSSRRSRS bound to blockIdx.x /
 * vthread.x / threadIdx.x (max innermost factor 64, read caches `must` in
 * "shared" at level 4 with cooperative fetch of vector lengths {1, 2, 3, 4,
 * 8, 16} (filtered by dtype), write cache `must` in "local" at level 3);
 * AutoInline (into producers and consumers, no filters); CrossThreadReduction
 * (thread extents {4, ..., 512}); ParallelizeVectorizeUnroll (no parallel or
 * vector, unroll {0, 16, 64, 512, 1024} explicit); AutoBind (256 thread
 * blocks, thread extents {32, ..., 1024}). Static array; n is set. */
const ms_rule_t *const *ms_rules_cuda_default(const ms_ctx_t *ctx, int *n);
/* The defaults for ctx->target's kind: llvm -> ms_rules_cpu_default, cuda
 * and rocm -> ms_rules_cuda_default. The same dispatch for postprocessors
 * and mutators below (ms_postprocs_default, ms_mutators_default). */
const ms_rule_t *const *ms_rules_default(const ms_ctx_t *ctx, int *n);
/* True for the GPU target kinds (cuda, rocm). */
bool ms_target_is_gpu(const mlc_target_t *t);
/* True for cuda targets of sm_70 and newer. Their defaults are TVM's
 * DefaultCUDATensorCore sets: the rules with MultiLevelTilingTensorCore
 * (WMMA sketches for fp16 matmul-like blocks; MultiLevelTiling for the
 * others) in MultiLevelTiling's place, the postprocessors with
 * RewriteTensorize before VerifyGPUCode (docs/search/gpu.md). */
bool ms_target_has_tensor_cores(const mlc_target_t *t);
/* One rule by name (for tests and `mlc-sched space --rules`); NULL if
 * unknown. CPU variants where CPU and GPU share a name. */
const ms_rule_t *ms_rule_find(const char *name);
/* The same, preferring the variant of ctx->target's defaults (CUDA's
 * MultiLevelTiling for a cuda target). */
const ms_rule_t *ms_rule_find_for(const ms_ctx_t *ctx, const char *name);

/* The design space: traces (with sampling instructions and their decisions
 * as first sampled) from applying `rules` to every block in post-order, as
 * MetaSchedule's PostOrderApply does. Owned by the space. */
typedef struct {
  int n;
  sch_trace_t **traces;
} ms_space_t;

int ms_space_generate(ms_space_t *out, const ms_ctx_t *ctx, const ms_rule_t *const *rules, int nrules);
void ms_space_free(ms_space_t *s);

/* ------------------------------------------------------------------------ */
/* Postprocessors                                                            */
/* ------------------------------------------------------------------------ */

typedef struct ms_postproc ms_postproc_t;

/* A postprocessor (Postproc): rewrites sch in place (through traced
 * primitives, so the trace replays to the same program) or rejects it.
 * Returns MLC_OK, or MLC_ESCHEDULE with the reason in mlc_error_last()
 * ("DisallowDynamicLoop: loop i has extent n") when the candidate is invalid;
 * sch is then unusable. */
struct ms_postproc {
  const char *name;
  int (*apply)(const ms_postproc_t *self, const ms_ctx_t *ctx, sch_t *sch);
};

/* CPU defaults in order: DisallowDynamicLoop, RewriteParallelVectorizeUnroll,
 * RewriteReductionBlock, RewriteLayout, RewriteTensorize. Static array. */
const ms_postproc_t *const *ms_postprocs_cpu_default(const ms_ctx_t *ctx, int *n);
/* GPU defaults in order (Postproc::DefaultCUDA): DisallowDynamicLoop,
 * RewriteCooperativeFetch, RewriteUnboundBlock, RewriteParallelVectorizeUnroll,
 * RewriteReductionBlock, VerifyGPUCode (limits from ctx->target). Static. */
const ms_postproc_t *const *ms_postprocs_cuda_default(const ms_ctx_t *ctx, int *n);
const ms_postproc_t *const *ms_postprocs_default(const ms_ctx_t *ctx, int *n);
const ms_postproc_t *ms_postproc_find(const char *name);

/* Records EnterPostproc, then runs each postprocessor; stops at the first
 * rejection (its status and reason). */
int ms_postprocs_apply(const ms_ctx_t *ctx, const ms_postproc_t *const *pp, int n, sch_t *sch);

/* ------------------------------------------------------------------------ */
/* Candidates                                                                */
/* ------------------------------------------------------------------------ */

/* One measurable candidate: the full trace (design part, EnterPostproc,
 * postprocessing) with every decision, the scheduled program it makes, and
 * its hash (XXH64 of the canonical trace JSON text: db_record_t.trace_hash). */
typedef struct {
  sch_trace_t *trace;      /* owned */
  char *trace_json;        /* owned (mlc_free); canonical text */
  uint64_t trace_hash;
  sch_t *sch;              /* owned; sch_func(sch) is the scheduled program */
  double score;            /* the cost model's, when predicted */
} ms_candidate_t;

void ms_candidate_free(ms_candidate_t *c); /* frees members; NULL is fine */

/* The canonical JSON text of t (mlc_json_dumps of sch_trace_to_json; *text
 * freed with mlc_free) and its hash (hash may be NULL): exactly what a record
 * stores as trace_json and db_record_finish hashes into trace_hash. */
int ms_trace_text(char **text, uint64_t *hash, const sch_trace_t *t);

/* The design part of a trace: the instructions before EnterPostproc (the
 * whole trace when it has none), with their decisions. Owned by the caller. */
int ms_trace_design_part(sch_trace_t **out, const sch_trace_t *t);

/* Replays the design part of `trace` on a fresh schedule of ctx->workload
 * (with its decisions when use_decisions, else sampling afresh from `seed`),
 * then runs the postprocessors. MLC_ESCHEDULE with the reason when the
 * replay or a postprocessor rejects it. */
int ms_candidate_make(ms_candidate_t *out, const ms_ctx_t *ctx, const sch_trace_t *trace, bool use_decisions,
                      uint64_t seed, const ms_postproc_t *const *pp, int npp);

/* The cost model's features of a scheduled program as the search reads
 * them, and (code non-NULL) the key of the program it lowers to: lowered
 * with unrolled loops kept as loops (mlc_lower_options_t's
 * keep_unrolled_loops), then cm_extract. *out is owned by the caller
 * (cm_features_free). Errors: mlc_lower's, cm_extract's, MLC_ENOMEM. */
int ms_candidate_features(cm_features_t *out, uint64_t *code, const tir_func_t *scheduled,
                          const mlc_target_t *target);

/* ------------------------------------------------------------------------ */
/* Mutators                                                                  */
/* ------------------------------------------------------------------------ */

typedef struct ms_mutator ms_mutator_t;

/* A mutator (Mutator): from a design trace (no postprocessing part), makes
 * a new one differing in one decision (or one annotation value). Returns
 * MLC_OK with *out owned by the caller, or MLC_ENOTFOUND when it finds
 * nothing to change in t (not an error: the search tries another). */
struct ms_mutator {
  const char *name;
  int (*apply)(const ms_mutator_t *self, const ms_ctx_t *ctx, const sch_trace_t *t, mlc_rng_t *rng,
               sch_trace_t **out);
};

/* CPU defaults with their probabilities (DESIGN.md): MutateTileSize 0.9,
 * MutateComputeLocation 0.05, MutateUnroll 0.03, MutateParallel 0.02. */
typedef struct {
  const ms_mutator_t *mutator;
  double prob;
} ms_mutator_prob_t;
const ms_mutator_prob_t *ms_mutators_cpu_default(const ms_ctx_t *ctx, int *n);
/* GPU defaults (Mutator::DefaultCUDA): MutateTileSize 0.9, MutateUnroll
 * 0.08, MutateThreadBinding 0.02. */
const ms_mutator_prob_t *ms_mutators_cuda_default(const ms_ctx_t *ctx, int *n);
const ms_mutator_prob_t *ms_mutators_default(const ms_ctx_t *ctx, int *n);
const ms_mutator_t *ms_mutator_find(const char *name);

/* ------------------------------------------------------------------------ */
/* Evolutionary search (one task)                                            */
/* ------------------------------------------------------------------------ */

typedef struct {
  int population;          /* 512 */
  double init_db_fraction; /* 0.2: share of the initial population seeded from
                              the database's best */
  int init_min_valid;      /* 50: valid random samples wanted per round */
  int max_fail_rounds;     /* 5: sampling rounds that yield nothing before the
                              task gives up (never hangs) */
  int generations;         /* 4 */
  double mutation_prob;    /* 0.85 */
  double eps_greedy;       /* 0.05: share of each batch picked at random */
  int max_stale_rounds;    /* 5: rounds with nothing new before the task is done */
  int threads;             /* 0: one per CPU this process may use, at most
                              16. Threads that make candidates and lower them
                              for their features; any number makes the same
                              candidates */
} ms_search_options_t;

void ms_search_options_default(ms_search_options_t *o);

typedef struct ms_search ms_search_t;

/* A task's search state. ctx, rules' space and postprocessors are borrowed
 * for its life; `db` (borrowed, may be NULL) is read at creation for the
 * traces already measured for this workload and target (never measured again)
 * and the best ones (seeds). */
int ms_search_create(ms_search_t **out, const ms_ctx_t *ctx, const ms_space_t *space,
                     const ms_postproc_t *const *pp, int npp, const ms_mutator_prob_t *mutators, int nmut,
                     const ms_search_options_t *opts, db_t *db);
void ms_search_free(ms_search_t *s);

/* The next batch of at most n candidates, never measured before (by trace
 * hash), picked by the model's scores (cost model shared across tasks:
 * `group` is the task's). *nout = 0 and *done = true when the task has
 * nothing new left (the space is exhausted or sampling keeps failing: the
 * reason is in ms_search_status). Candidates are owned by the caller
 * (ms_candidate_free each, then mlc_free the array). */
int ms_search_next(ms_search_t *s, cm_model_t *model, uint64_t group, int n, ms_candidate_t **out, int *nout,
                   bool *done);
/* Tells the search what its candidates measured (median seconds, <= 0 for a
 * failure): they join the measured set and the population's elite. */
int ms_search_report(ms_search_t *s, const ms_candidate_t *c, const double *secs, int n);
/* The features the search extracted for the candidate with this trace hash
 * (borrowed: valid until the next ms_search_next or ms_search_free), or NULL
 * when it has none (a random pick it never scored, or one that did not
 * lower). Lets the caller update the cost model without lowering again. */
const cm_features_t *ms_search_features(const ms_search_t *s, uint64_t trace_hash);
/* One line on why the task stopped, or "" while it runs (borrowed). */
const char *ms_search_status(const ms_search_t *s);

/* ------------------------------------------------------------------------ */
/* Transport to measurement                                                  */
/* ------------------------------------------------------------------------ */

/* One candidate to measure. */
typedef struct {
  const tir_func_t *workload;   /* borrowed */
  const sch_trace_t *trace;     /* borrowed: the full trace */
  const mlc_target_t *target;   /* borrowed */
  bool baseline;                /* time one call after the warm-up and skip the
                                   correctness check (the untuned default, which
                                   can take seconds a call); else the runner's
                                   measurement options as they are */
  double slow_secs;             /* > 0: the options' slow_secs for this job (a
                                   warm-up longer than this is the measurement);
                                   ms_tune sets it from the task's best time */
} ms_job_t;

/* The runner's options adjusted for a baseline job (number, repeat 1;
 * min_repeat_ms 0; no check), the options themselves otherwise. */
mlc_measure_options_t ms_job_options(const ms_job_t *job, const mlc_measure_options_t *runner_opts);

typedef struct ms_runner ms_runner_t;

/* How candidates reach measurement (an interface: step 5 runs local worker
 * processes, step 6 a ZeroMQ broker). run() measures n jobs and fills
 * results[i] for each (failed candidates carry their error kind); it returns
 * an error status only when the transport itself failed. device_key and
 * device_json describe where the jobs ran (for the records). */
struct ms_runner {
  const char *name;
  int (*run)(ms_runner_t *self, const ms_job_t *jobs, int n, mlc_measure_result_t *results);
  void (*free)(ms_runner_t *self);
  char device_key[64];   /* "llvm-sapphirerapids" */
  char device_json[512]; /* {"cpu":"...","cores":2} */
  char worker_id[64];
};

/* Measures on this machine. With `workers` K > 1, a batch is compiled by K
 * builder processes at once (mlc_measure_build, objects in a private
 * temporary directory removed afterwards), then the objects are loaded and
 * timed one at a time in batch order (mlc_measure_prebuilt): timings are as
 * honest as with K = 1, where each job is mlc_measure in turn. K = the
 * target's cores (mlc-tune's default) keeps them all busy building. Results
 * are mlc_measure's. MLC_EINVAL unless 1 <= K <= 256. opts borrowed
 * (copied). */
int ms_runner_local(ms_runner_t **out, int workers, const mlc_measure_options_t *opts);
/* The local runner for `target`: ms_runner_local for llvm; for cuda and
 * rocm, GPU 0 of that kind is probed in a child process (this process never
 * loads the driver: measurements are forked from it) and must exist and be
 * of the target's architecture; jobs then go as ms_runner_local's (K
 * builders, timed one at a time, on the GPU: opts' prebuilt_kind is set to
 * the target's kind), the device key is the target's ("cuda-sm90") and
 * device_json the GPU's properties. MLC_ENOTFOUND when there is no such GPU ("no CUDA
 * device on this machine (<the driver's reason>): ... pass --farm
 * ENDPOINT"), MLC_EUNSUPPORTED when it is of another architecture, MLC_EIO
 * when the probe could not run, MLC_EINVAL as ms_runner_local. */
int ms_runner_local_target(ms_runner_t **out, const mlc_target_t *target, int workers,
                           const mlc_measure_options_t *opts);
void ms_runner_free(ms_runner_t *r); /* NULL is fine */

/* ------------------------------------------------------------------------ */
/* Tuning (mlc-tune)                                                         */
/* ------------------------------------------------------------------------ */

typedef enum { MS_SCHED_GRADIENT, MS_SCHED_ROUND_ROBIN } ms_task_sched_kind_t;

typedef struct {
  int trials;                 /* total measurement budget over all tasks */
  int per_round;              /* candidates per round (64) */
  uint64_t seed;
  cm_model_kind_t model;      /* CM_MODEL_XGB */
  ms_task_sched_kind_t scheduler; /* gradient (alpha 0.2, window 3) */
  ms_search_options_t search;
  const char *plot_path;      /* NULL: no SVG */
  const char *model_dir;      /* NULL: a new model, not saved. Else the model
                                 saved there (cm_model_save) is continued when
                                 it loads and is of this kind (else a new one,
                                 with a warning), and saved there at the end */
  volatile int *stop;         /* non-NULL: *stop != 0 ends after the running round */
  bool progress_tty;          /* one rewritten status line instead of log lines */
  int confirm;                /* a candidate that would be a task's new best is
                                 measured this many times more before it is
                                 recorded, its record holding every run (its
                                 median their median), so one lucky timing does
                                 not make the best (2; 0: off) */
} ms_tune_options_t;

void ms_tune_options_default(ms_tune_options_t *o);

/* Per task, what tuning found. */
typedef struct {
  char name[128];
  uint64_t key;
  int weight;                 /* identical functions folded into one task */
  int trials;                 /* measured in this run */
  int trials_before;          /* in the database before it */
  double best_secs;           /* median, 0 when nothing measured well */
  double default_secs;        /* the default schedule's (ms_default_trace), 0 if unmeasured */
  double flop;                /* floating-point operations of one call */
  char status[160];           /* why it stopped early, or "" */
} ms_task_report_t;

typedef struct {
  int ntasks;
  ms_task_report_t *tasks;    /* owned (ms_tune_result_free) */
  double wall_secs, search_secs, measure_secs;
} ms_tune_result_t;
void ms_tune_result_free(ms_tune_result_t *r);

/* Tunes every function of `funcs` (n of them; names[i] their names) for
 * target: deduplicates by workload key (weights), commits workloads and every
 * measured trial to db, resumes from what db already holds, and fills *out.
 * Returns MLC_OK when it ran (tasks that gave up say why in their status). */
int ms_tune(ms_tune_result_t *out, tir_func_t *const *funcs, const char *const *names, int n,
            const mlc_target_t *target, db_t *db, ms_runner_t *runner, const ms_tune_options_t *opts);

/* For a program whose main work is ms_tune (mlc-tune, the benchmarks): asks
 * the C library to keep the memory free() gives back instead of returning
 * it to the kernel. A round of the search builds and drops thousands of
 * lowered programs on several threads; with glibc's defaults their arenas go
 * back to the kernel and fault in again each time (munmap, and TLB
 * shootdowns across the threads), about a fifth of the search's time on
 * GMM-1024. The price is a resident size that stays near its peak.
 * Process-wide (mallopt), so the program decides: call it once, before any
 * thread starts. Does nothing with a C library other than glibc. */
void ms_tune_keep_freed_memory(void);

/* The default schedule ms_tune measures first for each task and stores as
 * a record (not a trial), the baseline of its speedup: mlc_default_schedule
 * (what mlc-compile builds without a record), made on a copy of f named
 * "main" so every function of one workload has the same trace; the empty
 * trace (the program as written) for a target without a default schedule.
 * *trace (sch_trace_free) and *json, its canonical JSON text (mlc_free; may
 * be NULL when not wanted). MLC_ENOMEM, or mlc_default_schedule's error. */
int ms_default_trace(sch_trace_t **trace, char **json, const tir_func_t *f, const mlc_target_t *target);

/* Floating-point operations of one call of f (multiply-adds count 2), for
 * GFLOP/s. */
double ms_func_flop(const tir_func_t *f);

#ifdef __cplusplus
}
#endif
#endif /* MLC_SEARCH_H */
