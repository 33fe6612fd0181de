/*
 * test_lower_loops.c - the passes that rewrite loops: vectorize (vector
 * operations, or a serial loop and a note saying why), unroll (explicit and
 * TVM's auto-unroll under pragma_auto_unroll_max_step) and simplify. Exact
 * TVMScript after each pass (earlier passes run first, as in the driver)
 * and the interpreter's outputs equal to the unlowered function's.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "test_lower_helpers.h"

static const char VADD_SRC[] =
    "@T.prim_func\n"
    "def main(A: T.Buffer((4, 16), \"float32\"), B: T.Buffer((16,), \"float32\"), C: T.Buffer((4, 16), \"float32\")):\n"
    "    for i, j_0 in T.grid(4, 2):\n"
    "        for j_1 in T.vectorized(8):\n"
    "            with T.block(\"C\"):\n"
    "                vi = T.axis.spatial(4, i)\n"
    "                vj = T.axis.spatial(16, j_0 * 8 + j_1)\n"
    "                C[vi, vj] = A[vi, vj] * B[vj] + T.float32(1)\n";

static const char VMM_SRC[] =
    "@T.prim_func\n"
    "def main(A: T.Buffer((8, 8), \"float32\"), B: T.Buffer((8, 16), \"float32\"), C: T.Buffer((8, 16), \"float32\")):\n"
    "    for i, j_0, k in T.grid(8, 2, 8):\n"
    "        for j_1 in T.vectorized(8):\n"
    "            with T.block(\"C\"):\n"
    "                vi = T.axis.spatial(8, i)\n"
    "                vj = T.axis.spatial(16, j_0 * 8 + j_1)\n"
    "                vk = T.axis.reduce(8, k)\n"
    "                with T.init():\n"
    "                    C[vi, vj] = T.float32(0)\n"
    "                C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]\n";

static const char VRED_SRC[] =
    "@T.prim_func\n"
    "def main(A: T.Buffer((4, 8), \"float32\"), S: T.Buffer((4,), \"float32\")):\n"
    "    for i in range(4):\n"
    "        for k in T.vectorized(8):\n"
    "            with T.block(\"S\"):\n"
    "                vi, vk = T.axis.remap(\"SR\", [i, k])\n"
    "                with T.init():\n"
    "                    S[vi] = T.float32(0)\n"
    "                S[vi] = S[vi] + A[vi, vk]\n";

static const char VSYM_SRC[] =
    "@T.prim_func\n"
    "def main(A: T.Buffer((8,), \"float32\"), n: T.int32):\n"
    "    for j in T.vectorized(n):\n"
    "        A[j] = A[j] + T.float32(1)\n";

static const char VPAD_SRC[] =
    "@T.prim_func\n"
    "def main(A: T.Buffer((6, 8), \"float32\"), P: T.Buffer((8, 8), \"float32\"), Q: T.Buffer((8, 8), \"float32\"), R: T.Buffer((8, 6), \"float32\")):\n"
    "    for i in range(8):\n"
    "        for j in T.vectorized(8):\n"
    "            with T.block(\"P\"):\n"
    "                vi, vj = T.axis.remap(\"SS\", [i, j])\n"
    "                P[vi, vj] = T.if_then_else(1 <= vi and vi < 7, A[vi - 1, vj], T.float32(0))\n"
    "        for j in T.vectorized(8):\n"
    "            with T.block(\"Q\"):\n"
    "                vi, vj = T.axis.remap(\"SS\", [i, j])\n"
    "                Q[vi, vj] = P[vi, vj] * T.if_then_else(vj < 4, T.float32(1), T.float32(2))\n"
    "        for j in T.vectorized(8):\n"
    "            with T.block(\"R\"):\n"
    "                vi, vj = T.axis.remap(\"SS\", [i, j])\n"
    "                T.where(j < 6)\n"
    "                R[vi, vj] = Q[vi, vj]\n";

static const char VFUSE_SRC[] =
    "@T.prim_func\n"
    "def main(A: T.Buffer((4, 8), \"float32\"), B: T.Buffer((4, 8), \"float32\")):\n"
    "    for f_0 in range(4):\n"
    "        for f_1 in T.vectorized(8):\n"
    "            with T.block(\"B\"):\n"
    "                vi = T.axis.spatial(4, (f_0 * 8 + f_1) // 8)\n"
    "                vj = T.axis.spatial(8, (f_0 * 8 + f_1) % 8)\n"
    "                B[vi, vj] = A[vi, vj] * T.float32(2)\n";

static const char VGATHER_SRC[] =
    "@T.prim_func\n"
    "def main(A: T.Buffer((16,), \"float32\"), B: T.Buffer((4,), \"float32\")):\n"
    "    for j in T.vectorized(4):\n"
    "        with T.block(\"B\"):\n"
    "            vj = T.axis.spatial(4, j)\n"
    "            B[vj] = A[vj * vj]\n";

static const char VLET_SRC[] =
    "@T.prim_func\n"
    "def main(A: T.Buffer((4, 8), \"float32\"), B: T.Buffer((4, 8), \"float32\")):\n"
    "    for i in range(4):\n"
    "        for j in T.vectorized(8):\n"
    "            with T.block(\"B\"):\n"
    "                vi, vj = T.axis.remap(\"SS\", [i, j])\n"
    "                x: T.float32 = A[vi, vj] * T.float32(2)\n"
    "                B[vi, vj] = x + T.exp(x)\n";

static const char UEXP_SRC[] =
    "@T.prim_func\n"
    "def main(A: T.Buffer((4, 4), \"float32\"), B: T.Buffer((4, 4), \"float32\")):\n"
    "    for i in T.unroll(2):\n"
    "        for j, k in T.grid(4, 2):\n"
    "            with T.block(\"B\"):\n"
    "                vi = T.axis.spatial(4, i * 2 + k)\n"
    "                vj = T.axis.spatial(4, j)\n"
    "                B[vi, vj] = A[vi, vj] + T.float32(1)\n";

static const char UBIG_SRC[] =
    "@T.prim_func\n"
    "def main(A: T.Buffer((65,), \"float32\")):\n"
    "    for i in T.unroll(65):\n"
    "        with T.block(\"A\"):\n"
    "            vi = T.axis.spatial(65, i)\n"
    "            A[vi] = A[vi] * T.float32(2)\n";

static const char UAUTO_SRC[] =
    "@T.prim_func\n"
    "def main(A: T.Buffer((2, 4, 4), \"float32\"), B: T.Buffer((2, 4, 4), \"float32\")):\n"
    "    for i in T.serial(2, annotations={\"pragma_auto_unroll_max_step\": 16, \"pragma_unroll_explicit\": 1}):\n"
    "        for j, k in T.grid(4, 4):\n"
    "            with T.block(\"B\"):\n"
    "                vi, vj, vk = T.axis.remap(\"SSS\", [i, j, k])\n"
    "                B[vi, vj, vk] = A[vi, vj, vk] + T.float32(1)\n";

static const char UIMPLICIT_SRC[] =
    "@T.prim_func\n"
    "def main(A: T.Buffer((2, 4, 4), \"float32\"), B: T.Buffer((2, 4, 4), \"float32\")):\n"
    "    for i in T.serial(2, annotations={\"pragma_auto_unroll_max_step\": 16, \"pragma_unroll_explicit\": 0}):\n"
    "        for j, k in T.grid(4, 4):\n"
    "            with T.block(\"B\"):\n"
    "                vi, vj, vk = T.axis.remap(\"SSS\", [i, j, k])\n"
    "                B[vi, vj, vk] = A[vi, vj, vk] + T.float32(1)\n";

static const char UROOT_SRC[] =
    "@T.prim_func\n"
    "def main(A: T.Buffer((4,), \"float32\"), B: T.Buffer((4,), \"float32\")):\n"
    "    with T.block(\"root\"):\n"
    "        T.reads()\n"
    "        T.writes()\n"
    "        T.block_attr({\"pragma_auto_unroll_max_step\": 4})\n"
    "        for i in range(4):\n"
    "            with T.block(\"B\"):\n"
    "                vi = T.axis.spatial(4, i)\n"
    "                B[vi] = A[vi] * T.float32(2)\n";

static const char SIMP_SRC[] =
    "@T.prim_func\n"
    "def main(A: T.Buffer((8,), \"float32\")):\n"
    "    for i in range(8):\n"
    "        if i < 0:\n"
    "            A[i] = T.float32(0)\n"
    "        A[(i * 4 + 2) // 4] = A[i + 0] + T.float32(1)\n"
    "    for j in range(4):\n"
    "        if j >= 4:\n"
    "            A[j] = T.float32(0)\n";

static const char VADD_VEC[] =
    "# from tvm.script import tir as T\n"
    "\n"
    "@T.prim_func\n"
    "def main(A: T.Buffer((4, 16), \"float32\"), B: T.Buffer((16,), \"float32\"), C: T.Buffer((4, 16), \"float32\")):\n"
    "    C_1 = T.Buffer((64,), data=C.data)\n"
    "    A_1 = T.Buffer((64,), data=A.data)\n"
    "    for i, j_0 in T.grid(4, 2):\n"
    "        C_1[T.Ramp(i * 16 + j_0 * 8, 1, 8)] = A_1[T.Ramp(i * 16 + j_0 * 8, 1, 8)] * B[T.Ramp(j_0 * 8, 1, 8)] + T.Broadcast(T.float32(1), 8)\n";

static const char VMM_VEC[] =
    "# from tvm.script import tir as T\n"
    "\n"
    "@T.prim_func\n"
    "def main(A: T.Buffer((8, 8), \"float32\"), B: T.Buffer((8, 16), \"float32\"), C: T.Buffer((8, 16), \"float32\")):\n"
    "    C_1 = T.Buffer((128,), data=C.data)\n"
    "    A_1 = T.Buffer((64,), data=A.data)\n"
    "    B_1 = T.Buffer((128,), data=B.data)\n"
    "    for i, j_0, k in T.grid(8, 2, 8):\n"
    "        if k == 0:\n"
    "            C_1[T.Ramp(i * 16 + j_0 * 8, 1, 8)] = T.Broadcast(T.float32(0), 8)\n"
    "        C_1[T.Ramp(i * 16 + j_0 * 8, 1, 8)] = C_1[T.Ramp(i * 16 + j_0 * 8, 1, 8)] + T.Broadcast(A_1[i * 8 + k], 8) * B_1[T.Ramp(k * 16 + j_0 * 8, 1, 8)]\n";

static const char VPAD_VEC[] =
    "# from tvm.script import tir as T\n"
    "\n"
    "@T.prim_func\n"
    "def main(A: T.Buffer((6, 8), \"float32\"), P: T.Buffer((8, 8), \"float32\"), Q: T.Buffer((8, 8), \"float32\"), R: T.Buffer((8, 6), \"float32\")):\n"
    "    P_1 = T.Buffer((64,), data=P.data)\n"
    "    A_1 = T.Buffer((48,), data=A.data)\n"
    "    Q_1 = T.Buffer((64,), data=Q.data)\n"
    "    R_1 = T.Buffer((48,), data=R.data)\n"
    "    for i in range(8):\n"
    "        P_1[T.Ramp(i * 8, 1, 8)] = T.if_then_else(1 <= i and i < 7, A_1[T.Ramp((i - 1) * 8, 1, 8)], T.Broadcast(T.float32(0), 8))\n"
    "        Q_1[T.Ramp(i * 8, 1, 8)] = P_1[T.Ramp(i * 8, 1, 8)] * T.Select(T.Ramp(0, 1, 8) < T.Broadcast(4, 8), T.Broadcast(T.float32(1), 8), T.Broadcast(T.float32(2), 8))\n"
    "        for j in range(8):\n"
    "            if j < 6:\n"
    "                R_1[i * 6 + j] = Q_1[i * 8 + j]\n";

static const char VFUSE_VEC[] =
    "# from tvm.script import tir as T\n"
    "\n"
    "@T.prim_func\n"
    "def main(A: T.Buffer((4, 8), \"float32\"), B: T.Buffer((4, 8), \"float32\")):\n"
    "    B_1 = T.Buffer((32,), data=B.data)\n"
    "    A_1 = T.Buffer((32,), data=A.data)\n"
    "    for f_0 in range(4):\n"
    "        B_1[T.Ramp(f_0 * 8 // 8 * 8 + f_0 * 8 % 8, 1, 8)] = A_1[T.Ramp(f_0 * 8 // 8 * 8 + f_0 * 8 % 8, 1, 8)] * T.Broadcast(T.float32(2), 8)\n";

static const char VLET_VEC[] =
    "# from tvm.script import tir as T\n"
    "\n"
    "@T.prim_func\n"
    "def main(A: T.Buffer((4, 8), \"float32\"), B: T.Buffer((4, 8), \"float32\")):\n"
    "    A_1 = T.Buffer((32,), data=A.data)\n"
    "    B_1 = T.Buffer((32,), data=B.data)\n"
    "    for i in range(4):\n"
    "        x: T.float32x8 = A_1[T.Ramp(i * 8, 1, 8)] * T.Broadcast(T.float32(2), 8)\n"
    "        B_1[T.Ramp(i * 8, 1, 8)] = x + T.exp(x)\n";

static const char UEXP_UNROLL[] =
    "# from tvm.script import tir as T\n"
    "\n"
    "@T.prim_func\n"
    "def main(A: T.Buffer((4, 4), \"float32\"), B: T.Buffer((4, 4), \"float32\")):\n"
    "    B_1 = T.Buffer((16,), data=B.data)\n"
    "    A_1 = T.Buffer((16,), data=A.data)\n"
    "    for j, k in T.grid(4, 2):\n"
    "        B_1[(0 * 2 + k) * 4 + j] = A_1[(0 * 2 + k) * 4 + j] + T.float32(1)\n"
    "    for j, k in T.grid(4, 2):\n"
    "        B_1[(1 * 2 + k) * 4 + j] = A_1[(1 * 2 + k) * 4 + j] + T.float32(1)\n";

static const char UAUTO_UNROLL[] =
    "# from tvm.script import tir as T\n"
    "\n"
    "@T.prim_func\n"
    "def main(A: T.Buffer((2, 4, 4), \"float32\"), B: T.Buffer((2, 4, 4), \"float32\")):\n"
    "    B_1 = T.Buffer((32,), data=B.data)\n"
    "    A_1 = T.Buffer((32,), data=A.data)\n"
    "    for i in range(2):\n"
    "        B_1[i * 16 + 0 * 4 + 0] = A_1[i * 16 + 0 * 4 + 0] + T.float32(1)\n"
    "        B_1[i * 16 + 0 * 4 + 1] = A_1[i * 16 + 0 * 4 + 1] + T.float32(1)\n"
    "        B_1[i * 16 + 0 * 4 + 2] = A_1[i * 16 + 0 * 4 + 2] + T.float32(1)\n"
    "        B_1[i * 16 + 0 * 4 + 3] = A_1[i * 16 + 0 * 4 + 3] + T.float32(1)\n"
    "        B_1[i * 16 + 1 * 4 + 0] = A_1[i * 16 + 1 * 4 + 0] + T.float32(1)\n"
    "        B_1[i * 16 + 1 * 4 + 1] = A_1[i * 16 + 1 * 4 + 1] + T.float32(1)\n"
    "        B_1[i * 16 + 1 * 4 + 2] = A_1[i * 16 + 1 * 4 + 2] + T.float32(1)\n"
    "        B_1[i * 16 + 1 * 4 + 3] = A_1[i * 16 + 1 * 4 + 3] + T.float32(1)\n"
    "        B_1[i * 16 + 2 * 4 + 0] = A_1[i * 16 + 2 * 4 + 0] + T.float32(1)\n"
    "        B_1[i * 16 + 2 * 4 + 1] = A_1[i * 16 + 2 * 4 + 1] + T.float32(1)\n"
    "        B_1[i * 16 + 2 * 4 + 2] = A_1[i * 16 + 2 * 4 + 2] + T.float32(1)\n"
    "        B_1[i * 16 + 2 * 4 + 3] = A_1[i * 16 + 2 * 4 + 3] + T.float32(1)\n"
    "        B_1[i * 16 + 3 * 4 + 0] = A_1[i * 16 + 3 * 4 + 0] + T.float32(1)\n"
    "        B_1[i * 16 + 3 * 4 + 1] = A_1[i * 16 + 3 * 4 + 1] + T.float32(1)\n"
    "        B_1[i * 16 + 3 * 4 + 2] = A_1[i * 16 + 3 * 4 + 2] + T.float32(1)\n"
    "        B_1[i * 16 + 3 * 4 + 3] = A_1[i * 16 + 3 * 4 + 3] + T.float32(1)\n";

static const char UIMPLICIT_UNROLL[] =
    "# from tvm.script import tir as T\n"
    "\n"
    "@T.prim_func\n"
    "def main(A: T.Buffer((2, 4, 4), \"float32\"), B: T.Buffer((2, 4, 4), \"float32\")):\n"
    "    B_1 = T.Buffer((32,), data=B.data)\n"
    "    A_1 = T.Buffer((32,), data=A.data)\n"
    "    for i in range(2):\n"
    "        for j in T.unroll(4):\n"
    "            for k in T.unroll(4):\n"
    "                B_1[i * 16 + j * 4 + k] = A_1[i * 16 + j * 4 + k] + T.float32(1)\n";

static const char UROOT_UNROLL[] =
    "# from tvm.script import tir as T\n"
    "\n"
    "@T.prim_func\n"
    "def main(A: T.Buffer((4,), \"float32\"), B: T.Buffer((4,), \"float32\")):\n"
    "    B[0] = A[0] * T.float32(2)\n"
    "    B[1] = A[1] * T.float32(2)\n"
    "    B[2] = A[2] * T.float32(2)\n"
    "    B[3] = A[3] * T.float32(2)\n";

static const char VFUSE_SIMPLE[] =
    "# from tvm.script import tir as T\n"
    "\n"
    "@T.prim_func\n"
    "def main(A: T.Buffer((4, 8), \"float32\"), B: T.Buffer((4, 8), \"float32\")):\n"
    "    B_1 = T.Buffer((32,), data=B.data)\n"
    "    A_1 = T.Buffer((32,), data=A.data)\n"
    "    for f_0 in range(4):\n"
    "        B_1[T.Ramp(f_0 * 8, 1, 8)] = A_1[T.Ramp(f_0 * 8, 1, 8)] * T.Broadcast(T.float32(2), 8)\n";

static const char UAUTO_SIMPLE[] =
    "# from tvm.script import tir as T\n"
    "\n"
    "@T.prim_func\n"
    "def main(A: T.Buffer((2, 4, 4), \"float32\"), B: T.Buffer((2, 4, 4), \"float32\")):\n"
    "    B_1 = T.Buffer((32,), data=B.data)\n"
    "    A_1 = T.Buffer((32,), data=A.data)\n"
    "    for i in range(2):\n"
    "        B_1[i * 16] = A_1[i * 16] + T.float32(1)\n"
    "        B_1[i * 16 + 1] = A_1[i * 16 + 1] + T.float32(1)\n"
    "        B_1[i * 16 + 2] = A_1[i * 16 + 2] + T.float32(1)\n"
    "        B_1[i * 16 + 3] = A_1[i * 16 + 3] + T.float32(1)\n"
    "        B_1[i * 16 + 4] = A_1[i * 16 + 4] + T.float32(1)\n"
    "        B_1[i * 16 + 5] = A_1[i * 16 + 5] + T.float32(1)\n"
    "        B_1[i * 16 + 6] = A_1[i * 16 + 6] + T.float32(1)\n"
    "        B_1[i * 16 + 7] = A_1[i * 16 + 7] + T.float32(1)\n"
    "        B_1[i * 16 + 8] = A_1[i * 16 + 8] + T.float32(1)\n"
    "        B_1[i * 16 + 9] = A_1[i * 16 + 9] + T.float32(1)\n"
    "        B_1[i * 16 + 10] = A_1[i * 16 + 10] + T.float32(1)\n"
    "        B_1[i * 16 + 11] = A_1[i * 16 + 11] + T.float32(1)\n"
    "        B_1[i * 16 + 12] = A_1[i * 16 + 12] + T.float32(1)\n"
    "        B_1[i * 16 + 13] = A_1[i * 16 + 13] + T.float32(1)\n"
    "        B_1[i * 16 + 14] = A_1[i * 16 + 14] + T.float32(1)\n"
    "        B_1[i * 16 + 15] = A_1[i * 16 + 15] + T.float32(1)\n";


static const char UMS_SRC[] =
    "@T.prim_func\n"
    "def main(A: T.Buffer((4, 4), \"float32\"), B: T.Buffer((4, 4), \"float32\")):\n"
    "    with T.block(\"root\"):\n"
    "        T.reads()\n"
    "        T.writes()\n"
    "        T.block_attr({\"meta_schedule.unroll_implicit\": 16})\n"
    "        for i, j in T.grid(4, 4):\n"
    "            with T.block(\"B\"):\n"
    "                vi, vj = T.axis.remap(\"SS\", [i, j])\n"
    "                B[vi, vj] = A[vi, vj] * T.float32(2)\n";

static const char UMS_UNROLL[] =
    "# from tvm.script import tir as T\n"
    "\n"
    "@T.prim_func\n"
    "def main(A: T.Buffer((4, 4), \"float32\"), B: T.Buffer((4, 4), \"float32\")):\n"
    "    B_1 = T.Buffer((16,), data=B.data)\n"
    "    A_1 = T.Buffer((16,), data=A.data)\n"
    "    for i in T.unroll(4):\n"
    "        for j in T.unroll(4):\n"
    "            B_1[i * 4 + j] = A_1[i * 4 + j] * T.float32(2)\n";

static const char UMSE_SRC[] =
    "@T.prim_func\n"
    "def main(A: T.Buffer((4, 4), \"float32\"), B: T.Buffer((4, 4), \"float32\")):\n"
    "    with T.block(\"root\"):\n"
    "        T.reads()\n"
    "        T.writes()\n"
    "        T.block_attr({\"meta_schedule.unroll_explicit\": 16})\n"
    "        for i, j in T.grid(4, 4):\n"
    "            with T.block(\"B\"):\n"
    "                vi, vj = T.axis.remap(\"SS\", [i, j])\n"
    "                B[vi, vj] = A[vi, vj] * T.float32(2)\n";

static const char UMSE_UNROLL[] =
    "# from tvm.script import tir as T\n"
    "\n"
    "@T.prim_func\n"
    "def main(A: T.Buffer((4, 4), \"float32\"), B: T.Buffer((4, 4), \"float32\")):\n"
    "    B_1 = T.Buffer((16,), data=B.data)\n"
    "    A_1 = T.Buffer((16,), data=A.data)\n"
    "    B_1[0 * 4 + 0] = A_1[0 * 4 + 0] * T.float32(2)\n"
    "    B_1[0 * 4 + 1] = A_1[0 * 4 + 1] * T.float32(2)\n"
    "    B_1[0 * 4 + 2] = A_1[0 * 4 + 2] * T.float32(2)\n"
    "    B_1[0 * 4 + 3] = A_1[0 * 4 + 3] * T.float32(2)\n"
    "    B_1[1 * 4 + 0] = A_1[1 * 4 + 0] * T.float32(2)\n"
    "    B_1[1 * 4 + 1] = A_1[1 * 4 + 1] * T.float32(2)\n"
    "    B_1[1 * 4 + 2] = A_1[1 * 4 + 2] * T.float32(2)\n"
    "    B_1[1 * 4 + 3] = A_1[1 * 4 + 3] * T.float32(2)\n"
    "    B_1[2 * 4 + 0] = A_1[2 * 4 + 0] * T.float32(2)\n"
    "    B_1[2 * 4 + 1] = A_1[2 * 4 + 1] * T.float32(2)\n"
    "    B_1[2 * 4 + 2] = A_1[2 * 4 + 2] * T.float32(2)\n"
    "    B_1[2 * 4 + 3] = A_1[2 * 4 + 3] * T.float32(2)\n"
    "    B_1[3 * 4 + 0] = A_1[3 * 4 + 0] * T.float32(2)\n"
    "    B_1[3 * 4 + 1] = A_1[3 * 4 + 1] * T.float32(2)\n"
    "    B_1[3 * 4 + 2] = A_1[3 * 4 + 2] * T.float32(2)\n"
    "    B_1[3 * 4 + 3] = A_1[3 * 4 + 3] * T.float32(2)\n";

/* ------------------------------------------------------------------------ */
/* vectorize                                                                 */
/* ------------------------------------------------------------------------ */

