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
// domain), rescales its O accumulators and adds P·V. Tiles that lie wholly inside a warp's
// band skip the per-element band checks; tiles wholly outside it skip the warp's work.
//
// 16-bit types keep Q's fragments in registers (head_dim ≤ 128) and hand P to the second
// product in registers: the m16n8 accumulator layout is the m16n8k16 A layout. float32
// (3xTF32, mma.cuh) passes P through a per-warp shared tile instead.
#pragma once

#include "bandjit/band_tiles.cuh"
#include "bandjit/mma.cuh"

namespace bandjit {

// Two floats as the 32-bit pair (lo, hi) of a 16-bit type: an mma A register.
template <class T>
__device__ __forceinline__ u32 pack_float_pair(float lo, float hi) {
  T a = from_float<T>(lo), b = from_float<T>(hi);
  return static_cast<u32>(*reinterpret_cast<unsigned short*>(&a)) |
         (static_cast<u32>(*reinterpret_cast<unsigned short*>(&b)) << 16);
}

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
__device__ __forceinline__ void sliding_window_attention(const typename Cfg::T* __restrict__ q,
                                                         const typename Cfg::T* __restrict__ k,
                                                         const typename Cfg::T* __restrict__ v,
                                                         typename Cfg::T* __restrict__ o, float* __restrict__ lse,
                                                         const void* mask) {
  using T = typename Cfg::T;
  using Ops = MmaOps<T>;
  using L = AttentionSmem<Cfg>;
  constexpr int TM = L::TM, TN = L::TN, LD = L::LD, ST = L::ST, W = L::W, LDP = L::LDP;
  constexpr int DH = Cfg::kHeadDim, WL = Cfg::kWindowLeft, WR = Cfg::kWindowRight, N = Cfg::kSeqLen;
  constexpr int NT = TN / 8, OT = DH / 8, KS = DH / Ops::kK;
  constexpr bool k16 = sizeof(T) == 2;
  constexpr bool kQInRegs = k16 && DH <= 128;
  constexpr float kLog2e = 1.4426950408889634f, kLn2 = 0.6931471805599453f;
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

  const BandTile tc = decode_band_tile<Cfg, TM>(blockIdx.x);
  if (tc.t0 >= tc.len) return;
  const int b = blockIdx.z, len = tc.len, t0 = tc.t0;
  const int warp = threadIdx.x >> 5, g = lane_id() >> 2, t4 = lane_id() & 3;
  const int tw = t0 + 16 * warp;  // the warp's first row
  const int t_end = min(t0 + TM, len);
  const int u_lo = max(0, t0 - WL), u_hi = min(len, t_end + WR);
  const int tiles = ceil_div(u_hi - u_lo, TN);

  // The key mask of one tile, in log2 units: −inf removes the key (and keys past the end).
  auto stage_mask = [&](int stage, int ub) {
    if constexpr (Cfg::kKeyMask != kMaskNone) {
      for (int x = threadIdx.x; x < TN; x += Cfg::kThreads) {
        const int u = ub + x;
        float add = neg_inf();
        if (u < len) {
          const i64 key = i64(b) * N + tc.r + i64(tc.D) * u;
          if constexpr (Cfg::kKeyMask == kMaskBool) {
            if (static_cast<const unsigned char*>(mask)[key] != 0) add = 0.f;
          } else {
            const float m = static_cast<const float*>(mask)[key];
            if (!(m < 0.f)) add = m * kLog2e;  // HF Longformer: a negative value removes the key
          }
        }
        sMask[stage * TN + x] = add;
      }
    }
  };

  stage_row_range_async<Cfg, LD>(sQ, q, b, tc, t0, 0, TM);
  stage_row_range_async<Cfg, LD>(sK, k, b, tc, u_lo, 0, TN);
  stage_row_range_async<Cfg, LD>(sV, v, b, tc, u_lo, 0, TN);
  cp_async_commit();
  stage_mask(0, u_lo);

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
      stage_mask(stage ^ 1, ub + TN);
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
    const bool none = ub > tw + 15 + WR || ub + TN - 1 < tw - WL || tw >= len;
    const bool all = ub + TN <= len && ub - (tw + 15) >= -WL && ub + TN - 1 - tw <= WR;
    if (!none) {
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

      // Scores → log2-domain logits; slots off the band, past the end or masked → −inf.
      float tile_max[2] = {neg_inf(), neg_inf()};
#pragma unroll
      for (int nt = 0; nt < NT; ++nt)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int col = 8 * nt + 2 * t4 + (e & 1);
          float x = s[nt][e] * Cfg::kScaleLog2e;
          if constexpr (Cfg::kKeyMask != kMaskNone) x += sMask[stage * TN + col];
          if (!all) {
            const int d = ub + col - (tw + g + 8 * (e >> 1));  // u − t
            if (d < -WL || d > WR || ub + col >= len) x = neg_inf();
          }
          s[nt][e] = x;
          tile_max[e >> 1] = fmaxf(tile_max[e >> 1], x);
        }
      float alpha[2], base[2];
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        tile_max[h] = fmaxf(tile_max[h], __shfl_xor_sync(0xffffffffu, tile_max[h], 1));
        tile_max[h] = fmaxf(tile_max[h], __shfl_xor_sync(0xffffffffu, tile_max[h], 2));
        const float m_new = fmaxf(m[h], tile_max[h]);
        base[h] = m_new == neg_inf() ? 0.f : m_new;  // a row with nothing yet stays at 2^−inf = 0
        alpha[h] = exp2_approx(m[h] - base[h]);
        m[h] = m_new;
        l[h] *= alpha[h];
      }
#pragma unroll
      for (int nt = 0; nt < NT; ++nt)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          s[nt][e] = exp2_approx(s[nt][e] - base[e >> 1]);
          l[e >> 1] += s[nt][e];
        }
