/*
 * parse_internal.h - what the TVMScript parser's files share: tokens, the
 * parser state, scopes, typed expression values and the entry points of each
 * grammar part.
 *
 * The parser is split by grammar area: lexer.c (tokens), parser.c (entry
 * points, errors, tokens, scopes), parse_func.c (modules, functions,
 * parameters, the implicit root block), parse_stmt.c (statements),
 * parse_block.c (blocks and buffers), parse_expr.c (operators and literal
 * typing) and parse_call.c (the T.* functions usable in expressions).
 *
 * Errors and out-of-memory both longjmp to the one jmp_buf in parser_t: every
 * allocation is in an arena (the module's for IR nodes, a scratch arena for
 * tokens, scopes and temporary arrays), so unwinding leaks nothing. Parse
 * functions therefore return plain values and never report failure.
 */
#ifndef MLC_TIR_PARSE_INTERNAL_H
#define MLC_TIR_PARSE_INTERNAL_H

#include "tir/tir.h"

#include <setjmp.h>

enum {
  PARSE_MAX_DEPTH = 200,   /* recursion of the parse functions (brackets, blocks) */
  PARSE_MAX_HEIGHT = 1000, /* height of a built expression or statement tree */
};

/* ------------------------------------------------------------------------ */
/* Tokens                                                                    */
/* ------------------------------------------------------------------------ */

typedef enum {
  TK_NAME, TK_INT, TK_FLOAT, TK_STRING, TK_OP, TK_NEWLINE, TK_INDENT, TK_DEDENT, TK_EOF
} tok_kind_t;

typedef struct {
  tok_kind_t kind;
  const char *text; /* into the source; empty for NEWLINE, INDENT, DEDENT, EOF */
  size_t len;
  int line, col;    /* 1-based */
  size_t line_start;/* source offset of the token's line */
  uint64_t ival;    /* TK_INT */
  double fval;      /* TK_FLOAT */
  const char *str;  /* TK_STRING: decoded, NUL-terminated (scratch arena) */
} tok_t;

/* Growable arrays in the scratch arena (old blocks stay there until the end). */
#define PVEC(T) struct { T *data; int len, cap; }
#define pvec_push(p, v, x)                                                            \
  ((v)->len == (v)->cap ? pvec_grow_((p), (void **)&(v)->data, &(v)->cap, (v)->len,   \
                                     sizeof(*(v)->data))                              \
                        : (void)0,                                                    \
   (v)->data[(v)->len++] = (x))

/* ------------------------------------------------------------------------ */
/* Parser state                                                              */
/* ------------------------------------------------------------------------ */

typedef enum { SYM_VAR, SYM_BUFFER } sym_kind_t;

typedef struct {
  const char *name; /* into the source */
  size_t len;
  sym_kind_t kind;
  tir_var_t *var;
  tir_buffer_t *buffer;
  tir_expr_t *loop_min, *loop_extent; /* loop variables: the loop's range (T.axis.remap) */
  int param_index;                    /* handle parameters: index, else -1 */
} sym_t;

/* Where a statement list sits; some statements are only valid in some lists. */
typedef enum { LIST_FUNC, LIST_BLOCK, LIST_OTHER } list_kind_t;

/* The block being parsed: its header statements fill these. */
typedef struct block_ctx {
  struct block_ctx *parent;
  PVEC(tir_iter_var_t) iters;
  PVEC(tir_expr_t *) bindings;
  PVEC(tir_region_t) reads;
  PVEC(tir_region_t) writes;
  bool has_reads, has_writes;
  PVEC(tir_buffer_t *) allocs;
  PVEC(tir_match_buffer_t) matches;
  PVEC(tir_annot_t) annots;
  tir_stmt_t *init;
  tir_expr_t *where;
  int scope;      /* scope mark at the block's start: later symbols are its own */
  bool in_header; /* parsing T.reads/T.writes/T.where/T.axis/T.block_attr */
} block_ctx_t;

/* The function being parsed. */
typedef struct {
  tir_func_t *f;
  PVEC(tir_buffer_t *) root_allocs; /* T.alloc_buffer outside any block */
  int nblocks;                      /* blocks seen anywhere in the body */
} func_ctx_t;

typedef struct parser {
  const char *src;
  size_t len;
  const char *filename;
  tir_parse_error_t *err; /* may be NULL */
  jmp_buf jmp;            /* longjmp(jmp, 1): out of memory; 2: parse error */
  mlc_arena_t *tmp;       /* tokens, scopes, scratch arrays */
  mlc_arena_t *arena;     /* the module's: every IR node */
  tir_module_t *module;
  PVEC(tok_t) toks;
  int pos;
  PVEC(sym_t) syms;
  int depth;              /* parse recursion, PARSE_MAX_DEPTH */
  int open_lets;          /* enclosing let/assert/decl_buffer bodies */
  func_ctx_t *fn;
  block_ctx_t *blk;       /* innermost block, NULL outside blocks */
  list_kind_t list;       /* the statement list being parsed */
} parser_t;

