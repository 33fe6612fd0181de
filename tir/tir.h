/*
 * tir.h - the tensor IR of mlc-tune: nodes, builders, one visitor and one
 * mutator, TVMScript printer and parser, structural equality and the workload
 * key, the verifier, arithmetic (simplifier and iteration-map analysis), the
 * reference interpreter and the built-in workload library.
 *
 * Memory: every node lives in an arena (support.h) owned by its function or
 * module; nothing is freed node by node. Nodes are immutable once shared: a
 * transformation builds new nodes (the mutator returns the very same node when
 * no child changed). Variables and buffers are compared by identity; their
 * names are for printing only.
 *
 * The CPU and the GPU live in one IR: storage scopes, thread-bound loops,
 * vector lanes and every dtype of DESIGN.md are here from the start.
 */
#ifndef MLC_TIR_H
#define MLC_TIR_H

#include "support/support.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TIR_MAX_DIMS 8

/* ------------------------------------------------------------------------ */
/* Data types                                                                */
/* ------------------------------------------------------------------------ */

/* Type codes follow DLPack (dlpack.h) so the ABI can pass them through. */
typedef enum {
  TIR_CODE_INT = 0,
  TIR_CODE_UINT = 1, /* bool is uint with 1 bit */
  TIR_CODE_FLOAT = 2,
  TIR_CODE_HANDLE = 3, /* bits 64: a pointer; bits 0: void */
  TIR_CODE_BFLOAT = 4,
} tir_type_code_t;

typedef struct {
  uint8_t code;   /* tir_type_code_t */
  uint8_t bits;
  uint16_t lanes; /* 1 for scalars */
} tir_dtype_t;

/* The scalar dtypes of DESIGN.md.
 *      enum      name        code        bits */
#define TIR_DTYPE_MAP(X)                      \
  X(BOOL,     "bool",     TIR_CODE_UINT,   1) \
  X(INT8,     "int8",     TIR_CODE_INT,    8) \
  X(INT16,    "int16",    TIR_CODE_INT,   16) \
  X(INT32,    "int32",    TIR_CODE_INT,   32) \
  X(INT64,    "int64",    TIR_CODE_INT,   64) \
  X(UINT8,    "uint8",    TIR_CODE_UINT,   8) \
  X(UINT16,   "uint16",   TIR_CODE_UINT,  16) \
  X(UINT32,   "uint32",   TIR_CODE_UINT,  32) \
  X(UINT64,   "uint64",   TIR_CODE_UINT,  64) \
  X(FLOAT16,  "float16",  TIR_CODE_FLOAT, 16) \
  X(BFLOAT16, "bfloat16", TIR_CODE_BFLOAT,16) \
  X(FLOAT32,  "float32",  TIR_CODE_FLOAT, 32) \
  X(FLOAT64,  "float64",  TIR_CODE_FLOAT, 64) \
  X(HANDLE,   "handle",   TIR_CODE_HANDLE,64) \
  X(VOID,     "void",     TIR_CODE_HANDLE, 0)

#define TIR_DT_(enum_, name, code, bits) \
  static inline tir_dtype_t tir_dt_##enum_(void) { tir_dtype_t t = {code, bits, 1}; return t; }
TIR_DTYPE_MAP(TIR_DT_)
#undef TIR_DT_
/* tir_dt_FLOAT32(), tir_dt_INT32(), ... */

static inline tir_dtype_t tir_dtype(int code, int bits, int lanes) {
  tir_dtype_t t = {(uint8_t)code, (uint8_t)bits, (uint16_t)lanes};
  return t;
}
static inline bool tir_dtype_eq(tir_dtype_t a, tir_dtype_t b) {
  return a.code == b.code && a.bits == b.bits && a.lanes == b.lanes;
}
static inline tir_dtype_t tir_dtype_lanes(tir_dtype_t t, int lanes) {
  t.lanes = (uint16_t)lanes;
  return t;
}
static inline tir_dtype_t tir_dtype_scalar(tir_dtype_t t) { return tir_dtype_lanes(t, 1); }
static inline bool tir_dtype_is_bool(tir_dtype_t t) { return t.code == TIR_CODE_UINT && t.bits == 1; }
static inline bool tir_dtype_is_int(tir_dtype_t t) { return t.code == TIR_CODE_INT; }
static inline bool tir_dtype_is_uint(tir_dtype_t t) { return t.code == TIR_CODE_UINT && t.bits > 1; }
static inline bool tir_dtype_is_integer(tir_dtype_t t) {
  return t.code == TIR_CODE_INT || t.code == TIR_CODE_UINT; /* includes bool */
}
static inline bool tir_dtype_is_float(tir_dtype_t t) {
  return t.code == TIR_CODE_FLOAT || t.code == TIR_CODE_BFLOAT;
}
static inline bool tir_dtype_is_handle(tir_dtype_t t) { return t.code == TIR_CODE_HANDLE; }
/* Storage size of one element (all lanes), rounded up to bytes. */
static inline int tir_dtype_bytes(tir_dtype_t t) { return (t.bits * t.lanes + 7) / 8; }

/* Parses "float32", "int8", "float32x8", "bool", "handle". MLC_EINVAL if not a dtype. */
int tir_dtype_parse(tir_dtype_t *out, const char *s, size_t len);
/* "float32x8" into buf (>= 24 bytes); returns buf. */
char *tir_dtype_str(tir_dtype_t t, char *buf);

/* Correctly rounded (round-to-nearest-even) conversions for 16-bit floats. */
uint16_t tir_f32_to_f16(float f);
float tir_f16_to_f32(uint16_t h);
uint16_t tir_f32_to_bf16(float f);
float tir_bf16_to_f32(uint16_t h);

/* ------------------------------------------------------------------------ */
/* Node kinds (closed sets, listed once)                                     */
/* ------------------------------------------------------------------------ */

/* Expression kinds. The shape column says which union member of tir_expr_t
 * the kind uses; the visitor and mutator are generated from it.
 *      enum        TVM name      shape      python operator (for printing) */
