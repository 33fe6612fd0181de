/*
 * trace_internal.h - private to schedule/trace/: what the instruction-kind
 * table knows beyond schedule.h's sch_inst_kind_t (the layout of each kind's
 * inputs, attributes, outputs and decision, and its Python signature), and
 * the helpers the JSON and Python forms share (building traces, naming
 * random variables).
 *
 * Type codes, used for inputs, attributes, list items and Python values:
 *   b  block RV            l  loop RV              v  expression RV
 *   x  block or loop RV    f  split factor: v, INT or NONE
 *   a  annotation value: v, INT, FLOAT or STR
 *   B  list of block RVs   i  INT                  z  bool (INT 0 or 1)
 *   s  STR                 I  list of INT          F  list of numbers (FLOAT)
 *   m  index map (STR holding `lambda i, j: (...)`)
 *   n  None only
 */
#ifndef MLC_SCHEDULE_TRACE_INTERNAL_H
#define MLC_SCHEDULE_TRACE_INTERNAL_H

#include "schedule/state.h"

/* Where a Python keyword argument goes in the instruction. */
typedef enum {
  PY_END,        /* terminates a parameter list */
  PY_INPUT,      /* inputs[idx] */
  PY_INPUT_LIST, /* a list value spread into inputs[idx...] (split's factors) */
  PY_VARARGS,    /* positional arguments, inputs[idx...] (fuse, reorder) */
  PY_ATTR,       /* attrs[idx] */
  PY_BUFFER,     /* ("read"|"write", i): attrs[idx] = i, attrs[idx + 1] = 0|1 */
  PY_DECISION,   /* the decision; printed only when there is one */
  PY_IGNORED,    /* accepted at its default value only (TVM options we lack) */
} sch_py_dest_t;

typedef struct {
  sch_py_dest_t dest;
  const char *kw;    /* keyword; "" for a positional parameter */
  const char *alias; /* another spelling the parser accepts (older TVM), or NULL */
  int idx;
  char type;         /* type code (above) */
  const char *dflt;  /* default in Python syntax; NULL when required */
} sch_py_param_t;

#define SCH_MAX_PY_PARAMS 6

/* The layout of one instruction kind (TVM's InstructionKindTraits). */
typedef struct {
  const char *inputs;   /* type codes; a final '*' or '+' repeats the code before it */
  int ninputs_min;      /* fewer inputs than the spec (older TVM): the rest from Python defaults */
  const char *attrs;    /* type codes of our attributes */
  int nattrs_min;       /* older TVM wrote fewer; the missing ones take the Python defaults */
  int nattrs_tvm;       /* newer TVM writes more; the extra ones must be 0, false or null */
  char output;          /* 'b' 'l' 'v' one output; 'B' 'L' 'V' a list of them; 0 none */
  char decision;        /* 'i' INT, 'I' list of INT; 0 none */
  const char *method;   /* Python method: sch.<method>(...) */
  sch_py_param_t params[SCH_MAX_PY_PARAMS + 1];
} sch_inst_sig_t;

/* Indexed by sch_inst_id_t (inst_kinds.c). */
extern const sch_inst_sig_t sch_inst_sigs[SCH_INST_COUNT];

static inline sch_inst_id_t sch_inst_id(const sch_inst_kind_t *kind) {
  return (sch_inst_id_t)(kind - sch_inst_kinds);
}
static inline const sch_inst_sig_t *sch_inst_sig(const sch_inst_kind_t *kind) {
  return &sch_inst_sigs[sch_inst_id(kind)];
}

/* The RV kind a type code or output code names: 'b'/'B' block, 'l'/'L'
 * loop, 'v'/'V' expression. */
static inline sch_rv_kind_t sch_code_rv_kind(char code) {
  return (code == 'b' || code == 'B') ? SCH_RV_BLOCK : (code == 'l' || code == 'L') ? SCH_RV_LOOP : SCH_RV_EXPR;
}
/* TVM's name prefix for an RV of that kind. */
static inline char sch_rv_prefix(sch_rv_kind_t kind) {
  return kind == SCH_RV_BLOCK ? 'b' : kind == SCH_RV_LOOP ? 'l' : 'v';
}

/* The type code of input i under a spec ("lf*": 'l', then 'f' forever);
 * 0 when the spec has no input i. */
char sch_sig_input_type(const char *spec, int i);
/* Whether the spec accepts n inputs. */
bool sch_sig_input_count_ok(const sch_inst_sig_t *sig, int n);

/* ------------------------------------------------------------------------ */
/* Building traces                                                           */
/* ------------------------------------------------------------------------ */

