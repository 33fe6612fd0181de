/*
 * target_cpu.c - what an LLVM CPU name means: feature sets, the CPU table, and
 * detection of the host CPU.
 *
 * The table lists, for each CPU LLVM knows by name, the features that matter
 * for scheduling (vector ISA levels, FMA, dot-product and AMX extensions), as
 * the features added to a parent CPU. It lets a cross target such as
 * "llvm -mcpu=skylake-avx512" answer mlc_target_has_feature("avx512f") without
 * running on that CPU, and lets the canonical string print only the -mattr
 * entries that differ from what -mcpu implies.
 *
 * Host detection names the CPU with __builtin_cpu_is, then corrects the
 * table's features with what the running CPU (and OS) report: a VM often hides
 * features its CPU model has. Features the compiler cannot query through
 * __builtin_cpu_supports are read from cpuid directly.
 */
#include "target_priv.h"

#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#if defined(__x86_64__) || defined(__i386__)
#define MLC_HOST_X86 1
#include <cpuid.h>
#endif

/* ------------------------------------------------------------------------ */
/* Feature sets                                                              */
/* ------------------------------------------------------------------------ */

static int features_find(const mlc_cpu_features_t *fs, const char *name, bool *found) {
  int i = 0;
  while (i < fs->n && strcmp(fs->f[i].name, name) < 0) i++;
  *found = i < fs->n && strcmp(fs->f[i].name, name) == 0;
  return i;
}

int mlc_cpu_features_set(mlc_cpu_features_t *fs, const char *name, bool on) {
  bool found;
  int i = features_find(fs, name, &found);
  if (found) {
    fs->f[i].on = on;
    return MLC_OK;
  }
  if (fs->n == MLC_CPU_FEATURES_MAX)
    return mlc_error_set(MLC_ERANGE, "too many features (at most %d)", MLC_CPU_FEATURES_MAX);
  if (strlen(name) >= MLC_CPU_FEATURE_NAME_MAX)
    return mlc_error_set(MLC_ERANGE, "feature name '%s' is too long", name);
  memmove(&fs->f[i + 1], &fs->f[i], (size_t)(fs->n - i) * sizeof fs->f[0]);
  strcpy(fs->f[i].name, name);
  fs->f[i].on = on;
  fs->n++;
  return MLC_OK;
}

int mlc_cpu_features_get(const mlc_cpu_features_t *fs, const char *name) {
  bool found;
  int i = features_find(fs, name, &found);
  return found ? fs->f[i].on : -1;
}

void mlc_cpu_features_drop(mlc_cpu_features_t *fs, const char *name) {
  bool found;
  int i = features_find(fs, name, &found);
  if (!found) return;
  memmove(&fs->f[i], &fs->f[i + 1], (size_t)(fs->n - i - 1) * sizeof fs->f[0]);
  fs->n--;
}

/* Feature names as LLVM spells them: lower case, digits, '.', '_', '-'. */
static bool feature_name_ok(const char *s, size_t len) {
  if (len == 0 || len >= MLC_CPU_FEATURE_NAME_MAX) return false;
  for (size_t i = 0; i < len; i++) {
    char c = s[i];
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-'))
      return false;
  }
  return true;
}

int mlc_cpu_features_apply(mlc_cpu_features_t *fs, const char *mattr) {
  const char *p = mattr;
  while (*p) {
    size_t len = strcspn(p, ",");
    char name[MLC_CPU_FEATURE_NAME_MAX];
    if (len < 2 || (p[0] != '+' && p[0] != '-') || !feature_name_ok(p + 1, len - 1))
      return mlc_error_set(MLC_EINVAL, "bad feature '%.*s' (expected +name or -name)", (int)len, p);
    memcpy(name, p + 1, len - 1);
    name[len - 1] = '\0';
    int rc = mlc_cpu_features_set(fs, name, p[0] == '+');
    if (rc != MLC_OK) return rc;
    p += len;
    if (*p == ',') p++;
  }
  return MLC_OK;
}