/* A parsed expression with what literal typing needs: `lit` marks an untyped
 * literal (a bare int or float), which takes the dtype of the other operand
 * in a binary operation; `fval` keeps a float literal's exact value. */
typedef struct {
  tir_expr_t *e;
  int height;
  bool lit;
  double fval;
} pexpr_t;

/* ------------------------------------------------------------------------ */
/* parser.c: errors, tokens, scopes, scratch memory                          */
/* ------------------------------------------------------------------------ */

MLC_NORETURN void parse_fail(parser_t *p, const tok_t *t, const char *fmt, ...) MLC_PRINTF(3, 4);
MLC_NORETURN void parse_fail_at(parser_t *p, int line, int col, size_t line_start,
                                const char *fmt, ...) MLC_PRINTF(5, 6);
/* How a token reads in a message: 'newline', 'end of input', or its text. */
const char *tok_desc(parser_t *p, const tok_t *t);

const tok_t *peek(parser_t *p);
const tok_t *peek_at(parser_t *p, int k);
const tok_t *advance(parser_t *p);
bool tok_is_op(const tok_t *t, const char *op);
bool tok_is_name(const tok_t *t, const char *name);
bool tok_is_keyword(const tok_t *t);
bool accept_op(parser_t *p, const char *op);
const tok_t *expect_op(parser_t *p, const char *op);
const tok_t *expect_name(parser_t *p, const char *what);
const tok_t *expect_string(parser_t *p, const char *what);
void expect_newline(parser_t *p);
/* True at `T . NAME` where NAME is `name` (NULL: any). */
bool at_t_attr(parser_t *p, const char *name);
/* Reads `T.a.b` (at least one part) into a scratch string "a.b"; *first is
 * the `T` token. */
const char *parse_t_path(parser_t *p, const tok_t **first);
/* True at `NAME =` with a keyword argument (not `==`). */
bool at_kwarg(parser_t *p);

void parse_enter(parser_t *p, const tok_t *t);
void parse_leave(parser_t *p);

void pvec_grow_(parser_t *p, void **data, int *cap, int len, size_t elem);
/* Copies n elements into the module arena (NULL when n == 0). */
void *parse_dup(parser_t *p, const void *src, int n, size_t elem);
/* A token's text as a NUL-terminated string in the module arena. */
char *tok_strdup(parser_t *p, const tok_t *t);
/* A token's text as a NUL-terminated string in the scratch arena. */
char *tok_tmpdup(parser_t *p, const tok_t *t);

int scope_mark(parser_t *p);
void scope_restore(parser_t *p, int mark);
sym_t *scope_declare(parser_t *p, const tok_t *name, sym_kind_t kind);
sym_t *scope_lookup(parser_t *p, const char *name, size_t len);

/* ------------------------------------------------------------------------ */
/* lexer.c                                                                   */
/* ------------------------------------------------------------------------ */

/* Tokenizes p->src into p->toks (ends with TK_EOF). */
void parse_lex(parser_t *p);

/* ------------------------------------------------------------------------ */
/* parse_func.c                                                              */
/* ------------------------------------------------------------------------ */

void parse_program(parser_t *p);

/* ------------------------------------------------------------------------ */
/* parse_stmt.c                                                              */
/* ------------------------------------------------------------------------ */

/* `":" NEWLINE INDENT stmt+ DEDENT` or `":" simple_stmt`, as a list of kind
 * (a lexical scope); an empty list is T.evaluate(0). */
tir_stmt_t *parse_suite(parser_t *p, list_kind_t kind);

/* ------------------------------------------------------------------------ */
/* parse_block.c                                                             */
/* ------------------------------------------------------------------------ */

tir_stmt_t *parse_block(parser_t *p, const tok_t *with_tok);
tir_stmt_t *parse_init(parser_t *p, const tok_t *with_tok);
void parse_axis_assign(parser_t *p, const tok_t **targets, int ntargets);
void parse_where(parser_t *p, const tok_t *t);
void parse_reads_writes(parser_t *p, const tok_t *t, bool writes);
void parse_block_attr(parser_t *p, const tok_t *t);
/* A buffer named in a block's header must come from outside the block: the
 * header prints before the block's own declarations. */
void check_header_buffer(parser_t *p, const tok_t *name, const sym_t *s);

