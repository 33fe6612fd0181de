/*
 * cmd_tir_eval.c - `mlc-tir eval`: runs a function of a TVMScript file in the
 * reference interpreter (tir_interp_run) and summarises what it writes.
 *
 * Arguments are prepared in a fixed order so a seed means the same inputs
 * everywhere: given --input values first (scalars, then .npy buffers, which
 * also bind symbolic dimensions), then random scalars, then every other
 * buffer in parameter order, random in [1, 10) unless the function writes
 * it (outputs start as zeros). Outputs are the parameters some block lists in
 * T.writes or some statement stores to; each is summarised (sum, min, max,
 * XXH64 of its bytes) and optionally written as DIR/NAME.npy.
 */
#include "tir/cmd_tir_internal.h"
#include "tir/npy.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char eval_help[] =
    "usage: " PROG " eval FILE [--func NAME] [--input NAME=X.npy ...] [--output-dir DIR]\n"
    "                      [--seed S] [--json]\n"
    "\n"
    "Runs a function of FILE in the reference interpreter. Buffer parameters not\n"
    "given with --input are filled with random values in [1, 10) from a seeded,\n"
    "portable generator (integers: 1..9, bool: 0 or 1); the buffers the function\n"
    "writes start as zeros unless given. Prints one summary line per output:\n"
    "name, shape, dtype, sum, min, max and the XXH64 checksum of its bytes.\n"
    "\n"
    "  --func NAME          the function to run (needed when FILE holds several)\n"
    "  --input NAME=X.npy   a parameter's value from a NumPy .npy file (C order;\n"
    "                       bfloat16 as '<u2' raw bits); NAME=NUMBER for a scalar\n"
    "  --output-dir DIR     write each output as DIR/NAME.npy (DIR is created)\n"
    "  --seed S             seed of the random inputs (default 0)\n"
    "  --json               print the summary as JSON\n"
    "\n"
    "Exit status: 0 ok, 1 the interpreter failed or an output could not be\n"
    "written, 2 bad usage or bad input.\n";

#define EVAL_MAX_INPUTS 64
#define EVAL_MAX_BINDS 64

typedef struct {
  const char *file, *func, *outdir;
  const char *shown; /* file as messages name it */
  uint64_t seed;
  bool json;
  int ninputs;
  const char *inputs[EVAL_MAX_INPUTS]; /* "NAME=VALUE" */
} eval_opts_t;

/* The running state: one argument per parameter. */
typedef struct {
  const eval_opts_t *o;
  tir_func_t *f;
  tir_arg_t *args;
  bool *given, *is_output;
  int nbinds;
  const tir_var_t *bvars[EVAL_MAX_BINDS]; /* shape variables and scalar params */
  int64_t bvals[EVAL_MAX_BINDS];
  mlc_rng_t rng;
} eval_t;

static const char *param_name(const tir_func_t *f, int i) {
  return f->buffer_map && f->buffer_map[i] ? f->buffer_map[i]->name : f->params[i]->u.var.name;
}

static bool bound_value(const eval_t *e, const tir_expr_t *x, int64_t *out) {
  if (tir_as_int(x, out)) return true;
  for (int i = 0; x && x->kind == TIR_VAR && i < e->nbinds; i++)
    if (e->bvars[i] == x) {
      *out = e->bvals[i];
      return true;
    }
  return false;
}

static int bind(eval_t *e, const tir_var_t *v, int64_t value) {
  if (e->nbinds == EVAL_MAX_BINDS) return tir_cmd_fail(EXIT_USAGE, "eval: too many symbolic dimensions");
  e->bvars[e->nbinds] = v;
  e->bvals[e->nbinds++] = value;
  return EXIT_OK;
}

/* --- writes: which parameters the function writes --------------------- */

typedef struct {
  MLC_VEC(tir_buffer_t *) written;
  MLC_VEC(tir_match_buffer_t) matches;
} writes_t;

static bool note_block_writes(tir_visitor_t *v, tir_block_t *b, tir_stmt_t *realize) {
  writes_t *w = v->payload;
  for (int i = 0; i < b->nwrites; i++) mlc_vec_push(&w->written, b->writes[i].buffer);
  for (int i = 0; i < b->nmatch_buffers; i++) mlc_vec_push(&w->matches, b->match_buffers[i]);
  return true;
}