static void contiguous_accesses_become_ramps_and_invariants_broadcasts(void **state) {
  assert_null(lt_check(VADD_SRC, MLC_PASS_VECTORIZE, VADD_VEC));
}

static void serial_reduction_loop_runs_around_the_vector_body(void **state) {
  /* j vectorized inside k: the init's guard is uniform across lanes. */
  assert_null(lt_check(VMM_SRC, MLC_PASS_VECTORIZE, VMM_VEC));
}

static void padding_guard_and_select_vectorize_but_a_varying_if_does_not(void **state) {
  /* P: if_then_else with a uniform condition; Q: one that varies but reads
   * no memory becomes a Select; R: an if that varies stays scalar. */
  char *notes = lt_check(VPAD_SRC, MLC_PASS_VECTORIZE, VPAD_VEC);
  assert_string_equal(notes, "vectorize: loop j kept scalar: the condition of an if differs between lanes\n");
  mlc_free(notes);
}

static void floordiv_and_floormod_of_a_fused_loop_stay_affine(void **state) {
  assert_null(lt_check(VFUSE_SRC, MLC_PASS_VECTORIZE, VFUSE_VEC));
}

static void let_of_a_vector_value_gets_a_vector_variable(void **state) {
  assert_null(lt_check(VLET_SRC, MLC_PASS_VECTORIZE, VLET_VEC));
}

