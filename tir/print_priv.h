/*
 * print_priv.h - what the parts of the TVMScript printer share: the printer
 * state and the entry points of each part.
 *
 *   printer.c      functions and modules (signature, preamble, root block) and
 *                  the public tir_print_* entry points
 *   print_stmt.c   statements, loops (T.grid folding), blocks, regions and
 *                  buffer declarations
 *   print_expr.c   expressions with Python precedence, immediates, strings
 *   print_names.c  Python identifiers for variables and buffers, with scopes
 *   print_views.c  declarations of buffers nothing declares (lowering's flat
 *                  views of a parameter): `C_1 = T.Buffer((4096,), data=C.data)`
 *
 * The format is docs/tir.md "Canonical TVMScript"; the parser reads it back.
 */
#ifndef MLC_TIR_PRINT_PRIV_H
#define MLC_TIR_PRINT_PRIV_H

#include "tir/ptrmap.h"
#include "tir/tir.h"

/* A set of strings (the names taken in the function being printed). A name
 * released at the end of its scope keeps its slot, marked not live, so the
 * open addressing needs no tombstones. */
typedef struct {
  const char *name;
  bool live;
} tir_print_strslot_t;

typedef struct {
  size_t cap, len; /* cap is a power of two or 0; len counts used slots */
  tir_print_strslot_t *slots;
} tir_print_strset_t;

/* Views: buffers used in a function but declared nowhere (not a parameter's
 * buffer, not allocated, matched or decl_buffer'ed), such as lowering's flat
 * 1-D views that share a parameter's data var. They print as TVM prints a
 * DeclBuffer without allocation, `C_1 = T.Buffer((4096,), data=C.data)`, as
 * soon as what they name is defined (print_views.c). One list per function,
 * shared by its dry runs (which append the views they meet, in order of
 * first use) and its real run (which declares them). */
typedef struct {
  const tir_buffer_t **bufs;
  int n, cap;
} tir_print_views_t;

typedef struct {
  mlc_strbuf_t *sb;         /* output */
  mlc_arena_t *arena;       /* names and tables; freed by tir_printer_fini */
  int indent;               /* spaces before each statement line */
  tir_ptrmap_t names;       /* var or buffer -> its printed name (char *) */
  tir_ptrmap_t data_owner;  /* a buffer's data var -> the buffer (prints `A.data`) */
  tir_print_strset_t taken; /* names in use, Python keywords and reserved names */
  /* Variables named in the scopes now open, innermost last: closing a scope
   * releases their names (tir_printer_scope_close). */
  const void **scoped;
  int nscoped, cap_scoped;
  /* Enclosing loops, innermost last: the T.axis.remap test looks them up. */
  const tir_stmt_t **loops;
  int nloops, cap_loops;
  /* Dry run of a function: variables used with no definition before them, in
   * order of first use (they get `x = T.int32()` lines in the preamble). */
  bool collect_free;
  tir_var_t **free_vars;
  int nfree, cap_free;
  tir_print_views_t *views; /* NULL outside a function (tir_print_stmt) */
  bool oom;                 /* an allocation failed: the output is not to be used */
} tir_printer_t;

/* A predicate that is constant true (or absent): no T.where. */
static inline bool tir_printer_is_true(const tir_expr_t *e) {
  return !e || (e->kind == TIR_INT_IMM && e->u.int_value != 0);
}

/* print_names.c */
bool tir_printer_init(tir_printer_t *p, mlc_strbuf_t *sb);
void tir_printer_fini(tir_printer_t *p);
/* The name `node` (a var or a buffer) prints as; NULL when it has none yet. */
const char *tir_printer_name_of(const tir_printer_t *p, const void *node);
/* Gives `node` an identifier made from `hint` that no live name uses (kept
 * if it has one). The name stays taken for the whole function: parameters,
 * buffers, symbolic variables declared at function level. */
const char *tir_printer_define(tir_printer_t *p, const void *node, const char *hint);
/* The same for a variable of the innermost open scope (loop, block iter and
 * let variables): its name is released when that scope closes. */
