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

// What both staged kernels share, for thread threadIdx.x of a block whose slice of each row
// is columns [col0, col0 + HS): the ring of ST stages (each row's dy and x slice by bulk
// copies, completing on the stage's mbarrier; thread 0 issues them), the thread's weights
// and column sums (pieces e·T + t of the slice, the same in every row), and the rows' mean
// and rstd.
template <class Cfg>
struct StagedRows {
  using S = StagedShape<Cfg>;
  using T = typename S::T;
  using Raw = typename S::Raw;
  static constexpr int H = S::H, HS = S::HS, CB = S::CB, V = S::V, TH = S::TH, NV = S::NV, ST = S::ST;
  static constexpr int ITER = Cfg::kRowIterations;
  const T* __restrict__ dy;
  const T* __restrict__ x;
  const float* __restrict__ mean_in;
  const float* __restrict__ rstd_in;
  const float* __restrict__ weight;
  unsigned char* bytes;
  unsigned long long* bars;
  int tid, rank, col0;
  // This cluster's rows: `count` from first_row. The kRows rows split over the grid's
  // G = ⌈kRows / ITER⌉ clusters as evenly as they go (the first kRows mod G take one more), so
  // that fewer clusters end on the longest count and add their column sums all at once (the
  // 16-bit H = 65536 backward: 15 clusters of 68 or 69 rows, where 14 of 69 and one of 58 ran).
  i64 first_row;
  int count;
  float w[Cfg::kWeight ? NV : 1][V], sum_w[Cfg::kWeight ? NV : 1][V], sum_b[Cfg::kBias ? NV : 1][V];
  float2 stats, stats_next;  // lane l: the mean and rstd of row l of the current batch of 32 (and the next)

  // Initialises the stages' barriers and issues the first ST rows, reads the weights, zeroes
  // the column sums and, with `stats_ahead`, loads the first two batches of statistics.
  __device__ __forceinline__ StagedRows(const T* dy_, const T* x_, const float* mean_, const float* rstd_,
                                        const float* weight_, float* smem, bool stats_ahead)
      : dy(dy_), x(x_), mean_in(mean_), rstd_in(rstd_), weight(weight_),
        bytes(reinterpret_cast<unsigned char*>(smem)),
        bars(reinterpret_cast<unsigned long long*>(bytes + S::kBarrierOffset)),
        tid(threadIdx.x), rank(row_block_rank<CB>()), col0(rank * HS) {
    constexpr i64 G = (Cfg::kRows + ITER - 1) / ITER, kBase = Cfg::kRows / G, kExtra = Cfg::kRows % G;
    const i64 g = blockIdx.x / CB;
    first_row = g * kBase + (g < kExtra ? g : kExtra);
    count = int(kBase) + (g < kExtra ? 1 : 0);
    if (tid == 0) {
#pragma unroll
      for (int s = 0; s < ST; ++s) barrier_init(&bars[s], 1);
    }
    __syncthreads();
    if (tid == 0) {
#pragma unroll
      for (int s = 0; s < ST; ++s)
        if (s < count) issue(s);
    }
#pragma unroll
    for (int e = 0; e < NV; ++e) {
      if constexpr (Cfg::kWeight) load_floats<V>(weight + col0 + (e * TH + tid) * V, w[e]);
#pragma unroll
      for (int c = 0; c < V; ++c) {
        if constexpr (Cfg::kWeight) sum_w[e][c] = 0.f;
        if constexpr (Cfg::kBias) sum_b[e][c] = 0.f;
      }
    }
    const int lane = tid & 31;
    stats = stats_ahead ? stats_of(lane) : make_float2(0.f, 0.f);
    stats_next = stats_ahead ? stats_of(32 + lane) : make_float2(0.f, 0.f);
  }

  __device__ __forceinline__ const Raw* stage_dy(int s) const {
    return reinterpret_cast<const Raw*>(bytes + S::kStageOffset + s * 2 * S::kSliceBytes);
  }
  __device__ __forceinline__ const Raw* stage_x(int s) const { return stage_dy(s) + S::kSliceBytes / 16; }
  __device__ __forceinline__ bool active(int it) const { return it < count; }