static bool note_store(tir_visitor_t *v, tir_stmt_t *s) {
  writes_t *w = v->payload;
  if (s->kind == TIR_BUFFER_STORE) mlc_vec_push(&w->written, s->u.store.buffer);
  return true;
}

/* Follows T.match_buffer views back to the buffer they view. */
static const tir_buffer_t *match_source(const writes_t *w, const tir_buffer_t *b) {
  for (int hops = 0; hops < 16; hops++) {
    size_t i = 0;
    while (i < w->matches.len && w->matches.data[i].buffer != b) i++;
    if (i == w->matches.len) break;
    b = w->matches.data[i].source.buffer;
  }
  return b;
}

/* Outputs: parameters some block writes or some store stores to (directly,
 * through a match_buffer view, or through a buffer sharing the data var). */
static void find_outputs(eval_t *e) {
  writes_t w = {0};
  tir_visitor_t vis = {.block = note_block_writes, .stmt = note_store, .payload = &w};
  tir_visit_stmt(&vis, e->f->body);
  for (int p = 0; p < e->f->nparams; p++) {
    const tir_buffer_t *pb = e->f->buffer_map ? e->f->buffer_map[p] : NULL;
    for (size_t i = 0; pb && i < w.written.len && !e->is_output[p]; i++) {
      const tir_buffer_t *b = match_source(&w, w.written.data[i]);
      e->is_output[p] = b == pb || b->data == pb->data;
    }
  }
  mlc_vec_free(&w.written);
  mlc_vec_free(&w.matches);
}

/* --- inputs -------------------------------------------------------------- */

static int find_param(const tir_func_t *f, const char *name, size_t len) {
  for (int i = 0; i < f->nparams; i++) {
    const char *a = param_name(f, i), *b = f->params[i]->u.var.name;
    if ((strlen(a) == len && strncmp(a, name, len) == 0) || (strlen(b) == len && strncmp(b, name, len) == 0))
      return i;
  }
  return -1;
}

static int scalar_input(eval_t *e, int p, const char *value) {
  tir_arg_t *arg = &e->args[p];
  tir_dtype_t t = e->f->params[p]->dtype;
  char *end;
  errno = 0;
  if (tir_dtype_is_float(t)) {
    arg->scalar_float = strtod(value, &end);
  } else {
    long long v = strtoll(value, &end, 10);
    arg->scalar_int = v;
    if (!errno && end != value && !*end && bind(e, e->f->params[p], v) != EXIT_OK) return EXIT_USAGE;
  }
  if (errno || end == value || *end)
    return tir_cmd_fail(EXIT_USAGE, "eval: --input %s: parameter %s is a scalar; give a number, not '%s'",
                param_name(e->f, p), param_name(e->f, p), value);
  return EXIT_OK;
}

/* Checks a .npy array against buffer parameter p, binding symbolic dims. */
static int check_array(eval_t *e, int p, const tir_npy_t *arr, const char *path) {
  const tir_buffer_t *b = e->f->buffer_map[p];
  char want[32], got[32];
  bool bits_ok = b->dtype.code == TIR_CODE_BFLOAT && tir_dtype_eq(arr->dtype, tir_dt_UINT16());
  if (!tir_dtype_eq(arr->dtype, b->dtype) && !bits_ok)
    return tir_cmd_fail(EXIT_USAGE, "eval: --input %s: %s holds %s, the parameter is %s", b->name, path,
                tir_dtype_str(arr->dtype, got), tir_dtype_str(b->dtype, want));
  if (arr->ndim != b->ndim)
    return tir_cmd_fail(EXIT_USAGE, "eval: --input %s: %s has %d dimensions, the parameter %d", b->name, path, arr->ndim, b->ndim);
  for (int d = 0; d < b->ndim; d++) {
    int64_t v;
    if (bound_value(e, b->shape[d], &v)) {
      if (v != arr->shape[d])
        return tir_cmd_fail(EXIT_USAGE, "eval: --input %s: %s has %lld in dimension %d, the parameter %lld", b->name, path,
                    (long long)arr->shape[d], d, (long long)v);
    } else if (b->shape[d]->kind == TIR_VAR) {
      if (bind(e, b->shape[d], arr->shape[d]) != EXIT_OK) return EXIT_USAGE;
    } else {
      return tir_cmd_fail(EXIT_USAGE, "eval: --input %s: dimension %d of the parameter is an expression eval cannot check",
                  b->name, d);
    }
  }
  return EXIT_OK;
}

