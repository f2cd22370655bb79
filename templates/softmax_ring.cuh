// bandjit/softmax_ring.cuh — the softmax forward (templates/softmax.cuh's math and masks,
// docs/softmax.md) for long rows on sm_90: one block an SM takes kRowIterations rows in turn
// through a ring of shared-memory chunks (templates/row_ring.cuh). Pass one waits for each
// chunk and moves the thread's pieces into registers, releasing the slots to the copies of
// the rows ahead; the thread's (max m, Σ e^(v − m)) and one block reduction give the row's
// (M, S), and y = e^(v − M) / S is written from the registers. The cluster kernels of
// softmax.cuh hold one row and wait at each cluster exchange with no load in flight.
// x, y: [rows, L] (y may alias x: a row is wholly in shared memory before it is written);
// mask: boolean [batch, 1, queries, L] or none (an additive mask takes softmax.cuh's kernels).
#pragma once

#include "bandjit/opaque.cuh"
#include "bandjit/row_ring.cuh"
#include "bandjit/softmax.cuh"

namespace bandjit {

// Cfg: T, kRows, kRowLength (L), kHeads, kQueries, kScale, kMask (none or bool), kCausal,
// kThreads (TH), kChunks (NC, with NC · TH 16-byte pieces = L), kSlots, kRowIterations.
template <class Cfg>
struct SoftmaxRingShape {
  using T = typename Cfg::T;
  static constexpr int V = 16 / int(sizeof(T)), TH = Cfg::kThreads, NC = Cfg::kChunks;
  static_assert(NC * TH * V == Cfg::kRowLength, "a row is whole chunks of one 16-byte piece a thread");
  static_assert(Cfg::kMask != kMaskAdditive, "an additive mask takes the register kernels");
  // Two rows' reduction slots (a row's slots are rewritten only after every thread has passed
  // the next row's barrier), one (m, s) a warp.
  static constexpr unsigned kScratchBytes = 2u * (TH / 32) * sizeof(RowStats);
  using Ring = RowRing<TH, NC, Cfg::kSlots, kScratchBytes>;
  static constexpr unsigned kSharedBytes = Ring::Layout::kSharedBytes;
  // Kept-key bits of the thread's pieces in a row (boolean mask: read once, used twice).
  static constexpr int kMaskWords = Cfg::kMask == kMaskBool ? (NC * V + 31) / 32 : 1;
};

// (M, S) of the warp's 32 (m, s): M by shuffles, then Σ s · e^(m − M) by shuffles (an
// empty side, m = −inf, adds 0); every lane gets the result.
__device__ __forceinline__ RowStats warp_stats(RowStats v) {
  float m = v.m;
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) m = fmaxf(m, shfl_xor(m, o));
  float s = v.m == neg_inf() ? 0.f : v.s * exp2_approx((v.m - m) * kLog2e);
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) s += shfl_xor(s, o);
  return {m, s};
}

