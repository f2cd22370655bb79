// bandjit/mma.cuh — warp-level tensor-core operands (mma.sync, sm_80+).
// Two policies with one interface, chosen by the element type:
//   16-bit inputs (half, bfloat16): m16n8k16, float32 accumulators.
//   float32 inputs: m16n8k8 on tf32 with the 3xTF32 split (x = big + small), which keeps
//   float32 accuracy (relative error ~1e-6) at tensor-core speed.
// Fragment layouts follow the PTX ISA "Matrix fragments for mma.m16n8k16 / m16n8k8".
// Shared-memory tiles are row-major with a leading dimension `ld` in elements.
#pragma once

#include "bandjit/common.cuh"

namespace bandjit {

typedef unsigned u32;

__device__ __forceinline__ int lane_id() { return threadIdx.x & 31; }

template <class T> struct MmaOps;

// Pins a value computed before a loop in a register: the compiler otherwise recomputes
// per-lane addresses inside the loop from their (long) definitions.
template <class X>
__device__ __forceinline__ void keep_in_register(X& x) {
  asm volatile("" : "+r"(x));
}

__device__ __forceinline__ u32 smem_addr(const void* p) { return static_cast<u32>(__cvta_generic_to_shared(p)); }
// Four 8x8 16-bit matrices; lanes 8q … 8q+7 give the row addresses of matrix q.
__device__ __forceinline__ void ldsm_x4(u32 addr, u32& r0, u32& r1, u32& r2, u32& r3) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3)
               : "r"(addr));
}
__device__ __forceinline__ void ldsm_x2(u32 addr, u32& r0, u32& r1) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0, %1}, [%2];\n" : "=r"(r0), "=r"(r1) : "r"(addr));
}
__device__ __forceinline__ void sts32(u32 addr, u32 v) {
  asm volatile("st.shared.b32 [%0], %1;\n" ::"r"(addr), "r"(v) : "memory");
}
__device__ __forceinline__ void sts64(u32 addr, float lo, float hi) {
  asm volatile("st.shared.v2.f32 [%0], {%1, %2};\n" ::"r"(addr), "f"(lo), "f"(hi) : "memory");
}

#if defined(BANDJIT_USE_FP16) || defined(BANDJIT_USE_BF16)
// Common part of the 16-bit policies: fragments are 32-bit words of two elements.
template <class T> struct Mma16Base {
  static constexpr int kK = 16;
  struct AFrag { u32 r[4]; };
  struct BFrag { u32 r[2]; };
  // A (16 x 16) at rows row0.., columns k0.. of a row-major tile.
  static __device__ __forceinline__ void load_a(AFrag& a, const T* s, int ld, int row0, int k0) {
    const int g = lane_id() >> 2, t = lane_id() & 3;
    const T* p = s + (row0 + g) * ld + k0 + 2 * t;
    a.r[0] = *reinterpret_cast<const u32*>(p);
    a.r[1] = *reinterpret_cast<const u32*>(p + 8 * ld);
    a.r[2] = *reinterpret_cast<const u32*>(p + 8);
    a.r[3] = *reinterpret_cast<const u32*>(p + 8 * ld + 8);
  }
  // B (16 x 8) where the tile stores B transposed: row n holds B[:, n] (K rows of Q·Kᵀ).
  static __device__ __forceinline__ void load_b_nk(BFrag& b, const T* s, int ld, int n0, int k0) {
    const int g = lane_id() >> 2, t = lane_id() & 3;
    const T* p = s + (n0 + g) * ld + k0 + 2 * t;
    b.r[0] = *reinterpret_cast<const u32*>(p);
    b.r[1] = *reinterpret_cast<const u32*>(p + 8);
  }
  // Two B fragments (k-steps k0 and k0 + 16) of the tile that stores B transposed, with
  // one ldmatrix.x4: lanes 8q … 8q+7 address rows n0 … n0+7 at column k0 + 8q.
  // Rows must start on 16-byte boundaries.
  static __device__ __forceinline__ void load_b_nk_x2(BFrag& b0, BFrag& b1, const T* s, int ld, int n0, int k0) {
    const T* p = s + (n0 + (lane_id() & 7)) * ld + k0 + 8 * (lane_id() >> 3);
    ldsm_x4(smem_addr(p), b0.r[0], b0.r[1], b1.r[0], b1.r[1]);
  }
  // Two B fragments (n-tiles n0 and n0 + 8) of a row-major [k][n] tile with one
  // ldmatrix.x4.trans: lanes 0–15 address rows k0 … k0+15 at column n0, lanes 16–31 the
  // same rows at n0 + 8. Rows must start on 16-byte boundaries.
  static __device__ __forceinline__ void load_b_kn_x2(BFrag& b0, BFrag& b1, const T* s, int ld, int k0, int n0) {
    const T* p = s + (k0 + (lane_id() & 15)) * ld + n0 + 8 * (lane_id() >> 4);
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(b0.r[0]), "=r"(b0.r[1]), "=r"(b1.r[0]), "=r"(b1.r[1])
                 : "r"(smem_addr(p)));
  }
  // B (16 x 8) from a row-major [k][n] tile (V of P·V), through ldmatrix.trans.
  // Rows must start on 16-byte boundaries.
  static __device__ __forceinline__ void load_b_kn(BFrag& b, const T* s, int ld, int k0, int n0) {
    const T* p = s + (k0 + (lane_id() & 15)) * ld + n0;
    const unsigned addr = static_cast<unsigned>(__cvta_generic_to_shared(p));
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0, %1}, [%2];\n"
                 : "=r"(b.r[0]), "=r"(b.r[1])
                 : "r"(addr));
  }
};
#endif

