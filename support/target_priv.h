/*
 * target_priv.h - CPU feature sets, the CPU table and host detection, shared
 * by target.c (parsing and printing) and target_cpu.c (tables, detection).
 * Private to support/.
 */
#ifndef MLC_SUPPORT_TARGET_PRIV_H
#define MLC_SUPPORT_TARGET_PRIV_H

#include "support/support.h"

enum { MLC_CPU_FEATURES_MAX = 48, MLC_CPU_FEATURE_NAME_MAX = 32 };

/* A feature set as LLVM's -mattr sees it: each named feature is on ("+x") or
 * explicitly off ("-x"); features not listed are off. Kept sorted by name. */
typedef struct {
  char name[MLC_CPU_FEATURE_NAME_MAX];
  bool on;
} mlc_cpu_feature_t;

typedef struct {
  int n;
  mlc_cpu_feature_t f[MLC_CPU_FEATURES_MAX];
} mlc_cpu_features_t;

/* MLC_OK, or MLC_ERANGE when the set is full or the name too long. */
int mlc_cpu_features_set(mlc_cpu_features_t *fs, const char *name, bool on);
/* 1 on, 0 explicitly off, -1 not listed. */
int mlc_cpu_features_get(const mlc_cpu_features_t *fs, const char *name);
void mlc_cpu_features_drop(mlc_cpu_features_t *fs, const char *name);
/* Applies "+a,-b,..." (LLVM -mattr syntax) on top of fs; MLC_EINVAL with a
 * detail naming the bad item. */
int mlc_cpu_features_apply(mlc_cpu_features_t *fs, const char *mattr);
/* "+a,-b" into buf; false if it does not fit. */
bool mlc_cpu_features_str(const mlc_cpu_features_t *fs, char *buf, size_t len);

/* Features the CPU named `cpu` implies, from the table. False (fs empty) for a
 * CPU the table does not know. */
bool mlc_cpu_implied(const char *cpu, mlc_cpu_features_t *fs);
/* Whether LLVM (14 or later) knows `cpu` as an x86 CPU name. */
bool mlc_cpu_known(const char *cpu);
/* The table's CPU names, ", "-separated, into buf (cut to fit). */
void mlc_cpu_known_list(char *buf, size_t len);
/* `cpu`, or on an LLVM older than the one that introduced it, the newest
 * older CPU that LLVM knows (znver4 -> znver3 on LLVM 14). */
const char *mlc_cpu_for_llvm(const char *cpu, int llvm_major);
/* Whether the table tracks `feature` (so its absence from a known CPU's set
 * means the CPU lacks it). */
bool mlc_cpu_feature_tracked(const char *feature);

/* The host: LLVM CPU name and features (table defaults corrected by what the
 * running CPU reports), the default triple, and usable cores. */
void mlc_cpu_host(char *mcpu, size_t len, mlc_cpu_features_t *fs);
const char *mlc_cpu_host_triple(void); /* cores: mlc_cpu_host_cores (support.h) */

#endif /* MLC_SUPPORT_TARGET_PRIV_H */
