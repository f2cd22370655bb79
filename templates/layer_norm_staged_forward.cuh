// bandjit/layer_norm_staged_forward.cuh — layer_norm forward for long rows on sm_90: each
// block's slice of x arrives in shared memory by bulk copies, kStages rows ahead, and its
// weights and bias stay in registers for all the rows the block takes. The register kernel
// (layer_norm.cuh) holds one row a cluster, re-reads its weights from the L2 for every row
// after the second reduction, and has no loads in flight across the reductions' barriers
// (16-bit H = 65536: 73 % of the copy bandwidth, bench/results/2026-12-03-layer-norm-row-pairs).
// Formulas as layer_norm.cuh (docs/layer_norm.md):
//   mean = Σx/H, rstd = 1/sqrt(Σ(x − mean)²/H + ε), y = (x − mean)·rstd·w + b
// Thread t owns pieces t, t + T, … (V elements each) of the block's HS columns in every row.
// It copies them into registers as it first reads them, so a stage is refilled as soon as
// the block's first reduction shows every thread has read it; the squared deviations (no
// E[x²] − E[x]² cancellation) and y come from the registers. With kClusterBlocks = CB > 1 a
// row's CB slices go to the blocks of a cluster (without clusters — the emulator — each
// block also reads the other slices from global memory).
#pragma once

#include "bandjit/layer_norm_staged.cuh"