static tir_stmt_t *serial_loops(tir_mutator_t *m, tir_stmt_t *s) {
  tir_stmt_t *r = tir_mutate_stmt_children(m, s);
  if (r->kind != TIR_FOR || r->u.loop.kind != TIR_FOR_VECTORIZED) return r;
  r = tir_stmt_copy(m->arena, r);
  r->u.loop.kind = TIR_FOR_SERIAL;
  return r;
}

/* The loop stays a serial loop: the program after vectorize is the one
 * before with the loop's kind changed, and the note says why. */
static void assert_kept_scalar(const char *src, const char *note) {
  tir_func_t *orig = st_parse(src);
  tir_func_t *f = lt_before(orig, MLC_PASS_VECTORIZE);
  tir_func_t *serial = tir_func_clone(f);
  tir_mutator_t m = {.arena = serial->arena, .stmt = serial_loops};
  serial->body = tir_mutate_stmt(&m, serial->body);
  char *expected = tir_print_func(serial);
  mlc_strbuf_t notes;
  mlc_sb_init(&notes);
  lt_run(f, MLC_PASS_VECTORIZE, &notes);
  st_assert_script(f, expected);
  assert_string_equal(mlc_sb_str(&notes), note);
  st_assert_same_outputs(orig, f, 3, 0.0);
  mlc_sb_free(&notes);
  mlc_free(expected);
  tir_func_free(serial);
  tir_func_free(f);
  tir_func_free(orig);
}

