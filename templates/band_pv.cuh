// bandjit/band_pv.cuh — O[i, k] = Σ_j P[i, j] · V[key(i, j), k] over valid slots (SPEC §3.3).
// Whatever P holds at a slot whose key is outside the sequence contributes nothing.
//
// One block: TM query rows of one residue sub-sequence, all Dh columns. For each chunk of
// TJ diagonals it stages the TM + TJ − 1 value rows the chunk touches and the P tile,
// skewed into A[row][u] = P[row][u − row] (zeros off the band), so that O += A · V is a
// plain tensor-core product.
#pragma once

#include "bandjit/band_tiles.cuh"
#include "bandjit/mma.cuh"

namespace bandjit {

template <class Cfg>
__device__ __forceinline__ void band_pv(const typename Cfg::T* __restrict__ p,
                                        const typename Cfg::T* __restrict__ v,
                                        typename Cfg::T* __restrict__ o) {
  using T = typename Cfg::T;
  using Ops = MmaOps<T>;
  constexpr int TM = Cfg::kTileRows, TJ = Cfg::kTileDiagonals, NU = Cfg::kKeyRows;
  constexpr int DH = Cfg::kHeadDim, C = Cfg::kDiagonals, WL = Cfg::kWindowLeft;
  constexpr int LDA = NU + 16 / sizeof(T);
  constexpr int LDV = DH + 8;  // 16 bytes (16-bit) / 32 bytes (float): conflict-free B loads
  constexpr int W = Cfg::kThreads / 32, MT = TM / 16, PARTS = W / MT;
  constexpr int ND = DH / 8, NDW = ceil_div(ND, PARTS);
  static_assert(W % MT == 0, "warps split evenly over the m-tiles");
  static_assert(NU % Ops::kK == 0 && NU >= 16 * (MT - 1) + 15 + TJ, "staged rows cover the band");

  extern __shared__ __align__(16) unsigned char smem[];
  T* sA = reinterpret_cast<T*>(smem);
  T* sV = sA + TM * LDA;

  const BandTile tc = decode_band_tile<Cfg>(blockIdx.x);
  if (tc.t0 >= tc.len) return;
  const int b = blockIdx.z;
  const int warp = threadIdx.x >> 5, mt = warp % MT, part = warp / MT;

  float acc[NDW][4];
#pragma unroll
  for (int n = 0; n < NDW; ++n) acc[n][0] = acc[n][1] = acc[n][2] = acc[n][3] = 0.f;

  for (int jc = 0; jc < Cfg::kDiagonalChunks; ++jc) {
    const int j0 = jc * TJ;
    const int count = min(TJ, C - j0);
    const int u0 = tc.t0 + j0 - WL;  // key row (sub-sequence index) of sA column 0
    stage_rows_async<Cfg, NU, LDV>(sV, v, b, tc, u0);
    cp_async_commit();
    for (int idx = threadIdx.x; idx < TM * NU; idx += Cfg::kThreads) {
      const int row = idx / NU, x = idx - row * NU;
      const int jl = x - row, t = tc.t0 + row, u = u0 + x;
      T val = from_float<T>(0.f);
      if (jl >= 0 && jl < count && t < tc.len && u >= 0 && u < tc.len)
        val = p[row_offset<Cfg>(b, tc.h, tc.r + tc.D * t, C) + j0 + jl];
      sA[row * LDA + x] = val;
    }
    cp_async_wait_all();
    __syncthreads();

    const int k_first = (16 * mt) / Ops::kK, k_last = (16 * mt + 14 + TJ) / Ops::kK;
    for (int ks = k_first; ks <= k_last; ++ks) {
      typename Ops::AFrag a;
      Ops::load_a(a, sA, LDA, 16 * mt, ks * Ops::kK);
#pragma unroll
      for (int n = 0; n < NDW; ++n) {
        const int nd = part * NDW + n;
        if (nd < ND) {
          typename Ops::BFrag bf;
          Ops::load_b_kn(bf, sV, LDV, ks * Ops::kK, 8 * nd);
          Ops::mma(acc[n], a, bf);
        }
      }
    }
    __syncthreads();
  }

  const int g = lane_id() >> 2, t4 = lane_id() & 3;
#pragma unroll
  for (int n = 0; n < NDW; ++n) {
    const int nd = part * NDW + n;
    if (nd >= ND) continue;
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const int t = tc.t0 + 16 * mt + g + 8 * half;
      if (t >= tc.len) continue;
      T* dst = o + row_offset<Cfg>(b, tc.h, tc.r + tc.D * t, DH) + 8 * nd + 2 * t4;
      dst[0] = from_float<T>(acc[n][2 * half]);
      dst[1] = from_float<T>(acc[n][2 * half + 1]);
    }
  }
}

}  // namespace bandjit
