/*
 * test_cache.c - cache_read and cache_write: where the copy stage goes (the
 * start of the scope for an input, between the writer and its first
 * consumer otherwise, inside the loop they share), its shape (the whole
 * buffer inside a loop, the scope's region at the scope's level), which
 * blocks are redirected (all consumers, or the ones given), the recorded
 * instruction, and every precondition's error. Each positive case is checked
 * against exact TVMScript (TVM's own expected outputs, adapted) and with the
 * interpreter on random inputs.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "sched_testing.h"

/* ---- programs (sources, then expected results) -------------------------- */

static const char SRC_MATMUL[] =
    "# from tvm.script import tir as T\n"
    "\n"
    "@T.prim_func\n"
    "def main(A: T.Buffer((32, 32), \"float32\"), B: T.Buffer((32, 32), \"float32\"), C: T.Buffer((32, 32), \"float32\")):\n"
    "    # with T.block(\"root\"):\n"
    "    for i, j, k in T.grid(32, 32, 32):\n"
    "        with T.block(\"C\"):\n"
    "            vi, vj, vk = T.axis.remap(\"SSR\", [i, j, k])\n"
    "            T.reads(A[vi, vk], B[vk, vj])\n"
    "            T.writes(C[vi, vj])\n"
    "            with T.init():\n"
    "                C[vi, vj] = T.float32(0)\n"
    "            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]\n";

static const char SRC_MULTI[] =
    "# from tvm.script import tir as T\n"
    "\n"
    "@T.prim_func\n"
    "def main(X: T.Buffer((128,), \"float32\"), B: T.Buffer((128,), \"float32\"), C: T.Buffer((128,), \"float32\")):\n"
    "    # with T.block(\"root\"):\n"
    "    A = T.alloc_buffer((128,))\n"
    "    for i in range(8):\n"
    "        for j in range(16):\n"
    "            with T.block(\"A\"):\n"
    "                vi = T.axis.spatial(128, i * 16 + j)\n"
    "                T.reads(X[vi])\n"
    "                T.writes(A[vi])\n"
    "                A[vi] = X[vi] * T.float32(2)\n"
    "        for j in range(16):\n"
    "            with T.block(\"B\"):\n"
    "                vi = T.axis.spatial(128, i * 16 + j)\n"
    "                T.reads(A[vi])\n"
    "                T.writes(B[vi])\n"
    "                B[vi] = A[vi] + T.float32(1)\n"
    "    for i in range(128):\n"
    "        with T.block(\"C\"):\n"
    "            vi = T.axis.spatial(128, i)\n"
    "            T.reads(A[vi])\n"
    "            T.writes(C[vi])\n"
    "            C[vi] = A[vi]\n";

static const char SRC_SCOPE[] =
    "# from tvm.script import tir as T\n"
    "\n"
    "@T.prim_func\n"
    "def main(B: T.Buffer((64, 64), \"float32\"), C: T.Buffer((64, 64), \"float32\")):\n"
    "    # with T.block(\"root\"):\n"
    "    A = T.alloc_buffer((64, 64))\n"
    "    for i0, j0 in T.grid(4, 4):\n"
    "        with T.block(\"scope\"):\n"
    "            i, j = T.axis.remap(\"SS\", [i0, j0])\n"
    "            T.reads(B[i * 16:i * 16 + 16, j * 16:j * 16 + 16], A[i * 16:i * 16 + 16, j * 16:j * 16 + 16])\n"
    "            T.writes(A[i * 16:i * 16 + 16, j * 16:j * 16 + 16], C[i * 16:i * 16 + 16, j * 16:j * 16 + 16])\n"
    "            for x, y in T.grid(16, 16):\n"
    "                with T.block(\"A\"):\n"
    "                    vi = T.axis.spatial(64, i * 16 + x)\n"
    "                    vj = T.axis.spatial(64, j * 16 + y)\n"
    "                    T.reads(B[vi, vj])\n"
    "                    T.writes(A[vi, vj])\n"
    "                    A[vi, vj] = B[vi, vj] * T.float32(3)\n"
    "            for x, y in T.grid(16, 16):\n"
    "                with T.block(\"B\"):\n"
    "                    vi = T.axis.spatial(64, i * 16 + x)\n"
    "                    vj = T.axis.spatial(64, j * 16 + y)\n"
    "                    T.reads(A[vi, vj])\n"
    "                    T.writes(C[vi, vj])\n"
    "                    C[vi, vj] = A[vi, vj] + T.float32(1)\n";

static const char SRC_TWOWRITERS[] =
    "# from tvm.script import tir as T\n"
    "\n"
    "@T.prim_func\n"
    "def main(X: T.Buffer((64,), \"float32\"), Y: T.Buffer((64,), \"float32\")):\n"
    "    # with T.block(\"root\"):\n"
    "    A = T.alloc_buffer((64,))\n"
    "    for i in range(64):\n"
    "        with T.block(\"A0\"):\n"
    "            vi = T.axis.spatial(64, i)\n"
    "            T.reads(X[vi])\n"
    "            T.writes(A[vi])\n"
    "            A[vi] = X[vi]\n"
    "    for i in range(64):\n"
    "        with T.block(\"A1\"):\n"
    "            vi = T.axis.spatial(64, i)\n"
    "            T.reads(A[vi])\n"
    "            T.writes(A[vi])\n"
    "            A[vi] = A[vi] + T.float32(1)\n"
    "    for i in range(64):\n"
    "        with T.block(\"B\"):\n"
    "            vi = T.axis.spatial(64, i)\n"
    "            T.reads(A[vi])\n"
    "            T.writes(Y[vi])\n"
    "            Y[vi] = A[vi]\n";

static const char EXP_MM_CR[] =
    "# from tvm.script import tir as T\n"
    "\n"
    "@T.prim_func\n"
    "def main(A: T.Buffer((32, 32), \"float32\"), B: T.Buffer((32, 32), \"float32\"), C: T.Buffer((32, 32), \"float32\")):\n"
    "    # with T.block(\"root\"):\n"
    "    A_shared = T.alloc_buffer((32, 32), scope=\"shared\")\n"
    "    for ax0, ax1 in T.grid(32, 32):\n"
    "        with T.block(\"A_shared\"):\n"
    "            v0, v1 = T.axis.remap(\"SS\", [ax0, ax1])\n"
    "            T.reads(A[v0, v1])\n"
    "            T.writes(A_shared[v0, v1])\n"
    "            A_shared[v0, v1] = A[v0, v1]\n"
    "    for i, j, k in T.grid(32, 32, 32):\n"
    "        with T.block(\"C\"):\n"
    "            vi, vj, vk = T.axis.remap(\"SSR\", [i, j, k])\n"
    "            T.reads(A_shared[vi, vk], B[vk, vj])\n"
    "            T.writes(C[vi, vj])\n"
    "            with T.init():\n"
    "                C[vi, vj] = T.float32(0)\n"
    "            C[vi, vj] = C[vi, vj] + A_shared[vi, vk] * B[vk, vj]\n";