#pragma unroll
      for (int ot = 0; ot < OT; ++ot)
#pragma unroll
        for (int e = 0; e < 4; ++e) acc[ot][e] *= alpha[e >> 1];

      // O += P·V over the tile's keys.
      if constexpr (k16) {
#pragma unroll
        for (int kk = 0; kk < TN / 16; ++kk) {
          typename Ops::AFrag pa;  // A (row, key) = accumulator layout of n-tiles 2kk, 2kk + 1
          pa.r[0] = pack_float_pair<T>(s[2 * kk][0], s[2 * kk][1]);
          pa.r[1] = pack_float_pair<T>(s[2 * kk][2], s[2 * kk][3]);
          pa.r[2] = pack_float_pair<T>(s[2 * kk + 1][0], s[2 * kk + 1][1]);
          pa.r[3] = pack_float_pair<T>(s[2 * kk + 1][2], s[2 * kk + 1][3]);
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
#pragma unroll 1
        for (int kk = 0; kk < TN / 8; ++kk) {
          typename Ops::AFrag pa;
          Ops::load_a(pa, pw, LDP, 0, 8 * kk);
#pragma unroll
          for (int ot = 0; ot < OT; ++ot) {
            typename Ops::BFrag bf;
            Ops::load_b_kn(bf, sVs, LD, 8 * kk, 8 * ot);
            Ops::mma(acc[ot], pa, bf);
          }
        }
        __syncwarp();  // P is read before the next tile overwrites it
      }
    }
    __syncthreads();  // every warp is done with this stage before it is refilled
  }

  // Epilogue: O = acc / l through the warp's own Q rows (no warp reads another's), then out
  // as 16-byte stores; LSE = (m + log2 l)·ln 2.
  float inv[2];
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    l[h] += __shfl_xor_sync(0xffffffffu, l[h], 1);
    l[h] += __shfl_xor_sync(0xffffffffu, l[h], 2);
    inv[h] = l[h] > 0.f ? 1.f / l[h] : 0.f;
  }
  T* sO = sQ + 16 * warp * LD;
#pragma unroll
  for (int ot = 0; ot < OT; ++ot)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      T* at = sO + (g + 8 * h) * LD + 8 * ot + 2 * t4;
      at[0] = from_float<T>(acc[ot][2 * h] * inv[h]);
      at[1] = from_float<T>(acc[ot][2 * h + 1] * inv[h]);
    }
  __syncwarp();
  constexpr int V = 16 / sizeof(T), PIECES = DH / V;
  const SubsequenceRows<Cfg> rows(b, tc, DH);
  for (int idx = lane_id(); idx < 16 * PIECES; idx += 32) {
    const int row = idx / PIECES, piece = idx % PIECES;
    if (tw + row < len)
      *reinterpret_cast<uint4*>(o + rows.at(tw + row) + piece * V) =
          *reinterpret_cast<const uint4*>(sO + row * LD + piece * V);
  }
  if (t4 == 0) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int t = tw + g + 8 * h;
      if (t < len)
        lse[(i64(b) * Cfg::kHeads + tc.h) * N + tc.r + i64(tc.D) * t] =
            l[h] > 0.f ? (m[h] + log2_approx(l[h])) * kLn2 : neg_inf();
    }
  }
}

}  // namespace bandjit
