/*
 * mlp_main.c - a user's program calling the MLP block of examples/mlp.py
 * after `mlc-compile` turned it into a shared library (examples/README.md
 * has the whole path). It needs only libc, dlfcn, <dlpack/dlpack.h> and the
 * header mlc-compile wrote beside the library (libmlp.h).
 *
 *   mlp_main init DATA_DIR [--seed S]
 *       writes the model's inputs as .npy files: DATA_DIR/X.npy (a batch of
 *       64 rows of 256 features in [-1, 1)), W1.npy, b1.npy, W2.npy, b2.npy
 *       (uniform Glorot-style weights, small biases), from a seeded
 *       generator: the same files for the same seed on every machine.
 *
 *   mlp_main run DATA_DIR [--lib LIB.so] [--expect DIR] [--rtol R]
 *                         [--runs N] [--save DIR]
 *       loads the library (dlopen; --lib is required unless the program was
 *       built with -DMLP_LINKED and linked with the library), reads the
 *       inputs, calls dense_relu1 -> dense_relu2 -> softmax through the
 *       DLPack ABI, each stage on the previous stage's output, and:
 *       --expect DIR  compares each stage's output with DIR/H1.npy,
 *                     DIR/H2.npy and DIR/Y.npy (what `mlc-tir eval
 *                     --output-dir DIR` wrote) and prints the largest error;
 *       --runs N      times each call N times after a warm-up (default 25)
 *                     and prints the median;
 *       --save DIR    writes the outputs as DIR/H1.npy, H2.npy, Y.npy.
 *
 * An element passes when |got - want| <= rtol * max(|want|, m / 10), m the
 * largest |want| of that output (rtol defaults to 1e-4): relative for the
 * values of the output's scale, and relative to a tenth of that scale for
 * smaller ones, whose rounding error comes from the terms that were summed
 * (of the output's scale), not from their small result. A schedule may sum
 * in another order than the interpreter, so a ReLU output that is 0 there
 * may be 1e-7 here, and that is no error.
 *
 * Exit status: 0 every call succeeded (and every output matched), 1 a
 * library, file, kernel or comparison failed, 2 bad usage.
 *
 * The .npy files are NumPy's format version 1.0-3.0 holding little-endian
 * float32 ('<f4') in C order, which is what `numpy.save` writes for a C
 * contiguous float32 array and what `mlc-tir eval` reads and writes.
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime, dlopen, mkdir with -std=c11 */

#include <dlpack/dlpack.h>
#include <errno.h>
#include <float.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#ifdef MLP_LINKED
#include "libmlp.h" /* the prototypes mlc-compile generated */
#else
#include <dlfcn.h>
#endif

#define MAX_DIMS 8
#define MAX_HEADER (1 << 16)

/* ------------------------------------------------------------------------ */
/* Errors                                                                    */
/* ------------------------------------------------------------------------ */

static char error_text[1024];

/* Records why something failed (printed by main) and returns -1. */
static int fail(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(error_text, sizeof error_text, fmt, ap);
  va_end(ap);
  return -1;
}

/* ------------------------------------------------------------------------ */
/* Arrays and .npy files                                                     */
/* ------------------------------------------------------------------------ */

/* A float32 array in C order; data is 64-byte aligned (free with array_free). */
typedef struct {
  int ndim;
  int64_t shape[MAX_DIMS];
  size_t count;
  float *data;
} array_t;

static void array_free(array_t *a) {
  free(a->data);
  memset(a, 0, sizeof *a);
}

/* Allocates a zeroed array of the given shape. */
static int array_new(array_t *a, int ndim, const int64_t *shape) {
  memset(a, 0, sizeof *a);
  size_t count = 1;
  for (int d = 0; d < ndim; d++) {
    if (shape[d] < 0 || (shape[d] > 0 && count > SIZE_MAX / 4 / (size_t)shape[d]))
      return fail("shape dimension %" PRId64 " is too large", shape[d]);
    count *= (size_t)shape[d];
    a->shape[d] = shape[d];
  }
  size_t bytes = (count * sizeof(float) + 63) / 64 * 64;
  a->data = aligned_alloc(64, bytes ? bytes : 64);
  if (!a->data) return fail("out of memory for %zu floats", count);
  memset(a->data, 0, bytes ? bytes : 64);
  a->ndim = ndim;
  a->count = count;
  return 0;
}

static double absd(double x) { return x < 0 ? -x : x; }