static const char EXP_MM_CR2[] =
    "# from tvm.script import tir as T\n"
    "\n"
    "@T.prim_func\n"
    "def main(A: T.Buffer((32, 32), \"float32\"), B: T.Buffer((32, 32), \"float32\"), C: T.Buffer((32, 32), \"float32\")):\n"
    "    # with T.block(\"root\"):\n"
    "    A_shared = T.alloc_buffer((32, 32), scope=\"shared\")\n"
    "    B_local = T.alloc_buffer((32, 32), scope=\"local\")\n"
    "    for ax0, ax1 in T.grid(32, 32):\n"
    "        with T.block(\"B_local\"):\n"
    "            v0, v1 = T.axis.remap(\"SS\", [ax0, ax1])\n"
    "            T.reads(B[v0, v1])\n"
    "            T.writes(B_local[v0, v1])\n"
    "            B_local[v0, v1] = B[v0, v1]\n"
    "    for ax0, ax1 in T.grid(32, 32):\n"
    "        with T.block(\"A_shared\"):\n"
    "            v0, v1 = T.axis.remap(\"SS\", [ax0, ax1])\n"
    "            T.reads(A[v0, v1])\n"
    "            T.writes(A_shared[v0, v1])\n"
    "            A_shared[v0, v1] = A[v0, v1]\n"
    "    for i, j, k in T.grid(32, 32, 32):\n"
    "        with T.block(\"C\"):\n"
    "            vi, vj, vk = T.axis.remap(\"SSR\", [i, j, k])\n"
    "            T.reads(A_shared[vi, vk], B_local[vk, vj])\n"
    "            T.writes(C[vi, vj])\n"
    "            with T.init():\n"
    "                C[vi, vj] = T.float32(0)\n"
    "            C[vi, vj] = C[vi, vj] + A_shared[vi, vk] * B_local[vk, vj]\n";

static const char EXP_MM_CW[] =
    "# from tvm.script import tir as T\n"
    "\n"
    "@T.prim_func\n"
    "def main(A: T.Buffer((32, 32), \"float32\"), B: T.Buffer((32, 32), \"float32\"), C: T.Buffer((32, 32), \"float32\")):\n"
    "    # with T.block(\"root\"):\n"
    "    C_local = T.alloc_buffer((32, 32), scope=\"local\")\n"
    "    for i, j, k in T.grid(32, 32, 32):\n"
    "        with T.block(\"C\"):\n"
    "            vi, vj, vk = T.axis.remap(\"SSR\", [i, j, k])\n"
    "            T.reads(A[vi, vk], B[vk, vj])\n"
    "            T.writes(C_local[vi, vj])\n"
    "            with T.init():\n"
    "                C_local[vi, vj] = T.float32(0)\n"
    "            C_local[vi, vj] = C_local[vi, vj] + A[vi, vk] * B[vk, vj]\n"
    "    for ax0, ax1 in T.grid(32, 32):\n"
    "        with T.block(\"C_local\"):\n"
    "            v0, v1 = T.axis.remap(\"SS\", [ax0, ax1])\n"
    "            T.reads(C_local[v0, v1])\n"
    "            T.writes(C[v0, v1])\n"
    "            C[v0, v1] = C_local[v0, v1]\n";

static const char EXP_MM_GPU[] =
    "# from tvm.script import tir as T\n"
    "\n"
    "@T.prim_func\n"
    "def main(A: T.Buffer((32, 32), \"float32\"), B: T.Buffer((32, 32), \"float32\"), C: T.Buffer((32, 32), \"float32\")):\n"
    "    # with T.block(\"root\"):\n"
    "    A_shared = T.alloc_buffer((32, 32), scope=\"shared\")\n"
    "    B_shared = T.alloc_buffer((32, 32), scope=\"shared\")\n"
    "    for i_0 in T.thread_binding(4, thread=\"blockIdx.x\"):\n"
    "        for j_0 in T.thread_binding(4, thread=\"blockIdx.y\"):\n"
    "            for ax0, ax1 in T.grid(8, 32):\n"
    "                with T.block(\"A_shared\"):\n"
    "                    v0 = T.axis.spatial(32, i_0 * 8 + ax0)\n"
    "                    v1 = T.axis.spatial(32, ax1)\n"
    "                    T.reads(A[v0, v1])\n"
    "                    T.writes(A_shared[v0, v1])\n"
    "                    A_shared[v0, v1] = A[v0, v1]\n"
    "            for ax0, ax1 in T.grid(32, 8):\n"
    "                with T.block(\"B_shared\"):\n"
    "                    v0 = T.axis.spatial(32, ax0)\n"
    "                    v1 = T.axis.spatial(32, j_0 * 8 + ax1)\n"
    "                    T.reads(B[v0, v1])\n"
    "                    T.writes(B_shared[v0, v1])\n"
    "                    B_shared[v0, v1] = B[v0, v1]\n"
    "            for i_1 in T.thread_binding(8, thread=\"threadIdx.x\"):\n"
    "                for j_1 in T.thread_binding(8, thread=\"threadIdx.y\"):\n"
    "                    for k in range(32):\n"
    "                        with T.block(\"C\"):\n"
    "                            vi = T.axis.spatial(32, i_0 * 8 + i_1)\n"
    "                            vj = T.axis.spatial(32, j_0 * 8 + j_1)\n"
    "                            vk = T.axis.reduce(32, k)\n"
    "                            T.reads(A_shared[vi, vk], B_shared[vk, vj])\n"
    "                            T.writes(C[vi, vj])\n"
    "                            with T.init():\n"
    "                                C[vi, vj] = T.float32(0)\n"
    "                            C[vi, vj] = C[vi, vj] + A_shared[vi, vk] * B_shared[vk, vj]\n";