static void reduction_across_lanes_is_kept_scalar(void **state) {
  assert_kept_scalar(VRED_SRC, "vectorize: loop k kept scalar: the condition of an if differs between lanes\n");
}

static void symbolic_extent_is_kept_scalar(void **state) {
  assert_kept_scalar(VSYM_SRC, "vectorize: loop j kept scalar: its extent n is not a constant\n");
}

static void gather_is_kept_scalar(void **state) {
  assert_kept_scalar(VGATHER_SRC, "vectorize: loop j kept scalar: the index of A is not affine in j\n");
}

static void store_to_one_place_is_kept_scalar(void **state) {
  static const char src[] =
      "@T.prim_func\n"
      "def main(A: T.Buffer((8,), \"float32\"), S: T.Buffer((1,), \"float32\")):\n"
      "    for k in T.vectorized(8):\n"
      "        S[0] = S[0] + A[k]\n";
  assert_kept_scalar(src, "vectorize: loop k kept scalar: the store to S is at the same place on every lane\n");
}

static void single_lane_loop_is_its_body(void **state) {
  static const char src[] =
      "@T.prim_func\n"
      "def main(A: T.Buffer((8,), \"float32\")):\n"
      "    for i in range(8):\n"
      "        for k in T.vectorized(1, annotations={\"keep\": 1}):\n"
      "            A[i + k] = A[i + k] * T.float32(3)\n";
  static const char expected[] =
      "# from tvm.script import tir as T\n"
      "\n"
      "@T.prim_func\n"
      "def main(A: T.Buffer((8,), \"float32\")):\n"
      "    for i in range(8):\n"
      "        A[i + 0] = A[i + 0] * T.float32(3)\n";
  assert_null(lt_check(src, MLC_PASS_VECTORIZE, expected));
}

