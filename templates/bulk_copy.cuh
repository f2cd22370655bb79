// bandjit/bulk_copy.cuh — one-dimensional bulk copies from global to shared memory that
// complete on an mbarrier (sm_90: cp.async.bulk and mbarrier, PTX ISA "Data movement:
// cp.async.bulk" and "Parallel synchronization: mbarrier"). One thread issues a stage's
// copies; every thread then waits on the stage's barrier phase. Raw PTX, so NVRTC needs no
// header. The SIMT emulator has its own version (tests/sim/bandjit/bulk_copy.cuh) whose
// copies land at once. Below sm_90 the functions exist (templates name them) but are empty:
// the generator picks no kernel that calls them for those targets.
#pragma once

#include "bandjit/common.cuh"

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define BANDJIT_BULK_ASM(...) asm volatile(__VA_ARGS__)
#else
#define BANDJIT_BULK_ASM(...)
#endif

namespace bandjit {

__device__ __forceinline__ unsigned shared_address(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

// An mbarrier expecting `arrivals` arrivals a phase; the fence makes the initialisation
// visible to the async proxy (the copies' complete_tx) and the cluster. The caller then
// synchronises the block before any thread waits or issues.
__device__ __forceinline__ void barrier_init(unsigned long long* bar, unsigned arrivals) {
  BANDJIT_BULK_ASM("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(shared_address(bar)), "r"(arrivals) : "memory");
  BANDJIT_BULK_ASM("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}

// This thread's arrival, announcing `bytes` still to land from copies on the barrier.
__device__ __forceinline__ void barrier_expect_bytes(unsigned long long* bar, unsigned bytes) {
  BANDJIT_BULK_ASM("{\n .reg .b64 state;\n mbarrier.arrive.expect_tx.shared::cta.b64 state, [%0], %1;\n}\n" ::"r"(
                       shared_address(bar)),
                   "r"(bytes)
                   : "memory");
}

// Waits until the barrier's phase of parity `parity` has completed (its bytes have landed).
__device__ __forceinline__ void barrier_wait(unsigned long long* bar, unsigned parity) {
  BANDJIT_BULK_ASM(
      "{\n .reg .pred done;\n"
      "wait_%=:\n"
      " mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
      " @!done bra wait_%=;\n}\n" ::"r"(shared_address(bar)),
      "r"(parity)
      : "memory");
}

// Orders this thread's earlier shared-memory accesses (generic proxy) before its later bulk
// copies (async proxy), which may overwrite what was read.
__device__ __forceinline__ void fence_proxy_async() { BANDJIT_BULK_ASM("fence.proxy.async.shared::cta;\n" ::: "memory"); }

// Copies `bytes` (a multiple of 16, below 2^20; both addresses 16-byte aligned) from global
// to shared memory; they count towards `bar`'s current phase.
__device__ __forceinline__ void bulk_load(void* dst, const void* src, unsigned bytes, unsigned long long* bar) {
  BANDJIT_BULK_ASM(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(
          shared_address(dst)),
      "l"(src), "r"(bytes), "r"(shared_address(bar))
      : "memory");
}

}  // namespace bandjit

#undef BANDJIT_BULK_ASM