static const char EXP_MULTI_CR[] =
    "# from tvm.script import tir as T\n"
    "\n"
    "@T.prim_func\n"
    "def main(X: T.Buffer((128,), \"float32\"), B: T.Buffer((128,), \"float32\"), C: T.Buffer((128,), \"float32\")):\n"
    "    # with T.block(\"root\"):\n"
    "    A = T.alloc_buffer((128,))\n"
    "    A_shared = T.alloc_buffer((128,), scope=\"shared\")\n"
    "    for i in range(8):\n"
    "        for j in range(16):\n"
    "            with T.block(\"A\"):\n"
    "                vi = T.axis.spatial(128, i * 16 + j)\n"
    "                T.reads(X[vi])\n"
    "                T.writes(A[vi])\n"
    "                A[vi] = X[vi] * T.float32(2)\n"
    "        for ax0 in range(16):\n"
    "            with T.block(\"A_shared\"):\n"
    "                v0 = T.axis.spatial(128, i * 16 + ax0)\n"
    "                T.reads(A[v0])\n"
    "                T.writes(A_shared[v0])\n"
    "                A_shared[v0] = A[v0]\n"
    "        for j in range(16):\n"
    "            with T.block(\"B\"):\n"
    "                vi = T.axis.spatial(128, i * 16 + j)\n"
    "                T.reads(A_shared[vi])\n"
    "                T.writes(B[vi])\n"
    "                B[vi] = A_shared[vi] + T.float32(1)\n"
    "    for i in range(128):\n"
    "        with T.block(\"C\"):\n"
    "            vi = T.axis.spatial(128, i)\n"
    "            T.reads(A_shared[vi])\n"
    "            T.writes(C[vi])\n"
    "            C[vi] = A_shared[vi]\n";

static const char EXP_MULTI_CR_CONS[] =
    "# from tvm.script import tir as T\n"
    "\n"
    "@T.prim_func\n"
    "def main(X: T.Buffer((128,), \"float32\"), B: T.Buffer((128,), \"float32\"), C: T.Buffer((128,), \"float32\")):\n"
    "    # with T.block(\"root\"):\n"
    "    A = T.alloc_buffer((128,))\n"
    "    A_shared = T.alloc_buffer((128,), scope=\"shared\")\n"
    "    for i in range(8):\n"
    "        for j in range(16):\n"
    "            with T.block(\"A\"):\n"
    "                vi = T.axis.spatial(128, i * 16 + j)\n"
    "                T.reads(X[vi])\n"
    "                T.writes(A[vi])\n"
    "                A[vi] = X[vi] * T.float32(2)\n"
    "        for j in range(16):\n"
    "            with T.block(\"B\"):\n"
    "                vi = T.axis.spatial(128, i * 16 + j)\n"
    "                T.reads(A[vi])\n"
    "                T.writes(B[vi])\n"
    "                B[vi] = A[vi] + T.float32(1)\n"
    "    for ax0 in range(128):\n"
    "        with T.block(\"A_shared\"):\n"
    "            v0 = T.axis.spatial(128, ax0)\n"
    "            T.reads(A[v0])\n"
    "            T.writes(A_shared[v0])\n"
    "            A_shared[v0] = A[v0]\n"
    "    for i in range(128):\n"
    "        with T.block(\"C\"):\n"
    "            vi = T.axis.spatial(128, i)\n"
    "            T.reads(A_shared[vi])\n"
    "            T.writes(C[vi])\n"
    "            C[vi] = A_shared[vi]\n";

static const char EXP_MULTI_CW[] =
    "# from tvm.script import tir as T\n"
    "\n"
    "@T.prim_func\n"
    "def main(X: T.Buffer((128,), \"float32\"), B: T.Buffer((128,), \"float32\"), C: T.Buffer((128,), \"float32\")):\n"
    "    # with T.block(\"root\"):\n"
    "    A = T.alloc_buffer((128,))\n"
    "    A_local = T.alloc_buffer((128,), scope=\"local\")\n"
    "    for i in range(8):\n"
    "        for j in range(16):\n"
    "            with T.block(\"A\"):\n"
    "                vi = T.axis.spatial(128, i * 16 + j)\n"
    "                T.reads(X[vi])\n"
    "                T.writes(A_local[vi])\n"
    "                A_local[vi] = X[vi] * T.float32(2)\n"
    "        for ax0 in range(16):\n"
    "            with T.block(\"A_local\"):\n"
    "                v0 = T.axis.spatial(128, i * 16 + ax0)\n"
    "                T.reads(A_local[v0])\n"
    "                T.writes(A[v0])\n"
    "                A[v0] = A_local[v0]\n"
    "        for j in range(16):\n"
    "            with T.block(\"B\"):\n"
    "                vi = T.axis.spatial(128, i * 16 + j)\n"
    "                T.reads(A[vi])\n"
    "                T.writes(B[vi])\n"
    "                B[vi] = A[vi] + T.float32(1)\n"
    "    for i in range(128):\n"
    "        with T.block(\"C\"):\n"
    "            vi = T.axis.spatial(128, i)\n"
    "            T.reads(A[vi])\n"
    "            T.writes(C[vi])\n"
    "            C[vi] = A[vi]\n";

static const char EXP_MULTI_CW_CONS[] =
    "# from tvm.script import tir as T\n"
    "\n"
    "@T.prim_func\n"
    "def main(X: T.Buffer((128,), \"float32\"), B: T.Buffer((128,), \"float32\"), C: T.Buffer((128,), \"float32\")):\n"
    "    # with T.block(\"root\"):\n"
    "    A = T.alloc_buffer((128,))\n"
    "    A_local = T.alloc_buffer((128,), scope=\"local\")\n"
    "    for i in range(8):\n"
    "        for j in range(16):\n"
    "            with T.block(\"A\"):\n"
    "                vi = T.axis.spatial(128, i * 16 + j)\n"
    "                T.reads(X[vi])\n"
    "                T.writes(A_local[vi])\n"
    "                A_local[vi] = X[vi] * T.float32(2)\n"
    "        for ax0 in range(16):\n"
    "            with T.block(\"A_local\"):\n"
    "                v0 = T.axis.spatial(128, i * 16 + ax0)\n"
    "                T.reads(A_local[v0])\n"
    "                T.writes(A[v0])\n"
    "                A[v0] = A_local[v0]\n"
    "        for j in range(16):\n"
    "            with T.block(\"B\"):\n"
    "                vi = T.axis.spatial(128, i * 16 + j)\n"
    "                T.reads(A[vi])\n"
    "                T.writes(B[vi])\n"
    "                B[vi] = A[vi] + T.float32(1)\n"
    "    for i in range(128):\n"
    "        with T.block(\"C\"):\n"
    "            vi = T.axis.spatial(128, i)\n"
    "            T.reads(A_local[vi])\n"
    "            T.writes(C[vi])\n"
    "            C[vi] = A_local[vi]\n";

