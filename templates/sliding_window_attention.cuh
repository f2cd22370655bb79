// bandjit/sliding_window_attention.cuh — O = softmax(scale·Q·Kᵀ + M) · V over the band, in one
// kernel (SPEC §3.5): S and P never reach memory. Also writes the row's log-sum-exp
// LSE[b, h, i] = ln Σ_j exp(scale·S[i, j] + M[i, j]) (float32, [B, H, N]) for the backward;
// a row with no allowed key gets O = 0 and LSE = −inf.
//
// Portable path (mma.sync, sm_80 and later), FlashAttention-2's scheme on the band: a block
// owns TM = 16·W consecutive query rows t of one residue sub-sequence (dilation by index
// remapping, band_tiles.cuh), warp w rows 16w … 16w + 15. It streams the keys those rows can
// see, u ∈ [t0 − w_l, t_last + w_r] ∩ [0, len), in tiles of TN rows of K and V through a
// two-stage cp.async pipeline. Per key tile each warp computes its 16 × TN scores on the
// tensor cores, folds them into a running row maximum m and sum l (online softmax, log2
// domain), rescales its O accumulators and adds P·V. Tiles wholly outside a warp's band skip
// the warp's work.
//
// 16-bit types keep Q's fragments in registers (head_dim ≤ 128) and hand P to the second
// product in registers: the m16n8 accumulator layout is the m16n8k16 A layout. float32
// (3xTF32, mma.cuh) passes P through a per-warp shared tile instead. On sm_90a the generator's
// Cfg::kWgmma selects the Hopper kernel (sliding_window_attention_wgmma.cuh) instead.
#pragma once

#include "bandjit/attention_common.cuh"
#include "bandjit/sliding_window_attention_wgmma.cuh"