  // Row it (< count) of this block into stage it % ST (thread 0).
  __device__ __forceinline__ void issue(int it) const {
    const int s = it % ST;
    const i64 row = first_row + it;
    barrier_expect_bytes(&bars[s], 2 * S::kSliceBytes);
    bulk_load(const_cast<Raw*>(stage_dy(s)), dy + row * H + col0, S::kSliceBytes, &bars[s]);
    bulk_load(const_cast<Raw*>(stage_x(s)), x + row * H + col0, S::kSliceBytes, &bars[s]);
  }
  // Waits until row it's stage has landed.
  __device__ __forceinline__ void wait(int it) const { barrier_wait(&bars[it % ST], (it / ST) & 1); }
  // Thread 0 refills row it's stage with row it + ST, once every thread has read it (the
  // caller's barrier). The proxy fence orders the generic reads before the async-proxy copy.
  __device__ __forceinline__ void refill(int it) const {
    if (tid == 0 && it + ST < count) {
      fence_proxy_async();
      issue(it + ST);
    }
  }

  __device__ __forceinline__ float2 stats_of(int it) const {
    const i64 row = first_row + it;
    return active(it) ? make_float2(mean_in[row], rstd_in[row]) : make_float2(0.f, 0.f);
  }
  // Row it's (mean, rstd): from the lanes (rows in order, 32 a batch, the next batch loaded
  // while this one serves) or loaded for the row.
  template <bool kAhead>
  __device__ __forceinline__ float2 stats_at(int it) {
    if constexpr (kAhead) {
      if (it % 32 == 0 && it > 0) stats = stats_next, stats_next = stats_of(it + 32 + (tid & 31));
      return make_float2(__shfl_sync(0xffffffffu, stats.x, it % 32), __shfl_sync(0xffffffffu, stats.y, it % 32));
    } else {
      return stats_of(it);
    }
  }

  __device__ __forceinline__ float weight_of(int e, int c) const { return Cfg::kWeight ? w[Cfg::kWeight ? e : 0][c] : 1.f; }