/* ------------------------------------------------------------------------ */
/* unroll                                                                    */
/* ------------------------------------------------------------------------ */

static void marked_loop_is_replicated_with_fresh_inner_loops(void **state) {
  assert_null(lt_check(UEXP_SRC, MLC_PASS_UNROLL, UEXP_UNROLL));
  tir_func_t *orig = st_parse(UEXP_SRC);
  tir_func_t *f = lt_before(orig, MLC_PASS_UNROLL);
  lt_run(f, MLC_PASS_UNROLL, NULL);
  assert_int_equal(f->body->kind, TIR_SEQ);
  assert_int_equal(f->body->u.seq.n, 2);
  tir_stmt_t *a = f->body->u.seq.stmts[0], *b = f->body->u.seq.stmts[1];
  assert_ptr_not_equal(a->u.loop.var, b->u.loop.var); /* no variable defined twice */
  assert_ptr_not_equal(a->u.loop.body->u.loop.var, b->u.loop.body->u.loop.var);
  tir_func_free(f);
  tir_func_free(orig);
}

static void loop_longer_than_64_stays_serial_with_a_note(void **state) {
  tir_func_t *orig = st_parse(UBIG_SRC);
  tir_func_t *f = lt_before(orig, MLC_PASS_UNROLL);
  mlc_strbuf_t notes;
  mlc_sb_init(&notes);
  lt_run(f, MLC_PASS_UNROLL, &notes);
  assert_string_equal(mlc_sb_str(&notes), "unroll: loop i kept serial: its extent 65 is more than 64\n");
  assert_int_equal(f->body->kind, TIR_FOR);
  assert_int_equal(f->body->u.loop.kind, TIR_FOR_SERIAL);
  st_assert_same_outputs(orig, f, 3, 0.0);
  mlc_sb_free(&notes);
  tir_func_free(f);
  tir_func_free(orig);
}

