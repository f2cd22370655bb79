// bandjit/layer_norm_staged.cuh — layer_norm_backward for long rows on sm_90: each block's
// slice of a row (dy and x) arrives in shared memory by bulk copies, kStages rows ahead, so
// the SM's loads stay in flight while the threads reduce and write the rows before them
// (the register kernel of layer_norm.cuh holds one row and waits at every reduction).
// Formulas as layer_norm.cuh (docs/layer_norm.md):
//   x̂ = (x − mean)·rstd, g = dy·w, dx = rstd·(g − Σg/H − x̂·Σ(g·x̂)/H),
//   dweight += Σ_rows dy·x̂, dbias += Σ_rows dy
// Thread t owns pieces t, t + T, … (V elements each) of the block's HS columns in every
// row, so the weights and the column sums stay in its registers; the block adds the sums
// once at its end. With kClusterBlocks = CB > 1 a row's CB slices go to the blocks of a
// cluster, whose row sums meet in distributed shared memory (without clusters — the
// emulator — each block also reads the other slices from global memory).
#pragma once

#include "bandjit/bulk_copy.cuh"
#include "bandjit/cluster.cuh"
#include "bandjit/layer_norm.cuh"

namespace bandjit {
namespace ln {

// Cfg: T, kRows, kHidden, kWeight, kBias, kVec (V), kThreads (T), kPiecesPerThread (NV,
// with NV·T·V = HS), kClusterBlocks, kStages, kRowIterations, kOverlap, kSharedBytes.
template <class Cfg>
struct StagedShape {
  using T = typename Cfg::T;
  static constexpr int H = Cfg::kHidden, CB = Cfg::kClusterBlocks, HS = H / CB, V = Cfg::kVec;
  static constexpr int TH = Cfg::kThreads, NV = Cfg::kPiecesPerThread, ST = Cfg::kStages;
  static_assert(ST >= 2, "a stage is refilled only after the next row's wait");
  static_assert(2 * HS * sizeof(T) < (1u << 20), "an mbarrier phase counts fewer than 2^20 bytes");
  static_assert(H % CB == 0 && NV * TH * V == HS, "every thread holds NV whole pieces of the slice");
  static_assert(TH % 32 == 0 && V * sizeof(T) == 16, "whole warps, 16-byte pieces");
  // Bulk copies move 16-byte multiples between 16-byte aligned addresses: every row's slice.
  static_assert((H * sizeof(T)) % 16 == 0 && (HS * sizeof(T)) % 16 == 0, "16-byte slices");
  using Raw = uint4;
  static constexpr unsigned kSliceBytes = HS * sizeof(T);
  // Floats of reduction scratch (as Shape's: 2 a warp; the overlapped kernel's: 2 parities of
  // 2 a warp, then a sink word a warp, layer_norm_overlapped.cuh) and 4 of cluster slots, then
  // the stages' barriers, then the stages: [dy slice | x slice] each, 16-byte aligned.
  static constexpr int kWarps = TH / 32;
  static constexpr int kSlots = ((Cfg::kOverlap ? 5 : 2) * kWarps + 3) / 4 * 4;
  static constexpr unsigned kBarrierOffset = (kSlots + 4) * 4;
  static constexpr unsigned kStageOffset = (kBarrierOffset + 8 * ST + 15) / 16 * 16;
  static constexpr unsigned kSharedBytes = kStageOffset + ST * 2 * kSliceBytes;
};

}  // namespace ln

template <class Cfg>
__device__ __forceinline__ void layer_norm_backward_staged(const typename Cfg::T* __restrict__ dy,
                                                           const typename Cfg::T* __restrict__ x,
                                                           const float* __restrict__ mean_in,
                                                           const float* __restrict__ rstd_in,
                                                           const float* __restrict__ weight,
                                                           typename Cfg::T* __restrict__ dx,
                                                           float* __restrict__ dweight, float* __restrict__ dbias,
                                                           float* smem) {
  using S = ln::StagedShape<Cfg>;
  using T = typename S::T;
  using Raw = typename S::Raw;
  constexpr int H = S::H, HS = S::HS, CB = S::CB, V = S::V, TH = S::TH, NV = S::NV, ST = S::ST;
  constexpr int ITER = Cfg::kRowIterations;
  static_assert(Cfg::kSharedBytes == S::kSharedBytes, "the generator's layout is the template's");
  static_assert(!Cfg::kOverlap, "overlapped rows: layer_norm_backward_overlapped");
  const int tid = threadIdx.x;
  const int rank = row_block_rank<CB>();
  const int col0 = rank * HS;
  const i64 first_row = i64(blockIdx.x / CB) * ITER;
  unsigned char* bytes = reinterpret_cast<unsigned char*>(smem);
  unsigned long long* bars = reinterpret_cast<unsigned long long*>(bytes + S::kBarrierOffset);
  auto stage_dy = [&](int s) { return reinterpret_cast<const Raw*>(bytes + S::kStageOffset + s * 2 * S::kSliceBytes); };
  auto stage_x = [&](int s) { return stage_dy(s) + S::kSliceBytes / 16; };

  // Row it of this block into stage it % ST (thread 0); rows past the last leave it empty.
  auto issue = [&](int it) {
    const int s = it % ST;
    const i64 row = first_row + it;
    if (row < Cfg::kRows) {
      barrier_expect_bytes(&bars[s], 2 * S::kSliceBytes);
      bulk_load(const_cast<Raw*>(stage_dy(s)), dy + row * H + col0, S::kSliceBytes, &bars[s]);
      bulk_load(const_cast<Raw*>(stage_x(s)), x + row * H + col0, S::kSliceBytes, &bars[s]);
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

  // Weights and column sums of this thread's columns: [piece][element].
  float w[Cfg::kWeight ? NV : 1][V], sum_w[Cfg::kWeight ? NV : 1][V], sum_b[Cfg::kBias ? NV : 1][V];
#pragma unroll
  for (int e = 0; e < NV; ++e) {
    if constexpr (Cfg::kWeight) ln::load_floats<V>(weight + col0 + (e * TH + tid) * V, w[e]);
#pragma unroll
    for (int c = 0; c < V; ++c) {
      if constexpr (Cfg::kWeight) sum_w[e][c] = 0.f;
      if constexpr (Cfg::kBias) sum_b[e][c] = 0.f;
    }
  }
  auto weight_of = [&](int e, int c) { return Cfg::kWeight ? w[Cfg::kWeight ? e : 0][c] : 1.f; };
  // Without a cluster, each row's mean and rstd come 32 rows at a time over a warp's lanes
  // (lane l: the row l after the batch's first), the next 32 loaded while these serve, so a
  // row starts without waiting on a global load (H200: 16-bit H = 5120 85 → 87–88 %, 16384 level);
  // a cluster's blocks load their row's own (with the lanes, H = 65536 measured 60 → 56 %;
  // bench/results/2026-12-03-layer-norm-shared-weights).
  constexpr bool kStatsAhead = CB == 1;
  const int lane = tid & 31;
  auto stats_of = [&](int it) {
    const i64 row = first_row + it;
    return kStatsAhead && it < ITER && row < Cfg::kRows ? make_float2(mean_in[row], rstd_in[row])
                                                        : make_float2(0.f, 0.f);
  };
  float2 stats = stats_of(lane), stats_next = stats_of(32 + lane);

#pragma unroll 1
  for (int it = 0; it < ITER; ++it) {
    const int s = it % ST;
    const i64 row = first_row + it;
    const bool active = row < Cfg::kRows;
    float mean, rstd;
    if constexpr (kStatsAhead) {
      if (it % 32 == 0 && it > 0) stats = stats_next, stats_next = stats_of(it + 32 + lane);
      mean = __shfl_sync(0xffffffffu, stats.x, it % 32), rstd = __shfl_sync(0xffffffffu, stats.y, it % 32);
    } else {
      mean = active ? mean_in[row] : 0.f, rstd = active ? rstd_in[row] : 0.f;
    }
    barrier_wait(&bars[s], (it / ST) & 1);

    float2 sums = make_float2(0.f, 0.f);  // Σg, Σg·x̂
#pragma unroll
    for (int e = 0; e < NV; ++e) {
      const int p = e * TH + tid;
      const Raw rdy = stage_dy(s)[p], rx = stage_x(s)[p];
      const T* in_dy = reinterpret_cast<const T*>(&rdy);
      const T* in_x = reinterpret_cast<const T*>(&rx);
#pragma unroll
      for (int c = 0; c < V; ++c) {
        const float g = to_float(in_dy[c]) * weight_of(e, c);
        sums.x += g, sums.y += g * ((to_float(in_x[c]) - mean) * rstd);
      }
    }
#if !defined(BANDJIT_CLUSTERS)
    if constexpr (CB > 1) {  // no clusters: the other slices, read from global memory
      for (int r2 = 0; r2 < CB && active; ++r2) {
        if (r2 == rank) continue;
        for (int e = 0; e < NV; ++e) {
          const int col = r2 * HS + (e * TH + tid) * V;
          for (int c = 0; c < V; ++c) {
            const float g = to_float(dy[row * H + col + c]) * (Cfg::kWeight ? weight[col + c] : 1.f);
            sums.x += g, sums.y += g * ((to_float(x[row * H + col + c]) - mean) * rstd);
          }
        }
      }
    }
#endif
    const float2 total = ln::cluster_sum<CB>(ln::group_sum<TH>(sums, smem), smem, smem + S::kSlots, it & 1);
    // Every thread has passed this row's barriers, so stage (it − 1) % ST is read: refill it.
    // A one-warp block's reduction is shuffles only, which order no memory: its lanes meet at
    // __syncwarp first. The proxy fence orders the generic reads before the async-proxy copy.
    if constexpr (TH == 32 && CB == 1) __syncwarp();
    if (tid == 0 && it >= 1 && it - 1 + ST < ITER) {
      fence_proxy_async();
      issue(it - 1 + ST);
    }
    if (!active) continue;  // the block's (cluster's) reductions are done for this row
    const float mean_g = total.x / float(H), mean_gx = total.y / float(H);

#pragma unroll
    for (int e = 0; e < NV; ++e) {
      const int p = e * TH + tid;
      const Raw rdy = stage_dy(s)[p], rx = stage_x(s)[p];
      const T* in_dy = reinterpret_cast<const T*>(&rdy);
      const T* in_x = reinterpret_cast<const T*>(&rx);
      Raw out_raw;
      T* out = reinterpret_cast<T*>(&out_raw);
#pragma unroll
      for (int c = 0; c < V; ++c) {
        const float d = to_float(in_dy[c]), xh = (to_float(in_x[c]) - mean) * rstd;
        out[c] = from_float<T>(rstd * (d * weight_of(e, c) - mean_g - xh * mean_gx));
        if constexpr (Cfg::kWeight) sum_w[e][c] += d * xh;
        if constexpr (Cfg::kBias) sum_b[e][c] += d;
      }
      *reinterpret_cast<Raw*>(dx + row * H + col0 + p * V) = out_raw;
    }
  }

#pragma unroll
  for (int e = 0; e < NV; ++e) {
    const int col = col0 + (e * TH + tid) * V;
    if constexpr (Cfg::kWeight) ln::red_add<V>(dweight + col, sum_w[e]);
    if constexpr (Cfg::kBias) ln::red_add<V>(dbias + col, sum_b[e]);
  }
  ln::cluster_finish<CB>();
}

}  // namespace bandjit