bool mlc_cpu_features_str(const mlc_cpu_features_t *fs, char *buf, size_t len) {
  size_t used = 0;
  if (len == 0) return false;
  buf[0] = '\0';
  for (int i = 0; i < fs->n; i++) {
    int n = snprintf(buf + used, len - used, "%s%c%s", i ? "," : "", fs->f[i].on ? '+' : '-',
                     fs->f[i].name);
    if (n < 0 || (size_t)n >= len - used) return false;
    used += (size_t)n;
  }
  return true;
}

/* ------------------------------------------------------------------------ */
/* The CPU table                                                             */
/* ------------------------------------------------------------------------ */

/* Features the table tracks; each CPU's set lists which of these it has.
 * Vector ISA levels and what the tensorize intrinsics need. */
static const char *const tracked_features[] = {
    "popcnt",     "sse4.2",     "avx",        "avx2",       "bmi",        "bmi2",
    "f16c",       "fma",        "avx512f",    "avx512cd",   "avx512bw",   "avx512dq",
    "avx512vl",   "avx512ifma", "avx512vbmi", "avx512vnni", "avx512bf16", "avx512fp16",
    "avxvnni",    "amx-tile",   "amx-int8",   "amx-bf16",
};

#define MLC_AVX512_BASE "avx512bw,avx512cd,avx512dq,avx512f,avx512vl"

/*      LLVM CPU name      parent             features added to the parent's */
#define MLC_CPU_MAP(X)                                                                  \
  X("generic",         NULL,              "")                                           \
  X("x86-64",          NULL,              "")                                           \
  X("x86-64-v2",       "x86-64",          "popcnt,sse4.2")                              \
  X("x86-64-v3",       "x86-64-v2",       "avx,avx2,bmi,bmi2,f16c,fma")                 \
  X("x86-64-v4",       "x86-64-v3",       MLC_AVX512_BASE)                              \
  X("nehalem",         "x86-64-v2",       "")                                           \
  X("westmere",        "nehalem",         "")                                           \
  X("sandybridge",     "westmere",        "avx")                                        \
  X("ivybridge",       "sandybridge",     "f16c")                                       \
  X("haswell",         "x86-64-v3",       "")                                           \
  X("core-avx2",       "haswell",         "")                                           \
  X("broadwell",       "haswell",         "")                                           \
  X("skylake",         "broadwell",       "")                                           \
  X("skylake-avx512",  "skylake",         MLC_AVX512_BASE)                              \
  X("skx",             "skylake-avx512",  "")                                           \
  X("cascadelake",     "skylake-avx512",  "avx512vnni")                                 \
  X("cooperlake",      "cascadelake",     "avx512bf16")                                 \
  X("cannonlake",      "skylake-avx512",  "avx512ifma,avx512vbmi")                      \
  X("icelake-client",  "cannonlake",      "avx512vnni")                                 \
  X("icelake-server",  "icelake-client",  "")                                           \
  X("rocketlake",      "icelake-client",  "")                                           \
  X("tigerlake",       "icelake-client",  "")                                           \
  X("alderlake",       "skylake",         "avxvnni")                                    \
  X("sapphirerapids",  "icelake-server",                                                \
    "amx-bf16,amx-int8,amx-tile,avx512bf16,avx512fp16,avxvnni")                         \
  X("emeraldrapids",   "sapphirerapids",  "")                                           \
  X("graniterapids",   "sapphirerapids",  "")                                           \
  X("znver1",          "x86-64-v3",       "")                                           \
  X("znver2",          "znver1",          "")                                           \
  X("znver3",          "znver2",          "")                                           \
  X("znver4",          "znver3",                                                        \
    MLC_AVX512_BASE ",avx512bf16,avx512ifma,avx512vbmi,avx512vnni")                     \
  X("znver5",          "znver4",          "avxvnni")

static const struct {
  const char *name, *parent, *features;
} cpu_table[] = {
#define MLC_CPU_ROW_(name, parent, features) {name, parent, features},
    MLC_CPU_MAP(MLC_CPU_ROW_)
#undef MLC_CPU_ROW_
};

bool mlc_cpu_feature_tracked(const char *feature) {
  for (size_t i = 0; i < sizeof tracked_features / sizeof tracked_features[0]; i++)
    if (strcmp(tracked_features[i], feature) == 0) return true;
  return false;
}

