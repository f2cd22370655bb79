// bandjit/attention_common.cuh — the parts of sliding_window_attention (SPEC §3.5) shared by
// its portable (mma.sync) and Hopper (wgmma) kernels: the key mask of a tile, one tile of the
// online softmax on accumulators in the m16n8 layout (16 rows per warp), P as the next
// product's A fragments, and the epilogue that writes O and the log-sum-exp.
#pragma once

#include "bandjit/band_tiles.cuh"
#include "bandjit/mma.cuh"
#include "bandjit/vector_io.cuh"

namespace bandjit {

// Two floats as the 32-bit pair (lo, hi) of a 16-bit type: an mma A register.
template <class T>
__device__ __forceinline__ u32 pack_float_pair(float lo, float hi) {
  return pack_pair(from_float<T>(lo), from_float<T>(hi));
}

// One block's query rows — TM consecutive rows t0 … of one residue sub-sequence of batch b —
// and the keys they see, u ∈ [t0 − w_l, t_last + w_r] within the sequence, streamed as
// `tiles` tiles of TN keys from u_lo.
template <class Cfg, int TM, int TN>
struct AttentionBlock {
  BandTile tc;
  int b, u_lo, tiles;
  __device__ __forceinline__ AttentionBlock() : tc(decode_band_tile<Cfg, TM>(blockIdx.x)), b(blockIdx.z) {
    const int t_end = min(tc.t0 + TM, tc.len);
    u_lo = max(0, tc.t0 - Cfg::kWindowLeft);
    tiles = ceil_div(min(tc.len, t_end + Cfg::kWindowRight) - u_lo, TN);
  }
  // No rows: the residue is shorter than the longest one the grid is sized for.
  __device__ __forceinline__ bool empty() const { return tc.t0 >= tc.len; }
  // None of them in the band of rows tw … tw + 15 (or those rows past the end): no work.
  __device__ __forceinline__ bool tile_outside(int ub, int tw) const {
    return ub > tw + 15 + Cfg::kWindowRight || ub + TN - 1 < tw - Cfg::kWindowLeft || tw >= tc.len;
  }
};

// This lane's part of rows g and g + 8 of accumulators s (elements 0, 1 and 2, 3 of each
// n-tile) reduced by op in four interleaved chains, then combined: one chain of 2·NT
// dependent steps stalls the warp, a full tree costs registers the portable kernel lacks.
template <int NT, class Op>
__device__ __forceinline__ void row_reduce(const float (&s)[NT][4], float (&out)[2], Op op) {
  constexpr int K = 2 * NT < 4 ? 2 * NT : 4;
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    float c[K];
#pragma unroll
    for (int i = 0; i < 2 * NT; ++i) {
      const float x = s[i >> 1][2 * h + (i & 1)];
      c[i % K] = i < K ? x : op(c[i % K], x);
    }
#pragma unroll
    for (int w = 1; w < K; w *= 2)
#pragma unroll
      for (int i = 0; i + w < K; i += 2 * w) c[i] = op(c[i], c[i + w]);
    out[h] = c[0];
  }
}

enum : int { kLeftEdge = 1, kRightEdge = 2 };  // band tests a key tile needs (online_softmax_tile_impl)

// One key tile of the online softmax (log2 domain), for the rows g and g + 8 of the warp
// whose first row is tw: s (the tile's scores, accumulator layout, keys ub + 8·nt + …)
// becomes P = 2^(x − m_new) with x = s·scale·log2 e (+ the tile's mask addend); with kEdges,
// slots off the band or past the sequence's end get x = −inf. The running reference m (within
// kSlack of the maximum so far), the sum l (this lane's part) and the O accumulators are
// rescaled when m moves (with kVote; without it, always: the branch costs some kernels spills).
//
// Without a mask (and scale > 0) the maximum is taken over the raw scores and scale·log2 e is
// folded into exp2's argument (one FFMA per score), and the band limits are two per-row column
// bounds: the kernels are bound by instruction issue, not by the tensor cores.
template <class Cfg, int kEdges, bool kVote = true, int NT, int OT>
__device__ __forceinline__ void online_softmax_tile_impl(float (&s)[NT][4], float (&acc)[OT][4], float (&m)[2],
                                                         float (&l)[2], const float* mask_tile, int ub, int tw,
                                                         int len) {
  const float C = Cfg::kScaleLog2e;  // a constant (the emulator's tests set it per case)
  const bool raw = Cfg::kKeyMask == kMaskNone && C > 0.f;
  const int g = lane_id() >> 2, t4 = lane_id() & 3;
  // Column 8·nt + 2·t4 + e % 2 is allowed for row h iff lo[h] ≤ 8·nt + e % 2 (tested with
  // kEdges & kLeftEdge) and 8·nt + e % 2 ≤ hi[h] (with kEdges & kRightEdge).
  int lo[2] = {0, 0}, hi[2] = {0, 0};
  if constexpr (kEdges != 0) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int t = tw + g + 8 * h;
      lo[h] = t - Cfg::kWindowLeft - ub - 2 * t4;
      hi[h] = min(t + Cfg::kWindowRight, len - 1) - ub - 2 * t4;
    }
  }