/* An empty trace (sch_trace_free). NULL when out of memory. */
sch_trace_t *sch_trace_new(void);
/* Appends an instruction, deep-copying the arguments into the trace's arena;
 * decision NULL or kind NONE when it has none. MLC_ENOMEM on failure. */
int sch_trace_append(sch_trace_t *t, const sch_inst_kind_t *kind, const sch_arg_t *inputs, int ninputs,
                     const sch_arg_t *attrs, int nattrs, const sch_rv_t *outputs, int noutputs,
                     const sch_arg_t *decision);
/* A deep copy of arg in arena a. */
sch_arg_t sch_arg_clone(mlc_arena_t *a, const sch_arg_t *arg);

/* Whether arg fits a type code (above), converting in place where the
 * spellings differ (an INT probability becomes FLOAT; a bool is INT 0/1).
 * rv_kinds[rv] is each trace RV's kind. On a mismatch returns false with
 * what was expected ("a loop random variable") in why. */
bool sch_arg_check(char type, sch_arg_t *arg, const sch_rv_kind_t *rv_kinds, int nrvs, const char **why);

/* Checks an instruction's counts and decision against its kind's layout
 * beyond the per-argument types: outputs (one, none, or as many as split's
 * factors or the tile's n), the decision's shape. MLC_OK or MLC_EPARSE with
 * "instruction I (Kind): ..." in the per-thread error. */
int sch_inst_check_counts(int index, const sch_inst_t *inst, const sch_arg_t *decision);

/* The default of a Python parameter, parsed (trace_python.c); false when the
 * parameter has none. Strings and lists live in arena a. */
bool sch_py_default(mlc_arena_t *a, const sch_py_param_t *p, sch_arg_t *out);

/* ------------------------------------------------------------------------ */
/* Naming                                                                    */
/* ------------------------------------------------------------------------ */

/* TVM's names for a trace's random variables: b0, l1, v2, numbered by one
 * counter in order of definition. names[rv] is NULL for RVs the trace has
 * not defined (yet). */
typedef struct {
  int nrvs;
  char **names;     /* nrvs entries, in arena */
  int counter;
  mlc_arena_t *arena;
} sch_rv_names_t;

int sch_rv_names_init(sch_rv_names_t *nm, int nrvs);
void sch_rv_names_free(sch_rv_names_t *nm);
/* Names the outputs of an instruction of `kind` (in order). */
void sch_rv_names_define(sch_rv_names_t *nm, const sch_inst_t *inst);
/* The name of rv, or NULL when undefined. */
static inline const char *sch_rv_names_get(const sch_rv_names_t *nm, sch_rv_t rv) {
  return rv >= 0 && rv < nm->nrvs ? nm->names[rv] : NULL;
}

/* A map from names to trace RVs (parsing). */
typedef struct {
  int cap, n;
  const char **keys; /* borrowed, not NUL-terminated */
  size_t *lens;
  sch_rv_t *vals;
  sch_rv_kind_t *kinds;
} sch_name_map_t;

void sch_name_map_init(sch_name_map_t *m);
void sch_name_map_free(sch_name_map_t *m);
/* MLC_OK, or MLC_ENOMEM. The key is borrowed (must outlive the map). */
int sch_name_map_put(sch_name_map_t *m, const char *key, size_t len, sch_rv_t rv, sch_rv_kind_t kind);
/* True and *rv, *kind when known. */
bool sch_name_map_get(const sch_name_map_t *m, const char *key, size_t len, sch_rv_t *rv, sch_rv_kind_t *kind);

/* The generic Python printer every kind's to_python is (trace_python.c):
 * input_names[i] is the Python text of input i (a name, a literal, or a
 * list "[b1, b2]"); the decision (NULL or NONE: none) goes where the kind's
 * DECISION parameter stands, last. */
void sch_inst_to_python(mlc_strbuf_t *sb, const sch_inst_t *inst, const char *const *input_names,
                        const char *const *output_names, const sch_arg_t *decision);

/* Parses an index map `lambda i, j: (i // 16, j, i % 16)` (the text
 * TransformLayout records) into nodes in the schedule's arena
 * (index_map.c). MLC_ESCHEDULE through sch_fail on bad text. */
int sch_index_map_from_text(sch_t *sch, const char *text, sch_index_map_t *out);

/* The first instruction failure while translating a trace from text:
 * "instruction 4 (Split): ..." into the per-thread error. */
int sch_trace_inst_error(int code, int index, const sch_inst_kind_t *kind, const char *fmt, ...) MLC_PRINTF(4, 5);

#endif /* MLC_SCHEDULE_TRACE_INTERNAL_H */
