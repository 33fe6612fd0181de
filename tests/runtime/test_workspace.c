/*
 * test_workspace.c - the runtime's cache of heap buffers for generated code
 * (mlc_rt_workspace_alloc / mlc_rt_workspace_free): reuse of a freed block,
 * the size and alignment rules that decide when a cached block fits, the
 * bound on cached blocks, threads allocating at once, use after fork, and
 * the requests it refuses.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runtime/runtime.h"

/* The sizes no machine has are refused with NULL, under ASan too. */
const char *__asan_default_options(void) { return "allocator_may_return_null=1"; }

static bool aligned_to(const void *p, uint64_t align) { return ((uintptr_t)p & (align - 1)) == 0; }

/* A freed block comes back for the next request of its size, and for any
 * request it holds that is at least half of it, aligned as asked. */
static void test_a_freed_block_is_handed_out_again(void **state) {
  (void)state;
  void *a = mlc_rt_workspace_alloc(1 << 20, 64);
  assert_non_null(a);
  assert_true(aligned_to(a, 64));
  memset(a, 0xab, 1 << 20); /* all of it is usable */
  mlc_rt_workspace_free(a);
  void *b = mlc_rt_workspace_alloc(1 << 20, 64);
  assert_ptr_equal(a, b);
  mlc_rt_workspace_free(b);
  void *c = mlc_rt_workspace_alloc((1 << 19) + 1, 64); /* just over half: fits */
  assert_ptr_equal(a, c);
  mlc_rt_workspace_free(c);
}

/* A small request does not pin a block over twice its size, and a block
 * is not reused for a stricter alignment than it was made with. */
static void test_a_cached_block_must_fit_size_and_alignment(void **state) {
  (void)state;
  void *big = mlc_rt_workspace_alloc(4 << 20, 64);
  assert_non_null(big);
  mlc_rt_workspace_free(big);
  void *small = mlc_rt_workspace_alloc(100 << 10, 64);
  assert_non_null(small);
  assert_ptr_not_equal(small, big);
  void *again = mlc_rt_workspace_alloc(4 << 20, 64); /* the big one is still cached */
  assert_ptr_equal(again, big);
  mlc_rt_workspace_free(again);
  mlc_rt_workspace_free(small);

  void *p64 = mlc_rt_workspace_alloc(64 << 10, 64);
  assert_non_null(p64);
  bool page_aligned_already = aligned_to(p64, 1 << 16);
  mlc_rt_workspace_free(p64);
  void *p64k = mlc_rt_workspace_alloc(64 << 10, 1 << 16);
  assert_non_null(p64k);
  assert_true(aligned_to(p64k, 1 << 16));
  if (!page_aligned_already) assert_ptr_not_equal(p64k, p64);
  mlc_rt_workspace_free(p64k);
}

/* 8 MiB + i * 84 KiB: larger than anything the tests before cached. */
static uint64_t growing(int i) { return ((uint64_t)8 << 20) + (uint64_t)i * 21 * 4096; }

/* Sixteen blocks stay cached: after 20 blocks of growing sizes are freed,
 * each of the 16 largest is handed out again for its size (a larger block
 * evicts the smallest cached one). */
static void test_the_cache_keeps_the_largest_sixteen(void **state) {
  (void)state;
  enum { N = 20 };
  void *p[N];
  for (int i = 0; i < N; i++) {
    p[i] = mlc_rt_workspace_alloc(growing(i), 64);
    assert_non_null(p[i]);
  }
  for (int i = 0; i < N; i++) mlc_rt_workspace_free(p[i]);
  for (int i = N - 1; i >= N - 16; i--) assert_ptr_equal(mlc_rt_workspace_alloc(growing(i), 64), p[i]);
  for (int i = N - 16; i < N; i++) mlc_rt_workspace_free(p[i]);
}

enum { THREADS = 4, ROUNDS = 3000 };

/* Each thread fills its blocks with its own byte and checks them before
 * giving them back: two threads never hold one block. */