static bool host_is_little_endian(void) {
  uint16_t one = 1;
  unsigned char first;
  memcpy(&first, &one, 1);
  return first == 1;
}

/* "(64, 256)" into buf. */
static const char *shape_str(const array_t *a, char *buf, size_t len) {
  size_t n = (size_t)snprintf(buf, len, "(");
  for (int d = 0; d < a->ndim && n < len; d++)
    n += (size_t)snprintf(buf + n, len - n, "%s%" PRId64, d ? ", " : "", a->shape[d]);
  if (n < len) snprintf(buf + n, len - n, a->ndim == 1 ? ",)" : ")");
  return buf;
}

/* "[3, 17]": the index of flat element i of a, into buf. */
static const char *index_str(const array_t *a, size_t i, char *buf, size_t len) {
  int64_t idx[MAX_DIMS] = {0};
  for (int d = a->ndim - 1; d >= 0; d--) {
    idx[d] = a->shape[d] ? (int64_t)(i % (size_t)a->shape[d]) : 0;
    i = a->shape[d] ? i / (size_t)a->shape[d] : 0;
  }
  size_t n = (size_t)snprintf(buf, len, "[");
  for (int d = 0; d < a->ndim && n < len; d++)
    n += (size_t)snprintf(buf + n, len - n, "%s%" PRId64, d ? ", " : "", idx[d]);
  if (n < len) snprintf(buf + n, len - n, "]");
  return buf;
}

/* The value of 'key' in the header dict: a pointer just past "'key':" and
 * its spaces, or NULL. */
static const char *header_value(const char *header, const char *key) {
  char quoted[32];
  snprintf(quoted, sizeof quoted, "'%s'", key);
  const char *p = strstr(header, quoted);
  if (!p) {
    snprintf(quoted, sizeof quoted, "\"%s\"", key);
    p = strstr(header, quoted);
  }
  if (!p) return NULL;
  p += strlen(quoted);
  while (*p == ' ') p++;
  if (*p != ':') return NULL;
  p++;
  while (*p == ' ') p++;
  return p;
}

/* Parses the dict of a .npy header into a's shape; checks the dtype and
 * the order. */
static int parse_header(array_t *a, const char *header, const char *path) {
  const char *v = header_value(header, "descr");
  if (!v || (*v != '\'' && *v != '"')) return fail("%s: the header has no 'descr'", path);
  char descr[16] = "";
  size_t n = strcspn(v + 1, "'\"");
  if (n >= sizeof descr) return fail("%s: the header's 'descr' is not a dtype", path);
  memcpy(descr, v + 1, n);
  descr[n] = '\0';
  if (strcmp(descr, "<f4") != 0)
    return fail("%s: dtype '%s', this program reads little-endian float32 ('<f4') only: save the array with "
                "numpy.save(path, a.astype('<f4'))", path, descr);
  v = header_value(header, "fortran_order");
  if (!v || strncmp(v, "False", 5) != 0)
    return fail("%s: the array is not in C order (fortran_order is not False): save numpy.ascontiguousarray(a)",
                path);
  v = header_value(header, "shape");
  if (!v || *v != '(') return fail("%s: the header has no 'shape' tuple", path);
  v++;
  a->ndim = 0;
  for (;;) {
    while (*v == ' ' || *v == ',') v++;
    if (*v == ')') break;
    if (a->ndim == MAX_DIMS) return fail("%s: more than %d dimensions", path, MAX_DIMS);
    char *end;
    errno = 0;
    long long d = strtoll(v, &end, 10);
    if (end == v || d < 0 || errno) return fail("%s: bad 'shape' in the header", path);
    a->shape[a->ndim++] = d;
    v = end;
  }
  return 0;
}

/* Reads the fixed part of a .npy file; the header's length into *len. */
static int read_preamble(FILE *f, size_t *len, const char *path) {
  unsigned char pre[12];
  if (fread(pre, 1, 8, f) != 8 || memcmp(pre, "\x93NUMPY", 6) != 0)
    return fail("%s: not a .npy file (no \\x93NUMPY magic)", path);
  int major = pre[6];
  if (major < 1 || major > 3) return fail("%s: .npy format version %d.%d is not supported", path, major, pre[7]);
  size_t width = major == 1 ? 2 : 4;
  if (fread(pre + 8, 1, width, f) != width) return fail("%s: truncated header", path);
  *len = pre[8] | (size_t)pre[9] << 8;
  if (width == 4) *len |= (size_t)pre[10] << 16 | (size_t)pre[11] << 24;
  if (*len == 0 || *len > MAX_HEADER) return fail("%s: header length %zu is implausible", path, *len);
  return 0;
}