static int buffer_input(eval_t *e, int p, const char *path) {
  tir_npy_t arr;
  int st = tir_npy_read(&arr, path);
  if (st != MLC_OK) return tir_cmd_fail(tir_cmd_exit_for(st), "eval: --input %s: %s", param_name(e->f, p), mlc_error_last());
  int code = check_array(e, p, &arr, path);
  if (code != EXIT_OK) {
    tir_npy_free(&arr);
    return code;
  }
  tir_arg_t *arg = &e->args[p];
  arg->data = arr.data; /* owned by the eval state from here */
  arg->ndim = arr.ndim;
  memcpy(arg->shape, arr.shape, sizeof(arr.shape));
  return EXIT_OK;
}

static int apply_inputs(eval_t *e, bool scalars) {
  for (int k = 0; k < e->o->ninputs; k++) {
    const char *spec = e->o->inputs[k], *eq = strchr(spec, '=');
    if (!eq || eq == spec) return tir_cmd_fail(EXIT_USAGE, "eval: --input takes NAME=FILE, got '%s'", spec);
    int p = find_param(e->f, spec, (size_t)(eq - spec));
    if (p < 0) return tir_cmd_fail(EXIT_USAGE, "eval: --input %.*s: %s has no parameter of that name", (int)(eq - spec), spec, e->f->name);
    bool is_scalar = !e->f->buffer_map || !e->f->buffer_map[p];
    if (is_scalar != scalars) continue;
    if (e->given[p]) return tir_cmd_fail(EXIT_USAGE, "eval: --input %s given twice", param_name(e->f, p));
    e->given[p] = true;
    int code = scalars ? scalar_input(e, p, eq + 1) : buffer_input(e, p, eq + 1);
    if (code != EXIT_OK) return code;
  }
  return EXIT_OK;
}

/* --- random fill ------------------------------------------------------- */

/* A value in [1, 10) rounded to t, kept below 10 when rounding reaches it. */
static void store_random(mlc_rng_t *rng, unsigned char *dst, tir_dtype_t t) {
  if (tir_dtype_is_float(t)) {
    double v = 1.0 + 9.0 * mlc_rng_uniform(rng);
    if (t.bits == 64) {
      memcpy(dst, &v, 8);
    } else if (t.bits == 32) {
      float f = (float)v;
      if (f >= 10.0f) f = nextafterf(10.0f, 0.0f);
      memcpy(dst, &f, 4);
    } else {
      bool bf = t.code == TIR_CODE_BFLOAT;
      uint16_t h = bf ? tir_f32_to_bf16((float)v) : tir_f32_to_f16((float)v);
      if ((bf ? tir_bf16_to_f32(h) : tir_f16_to_f32(h)) >= 10.0f) h--; /* next value down */
      memcpy(dst, &h, 2);
    }
    return;
  }
  int64_t v = tir_dtype_is_bool(t) ? mlc_rng_range(rng, 0, 1) : mlc_rng_range(rng, 1, 9);
  /* Little-endian host: the low bytes of v are the narrower integer. */
  memcpy(dst, &v, (size_t)tir_dtype_bytes(t));
}

static int64_t arg_elems(const tir_arg_t *arg) {
  int64_t n = 1;
  for (int d = 0; d < arg->ndim; d++) n *= arg->shape[d];
  return n;
}