#pragma unroll
  for (int nt = 0; nt < NT; ++nt)
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const int cc = 8 * nt + (e & 1);
      float x = s[nt][e];
      if constexpr (Cfg::kKeyMask != kMaskNone) x = fmaf(x, C, mask_tile[cc + 2 * t4]);
      else if (!raw) x *= C;
      if constexpr (kEdges == (kLeftEdge | kRightEdge)) {
        if (cc < lo[e >> 1] || cc > hi[e >> 1]) x = neg_inf();
      } else if constexpr (kEdges == kLeftEdge) {
        if (cc < lo[e >> 1]) x = neg_inf();
      } else if constexpr (kEdges == kRightEdge) {
        if (cc > hi[e >> 1]) x = neg_inf();
      }
      s[nt][e] = x;
    }
  float tile_max[2];
  row_reduce<NT>(s, tile_max, [](float a, float b) { return fmaxf(a, b); });
  // The reference m moves only when the tile's maximum exceeds it by more than kSlack, so most
  // tiles skip rescaling O (the warp votes) and P ≤ 2^kSlack, up to the raw path's rounding of m
  // (half an ulp of m: P stays below 2^9 while |m| < 2^24 log2 units; past 2^26, 16-bit P may
  // overflow, a limit FlashAttention's folded exp2 shares; docs/kernels.md).
  constexpr float kSlack = 8.f;
  float alpha[2], base[2];
  bool grow = false;
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    tile_max[h] = fmaxf(tile_max[h], __shfl_xor_sync(0xffffffffu, tile_max[h], 1));
    tile_max[h] = fmaxf(tile_max[h], __shfl_xor_sync(0xffffffffu, tile_max[h], 2));
    if (raw) tile_max[h] *= C;  // −inf stays −inf: C > 0
    const bool g_h = tile_max[h] > m[h] + kSlack;  // m = −inf: any finite maximum
    const float m_new = g_h ? tile_max[h] : m[h];
    base[h] = m_new == neg_inf() ? 0.f : m_new;  // a row with nothing yet stays at 2^−inf = 0
    alpha[h] = exp2_approx(m[h] - base[h]);      // 1 when m stays (0 while it is −inf: l, O are 0)
    m[h] = m_new;
    l[h] *= alpha[h];
    grow = grow || g_h;
  }
#pragma unroll
  for (int nt = 0; nt < NT; ++nt)
#pragma unroll
    for (int e = 0; e < 4; ++e)
      s[nt][e] = raw ? exp2_approx(fmaf(s[nt][e], C, -base[e >> 1])) : exp2_approx(s[nt][e] - base[e >> 1]);
  float tile_sum[2];
  row_reduce<NT>(s, tile_sum, [](float a, float b) { return a + b; });
  l[0] += tile_sum[0];
  l[1] += tile_sum[1];
  if (!kVote || __any_sync(0xffffffffu, grow)) {
#pragma unroll
    for (int ot = 0; ot < OT; ++ot)
#pragma unroll
      for (int e = 0; e < 4; ++e) acc[ot][e] *= alpha[e >> 1];
  }
}

// As above, for the TN keys from ub against the warp's rows tw … tw + 15, with the band tests
// each tile needs: none inside the band, the left edge on a block's first tiles, the right edge
// (or the sequence's end) on its last. Instantiations behind warp-uniform branches: predicated
// tests would still be issued on the tiles that need none.
template <class Cfg, int TN, int NT, int OT>
__device__ __forceinline__ void online_softmax_tile(float (&s)[NT][4], float (&acc)[OT][4], float (&m)[2],
                                                    float (&l)[2], const float* mask_tile, int ub, int tw, int len) {
  const bool left = ub - (tw + 15) < -Cfg::kWindowLeft;
  const bool right = ub + TN - 1 - tw > Cfg::kWindowRight || ub + TN > len;
  if (!left && !right)
    online_softmax_tile_impl<Cfg, 0>(s, acc, m, l, mask_tile, ub, tw, len);
  else if (!right)
    online_softmax_tile_impl<Cfg, kLeftEdge>(s, acc, m, l, mask_tile, ub, tw, len);
  else if (!left)
    online_softmax_tile_impl<Cfg, kRightEdge>(s, acc, m, l, mask_tile, ub, tw, len);
  else
    online_softmax_tile_impl<Cfg, kLeftEdge | kRightEdge>(s, acc, m, l, mask_tile, ub, tw, len);
}