#define TIR_EXPR_KINDS(X)                                   \
  X(INT_IMM,     "IntImm",     IMM,       "")                \
  X(FLOAT_IMM,   "FloatImm",   IMM,       "")                \
  X(STRING_IMM,  "StringImm",  IMM,       "")                \
  X(VAR,         "Var",        LEAF,      "")                \
  X(ADD,         "Add",        BINARY,    "+")               \
  X(SUB,         "Sub",        BINARY,    "-")               \
  X(MUL,         "Mul",        BINARY,    "*")               \
  X(DIV,         "Div",        BINARY,    "/")  /* truncdiv on integers */ \
  X(MOD,         "Mod",        BINARY,    "")   /* truncmod */ \
  X(FLOOR_DIV,   "FloorDiv",   BINARY,    "//")              \
  X(FLOOR_MOD,   "FloorMod",   BINARY,    "%")               \
  X(MIN,         "Min",        BINARY,    "")                \
  X(MAX,         "Max",        BINARY,    "")                \
  X(EQ,          "EQ",         BINARY,    "==")              \
  X(NE,          "NE",         BINARY,    "!=")              \
  X(LT,          "LT",         BINARY,    "<")               \
  X(LE,          "LE",         BINARY,    "<=")              \
  X(GT,          "GT",         BINARY,    ">")               \
  X(GE,          "GE",         BINARY,    ">=")              \
  X(AND,         "And",        BINARY,    "and")             \
  X(OR,          "Or",         BINARY,    "or")              \
  X(NOT,         "Not",        UNARY,     "not")             \
  X(CAST,        "Cast",       UNARY,     "")                \
  X(SELECT,      "Select",     SELECT,    "")                \
  X(BUFFER_LOAD, "BufferLoad", LOAD,      "")                \
  X(RAMP,        "Ramp",       RAMP,      "")                \
  X(BROADCAST,   "Broadcast",  BROADCAST, "")                \
  X(CALL,        "Call",       CALL,      "")

typedef enum {
#define TIR_ENUM_(e, name, shape, op) TIR_##e,
  TIR_EXPR_KINDS(TIR_ENUM_)
#undef TIR_ENUM_
  TIR_EXPR_KIND_COUNT
} tir_expr_kind_t;

typedef enum {
  TIR_SHAPE_IMM, TIR_SHAPE_LEAF, TIR_SHAPE_BINARY, TIR_SHAPE_UNARY, TIR_SHAPE_SELECT,
  TIR_SHAPE_LOAD, TIR_SHAPE_RAMP, TIR_SHAPE_BROADCAST, TIR_SHAPE_CALL
} tir_expr_shape_t;

/* Statement kinds.
 *      enum            TVM name */
#define TIR_STMT_KINDS(X)                 \
  X(BUFFER_STORE,  "BufferStore")          \
  X(LET,           "LetStmt")              \
  X(ATTR,          "AttrStmt")             \
  X(ASSERT,        "AssertStmt")           \
  X(FOR,           "For")                  \
  X(IF,            "IfThenElse")           \
  X(SEQ,           "SeqStmt")              \
  X(EVALUATE,      "Evaluate")             \
  X(ALLOCATE,      "Allocate")             \
  X(BLOCK_REALIZE, "BlockRealize")

typedef enum {
#define TIR_ENUM_(e, name) TIR_##e,
  TIR_STMT_KINDS(TIR_ENUM_)
#undef TIR_ENUM_
  TIR_STMT_KIND_COUNT
} tir_stmt_kind_t;

/* Loop kinds.   enum          TVMScript spelling */
#define TIR_FOR_KINDS(X)                 \
  X(SERIAL,        "serial")             \
  X(PARALLEL,      "parallel")           \
  X(VECTORIZED,    "vectorized")         \
  X(UNROLLED,      "unroll")             \
  X(THREAD_BINDING,"thread_binding")

typedef enum {
#define TIR_ENUM_(e, name) TIR_FOR_##e,
  TIR_FOR_KINDS(TIR_ENUM_)
#undef TIR_ENUM_
} tir_for_kind_t;

/* Block iteration variable types.  enum   axis spelling  remap letter */
#define TIR_ITER_TYPES(X)                \
  X(SPATIAL, "spatial", 'S')             \
  X(REDUCE,  "reduce",  'R')             \
  X(SCAN,    "scan",    'C')             \
  X(OPAQUE,  "opaque",  'O')

typedef enum {
#define TIR_ENUM_(e, name, letter) TIR_ITER_##e,
  TIR_ITER_TYPES(TIR_ENUM_)
#undef TIR_ENUM_
} tir_iter_type_t;

/* Calls: intrinsic operators. nargs -1 means variadic.
 *      enum               TVMScript name         nargs  pure */
#define TIR_CALL_OPS(X)                                         \
  X(EXP,               "exp",                  1,  true)        \
  X(EXP2,              "exp2",                 1,  true)        \
  X(EXP10,             "exp10",                1,  true)        \
  X(LOG,               "log",                  1,  true)        \
  X(LOG2,              "log2",                 1,  true)        \
  X(LOG10,             "log10",                1,  true)        \
  X(LOG1P,             "log1p",                1,  true)        \
  X(SQRT,              "sqrt",                 1,  true)        \
  X(RSQRT,             "rsqrt",                1,  true)        \
  X(TANH,              "tanh",                 1,  true)        \
  X(SIGMOID,           "sigmoid",              1,  true)        \
  X(FABS,              "fabs",                 1,  true)        \
  X(ABS,               "abs",                  1,  true)        \
  X(ERF,               "erf",                  1,  true)        \
  X(POW,               "pow",                  2,  true)        \
  X(ROUND,             "round",                1,  true)        \
  X(NEARBYINT,         "nearbyint",            1,  true)        \
  X(FLOOR,             "floor",                1,  true)        \
  X(CEIL,              "ceil",                 1,  true)        \
  X(TRUNC,             "trunc",                1,  true)        \
  X(SIN,               "sin",                  1,  true)        \
  X(COS,               "cos",                  1,  true)        \
  X(ISNAN,             "isnan",                1,  true)        \
  X(IF_THEN_ELSE,      "if_then_else",         3,  true)        \
  X(LIKELY,            "likely",               1,  true)        \
  X(REINTERPRET,       "reinterpret",          1,  true)        \
  X(ASSUME,            "assume",               1,  false)       \
  X(TVM_STORAGE_SYNC,  "tvm_storage_sync",     1,  false)       \
  X(CALL_EXTERN,       "call_extern",         -1,  false)       \
  X(CALL_PURE_EXTERN,  "call_pure_extern",    -1,  true)        \
  X(CALL_LLVM_INTRIN,  "call_llvm_intrin",    -1,  false)       \
  X(CALL_LLVM_PURE_INTRIN, "call_llvm_pure_intrin", -1, true)   \
  X(LIST,              "__list__",            -1,  true) /* annotation lists: printed [a, b] */

