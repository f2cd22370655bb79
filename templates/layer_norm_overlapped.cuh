// bandjit/layer_norm_overlapped.cuh — the staged layer_norm_backward (sm_90, rows through
// shared memory by bulk copies, layer_norm_staged.cuh) with consecutive rows overlapped.
// A block (cluster) takes its rows one after another, and each row's cluster reduction is a
// barrier whose latency the staged kernel waits out row by row (16-bit H = 65536: 65–70 % of
// the copy bandwidth, bench/results/2026-12-03-layer-norm-staged-forward). Here the
// reduction is split: a row's block sum is published (slot write, barrier arrive), the next
// row's first pass runs, and only then is the row's cluster sum gathered (barrier wait, the
// peers' slots) and its dx written. Each thread holds two rows' pieces of dy and x in
// registers (this row's and the next's), so a stage is refilled as soon as its first pass is
// done. Formulas of layer_norm.cuh (docs/layer_norm.md): Σg and Σg·x̂ a row. Without clusters
// (the emulator) each block also reads the other slices from global memory.
#pragma once

#include "bandjit/layer_norm_staged.cuh"

namespace bandjit {
namespace ln {

// The reductions of an overlapped kernel over the shared scratch of StagedShape (kOverlap):
// [2 parities][warps] float2 partial sums, a sink word a warp, then 4 floats of cluster slots.
template <class S>
struct Overlap {
  static constexpr int W = S::kWarps, CB = S::CB;
  float2* part;
  float* sink;
  float* slots;

  __device__ __forceinline__ explicit Overlap(float* smem)
      : part(reinterpret_cast<float2*>(smem)), sink(smem + 4 * W), slots(smem + S::kSlots) {}

  // The block's sum of v, one __syncthreads: the scratch alternates by parity, so a parity is
  // written again only after the next reduction's barrier, which every thread reaches after
  // reading it. A one-warp block reduces by shuffles alone (no memory ordered).
  __device__ __forceinline__ float2 block_sum(float2 v, int parity) {
    v = group_sum<32>(v, nullptr);  // the warp's sum (shuffles; no scratch for one warp)
    if constexpr (W > 1) {
      if ((threadIdx.x & 31) == 0) part[parity * W + (threadIdx.x >> 5)] = v;
      __syncthreads();
      v = make_float2(0.f, 0.f);
#pragma unroll
      for (int w = 0; w < W; ++w) v.x += part[parity * W + w].x, v.y += part[parity * W + w].y;
    }
    return v;
  }

  // The block's value for its peers: thread 0 writes the slot of `parity`, then every thread
  // arrives at the cluster barrier after a release of the block's shared memory.
  __device__ __forceinline__ void publish(float2 block, int parity) {
#if defined(BANDJIT_CLUSTERS)
    if constexpr (CB > 1) {
      if (threadIdx.x == 0) slots[2 * parity] = block.x, slots[2 * parity + 1] = block.y;
      cluster_arrive_shared_release();
    }
#else
    (void)block, (void)parity;
#endif
  }

  // Waits for every peer's publish of `parity` and returns the sum of their slots; without
  // clusters, `block` (the caller reduced the whole row). Each warp stores what it read to
  // its sink word, so those reads have returned before its next arrive (a peer rewrites the
  // slot two rows later; the reasoning of cluster_sum in layer_norm.cuh).
  __device__ __forceinline__ float2 gather(float2 block, int parity) {
#if defined(BANDJIT_CLUSTERS)
    if constexpr (CB > 1) {
      cluster_wait();
      float2 t = make_float2(0.f, 0.f);
#pragma unroll
      for (int r = 0; r < CB; ++r) t.x += cluster_load(slots + 2 * parity, r), t.y += cluster_load(slots + 2 * parity + 1, r);
      if ((threadIdx.x & 31) == 0) sink[threadIdx.x >> 5] = t.x + t.y;
      return t;
    }
#else
    (void)parity;
#endif
    return block;
  }
};

}  // namespace ln

// Cfg as the staged backward's (layer_norm_staged.cuh), kOverlap true.
template <class Cfg>
__device__ __forceinline__ void layer_norm_backward_overlapped(const typename Cfg::T* __restrict__ dy,
                                                               const typename Cfg::T* __restrict__ x,
                                                               const float* __restrict__ mean_in,
                                                               const float* __restrict__ rstd_in,
                                                               const float* __restrict__ weight,
                                                               typename Cfg::T* __restrict__ dx,
                                                               float* __restrict__ dweight,
                                                               float* __restrict__ dbias, float* smem) {
  using S = ln::StagedShape<Cfg>;
  using Raw = typename S::Raw;
  constexpr int H = S::H, TH = S::TH, NV = S::NV, ST = S::ST;
  static_assert(Cfg::kOverlap, "the overlapped layout (StagedShape's scratch)");
  static_assert(Cfg::kSharedBytes == S::kSharedBytes, "the generator's layout is the template's");
  ln::StagedRows<Cfg> rows(dy, x, mean_in, rstd_in, weight, smem, true);  // statistics from lanes
  ln::Overlap<S> red(smem);
  const int tid = threadIdx.x;

  // Row it's first pass (rows in order): its pieces into hdy/hx, its (mean, rstd), the block's
  // (Σg, Σg·x̂); its stage refilled.
  auto first_pass = [&](int it, Raw (&hdy)[NV], Raw (&hx)[NV], float2& stat) {
    const int s = it % ST;
    stat = rows.template stats_at<true>(it);
    rows.wait(it);
    float2 sums = make_float2(0.f, 0.f);
#pragma unroll
    for (int e = 0; e < NV; ++e) {
      hdy[e] = rows.stage_dy(s)[e * TH + tid], hx[e] = rows.stage_x(s)[e * TH + tid];
      rows.add_sums(hdy[e], hx[e], e, stat, sums);
    }
    rows.add_other_slices(it, stat, sums);
#pragma unroll
    for (int e = 0; e < NV; ++e) opaque(hdy[e]), opaque(hx[e]);  // converted again in the second pass
    const float2 block = red.block_sum(sums, it & 1);
    if constexpr (TH == 32) __syncwarp();  // every thread has read stage s: refill it
    rows.refill(it);
    return block;
  };

  Raw cdy[NV], cx[NV], ndy[NV], nx[NV];
  float2 cstat, nstat = make_float2(0.f, 0.f);
  float2 cblock = first_pass(0, cdy, cx, cstat);
  red.publish(cblock, 0);
#pragma unroll 1
  for (int it = 0; it < rows.count; ++it) {  // the same count in every block of a cluster
    const bool more = it + 1 < rows.count;
    float2 nblock = make_float2(0.f, 0.f);
    if (more) nblock = first_pass(it + 1, ndy, nx, nstat);
    const float2 total = red.gather(cblock, it & 1);
    if (more) red.publish(nblock, (it + 1) & 1);
    const float mean_g = total.x / float(H), mean_gx = total.y / float(H);
#pragma unroll
    for (int e = 0; e < NV; ++e) rows.write_dx(dx, it, e, cdy[e], cx[e], cstat, mean_g, mean_gx);
#pragma unroll
    for (int e = 0; e < NV; ++e) cdy[e] = ndy[e], cx[e] = nx[e];
    cstat = nstat, cblock = nblock;
  }
  rows.add_column_sums(dweight, dbias);
  ln::cluster_finish<S::CB>();
}

}  // namespace bandjit
