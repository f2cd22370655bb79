// bandjit/band_qk.cuh — S[i, j] = scale · Σ_k Q[i, k] · K[key(i, j), k]  (SPEC §3.1)
// key(i, j) = i + D·(j − w_l); S = −inf where the key is outside the sequence.
//
// One block: TM query rows of one residue sub-sequence × TJ diagonals. It stages the Q rows
// and the TM + TJ − 1 key rows they touch, computes the dense product of the two on the
// tensor cores (only the n-tiles that meet the band), keeps the band part in shared memory
// and writes each S row segment with coalesced stores.
#pragma once

#include "bandjit/band_tiles.cuh"
#include "bandjit/mma.cuh"

namespace bandjit {

template <class Cfg>
__device__ __forceinline__ void band_qk(const typename Cfg::T* __restrict__ q,
                                        const typename Cfg::T* __restrict__ k,
                                        typename Cfg::T* __restrict__ s) {
  using T = typename Cfg::T;
  using Ops = MmaOps<T>;
  constexpr int TM = Cfg::kTileRows, TJ = Cfg::kTileDiagonals, NU = Cfg::kKeyRows;
  constexpr int DH = Cfg::kHeadDim, C = Cfg::kDiagonals, WL = Cfg::kWindowLeft;
  constexpr int LD = DH + 16 / sizeof(T);  // one 16-byte pad per row: no bank conflicts
  constexpr int W = Cfg::kThreads / 32, MT = TM / 16, PARTS = W / MT;
  constexpr int NT = (14 + TJ) / 8 + 1;  // n-tiles of 8 keys that meet 16 rows × TJ diagonals
  constexpr int NTW = ceil_div(NT, PARTS);
  static_assert(W % MT == 0, "warps split evenly over the m-tiles");
  static_assert(NU >= 8 * (2 * (MT - 1) + NT), "key rows cover every n-tile");

  extern __shared__ __align__(16) unsigned char smem[];
  T* sQ = reinterpret_cast<T*>(smem);
  T* sK = sQ + TM * LD;
  float* sS = reinterpret_cast<float*>(sK + NU * LD);

  const BandTile tc = decode_band_tile<Cfg>(blockIdx.x);
  if (tc.t0 >= tc.len) return;
  const int b = blockIdx.z, j0 = blockIdx.y * TJ;
  const int u0 = tc.t0 + j0 - WL;  // first key row (sub-sequence index) of the chunk

  stage_rows_async<Cfg, TM, LD>(sQ, q, b, tc, tc.t0);
  stage_rows_async<Cfg, NU, LD>(sK, k, b, tc, u0);
  cp_async_commit();
  cp_async_wait_all();
  __syncthreads();

  const int warp = threadIdx.x >> 5, mt = warp % MT, part = warp / MT;
  float acc[NTW][4];
#pragma unroll
  for (int n = 0; n < NTW; ++n) acc[n][0] = acc[n][1] = acc[n][2] = acc[n][3] = 0.f;

#pragma unroll
  for (int kk = 0; kk < DH; kk += Ops::kK) {
    typename Ops::AFrag a;
    Ops::load_a(a, sQ, LD, 16 * mt, kk);
#pragma unroll
    for (int n = 0; n < NTW; ++n) {
      const int nt = part * NTW + n;
      if (nt < NT) {
        typename Ops::BFrag bf;
        Ops::load_b_nk(bf, sK, LD, 8 * (2 * mt + nt), kk);
        Ops::mma(acc[n], a, bf);
      }
    }
  }

  // Product element (row, key u) is diagonal j = u − row of that row.
  const int g = lane_id() >> 2, t4 = lane_id() & 3;
#pragma unroll
  for (int n = 0; n < NTW; ++n) {
    const int nt = part * NTW + n;
    if (nt >= NT) continue;
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const int row = 16 * mt + g + (e >= 2 ? 8 : 0);
      const int u = 8 * (2 * mt + nt) + 2 * t4 + (e & 1);
      const int jl = u - row;
      if (jl >= 0 && jl < TJ) sS[row * TJ + jl] = acc[n][e] * Cfg::kScale;
    }
  }
  __syncthreads();

  const int count = min(TJ, C - j0);
  for (int row = warp; row < TM; row += W) {
    const int t = tc.t0 + row;
    if (t >= tc.len) break;
    T* dst = s + row_offset<Cfg>(b, tc.h, tc.r + tc.D * t, C) + j0;
    for (int jl = lane_id(); jl < count; jl += 32) {
      const int u = u0 + row + jl;
      const float v = (u >= 0 && u < tc.len) ? sS[row * TJ + jl] : neg_inf();
      dst[jl] = from_float<T>(v);
    }
  }
}

}  // namespace bandjit