/* Sizes and allocates buffer parameter p: random unless it is an output. */
static int make_buffer(eval_t *e, int p) {
  const tir_buffer_t *b = e->f->buffer_map[p];
  tir_arg_t *arg = &e->args[p];
  int64_t n = 1, esize = tir_dtype_bytes(b->dtype);
  arg->ndim = b->ndim;
  for (int d = 0; d < b->ndim; d++) {
    if (!bound_value(e, b->shape[d], &arg->shape[d])) {
      mlc_strbuf_t dim;
      mlc_sb_init(&dim);
      tir_print_expr(&dim, b->shape[d]);
      tir_cmd_fail(EXIT_USAGE, "eval: cannot size parameter %s: dimension %d (%s) is symbolic; give %s with --input",
                   b->name, d, mlc_sb_str(&dim), b->name);
      mlc_sb_free(&dim);
      return EXIT_USAGE;
    }
    if (arg->shape[d] < 0 || (arg->shape[d] && n > (INT64_C(1) << 40) / arg->shape[d] / esize))
      return tir_cmd_fail(EXIT_USAGE, "eval: parameter %s is too large to run", b->name);
    n *= arg->shape[d];
  }
  arg->data = mlc_calloc((size_t)(n ? n : 1), (size_t)esize);
  if (!arg->data) return tir_cmd_fail(EXIT_WORK, "eval: out of memory for parameter %s", b->name);
  if (!e->is_output[p])
    for (int64_t i = 0; i < n; i++) store_random(&e->rng, (unsigned char *)arg->data + i * esize, b->dtype);
  return EXIT_OK;
}

/* Fills every argument: given inputs, then scalars, then buffers. */
static int prepare_args(eval_t *e) {
  int code = apply_inputs(e, true);
  if (code == EXIT_OK) code = apply_inputs(e, false);
  for (int p = 0; code == EXIT_OK && p < e->f->nparams; p++) {
    tir_var_t *v = e->f->params[p];
    bool is_buffer = e->f->buffer_map && e->f->buffer_map[p];
    e->args[p].dtype = is_buffer ? e->f->buffer_map[p]->dtype : v->dtype;
    if (is_buffer || e->given[p]) continue;
    if (tir_dtype_is_handle(v->dtype))
      return tir_cmd_fail(EXIT_USAGE, "eval: parameter %s is a handle without a buffer; eval cannot pass it", v->u.var.name);
    if (tir_dtype_is_float(v->dtype)) {
      e->args[p].scalar_float = 1.0 + 9.0 * mlc_rng_uniform(&e->rng);
    } else {
      e->args[p].scalar_int = tir_dtype_is_bool(v->dtype) ? mlc_rng_range(&e->rng, 0, 1) : mlc_rng_range(&e->rng, 1, 9);
      code = bind(e, v, e->args[p].scalar_int);
    }
  }
  for (int p = 0; code == EXIT_OK && p < e->f->nparams; p++)
    if (e->f->buffer_map && e->f->buffer_map[p] && !e->given[p]) code = make_buffer(e, p);
  return code;
}

/* --- outputs ------------------------------------------------------------ */

static double elem_value(const unsigned char *p, tir_dtype_t t) {
  uint16_t h;
  switch (t.code) {
  case TIR_CODE_FLOAT:
    if (t.bits == 64) { double d; memcpy(&d, p, 8); return d; }
    if (t.bits == 32) { float f; memcpy(&f, p, 4); return f; }
    memcpy(&h, p, 2);
    return tir_f16_to_f32(h);
  case TIR_CODE_BFLOAT: memcpy(&h, p, 2); return tir_bf16_to_f32(h);
  case TIR_CODE_INT: {
    int64_t v = 0;
    memcpy(&v, p, (size_t)tir_dtype_bytes(t));
    int shift = 64 - 8 * tir_dtype_bytes(t); /* sign-extend the narrower integer */
    return (double)(shift ? (int64_t)((uint64_t)v << shift) >> shift : v);
  }
  default: {
    uint64_t v = 0;
    memcpy(&v, p, (size_t)tir_dtype_bytes(t));
    return (double)v;
  }
  }
}

typedef struct {
  double sum, min, max;
  char xxh[17];
} summary_t;

static summary_t summarize(const tir_arg_t *arg) {
  summary_t s = {0, 0, 0, ""};
  int64_t n = arg_elems(arg), esize = tir_dtype_bytes(arg->dtype);
  for (int64_t i = 0; i < n; i++) {
    double v = elem_value((const unsigned char *)arg->data + i * esize, arg->dtype);
    s.sum += v;
    s.min = i == 0 || v < s.min ? v : s.min;
    s.max = i == 0 || v > s.max ? v : s.max;
  }
  mlc_hash_hex(mlc_hash64(arg->data, (size_t)(n * esize), 0), s.xxh);
  return s;
}