// The A fragment (16 rows × keys 16kk … 16kk + 15) of P from the accumulator layout of
// n-tiles 2kk and 2kk + 1: the m16n8 accumulator layout is the m16n8k16 A layout.
template <class T, int NT>
__device__ __forceinline__ void pack_p_fragment(u32 (&r)[4], const float (&s)[NT][4], int kk) {
  r[0] = pack_float_pair<T>(s[2 * kk][0], s[2 * kk][1]);
  r[1] = pack_float_pair<T>(s[2 * kk][2], s[2 * kk][3]);
  r[2] = pack_float_pair<T>(s[2 * kk + 1][0], s[2 * kk + 1][1]);
  r[3] = pack_float_pair<T>(s[2 * kk + 1][2], s[2 * kk + 1][3]);
}

// Writes the warp's 16 rows of O = acc / l through its own rows `staged` (row stride LD
// elements, 16-byte aligned) as 16-byte stores, and their LSE = (m + log2 l)·ln 2.
template <class Cfg, int LD, int OT>
__device__ __forceinline__ void attention_epilogue(typename Cfg::T* staged, typename Cfg::T* __restrict__ o,
                                                   float* __restrict__ lse, const float (&acc)[OT][4], float (&m)[2],
                                                   float (&l)[2], int b, const BandTile& tc, int tw) {
  using T = typename Cfg::T;
  constexpr int DH = Cfg::kHeadDim, N = Cfg::kSeqLen;
  constexpr float kLn2 = 0.6931471805599453f;
  const int g = lane_id() >> 2, t4 = lane_id() & 3;
  float inv[2];
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    l[h] += __shfl_xor_sync(0xffffffffu, l[h], 1);
    l[h] += __shfl_xor_sync(0xffffffffu, l[h], 2);
    inv[h] = l[h] > 0.f ? 1.f / l[h] : 0.f;
  }
#pragma unroll
  for (int ot = 0; ot < OT; ++ot)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      T* at = staged + (g + 8 * h) * LD + 8 * ot + 2 * t4;
      if constexpr (sizeof(T) == 2) {  // an even column of an even-strided row: one 32-bit store
        *reinterpret_cast<u32*>(at) = pack_float_pair<T>(acc[ot][2 * h] * inv[h], acc[ot][2 * h + 1] * inv[h]);
      } else {
        at[0] = from_float<T>(acc[ot][2 * h] * inv[h]);
        at[1] = from_float<T>(acc[ot][2 * h + 1] * inv[h]);
      }
    }
  __syncwarp();
  constexpr int V = 16 / sizeof(T), PIECES = DH / V;
  const SubsequenceRows<Cfg> rows(b, tc, DH);
  for (int idx = lane_id(); idx < 16 * PIECES; idx += 32) {
    const int row = idx / PIECES, piece = idx % PIECES;
    if (tw + row < tc.len)
      *reinterpret_cast<uint4*>(o + rows.at(tw + row) + piece * V) =
          *reinterpret_cast<const uint4*>(staged + row * LD + piece * V);
  }
  if (t4 == 0) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int t = tw + g + 8 * h;
      if (t < tc.len)
        lse[(i64(b) * Cfg::kHeads + tc.h) * N + tc.r + i64(tc.D) * t] =
            l[h] > 0.f ? (m[h] + log2_approx(l[h])) * kLn2 : neg_inf();
    }
  }
}

// The key mask of keys ub … ub + TN − 1 of the tile's residue, in log2 units, into dst[TN]:
// 0 or the additive value · log2 e for a kept key, −inf for a removed one or one past the end.
template <class Cfg, int TN>
__device__ __forceinline__ void stage_key_mask(float* dst, const void* mask, int b, const BandTile& tc, int ub) {
  constexpr float kLog2e = 1.4426950408889634f;
  for (int x = threadIdx.x; x < TN; x += Cfg::kThreads) {
    const int u = ub + x;
    float add = neg_inf();
    if (u < tc.len) {
      const i64 key = i64(b) * Cfg::kSeqLen + tc.r + i64(tc.D) * u;
      if constexpr (Cfg::kKeyMask == kMaskBool) {
        if (static_cast<const unsigned char*>(mask)[key] != 0) add = 0.f;
      } else {
        const float m = static_cast<const float*>(mask)[key];
        if (!(m < 0.f)) add = m * kLog2e;  // HF Longformer: a negative value removes the key
      }
    }
    dst[x] = add;
  }
}

}  // namespace bandjit