namespace bandjit {

// Shared-memory layout (elements of T, then floats), the generator's size included.
template <class Cfg>
struct AttentionSmem {
  using T = typename Cfg::T;
  static constexpr int TM = Cfg::kTileRows, TN = Cfg::kKeyTile, LD = Cfg::kRowLD, ST = Cfg::kStages;
  static constexpr int W = TM / 16, LDP = TN + 4;
  static constexpr int kQ = TM * LD, kKV = TN * LD;  // one tile of Q; one stage of K (or V)
  static constexpr int kTElems = kQ + 2 * ST * kKV;
  static constexpr int kPFloats = sizeof(T) == 4 ? W * 16 * LDP : 0;  // float32: each warp's P
  static constexpr int kMaskFloats = Cfg::kKeyMask != kMaskNone ? ST * TN : 0;
  static constexpr unsigned kBytes = kTElems * sizeof(T) + (kPFloats + kMaskFloats) * 4;
};

template <class Cfg>
__device__ __forceinline__ void sliding_window_attention_mma(const typename Cfg::T* __restrict__ q,
                                                             const typename Cfg::T* __restrict__ k,
                                                             const typename Cfg::T* __restrict__ v,
                                                             typename Cfg::T* __restrict__ o, float* __restrict__ lse,
                                                             const void* mask) {
  using T = typename Cfg::T;
  using Ops = MmaOps<T>;
  using L = AttentionSmem<Cfg>;
  constexpr int TM = L::TM, TN = L::TN, LD = L::LD, ST = L::ST, W = L::W, LDP = L::LDP;
  constexpr int DH = Cfg::kHeadDim;
  constexpr int NT = TN / 8, OT = DH / 8, KS = DH / Ops::kK;
  constexpr bool k16 = sizeof(T) == 2;
  constexpr bool kQInRegs = k16 && DH <= 128;
  static_assert(W * 32 == Cfg::kThreads && TM % 16 == 0, "one warp per 16 query rows");
  static_assert(TN % 16 == 0 && DH % 16 == 0, "key tiles and head_dim in whole k-steps");
  static_assert((LD * sizeof(T)) % 16 == 0 && LD >= DH, "staged rows stay 16-byte aligned");
  static_assert(L::kBytes <= Cfg::kSharedBytes, "the generator's shared-memory size covers the layout");
  static_assert(ST == 2, "the pipeline below refills the stage read one tile earlier");

  extern __shared__ __align__(16) unsigned char smem[];
  T* sQ = reinterpret_cast<T*>(smem);  // Q rows; at the end each warp's O rows
  T* sK = sQ + L::kQ;                  // ST stages of TN key rows
  T* sV = sK + ST * L::kKV;            // ST stages of TN value rows
  float* sP = reinterpret_cast<float*>(sV + ST * L::kKV);  // float32: 16 × LDP per warp
  float* sMask = sP + L::kPFloats;                         // key mask: ST × TN, log2 units

  const AttentionBlock<Cfg, TM, TN> blk;
  if (blk.empty()) return;
  const BandTile& tc = blk.tc;
  const int b = blk.b, len = tc.len, t0 = tc.t0, u_lo = blk.u_lo, tiles = blk.tiles;
  const int warp = threadIdx.x >> 5, g = lane_id() >> 2, t4 = lane_id() & 3;
  const int tw = t0 + 16 * warp;  // the warp's first row

  stage_row_range_async<Cfg, LD>(sQ, q, b, tc, t0, 0, TM);
  stage_row_range_async<Cfg, LD>(sK, k, b, tc, u_lo, 0, TN);
  stage_row_range_async<Cfg, LD>(sV, v, b, tc, u_lo, 0, TN);
  cp_async_commit();
  if constexpr (Cfg::kKeyMask != kMaskNone) stage_key_mask<Cfg, TN>(sMask, mask, b, tc, u_lo);

  typename Ops::AFrag qa[kQInRegs ? KS : 1];
  float acc[OT][4];
#pragma unroll
  for (int ot = 0; ot < OT; ++ot) acc[ot][0] = acc[ot][1] = acc[ot][2] = acc[ot][3] = 0.f;
  float m[2] = {neg_inf(), neg_inf()}, l[2] = {0.f, 0.f};  // rows g and g + 8, log2 units

#pragma unroll 1
  for (int n = 0; n < tiles; ++n) {
    const int stage = n & 1, ub = u_lo + n * TN;
    if (n + 1 < tiles) {  // the other stage was last read by tile n − 1, before its barrier
      stage_row_range_async<Cfg, LD>(sK + (stage ^ 1) * L::kKV, k, b, tc, ub + TN, 0, TN);
      stage_row_range_async<Cfg, LD>(sV + (stage ^ 1) * L::kKV, v, b, tc, ub + TN, 0, TN);
      cp_async_commit();
      if constexpr (Cfg::kKeyMask != kMaskNone) stage_key_mask<Cfg, TN>(sMask + (stage ^ 1) * TN, mask, b, tc, ub + TN);
      cp_async_wait<1>();
    } else {
      cp_async_wait<0>();
    }
    __syncthreads();  // tile n (and, at n = 0, Q) landed for every thread
    if constexpr (kQInRegs) {
      if (n == 0) {
#pragma unroll
        for (int ks = 0; ks < KS; ++ks) Ops::load_a(qa[ks], sQ, LD, 16 * warp, ks * Ops::kK);
      }
    }
    // Keys ub … ub + TN − 1 against the warp's rows tw … tw + 15: none in the band → no work;
    // all in it (and inside the sequence) → no per-element checks.
    if (!blk.tile_outside(ub, tw)) {
      const T* sKs = sK + stage * L::kKV;
      const T* sVs = sV + stage * L::kKV;
      float s[NT][4];
#pragma unroll
      for (int nt = 0; nt < NT; ++nt) s[nt][0] = s[nt][1] = s[nt][2] = s[nt][3] = 0.f;
      if constexpr (k16) {
#pragma unroll
        for (int ks = 0; ks < KS; ks += 2) {
          typename Ops::AFrag a0, a1;
          if constexpr (kQInRegs) {
            a0 = qa[ks];
            if (ks + 1 < KS) a1 = qa[ks + 1];
          } else {
            Ops::load_a(a0, sQ, LD, 16 * warp, ks * 16);
            if (ks + 1 < KS) Ops::load_a(a1, sQ, LD, 16 * warp, (ks + 1) * 16);
          }
#pragma unroll
          for (int nt = 0; nt < NT; ++nt) {
            typename Ops::BFrag b0, b1;
            if (ks + 1 < KS) {
              Ops::load_b_nk_x2(b0, b1, sKs, LD, 8 * nt, ks * 16);
              Ops::mma(s[nt], a0, b0);
              Ops::mma(s[nt], a1, b1);
            } else {
              Ops::load_b_nk(b0, sKs, LD, 8 * nt, ks * 16);
              Ops::mma(s[nt], a0, b0);
            }
          }
        }
      } else {
#pragma unroll 1
        for (int ks = 0; ks < KS; ++ks) {
          typename Ops::AFrag a;
          Ops::load_a(a, sQ, LD, 16 * warp, ks * 8);
#pragma unroll
          for (int nt = 0; nt < NT; ++nt) {
            typename Ops::BFrag bf;
            Ops::load_b_nk(bf, sKs, LD, 8 * nt, ks * 8);
            Ops::mma(s[nt], a, bf);
          }
        }
      }

      // One instantiation, checks always on, O rescaled every tile: a second instantiation or the
      // vote's branch cost this kernel registers (NVRTC's ptxas then spills at 128 on sm_80).
      online_softmax_tile_impl<Cfg, kLeftEdge | kRightEdge, false>(
          s, acc, m, l, Cfg::kKeyMask != kMaskNone ? sMask + stage * TN : nullptr, ub, tw, len);

      // O += P·V over the tile's keys.
      if constexpr (k16) {
#pragma unroll
        for (int kk = 0; kk < TN / 16; ++kk) {
          typename Ops::AFrag pa;
          pack_p_fragment<T>(pa.r, s, kk);
#pragma unroll
          for (int ot = 0; ot < OT; ot += 2) {
            typename Ops::BFrag b0, b1;
            Ops::load_b_kn_x2(b0, b1, sVs, LD, 16 * kk, 8 * ot);
            Ops::mma(acc[ot], pa, b0);
            Ops::mma(acc[ot + 1], pa, b1);
          }
        }
      } else {
        float* pw = sP + warp * 16 * LDP;
#pragma unroll
        for (int nt = 0; nt < NT; ++nt)
#pragma unroll
          for (int h = 0; h < 2; ++h) {
            pw[(g + 8 * h) * LDP + 8 * nt + 2 * t4] = s[nt][2 * h];
            pw[(g + 8 * h) * LDP + 8 * nt + 2 * t4 + 1] = s[nt][2 * h + 1];
          }
        __syncwarp();
        // The tile's P·V in fresh accumulators, added to O in float32: the tensor cores'
        // accumulation over thousands of keys loses digits (2–4e-5 at C = 4097 … 16385
        // on the H200, bench/results/2026-12-01-issue-6/2-gpu-tests-and-tiles), as in band_pv.
        float part[OT][4];
#pragma unroll
        for (int ot = 0; ot < OT; ++ot) part[ot][0] = part[ot][1] = part[ot][2] = part[ot][3] = 0.f;
#pragma unroll 1
        for (int kk = 0; kk < TN / 8; ++kk) {
          typename Ops::AFrag pa;
          Ops::load_a(pa, pw, LDP, 0, 8 * kk);
#pragma unroll
          for (int ot = 0; ot < OT; ++ot) {
            typename Ops::BFrag bf;
            Ops::load_b_kn(bf, sVs, LD, 8 * kk, 8 * ot);
            Ops::mma(part[ot], pa, bf);
          }
        }
#pragma unroll
        for (int ot = 0; ot < OT; ++ot)
#pragma unroll
          for (int e = 0; e < 4; ++e) acc[ot][e] += part[ot][e];
        __syncwarp();  // P is read before the next tile overwrites it
      }
    }
    __syncthreads();  // every warp is done with this stage before it is refilled
  }

  // Each warp's O rows leave through its own Q rows: no warp reads another's.
  attention_epilogue<Cfg, LD>(sQ + 16 * warp * LD, o, lse, acc, m, l, b, tc, tw);
}

// The entry point: the Hopper kernel where the generator asked for it (Cfg::kWgmma) and the
// target has wgmma (sm_90a), else the portable one. Both take the same launch.
template <class Cfg>
__device__ __forceinline__ void sliding_window_attention(const typename Cfg::T* __restrict__ q,
                                                         const typename Cfg::T* __restrict__ k,
                                                         const typename Cfg::T* __restrict__ v,
                                                         typename Cfg::T* __restrict__ o, float* __restrict__ lse,
                                                         const void* mask) {
  constexpr bool kWgmma = takes_wgmma_kernel<Cfg>();
  if constexpr (kWgmma)
    sliding_window_attention_wgmma<Cfg>(q, k, v, o, lse, mask);
  else
    sliding_window_attention_mma<Cfg>(q, k, v, o, lse, mask);
}

}  // namespace bandjit