template <class Cfg>
__device__ __forceinline__ void softmax_forward_ring(const typename Cfg::T* x, typename Cfg::T* y,
                                                     const unsigned char* __restrict__ mask, void* smem) {
  using Sh = SoftmaxRingShape<Cfg>;
  using T = typename Sh::T;
  constexpr int V = Sh::V, TH = Sh::TH, NC = Sh::NC, L = Cfg::kRowLength, Q = Cfg::kQueries;
  constexpr int ITER = Cfg::kRowIterations;
  static_assert(Cfg::kSharedBytes == Sh::kSharedBytes, "the generator's layout is the template's");
  static_assert(NC <= 16, "a thread holds its NC pieces of the row in registers (≤ 64)");
  const int tid = threadIdx.x, warp = tid >> 5;
  const i64 first_row = i64(blockIdx.x) * ITER;
  const int rows = int(Cfg::kRows - first_row < ITER ? Cfg::kRows - first_row : ITER);
  RowStats* scratch = static_cast<RowStats*>(smem);
  typename Sh::Ring ring(smem, x + first_row * L, i64(L) * sizeof(T), rows);
  ring.init();
  __syncthreads();
  ring.start();

#pragma unroll 1
  for (int it = 0; it < rows; ++it) {
    const i64 row = first_row + it;
    const int q = int(row % Q);
    const i64 mask_row = (row / (i64(Cfg::kHeads) * Q)) * Q + q;  // [batch, 1, queries, L]
    const int last_key = q + (L - Q);                              // causal: later keys are removed
    // Kept-key bits of the thread's pieces (boolean mask), from global memory (the L2: the
    // heads share a mask row) before the waits, so their latency overlaps the copies'.
    unsigned kept[Sh::kMaskWords];
#pragma unroll
    for (int w = 0; w < Sh::kMaskWords; ++w) kept[w] = 0u;
    if constexpr (Cfg::kMask == kMaskBool) {
      typedef typename RawPiece<V>::type MaskRaw;
#pragma unroll
      for (int k = 0; k < NC; ++k) {
        const MaskRaw mraw = load_piece<unsigned char, V>(mask + mask_row * L + (k * TH + tid) * V);
        const unsigned char* removed = reinterpret_cast<const unsigned char*>(&mraw);
#pragma unroll
        for (int c = 0; c < V; ++c)
          if (!removed[c]) kept[(k * V + c) / 32] |= 1u << ((k * V + c) % 32);
      }
    }
    // The thread's pieces of the row, out of the ring into registers; the warp then releases
    // the row's slots to the copies of rows ahead.
    uint4 raw[NC];
    ring.issue_through(it * NC + NC - 1);
#pragma unroll 1
    for (int k = 0; k < NC; ++k) ring.wait(it * NC + k);
#pragma unroll
    for (int k = 0; k < NC; ++k) raw[k] = ring.piece(it * NC + k);
    ring.release(it * NC, NC);
    // v = scale·x, −inf at removed keys.
    auto values = [&](int k, float (&v)[V]) {
      const T* in = reinterpret_cast<const T*>(&raw[k]);
      const int j0 = (k * TH + tid) * V;
#pragma unroll
      for (int c = 0; c < V; ++c) {
        bool removed = false;
        if constexpr (Cfg::kMask == kMaskBool) removed = !((kept[(k * V + c) / 32] >> ((k * V + c) % 32)) & 1u);
        if constexpr (Cfg::kCausal) removed = removed || j0 + c > last_key;
        v[c] = removed ? neg_inf() : to_float(in[c]) * Cfg::kScale;
      }
    };

    // Each piece's maximum p_k and e = e^(v − p_k), summed and kept in the raw piece's place
    // rounded to T (0 exactly at removed keys), so that the write pass is one multiply an
    // element: about one exp2 an element in all, not two (the SM's exp2 rate, 16 a clock,
    // held long rows back). Rounding e and then y to T: within about one unit in the last
    // place of T. The thread's (m, s) folds the pieces' (p_k, Σe) as they come.
    float piece_max[NC];
    RowStats mine = {neg_inf(), 0.f};
#pragma unroll
    for (int k = 0; k < NC; ++k) {
      float v[V];
      values(k, v);
      float pm = neg_inf();
#pragma unroll
      for (int c = 0; c < V; ++c) pm = fmaxf(pm, v[c]);
      piece_max[k] = pm;
      const float shift = pm == neg_inf() ? 0.f : pm;  // a piece with no key left: every e is 0
      T* e = reinterpret_cast<T*>(&raw[k]);
      float ps = 0.f;
#pragma unroll
      for (int c = 0; c < V; ++c) {
        const float ev = exp2_approx((v[c] - shift) * kLog2e);
        ps += ev;
        e[c] = from_float<T>(ev);
      }
      if (pm > mine.m) {  // rescale the sum so far to the new maximum (none yet: s = 0)
        mine.s = mine.m == neg_inf() ? 0.f : mine.s * exp2_approx((mine.m - pm) * kLog2e);
        mine.m = pm;
      }
      if (pm != neg_inf()) mine.s += pm == mine.m ? ps : ps * exp2_approx((pm - mine.m) * kLog2e);
    }

    // The row's (M, S) in two short steps rather than a chain of combines (each a pair of
    // exp2): a warp's maximum and its sum rescaled to it, one slot a warp (this row's half
    // of the scratch); after the barrier lane w of every warp takes warp w's slot and the
    // same two steps give the block's.
    RowStats* slots = scratch + (it & 1) * (TH / 32);
    const RowStats mine_w = warp_stats(mine);
    if ((tid & 31) == 0) slots[warp] = mine_w;
    __syncthreads();
    // Every warp has released this row's slots (before the barrier): refill them now.
    if (tid == 0) ring.top_up((it + 1) * NC);
    const int lane = tid & 31;
    const RowStats total = warp_stats(lane < TH / 32 ? slots[lane] : RowStats{neg_inf(), 0.f});

    // y = e · e^(p_k − M) / S (0 where the piece, or the whole row, has no key left).
#pragma unroll
    for (int k = 0; k < NC; ++k) {
      const float factor = lane_factor(RowStats{piece_max[k], 0.f}, total);
      const T* e = reinterpret_cast<const T*>(&raw[k]);
      uint4 out_raw;
      T* out = reinterpret_cast<T*>(&out_raw);
#pragma unroll
      for (int c = 0; c < V; ++c) out[c] = from_float<T>(to_float(e[c]) * factor);
      store_piece<T, V>(y + row * L + (k * TH + tid) * V, out_raw);
    }
  }
}

}  // namespace bandjit