typedef enum {
#define TIR_ENUM_(e, name, nargs, pure) TIR_OP_##e,
  TIR_CALL_OPS(TIR_ENUM_)
#undef TIR_ENUM_
  TIR_OP_COUNT
} tir_op_t;

/* Name tables generated from the lists above. */
const char *tir_expr_kind_name(tir_expr_kind_t kind);
tir_expr_shape_t tir_expr_kind_shape(tir_expr_kind_t kind);
const char *tir_expr_kind_pyop(tir_expr_kind_t kind); /* "" when none */
const char *tir_stmt_kind_name(tir_stmt_kind_t kind);
const char *tir_for_kind_name(tir_for_kind_t kind);
const char *tir_iter_type_name(tir_iter_type_t type);
char tir_iter_type_letter(tir_iter_type_t type);
const char *tir_op_name(tir_op_t op);
int tir_op_nargs(tir_op_t op);
bool tir_op_is_pure(tir_op_t op);
/* MLC_OK and *out, or MLC_ENOTFOUND. */
int tir_op_lookup(tir_op_t *out, const char *name, size_t len);

/* ------------------------------------------------------------------------ */
/* Nodes                                                                     */
/* ------------------------------------------------------------------------ */

typedef struct tir_expr tir_expr_t;
typedef struct tir_expr tir_var_t; /* an expression of kind TIR_VAR */
typedef struct tir_stmt tir_stmt_t;
typedef struct tir_block tir_block_t;
typedef struct tir_buffer tir_buffer_t;
typedef struct tir_func tir_func_t;
typedef struct tir_module tir_module_t;

typedef struct {
  tir_expr_t *min;
  tir_expr_t *extent;
} tir_range_t;

/* An annotation (loop annotations, block attributes, function attributes).
 * Values are immediates (int, float, bool, string), expressions, or lists
 * (a CALL of TIR_OP_LIST). */
typedef struct {
  const char *key;
  tir_expr_t *value;
} tir_annot_t;

struct tir_expr {
  tir_expr_kind_t kind;
  tir_dtype_t dtype;
  union {
    int64_t int_value;       /* INT_IMM: ints, uints (bit pattern) and bool */
    double float_value;      /* FLOAT_IMM: value already rounded to dtype */
    const char *str_value;   /* STRING_IMM */
    struct { const char *name; } var;              /* VAR: identity is the node */
    struct { tir_expr_t *a, *b; } bin;             /* BINARY shapes */
    struct { tir_expr_t *a; } un;                  /* NOT; CAST (to dtype) */
    struct { tir_expr_t *cond, *t, *f; } select;   /* SELECT */
    struct { tir_buffer_t *buffer; tir_expr_t **indices; int nindices; } load;
    struct { tir_expr_t *base, *stride; int lanes; } ramp;
    struct { tir_expr_t *value; int lanes; } broadcast;
    struct { tir_op_t op; tir_expr_t **args; int nargs; } call;
  } u;
};

/* A buffer: a multi-dimensional view of memory. Compared by identity. */
struct tir_buffer {
  const char *name;
  tir_var_t *data;          /* the handle holding the address */
  tir_dtype_t dtype;
  int ndim;
  tir_expr_t **shape;       /* ndim entries */
  tir_expr_t **strides;     /* NULL (compact row-major) or ndim entries */
  tir_expr_t *elem_offset;  /* NULL means 0 */
  const char *scope;        /* "global", "shared", "shared.dyn", "local", "warp",
                               "wmma.matrix_a", ...; never NULL */
  int align;                /* bytes; 0 = default */
  int offset_factor;        /* 0 = default */
};

typedef struct {
  tir_buffer_t *buffer;
  int ndim;
  tir_range_t *ranges;      /* ndim entries */
} tir_region_t;

typedef struct {
  tir_var_t *var;
  tir_range_t dom;
  tir_iter_type_t type;
} tir_iter_var_t;

/* `B = T.match_buffer(A[region], shape, ...)` inside a block. */
typedef struct {
  tir_buffer_t *buffer;
  tir_region_t source;
} tir_match_buffer_t;

struct tir_block {
  const char *name;
  uint32_t uid;             /* schedule identity (see tir_stmt_t.u.loop.uid) */
  int niter_vars;
  tir_iter_var_t *iter_vars;
  int nreads, nwrites;
  tir_region_t *reads, *writes;
  int nalloc_buffers;
  tir_buffer_t **alloc_buffers;
  int nmatch_buffers;
  tir_match_buffer_t *match_buffers;
  int nannots;
  tir_annot_t *annots;
  tir_stmt_t *init;         /* NULL when the block has no init */
  tir_stmt_t *body;
};

struct tir_stmt {
  tir_stmt_kind_t kind;
  union {
    struct { tir_buffer_t *buffer; tir_expr_t *value; tir_expr_t **indices; int nindices; } store;
    struct { tir_var_t *var; tir_expr_t *value; tir_stmt_t *body; } let;
    /* `with T.attr(node, key, value):` — node is a var or NULL */
    struct { tir_var_t *node; const char *key; tir_expr_t *value; tir_stmt_t *body; } attr;
    struct { tir_expr_t *cond; tir_expr_t *message; tir_stmt_t *body; } assert_;
    struct {
      tir_var_t *var;
      tir_expr_t *min, *extent;
      tir_for_kind_t kind;
      /* Schedule identity: kept by copies (the mutator's copy-on-write, clones)
       * so a schedule's loop and block references survive rewrites of other
       * parts; 0 when unassigned. Ignored by equality, the key and printing. */
      uint32_t uid;
      const char *thread_tag;  /* THREAD_BINDING: "threadIdx.x", "blockIdx.y", "vthread.x" */
      int nannots;
      tir_annot_t *annots;
      tir_stmt_t *body;
    } loop;
    struct { tir_expr_t *cond; tir_stmt_t *then_case, *else_case; } if_; /* else may be NULL */
    struct { tir_stmt_t **stmts; int n; } seq;
    struct { tir_expr_t *value; } evaluate;
    /* Declares `buffer` with its own storage for the extent of `body`
     * (TVMScript `T.decl_buffer` / `T.allocate`, as in lowered code). */
    struct { tir_buffer_t *buffer; tir_stmt_t *body; } allocate;
    struct {
      tir_expr_t **iter_values; /* one per block iter var */
      int n;
      tir_expr_t *predicate;    /* bool; constant true when none */
      tir_block_t *block;
    } realize;
  } u;
};

