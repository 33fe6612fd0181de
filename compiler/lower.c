/*
 * lower.c - the lowering pass table (MLC_LOWER_PASSES in compiler.h) and its
 * driver, mlc_lower: a copy of the scheduled function goes through every pass
 * in order; the program can be shown after any of them (`--dump-after`).
 *
 * Each pass is one function in compiler/lower/<file>.c (docs/compiler/
 * lowering.md describes them with examples). Every pass keeps the function
 * runnable by the reference interpreter with the same results, which is how
 * they are tested.
 */
#include <string.h>

#include "compiler/compiler.h"
#include "compiler/lower/compact_buffers.h"
#include "compiler/lower/cross_thread_reduce.h"
#include "compiler/lower/flatten_buffers.h"
#include "compiler/lower/gpu_sync.h"
#include "compiler/lower/lower_init_block.h"
#include "compiler/lower/plan_allocations.h"
#include "compiler/lower/remove_blocks.h"
#include "compiler/lower/simplify.h"
#include "compiler/lower/storage_rewrite.h"
#include "compiler/lower/tensor_core.h"
#include "compiler/lower/unroll.h"
#include "compiler/lower/vectorize.h"

typedef struct {
  const char *name;
  mlc_pass_fn fn;
} pass_entry_t;

static const pass_entry_t passes[MLC_PASS_COUNT] = {
#define MLC_PASS_ENTRY_(e, name, fn) {name, fn},
    MLC_LOWER_PASSES(MLC_PASS_ENTRY_)
#undef MLC_PASS_ENTRY_
};

const char *mlc_pass_name(mlc_pass_id_t id) {
  return (unsigned)id < MLC_PASS_COUNT ? passes[id].name : "unknown";
}

mlc_pass_fn mlc_pass_fn_of(mlc_pass_id_t id) { return (unsigned)id < MLC_PASS_COUNT ? passes[id].fn : NULL; }

int mlc_pass_lookup(mlc_pass_id_t *out, const char *name) {
  for (int i = 0; name && i < MLC_PASS_COUNT; i++) {
    if (strcmp(passes[i].name, name) != 0) continue;
    *out = (mlc_pass_id_t)i;
    return MLC_OK;
  }
  return mlc_error_set(MLC_ENOTFOUND, "unknown lowering pass '%s'", name ? name : "(null)");
}

/* dump_after must be NULL, "all" or a pass name. */
static int check_dump_after(const char *dump_after) {
  mlc_pass_id_t id;
  if (!dump_after || strcmp(dump_after, "all") == 0) return MLC_OK;
  if (mlc_pass_lookup(&id, dump_after) == MLC_OK) return MLC_OK;
  mlc_strbuf_t sb;
  mlc_sb_init(&sb);
  for (int i = 0; i < MLC_PASS_COUNT; i++) mlc_sb_printf(&sb, "%s, ", passes[i].name);
  int rc = mlc_error_set(MLC_EINVAL, "unknown pass '%s' to dump after (passes: %sall)", dump_after, mlc_sb_str(&sb));
  mlc_sb_free(&sb);
  return rc;
}

static bool wants_dump(const mlc_lower_options_t *opts, const char *pass) {
  return opts && opts->dump && opts->dump_after &&
         (strcmp(opts->dump_after, "all") == 0 || strcmp(opts->dump_after, pass) == 0);
}

int mlc_lower(tir_func_t **out, const tir_func_t *scheduled, const mlc_target_t *target,
              const mlc_lower_options_t *opts) {
  *out = NULL;
  int rc = check_dump_after(opts ? opts->dump_after : NULL);
  if (rc != MLC_OK) return rc;
  mlc_target_t host;
  if (!target) {
    mlc_target_host(&host);
    target = &host;
  }
  tir_func_t *f = tir_func_clone(scheduled);
  if (!f) return mlc_error_set(MLC_ENOMEM, "lower: out of memory copying %s", scheduled->name);
  mlc_strbuf_t *notes = opts ? opts->notes : NULL;
  for (int i = 0; i < MLC_PASS_COUNT; i++) {
    mlc_pass_fn fn = passes[i].fn;
    if (i == MLC_PASS_UNROLL && opts && opts->keep_unrolled_loops) fn = mlc_pass_unroll_mark;
    rc = fn(f, target, notes);
    if (rc != MLC_OK) {
      mlc_error_prefix("lower %s: %s", f->name, passes[i].name);
      tir_func_free(f);
      return rc;
    }
    if (wants_dump(opts, passes[i].name)) opts->dump(passes[i].name, f, opts->payload);
  }
  *out = f;
  return MLC_OK;
}