/* Adds "a,b,c" as enabled features (table entries are well-formed). */
static void features_add_list(mlc_cpu_features_t *fs, const char *list) {
  while (*list) {
    size_t len = strcspn(list, ",");
    char name[MLC_CPU_FEATURE_NAME_MAX];
    MLC_ASSERT(len > 0 && len < sizeof name);
    memcpy(name, list, len);
    name[len] = '\0';
    MLC_ASSERT(mlc_cpu_features_set(fs, name, true) == MLC_OK);
    list += len;
    if (*list == ',') list++;
  }
}

/* x86 CPU names LLVM 14 knows that the table does not describe: accepted
 * as -mcpu, their features coming from -mattr alone. */
static const char *const other_llvm_cpus[] = {
    "i386", "i486", "i586", "pentium", "pentium-mmx", "i686", "pentiumpro", "pentium2", "pentium3",
    "pentium3m", "pentium-m", "pentium4", "pentium4m", "lakemont", "yonah", "prescott", "nocona", "core2",
    "penryn", "bonnell", "atom", "silvermont", "slm", "goldmont", "goldmont-plus", "tremont", "corei7",
    "corei7-avx", "core-avx-i", "knl", "knm", "k6", "k6-2", "k6-3", "athlon", "athlon-tbird", "athlon-xp",
    "athlon-mp", "athlon-4", "k8", "opteron", "athlon64", "athlon-fx", "k8-sse3", "opteron-sse3",
    "athlon64-sse3", "amdfam10", "barcelona", "btver1", "btver2", "bdver1", "bdver2", "bdver3", "bdver4",
    "geode", "winchip-c6", "winchip2", "c3", "c3-2"};

/* CPUs newer than LLVM 14 (the oldest LLVM this builds with): the first LLVM
 * that knows each, and the CPU to name on an older one. */
static const struct {
  const char *name;
  int llvm;
  const char *older;
} newer_cpus[] = {
    {"raptorlake", 15, "alderlake"},     {"meteorlake", 15, "alderlake"},  {"znver4", 16, "znver3"},
    {"graniterapids", 16, "sapphirerapids"}, {"sierraforest", 16, "alderlake"}, {"grandridge", 16, "alderlake"},
    {"gracemont", 16, "alderlake"},      {"emeraldrapids", 17, "sapphirerapids"}, {"arrowlake", 18, "alderlake"},
    {"lunarlake", 18, "alderlake"},      {"znver5", 19, "znver4"},
};

bool mlc_cpu_known(const char *cpu) {
  for (size_t i = 0; i < sizeof cpu_table / sizeof cpu_table[0]; i++)
    if (strcmp(cpu_table[i].name, cpu) == 0) return true;
  for (size_t i = 0; i < sizeof other_llvm_cpus / sizeof other_llvm_cpus[0]; i++)
    if (strcmp(other_llvm_cpus[i], cpu) == 0) return true;
  for (size_t i = 0; i < sizeof newer_cpus / sizeof newer_cpus[0]; i++)
    if (strcmp(newer_cpus[i].name, cpu) == 0) return true;
  return false;
}

void mlc_cpu_known_list(char *buf, size_t len) {
  size_t at = 0;
  buf[0] = '\0';
  for (size_t i = 0; i < sizeof cpu_table / sizeof cpu_table[0] && at < len; i++) {
    int n = snprintf(buf + at, len - at, "%s%s", i ? ", " : "", cpu_table[i].name);
    if (n < 0) break;
    at += (size_t)n;
  }
}

const char *mlc_cpu_for_llvm(const char *cpu, int llvm_major) {
  for (size_t i = 0; i < sizeof newer_cpus / sizeof newer_cpus[0]; i++)
    if (strcmp(newer_cpus[i].name, cpu) == 0 && newer_cpus[i].llvm > llvm_major)
      return mlc_cpu_for_llvm(newer_cpus[i].older, llvm_major);
  return cpu;
}

bool mlc_cpu_implied(const char *cpu, mlc_cpu_features_t *fs) {
  fs->n = 0;
  for (size_t i = 0; i < sizeof cpu_table / sizeof cpu_table[0]; i++) {
    if (strcmp(cpu_table[i].name, cpu) != 0) continue;
    if (cpu_table[i].parent) MLC_ASSERT(mlc_cpu_implied(cpu_table[i].parent, fs));
    features_add_list(fs, cpu_table[i].features);
    return true;
  }
  return false;
}