struct tir_func {
  mlc_arena_t *arena;       /* owns every node of the function */
  bool owns_arena;          /* false when the function belongs to a module */
  const char *name;
  int nparams;
  tir_var_t **params;       /* handles and scalars */
  tir_buffer_t **buffer_map;/* parallel to params: the buffer a handle matches, or NULL */
  int nattrs;
  tir_annot_t *attrs;       /* T.func_attr */
  tir_stmt_t *body;         /* functions with blocks: a BLOCK_REALIZE of the root block */
};

struct tir_module {
  mlc_arena_t *arena;
  const char *name;         /* class name; "Module" by default */
  bool bare_func;           /* parsed from a lone @T.prim_func: printed without the class */
  int nfuncs;
  tir_func_t **funcs;
};

/* ------------------------------------------------------------------------ */
/* Builders                                                                  */
/* ------------------------------------------------------------------------ */
/* Every builder allocates in `arena` (see mlc_arena_alloc for out-of-memory
 * behaviour) and copies the arrays it is given, so callers may pass stack
 * arrays. Builders do not type-check; the verifier does. */

tir_expr_t *tir_int(mlc_arena_t *a, tir_dtype_t t, int64_t v);
tir_expr_t *tir_i32(mlc_arena_t *a, int64_t v);
tir_expr_t *tir_bool(mlc_arena_t *a, bool v);
tir_expr_t *tir_float(mlc_arena_t *a, tir_dtype_t t, double v); /* rounds v to t */
tir_expr_t *tir_string(mlc_arena_t *a, const char *s);
tir_var_t *tir_var(mlc_arena_t *a, const char *name, tir_dtype_t t);
/* Binary kinds: comparisons, AND and OR give bool (with a's lanes); others a's dtype. */
tir_expr_t *tir_binary(mlc_arena_t *a, tir_expr_kind_t kind, tir_expr_t *x, tir_expr_t *y);
tir_expr_t *tir_not(mlc_arena_t *a, tir_expr_t *x);
tir_expr_t *tir_cast(mlc_arena_t *a, tir_dtype_t t, tir_expr_t *x);
tir_expr_t *tir_select(mlc_arena_t *a, tir_expr_t *c, tir_expr_t *t, tir_expr_t *f);
/* dtype is the buffer's, with lanes from a ramp index if any. */
tir_expr_t *tir_load(mlc_arena_t *a, tir_buffer_t *b, tir_expr_t **indices, int n);
tir_expr_t *tir_ramp(mlc_arena_t *a, tir_expr_t *base, tir_expr_t *stride, int lanes);
tir_expr_t *tir_broadcast(mlc_arena_t *a, tir_expr_t *value, int lanes);
tir_expr_t *tir_call(mlc_arena_t *a, tir_dtype_t t, tir_op_t op, tir_expr_t **args, int n);

tir_stmt_t *tir_store(mlc_arena_t *a, tir_buffer_t *b, tir_expr_t *value, tir_expr_t **indices, int n);
tir_stmt_t *tir_let_stmt(mlc_arena_t *a, tir_var_t *v, tir_expr_t *value, tir_stmt_t *body);
tir_stmt_t *tir_attr_stmt(mlc_arena_t *a, tir_var_t *node, const char *key, tir_expr_t *value, tir_stmt_t *body);
tir_stmt_t *tir_assert_stmt(mlc_arena_t *a, tir_expr_t *cond, tir_expr_t *message, tir_stmt_t *body);
tir_stmt_t *tir_for(mlc_arena_t *a, tir_var_t *v, tir_expr_t *min, tir_expr_t *extent,
                    tir_for_kind_t kind, tir_stmt_t *body);
tir_stmt_t *tir_if(mlc_arena_t *a, tir_expr_t *cond, tir_stmt_t *then_case, tir_stmt_t *else_case);
/* Flattens nested SEQs; n == 1 returns the statement itself. */
tir_stmt_t *tir_seq(mlc_arena_t *a, tir_stmt_t **stmts, int n);
tir_stmt_t *tir_evaluate(mlc_arena_t *a, tir_expr_t *value);
tir_stmt_t *tir_allocate(mlc_arena_t *a, tir_buffer_t *b, tir_stmt_t *body);
tir_stmt_t *tir_block_realize(mlc_arena_t *a, tir_expr_t **values, int n, tir_expr_t *predicate,
                              tir_block_t *block);

/* A block with a name and no iter vars, regions or body; fill the fields. */
tir_block_t *tir_block_new(mlc_arena_t *a, const char *name);
/* A shallow copy (arrays copied, nodes shared) to change fields on. */
tir_block_t *tir_block_copy(mlc_arena_t *a, const tir_block_t *b);
tir_stmt_t *tir_stmt_copy(mlc_arena_t *a, const tir_stmt_t *s);   /* shallow */
tir_expr_t *tir_expr_copy(mlc_arena_t *a, const tir_expr_t *e);   /* shallow */
/* A compact global buffer; its data var is a new handle named after it. */
tir_buffer_t *tir_buffer_new(mlc_arena_t *a, const char *name, tir_dtype_t t,
                             tir_expr_t **shape, int ndim, const char *scope);
tir_buffer_t *tir_buffer_copy(mlc_arena_t *a, const tir_buffer_t *b); /* shallow */
tir_region_t tir_region_full(mlc_arena_t *a, tir_buffer_t *b); /* the whole buffer */