/* Reads `path` into *a (owned by the caller on success). */
static int npy_read(array_t *a, const char *path) {
  memset(a, 0, sizeof *a);
  FILE *f = fopen(path, "rb");
  if (!f) return fail("%s: %s", path, strerror(errno));
  size_t len = 0;
  char *header = NULL;
  int rc = read_preamble(f, &len, path);
  if (rc == 0 && !(header = malloc(len + 1))) rc = fail("out of memory");
  if (rc == 0 && fread(header, 1, len, f) != len) rc = fail("%s: truncated header", path);
  array_t shape = {0};
  if (rc == 0) {
    header[len] = '\0';
    rc = parse_header(&shape, header, path);
  }
  if (rc == 0) rc = array_new(a, shape.ndim, shape.shape);
  char shape_text[160];
  if (rc == 0 && fread(a->data, sizeof(float), a->count, f) != a->count)
    rc = fail("%s: the data is shorter than the shape %s says", path, shape_str(a, shape_text, sizeof shape_text));
  if (rc == 0 && fgetc(f) != EOF) rc = fail("%s: bytes after the data the shape describes", path);
  if (rc != 0) array_free(a);
  free(header);
  fclose(f);
  return rc;
}

/* Writes a as a version 1.0 .npy file. */
static int npy_write(const array_t *a, const char *path) {
  char dict[256], shape[160];
  int n = snprintf(dict, sizeof dict, "{'descr': '<f4', 'fortran_order': False, 'shape': %s, }",
                   shape_str(a, shape, sizeof shape));
  /* Magic (6) + version (2) + length (2) + dict + padding + '\n' = k * 64. */
  size_t total = (10 + (size_t)n + 1 + 63) / 64 * 64;
  size_t hlen = total - 10;
  char header[sizeof dict + 64];
  memset(header, ' ', hlen);
  memcpy(header, dict, (size_t)n);
  header[hlen - 1] = '\n';
  unsigned char pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (unsigned char)(hlen & 0xff),
                           (unsigned char)(hlen >> 8)};
  FILE *f = fopen(path, "wb");
  if (!f) return fail("%s: %s", path, strerror(errno));
  bool ok = fwrite(pre, 1, 10, f) == 10 && fwrite(header, 1, hlen, f) == hlen &&
            fwrite(a->data, sizeof(float), a->count, f) == a->count;
  if (fclose(f) != 0) ok = false;
  return ok ? 0 : fail("%s: write failed: %s", path, strerror(errno));
}

/* ------------------------------------------------------------------------ */
/* The library                                                               */
/* ------------------------------------------------------------------------ */

/* Every function mlc-compile generates has this type (the DLPack ABI). */
typedef int32_t kernel_fn(DLTensor *args, int32_t num_args);

typedef struct {
  void *handle; /* dlopen's; NULL when linked */
  kernel_fn *dense_relu1, *dense_relu2, *softmax;
  const char *(*last_error)(void); /* the library's mlc_last_error */
} mlp_lib_t;

#ifdef MLP_LINKED
static int lib_open(mlp_lib_t *lib, const char *path) {
  if (path) return fail("--lib: this program was linked with its library (built with -DMLP_LINKED)");
  *lib = (mlp_lib_t){NULL, dense_relu1, dense_relu2, softmax, mlc_last_error};
  return 0;
}

static void lib_close(mlp_lib_t *lib) { (void)lib; }
#else
/* dlsym's result as a function pointer (POSIX guarantees the conversion). */
static int lib_sym(void *handle, const char *name, void *fn_out, const char *path) {
  void *p = dlsym(handle, name);
  if (!p) return fail("%s: no function '%s' in the library (compiled from another module?)", path, name);
  memcpy(fn_out, &p, sizeof p);
  return 0;
}

static int lib_open(mlp_lib_t *lib, const char *path) {
  memset(lib, 0, sizeof *lib);
  if (!path) return fail("--lib LIB.so is required (the library mlc-compile wrote)");
  /* dlopen searches the library path for a name without a slash. */
  char rel[4096];
  if (!strchr(path, '/') && snprintf(rel, sizeof rel, "./%s", path) < (int)sizeof rel) path = rel;
  lib->handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!lib->handle) return fail("%s", dlerror());
  if (lib_sym(lib->handle, "dense_relu1", &lib->dense_relu1, path) || lib_sym(lib->handle, "dense_relu2",
      &lib->dense_relu2, path) || lib_sym(lib->handle, "softmax", &lib->softmax, path) ||
      lib_sym(lib->handle, "mlc_last_error", &lib->last_error, path)) {
    dlclose(lib->handle);
    lib->handle = NULL;
    return -1;
  }
  return 0;
}