/* What T.Buffer / T.match_buffer / T.alloc_buffer / T.decl_buffer take. */
typedef struct {
  tir_dtype_t dtype;
  PVEC(tir_expr_t *) shape;
  PVEC(tir_expr_t *) strides;
  bool has_strides;
  tir_expr_t *elem_offset;
  const char *scope;
  int align, offset_factor;
  tir_var_t *data;       /* data=Y.data / data=handle_var (views only); NULL: none */
  const tok_t *data_tok; /* the `data` keyword, for errors */
} buffer_spec_t;
/* Shape, dtype and keyword arguments up to (not including) `closer`. */
void parse_buffer_args(parser_t *p, buffer_spec_t *spec, const char *closer, const char *fn);
/* A new buffer with its own data var; data= is an error here (views only). */
tir_buffer_t *buffer_from_spec(parser_t *p, const tok_t *name, const buffer_spec_t *spec);
/* `X = T.alloc_buffer(...)`, `X = T.decl_buffer(...)` (returns the ALLOCATE
 * whose body the caller fills), `X = T.match_buffer(...)`. */
void parse_alloc_buffer(parser_t *p, const tok_t *name, const tok_t *fn_tok);
tir_stmt_t *parse_decl_buffer(parser_t *p, const tok_t *name, const tok_t *fn_tok);
void parse_match_buffer(parser_t *p, const tok_t *name, const tok_t *fn_tok);
/* `X = T.Buffer(shape, dtype, data=Y.data, ...)` in a body: a view of
 * existing storage, declared in the current scope; no statement. */
void parse_buffer_view(parser_t *p, const tok_t *name, const tok_t *fn_tok);

/* ------------------------------------------------------------------------ */
/* parse_expr.c                                                              */
/* ------------------------------------------------------------------------ */

pexpr_t parse_pexpr(parser_t *p);
/* An expression with literals at their default dtype. */
tir_expr_t *parse_expr(parser_t *p);
/* An expression that must be of dtype bool (`what` names it in the error). */
tir_expr_t *parse_cond(parser_t *p, const char *what);
/* An integer expression (shapes, extents, indices). */
pexpr_t parse_index_pexpr(parser_t *p, const char *what);

pexpr_t pexpr_of(parser_t *p, const tok_t *t, tir_expr_t *e, int height);
/* An untyped integer literal (int32, or int64 when it does not fit). */
pexpr_t pexpr_lit_int(parser_t *p, const tok_t *t, int64_t v);
/* Gives both operands one dtype (literal typing and integer widening);
 * `op` names the operation in errors, reported at t. */
void unify(parser_t *p, const tok_t *t, const char *op, pexpr_t *a, pexpr_t *b);
/* A literal (or typed value) converted to dtype `to` as the operand of op. */
pexpr_t coerce(parser_t *p, const tok_t *t, const char *op, pexpr_t v, tir_dtype_t to);
pexpr_t make_binary(parser_t *p, const tok_t *t, const char *op, tir_expr_kind_t kind,
                    pexpr_t a, pexpr_t b);
/* The extent of [start, stop) after unifying the two (start may be converted):
 * folded for constants, exactly e when stop is `start + e`, else stop - start. */
tir_expr_t *range_extent(parser_t *p, const tok_t *t, const char *op, pexpr_t *start,
                         pexpr_t *stop);
/* `NAME "." "data"` for buffer b (the NAME already taken): its data var. */
tir_var_t *parse_buffer_data(parser_t *p, const tok_t *name, tir_buffer_t *b);
/* `NAME "[" ... "]"` for buffer b (the NAME already taken) as a load. */
pexpr_t parse_load(parser_t *p, const tok_t *name, tir_buffer_t *b);
/* `"[" index ("," index)* "]"` for buffer b: slices become Ramp indices.
 * *out is a scratch array; *height the tallest index. */
int parse_indices(parser_t *p, tir_buffer_t *b, const tok_t *name, tir_expr_t ***out, int *height);
/* `A[i, 0:16]` as a region (the NAME already taken). */
tir_region_t parse_region(parser_t *p, const tok_t *name, tir_buffer_t *b);
const char *dtype_name(tir_dtype_t t, char buf[24]);

/* ------------------------------------------------------------------------ */
/* parse_call.c                                                              */
/* ------------------------------------------------------------------------ */

/* `T.path(args)` in an expression (`T.path` already read). */
pexpr_t parse_t_call(parser_t *p, const tok_t *t, const char *path);
/* A dtype given as a string literal: "float32". */
tir_dtype_t parse_dtype_string(parser_t *p);
/* `T.float32` style type annotations; false when the path is not a dtype. */
bool dtype_from_path(const char *path, tir_dtype_t *out);
/* `{"key": value, ...}` into annotations. */
int parse_annotations(parser_t *p, tir_annot_t **out);
/* An integer literal (optionally negative) as an int. */
int64_t parse_int_literal(parser_t *p, const char *what);

#endif /* MLC_TIR_PARSE_INTERNAL_H */