/* An empty function owning a fresh arena (NULL when out of memory). */
tir_func_t *tir_func_new(const char *name);
/* Frees the function's arena if it owns it. NULL is fine. */
void tir_func_free(tir_func_t *f);
/* An empty module owning a fresh arena. */
tir_module_t *tir_module_new(const char *name);
void tir_module_free(tir_module_t *m);
/* Looks a function up by name; NULL when absent. */
tir_func_t *tir_module_find(const tir_module_t *m, const char *name);

/* Deep copy into a new arena with fresh variables and buffers (structurally
 * equal to f). The copy owns its arena. NULL when out of memory. */
tir_func_t *tir_func_clone(const tir_func_t *f);
/* The root block of a function with blocks, else NULL. */
tir_block_t *tir_func_root_block(const tir_func_t *f);
/* The annotation value for key, or NULL. */
tir_expr_t *tir_annot_get(const tir_annot_t *annots, int n, const char *key);

/* Immediates: true and *out when e is an integer immediate. */
bool tir_as_int(const tir_expr_t *e, int64_t *out);
bool tir_is_const_int(const tir_expr_t *e, int64_t v);

/* ------------------------------------------------------------------------ */
/* Visitor and mutator (generated from TIR_EXPR_KINDS / TIR_STMT_KINDS)      */
/* ------------------------------------------------------------------------ */

/* Pre-order walk. Each hook is optional; a hook returning false skips the
 * node's children. Blocks are reached through their BLOCK_REALIZE: the walk
 * visits iter var domains, binding values, predicate, region bounds, match
 * buffer regions, init and body. Buffer shapes are not walked. */
typedef struct tir_visitor tir_visitor_t;
struct tir_visitor {
  bool (*expr)(tir_visitor_t *v, tir_expr_t *e);
  bool (*stmt)(tir_visitor_t *v, tir_stmt_t *s);
  /* Called once per block, before its contents. */
  bool (*block)(tir_visitor_t *v, tir_block_t *b, tir_stmt_t *realize);
  /* Called after a statement's children (for scoping). */
  void (*stmt_post)(tir_visitor_t *v, tir_stmt_t *s);
  void *payload;
};
void tir_visit_expr(tir_visitor_t *v, tir_expr_t *e);
void tir_visit_stmt(tir_visitor_t *v, tir_stmt_t *s);

/* Copy-on-write rewrite. Hooks replace a node; a hook that wants the default
 * behaviour for a node calls tir_mutate_*_children. Returns the very same
 * pointer when nothing below changed. The `buffer` hook maps buffers wherever
 * they appear (loads, stores, regions, allocations, match buffers). */
typedef struct tir_mutator tir_mutator_t;
struct tir_mutator {
  mlc_arena_t *arena; /* where new nodes go */
  tir_expr_t *(*expr)(tir_mutator_t *m, tir_expr_t *e);
  tir_stmt_t *(*stmt)(tir_mutator_t *m, tir_stmt_t *s);
  tir_buffer_t *(*buffer)(tir_mutator_t *m, tir_buffer_t *b);
  void *payload;
};
tir_expr_t *tir_mutate_expr(tir_mutator_t *m, tir_expr_t *e);
tir_stmt_t *tir_mutate_stmt(tir_mutator_t *m, tir_stmt_t *s);
tir_expr_t *tir_mutate_expr_children(tir_mutator_t *m, tir_expr_t *e);
tir_stmt_t *tir_mutate_stmt_children(tir_mutator_t *m, tir_stmt_t *s);
/* Block with mutated contents, or b itself. */
tir_block_t *tir_mutate_block(tir_mutator_t *m, tir_block_t *b);

/* Variable substitution: a small map var -> expr. */
typedef struct {
  int n, cap;
  tir_var_t **from;
  tir_expr_t **to;
} tir_var_map_t;
void tir_var_map_set(mlc_arena_t *a, tir_var_map_t *map, tir_var_t *from, tir_expr_t *to);
tir_expr_t *tir_var_map_get(const tir_var_map_t *map, const tir_var_t *v);
tir_expr_t *tir_substitute_expr(mlc_arena_t *a, tir_expr_t *e, const tir_var_map_t *map);
tir_stmt_t *tir_substitute_stmt(mlc_arena_t *a, tir_stmt_t *s, const tir_var_map_t *map);
/* True when e mentions v / any of vars[0..n). */
bool tir_expr_uses_var(tir_expr_t *e, const tir_var_t *v);
bool tir_expr_uses_any_var(tir_expr_t *e, tir_var_t *const *vars, int n);

/* ------------------------------------------------------------------------ */
/* TVMScript                                                                 */
/* ------------------------------------------------------------------------ */

typedef struct {
  char file[256];
  int line, col;          /* 1-based; 0 when not positioned */
  char message[512];      /* what was expected / what is wrong */
  char source_line[256];  /* the offending line, for a caret display */
} tir_parse_error_t;

/* Parses TVMScript (a lone @T.prim_func or an @I.ir_module class). On success
 * *out owns everything (free with tir_module_free). On failure returns
 * MLC_EPARSE (or MLC_ENOMEM) and fills err; mlc_error_last() holds
 * "FILE:LINE:COL: message". `filename` is used in messages only. */
int tir_parse(tir_module_t **out, const char *src, size_t len, const char *filename,
              tir_parse_error_t *err);
/* Same, requiring exactly one function; the function owns its arena. */
int tir_parse_func(tir_func_t **out, const char *src, size_t len, const char *filename,
                   tir_parse_error_t *err);
/* "FILE:LINE:COL: message\n<source line>\n<caret>\n" into sb. */
void tir_parse_error_format(const tir_parse_error_t *err, mlc_strbuf_t *sb);

/* Canonical TVMScript. Returned strings are freed with mlc_free; NULL when out
 * of memory. print(parse(print(f))) is byte-identical to print(f). */
char *tir_print_func(const tir_func_t *f);
char *tir_print_module(const tir_module_t *m);
void tir_print_expr(mlc_strbuf_t *sb, const tir_expr_t *e);
void tir_print_stmt(mlc_strbuf_t *sb, const tir_stmt_t *s, int indent);

