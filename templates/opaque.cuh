// bandjit/opaque.cuh — opaque(r): tells the compiler a register changed; no instruction is
// emitted. Kernels that hold raw loaded pieces across a reduction call it so that the
// phase after the reduction converts them again, instead of keeping every converted float
// alive across the barrier (twice the registers, or spills).
#pragma once

#include "bandjit/common.cuh"

namespace bandjit {

__device__ __forceinline__ void opaque(uint4& r) {
#if defined(__CUDA_ARCH__)
  asm volatile("" : "+r"(r.x), "+r"(r.y), "+r"(r.z), "+r"(r.w));
#endif
}
__device__ __forceinline__ void opaque(unsigned long long& r) {
#if defined(__CUDA_ARCH__)
  asm volatile("" : "+l"(r));
#endif
}
__device__ __forceinline__ void opaque(unsigned& r) {
#if defined(__CUDA_ARCH__)
  asm volatile("" : "+r"(r));
#endif
}
__device__ __forceinline__ void opaque(unsigned short& r) {
#if defined(__CUDA_ARCH__)
  asm volatile("" : "+h"(r));
#endif
}

// opaque(r), ordered after this thread's earlier stores ("memory"): a pass over held pieces
// then converts one piece after another instead of all of them at once.
template <class R>
__device__ __forceinline__ void opaque_after_stores(R& r) {
#if defined(__CUDA_ARCH__)
  asm volatile("" ::: "memory");
#endif
  opaque(r);
}

// p, as a value the compiler cannot see through: loads through it after the call are issued
// again (from L1) rather than kept in registers since the loads before it.
template <class T>
__device__ __forceinline__ T* opaque_pointer(T* p) {
#if defined(__CUDA_ARCH__)
  asm volatile("" : "+l"(p));
#endif
  return p;
}

}  // namespace bandjit