static const char EXP_SCOPE_CR[] =
    "# from tvm.script import tir as T\n"
    "\n"
    "@T.prim_func\n"
    "def main(B: T.Buffer((64, 64), \"float32\"), C: T.Buffer((64, 64), \"float32\")):\n"
    "    # with T.block(\"root\"):\n"
    "    A = T.alloc_buffer((64, 64))\n"
    "    for i0, j0 in T.grid(4, 4):\n"
    "        with T.block(\"scope\"):\n"
    "            i, j = T.axis.remap(\"SS\", [i0, j0])\n"
    "            T.reads(B[i * 16:i * 16 + 16, j * 16:j * 16 + 16], A[i * 16:i * 16 + 16, j * 16:j * 16 + 16])\n"
    "            T.writes(A[i * 16:i * 16 + 16, j * 16:j * 16 + 16], C[i * 16:i * 16 + 16, j * 16:j * 16 + 16])\n"
    "            A_local = T.alloc_buffer((16, 16), scope=\"local\")\n"
    "            for x, y in T.grid(16, 16):\n"
    "                with T.block(\"A\"):\n"
    "                    vi = T.axis.spatial(64, i * 16 + x)\n"
    "                    vj = T.axis.spatial(64, j * 16 + y)\n"
    "                    T.reads(B[vi, vj])\n"
    "                    T.writes(A[vi, vj])\n"
    "                    A[vi, vj] = B[vi, vj] * T.float32(3)\n"
    "            for ax0, ax1 in T.grid(16, 16):\n"
    "                with T.block(\"A_local\"):\n"
    "                    v0, v1 = T.axis.remap(\"SS\", [ax0, ax1])\n"
    "                    T.reads(A[i * 16 + v0, j * 16 + v1])\n"
    "                    T.writes(A_local[v0, v1])\n"
    "                    A_local[v0, v1] = A[i * 16 + v0, j * 16 + v1]\n"
    "            for x, y in T.grid(16, 16):\n"
    "                with T.block(\"B\"):\n"
    "                    vi = T.axis.spatial(64, i * 16 + x)\n"
    "                    vj = T.axis.spatial(64, j * 16 + y)\n"
    "                    T.reads(A_local[vi - i * 16, vj - j * 16])\n"
    "                    T.writes(C[vi, vj])\n"
    "                    C[vi, vj] = A_local[vi - i * 16, vj - j * 16] + T.float32(1)\n";

static const char EXP_SCOPE_CW[] =
    "# from tvm.script import tir as T\n"
    "\n"
    "@T.prim_func\n"
    "def main(B: T.Buffer((64, 64), \"float32\"), C: T.Buffer((64, 64), \"float32\")):\n"
    "    # with T.block(\"root\"):\n"
    "    A = T.alloc_buffer((64, 64))\n"
    "    for i0, j0 in T.grid(4, 4):\n"
    "        with T.block(\"scope\"):\n"
    "            i, j = T.axis.remap(\"SS\", [i0, j0])\n"
    "            T.reads(B[i * 16:i * 16 + 16, j * 16:j * 16 + 16], A[i * 16:i * 16 + 16, j * 16:j * 16 + 16])\n"
    "            T.writes(A[i * 16:i * 16 + 16, j * 16:j * 16 + 16], C[i * 16:i * 16 + 16, j * 16:j * 16 + 16])\n"
    "            A_local = T.alloc_buffer((16, 16), scope=\"local\")\n"
    "            for x, y in T.grid(16, 16):\n"
    "                with T.block(\"A\"):\n"
    "                    vi = T.axis.spatial(64, i * 16 + x)\n"
    "                    vj = T.axis.spatial(64, j * 16 + y)\n"
    "                    T.reads(B[vi, vj])\n"
    "                    T.writes(A_local[vi - i * 16, vj - j * 16])\n"
    "                    A_local[vi - i * 16, vj - j * 16] = B[vi, vj] * T.float32(3)\n"
    "            for ax0, ax1 in T.grid(16, 16):\n"
    "                with T.block(\"A_local\"):\n"
    "                    v0, v1 = T.axis.remap(\"SS\", [ax0, ax1])\n"
    "                    T.reads(A_local[v0, v1])\n"
    "                    T.writes(A[i * 16 + v0, j * 16 + v1])\n"
    "                    A[i * 16 + v0, j * 16 + v1] = A_local[v0, v1]\n"
    "            for x, y in T.grid(16, 16):\n"
    "                with T.block(\"B\"):\n"
    "                    vi = T.axis.spatial(64, i * 16 + x)\n"
    "                    vj = T.axis.spatial(64, j * 16 + y)\n"
    "                    T.reads(A[vi, vj])\n"
    "                    T.writes(C[vi, vj])\n"
    "                    C[vi, vj] = A[vi, vj] + T.float32(1)\n";


/* Splits by factors that do not divide the extent guard the block with a
 * T.where; the cache must hold the buffer, not the overshooting tiles. */
static const char SRC_MM16[] =
    "# from tvm.script import tir as T\n"
    "\n"
    "@T.prim_func\n"
    "def main(A: T.Buffer((16, 16), \"float32\"), B: T.Buffer((16, 16), \"float32\"), C: T.Buffer((16, 16), \"float32\")):\n"
    "    # with T.block(\"root\"):\n"
    "    for i, j, k in T.grid(16, 16, 16):\n"
    "        with T.block(\"C\"):\n"
    "            vi, vj, vk = T.axis.remap(\"SSR\", [i, j, k])\n"
    "            T.reads(A[vi, vk], B[vk, vj])\n"
    "            T.writes(C[vi, vj])\n"
    "            with T.init():\n"
    "                C[vi, vj] = T.float32(0)\n"
    "            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]\n";

static const char SRC_TAIL[] =
    "# from tvm.script import tir as T\n"
    "\n"
    "@T.prim_func\n"
    "def main(X: T.Buffer((16,), \"float32\"), C: T.Buffer((16,), \"float32\")):\n"
    "    # with T.block(\"root\"):\n"
    "    A = T.alloc_buffer((16,))\n"
    "    for i in range(16):\n"
    "        with T.block(\"A\"):\n"
    "            vi = T.axis.spatial(16, i)\n"
    "            T.reads(X[vi])\n"
    "            T.writes(A[vi])\n"
    "            A[vi] = X[vi] * T.float32(2)\n"
    "    for i in range(16):\n"
    "        with T.block(\"C\"):\n"
    "            vi = T.axis.spatial(16, i)\n"
    "            T.reads(A[vi])\n"
    "            T.writes(C[vi])\n"
    "            C[vi] = A[vi] + T.float32(1)\n";