static void lib_close(mlp_lib_t *lib) {
  if (lib->handle) dlclose(lib->handle);
  lib->handle = NULL;
}
#endif

/* ------------------------------------------------------------------------ */
/* Calls                                                                     */
/* ------------------------------------------------------------------------ */

static DLTensor tensor_of(array_t *a) {
  DLTensor t;
  memset(&t, 0, sizeof t);
  t.data = a->data;
  t.device.device_type = kDLCPU;
  t.ndim = a->ndim;
  t.dtype.code = kDLFloat;
  t.dtype.bits = 32;
  t.dtype.lanes = 1;
  t.shape = a->shape;
  t.strides = NULL; /* compact, row-major */
  return t;
}

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Calls fn once (checking its status), then `runs` more times timing each
 * call; the median into *secs (0 when runs is 0). */
static int call(const mlp_lib_t *lib, kernel_fn *fn, const char *name, DLTensor *args, int nargs, int runs,
                double *secs) {
  int32_t rc = fn(args, nargs);
  if (rc != 0) return fail("%s returned %d: %s", name, (int)rc, lib->last_error());
  double *t = calloc((size_t)runs + 1, sizeof *t);
  if (!t) return fail("out of memory");
  for (int r = 0; r < runs && rc == 0; r++) {
    double t0 = now();
    rc = fn(args, nargs);
    t[r] = now() - t0;
  }
  qsort(t, (size_t)runs, sizeof *t, cmp_double);
  *secs = runs ? (runs % 2 ? t[runs / 2] : (t[runs / 2 - 1] + t[runs / 2]) / 2) : 0;
  free(t);
  return rc == 0 ? 0 : fail("%s returned %d on a timed call: %s", name, (int)rc, lib->last_error());
}

/* ------------------------------------------------------------------------ */
/* Comparison                                                                */
/* ------------------------------------------------------------------------ */

typedef struct {
  double max_abs, max_rel; /* rel: |got - want| / max(|want|, max|want| / 10) */
  size_t nbad, first_bad;
} diff_t;

static diff_t compare(const array_t *got, const array_t *want, double rtol) {
  double scale = 0;
  for (size_t i = 0; i < want->count; i++)
    if (absd(want->data[i]) > scale) scale = absd(want->data[i]);
  double small = scale > 0 ? scale / 10 : 1e-30; /* below this, errors count against it */
  diff_t d = {0, 0, 0, 0};
  for (size_t i = 0; i < got->count; i++) {
    double g = got->data[i], w = want->data[i];
    double abs_err = g == w ? 0 : absd(g - w); /* equal infinities */
    double rel = abs_err / (absd(w) > small ? absd(w) : small);
    if (g != g || w != w) rel = g != g && w != w ? 0 : DBL_MAX; /* NaN */
    if (abs_err > d.max_abs) d.max_abs = abs_err;
    if (rel > d.max_rel) d.max_rel = rel;
    if (rel > rtol && d.nbad++ == 0) d.first_bad = i;
  }
  return d;
}

/* Compares `got` with DIR/NAME.npy; prints one line. 0 when it matches. */
static int check_stage(const char *dir, const char *name, const array_t *got, double rtol) {
  char path[4096], a[160], b[160];
  snprintf(path, sizeof path, "%s/%s.npy", dir, name);
  array_t want;
  if (npy_read(&want, path) != 0) return -1;
  int rc = 0;
  if (want.ndim != got->ndim || memcmp(want.shape, got->shape, sizeof(int64_t) * (size_t)got->ndim) != 0) {
    rc = fail("%s: shape %s, but %s is %s", path, shape_str(&want, a, sizeof a), name, shape_str(got, b, sizeof b));
  } else {
    diff_t d = compare(got, &want, rtol);
    printf("  %-3s max abs error %.3g, max rel error %.3g (rtol %g): %s\n", name, d.max_abs, d.max_rel, rtol,
           d.nbad ? "MISMATCH" : "ok");
    if (d.nbad)
      rc = fail("%s differs from %s in %zu of %zu elements; the first, %s%s, is %.9g, expected %.9g", name, path,
                d.nbad, got->count, name, index_str(got, d.first_bad, a, sizeof a), (double)got->data[d.first_bad],
                (double)want.data[d.first_bad]);
  }
  array_free(&want);
  return rc;
}

