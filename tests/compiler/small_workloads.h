/*
 * small_workloads.h - every built-in workload at a small shape, shared by
 * the code generation tests that run them all (test_codegen_workloads.c on
 * the CPU, test_codegen_gpu.c for cuda). Include after <cmocka.h> and the
 * project headers (it needs only <stdint.h>).
 */
#ifndef MLC_TESTS_SMALL_WORKLOADS_H
#define MLC_TESTS_SMALL_WORKLOADS_H

#include <stdint.h>

typedef struct {
  const char *name;
  int nshape;
  int64_t shape[12];
} small_workload_t;

/* The indices 0 (GMM), 4 (C2D) and 13 (D+B+R) are used by name in tests. */
static const small_workload_t workloads[] = {
    {"GMM", 3, {32, 48, 16}},
    {"BMM", 4, {2, 16, 16, 8}},
    {"GMV", 2, {32, 16}},
    {"C1D", 7, {1, 16, 8, 8, 3, 2, 1}},
    {"C2D", 9, {1, 6, 6, 4, 8, 3, 3, 1, 1}},
    {"C3D", 11, {1, 3, 4, 4, 4, 4, 3, 3, 3, 1, 1}},
    {"DEP", 8, {1, 8, 8, 4, 3, 3, 1, 1}},
    {"DIL", 10, {1, 8, 8, 4, 4, 3, 3, 1, 2, 2}},
    {"GRP", 10, {1, 8, 8, 8, 8, 3, 3, 2, 1, 4}},
    {"T2D", 9, {1, 4, 4, 4, 4, 4, 4, 2, 1}},
    {"NRM", 3, {1, 16, 16}},
    {"SFM", 2, {16, 32}},
    {"LN", 2, {8, 32}},
    {"D+B+R", 3, {8, 16, 12}},
};

#endif /* MLC_TESTS_SMALL_WORKLOADS_H */
