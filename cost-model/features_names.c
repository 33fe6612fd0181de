/*
 * features_names.c - the name of every feature column, in layout order
 * (features.h; docs/cost-model.md has the table with their meanings).
 */
#include "cost-model/features.h"

#define FORKIND_NAMES(p)                                                                     \
  p "_num", p "_prod", p "_len", p "_type.none", p "_type.inner_spatial",                    \
      p "_type.middle_spatial", p "_type.outer_spatial", p "_type.inner_reduce",             \
      p "_type.middle_reduce", p "_type.outer_reduce", p "_type.mixed"

#define BUFFER_NAMES(b)                                                                      \
  b ".acc_type.read", b ".acc_type.write", b ".acc_type.rw", b ".bytes", b ".unique_bytes",  \
      b ".lines", b ".unique_lines", b ".reuse_type.loop_multiple_read",                     \
      b ".reuse_type.serial_multiple_read_write", b ".reuse_type.no_reuse",                  \
      b ".reuse_dis_iter", b ".reuse_dis_bytes", b ".reuse_ct", b ".bytes_d_reuse_ct",       \
      b ".unique_bytes_d_reuse_ct", b ".lines_d_reuse_ct", b ".unique_lines_d_reuse_ct",     \
      b ".stride"

static const char *const NAMES[] = {
    /* group 1: arithmetic */
    "float_mad", "float_add_sub", "float_mul", "float_div_mod", "float_cmp", "float_math_func",
    "float_other_func", "int_mad", "int_add_sub", "int_mul", "int_div_mod", "int_cmp",
    "int_math_func", "int_other_func", "bool_op", "select_op",
    /* group 1: loop kinds */
    FORKIND_NAMES("vec"), FORKIND_NAMES("unroll"), FORKIND_NAMES("parallel"),
    /* group 1: GPU */
    "is_gpu", "blockIdx_x_len", "blockIdx_y_len", "blockIdx_z_len", "threadIdx_x_len",
    "threadIdx_y_len", "threadIdx_z_len", "vthread_len",
    /* group 2: buffers */
    BUFFER_NAMES("B0"), BUFFER_NAMES("B1"), BUFFER_NAMES("B2"), BUFFER_NAMES("B3"), BUFFER_NAMES("B4"),
    /* group 3 */
    "arith_intensity_curve_0", "arith_intensity_curve_1", "arith_intensity_curve_2",
    "arith_intensity_curve_3", "arith_intensity_curve_4", "arith_intensity_curve_5",
    "arith_intensity_curve_6", "arith_intensity_curve_7", "arith_intensity_curve_8",
    "arith_intensity_curve_9",
    /* group 4 */
    "alloc_size", "alloc_prod", "alloc_outer_prod", "alloc_inner_prod",
    /* group 5 */
    "outer_prod", "num_loops", "auto_unroll_max_step",
};

_Static_assert(sizeof NAMES / sizeof NAMES[0] == FX_DIM, "one name per feature");
_Static_assert(FX_DIM == CM_FEATURE_DIM, "the layout is CM_FEATURE_DIM wide");

const char *cm_feature_name(int index) {
  return index >= 0 && index < CM_FEATURE_DIM ? NAMES[index] : NULL;
}
