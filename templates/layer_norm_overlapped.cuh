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
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
      v.x += __shfl_xor_sync(0xffffffffu, v.x, o);
      v.y += __shfl_xor_sync(0xffffffffu, v.y, o);
    }
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
  using T = typename S::T;
  using Raw = typename S::Raw;
  constexpr int H = S::H, HS = S::HS, CB = S::CB, V = S::V, TH = S::TH, NV = S::NV, ST = S::ST;
  constexpr int ITER = Cfg::kRowIterations;
  static_assert(Cfg::kOverlap, "the overlapped layout (StagedShape's scratch)");
  static_assert(Cfg::kSharedBytes == S::kSharedBytes, "the generator's layout is the template's");
  const int tid = threadIdx.x, lane = tid & 31;
  const int rank = row_block_rank<CB>();
  const int col0 = rank * HS;
  const i64 first_row = i64(blockIdx.x / CB) * ITER;
  unsigned char* bytes = reinterpret_cast<unsigned char*>(smem);
  unsigned long long* bars = reinterpret_cast<unsigned long long*>(bytes + S::kBarrierOffset);
  auto stage_dy = [&](int s) { return reinterpret_cast<const Raw*>(bytes + S::kStageOffset + s * 2 * S::kSliceBytes); };
  auto stage_x = [&](int s) { return stage_dy(s) + S::kSliceBytes / 16; };
  ln::Overlap<S> red(smem);

  auto issue = [&](int it) {  // row it into stage it % ST (thread 0); past the last row: empty
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
  // Rows' mean and rstd 32 at a time over a warp's lanes, the next 32 loaded while these serve.
  auto stats_of = [&](int it) {
    const i64 row = first_row + it;
    return it < ITER && row < Cfg::kRows ? make_float2(mean_in[row], rstd_in[row]) : make_float2(0.f, 0.f);
  };
  float2 stats = stats_of(lane), stats_next = stats_of(32 + lane);

  // Row it's first pass (rows in order): its pieces into hdy/hx, its (mean, rstd), the block's
  // (Σg, Σg·x̂); its stage refilled.
  auto first_pass = [&](int it, Raw (&hdy)[NV], Raw (&hx)[NV], float2& stat) {
    const int s = it % ST;
    const i64 row = first_row + it;
    const bool active = row < Cfg::kRows;
    if (it % 32 == 0 && it > 0) stats = stats_next, stats_next = stats_of(it + 32 + lane);
    stat = make_float2(__shfl_sync(0xffffffffu, stats.x, it % 32), __shfl_sync(0xffffffffu, stats.y, it % 32));
    barrier_wait(&bars[s], (it / ST) & 1);
    float2 sums = make_float2(0.f, 0.f);
#pragma unroll
    for (int e = 0; e < NV; ++e) {
      const int p = e * TH + tid;
      hdy[e] = stage_dy(s)[p], hx[e] = stage_x(s)[p];
      const T* in_dy = reinterpret_cast<const T*>(&hdy[e]);
      const T* in_x = reinterpret_cast<const T*>(&hx[e]);
#pragma unroll
      for (int c = 0; c < V; ++c) {
        const float g = to_float(in_dy[c]) * weight_of(e, c);
        sums.x += g, sums.y += g * ((to_float(in_x[c]) - stat.x) * stat.y);
      }
    }
    if (!active) sums = make_float2(0.f, 0.f);  // a row past the last: its stage was left as it was
#if !defined(BANDJIT_CLUSTERS)
    if constexpr (CB > 1) {  // no clusters: the other slices, read from global memory
      for (int r2 = 0; r2 < CB && active; ++r2) {
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
#endif
#pragma unroll
    for (int e = 0; e < NV; ++e) opaque(hdy[e]), opaque(hx[e]);  // converted again in the second pass
    const float2 block = red.block_sum(sums, it & 1);
    if constexpr (TH == 32) __syncwarp();  // every thread has read stage s: refill it
    if (tid == 0 && it + ST < ITER) {
      fence_proxy_async();
      issue(it + ST);
    }
    return block;
  };

  Raw cdy[NV], cx[NV], ndy[NV], nx[NV];
  float2 cstat, nstat = make_float2(0.f, 0.f);
  float2 cblock = first_pass(0, cdy, cx, cstat);
  red.publish(cblock, 0);
#pragma unroll 1
  for (int it = 0; it < ITER; ++it) {
    const bool more = it + 1 < ITER;
    float2 nblock = make_float2(0.f, 0.f);
    if (more) nblock = first_pass(it + 1, ndy, nx, nstat);
    const float2 total = red.gather(cblock, it & 1);
    if (more) red.publish(nblock, (it + 1) & 1);
    const i64 row = first_row + it;
    if (row < Cfg::kRows) {
      const float mean_g = total.x / float(H), mean_gx = total.y / float(H);
#pragma unroll
      for (int e = 0; e < NV; ++e) {
        const T* in_dy = reinterpret_cast<const T*>(&cdy[e]);
        const T* in_x = reinterpret_cast<const T*>(&cx[e]);
        Raw out_raw;
        T* out = reinterpret_cast<T*>(&out_raw);
#pragma unroll
        for (int c = 0; c < V; ++c) {
          const float d = to_float(in_dy[c]), xh = (to_float(in_x[c]) - cstat.x) * cstat.y;
          out[c] = from_float<T>(cstat.y * (d * weight_of(e, c) - mean_g - xh * mean_gx));
          if constexpr (Cfg::kWeight) sum_w[e][c] += d * xh;
          if constexpr (Cfg::kBias) sum_b[e][c] += d;
        }
        *reinterpret_cast<Raw*>(dx + row * H + col0 + (e * TH + tid) * V) = out_raw;
      }
    }
#pragma unroll
    for (int e = 0; e < NV; ++e) cdy[e] = ndy[e], cx[e] = nx[e];
    cstat = nstat, cblock = nblock;
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
