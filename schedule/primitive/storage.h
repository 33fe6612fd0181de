/*
 * storage.h - what the storage primitives share (cache_read_write.c,
 * layout.c), and the text form of an index map that transform_layout
 * records in the trace. Private to schedule/.
 */
#ifndef MLC_SCHEDULE_PRIMITIVE_STORAGE_H
#define MLC_SCHEDULE_PRIMITIVE_STORAGE_H

#include "schedule/state.h"

/* A storage scope TVM accepts: global, shared, shared.dyn, local, warp and
 * the wmma fragments (wmma.matrix_a, wmma.matrix_b, wmma.accumulator). */
bool sch_storage_scope_valid(const char *scope);

/* TVM's name for a buffer moved to `scope`: "A" + "shared" -> "A_shared";
 * dots become underscores ("A_shared_dyn") so the name is an identifier. */
const char *sch_scoped_buffer_name(mlc_arena_t *a, const char *name, const char *scope);

/* The buffer of the block's `index`-th read (is_write false) or write region;
 * the block is path's last statement. Fails (naming `prim`) when the index is
 * out of range. */
int sch_nth_access_buffer(sch_t *sch, const char *prim, const sch_path_t *path, int index, bool is_write,
                          tir_buffer_t **out);

/* Where `buffer` is defined, searching the blocks of `path` from its end up:
 * the depth of the block that allocates it (*is_match false) or matches it
 * with T.match_buffer (*is_match true), or -1 when no block does (a
 * function parameter). */
int sch_buffer_def_depth(const sch_path_t *path, const tir_buffer_t *buffer, bool *is_match);

/* The lambda text of an index map, in arena `a`, as TVM's
 * IndexMap.ToPythonString writes it: `lambda i, j: (i // 16, j, i % 16,)`.
 * Source variables whose names are not distinct identifiers print as i0,
 * i1, ... (schedule/trace/index_map.c reads the text back.) */
const char *sch_index_map_str(mlc_arena_t *a, const sch_index_map_t *map);

#endif /* MLC_SCHEDULE_PRIMITIVE_STORAGE_H */