/* ------------------------------------------------------------------------ */
/* Structural equality and the workload key                                 */
/* ------------------------------------------------------------------------ */

/* Equal up to renaming of variables and buffers (definitions are matched in
 * order). Function names and the "global_symbol" attribute are ignored. When
 * not equal and why != NULL, a short description of the first difference. */
bool tir_func_equal(const tir_func_t *a, const tir_func_t *b, char *why, size_t why_len);
bool tir_stmt_equal(const tir_stmt_t *a, const tir_stmt_t *b);
/* Expressions with free variables compared by identity. */
bool tir_expr_equal(const tir_expr_t *a, const tir_expr_t *b);

/* The workload key (DESIGN.md): XXH64 over a canonical serialization that
 * ignores variable and buffer names, the function name and global_symbol, and
 * keeps block names, shapes, dtypes, scopes and the body. */
uint64_t tir_func_key(const tir_func_t *f);
/* 16 hex digits into buf[17]; returns buf. */
char *tir_func_key_hex(const tir_func_t *f, char buf[17]);

/* ------------------------------------------------------------------------ */
/* Verifier                                                                  */
/* ------------------------------------------------------------------------ */

/* Checks: undefined variables, block bindings outside their iter-var domains
 * (when provable), dtype mismatches, regions that do not cover the block's
 * accesses, duplicate block names, buffer index counts. MLC_OK or MLC_EVERIFY;
 * every problem found is appended to `errors` (one line each, naming the
 * block/buffer) when it is not NULL, and the first goes to mlc_error_last. */
int tir_verify(const tir_func_t *f, mlc_strbuf_t *errors);

/* Derives a block's read and write regions from its body (what the parser does
 * when T.reads / T.writes are omitted): per buffer, the hull of the accessed
 * indices over the block's inner loops. Buffers allocated in the block are
 * excluded. Results in arena. */
void tir_block_derive_regions(mlc_arena_t *a, tir_block_t *b, tir_region_t **reads, int *nreads,
                              tir_region_t **writes, int *nwrites);

/* ------------------------------------------------------------------------ */
/* GPU constructs (gpu.c)                                                    */
/* ------------------------------------------------------------------------ */

/* The thread a THREAD_BINDING loop's tag names: "blockIdx.y" is
 * TIR_THREAD_BLOCK with *dim 1, "threadIdx.x" TIR_THREAD_THREAD with 0,
 * "vthread" and "vthread.x/y/z" TIR_THREAD_VTHREAD; any other tag (or NULL)
 * is TIR_THREAD_NONE with *dim 0. */
typedef enum { TIR_THREAD_NONE, TIR_THREAD_BLOCK, TIR_THREAD_THREAD, TIR_THREAD_VTHREAD } tir_thread_kind_t;
tir_thread_kind_t tir_thread_tag(const char *tag, int *dim);

/* TVM's WMMA tensor-core calls, `T.call_extern("handle", "tvm_fill_fragment"
 * | "tvm_load_matrix_sync" | "tvm_mma_sync" | "tvm_store_matrix_sync", ...)`
 * (call_pure_extern too), on fragment buffers of scope wmma.matrix_a,
 * wmma.matrix_b or wmma.accumulator. tir_wmma_op: which one e is, or
 * TIR_WMMA_NONE; tir_wmma_name: its name ("(none)" for NONE). */
typedef enum { TIR_WMMA_NONE = -1, TIR_WMMA_FILL, TIR_WMMA_LOAD, TIR_WMMA_MMA, TIR_WMMA_STORE } tir_wmma_op_t;
tir_wmma_op_t tir_wmma_op(const tir_expr_t *e);
const char *tir_wmma_name(tir_wmma_op_t op);
bool tir_wmma_is_fragment(const tir_buffer_t *b);

/* The mma.sync calls of the warp-layout tensor intrinsics
 * (schedule/intrin/builtin_cuda.c, TVM's names), each run by the 32 lanes of
 * a warp together, once per lane inside a threadIdx.x loop of extent 32:
 *   T.call_extern("float16x8", "ptx_ldmatrix_x4", A[row, T.Ramp(col, 1, 8)])
 *     ldmatrix .x4: lane L gives the address of row L % 8 of 8x8 matrix
 *     L / 8 and gets elements (L / 4, 2 (L % 4) + {0, 1}) of matrices 0..3;
 *   T.call_extern("float16x4", "ptx_ldmatrix_x2", ...)  .x2: matrices 0, 1
 *     (lanes 0..15 give the addresses);
 *   T.call_extern("float32x4", "ptx_mma_m16n8k16_row_col_f16f16f32", a, b, c)
 *     mma.sync m16n8k16, float16 A (row) and B (col), float32 C and D, each
 *     operand the lane's registers (PTX ISA, "Matrix fragments for
 *     mma.m16n8k16").
 * Their operands live in "warp" buffers of shape (..., 32, W): element
 * [..., lane, j] is register j of lane `lane`. tir_ptx_op: which call e is,
 * or TIR_PTX_NONE; tir_ptx_name: its name ("(none)" for NONE). */
typedef enum { TIR_PTX_NONE = -1, TIR_PTX_LDMATRIX_X4, TIR_PTX_LDMATRIX_X2, TIR_PTX_MMA_M16N8K16 } tir_ptx_op_t;
tir_ptx_op_t tir_ptx_op(const tir_expr_t *e);
const char *tir_ptx_name(tir_ptx_op_t op);
bool tir_is_warp_buffer(const tir_buffer_t *b);

/* ------------------------------------------------------------------------ */
/* Arithmetic                                                                */
/* ------------------------------------------------------------------------ */

/* Inclusive constant bounds; min/max are INT64_MIN/INT64_MAX when unknown. */
typedef struct { int64_t min, max; } tir_bound_t;

/* An analyzer holds what is known about variables (their ranges) and
 * simplifies and proves with it. It lives in arena `a` (nothing to free), and
 * every expression it builds (simplified results, relaxed bounds, iter maps)
 * goes to that arena too: pass the arena of the function being worked on.
 * NULL when out of memory. Unbound variables range over their dtype. */