/* ------------------------------------------------------------------------ */
/* Host detection                                                            */
/* ------------------------------------------------------------------------ */

int mlc_cpu_host_cores(void) {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) {
    int n = CPU_COUNT(&set);
    if (n > 0) return n;
  }
  long n = sysconf(_SC_NPROCESSORS_ONLN); /* more than CPU_SETSIZE CPUs */
  return n > 0 ? (int)n : 1;
}

#if defined(MLC_HOST_X86)

const char *mlc_cpu_host_triple(void) { return "x86_64-linux-gnu"; }

enum { R_EAX, R_EBX, R_ECX, R_EDX };

static bool cpuid_bit(unsigned leaf, unsigned sub, int reg, int bit) {
  unsigned r[4];
  if (!__get_cpuid_count(leaf, sub, &r[R_EAX], &r[R_EBX], &r[R_ECX], &r[R_EDX])) return false;
  return (r[reg] >> bit) & 1u;
}

/* AMX tile state must be enabled by the OS (XCR0 bits 17 and 18). */
static bool os_amx_enabled(void) {
  if (!cpuid_bit(1, 0, R_ECX, 27)) return false; /* OSXSAVE: xgetbv usable */
  unsigned eax, edx;
  __asm__ volatile("xgetbv" : "=a"(eax), "=d"(edx) : "c"(0));
  (void)edx;
  return ((eax >> 17) & 3u) == 3u;
}

#define BUILTIN(f) (__builtin_cpu_supports(f) != 0)
/* cpuid for what compilers cannot all query; each needs the register state
 * that the builtin in the same line proves the OS saves. */
#define MLC_HOST_FEATURE_MAP(X)                                          \
  X("popcnt",     BUILTIN("popcnt"))                                     \
  X("sse4.2",     BUILTIN("sse4.2"))                                     \
  X("avx",        BUILTIN("avx"))                                        \
  X("avx2",       BUILTIN("avx2"))                                       \
  X("bmi",        BUILTIN("bmi"))                                        \
  X("bmi2",       BUILTIN("bmi2"))                                       \
  X("fma",        BUILTIN("fma"))                                        \
  X("f16c",       BUILTIN("avx") && cpuid_bit(1, 0, R_ECX, 29))          \
  X("avx512f",    BUILTIN("avx512f"))                                    \
  X("avx512cd",   BUILTIN("avx512cd"))                                   \
  X("avx512bw",   BUILTIN("avx512bw"))                                   \
  X("avx512dq",   BUILTIN("avx512dq"))                                   \
  X("avx512vl",   BUILTIN("avx512vl"))                                   \
  X("avx512ifma", BUILTIN("avx512ifma"))                                 \
  X("avx512vbmi", BUILTIN("avx512vbmi"))                                 \
  X("avx512vnni", BUILTIN("avx512vnni"))                                 \
  X("avx512bf16", BUILTIN("avx512bf16"))                                 \
  X("avx512fp16", BUILTIN("avx512f") && cpuid_bit(7, 0, R_EDX, 23))      \
  X("avxvnni",    BUILTIN("avx2") && cpuid_bit(7, 1, R_EAX, 4))          \
  X("amx-tile",   os_amx_enabled() && cpuid_bit(7, 0, R_EDX, 24))        \
  X("amx-int8",   os_amx_enabled() && cpuid_bit(7, 0, R_EDX, 25))        \
  X("amx-bf16",   os_amx_enabled() && cpuid_bit(7, 0, R_EDX, 22))

/* znver4 is known to __builtin_cpu_is from GCC 13 and clang 16 on; older
 * compilers call a Zen 4 "znver3", which host_cpu_name corrects. */
#if (defined(__clang__) && __clang_major__ >= 16) || \
    (!defined(__clang__) && defined(__GNUC__) && __GNUC__ >= 13)
#define MLC_HOST_ZNVER4(X) X("znver4")
#else
#define MLC_HOST_ZNVER4(X)
#endif

