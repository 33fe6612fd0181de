/*
 * target.c - target strings: parsing, defaults and the canonical form.
 *
 * Grammar (TVM's):   target := kind option*
 *                    kind   := "llvm" | "cuda" | "rocm"
 *                    option := "-" key ["=" value | " " value]   (flags: no value)
 *
 * A target string is a database key, so two spellings of one target must print
 * the same (mlc_target_str). The canonical form lists options in a fixed order,
 * always states -num-cores (llvm) and leaves out what is implied: the default
 * triple, GPU limits equal to the defaults, and -mattr entries that -mcpu
 * already implies. Parsing the canonical string gives the same target back.
 */
#include "target_priv.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MLC_DEFAULT_TRIPLE "x86_64-linux-gnu"

enum { K_LLVM = 1 << MLC_TARGET_LLVM, K_CUDA = 1 << MLC_TARGET_CUDA, K_ROCM = 1 << MLC_TARGET_ROCM };
enum { MLC_TARGET_STR_MAX = 1024, MLC_TARGET_TOKENS_MAX = 64, MLC_TARGET_INT_MAX = 1 << 30 };

/* Register limits (32-bit registers; VerifyGPUCode checks them):
 *  - cuda: 255 per thread and 64 K per block, the same for every compute
 *    capability this project targets (sm_80, sm_90): CUDA C++ Programming
 *    Guide, "Technical Specifications per Compute Capability" ("Maximum
 *    number of 32-bit registers per thread" / "per thread block"). A device
 *    that reports fewer per block (CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK,
 *    the registers_per_block of a worker's device JSON) needs
 *    -registers_per_block.
 *  - rocm (CDNA2, gfx90a): 512 VGPRs per lane of a wave, ArchVGPRs and
 *    AccVGPRs together in one unified file, at most 256 of each kind ("AMD
 *    Instinct MI200 Instruction Set Architecture", 3.6.4; LLVM's
 *    AMDGPUUsage: gfx90a's unified VGPR file of 512); the backend spills
 *    ArchVGPRs into AccVGPRs before scratch, so 512 is what a lane can keep
 *    in registers. A workgroup runs on one CU, whose 4 SIMDs each hold 512
 *    VGPRs x 64 lanes (128 KiB; 512 KiB per CU, AMD CDNA2 white paper), and
 *    its waves are spread over the 4 SIMDs: 4 x 512 x 64 = 131072 registers
 *    per block (1024 threads: 16 waves, 4 per SIMD, 128 VGPRs each). Not
 *    512 x 64 = 32768, which is one SIMD's file: that would reject blocks of
 *    more than one wave that the CU runs. */
/*      kind word  mtriple                threads  shared  warp  regs/thread  regs/block */
#define MLC_TARGET_KIND_MAP(X)                                           \
  X(LLVM, "llvm", MLC_DEFAULT_TRIPLE,     0,       0,      0,    0,           0)      \
  X(CUDA, "cuda", "nvptx64-nvidia-cuda",  1024,    49152,  32,   255,         65536)  \
  X(ROCM, "rocm", "amdgcn-amd-amdhsa",    1024,    65536,  64,   512,         131072)

typedef struct {
  mlc_target_kind_t kind;
  const char *word, *triple;
  int max_threads, max_shared, warp, max_regs, regs_block;
} target_kind_info_t;