/* ------------------------------------------------------------------------ */
/* Commands                                                                  */
/* ------------------------------------------------------------------------ */

/* splitmix64: a tiny portable generator (same numbers everywhere). */
static uint64_t next_u64(uint64_t *s) {
  uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

/* Uniform in [lo, hi). */
static float uniform(uint64_t *s, double lo, double hi) {
  return (float)(lo + (hi - lo) * (double)(next_u64(s) >> 11) * 0x1.0p-53);
}

/* Writes DIR/NAME.npy with uniform values in [-bound, bound). */
static int write_random(const char *dir, const char *name, int ndim, const int64_t *shape, double bound,
                        uint64_t *seed) {
  array_t a;
  if (array_new(&a, ndim, shape) != 0) return -1;
  for (size_t i = 0; i < a.count; i++) a.data[i] = uniform(seed, -bound, bound);
  char path[4096];
  snprintf(path, sizeof path, "%s/%s.npy", dir, name);
  int rc = npy_write(&a, path);
  array_free(&a);
  return rc;
}

static int cmd_init(const char *dir, uint64_t seed) {
  if (mkdir(dir, 0777) != 0 && errno != EEXIST) return fail("%s: %s", dir, strerror(errno));
  /* Glorot-uniform bounds sqrt(6 / (fan_in + fan_out)): activations keep
   * their scale through both layers, so the softmax sees varied logits. */
  const int64_t x[2] = {64, 256}, w1[2] = {256, 256}, b1[1] = {256}, w2[2] = {128, 256}, b2[1] = {128};
  const double w1_bound = 0.10825317547305482 /* sqrt(6 / 512) */, w2_bound = 0.125 /* sqrt(6 / 384) */;
  if (write_random(dir, "X", 2, x, 1.0, &seed) || write_random(dir, "W1", 2, w1, w1_bound, &seed) ||
      write_random(dir, "b1", 1, b1, 0.1, &seed) || write_random(dir, "W2", 2, w2, w2_bound, &seed) ||
      write_random(dir, "b2", 1, b2, 0.1, &seed))
    return -1;
  printf("wrote %s/X.npy W1.npy b1.npy W2.npy b2.npy\n", dir);
  return 0;
}

typedef struct {
  const char *data_dir, *lib, *expect, *save;
  double rtol;
  int runs;
} run_opts_t;

enum { X, W1, B1, W2, B2, H1, H2, Y, NARRAYS };
static const char *const array_names[NARRAYS] = {"X", "W1", "b1", "W2", "b2", "H1", "H2", "Y"};

/* Reads the inputs and allocates the outputs from their shapes (the kernels
 * check every shape: a wrong input shows their message). */
static int load_arrays(array_t *a, const char *dir) {
  for (int i = X; i <= B2; i++) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.npy", dir, array_names[i]);
    if (npy_read(&a[i], path) != 0) return -1;
  }
  if (a[X].ndim != 2 || a[W1].ndim != 2 || a[W2].ndim != 2)
    return fail("X, W1 and W2 must be matrices (2-D); see the header for the shapes");
  const int64_t h1[2] = {a[X].shape[0], a[W1].shape[0]}, h2[2] = {a[X].shape[0], a[W2].shape[0]};
  if (array_new(&a[H1], 2, h1) || array_new(&a[H2], 2, h2) || array_new(&a[Y], 2, h2)) return -1;
  return 0;
}