namespace bandjit {

template <class Cfg>
__device__ __forceinline__ void layer_norm_forward_staged(const typename Cfg::T* __restrict__ x,
                                                          const float* __restrict__ weight,
                                                          const float* __restrict__ bias,
                                                          typename Cfg::T* __restrict__ y, float* __restrict__ mean_out,
                                                          float* __restrict__ rstd_out, float* smem) {
  using S = ln::StagedShape<Cfg, 1>;
  using T = typename S::T;
  using Raw = typename S::Raw;
  constexpr int H = S::H, HS = S::HS, CB = S::CB, V = S::V, TH = S::TH, NV = S::NV, ST = S::ST;
  constexpr int ITER = Cfg::kRowIterations;
  static_assert(Cfg::kSharedBytes == S::kSharedBytes, "the generator's layout is the template's");
  const int tid = threadIdx.x;
  const int rank = row_block_rank<CB>();
  const int col0 = rank * HS;
  const i64 first_row = i64(blockIdx.x / CB) * ITER;
  unsigned char* bytes = reinterpret_cast<unsigned char*>(smem);
  unsigned long long* bars = reinterpret_cast<unsigned long long*>(bytes + S::kBarrierOffset);
  auto stage = [&](int s) { return reinterpret_cast<const Raw*>(bytes + S::kStageOffset + s * S::kSliceBytes); };

  // Row it of this block into stage it % ST (thread 0); rows past the last leave it empty.
  auto issue = [&](int it) {
    const int s = it % ST;
    const i64 row = first_row + it;
    if (row < Cfg::kRows) {
      barrier_expect_bytes(&bars[s], S::kSliceBytes);
      bulk_load(const_cast<Raw*>(stage(s)), x + row * H + col0, S::kSliceBytes, &bars[s]);
    } else {
      barrier_arrive(&bars[s]);
    }
  };
  if (tid == 0) {
#pragma unroll
    for (int s = 0; s < ST; ++s) barrier_init(&bars[s], 1);
  }
  __syncthreads();
  if (tid == 0) {
#pragma unroll
    for (int s = 0; s < ST; ++s)
      if (s < ITER) issue(s);
  }

  // Weight and bias of this thread's columns, read once: [piece][element].
  float w[Cfg::kWeight ? NV : 1][V], b[Cfg::kBias ? NV : 1][V];
#pragma unroll
  for (int e = 0; e < NV; ++e) {
    const int col = col0 + (e * TH + tid) * V;
    if constexpr (Cfg::kWeight) ln::load_floats<V>(weight + col, w[e]);
    if constexpr (Cfg::kBias) ln::load_floats<V>(bias + col, b[e]);
  }
  // Sums over the other slices of a cluster row, read from global memory (no clusters only).
  auto other_slices = [&](float& acc, i64 row, bool squares, float center) {
#if !defined(BANDJIT_CLUSTERS)
    if constexpr (CB > 1) {
      if (row >= Cfg::kRows) return;
      for (int r2 = 0; r2 < CB; ++r2) {
        if (r2 == rank) continue;
        for (int e = 0; e < NV; ++e) {
          float v[V];
          ln::unpack<V, T>(*reinterpret_cast<const Raw*>(x + row * H + r2 * HS + (e * TH + tid) * V), v);
          for (int c = 0; c < V; ++c) acc += squares ? (v[c] - center) * (v[c] - center) : v[c];
        }
      }
    }
#else
    (void)acc, (void)row, (void)squares, (void)center;
#endif
  };

#pragma unroll 1
  for (int it = 0; it < ITER; ++it) {
    const int s = it % ST;
    const i64 row = first_row + it;
    const bool active = row < Cfg::kRows;
    barrier_wait(&bars[s], (it / ST) & 1);

    Raw raw[NV];
    float sum = 0.f;
#pragma unroll
    for (int e = 0; e < NV; ++e) {
      raw[e] = stage(s)[e * TH + tid];
      float v[V];
      ln::unpack<V, T>(raw[e], v);
#pragma unroll
      for (int c = 0; c < V; ++c) sum += v[c];
    }
    if (!active) sum = 0.f;  // a row past the last: its stage was left as it was
    other_slices(sum, row, false, 0.f);
#pragma unroll
    for (int e = 0; e < NV; ++e) opaque(raw[e]);  // convert again after the reduction
    const float2 block_sum = ln::group_sum<TH>(make_float2(sum, 0.f), smem);
    // Every thread has read stage s into registers (the reduction's barrier; a one-warp block
    // meets at __syncwarp): refill it. The proxy fence orders those reads before the copy.
    if constexpr (TH == 32) __syncwarp();
    if (tid == 0 && it + ST < ITER) {
      fence_proxy_async();
      issue(it + ST);
    }
    const float mean = ln::cluster_sum<CB>(block_sum, smem, smem + S::kSlots, 0).x / float(H);

    float sq = 0.f;
#pragma unroll
    for (int e = 0; e < NV; ++e) {
      float v[V];
      ln::unpack<V, T>(raw[e], v);
#pragma unroll
      for (int c = 0; c < V; ++c) sq += (v[c] - mean) * (v[c] - mean);
    }
    if (!active) sq = 0.f;
    other_slices(sq, row, true, mean);
#pragma unroll
    for (int e = 0; e < NV; ++e) opaque(raw[e]);
    const float var = ln::cluster_sum<CB>(ln::group_sum<TH>(make_float2(sq, 0.f), smem), smem, smem + S::kSlots, 1).x;
    const float rstd = rsqrtf(var / float(H) + Cfg::kEpsilon);
    if (!active) continue;  // the block's (cluster's) reductions are done for this row

#pragma unroll
    for (int e = 0; e < NV; ++e) {
      const T* in = reinterpret_cast<const T*>(&raw[e]);
      Raw out_raw;
      T* out = reinterpret_cast<T*>(&out_raw);
#pragma unroll
      for (int c = 0; c < V; ++c) {
        float v = (to_float(in[c]) - mean) * rstd;
        if constexpr (Cfg::kWeight) v *= w[e][c];
        if constexpr (Cfg::kBias) v += b[e][c];
        out[c] = from_float<T>(v);
      }
      *reinterpret_cast<Raw*>(y + row * H + col0 + (e * TH + tid) * V) = out_raw;
    }
    if (tid == 0 && rank == 0) mean_out[row] = mean, rstd_out[row] = rstd;
  }
  ln::cluster_finish<CB>();
}

}  // namespace bandjit