const char *tir_printer_define_local(tir_printer_t *p, const tir_var_t *v);
/* A scope is a mark into the stack of scoped variables. */
int tir_printer_scope_open(const tir_printer_t *p);
void tir_printer_scope_close(tir_printer_t *p, int mark);
/* A buffer definition: names it and remembers its data var. */
const char *tir_printer_define_buffer(tir_printer_t *p, const tir_buffer_t *b);
/* `hint` made a valid identifier on its own (function names). */
const char *tir_printer_identifier(tir_printer_t *p, const char *hint);
void tir_printer_put_var(tir_printer_t *p, const tir_var_t *v);
/* Dry runs: v is used with no definition (listed once; no name given). */
void tir_printer_note_free(tir_printer_t *p, const tir_var_t *v);
void tir_printer_put_buffer(tir_printer_t *p, const tir_buffer_t *b);
/* Loop stack for the remap test. */
void tir_printer_push_loop(tir_printer_t *p, const tir_stmt_t *loop);
void tir_printer_pop_loop(tir_printer_t *p);

/* printer.c */
/* `n = T.int32()` lines for the variables of b's shape, strides and
 * elem_offset that have no name yet, in that order of first appearance;
 * `scoped`: names of the innermost open scope (a block's match_buffer). */
void tir_printer_declare_buffer_vars(tir_printer_t *p, const tir_buffer_t *b, bool scoped);

/* print_views.c */
void tir_print_views_fini(tir_print_views_t *v); /* frees the list */
/* A dry run met b with no declaration: appends it unless listed, and notes
 * the variables it names that nothing defines as free. */
void tir_printer_note_view(tir_printer_t *p, const tir_buffer_t *b);
/* At a definition point: `X = T.Buffer(...)` lines for the listed views not
 * yet declared whose data var, shape, strides and elem_offset are now all
 * defined. */
void tir_printer_declare_views(tir_printer_t *p);

/* print_expr.c */
void tir_printer_expr(tir_printer_t *p, const tir_expr_t *e);
/* `min + extent` as a range stop: folded when both are integer constants. */
void tir_printer_stop(tir_printer_t *p, const tir_expr_t *min, const tir_expr_t *extent);
void tir_printer_string(mlc_strbuf_t *sb, const char *s);
/* "T.float32" (annotations, `T.int32()` declarations). */
void tir_printer_dtype_annot(mlc_strbuf_t *sb, tir_dtype_t t);
/* `"float32"` with quotes. */
void tir_printer_dtype_str(mlc_strbuf_t *sb, tir_dtype_t t);
/* `{"key": value, ...}` in stored order. */
void tir_printer_annots(tir_printer_t *p, const tir_annot_t *annots, int n);
/* Shortest text that reads back (through the builders' rounding to t) to v,
 * Python-style: "0.1", "100", "1e-05", "3.4028234663852886e+38", "inf". */
void tir_print_float_text(char *buf, size_t len, double v, tir_dtype_t t);

/* print_stmt.c */
void tir_printer_stmt(tir_printer_t *p, const tir_stmt_t *s);
/* A statement list as a body: `T.evaluate(0)` when there is nothing. */
void tir_printer_body(tir_printer_t *p, const tir_stmt_t *s);
void tir_printer_line(tir_printer_t *p); /* starts a line: the indentation */
/* `(shape), "dtype", strides=..., ...` for T.Buffer / T.alloc_buffer /
 * T.match_buffer / T.decl_buffer; float32 omitted unless always_dtype;
 * `data=Y.data` after the dtype when with_data (views). */
void tir_printer_buffer_args(tir_printer_t *p, const tir_buffer_t *b, bool always_dtype,
                             bool with_data);
/* `X = T.alloc_buffer(...)` lines of a block (root included). */
void tir_printer_alloc_buffers(tir_printer_t *p, const tir_block_t *b);

#endif /* MLC_TIR_PRINT_PRIV_H */