static const char EXP_MM16_SPLIT_CW[] =
    "# from tvm.script import tir as T\n"
    "\n"
    "@T.prim_func\n"
    "def main(A: T.Buffer((16, 16), \"float32\"), B: T.Buffer((16, 16), \"float32\"), C: T.Buffer((16, 16), \"float32\")):\n"
    "    # with T.block(\"root\"):\n"
    "    C_local = T.alloc_buffer((16, 16), scope=\"local\")\n"
    "    for i, j_0, j_1, k in T.grid(16, 3, 6, 16):\n"
    "        with T.block(\"C\"):\n"
    "            vi = T.axis.spatial(16, i)\n"
    "            vj = T.axis.spatial(16, j_0 * 6 + j_1)\n"
    "            vk = T.axis.reduce(16, k)\n"
    "            T.where(j_0 * 6 + j_1 < 16)\n"
    "            T.reads(A[vi, vk], B[vk, vj])\n"
    "            T.writes(C_local[vi, vj])\n"
    "            with T.init():\n"
    "                C_local[vi, vj] = T.float32(0)\n"
    "            C_local[vi, vj] = C_local[vi, vj] + A[vi, vk] * B[vk, vj]\n"
    "    for ax0, ax1 in T.grid(16, 16):\n"
    "        with T.block(\"C_local\"):\n"
    "            v0, v1 = T.axis.remap(\"SS\", [ax0, ax1])\n"
    "            T.reads(C_local[v0, v1])\n"
    "            T.writes(C[v0, v1])\n"
    "            C[v0, v1] = C_local[v0, v1]\n";

static const char EXP_TAIL_CACHES[] =
    "# from tvm.script import tir as T\n"
    "\n"
    "@T.prim_func\n"
    "def main(X: T.Buffer((16,), \"float32\"), C: T.Buffer((16,), \"float32\")):\n"
    "    # with T.block(\"root\"):\n"
    "    A = T.alloc_buffer((16,))\n"
    "    A_local = T.alloc_buffer((16,), scope=\"local\")\n"
    "    A_shared = T.alloc_buffer((16,), scope=\"shared\")\n"
    "    for i_0 in range(6):\n"
    "        for i_1 in range(3):\n"
    "            with T.block(\"A\"):\n"
    "                vi = T.axis.spatial(16, i_0 * 3 + i_1)\n"
    "                T.where(i_0 * 3 + i_1 < 16)\n"
    "                T.reads(X[vi])\n"
    "                T.writes(A_local[vi])\n"
    "                A_local[vi] = X[vi] * T.float32(2)\n"
    "        for ax0 in range(3):\n"
    "            with T.block(\"A_local\"):\n"
    "                v0 = T.axis.spatial(16, i_0 * 3 + ax0)\n"
    "                T.where(i_0 * 3 + ax0 < 16)\n"
    "                T.reads(A_local[v0])\n"
    "                T.writes(A[v0])\n"
    "                A[v0] = A_local[v0]\n"
    "        for ax0 in range(3):\n"
    "            with T.block(\"A_shared\"):\n"
    "                v0 = T.axis.spatial(16, i_0 * 3 + ax0)\n"
    "                T.where(i_0 * 3 + ax0 < 16)\n"
    "                T.reads(A[v0])\n"
    "                T.writes(A_shared[v0])\n"
    "                A_shared[v0] = A[v0]\n"
    "        for ax0 in range(3):\n"
    "            with T.block(\"C\"):\n"
    "                vi = T.axis.spatial(16, i_0 * 3 + ax0)\n"
    "                T.where(i_0 * 3 + ax0 < 16)\n"
    "                T.reads(A_shared[vi])\n"
    "                T.writes(C[vi])\n"
    "                C[vi] = A_shared[vi] + T.float32(1)\n";

/* A window over padding: B is computed at C's loop for rows i - 1 to i + 1,
 * guarded at both edges. */
static const char SRC_WINDOW[] =
    "# from tvm.script import tir as T\n"
    "\n"
    "@T.prim_func\n"
    "def main(X: T.Buffer((6,), \"float32\"), C: T.Buffer((6,), \"float32\")):\n"
    "    # with T.block(\"root\"):\n"
    "    B = T.alloc_buffer((6,))\n"
    "    for i in range(6):\n"
    "        with T.block(\"B\"):\n"
    "            vi = T.axis.spatial(6, i)\n"
    "            T.reads(X[vi])\n"
    "            T.writes(B[vi])\n"
    "            B[vi] = X[vi] * T.float32(2)\n"
    "    for i, r in T.grid(6, 3):\n"
    "        with T.block(\"C\"):\n"
    "            vi, vr = T.axis.remap(\"SR\", [i, r])\n"
    "            T.reads(B[vi + vr - 1])\n"
    "            T.writes(C[vi])\n"
    "            with T.init():\n"
    "                C[vi] = T.float32(0)\n"
    "            C[vi] = C[vi] + T.if_then_else(1 <= vi + vr and vi + vr < 7, B[vi + vr - 1], T.float32(0))\n";

static const char EXP_WINDOW_CW[] =
    "# from tvm.script import tir as T\n"
    "\n"
    "@T.prim_func\n"
    "def main(X: T.Buffer((6,), \"float32\"), C: T.Buffer((6,), \"float32\")):\n"
    "    # with T.block(\"root\"):\n"
    "    B = T.alloc_buffer((6,))\n"
    "    B_local = T.alloc_buffer((6,), scope=\"local\")\n"
    "    for i in range(6):\n"
    "        for ax0 in range(3):\n"
    "            with T.block(\"B\"):\n"
    "                vi = T.axis.spatial(6, i - 1 + ax0)\n"
    "                T.where(i + ax0 >= 1 and i + ax0 < 7)\n"
    "                T.reads(X[vi])\n"
    "                T.writes(B_local[vi])\n"
    "                B_local[vi] = X[vi] * T.float32(2)\n"
    "        for ax0 in range(3):\n"
    "            with T.block(\"B_local\"):\n"
    "                v0 = T.axis.spatial(6, i - 1 + ax0)\n"
    "                T.where(i + ax0 >= 1 and i + ax0 < 7)\n"
    "                T.reads(B_local[v0])\n"
    "                T.writes(B[v0])\n"
    "                B[v0] = B_local[v0]\n"
    "        for r in range(3):\n"
    "            with T.block(\"C\"):\n"
    "                vi, vr = T.axis.remap(\"SR\", [i, r])\n"
    "                T.reads(B[vi + vr - 1])\n"
    "                T.writes(C[vi])\n"
    "                with T.init():\n"
    "                    C[vi] = T.float32(0)\n"
    "                C[vi] = C[vi] + T.if_then_else(1 <= vi + vr and vi + vr < 7, B[vi + vr - 1], T.float32(0))\n";

/* ---- helpers ------------------------------------------------------------ */

static sch_rv_t block_rv(sch_t *sch, const char *name) {
  sch_rv_t rv = SCH_RV_NONE;
  assert_int_equal(sch_get_block(sch, &rv, name), MLC_OK);
  return rv;
}

/* The last recorded instruction. */
static const sch_inst_t *last_inst(const sch_t *sch) {
  const sch_trace_t *t = sch_get_trace(sch);
  assert_true(t->n > 0);
  return &t->insts[t->n - 1];
}