static void *churn(void *arg) {
  unsigned char id = (unsigned char)(uintptr_t)arg;
  unsigned seed = id;
  for (int r = 0; r < ROUNDS; r++) {
    uint64_t n1 = 4096 + (uint64_t)(rand_r(&seed) % (256 << 10)), n2 = 1 + (uint64_t)(rand_r(&seed) % 70000);
    unsigned char *a = mlc_rt_workspace_alloc(n1, 64), *b = mlc_rt_workspace_alloc(n2, 128);
    if (!a || !b || !aligned_to(a, 64) || !aligned_to(b, 128)) return (void *)1;
    memset(a, id, n1);
    memset(b, id, n2);
    for (uint64_t i = 0; i < n1; i += 997)
      if (a[i] != id) return (void *)1;
    for (uint64_t i = 0; i < n2; i += 997)
      if (b[i] != id) return (void *)1;
    mlc_rt_workspace_free(b);
    mlc_rt_workspace_free(a);
  }
  return NULL;
}

static void test_threads_never_share_a_block(void **state) {
  (void)state;
  pthread_t t[THREADS];
  for (int i = 0; i < THREADS; i++) assert_int_equal(pthread_create(&t[i], NULL, churn, (void *)(uintptr_t)(i + 1)), 0);
  for (int i = 0; i < THREADS; i++) {
    void *ret = (void *)1;
    assert_int_equal(pthread_join(t[i], &ret), 0);
    assert_null(ret);
  }
}

/* A child forked while the cache holds blocks (and while another thread
 * churns through it) allocates and frees in its own copy. */
static void test_a_forked_child_can_use_the_cache(void **state) {
  (void)state;
  void *held = mlc_rt_workspace_alloc(1 << 20, 64);
  assert_non_null(held);
  pthread_t t;
  assert_int_equal(pthread_create(&t, NULL, churn, (void *)(uintptr_t)9), 0);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    void *a = mlc_rt_workspace_alloc(1 << 20, 64);
    bool ok = a && a != held;
    mlc_rt_workspace_free(a);
    mlc_rt_workspace_free(held);
    void *b = mlc_rt_workspace_alloc(1 << 20, 64);
    ok = ok && b != NULL;
    mlc_rt_workspace_free(b);
    _exit(ok ? 0 : 1);
  }
  int status = 0;
  assert_int_equal(waitpid(pid, &status, 0), pid);
  assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  void *ret = (void *)1;
  assert_int_equal(pthread_join(t, &ret), 0);
  assert_null(ret);
  mlc_rt_workspace_free(held);
}

/* Zero bytes is a block; a size no machine has is NULL; NULL and pointers
 * that are not blocks of the cache are ignored by free. */
static void test_edge_requests(void **state) {
  (void)state;
  void *z = mlc_rt_workspace_alloc(0, 64);
  assert_non_null(z);
  mlc_rt_workspace_free(z);
  assert_null(mlc_rt_workspace_alloc(UINT64_MAX, 64));
  assert_null(mlc_rt_workspace_alloc(UINT64_MAX - 4096, 64));
  mlc_rt_workspace_free(NULL);
  int not_a_block;
  mlc_rt_workspace_free(&not_a_block);
  void *tiny_align = mlc_rt_workspace_alloc(100, 1); /* raised to a pointer's alignment */
  assert_non_null(tiny_align);
  assert_true(aligned_to(tiny_align, sizeof(void *)));
  mlc_rt_workspace_free(tiny_align);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_a_freed_block_is_handed_out_again),
      cmocka_unit_test(test_a_cached_block_must_fit_size_and_alignment),
      cmocka_unit_test(test_the_cache_keeps_the_largest_sixteen),
      cmocka_unit_test(test_threads_never_share_a_block),
      cmocka_unit_test(test_a_forked_child_can_use_the_cache),
      cmocka_unit_test(test_edge_requests),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