typedef struct tir_analyzer tir_analyzer_t;
tir_analyzer_t *tir_analyzer_new(mlc_arena_t *a);
/* v in [min, min + extent) (expressions over other variables allowed; the
 * constant bounds are computed now). Rebinding replaces, keeping v's place in
 * the term order: variables bound earlier come first among terms of equal
 * coefficient, which makes outer loops print first. */
void tir_analyzer_bind(tir_analyzer_t *an, tir_var_t *v, tir_expr_t *min, tir_expr_t *extent);
void tir_analyzer_bind_const(tir_analyzer_t *an, tir_var_t *v, int64_t min, int64_t extent);
/* Assumes cond inside a scope: comparisons of a variable with an expression
 * of known bounds (`i < 5`, `4 <= j`, conjunctions of them) tighten the
 * variable's bounds; other conditions are ignored. Returns a mark for
 * tir_analyzer_pop_constraint, which restores the state before the push. */
int tir_analyzer_push_constraint(tir_analyzer_t *an, tir_expr_t *cond);
void tir_analyzer_pop_constraint(tir_analyzer_t *an, int mark);
/* Constant folding (integers wrap to their width; floats are computed in
 * double and rounded to the dtype, as the interpreter does, and only folded
 * when the result is finite), canonical linear forms, cancellation,
 * floordiv/floormod with known bounds, min/max and comparisons decided from
 * bounds, and/or/not/select with constants, casts of constants. The result is
 * equal in value to e for every binding in range (integer overflow aside, as
 * in TVM). On out of memory it returns e unchanged.
 *
 * Canonical form of an integer sum: terms by descending coefficient, ties by
 * the term order (variables first, in bind order, then unbound variables by
 * name; other terms by kind and then their children), never by address, so the
 * text is the same on every run and machine. Positive terms come first, then
 * a positive constant, then subtracted terms: `i * 16 + j + 1`, `i - j - 2`. */
tir_expr_t *tir_simplify(tir_analyzer_t *an, tir_expr_t *e);
/* Simplifies every expression of s, binding loop variables to their ranges and
 * block iter vars to their domains while descending, and assuming an `if`'s
 * condition inside it (and its negation in the else branch). An `if` whose
 * condition folds to a constant collapses to its branch (no else: Evaluate(0)).
 * Loops are never removed (that is lowering's job). Returns s when unchanged. */
tir_stmt_t *tir_simplify_stmt(tir_analyzer_t *an, tir_stmt_t *s);
/* True only if cond holds for every binding in range (e.g. i * 16 + j < 128
 * for i in [0, 8), j in [0, 16)). False means "not proven". */
bool tir_prove(tir_analyzer_t *an, tir_expr_t *cond);
/* Inclusive bounds of an integer expression (TVM's ConstIntBound): variables
 * from their bindings, + - * min max select, floordiv/floormod/truncdiv/
 * truncmod, casts. Saturates to unknown on overflow; a bound outside the
 * expression's dtype gives the dtype's whole range. */
tir_bound_t tir_const_bound(tir_analyzer_t *an, tir_expr_t *e);

/* Int sets: the range of an expression when some variables vary. */
typedef struct {
  tir_expr_t *min, *max;     /* inclusive; simplified; symbolic when needed */
} tir_interval_t;
/* [min, max] of e as vars[i] range over doms[i] (domains may mention other
 * variables, relaxed too when they are in the list); other variables stay
 * symbolic. E.g. vi * 16 + vj, vj in [0, 16) -> [vi * 16, vi * 16 + 15].
 * Exact for sums, products by constants, floordiv, min/max; conservative
 * for floormod and select. MLC_OK, or MLC_EUNSUPPORTED with a detail when a
 * side cannot be bounded (e.g. a load indexed by a relaxed variable). */
int tir_relax_expr(tir_interval_t *out, tir_analyzer_t *an, tir_expr_t *e, tir_var_t **vars,
                   const tir_range_t *doms, int n);
/* The same for a range [r.min, r.min + r.extent): the hull as a range, for
 * region derivation (compute_at, cache_read, blockize). */
int tir_relax_range(tir_range_t *out, tir_analyzer_t *an, const tir_range_t *r, tir_var_t **vars,
                    const tir_range_t *doms, int n);

/* Iteration-map analysis (TVM's DetectIterMap): proves that bindings are
 * quasi-affine maps of loop iterators: each binding is a sum of scaled splits
 * of (fused) iterators plus a base free of iterators. Used to check block
 * bindings and to derive loop extents and regions.
 *
 * Example: i in [0, 8), j in [0, 16): `i * 16 + j` is one split (scale 1) of
 * the mark fusing i (scale 16) and j; `floordiv(f, 16)` and `floormod(f, 16)`
 * are splits of f with lower factors 16 and 1. Divisors, scales and the
 * factors they are checked against must be constants (symbolic extents work
 * where only identities are involved). */
typedef struct tir_iter_mark tir_iter_mark_t;
typedef struct {
  tir_iter_mark_t *source;   /* the (possibly fused) iterator being split */
  tir_expr_t *lower_factor;  /* split = floormod(floordiv(source, lower_factor), extent) * scale */
  tir_expr_t *extent;
  tir_expr_t *scale;
} tir_iter_split_t;
typedef struct {
  int nargs;
  tir_iter_split_t *args;    /* most significant first */
  tir_expr_t *base;
} tir_iter_sum_t;
struct tir_iter_mark {
  /* Either a loop variable (var != NULL, sum == NULL), whose value is
   * var - var_min (var_min NULL when its domain starts at 0), or a fusion
   * of splits (sum, with base 0 unless a predicate's lower bound offset it). */
  tir_var_t *var;
  tir_expr_t *var_min;
  tir_iter_sum_t *sum;
  tir_expr_t *extent;
};
typedef struct {
  int n;
  tir_iter_sum_t *sums;      /* one per binding */
  bool bijective;            /* the map also passes TIR_ITER_BIJECTIVE */
} tir_iter_map_t;
/* Check levels, strongest last:
 * - INJECTIVE: the splits of each iterator never overlap (no value read twice);
 * - SURJECTIVE: also the splits of each iterator cover a divisor of its extent
 *   from the bottom, skipping only whole middle digits (TVM: x in [0, 24) ->
 *   [x // 6, x % 2] passes, [x // 3] does not);
 * - BIJECTIVE: every iterator of extent > 1 is used and exactly covered.
 * Iterators of extent 1 become constants (their min). */