/* Names __builtin_cpu_is accepts on GCC >= 12 and clang >= 14. */
#define MLC_HOST_CPU_MAP(X)                                                    \
  X("sapphirerapids") X("alderlake") X("rocketlake") X("tigerlake")           \
  X("cooperlake") X("cascadelake") X("icelake-server") X("icelake-client")    \
  X("cannonlake") X("skylake-avx512") X("skylake") X("broadwell") X("haswell") \
  X("ivybridge") X("sandybridge") X("westmere") X("nehalem")                  \
  MLC_HOST_ZNVER4(X) X("znver3") X("znver2") X("znver1")

static void host_query(mlc_cpu_features_t *fs) {
  fs->n = 0;
#define MLC_HOST_QUERY_(name, query) mlc_cpu_features_set(fs, name, (query));
  MLC_HOST_FEATURE_MAP(MLC_HOST_QUERY_)
#undef MLC_HOST_QUERY_
}

/* Whether every feature `cpu` implies is on in `have`. */
static bool host_covers(const char *cpu, const mlc_cpu_features_t *have) {
  mlc_cpu_features_t need;
  mlc_cpu_implied(cpu, &need);
  for (int i = 0; i < need.n; i++)
    if (mlc_cpu_features_get(have, need.f[i].name) != 1) return false;
  return true;
}

/* The model name when the compiler knows the CPU; otherwise the best guess
 * from its features (newer models than the compiler, or a VM's made-up one). */
static const char *host_cpu_name(const mlc_cpu_features_t *have) {
  const char *name = NULL;
#define MLC_HOST_IS_(cpu) \
  if (!name && __builtin_cpu_is(cpu)) name = cpu;
  MLC_HOST_CPU_MAP(MLC_HOST_IS_)
#undef MLC_HOST_IS_
  bool avx512 = mlc_cpu_features_get(have, "avx512f") == 1;
  /* Zen 4 is the first AMD core with AVX-512. */
  if (name && strcmp(name, "znver3") == 0 && avx512) name = "znver4";
  if (name) return name;
  /* Every Intel core with AVX512-FP16 is Sapphire Rapids or a successor. */
  if (__builtin_cpu_is("intel") && mlc_cpu_features_get(have, "avx512fp16") == 1)
    return "sapphirerapids";
  if (__builtin_cpu_is("amd") && avx512) return "znver4";
  static const char *const levels[] = {"x86-64-v4", "x86-64-v3", "x86-64-v2"};
  for (size_t i = 0; i < sizeof levels / sizeof levels[0]; i++)
    if (host_covers(levels[i], have)) return levels[i];
  return "x86-64";
}

void mlc_cpu_host(char *mcpu, size_t len, mlc_cpu_features_t *fs) {
  mlc_cpu_features_t have;
  __builtin_cpu_init();
  host_query(&have);
  const char *name = host_cpu_name(&have);
  snprintf(mcpu, len, "%s", name);
  mlc_cpu_implied(name, fs);
  /* A feature the model has but this CPU hides becomes "-x"; one it has
   * beyond the model becomes "+x". */
  for (int i = 0; i < have.n; i++) {
    int implied = mlc_cpu_features_get(fs, have.f[i].name);
    if (have.f[i].on || implied == 1) mlc_cpu_features_set(fs, have.f[i].name, have.f[i].on);
  }
}

#else /* not x86: no table for the host, let LLVM pick */

const char *mlc_cpu_host_triple(void) {
#if defined(__aarch64__)
  return "aarch64-linux-gnu";
#else
  return "unknown-linux-gnu";
#endif
}

void mlc_cpu_host(char *mcpu, size_t len, mlc_cpu_features_t *fs) {
  snprintf(mcpu, len, "%s", "generic");
  fs->n = 0;
}

#endif

/* The "model name" line of /proc/cpuinfo, or "unknown". */
void mlc_cpu_model(char *buf, size_t len) {
  snprintf(buf, len, "unknown");
  FILE *f = fopen("/proc/cpuinfo", "r");
  if (!f) return;
  char line[512];
  while (fgets(line, sizeof line, f)) {
    if (strncmp(line, "model name", 10) != 0) continue;
    const char *colon = strchr(line, ':');
    if (!colon) continue;
    colon++;
    while (*colon == ' ' || *colon == '\t') colon++;
    size_t n = strcspn(colon, "\n");
    if (n == 0) continue;
    snprintf(buf, len, "%.*s", (int)n, colon);
    break;
  }
  fclose(f);
}
