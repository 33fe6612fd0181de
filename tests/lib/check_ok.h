/*
 * check_ok.h - OK(call) for cmocka tests: asserts that call returns MLC_OK,
 * first printing the call and mlc_error_last() when it does not. Include
 * after <cmocka.h>.
 */
#ifndef MLC_TESTS_CHECK_OK_H
#define MLC_TESTS_CHECK_OK_H

#include <stdio.h>

#include "support/support.h"

#define OK(call)                                                             \
  do {                                                                       \
    int rc_ = (call);                                                        \
    if (rc_ != MLC_OK) fprintf(stderr, "%s: %s\n", #call, mlc_error_last()); \
    assert_int_equal(rc_, MLC_OK);                                           \
  } while (0)

#endif /* MLC_TESTS_CHECK_OK_H */
