/*
 * builtin_x86.c - the built-in x86 tensor intrinsics, as TVMScript.
 *
 * avx512_fp32_fma_16x4: C[16] += A[k] * B[k, 0:16] for k < 4 (fp32), the
 *   broadcast-FMA micro-kernel of an AVX-512 GEMM: per k, one
 *   `llvm.fma.v16f32` of A[k] broadcast, a 16-wide row of B and C.
 * x86_vnni_u8s8s32_16x4: C[16] (int32) += sum over k < 4 of A[k] (uint8) *
 *   B[i, k] (int8), TVM's dot_16x4_vnni: one `llvm.x86.avx512.vpdpbusd.512`
 *   with A's four bytes broadcast as an int32 and B's 64 bytes as int32x16.
 *
 * The implementations are for the code generator (docs/schedule/
 * reduction_tensorize.md says how to lower them): vector accesses are
 * `X[..., T.Ramp(b, 1, n)]` (n consecutive elements of the compact tile,
 * TVM's vload), calls are `T.call_llvm_pure_intrin(ret_dtype, "llvm.name",
 * operands...)`. The texts are in canonical form (mlc-tir fmt prints them
 * unchanged).
 */
#include "schedule/intrin/intrin.h"

typedef struct {
  const char *name, *desc, *impl;
} intrin_text_t;

static const intrin_text_t x86_intrins[] = {
    {"avx512_fp32_fma_16x4",
     /* description */
     "@T.prim_func\n"
     "def avx512_fp32_fma_16x4_desc(a: T.handle, b: T.handle, c: T.handle):\n"
     "    A = T.match_buffer(a, (4,), offset_factor=1)\n"
     "    s0 = T.int32()\n"
     "    B = T.match_buffer(b, (4, 16), strides=(s0, 1), offset_factor=1)\n"
     "    C = T.match_buffer(c, (16,), offset_factor=1)\n"
     "    with T.block(\"root\"):\n"
     "        T.reads(C[0:16], A[0:4], B[0:4, 0:16])\n"
     "        T.writes(C[0:16])\n"
     "        for k, j in T.grid(4, 16):\n"
     "            with T.block(\"update\"):\n"
     "                vj, vk = T.axis.remap(\"SR\", [j, k])\n"
     "                T.reads(C[vj], A[vk], B[vk, vj])\n"
     "                T.writes(C[vj])\n"
     "                C[vj] = C[vj] + A[vk] * B[vk, vj]\n",
     /* implementation */
     "@T.prim_func\n"
     "def avx512_fp32_fma_16x4_impl(a: T.handle, b: T.handle, c: T.handle):\n"
     "    A = T.match_buffer(a, (4,), offset_factor=1)\n"
     "    s0 = T.int32()\n"
     "    B = T.match_buffer(b, (4, 16), strides=(s0, 1), offset_factor=1)\n"
     "    C = T.match_buffer(c, (16,), offset_factor=1)\n"
     "    with T.block(\"root\"):\n"
     "        T.reads(C[0:16], A[0:4], B[0:4, 0:16])\n"
     "        T.writes(C[0:16])\n"
     "        for k in T.unroll(4):\n"
     "            C[T.Ramp(0, 1, 16)] = T.call_llvm_pure_intrin(\"float32x16\", \"llvm.fma.v16f32\", T.Broadcast(A[k], 16), B[k, T.Ramp(0, 1, 16)], C[T.Ramp(0, 1, 16)])\n"},
    {"x86_vnni_u8s8s32_16x4",
     /* description */
     "@T.prim_func\n"
     "def x86_vnni_u8s8s32_16x4_desc(a: T.handle, b: T.handle, c: T.handle):\n"
     "    A = T.match_buffer(a, (4,), \"uint8\", offset_factor=1)\n"
     "    B = T.match_buffer(b, (16, 4), \"int8\", offset_factor=1)\n"
     "    C = T.match_buffer(c, (16,), \"int32\", offset_factor=1)\n"
     "    with T.block(\"root\"):\n"
     "        T.reads(C[0:16], A[0:4], B[0:16, 0:4])\n"
     "        T.writes(C[0:16])\n"
     "        for i, k in T.grid(16, 4):\n"
     "            with T.block(\"update\"):\n"
     "                vi, vk = T.axis.remap(\"SR\", [i, k])\n"
     "                T.reads(C[vi], A[vk], B[vi, vk])\n"
     "                T.writes(C[vi])\n"
     "                C[vi] = C[vi] + T.Cast(\"int32\", A[vk]) * T.Cast(\"int32\", B[vi, vk])\n",
     /* implementation */
     "@T.prim_func\n"
     "def x86_vnni_u8s8s32_16x4_impl(a: T.handle, b: T.handle, c: T.handle):\n"
     "    A = T.match_buffer(a, (4,), \"uint8\", offset_factor=1)\n"
     "    B = T.match_buffer(b, (16, 4), \"int8\", offset_factor=1)\n"
     "    C = T.match_buffer(c, (16,), \"int32\", offset_factor=1)\n"
     "    with T.block(\"root\"):\n"
     "        T.reads(C[0:16], A[0:4], B[0:16, 0:4])\n"
     "        T.writes(C[0:16])\n"
     "        C[T.Ramp(0, 1, 16)] = T.call_llvm_pure_intrin(\"int32x16\", \"llvm.x86.avx512.vpdpbusd.512\", C[T.Ramp(0, 1, 16)], T.Broadcast(T.reinterpret(\"int32\", A[T.Ramp(0, 1, 4)]), 16), T.reinterpret(\"int32x16\", B[0, T.Ramp(0, 1, 64)]))\n"},
};

int sch_intrin_register_x86(sch_intrin_add_fn add) {
  for (size_t i = 0; i < sizeof(x86_intrins) / sizeof(x86_intrins[0]); i++) {
    int rc = add(x86_intrins[i].name, x86_intrins[i].desc, x86_intrins[i].impl);
    if (rc != MLC_OK) return rc;
  }
  return MLC_OK;
}