static int cmd_run(const run_opts_t *o) {
  array_t a[NARRAYS];
  memset(a, 0, sizeof a);
  mlp_lib_t lib;
  int rc = lib_open(&lib, o->lib);
  if (rc == 0) rc = load_arrays(a, o->data_dir);
  DLTensor t[NARRAYS];
  for (int i = 0; i < NARRAYS; i++) t[i] = tensor_of(&a[i]);
  DLTensor s1[4] = {t[X], t[W1], t[B1], t[H1]}, s2[4] = {t[H1], t[W2], t[B2], t[H2]}, s3[2] = {t[H2], t[Y]};
  struct {
    kernel_fn *fn;
    const char *name;
    DLTensor *args;
    int nargs;
    int out;
    double secs;
  } stages[3] = {{lib.dense_relu1, "dense_relu1", s1, 4, H1, 0}, {lib.dense_relu2, "dense_relu2", s2, 4, H2, 0},
                 {lib.softmax, "softmax", s3, 2, Y, 0}};
  for (int s = 0; s < 3 && rc == 0; s++)
    rc = call(&lib, stages[s].fn, stages[s].name, stages[s].args, stages[s].nargs, o->runs, &stages[s].secs);
  if (rc == 0) {
    printf("%-12s %-4s %12s\n", "function", "out", "median_us");
    for (int s = 0; s < 3; s++)
      printf("%-12s %-4s %12.2f\n", stages[s].name, array_names[stages[s].out], stages[s].secs * 1e6);
  }
  for (int s = 0; s < 3 && rc == 0 && o->save; s++) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.npy", o->save, array_names[stages[s].out]);
    if (s == 0 && mkdir(o->save, 0777) != 0 && errno != EEXIST) rc = fail("%s: %s", o->save, strerror(errno));
    if (rc == 0) rc = npy_write(&a[stages[s].out], path);
  }
  if (rc == 0 && o->expect) {
    printf("compared with %s:\n", o->expect);
    int nbad = 0;
    for (int s = 0; s < 3; s++) /* all three, each failure told at once */
      if (check_stage(o->expect, array_names[stages[s].out], &a[stages[s].out], o->rtol) != 0) {
        fprintf(stderr, "mlp_main: %s\n", error_text);
        nbad++;
      }
    if (nbad) rc = fail("%d of 3 outputs do not match %s", nbad, o->expect);
  }
  lib_close(&lib);
  for (int i = 0; i < NARRAYS; i++) array_free(&a[i]);
  return rc;
}

/* ------------------------------------------------------------------------ */
/* Main                                                                      */
/* ------------------------------------------------------------------------ */

static int usage(const char *why) {
  if (why) fprintf(stderr, "mlp_main: %s\n", why);
  fprintf(why ? stderr : stdout,
          "usage: mlp_main init DATA_DIR [--seed S]\n"
          "       mlp_main run DATA_DIR [--lib LIB.so] [--expect DIR] [--rtol R] [--runs N] [--save DIR]\n");
  return why ? 2 : 0;
}

/* A number option's value; false when it is not one. */
static bool number_arg(const char *s, double lo, double hi, double *out) {
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  if (end == s || *end || errno || !(v >= lo && v <= hi)) return false;
  *out = v;
  return true;
}

int main(int argc, char **argv) {
  if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) return usage(NULL);
  if (argc < 3) return usage("a command (init or run) and DATA_DIR are required");
  if (!host_is_little_endian()) {
    fprintf(stderr, "mlp_main: this program reads and writes little-endian .npy data only\n");
    return 1;
  }
  bool init = strcmp(argv[1], "init") == 0;
  if (argv[2][0] == '-') return usage("DATA_DIR comes right after the command, before the options");
  if (!init && strcmp(argv[1], "run") != 0) return usage("the command is init or run");
  run_opts_t o = {argv[2], NULL, NULL, NULL, 1e-4, 25};
  double seed = 1, v;
  for (int i = 3; i < argc; i++) {
    const char *opt = argv[i], *val = i + 1 < argc ? argv[++i] : NULL;
    if (!val) return usage("an option's value is missing");
    if (init && strcmp(opt, "--seed") == 0 && number_arg(val, 0, 9007199254740992.0, &seed)) continue;
    if (!init && strcmp(opt, "--lib") == 0) o.lib = val;
    else if (!init && strcmp(opt, "--expect") == 0) o.expect = val;
    else if (!init && strcmp(opt, "--save") == 0) o.save = val;
    else if (!init && strcmp(opt, "--rtol") == 0 && number_arg(val, 0, 1, &v)) o.rtol = v;
    else if (!init && strcmp(opt, "--runs") == 0 && number_arg(val, 0, 1e6, &v) && v == (int)v) o.runs = (int)v;
    else {
      char why[256];
      snprintf(why, sizeof why, "%s %s: unknown option or bad value", opt, val);
      return usage(why);
    }
  }
  int rc = init ? cmd_init(o.data_dir, (uint64_t)seed) : cmd_run(&o);
  if (rc != 0) {
    fprintf(stderr, "mlp_main: %s\n", error_text);
    return 1;
  }
  if (!init) printf("%s\n", o.expect ? "all outputs match" : "done");
  return 0;
}