static json_t *json_number(double v) { return isfinite(v) ? json_real(v) : json_null(); }

/* Writes DIR/NAME.npy (DIR created when missing); the path into buf. */
static int write_output(const eval_t *e, int p, char *path, size_t len) {
  if (mkdir(e->o->outdir, 0777) != 0 && errno != EEXIST)
    return tir_cmd_fail(EXIT_WORK, "eval: cannot create %s: %s", e->o->outdir, strerror(errno));
  char name[128];
  snprintf(name, sizeof(name), "%s", param_name(e->f, p));
  for (char *c = name; *c; c++) /* a file name, whatever the buffer is called */
    if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '_' || *c == '-'))
      *c = '_';
  snprintf(path, len, "%s/%s.npy", e->o->outdir, name);
  const tir_arg_t *arg = &e->args[p];
  if (tir_npy_write(path, arg->dtype, arg->ndim, arg->shape, arg->data) != MLC_OK)
    return tir_cmd_fail(EXIT_WORK, "eval: %s", mlc_error_last());
  return EXIT_OK;
}

static void print_output(const eval_t *e, int p, const summary_t *s, json_t *outs, const char *path) {
  const tir_arg_t *arg = &e->args[p];
  char dt[32], shape[200] = "";
  size_t len = 0;
  json_t *jshape = json_array();
  for (int d = 0; d < arg->ndim; d++) {
    len += (size_t)snprintf(shape + len, sizeof(shape) - len, d ? ", %lld" : "%lld", (long long)arg->shape[d]);
    len = len < sizeof(shape) ? len : sizeof(shape) - 1;
    json_array_append_new(jshape, json_integer(arg->shape[d]));
  }
  tir_dtype_str(arg->dtype, dt);
  if (!outs) {
    json_decref(jshape);
    printf("%s  shape=(%s%s)  dtype=%s  sum=%.9g  min=%.9g  max=%.9g  xxh64=%s\n", param_name(e->f, p), shape,
           arg->ndim == 1 ? "," : "", dt, s->sum, s->min, s->max, s->xxh);
    return;
  }
  json_t *o = json_pack("{s:s, s:o, s:s, s:o, s:o, s:o, s:s}", "name", param_name(e->f, p), "shape", jshape,
                        "dtype", dt, "sum", json_number(s->sum), "min", json_number(s->min), "max",
                        json_number(s->max), "xxh64", s->xxh);
  if (o && path) json_object_set_new(o, "file", json_string(path));
  json_array_append_new(outs, o);
}

static int report_outputs(eval_t *e) {
  json_t *outs = e->o->json ? json_array() : NULL;
  int code = EXIT_OK;
  for (int p = 0; p < e->f->nparams && code == EXIT_OK; p++) {
    if (!e->is_output[p]) continue;
    char path[4096];
    if (e->o->outdir) code = write_output(e, p, path, sizeof(path));
    summary_t s = summarize(&e->args[p]);
    if (code == EXIT_OK) print_output(e, p, &s, outs, e->o->outdir ? path : NULL);
  }
  if (outs && code == EXIT_OK) {
    json_t *top = json_pack("{s:s, s:I, s:o}", "function", e->f->name, "seed", (json_int_t)e->o->seed, "outputs", outs);
    char *text = top ? mlc_json_dumps(top) : NULL;
    json_decref(top);
    if (!text) return tir_cmd_fail(EXIT_WORK, "out of memory");
    printf("%s\n", text);
    free(text);
  } else {
    json_decref(outs);
  }
  return code;
}

/* --- the command ------------------------------------------------------- */

