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
