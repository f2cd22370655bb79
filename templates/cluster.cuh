// bandjit/cluster.cuh — the few thread-block-cluster operations of the row kernels (sm_90):
// the cluster barrier split into arrive and wait, and a load from a peer block's shared
// memory. Raw PTX, so no header beyond NVRTC's built-ins is needed. On older targets
// kClusters is false and none of this is compiled.
#pragma once

#include "bandjit/common.cuh"

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define BANDJIT_CLUSTERS 1
#endif

namespace bandjit {

#if defined(BANDJIT_CLUSTERS)
inline constexpr bool kClusters = true;

// Every thread of every block in the cluster arrives; release orders its earlier shared
// memory writes before the peers' acquire.
__device__ __forceinline__ void cluster_arrive() { asm volatile("barrier.cluster.arrive.release.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void cluster_wait() { asm volatile("barrier.cluster.wait.acquire.aligned;\n" ::: "memory"); }
// Without release: nothing read or written before it is ordered for the peers (ptxas
// compiles the release to MEMBAR.ALL.GPU, which also waits for every global store to be
// acknowledged). The "memory" clobber keeps NVVM from moving memory accesses across it.
__device__ __forceinline__ void cluster_arrive_relaxed() {
  asm volatile("barrier.cluster.arrive.relaxed.aligned;\n" ::: "memory");
}
// A release of this block's own shared-memory accesses only (.shared::cta: a slot it wrote
// for the peers, a scratch word), then a relaxed arrive: MEMBAR.ALL.CTA instead of
// MEMBAR.ALL.GPU. It does not order this block's reads of the peers' shared memory
// (.shared::cluster); callers that need those done first make a shared::cta store depend on
// them. The restricted fence needs PTX ISA 8.6 (CUDA 12.8); older NVRTCs get the full release.
__device__ __forceinline__ void cluster_arrive_shared_release() {
#if defined(__CUDACC_VER_MAJOR__) && (__CUDACC_VER_MAJOR__ > 12 || (__CUDACC_VER_MAJOR__ == 12 && __CUDACC_VER_MINOR__ >= 8))
  asm volatile("fence.release.sync_restrict::shared::cta.cluster;\n" ::: "memory");
  cluster_arrive_relaxed();
#else
  cluster_arrive();
#endif
}

// The float at `local` (this block's shared memory) in the block of cluster rank `rank`.
__device__ __forceinline__ float cluster_load(const float* local, int rank) {
  const unsigned addr = static_cast<unsigned>(__cvta_generic_to_shared(local));
  unsigned remote;
  float v;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(remote) : "r"(addr), "r"(rank));
  asm volatile("ld.shared::cluster.f32 %0, [%1];\n" : "=f"(v) : "r"(remote) : "memory");
  return v;
}
#endif

// A value from every block of a cluster without a cluster barrier: each block's thread 0
// writes its value into every peer's slot by st.async (PTX ISA 8.1, so NVRTC 12.1 or later;
// runtime/nvrtc_api.cpp refuses older ones), which completes on the peer's mbarrier, so a
// block waits only until its own slots are full and reads them from its own shared memory.
// Nothing reads a peer's shared memory, so a block may exit once its last exchange has
// completed (no exit barrier): every write into it has landed by then, and its own writes
// still in flight go to peers that wait for them. Slots and barriers alternate by round
// parity: a peer sends round r + 2 only after its round r + 1 completed, which needs this
// block's round r + 1 value, which thread 0 sends after a block barrier that follows every
// thread's reads of round r's slots. (No kernel takes a second round yet: that path has
// not run on a GPU.)
template <int CB>
struct ClusterMailbox {
  unsigned long long full[2];  // round parity p: completes when the CB − 1 peers' values have landed
  float2 slot[2][CB];          // slot[p][r]: rank r's value of a round of parity p
};

#if defined(BANDJIT_CLUSTERS)
// Every thread, before any exchange: the barriers exist before a peer may signal them (the
// cluster barrier this arrives on is waited for in round 0).
template <int CB>
__device__ __forceinline__ void mailbox_open(ClusterMailbox<CB>* box) {
  if (threadIdx.x == 0) {
#pragma unroll
    for (int p = 0; p < 2; ++p)
      asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;\n" ::"r"(static_cast<unsigned>(__cvta_generic_to_shared(&box->full[p])))
                   : "memory");
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
  cluster_arrive_relaxed();
}

// Every thread, rounds 0, 1, … in turn: sends v to every block of the cluster and returns this
// block's slots of the round, full (index: rank).
template <int CB>
__device__ __forceinline__ const float2* mailbox_exchange(ClusterMailbox<CB>* box, float2 v, int round) {
  if (round == 0) cluster_wait();  // the peers' barriers are initialised
  else __syncthreads();            // every thread has read round − 1's slots (see above)
  const int p = round & 1;
  const unsigned bar = static_cast<unsigned>(__cvta_generic_to_shared(&box->full[p]));
  if (threadIdx.x == 0) {
    unsigned rank;
    asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(rank));
    const unsigned slot = static_cast<unsigned>(__cvta_generic_to_shared(&box->slot[p][rank]));
#pragma unroll
    for (int r = 0; r < CB; ++r) {
      if (r == static_cast<int>(rank)) continue;
      unsigned peer_slot, peer_bar;
      asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(peer_slot) : "r"(slot), "r"(r));
      asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(peer_bar) : "r"(bar), "r"(r));
      asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.v2.b32 [%0], {%1, %2}, [%3];\n" ::"r"(peer_slot),
                   "r"(__float_as_uint(v.x)), "r"(__float_as_uint(v.y)), "r"(peer_bar)
                   : "memory");
    }
    box->slot[p][rank] = v;
    // The arrival (release) follows the own slot's store; the peers' bytes may land before it
    // (the transaction count may go below zero; the phase needs this arrival too).
    asm volatile("{\n .reg .b64 state;\n mbarrier.arrive.expect_tx.shared::cta.b64 state, [%0], %1;\n}\n" ::"r"(bar),
                 "r"((CB - 1) * 8)
                 : "memory");
  }
  // The wait's acquire stays at .cta scope (as CUTLASS's transaction barriers for copies from
  // other blocks): the bytes land in this block's shared memory and complete on its own
  // barrier. At .cluster scope ptxas adds CCTL.IVALL, which empties the L1 that layer_norm's
  // weights are read through.
  asm volatile(
      "{\n .reg .pred done;\n"
      "wait_%=:\n"
      " mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
      " @!done bra wait_%=;\n}\n" ::"r"(bar),
      "r"((round >> 1) & 1)
      : "memory");
  return box->slot[p];
}
#else
inline constexpr bool kClusters = false;
#endif

// This block's place among the `blocks` blocks that share one row (0 when a block holds
// whole rows): the grid puts a row's blocks next to each other.
template <int blocks>
__device__ __forceinline__ int row_block_rank() {
  return blocks > 1 ? int(blockIdx.x % blocks) : 0;
}

}  // namespace bandjit