typedef enum { TIR_ITER_INJECTIVE, TIR_ITER_SURJECTIVE, TIR_ITER_BIJECTIVE } tir_iter_check_t;
/* Detects the iteration map of `bindings` over `vars` (with domains `doms`,
 * which may not mention the vars), under `predicate` (NULL or true for none):
 * a conjunction of comparisons; `i < 5` narrows i's domain, and a bound on a
 * sum such as `i0 * 32 + i1 < 1000` (a split by a non-dividing factor) makes
 * that fused iterator's extent 1000, as TVM does (the bindings must then use
 * i0 and i1 through that sum). MLC_OK and *out (in the analyzer's arena), or
 * MLC_EINVAL with a detail naming the binding and why: `binding 0 (i * i):
 * product of two iterators`, `binding 1 (i // n): floordiv by non-constant
 * n`, `iterator i used twice (bindings 0 and 1)`, `extents do not match:
 * ...`. Splits that would need TVM's iterator padding (an offset or extent
 * not divisible by the divisor, without a predicate) are rejected. Marks
 * that merely wrap one split of another mark are unwrapped in the result. */
int tir_detect_iter_map(tir_iter_map_t *out, tir_analyzer_t *an, tir_expr_t **bindings, int n,
                        tir_var_t **vars, const tir_range_t *doms, int nvars,
                        tir_expr_t *predicate, tir_iter_check_t check);
/* Expression of an iter sum in terms of the loop variables (not simplified;
 * `x * 1`, `x + 0` and splits covering a whole mark are written plainly). */
tir_expr_t *tir_iter_sum_to_expr(mlc_arena_t *a, const tir_iter_sum_t *sum);

/* ------------------------------------------------------------------------ */
/* Reference interpreter                                                     */
/* ------------------------------------------------------------------------ */

/* One argument per function parameter. A buffer parameter gets host memory
 * (row-major, elements of the buffer's dtype; float16/bfloat16 as uint16_t
 * bits) and its shape; a scalar parameter gets its value. */
typedef struct {
  void *data;
  int ndim;
  int64_t shape[TIR_MAX_DIMS];
  tir_dtype_t dtype;
  int64_t scalar_int;   /* scalar int params */
  double scalar_float;  /* scalar float params */
} tir_arg_t;

/* Runs f on args. Thread-bound loops run sequentially; init blocks run when
 * all reduction iterators are at their minimum; predicates are honoured;
 * float16/bfloat16 results are rounded to nearest even on every store and
 * arithmetic step. Errors (MLC_ERUNTIME with a detail): out-of-bounds access
 * naming the block and buffer, a binding out of its domain, shape mismatch
 * with an argument, division by zero. The WMMA calls of the tensor
 * intrinsics (T.call_extern "tvm_fill_fragment", "tvm_load_matrix_sync",
 * "tvm_mma_sync", "tvm_store_matrix_sync" on wmma.* fragments) run as their
 * 16x16x16 descriptions say (tir/interp_wmma.c). The mma.sync calls of the
 * warp layout (tir_ptx_op: "ptx_ldmatrix_x4", "ptx_ldmatrix_x2",
 * "ptx_mma_m16n8k16_row_col_f16f16f32") run in the innermost threadIdx.x
 * loop, which must have 32 lanes with nothing bound between it and the
 * call: lane L's value is computed from the operands the other lanes give,
 * evaluated again with the loop variable set to theirs (tir/interp_mma.c);
 * mma accumulates in float32, k in order, each step rounded. Other
 * call_extern and call_llvm_pure_intrin calls are errors. */
int tir_interp_run(const tir_func_t *f, tir_arg_t *args, int nargs);

/* ------------------------------------------------------------------------ */
/* Built-in workloads (names as in the Ansor paper)                          */
/* ------------------------------------------------------------------------ */

typedef struct {
  const char *name;         /* "GMM" */
  const char *summary;      /* one line */
  const char *dims;         /* names of the shape options, "M,N,K" */
  int ndims;
  int64_t defaults[12];
  const char *default_dtype;/* "float32" */
} tir_workload_desc_t;

/* The table of built-in workloads. */
const tir_workload_desc_t *tir_workloads(int *n);
const tir_workload_desc_t *tir_workload_find(const char *name);
/* Builds a workload. `shape` gives values for the desc's dims in order (NULL
 * or nshape 0 for the defaults). in_dtype: the inputs' dtype; acc_dtype: the
 * accumulator/output dtype (float16 -> float32, int8 -> int32 when given as
 * the zero dtype {0,0,0}: the usual choice for in_dtype). MLC_EINVAL with a
 * detail on bad options. The function owns its arena. */
int tir_workload_build(tir_func_t **out, const char *name, const int64_t *shape, int nshape,
                       tir_dtype_t in_dtype, tir_dtype_t acc_dtype);

/* ------------------------------------------------------------------------ */
/* Command-line helpers (tir/cli.c)                                          */
/* ------------------------------------------------------------------------ */

/* What the programs that read TVMScript files share (DESIGN.md, Programs):
 * errors go to stderr as "PROG: error: FILE:LINE:COL: what" and the return
 * value is the program's exit status (0 ok, 1 the work failed, 2 bad usage
 * or bad input). */

/* "<stdin>" for "-", else path (borrowed). */
const char *tir_cli_shown_path(const char *path);
/* Reads ("-" = standard input), parses and verifies a TVMScript file; a
 * parse error is printed with its source line and a caret. On success *out
 * is the module (tir_module_free); on failure *out is NULL. */
int tir_cli_load_module(const char *prog, const char *path, tir_module_t **out);
/* The function `name`, else the only one, else "main"; when none fits the
 * error lists the module's functions. *out is borrowed from m. */
int tir_cli_pick_func(const char *prog, const tir_module_t *m, const char *name, const char *path,
                      tir_func_t **out);

#ifdef __cplusplus
}
#endif
#endif /* MLC_TIR_H */
