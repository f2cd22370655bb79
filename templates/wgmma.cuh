// bandjit/wgmma.cuh — warpgroup matrix multiply (wgmma, sm_90a): m64n64k16 with float32
// accumulators, B (and A, or A from registers) in shared memory described by a 64-bit
// descriptor (PTX ISA "Asynchronous Warpgroup Level Matrix Shared Memory Layout").
//
// The shared tiles' layout and descriptors are in wgmma_layout.cuh.
//
// Register fragments (per warp w of the warpgroup, rows 16w … 16w + 15) are the mma.sync
// m16n8k16 layouts of mma.cuh: accumulator element d[4·nt + e] is row g + 8·(e / 2), column
// 8·nt + 2·t4 + e % 2; an A fragment is MmaOps<T>::AFrag.
#pragma once

#include "bandjit/mma.cuh"
#include "bandjit/wgmma_layout.cuh"

namespace bandjit {

__device__ __forceinline__ void wgmma_fence() {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#endif
}
__device__ __forceinline__ void wgmma_commit() {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
#endif
}
template <int N>
__device__ __forceinline__ void wgmma_wait() {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
#endif
}
// Shared memory written through the generic proxy (cp.async, stores) that wgmma reads next.
__device__ __forceinline__ void fence_proxy_async() {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
#endif
}

// Pins the order of N accumulator registers against the asynchronous products: without it
// the compiler may move reads or writes of them across wgmma.fence / wgmma.wait_group, which
// carry no register dependence (it emits no instruction).
template <int N>
__device__ __forceinline__ void wgmma_fence_operands(float* d) {
#if defined(__CUDA_ARCH__)
#pragma unroll
  for (int i = 0; i < N; ++i) asm volatile("" : "+f"(d[i])::"memory");
#endif
}

#define BANDJIT_WGMMA_D32                                                                                             \
  "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, " \
  "%24, %25, %26, %27, %28, %29, %30, %31}"
#define BANDJIT_WGMMA_D32_OPERANDS(d)                                                                                \
  "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]),       \
      "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]),        \
      "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]),       \
      "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])

// D (64 × 64) = A·B (+ D when `accumulate`; rs always adds), 16 deep. ss: A and B K-major
// in shared memory; rs: A from registers, B MN-major ("transposed") in shared memory.
template <class T> struct WgmmaType;
#if defined(BANDJIT_USE_FP16)
template <> struct WgmmaType<__half> {
  static constexpr bool kBf16 = false;
};
#endif
#if defined(BANDJIT_USE_BF16)
template <> struct WgmmaType<__nv_bfloat16> {
  static constexpr bool kBf16 = true;
};
#endif

template <class T>
__device__ __forceinline__ void wgmma_ss(float* d, u64 da, u64 db, bool accumulate) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  if constexpr (WgmmaType<T>::kBf16) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 " BANDJIT_WGMMA_D32 ", %32, %33, p, 1, 1, 0, 0;\n}\n"
                 : BANDJIT_WGMMA_D32_OPERANDS(d)
                 : "l"(da), "l"(db), "r"(static_cast<int>(accumulate)));
  } else {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 " BANDJIT_WGMMA_D32 ", %32, %33, p, 1, 1, 0, 0;\n}\n"
                 : BANDJIT_WGMMA_D32_OPERANDS(d)
                 : "l"(da), "l"(db), "r"(static_cast<int>(accumulate)));
  }
#endif
}

template <class T>
__device__ __forceinline__ void wgmma_rs(float* d, const u32 (&a)[4], u64 db) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  if constexpr (WgmmaType<T>::kBf16) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %37, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 " BANDJIT_WGMMA_D32
                 ", {%32, %33, %34, %35}, %36, p, 1, 1, 1;\n}\n"
                 : BANDJIT_WGMMA_D32_OPERANDS(d)
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "r"(1));
  } else {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %37, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 " BANDJIT_WGMMA_D32
                 ", {%32, %33, %34, %35}, %36, p, 1, 1, 1;\n}\n"
                 : BANDJIT_WGMMA_D32_OPERANDS(d)
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "r"(1));
  }
#endif
}

#undef BANDJIT_WGMMA_D32
#undef BANDJIT_WGMMA_D32_OPERANDS

}  // namespace bandjit