#if defined(BANDJIT_USE_FP16)
template <> struct MmaOps<__half> : Mma16Base<__half> {
  static __device__ __forceinline__ void mma(float c[4], const AFrag& a, const BFrag& b) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%0,%1,%2,%3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a.r[0]), "r"(a.r[1]), "r"(a.r[2]), "r"(a.r[3]), "r"(b.r[0]), "r"(b.r[1]));
  }
};
#endif

#if defined(BANDJIT_USE_BF16)
template <> struct MmaOps<__nv_bfloat16> : Mma16Base<__nv_bfloat16> {
  static __device__ __forceinline__ void mma(float c[4], const AFrag& a, const BFrag& b) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%0,%1,%2,%3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a.r[0]), "r"(a.r[1]), "r"(a.r[2]), "r"(a.r[3]), "r"(b.r[0]), "r"(b.r[1]));
  }
};
#endif

// float32: 3xTF32. Each operand is carried as (big, small) with big = tf32(x),
// small = tf32(x − big); a·b ≈ big·big + big·small + small·big.
template <> struct MmaOps<float> {
  static constexpr int kK = 8;
  struct AFrag { u32 big[4], small[4]; };
  struct BFrag { u32 big[2], small[2]; };

  static __device__ __forceinline__ void split(float x, u32& big, u32& small) {
    asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(big) : "f"(x));
    const float rest = x - __uint_as_float(big);
    asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(small) : "f"(rest));
  }
  static __device__ __forceinline__ void load_a(AFrag& a, const float* s, int ld, int row0, int k0) {
    const int g = lane_id() >> 2, t = lane_id() & 3;
    const float* p = s + (row0 + g) * ld + k0 + t;
    split(p[0], a.big[0], a.small[0]);
    split(p[8 * ld], a.big[1], a.small[1]);
    split(p[4], a.big[2], a.small[2]);
    split(p[8 * ld + 4], a.big[3], a.small[3]);
  }
  static __device__ __forceinline__ void load_b_nk(BFrag& b, const float* s, int ld, int n0, int k0) {
    const int g = lane_id() >> 2, t = lane_id() & 3;
    const float* p = s + (n0 + g) * ld + k0 + t;
    split(p[0], b.big[0], b.small[0]);
    split(p[4], b.big[1], b.small[1]);
  }
  static __device__ __forceinline__ void load_b_kn(BFrag& b, const float* s, int ld, int k0, int n0) {
    const int g = lane_id() >> 2, t = lane_id() & 3;
    const float* p = s + (k0 + t) * ld + n0 + g;
    split(p[0], b.big[0], b.small[0]);
    split(p[4 * ld], b.big[1], b.small[1]);
  }
  static __device__ __forceinline__ void mma1(float c[4], const u32 a[4], const u32 b[2]) {
    asm volatile(
        "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%0,%1,%2,%3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  }
  static __device__ __forceinline__ void mma(float c[4], const AFrag& a, const BFrag& b) {
    mma1(c, a.small, b.big);  // small terms first: they are added before the large one
    mma1(c, a.big, b.small);
    mma1(c, a.big, b.big);
  }
};

}  // namespace bandjit