/* A failing call leaves the program as it was and records nothing. */
static void assert_rejected(sch_t *sch, int rc, const char *needle, const char *src) {
  int n = sch_get_trace(sch)->n;
  st_assert_fails(sch, rc, needle, src);
  assert_int_equal(sch_get_trace(sch)->n, n);
}

/* The schedule's trace, replayed on a fresh schedule of src, gives the same
 * program. */
static void assert_trace_replays(const sch_t *sch, const char *src) {
  sch_t *fresh = st_schedule(src);
  assert_int_equal(sch_trace_apply(fresh, sch_get_trace(sch), true), MLC_OK);
  char *want = tir_print_func(sch_func(sch));
  st_assert_script(sch_func(fresh), want);
  mlc_free(want);
  sch_free(fresh);
}

/* ---- cache_read --------------------------------------------------------- */

static void test_cache_read_of_an_input_copies_it_at_the_start_of_the_scope(void **state) {
  (void)state;
  sch_t *sch = st_schedule(SRC_MATMUL);
  sch_rv_t c = block_rv(sch, "C"), stage = SCH_RV_NONE;
  assert_int_equal(sch_cache_read(sch, &stage, c, 0, "shared", NULL, 0), MLC_OK);
  st_check(sch, SRC_MATMUL, EXP_MM_CR);
  tir_block_t *b = NULL;
  assert_int_equal(sch_get_block_node(sch, stage, &b), MLC_OK);
  assert_string_equal(b->name, "A_shared");
  assert_trace_replays(sch, SRC_MATMUL);
  sch_free(sch);
}

static void test_cache_read_of_two_inputs_puts_the_later_copy_first(void **state) {
  (void)state;
  sch_t *sch = st_schedule(SRC_MATMUL);
  sch_rv_t c = block_rv(sch, "C"), stage = SCH_RV_NONE;
  assert_int_equal(sch_cache_read(sch, &stage, c, 0, "shared", NULL, 0), MLC_OK);
  assert_int_equal(sch_cache_read(sch, &stage, c, 1, "local", NULL, 0), MLC_OK);
  st_check(sch, SRC_MATMUL, EXP_MM_CR2);
  sch_free(sch);
}

static void test_cache_read_inside_a_shared_loop_caches_the_whole_buffer(void **state) {
  (void)state;
  /* A is produced and consumed under loop i: the copy goes between them,
   * copies one iteration's 16 elements, and every consumer reads it. */
  sch_t *sch = st_schedule(SRC_MULTI);
  sch_rv_t stage = SCH_RV_NONE;
  assert_int_equal(sch_cache_read(sch, &stage, block_rv(sch, "B"), 0, "shared", NULL, 0), MLC_OK);
  st_check(sch, SRC_MULTI, EXP_MULTI_CR);
  sch_free(sch);
}

static void test_cache_read_with_consumers_redirects_only_those(void **state) {
  (void)state;
  sch_t *sch = st_schedule(SRC_MULTI);
  sch_rv_t c = block_rv(sch, "C"), stage = SCH_RV_NONE;
  assert_int_equal(sch_cache_read(sch, &stage, c, 0, "shared", &c, 1), MLC_OK);
  st_check(sch, SRC_MULTI, EXP_MULTI_CR_CONS);
  /* Recorded as TVM lays it out: block, [consumers] | index, scope | block. */
  const sch_inst_t *inst = last_inst(sch);
  if (inst->kind) assert_string_equal(inst->kind->name, "CacheRead");
  assert_int_equal(inst->ninputs, 2);
  assert_int_equal(inst->inputs[0].kind, SCH_ARG_RV);
  assert_int_equal(inst->inputs[0].u.rv, c);
  assert_int_equal(inst->inputs[1].kind, SCH_ARG_LIST);
  assert_int_equal(inst->inputs[1].u.list.n, 1);
  assert_int_equal(inst->inputs[1].u.list.items[0].u.rv, c);
  assert_int_equal(inst->nattrs, 2);
  assert_int_equal(inst->attrs[0].u.i, 0);
  assert_string_equal(inst->attrs[1].u.s, "shared");
  assert_int_equal(inst->noutputs, 1);
  assert_int_equal(inst->outputs[0], stage);
  assert_trace_replays(sch, SRC_MULTI);
  sch_free(sch);
}

static void test_cache_read_under_a_scope_block_caches_only_its_region(void **state) {
  (void)state;
  /* At the level of a non-root scope the cache is the scope's 16x16 tile and
   * accesses are shifted by the tile's start (TVM's cache_read_under_scope). */
  sch_t *sch = st_schedule(SRC_SCOPE);
  sch_rv_t stage = SCH_RV_NONE;
  assert_int_equal(sch_cache_read(sch, &stage, block_rv(sch, "B"), 0, "local", NULL, 0), MLC_OK);
  st_check(sch, SRC_SCOPE, EXP_SCOPE_CR);
  sch_free(sch);
}

static void test_cache_read_into_shared_tiles_a_gpu_matmul(void **state) {
  (void)state;
  /* The classic GPU schedule: tile i and j by 8, bind the tiles to blocks
   * and threads, stage A and B in shared memory per thread block. */
  sch_t *sch = st_schedule(SRC_MATMUL);
  sch_rv_t c = block_rv(sch, "C"), as = SCH_RV_NONE, bs = SCH_RV_NONE;
  const sch_rv_t *loops = NULL, *is = NULL, *js = NULL;
  int n = 0;
  assert_int_equal(sch_get_loops(sch, &loops, &n, c), MLC_OK);
  sch_rv_t i = loops[0], j = loops[1], k = loops[2];
  sch_arg_t factors[2] = {sch_arg_none(), sch_arg_int(8)};
  assert_int_equal(sch_split(sch, &is, i, factors, 2, true), MLC_OK);
  sch_rv_t i0 = is[0], i1 = is[1];
  assert_int_equal(sch_split(sch, &js, j, factors, 2, true), MLC_OK);
  sch_rv_t order[5] = {i0, js[0], i1, js[1], k};
  assert_int_equal(sch_reorder(sch, order, 5), MLC_OK);
  assert_int_equal(sch_bind(sch, i0, "blockIdx.x"), MLC_OK);
  assert_int_equal(sch_bind(sch, js[0], "blockIdx.y"), MLC_OK);
  assert_int_equal(sch_bind(sch, i1, "threadIdx.x"), MLC_OK);
  assert_int_equal(sch_bind(sch, js[1], "threadIdx.y"), MLC_OK);
  assert_int_equal(sch_cache_read(sch, &as, c, 0, "shared", NULL, 0), MLC_OK);
  assert_int_equal(sch_cache_read(sch, &bs, c, 1, "shared", NULL, 0), MLC_OK);
  assert_int_equal(sch_compute_at(sch, as, js[0], false, -1), MLC_OK);
  assert_int_equal(sch_compute_at(sch, bs, js[0], false, -1), MLC_OK);
  st_check(sch, SRC_MATMUL, EXP_MM_GPU);
  assert_trace_replays(sch, SRC_MATMUL);
  sch_free(sch);
}