static int eval_func(const eval_opts_t *o, tir_func_t *f) {
  eval_t e = {.o = o, .f = f};
  int n = f->nparams, code = EXIT_WORK;
  mlc_rng_seed(&e.rng, o->seed);
  e.args = mlc_calloc((size_t)(n ? n : 1), sizeof(*e.args));
  e.given = mlc_calloc((size_t)(n ? n : 1), sizeof(bool));
  e.is_output = mlc_calloc((size_t)(n ? n : 1), sizeof(bool));
  if (!e.args || !e.given || !e.is_output) {
    code = tir_cmd_fail(EXIT_WORK, "out of memory");
    goto done;
  }
  find_outputs(&e);
  if ((code = prepare_args(&e)) != EXIT_OK) goto done;
  if (tir_interp_run(f, e.args, n) != MLC_OK) {
    code = tir_cmd_fail(EXIT_WORK, "eval: %s: %s: %s", o->shown, f->name, mlc_error_last());
    goto done;
  }
  code = report_outputs(&e);
done:
  for (int p = 0; e.args && p < n; p++) mlc_free(e.args[p].data);
  mlc_free(e.args);
  mlc_free(e.given);
  mlc_free(e.is_output);
  return code;
}

static int pick_func(const tir_module_t *m, const char *want, const char *file, tir_func_t **out) {
  if (want) {
    *out = tir_module_find(m, want);
    if (!*out) return tir_cmd_fail(EXIT_USAGE, "eval: %s has no function '%s'", file, want);
    return EXIT_OK;
  }
  if (m->nfuncs == 1) {
    *out = m->funcs[0];
    return EXIT_OK;
  }
  mlc_strbuf_t names;
  mlc_sb_init(&names);
  for (int i = 0; i < m->nfuncs; i++) mlc_sb_printf(&names, i ? ", %s" : "%s", m->funcs[i]->name);
  tir_cmd_fail(EXIT_USAGE, "eval: %s holds %d functions (%s); pick one with --func", file, m->nfuncs, mlc_sb_str(&names));
  mlc_sb_free(&names);
  return EXIT_USAGE;
}

static int eval_args(tir_cmd_args_t *a, eval_opts_t *o, bool *helped) {
  const char *v;
  bool err = false;
  for (a->i = 1; a->i < a->argc && !err; a->i++) {
    if (tir_cmd_opt_flag(a, "--help") || tir_cmd_opt_flag(a, "-h")) {
      fputs(eval_help, stdout);
      *helped = true;
      return EXIT_OK;
    } else if (tir_cmd_opt_flag(a, "--json")) {
      o->json = true;
    } else if (tir_cmd_opt_value(a, "--func", &v, &err)) {
      o->func = v;
    } else if (tir_cmd_opt_value(a, "--output-dir", &v, &err)) {
      o->outdir = v;
    } else if (tir_cmd_opt_value(a, "--seed", &v, &err)) {
      int64_t s = 0;
      if (!err && (!tir_cmd_parse_i64(v, &s) || s < 0)) return tir_cmd_fail(EXIT_USAGE, "eval: bad --seed '%s'", v);
      o->seed = (uint64_t)s;
    } else if (tir_cmd_opt_value(a, "--input", &v, &err)) {
      if (o->ninputs == EVAL_MAX_INPUTS) return tir_cmd_fail(EXIT_USAGE, "eval: too many --input options");
      o->inputs[o->ninputs++] = v;
    } else if (tir_cmd_is_positional(a)) {
      if (o->file) return tir_cmd_fail(EXIT_USAGE, "eval: more than one FILE given");
      o->file = a->argv[a->i];
    } else if (strcmp(a->argv[a->i], "--") != 0) {
      return tir_cmd_bad_option(a);
    }
  }
  if (err) return EXIT_USAGE;
  if (!o->file) return tir_cmd_fail(EXIT_USAGE, "eval: missing FILE (see `" PROG " eval --help`)");
  o->shown = strcmp(o->file, "-") == 0 ? "<stdin>" : o->file;
  return EXIT_OK;
}

int tir_cmd_eval(tir_cmd_args_t *a) {
  eval_opts_t o = {0};
  bool helped = false;
  int code = eval_args(a, &o, &helped);
  if (code != EXIT_OK || helped) return helped ? tir_cmd_finish_output(code) : code;
  tir_module_t *m;
  if ((code = tir_cmd_load_verified(o.file, &m)) != EXIT_OK) return code;
  tir_func_t *f;
  code = pick_func(m, o.func, o.shown, &f);
  if (code == EXIT_OK) code = eval_func(&o, f);
  tir_module_free(m);
  return tir_cmd_finish_output(code);
}