/* Rows in mlc_target_kind_t order, so a kind indexes its row. */
static const target_kind_info_t target_kinds[] = {
#define MLC_TARGET_KIND_ROW_(k, word, triple, threads, shared, warp, regs, regs_block) \
  {MLC_TARGET_##k, word, triple, threads, shared, warp, regs, regs_block},
    MLC_TARGET_KIND_MAP(MLC_TARGET_KIND_ROW_)
#undef MLC_TARGET_KIND_ROW_
};

/* Options as given, before defaults are filled in. */
typedef struct {
  const char *mcpu, *mtriple, *mattr, *arch;
  int num_cores, max_threads, max_shared, warp, max_regs, regs_block; /* 0: not given */
  bool fast_math;
} target_opts_t;

typedef int (*option_fn)(target_opts_t *o, const char *value);

static int opt_str(const char **field, const char *value) {
  *field = value;
  return MLC_OK;
}

static int opt_int(int *field, const char *value) {
  char *end;
  errno = 0;
  long v = strtol(value, &end, 10);
  if (errno || end == value || *end || v < 1 || v > MLC_TARGET_INT_MAX)
    return mlc_error_set(MLC_EINVAL, "expected a positive integer");
  *field = (int)v;
  return MLC_OK;
}

static int opt_flag(bool *field, const char *value) {
  if (!value || strcmp(value, "1") == 0 || strcmp(value, "true") == 0) {
    *field = true;
  } else if (strcmp(value, "0") == 0 || strcmp(value, "false") == 0) {
    *field = false;
  } else {
    return mlc_error_set(MLC_EINVAL, "expected no value, true or false");
  }
  return MLC_OK;
}

static int opt_mcpu(target_opts_t *o, const char *v) { return opt_str(&o->mcpu, v); }
static int opt_mtriple(target_opts_t *o, const char *v) { return opt_str(&o->mtriple, v); }
static int opt_mattr(target_opts_t *o, const char *v) { return opt_str(&o->mattr, v); }
static int opt_arch(target_opts_t *o, const char *v) { return opt_str(&o->arch, v); }
static int opt_num_cores(target_opts_t *o, const char *v) { return opt_int(&o->num_cores, v); }
static int opt_threads(target_opts_t *o, const char *v) { return opt_int(&o->max_threads, v); }
static int opt_shared(target_opts_t *o, const char *v) { return opt_int(&o->max_shared, v); }
static int opt_warp(target_opts_t *o, const char *v) { return opt_int(&o->warp, v); }
static int opt_max_regs(target_opts_t *o, const char *v) { return opt_int(&o->max_regs, v); }
static int opt_regs_block(target_opts_t *o, const char *v) { return opt_int(&o->regs_block, v); }
static int opt_fast_math(target_opts_t *o, const char *v) { return opt_flag(&o->fast_math, v); }

/*      option                          kinds                    flag   handler */
#define MLC_TARGET_OPTION_MAP(X)                                                  \
  X("mcpu",                        K_LLVM | K_ROCM,          false, opt_mcpu)      \
  X("mtriple",                     K_LLVM,                   false, opt_mtriple)   \
  X("mattr",                       K_LLVM,                   false, opt_mattr)     \
  X("num-cores",                   K_LLVM,                   false, opt_num_cores) \
  X("arch",                        K_CUDA,                   false, opt_arch)      \
  X("max_threads_per_block",       K_CUDA | K_ROCM,          false, opt_threads)   \
  X("max_shared_memory_per_block", K_CUDA | K_ROCM,          false, opt_shared)    \
  X("max_registers_per_thread",    K_CUDA | K_ROCM,          false, opt_max_regs)  \
  X("registers_per_block",         K_CUDA | K_ROCM,          false, opt_regs_block) \
  X("thread_warp_size",            K_CUDA | K_ROCM,          false, opt_warp)      \
  X("fast-math",                   K_LLVM | K_CUDA | K_ROCM, true,  opt_fast_math)

static const struct {
  const char *name;
  int kinds;
  bool flag;
  option_fn fn;
} target_options[] = {
#define MLC_TARGET_OPTION_ROW_(name, kinds, flag, fn) {name, kinds, flag, fn},
    MLC_TARGET_OPTION_MAP(MLC_TARGET_OPTION_ROW_)
#undef MLC_TARGET_OPTION_ROW_
};

enum { N_TARGET_OPTIONS = sizeof target_options / sizeof target_options[0] };

/* ------------------------------------------------------------------------ */
/* Parsing                                                                   */
/* ------------------------------------------------------------------------ */

/* Splits the copy `buf` in place at blanks; MLC_EINVAL when there are too many. */
static int tokenize(char *buf, char **tokens, int *n_tokens, const char *str) {
  char *save = NULL;
  int n = 0;
  for (char *tok = strtok_r(buf, " \t\n", &save); tok; tok = strtok_r(NULL, " \t\n", &save)) {
    if (n == MLC_TARGET_TOKENS_MAX)
      return mlc_error_set(MLC_EINVAL, "too many options in target '%s'", str);
    tokens[n++] = tok;
  }
  if (n == 0) return mlc_error_set(MLC_EINVAL, "empty target string");
  *n_tokens = n;
  return MLC_OK;
}

static int find_kind(const char *word, const char *str) {
  for (size_t i = 0; i < sizeof target_kinds / sizeof target_kinds[0]; i++)
    if (strcmp(target_kinds[i].word, word) == 0) return (int)i;
  return mlc_error_set(MLC_EINVAL, "unknown target kind '%s' in target '%s' (want llvm, cuda or rocm)",
                       word, str);
}

static int find_option(const char *name) {
  for (int i = 0; i < N_TARGET_OPTIONS; i++)
    if (strcmp(target_options[i].name, name) == 0) return i;
  return -1;
}

/* Applies the option at tokens[*i] ("-key=value", "-key value" or "-flag"),
 * advancing *i past what it used. */
static int parse_option(target_opts_t *o, char **tokens, int n_tokens, int *i,
                        mlc_target_kind_t kind, unsigned *seen, const char *str) {
  char *tok = tokens[*i];
  if (tok[0] != '-' || tok[1] == '\0')
    return mlc_error_set(MLC_EINVAL, "expected an option, got '%s' in target '%s'", tok, str);
  char *value = strchr(tok, '=');
  if (value) *value++ = '\0';
  const char *name = tok + 1;
  int k = find_option(name);
  if (k < 0) return mlc_error_set(MLC_EINVAL, "unknown option '-%s' in target '%s'", name, str);
  if (!(target_options[k].kinds & (1 << kind)))
    return mlc_error_set(MLC_EINVAL, "option '-%s' does not apply to %s in target '%s'", name,
                         target_kinds[kind].word, str);
  if (*seen & (1u << k))
    return mlc_error_set(MLC_EINVAL, "option '-%s' given twice in target '%s'", name, str);
  *seen |= 1u << k;
  if (!value && !target_options[k].flag) {
    if (*i + 1 >= n_tokens)
      return mlc_error_set(MLC_EINVAL, "option '-%s' needs a value in target '%s'", name, str);
    value = tokens[++*i];
  }
  (*i)++;
  if (target_options[k].fn(o, value) != MLC_OK)
    return mlc_error_set(MLC_EINVAL, "bad value '%s' for option '-%s' in target '%s': %s",
                         value ? value : "", name, str, mlc_error_last());
  return MLC_OK;
}

static bool all_chars(const char *s, const char *allowed_extra) {
  for (; *s; s++) {
    char c = *s;
    bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    if (!alnum && !strchr(allowed_extra, c)) return false;
  }
  return true;
}

static int copy_name(char *dst, size_t cap, const char *src, const char *what, const char *str) {
  if (!*src || strlen(src) >= cap || !all_chars(src, "._-"))
    return mlc_error_set(MLC_EINVAL, "bad %s '%s' in target '%s'", what, src, str);
  memcpy(dst, src, strlen(src) + 1);
  return MLC_OK;
}

/* ------------------------------------------------------------------------ */
/* Defaults per kind                                                         */
/* ------------------------------------------------------------------------ */

static int vector_width(const mlc_cpu_features_t *fs) {
  if (mlc_cpu_features_get(fs, "avx512f") == 1) return 512;
  if (mlc_cpu_features_get(fs, "avx2") == 1) return 256;
  return 128;
}

/* Turning off a feature that the table says a known CPU lacks anyway says
 * nothing; dropping it keeps one target one string. */
static void drop_noop_removals(mlc_cpu_features_t *fs, const char *mcpu) {
  mlc_cpu_features_t implied;
  if (!mlc_cpu_implied(mcpu, &implied)) return;
  for (int i = fs->n - 1; i >= 0; i--) {
    const mlc_cpu_feature_t *f = &fs->f[i];
    if (!f->on && mlc_cpu_features_get(&implied, f->name) != 1 && mlc_cpu_feature_tracked(f->name))
      mlc_cpu_features_drop(fs, f->name);
  }
}

/* Whether a triple is x86 (x86_64, i386..i686), whose CPU names are checked. */
static bool is_x86(const char *triple) {
  return strncmp(triple, "x86_64", 6) == 0 || (triple[0] == 'i' && triple[1] && strchr("3456", triple[1]) &&
                                                strncmp(triple + 2, "86", 2) == 0);
}

/* Whether two triples name the same architecture (the part before '-'). */
static bool same_arch(const char *a, const char *b) {
  size_t n = strcspn(a, "-");
  return n == strcspn(b, "-") && strncmp(a, b, n) == 0;
}

/* The CPU: given, else the host's when the triple is the host's architecture,
 * else LLVM's generic one. Without -mcpu and -mtriple the target is the host,
 * triple included; with -mcpu alone it is a cross target for x86-64. */
static int build_llvm(mlc_target_t *t, const target_opts_t *o, const char *str) {
  mlc_cpu_features_t fs = {0};
  const char *triple = o->mtriple ? o->mtriple : o->mcpu ? MLC_DEFAULT_TRIPLE : mlc_cpu_host_triple();
  int rc = copy_name(t->mtriple, sizeof t->mtriple, triple, "triple", str);
  if (rc != MLC_OK) return rc;
  if (o->mcpu) {
    rc = copy_name(t->mcpu, sizeof t->mcpu, o->mcpu, "CPU name", str);
    if (rc != MLC_OK) return rc;
    if (is_x86(t->mtriple) && !mlc_cpu_known(t->mcpu)) {
      char known[1024];
      mlc_cpu_known_list(known, sizeof known);
      return mlc_error_set(MLC_EINVAL, "unknown -mcpu '%s' in target '%s' (x86-64 CPUs: %s; or an older name LLVM knows)",
                           t->mcpu, str, known);
    }
    mlc_cpu_implied(t->mcpu, &fs);
  } else if (same_arch(t->mtriple, mlc_cpu_host_triple())) {
    mlc_cpu_host(t->mcpu, sizeof t->mcpu, &fs);
  } else {
    snprintf(t->mcpu, sizeof t->mcpu, "generic");
  }
  if (o->mattr && mlc_cpu_features_apply(&fs, o->mattr) != MLC_OK)
    return mlc_error_set(MLC_EINVAL, "bad -mattr in target '%s': %s", str, mlc_error_last());
  drop_noop_removals(&fs, t->mcpu);
  if (!mlc_cpu_features_str(&fs, t->mattr, sizeof t->mattr))
    return mlc_error_set(MLC_EINVAL, "too many features in target '%s'", str);
  t->num_cores = o->num_cores ? o->num_cores : mlc_cpu_host_cores();
  t->vector_width = vector_width(&fs);
  return MLC_OK;
}

/* "sm_" and digits, with the arch-specific "a" suffix allowed (sm_90a). */
static bool cuda_arch_ok(const char *arch) {
  if (strncmp(arch, "sm_", 3) != 0) return false;
  const char *p = arch + 3;
  size_t digits = strspn(p, "0123456789");
  return digits >= 2 && (p[digits] == '\0' || (p[digits] == 'a' && p[digits + 1] == '\0'));
}

static bool rocm_arch_ok(const char *mcpu) {
  return strncmp(mcpu, "gfx", 3) == 0 && mcpu[3] && all_chars(mcpu + 3, "");
}

static int build_gpu(mlc_target_t *t, const target_opts_t *o, const char *str) {
  if (t->kind == MLC_TARGET_CUDA) {
    if (!o->arch) return mlc_error_set(MLC_EINVAL, "cuda target needs -arch=sm_XX in target '%s'", str);
    if (!cuda_arch_ok(o->arch) || strlen(o->arch) >= sizeof t->arch)
      return mlc_error_set(MLC_EINVAL, "bad -arch '%s' (expected sm_XX) in target '%s'", o->arch, str);
    strcpy(t->arch, o->arch);
  } else {
    if (!o->mcpu) return mlc_error_set(MLC_EINVAL, "rocm target needs -mcpu=gfxXXX in target '%s'", str);
    if (!rocm_arch_ok(o->mcpu) || strlen(o->mcpu) >= sizeof t->mcpu)
      return mlc_error_set(MLC_EINVAL, "bad -mcpu '%s' (expected gfxXXX) in target '%s'", o->mcpu, str);
    strcpy(t->mcpu, o->mcpu);
  }
  snprintf(t->mtriple, sizeof t->mtriple, "%s", target_kinds[t->kind].triple);
  t->max_threads_per_block = o->max_threads ? o->max_threads : target_kinds[t->kind].max_threads;
  t->max_shared_memory_per_block = o->max_shared ? o->max_shared : target_kinds[t->kind].max_shared;
  t->thread_warp_size = o->warp ? o->warp : target_kinds[t->kind].warp;
  t->max_registers_per_thread = o->max_regs ? o->max_regs : target_kinds[t->kind].max_regs;
  t->registers_per_block = o->regs_block ? o->regs_block : target_kinds[t->kind].regs_block;
  return MLC_OK;
}

int mlc_target_parse(mlc_target_t *out, const char *str) {
  char buf[MLC_TARGET_STR_MAX];
  char *tokens[MLC_TARGET_TOKENS_MAX];
  int n_tokens = 0, rc;
  unsigned seen = 0;
  target_opts_t o = {0};
  mlc_target_t t;
  memset(&t, 0, sizeof t);
  if (!str) return mlc_error_set(MLC_EINVAL, "empty target string");
  if (strlen(str) >= sizeof buf) return mlc_error_set(MLC_EINVAL, "target string too long");
  strcpy(buf, str);
  if ((rc = tokenize(buf, tokens, &n_tokens, str)) != MLC_OK) return rc;
  int kind = find_kind(tokens[0], str);
  if (kind < 0) return kind;
  t.kind = target_kinds[kind].kind;
  for (int i = 1; i < n_tokens;)
    if ((rc = parse_option(&o, tokens, n_tokens, &i, t.kind, &seen, str)) != MLC_OK) return rc;
  t.fast_math = o.fast_math;
  rc = t.kind == MLC_TARGET_LLVM ? build_llvm(&t, &o, str) : build_gpu(&t, &o, str);
  if (rc != MLC_OK) return rc;
  *out = t;
  return MLC_OK;
}

void mlc_target_host(mlc_target_t *out) {
  mlc_cpu_features_t fs = {0};
  memset(out, 0, sizeof *out);
  out->kind = MLC_TARGET_LLVM;
  snprintf(out->mtriple, sizeof out->mtriple, "%s", mlc_cpu_host_triple());
  mlc_cpu_host(out->mcpu, sizeof out->mcpu, &fs);
  /* The table's largest set fits; an overflow would only drop features. */
  if (!mlc_cpu_features_str(&fs, out->mattr, sizeof out->mattr)) out->mattr[0] = '\0';
  out->num_cores = mlc_cpu_host_cores();
  out->vector_width = vector_width(&fs);
}

void mlc_target_llvm_cpu(const mlc_target_t *t, int llvm_major, char *cpu, size_t cpu_len, char *mattr,
                         size_t mattr_len) {
  const char *name = mlc_cpu_for_llvm(t->mcpu, llvm_major);
  snprintf(cpu, cpu_len, "%s", name);
  snprintf(mattr, mattr_len, "%s", t->mattr);
  if (strcmp(name, t->mcpu) == 0) return;
  mlc_cpu_features_t fs = {0};
  mlc_cpu_implied(t->mcpu, &fs);
  char full[sizeof t->mattr];
  if (mlc_cpu_features_apply(&fs, t->mattr) == MLC_OK && mlc_cpu_features_str(&fs, full, sizeof full))
    snprintf(mattr, mattr_len, "%s", full);
}

int mlc_target_cores(const mlc_target_t *t) { return t->num_cores > 0 ? t->num_cores : mlc_cpu_host_cores(); }

bool mlc_target_has_feature(const mlc_target_t *t, const char *feature) {
  if (t->kind != MLC_TARGET_LLVM || !feature) return false;
  if (feature[0] == '+') feature++;
  size_t len = strlen(feature);
  for (const char *p = t->mattr; *p;) {
    size_t item = strcspn(p, ",");
    if (p[0] == '+' && item == len + 1 && strncmp(p + 1, feature, len) == 0) return true;
    p += item;
    if (*p == ',') p++;
  }
  return false;
}

/* ------------------------------------------------------------------------ */
/* Canonical printing                                                        */
/* ------------------------------------------------------------------------ */

typedef struct {
  char *buf;
  size_t len, used;
} out_t;

static void out_printf(out_t *o, const char *fmt, ...) MLC_PRINTF(2, 3);
static void out_printf(out_t *o, const char *fmt, ...) {
  if (o->used + 1 >= o->len) return;
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(o->buf + o->used, o->len - o->used, fmt, ap);
  va_end(ap);
  if (n < 0) return;
  o->used += (size_t)n < o->len - o->used ? (size_t)n : o->len - o->used - 1;
}

/* What -mattr must say beyond -mcpu: features on that the CPU does not imply,
 * and every feature turned off (parsing kept only meaningful removals). */
static void llvm_mattr_delta(const mlc_target_t *t, char *buf, size_t len) {
  mlc_cpu_features_t have = {0}, implied, delta = {0};
  mlc_cpu_implied(t->mcpu, &implied);
  mlc_cpu_features_apply(&have, t->mattr); /* well-formed: parsing wrote it */
  for (int i = 0; i < have.n; i++) {
    const mlc_cpu_feature_t *f = &have.f[i];
    if (!f->on || mlc_cpu_features_get(&implied, f->name) != 1)
      mlc_cpu_features_set(&delta, f->name, f->on);
  }
  for (int i = 0; i < implied.n; i++) /* implied but not listed at all: off */
    if (mlc_cpu_features_get(&have, implied.f[i].name) == -1)
      mlc_cpu_features_set(&delta, implied.f[i].name, false);
  if (!mlc_cpu_features_str(&delta, buf, len)) buf[0] = '\0';
}

static void print_llvm(out_t *o, const mlc_target_t *t) {
  char mattr[sizeof t->mattr];
  out_printf(o, "llvm -mcpu=%s", t->mcpu);
  if (strcmp(t->mtriple, MLC_DEFAULT_TRIPLE) != 0 && t->mtriple[0])
    out_printf(o, " -mtriple=%s", t->mtriple);
  llvm_mattr_delta(t, mattr, sizeof mattr);
  if (mattr[0]) out_printf(o, " -mattr=%s", mattr);
  out_printf(o, " -num-cores=%d", t->num_cores);
}

static void print_gpu(out_t *o, const mlc_target_t *t) {
  if (t->kind == MLC_TARGET_CUDA)
    out_printf(o, "cuda -arch=%s", t->arch);
  else
    out_printf(o, "rocm -mcpu=%s", t->mcpu);
  const target_kind_info_t *k = &target_kinds[t->kind];
  if (t->max_threads_per_block != k->max_threads)
    out_printf(o, " -max_threads_per_block=%d", t->max_threads_per_block);
  if (t->max_shared_memory_per_block != k->max_shared)
    out_printf(o, " -max_shared_memory_per_block=%d", t->max_shared_memory_per_block);
  if (t->max_registers_per_thread != k->max_regs)
    out_printf(o, " -max_registers_per_thread=%d", t->max_registers_per_thread);
  if (t->registers_per_block != k->regs_block) out_printf(o, " -registers_per_block=%d", t->registers_per_block);
  if (t->thread_warp_size != k->warp) out_printf(o, " -thread_warp_size=%d", t->thread_warp_size);
}

char *mlc_target_str(const mlc_target_t *t, char *buf, size_t len) {
  out_t o = {buf, len, 0};
  if (len == 0) return buf;
  buf[0] = '\0';
  if (t->kind == MLC_TARGET_LLVM)
    print_llvm(&o, t);
  else
    print_gpu(&o, t);
  if (t->fast_math) out_printf(&o, " -fast-math");
  return buf;
}
