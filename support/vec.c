/*
 * vec.c - growth for MLC_VEC arrays (the macros in support.h do the rest).
 *
 * Capacity doubles (starting at 8) so pushes are amortised O(1); every size
 * computation is overflow-checked because `need` can come from untrusted input
 * (a message listing a huge number of elements).
 */
#include "support/support.h"

#include <stdint.h>

enum { MLC_VEC_MIN_CAP = 8 };

int mlc_vec_reserve_(void **data, size_t *cap, size_t elem, size_t need) {
  if (need <= *cap) return MLC_OK;
  size_t new_cap = *cap < MLC_VEC_MIN_CAP ? MLC_VEC_MIN_CAP : *cap;
  while (new_cap < need) {
    if (new_cap > SIZE_MAX / 2) {
      new_cap = need;
      break;
    }
    new_cap *= 2;
  }
  if (elem != 0 && new_cap > SIZE_MAX / elem)
    return mlc_error_set(MLC_ENOMEM, "array of %zu elements of %zu bytes is too large", need, elem);
  size_t bytes = new_cap * elem;
  void *p = mlc_realloc(*data, bytes > 0 ? bytes : 1);
  if (!p)
    return mlc_error_set(MLC_ENOMEM, "out of memory growing an array to %zu elements", need);
  *data = p;
  *cap = new_cap;
  return MLC_OK;
}
