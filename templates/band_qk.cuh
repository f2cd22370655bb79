// bandjit/band_qk.cuh — S[i, j] = scale · Σ_k Q[i, k] · K[key(i, j), k]  (SPEC §3.1)
// key(i, j) = i + D·(j − w_l); S = −inf where the key is outside the sequence.
//
// One block: TM query rows of one residue sub-sequence × TJ diagonals; its warps split the
// rows in groups of 16 and interleave the 8-key n-tiles. The TM + TJ − 1 key rows it needs
// stream through shared memory in slabs of KS rows, three in flight (cp.async). For each
// slab, each warp multiplies its rows by the slab's keys on the tensor cores — only the
// 8-key n-tiles that meet its band — and drops the band part into a staging tile of whole
// S row segments, each kept at its global 16-byte phase. The staging tile leaves with
// 16-byte stores at the end.
#pragma once

#include "bandjit/band_tiles.cuh"
#include "bandjit/mma.cuh"
#include "bandjit/vector_io.cuh"

namespace bandjit {

template <class Cfg>
__device__ __forceinline__ void band_qk(const typename Cfg::T* __restrict__ q,
                                        const typename Cfg::T* __restrict__ k,
                                        typename Cfg::T* __restrict__ s) {
  using T = typename Cfg::T;
  using Ops = MmaOps<T>;
  constexpr int TM = Cfg::kTileRows, TJ = Cfg::kTileDiagonals, KS = Cfg::kSlabRows, LDS = Cfg::kStageLD;
  constexpr int DH = Cfg::kHeadDim, C = Cfg::kDiagonals, WL = Cfg::kWindowLeft;
  constexpr int LDQ = DH + 16 / sizeof(T);  // one 16-byte pad per row: conflict-free fragments
  constexpr int W = Cfg::kThreads / 32, MT = TM / 16, PARTS = W / MT, RING = 3;
  constexpr int NT = KS / 8, NTW = ceil_div(NT, PARTS), KSTEPS = DH / Ops::kK;
  // Q fragments live in registers (loaded once), so Q's shared memory is reused for staging.
  constexpr bool kQInRegs = Cfg::kQInRegisters;
  constexpr int kQElems = TM * LDQ, kStageElems = TM * LDS;
  static_assert(W % MT == 0, "warps split evenly over the row groups");
  static_assert(LDS >= TJ + Vec<T>::kElems - 1 && LDS % Vec<T>::kElems == 0, "staging rows hold any phase");

  extern __shared__ __align__(16) unsigned char smem[];
  T* sQ = reinterpret_cast<T*>(smem);
  T* sS = kQInRegs ? sQ : sQ + kQElems;
  T* sK = kQInRegs ? sQ + (kQElems > kStageElems ? kQElems : kStageElems) : sS + kStageElems;

  __shared__ i64 row_start[TM];  // global element of each row's first diagonal; −1 past the end

  const BandTile tc = decode_band_tile<Cfg>(blockIdx.x);
  if (tc.t0 >= tc.len) return;
  const int b = blockIdx.z, j0 = blockIdx.y * TJ;
  const int count = min(TJ, C - j0);
  const int u0 = tc.t0 + j0 - WL;  // key (sub-sequence index) of block-local key 0
  const int slabs = (TM + count - 1 + KS - 1) / KS;
  for (int r = threadIdx.x; r < TM; r += Cfg::kThreads) {
    const int t = tc.t0 + r;
    row_start[r] = t < tc.len ? row_offset<Cfg>(b, tc.h, tc.r + tc.D * t, C) + j0 : -1;
  }

  stage_rows_async<Cfg, TM, LDQ>(sQ, q, b, tc, tc.t0);
  stage_rows_async<Cfg, KS, LDQ>(sK, k, b, tc, u0);
  cp_async_commit();
  if (slabs > 1) {
    stage_rows_async<Cfg, KS, LDQ>(sK + KS * LDQ, k, b, tc, u0 + KS);
    cp_async_commit();
  }

  const int warp = threadIdx.x >> 5, mt = warp % MT, part = warp / MT;
  const int g = lane_id() >> 2, t4 = lane_id() & 3;
  typename Ops::AFrag qa[kQInRegs ? KSTEPS : 1];
  // Staging address of (row, key) is base[h] + key: row h of this thread's two, at its phase.
  int base[2];
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int r = 16 * mt + g + 8 * h, t = tc.t0 + r;
    const int phase = t < tc.len ? misalignment<T>(row_offset<Cfg>(b, tc.h, tc.r + tc.D * t, C) + j0) : 0;
    base[h] = r * LDS + phase - r;
  }
  // row_start is read only after the loop's first barrier.
  // Block-local keys inside the sequence, and the keys this row group's band needs.
  const int key_lo = max(0, -u0), key_hi = min(TM + count - 1, tc.len - u0);
  const int band_lo = 16 * mt, band_hi = 16 * mt + 15 + count - 1;