static void auto_unroll_takes_the_nests_within_max_step(void **state) {
  /* k: 4 x 1 store <= 16, j: 4 x 4 <= 16, i: 2 x 16 > 16 stays. */
  assert_null(lt_check(UAUTO_SRC, MLC_PASS_UNROLL, UAUTO_UNROLL));
}

static void auto_unroll_without_explicit_marks_the_loops(void **state) {
  assert_null(lt_check(UIMPLICIT_SRC, MLC_PASS_UNROLL, UIMPLICIT_UNROLL));
}

/* Marking only (mlc_lower_options_t's keep_unrolled_loops, the search's
 * lowering for features): the same decisions as above, but the loops whose
 * bodies would be copied stay loops of kind unroll carrying
 * pragma_unroll_explicit = 1, so the program keeps one copy of the body and
 * still differs from implicit unrolling; without the option the copies are
 * made as before. */
static void marking_only_keeps_the_unrolled_loops_apart_from_implicit_ones(void **state) {
  static const char expected[] =
      "# from tvm.script import tir as T\n"
      "\n"
      "@T.prim_func\n"
      "def main(A: T.Buffer((2, 4, 4), \"float32\"), B: T.Buffer((2, 4, 4), \"float32\")):\n"
      "    B_1 = T.Buffer((32,), data=B.data)\n"
      "    A_1 = T.Buffer((32,), data=A.data)\n"
      "    for i in range(2):\n"
      "        for j in T.unroll(4, annotations={\"pragma_unroll_explicit\": 1}):\n"
      "            for k in T.unroll(4, annotations={\"pragma_unroll_explicit\": 1}):\n"
      "                B_1[i * 16 + j * 4 + k] = A_1[i * 16 + j * 4 + k] + T.float32(1)\n";
  mlc_target_t t = lt_target();
  mlc_lower_options_t mark = {.keep_unrolled_loops = true};
  tir_func_t *orig = st_parse(UAUTO_SRC), *implicit_src = st_parse(UIMPLICIT_SRC);
  tir_func_t *marked = NULL, *implicit = NULL, *copied = NULL;
  assert_int_equal(mlc_lower(&marked, orig, &t, &mark), MLC_OK);
  st_assert_script(marked, expected);
  st_assert_same_outputs(orig, marked, 11, 0.0);
  assert_int_equal(mlc_lower(&implicit, implicit_src, &t, &mark), MLC_OK);
  st_assert_script(implicit, UIMPLICIT_UNROLL); /* marked unroll already: the same either way */
  assert_true(tir_func_key(marked) != tir_func_key(implicit));
  assert_int_equal(mlc_lower(&copied, orig, &t, NULL), MLC_OK);
  char *text = tir_print_func(copied);
  assert_null(strstr(text, "T.unroll"));
  assert_non_null(strstr(text, "B_1[i * 16 + 15] = A_1[i * 16 + 15] + T.float32(1)"));
  mlc_free(text);
  tir_func_free(copied);
  tir_func_free(implicit);
  tir_func_free(marked);
  tir_func_free(implicit_src);
  tir_func_free(orig);
  (void)state;
}