  // Adds piece e's Σg and Σg·x̂ (g = dy·w, x̂ = (x − mean)·rstd) to sums.
  __device__ __forceinline__ void add_sums(const Raw& rdy, const Raw& rx, int e, float2 stat, float2& sums) const {
    const auto in_dy = elements<T>(rdy);
    const auto in_x = elements<T>(rx);
#pragma unroll
    for (int c = 0; c < V; ++c) {
      const float g = in_dy[c] * weight_of(e, c);
      sums.x += g, sums.y += g * ((in_x[c] - stat.x) * stat.y);
    }
  }
  // Without clusters (the emulator): the other slices of row it, read from global memory.
  __device__ __forceinline__ void add_other_slices(int it, float2 stat, float2& sums) const {
#if !defined(BANDJIT_CLUSTERS)
    if constexpr (CB > 1) {
      const i64 row = first_row + it;
      for (int r2 = 0; r2 < CB; ++r2) {
        if (r2 == rank) continue;
        for (int e = 0; e < NV; ++e) {
          const int col = r2 * HS + (e * TH + tid) * V;
          for (int c = 0; c < V; ++c) {
            const float g = to_float(dy[row * H + col + c]) * (Cfg::kWeight ? weight[col + c] : 1.f);
            sums.x += g, sums.y += g * ((to_float(x[row * H + col + c]) - stat.x) * stat.y);
          }
        }
      }
    }
#else
    (void)it, (void)stat, (void)sums;
#endif
  }
  // Piece e's dx of row it (Σg/H = mean_g, Σg·x̂/H = mean_gx), written to global memory, and
  // its dy·x̂ and dy added to the column sums.
  __device__ __forceinline__ void write_dx(T* __restrict__ dx, int it, int e, const Raw& rdy, const Raw& rx, float2 stat,
                                           float mean_g, float mean_gx) {
    const auto in_dy = elements<T>(rdy);
    const auto in_x = elements<T>(rx);
    Raw out_raw;
    T* out = reinterpret_cast<T*>(&out_raw);
#pragma unroll
    for (int c = 0; c < V; ++c) {
      const float d = in_dy[c], xh = (in_x[c] - stat.x) * stat.y;
      out[c] = from_float<T>(stat.y * (d * weight_of(e, c) - mean_g - xh * mean_gx));
      if constexpr (Cfg::kWeight) sum_w[e][c] += d * xh;
      if constexpr (Cfg::kBias) sum_b[e][c] += d;
    }
    *reinterpret_cast<Raw*>(dx + (first_row + it) * H + col0 + (e * TH + tid) * V) = out_raw;
  }
  // The block's column sums added to dweight and dbias (16-byte reductions).
  __device__ __forceinline__ void add_column_sums(float* __restrict__ dweight, float* __restrict__ dbias) const {
#pragma unroll
    for (int e = 0; e < NV; ++e) {
      const int col = col0 + (e * TH + tid) * V;
      if constexpr (Cfg::kWeight) red_add<V>(dweight + col, sum_w[e]);
      if constexpr (Cfg::kBias) red_add<V>(dbias + col, sum_b[e]);
    }
  }
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
  using Raw = typename S::Raw;
  constexpr int H = S::H, CB = S::CB, TH = S::TH, NV = S::NV, ST = S::ST;
  static_assert(Cfg::kSharedBytes == S::kSharedBytes, "the generator's layout is the template's");
  static_assert(!Cfg::kOverlap, "overlapped rows: layer_norm_backward_overlapped");
  // Without a cluster, each row's mean and rstd come 32 rows at a time over a warp's lanes, so
  // a row starts without waiting on a global load (H200: 16-bit H = 5120 85 → 87–88 %, 16384
  // level); a cluster's blocks load their row's own (with the lanes, H = 65536 measured
  // 60 → 56 %; bench/results/2026-12-03-layer-norm-shared-weights).
  constexpr bool kStatsAhead = CB == 1;
  ln::StagedRows<Cfg> rows(dy, x, mean_in, rstd_in, weight, smem, kStatsAhead);
  const int tid = threadIdx.x;

#pragma unroll 1
  for (int it = 0; it < rows.count; ++it) {  // the same count in every block of a cluster
    const int s = it % ST;
    const float2 stat = rows.template stats_at<kStatsAhead>(it);
    rows.wait(it);
    float2 sums = make_float2(0.f, 0.f);  // Σg, Σg·x̂
#pragma unroll
    for (int e = 0; e < NV; ++e) {  // each piece copied first: one 16-byte shared load
      const Raw rdy = rows.stage_dy(s)[e * TH + tid], rx = rows.stage_x(s)[e * TH + tid];
      rows.add_sums(rdy, rx, e, stat, sums);
    }
    rows.add_other_slices(it, stat, sums);
    const float2 total = ln::cluster_sum<CB>(ln::group_sum<TH>(sums, smem), smem, smem + S::kSlots, it & 1);
    // Every thread has passed this row's barriers, so stage (it − 1) % ST is read: refill it.
    // A one-warp block's reduction is shuffles only, which order no memory: its lanes meet at
    // __syncwarp first.
    if constexpr (TH == 32 && CB == 1) __syncwarp();
    if (it >= 1) rows.refill(it - 1);
    const float mean_g = total.x / float(H), mean_gx = total.y / float(H);
#pragma unroll
    for (int e = 0; e < NV; ++e) {
      const Raw rdy = rows.stage_dy(s)[e * TH + tid], rx = rows.stage_x(s)[e * TH + tid];
      rows.write_dx(dx, it, e, rdy, rx, stat, mean_g, mean_gx);
    }
  }
  rows.add_column_sums(dweight, dbias);
  ln::cluster_finish<CB>();
}

}  // namespace bandjit