  for (int sl = 0; sl < slabs; ++sl) {
    if (sl + 1 < slabs) cp_async_wait<1>(); else cp_async_wait<0>();
    __syncthreads();  // slab sl landed everywhere; slab sl − 1's buffer is free
    if (kQInRegs && sl == 0) {
#pragma unroll
      for (int ks = 0; ks < KSTEPS; ++ks) Ops::load_a(qa[ks], sQ, LDQ, 16 * mt, ks * Ops::kK);
      __syncthreads();  // Q's shared memory becomes staging
    }
    if (sl + 2 < slabs) {
      stage_rows_async<Cfg, KS, LDQ>(sK + ((sl + 2) % RING) * KS * LDQ, k, b, tc, u0 + (sl + 2) * KS);
      cp_async_commit();
    }
    const int key0 = sl * KS;  // block-local key of the slab's first row
    if (key0 + KS - 1 < band_lo || key0 > band_hi) continue;
    const T* slab = sK + (sl % RING) * KS * LDQ;
    float acc[NTW][4];
#pragma unroll
    for (int n = 0; n < NTW; ++n) acc[n][0] = acc[n][1] = acc[n][2] = acc[n][3] = 0.f;
#pragma unroll
    for (int ks = 0; ks < KSTEPS; ++ks) {
      typename Ops::AFrag loaded;
      if (!kQInRegs) Ops::load_a(loaded, sQ, LDQ, 16 * mt, ks * Ops::kK);
      const typename Ops::AFrag& a = kQInRegs ? qa[ks] : loaded;
#pragma unroll
      for (int n = 0; n < NTW; ++n) {
        const int nt = n * PARTS + part;  // n-tiles interleaved over the warps of a row group
        if (NT % PARTS == 0 || nt < NT) {  // every n-tile of a slab that meets the band: no branches
          typename Ops::BFrag bf;
          Ops::load_b_nk(bf, slab, LDQ, 8 * nt, ks * Ops::kK);
          Ops::mma(acc[n], a, bf);
        }
      }
    }
    // Accumulator (row, key) is diagonal jl = key − row of that row.
#pragma unroll
    for (int n = 0; n < NTW; ++n) {
      const int nt = n * PARTS + part;
      const int lo = key0 + 8 * nt;
      if (nt >= NT || lo + 7 < band_lo || lo > band_hi) continue;
      const int key = lo + 2 * t4;
      // Inside the band for all 16 rows and inside the sequence: no per-slot checks.
      if (lo - (16 * mt + 15) >= 0 && lo + 7 - 16 * mt < count && lo >= key_lo && lo + 8 <= key_hi) {
#pragma unroll
        for (int e = 0; e < 4; ++e) sS[base[e >> 1] + key + (e & 1)] = from_float<T>(acc[n][e] * Cfg::kScale);
      } else {
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int h = e >> 1, kx = key + (e & 1), jl = kx - (16 * mt + g + 8 * h);
          if (jl >= 0 && jl < count)
            sS[base[h] + kx] = from_float<T>(kx >= key_lo && kx < key_hi ? acc[n][e] * Cfg::kScale : neg_inf());
        }
      }
    }
  }
  __syncthreads();
  copy_tile_to_global<T, TM, LDS, LDS / Vec<T>::kElems, Cfg::kThreads>(s, sS, row_start, count);
}

}  // namespace bandjit