static void block_pragma_applies_to_the_loops_inside(void **state) {
  assert_null(lt_check(UROOT_SRC, MLC_PASS_UNROLL, UROOT_UNROLL));
}

static void meta_schedule_unroll_decision_on_a_block_unrolls_below_it(void **state) {
  /* MetaSchedule's meta_schedule.unroll_explicit = 16 on the root: j
   * (4 x 1) and i (4 x 4) are copied; unroll_implicit marks them. */
  assert_null(lt_check(UMSE_SRC, MLC_PASS_UNROLL, UMSE_UNROLL));
  assert_null(lt_check(UMS_SRC, MLC_PASS_UNROLL, UMS_UNROLL));
}

/* ------------------------------------------------------------------------ */
/* simplify                                                                  */
/* ------------------------------------------------------------------------ */

static void index_arithmetic_gets_its_canonical_form(void **state) {
  assert_null(lt_check(VFUSE_SRC, MLC_PASS_SIMPLIFY, VFUSE_SIMPLE));
  assert_null(lt_check(UAUTO_SRC, MLC_PASS_SIMPLIFY, UAUTO_SIMPLE));
}

static void statements_that_do_nothing_are_removed(void **state) {
  static const char expected[] =
      "# from tvm.script import tir as T\n"
      "\n"
      "@T.prim_func\n"
      "def main(A: T.Buffer((8,), \"float32\")):\n"
      "    for i in range(8):\n"
      "        A[i] = A[i] + T.float32(1)\n";
  assert_null(lt_check_only(SIMP_SRC, MLC_PASS_SIMPLIFY, expected));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(contiguous_accesses_become_ramps_and_invariants_broadcasts),
      cmocka_unit_test(serial_reduction_loop_runs_around_the_vector_body),
      cmocka_unit_test(padding_guard_and_select_vectorize_but_a_varying_if_does_not),
      cmocka_unit_test(floordiv_and_floormod_of_a_fused_loop_stay_affine),
      cmocka_unit_test(let_of_a_vector_value_gets_a_vector_variable),
      cmocka_unit_test(reduction_across_lanes_is_kept_scalar),
      cmocka_unit_test(symbolic_extent_is_kept_scalar),
      cmocka_unit_test(gather_is_kept_scalar),
      cmocka_unit_test(store_to_one_place_is_kept_scalar),
      cmocka_unit_test(single_lane_loop_is_its_body),
      cmocka_unit_test(marked_loop_is_replicated_with_fresh_inner_loops),
      cmocka_unit_test(loop_longer_than_64_stays_serial_with_a_note),
      cmocka_unit_test(auto_unroll_takes_the_nests_within_max_step),
      cmocka_unit_test(auto_unroll_without_explicit_marks_the_loops),
      cmocka_unit_test(marking_only_keeps_the_unrolled_loops_apart_from_implicit_ones),
      cmocka_unit_test(block_pragma_applies_to_the_loops_inside),
      cmocka_unit_test(meta_schedule_unroll_decision_on_a_block_unrolls_below_it),
      cmocka_unit_test(index_arithmetic_gets_its_canonical_form),
      cmocka_unit_test(statements_that_do_nothing_are_removed),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