static void test_cache_read_rejects_a_bad_buffer_index(void **state) {
  (void)state;
  sch_t *sch = st_schedule(SRC_MATMUL);
  sch_rv_t out = SCH_RV_NONE;
  assert_rejected(sch, sch_cache_read(sch, &out, block_rv(sch, "C"), 2, "shared", NULL, 0),
                  "cache_read: read buffer index 2 is out of range for block C, which reads 2 buffers", SRC_MATMUL);
  assert_rejected(sch, sch_cache_read(sch, &out, block_rv(sch, "C"), -1, "shared", NULL, 0),
                  "read buffer index -1 is out of range", SRC_MATMUL);
  sch_free(sch);
}

static void test_cache_read_rejects_an_unknown_scope(void **state) {
  (void)state;
  sch_t *sch = st_schedule(SRC_MATMUL);
  sch_rv_t out = SCH_RV_NONE;
  assert_rejected(sch, sch_cache_read(sch, &out, block_rv(sch, "C"), 0, "shm", NULL, 0),
                  "cache_read: invalid storage scope \"shm\"", SRC_MATMUL);
  assert_rejected(sch, sch_cache_read(sch, &out, block_rv(sch, "C"), 0, "wmma.matrix_c", NULL, 0),
                  "invalid storage scope \"wmma.matrix_c\"", SRC_MATMUL);
  /* Every scope TVM accepts works. */
  static const char *const ok[] = {"global", "shared", "shared.dyn", "local", "warp",
                                   "wmma.matrix_a", "wmma.matrix_b", "wmma.accumulator"};
  for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++)
    assert_int_equal(sch_cache_read(sch, &out, block_rv(sch, "C"), 0, ok[i], NULL, 0), MLC_OK);
  sch_free(sch);
}

static void test_cache_read_rejects_a_buffer_with_two_writers(void **state) {
  (void)state;
  sch_t *sch = st_schedule(SRC_TWOWRITERS);
  sch_rv_t out = SCH_RV_NONE;
  assert_rejected(sch, sch_cache_read(sch, &out, block_rv(sch, "B"), 0, "shared", NULL, 0),
                  "cache_read: buffer A is written by 2 blocks in the scope of block B; cache_read needs at most "
                  "one writer", SRC_TWOWRITERS);
  sch_free(sch);
}

static void test_cache_read_rejects_consumers_that_do_not_qualify(void **state) {
  (void)state;
  sch_t *sch = st_schedule(SRC_MULTI);
  sch_rv_t out = SCH_RV_NONE, a = block_rv(sch, "A");
  assert_rejected(sch, sch_cache_read(sch, &out, block_rv(sch, "B"), 0, "shared", &a, 1),
                  "cache_read: consumer block A does not read buffer A", SRC_MULTI);
  sch_free(sch);
  sch = st_schedule(SRC_SCOPE);
  sch_rv_t scope = block_rv(sch, "scope");
  assert_rejected(sch, sch_cache_read(sch, &out, block_rv(sch, "B"), 0, "local", &scope, 1),
                  "cache_read: consumer block scope is not in the scope of block B", SRC_SCOPE);
  sch_free(sch);
}

/* ---- cache_write -------------------------------------------------------- */

static void test_cache_write_of_matmul_accumulates_in_the_cache(void **state) {
  (void)state;
  sch_t *sch = st_schedule(SRC_MATMUL);
  sch_rv_t c = block_rv(sch, "C"), stage = SCH_RV_NONE;
  assert_int_equal(sch_cache_write(sch, &stage, c, 0, "local", NULL, 0), MLC_OK);
  st_check(sch, SRC_MATMUL, EXP_MM_CW);
  const sch_inst_t *inst = last_inst(sch);
  if (inst->kind) assert_string_equal(inst->kind->name, "CacheWrite");
  assert_int_equal(inst->inputs[1].kind, SCH_ARG_LIST);
  assert_int_equal(inst->inputs[1].u.list.n, 0);
  assert_string_equal(inst->attrs[1].u.s, "local");
  assert_int_equal(inst->outputs[0], stage);
  /* The new block is a block like any other: it can be cached again. */
  assert_trace_replays(sch, SRC_MATMUL);
  sch_rv_t again = SCH_RV_NONE;
  assert_int_equal(sch_cache_read(sch, &again, stage, 0, "shared", NULL, 0), MLC_OK);
  sch_free(sch);
}

static void test_cache_write_inside_a_shared_loop_writes_back_before_the_consumer(void **state) {
  (void)state;
  sch_t *sch = st_schedule(SRC_MULTI);
  sch_rv_t stage = SCH_RV_NONE;
  assert_int_equal(sch_cache_write(sch, &stage, block_rv(sch, "A"), 0, "local", NULL, 0), MLC_OK);
  st_check(sch, SRC_MULTI, EXP_MULTI_CW);
  sch_free(sch);
}

static void test_cache_write_with_consumers_lets_them_read_the_cache(void **state) {
  (void)state;
  sch_t *sch = st_schedule(SRC_MULTI);
  sch_rv_t c = block_rv(sch, "C"), stage = SCH_RV_NONE;
  assert_int_equal(sch_cache_write(sch, &stage, block_rv(sch, "A"), 0, "local", &c, 1), MLC_OK);
  st_check(sch, SRC_MULTI, EXP_MULTI_CW_CONS);
  assert_trace_replays(sch, SRC_MULTI);
  sch_free(sch);
}

static void test_cache_write_under_a_scope_block_caches_only_its_region(void **state) {
  (void)state;
  sch_t *sch = st_schedule(SRC_SCOPE);
  sch_rv_t stage = SCH_RV_NONE;
  assert_int_equal(sch_cache_write(sch, &stage, block_rv(sch, "A"), 0, "local", NULL, 0), MLC_OK);
  st_check(sch, SRC_SCOPE, EXP_SCOPE_CW);
  sch_free(sch);
}

static void test_cache_write_rejects_bad_arguments(void **state) {
  (void)state;
  sch_t *sch = st_schedule(SRC_TWOWRITERS);
  sch_rv_t out = SCH_RV_NONE;
  assert_rejected(sch, sch_cache_write(sch, &out, block_rv(sch, "B"), 1, "local", NULL, 0),
                  "cache_write: write buffer index 1 is out of range for block B, which writes 1 buffer",
                  SRC_TWOWRITERS);
  assert_rejected(sch, sch_cache_write(sch, &out, block_rv(sch, "B"), 0, "bogus", NULL, 0),
                  "cache_write: invalid storage scope \"bogus\"", SRC_TWOWRITERS);
  assert_rejected(sch, sch_cache_write(sch, &out, block_rv(sch, "A0"), 0, "local", NULL, 0),
                  "cache_write: buffer A is written by 2 blocks in the scope; cache_write needs block A0 to be its "
                  "only writer", SRC_TWOWRITERS);
  sch_rv_t a1 = block_rv(sch, "A1");
  assert_rejected(sch, sch_cache_write(sch, &out, block_rv(sch, "B"), 0, "local", &a1, 1),
                  "cache_write: consumer block A1 does not read buffer Y", SRC_TWOWRITERS);
  sch_free(sch);
}

/* ---- splits by non-dividing factors (T.where) ---------------------------- */

static sch_rv_t loop_at(sch_t *sch, sch_rv_t block, int i) {
  const sch_rv_t *loops = NULL;
  int n = 0;
  assert_int_equal(sch_get_loops(sch, &loops, &n, block), MLC_OK);
  assert_true(i < n);
  return loops[i];
}

static void test_cache_write_after_an_overshooting_split_caches_only_the_buffer(void **state) {
  (void)state;
  /* j splits into 3 x 6 = 18 > 16 under T.where(j_0 * 6 + j_1 < 16): the
   * predicate bounds the written region, so C_local is (16, 16) and the
   * write-back stays inside C (it was (16, 18) and wrote C[.., 16..17]). */
  sch_t *sch = st_schedule(SRC_MM16);
  sch_rv_t c = block_rv(sch, "C"), stage = SCH_RV_NONE;
  const sch_rv_t *parts = NULL;
  sch_arg_t factors[2] = {sch_arg_int(3), sch_arg_none()};
  assert_int_equal(sch_split(sch, &parts, loop_at(sch, c, 1), factors, 2, true), MLC_OK);
  assert_int_equal(sch_cache_write(sch, &stage, c, 0, "local", NULL, 0), MLC_OK);
  st_check(sch, SRC_MM16, EXP_MM16_SPLIT_CW);
  assert_trace_replays(sch, SRC_MM16);
  sch_free(sch);
}

static void test_cache_stages_inside_an_overshooting_tile_copy_under_a_predicate(void **state) {
  (void)state;
  /* Under loop i_0 (6 tiles of 3 over 16 elements) the last tile overshoots:
   * both copies (write-back of A_local, read into A_shared) get the guard
   * the blocks they copy for have. */
  sch_t *sch = st_schedule(SRC_TAIL);
  sch_rv_t a = block_rv(sch, "A"), c = block_rv(sch, "C"), stage = SCH_RV_NONE;
  const sch_rv_t *parts = NULL;
  sch_arg_t factors[2] = {sch_arg_none(), sch_arg_int(3)};
  assert_int_equal(sch_split(sch, &parts, loop_at(sch, a, 0), factors, 2, true), MLC_OK);
  assert_int_equal(sch_reverse_compute_at(sch, c, parts[0], true, -1), MLC_OK);
  assert_int_equal(sch_cache_write(sch, &stage, a, 0, "local", NULL, 0), MLC_OK);
  assert_int_equal(sch_cache_read(sch, &stage, c, 0, "shared", NULL, 0), MLC_OK);
  st_check(sch, SRC_TAIL, EXP_TAIL_CACHES);
  assert_trace_replays(sch, SRC_TAIL);
  sch_free(sch);
}

static void test_cache_write_inside_a_padded_window_guards_both_edges(void **state) {
  (void)state;
  /* The write-back copies rows i - 1 to i + 1 of B_local: row -1 (i = 0)
   * and row 6 (i = 5) lie outside B, and the copy says so on both sides
   * (it guarded only the upper edge and wrote B[-1]). */
  sch_t *sch = st_schedule(SRC_WINDOW);
  sch_rv_t b = block_rv(sch, "B"), c = block_rv(sch, "C"), stage = SCH_RV_NONE;
  assert_int_equal(sch_compute_at(sch, b, loop_at(sch, c, 0), true, -1), MLC_OK);
  assert_int_equal(sch_cache_write(sch, &stage, b, 0, "local", NULL, 0), MLC_OK);
  st_check(sch, SRC_WINDOW, EXP_WINDOW_CW);
  assert_trace_replays(sch, SRC_WINDOW);
  sch_free(sch);
}

static void test_cache_primitives_reject_a_stale_block(void **state) {
  (void)state;
  sch_t *sch = st_schedule(SRC_MATMUL);
  sch_rv_t out = SCH_RV_NONE;
  assert_rejected(sch, sch_cache_read(sch, &out, 99, 0, "shared", NULL, 0), "cache_read: ", SRC_MATMUL);
  assert_rejected(sch, sch_cache_write(sch, &out, 99, 0, "local", NULL, 0), "cache_write: ", SRC_MATMUL);
  sch_free(sch);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_cache_read_of_an_input_copies_it_at_the_start_of_the_scope),
      cmocka_unit_test(test_cache_read_of_two_inputs_puts_the_later_copy_first),
      cmocka_unit_test(test_cache_read_inside_a_shared_loop_caches_the_whole_buffer),
      cmocka_unit_test(test_cache_read_with_consumers_redirects_only_those),
      cmocka_unit_test(test_cache_read_under_a_scope_block_caches_only_its_region),
      cmocka_unit_test(test_cache_read_into_shared_tiles_a_gpu_matmul),
      cmocka_unit_test(test_cache_read_rejects_a_bad_buffer_index),
      cmocka_unit_test(test_cache_read_rejects_an_unknown_scope),
      cmocka_unit_test(test_cache_read_rejects_a_buffer_with_two_writers),
      cmocka_unit_test(test_cache_read_rejects_consumers_that_do_not_qualify),
      cmocka_unit_test(test_cache_write_of_matmul_accumulates_in_the_cache),
      cmocka_unit_test(test_cache_write_inside_a_shared_loop_writes_back_before_the_consumer),
      cmocka_unit_test(test_cache_write_with_consumers_lets_them_read_the_cache),
      cmocka_unit_test(test_cache_write_under_a_scope_block_caches_only_its_region),
      cmocka_unit_test(test_cache_write_rejects_bad_arguments),
      cmocka_unit_test(test_cache_write_after_an_overshooting_split_caches_only_the_buffer),
      cmocka_unit_test(test_cache_stages_inside_an_overshooting_tile_copy_under_a_predicate),
      cmocka_unit_test(test_cache_write_inside_a_padded_window_guards_both_edges),
      cmocka_unit_test(test_cache_primitives_reject_a_stale_block),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
