// bandjit/band_pv.cuh — O[i, k] = Σ_j P[i, j] · V[key(i, j), k] over valid slots (SPEC §3.3).
// Whatever P holds at a slot whose key is outside the sequence contributes nothing.
//
// One block: TM = 64 query rows of one residue sub-sequence, all Dh columns; 8 warps =
// 4 row groups × 2 column halves. Per chunk of TJ diagonals (all C when they fit) the P
// rows are staged whole, each at its global 16-byte phase (cp.async, 16-byte pieces), and
// the TM + TJ − 1 value rows stream through in slabs of KS rows, three in flight. The
// product O += A·V uses A[row][key] = P[row][key − row]: the A fragments are read from the
// staged P rows along the diagonal, so no skewed copy is made; slots off the band or off
// the sequence read as 0 (only the tiles at the band's edges pay for that check).
#pragma once

#include "bandjit/band_tiles.cuh"
#include "bandjit/mma.cuh"
#include "bandjit/vector_io.cuh"

namespace bandjit {

// A fragment of A[row][key] = P[row][key − row] for the m-tile at row0 and the k-step at
// key0, from staged P rows; `checked` zeroes slots off the band [0, count) and keys outside
// the sequence.
template <class T>
struct SkewedA;

#if defined(BANDJIT_USE_FP16) || defined(BANDJIT_USE_BF16)
template <class T>
struct SkewedA {
  static __device__ __forceinline__ u32 pack(T lo, T hi) {
    return static_cast<u32>(*reinterpret_cast<unsigned short*>(&lo)) |
           (static_cast<u32>(*reinterpret_cast<unsigned short*>(&hi)) << 16);
  }
  template <bool kChecked>
  static __device__ __forceinline__ void load(typename MmaOps<T>::AFrag& a, const T* sP, int ldp, const int* phase,
                                              int row0, int key0, int count, int key_lo, int key_hi) {
    const int g = lane_id() >> 2, t4 = lane_id() & 3;
    const T zero = from_float<T>(0.f);
#pragma unroll
    for (int reg = 0; reg < 4; ++reg) {
      const int h = reg & 1;  // a0/a2: row g, a1/a3: row g + 8
      const int r = row0 + g + 8 * h;
      const int key = key0 + 2 * t4 + 8 * (reg >> 1);
      const T* base = sP + r * ldp + phase[h] - r;  // base[key] = P[r][key − r]
      T lo, hi;
      if (kChecked) {  // reads only slots on the band: others may lie outside the staged rows
        lo = (key - r >= 0 && key - r < count && key >= key_lo && key < key_hi) ? base[key] : zero;
        hi = (key + 1 - r >= 0 && key + 1 - r < count && key + 1 >= key_lo && key + 1 < key_hi) ? base[key + 1] : zero;
      } else {
        lo = base[key];
        hi = base[key + 1];
      }
      a.r[reg] = pack(lo, hi);
    }
  }
};
#endif

template <>
struct SkewedA<float> {
  template <bool kChecked>
  static __device__ __forceinline__ void load(typename MmaOps<float>::AFrag& a, const float* sP, int ldp,
                                              const int* phase, int row0, int key0, int count, int key_lo,
                                              int key_hi) {
    const int g = lane_id() >> 2, t4 = lane_id() & 3;
#pragma unroll
    for (int reg = 0; reg < 4; ++reg) {
      const int h = reg & 1;  // a0: (g, t4), a1: (g + 8, t4), a2: (g, t4 + 4), a3: (g + 8, t4 + 4)
      const int r = row0 + g + 8 * h;
      const int key = key0 + t4 + 4 * (reg >> 1);
      const bool on_band = !kChecked || (key - r >= 0 && key - r < count && key >= key_lo && key < key_hi);
      const float x = on_band ? sP[r * ldp + phase[h] + key - r] : 0.f;
      MmaOps<float>::split(x, a.big[reg], a.small[reg]);
    }
  }
};

template <class Cfg>
__device__ __forceinline__ void band_pv(const typename Cfg::T* __restrict__ p,
                                        const typename Cfg::T* __restrict__ v,
                                        typename Cfg::T* __restrict__ o) {
  using T = typename Cfg::T;
  using Ops = MmaOps<T>;
  constexpr int TM = Cfg::kTileRows, TJ = Cfg::kTileDiagonals, KS = Cfg::kSlabRows, LDP = Cfg::kStageLD;
  constexpr int DH = Cfg::kHeadDim, C = Cfg::kDiagonals, WL = Cfg::kWindowLeft;
  constexpr int LDV = DH + 8;  // 16 bytes (16-bit) / 32 bytes (float): conflict-free B loads
  constexpr int W = Cfg::kThreads / 32, MT = TM / 16, PARTS = W / MT, RING = 3;
  constexpr int ND = DH / 8, NDW = ceil_div(ND, PARTS);
  static_assert(W % MT == 0, "warps split evenly over the row groups");
  static_assert(KS % Ops::kK == 0, "slabs hold whole k-steps");
  static_assert(LDP >= TJ + Vec<T>::kElems - 1 && LDP % Vec<T>::kElems == 0, "staged rows hold any phase");

  extern __shared__ __align__(16) unsigned char smem[];
  T* sP = reinterpret_cast<T*>(smem);
  T* sV = sP + TM * LDP;
  __shared__ i64 row_start[TM];  // global element of each row's first diagonal; −1 past the end

  const BandTile tc = decode_band_tile<Cfg>(blockIdx.x);
  if (tc.t0 >= tc.len) return;
  const int b = blockIdx.z;
  const int warp = threadIdx.x >> 5, mt = warp % MT, part = warp / MT;
  const int g = lane_id() >> 2;

  float acc[NDW][4];
#pragma unroll
  for (int n = 0; n < NDW; ++n) acc[n][0] = acc[n][1] = acc[n][2] = acc[n][3] = 0.f;

  for (int chunk = 0; chunk < Cfg::kDiagonalChunks; ++chunk) {
    const int j0 = chunk * TJ;
    const int count = min(TJ, C - j0);
    const int u0 = tc.t0 + j0 - WL;  // key (sub-sequence index) of block-local key 0
    const int slabs = (TM + count - 1 + KS - 1) / KS;
    if (chunk > 0) __syncthreads();  // the previous chunk is done with sP and sV

    // P rows of this chunk, each at its 16-byte phase, as one flat range of pieces.
    for (int r = threadIdx.x; r < TM; r += Cfg::kThreads) {
      const int t = tc.t0 + r;
      row_start[r] = t < tc.len ? row_offset<Cfg>(b, tc.h, tc.r + tc.D * t, C) + j0 : -1;
    }
    __syncthreads();
    stage_tile_async<T, TM, LDP, LDP / Vec<T>::kElems, Cfg::kThreads>(sP, p, row_start, count);
    stage_rows_async<Cfg, KS, LDV>(sV, v, b, tc, u0);
    cp_async_commit();
    if (slabs > 1) {
      stage_rows_async<Cfg, KS, LDV>(sV + KS * LDV, v, b, tc, u0 + KS);
      cp_async_commit();
    }
    int phase[2];
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int t = tc.t0 + 16 * mt + g + 8 * h;
      phase[h] = t < tc.len ? misalignment<T>(row_offset<Cfg>(b, tc.h, tc.r + tc.D * t, C) + j0) : 0;
    }
    // Block-local keys inside the sequence; the band of this row group.
    const int key_lo = max(0, -u0), key_hi = min(TM + count - 1, tc.len - u0);
    const int band_lo = 16 * mt, band_hi = 16 * mt + 15 + count - 1;

    for (int sl = 0; sl < slabs; ++sl) {
      if (sl + 1 < slabs) cp_async_wait<1>(); else cp_async_wait<0>();
      __syncthreads();
      if (sl + 2 < slabs) {
        stage_rows_async<Cfg, KS, LDV>(sV + ((sl + 2) % RING) * KS * LDV, v, b, tc, u0 + (sl + 2) * KS);
        cp_async_commit();
      }
      const T* slab = sV + (sl % RING) * KS * LDV;
      // A fresh accumulator per slab, added to the total with ordinary float adds: the
      // tensor cores' accumulation loses low bits, which over thousands of diagonals
      // would exceed float32's 1e-5 (measured 1.5e-4 at C = 32768).
      float part_acc[NDW][4];
#pragma unroll
      for (int n = 0; n < NDW; ++n) part_acc[n][0] = part_acc[n][1] = part_acc[n][2] = part_acc[n][3] = 0.f;
#pragma unroll
      for (int kk = 0; kk < KS; kk += Ops::kK) {
        const int key0 = sl * KS + kk;
        if (key0 + Ops::kK - 1 < band_lo || key0 > band_hi) continue;
        // Inside the band for all 16 rows and inside the sequence: no per-slot checks.
        const bool inner = key0 - (16 * mt + 15) >= 0 && key0 + Ops::kK - 1 - 16 * mt < count && key0 >= key_lo &&
                           key0 + Ops::kK <= key_hi;
        typename Ops::AFrag a;
        if (inner)
          SkewedA<T>::template load<false>(a, sP, LDP, phase, 16 * mt, key0, count, key_lo, key_hi);
        else
          SkewedA<T>::template load<true>(a, sP, LDP, phase, 16 * mt, key0, count, key_lo, key_hi);
#pragma unroll
        for (int n = 0; n < NDW; ++n) {
          const int nd = part * NDW + n;
          if (nd < ND) {
            typename Ops::BFrag bf;
            Ops::load_b_kn(bf, slab, LDV, kk, 8 * nd);
            Ops::mma(part_acc[n], a, bf);
          }
        }
      }
#pragma unroll
      for (int n = 0; n < NDW; ++n)
#pragma unroll
        for (int e = 0; e < 4; ++e) acc[n][e] += part_acc[n][e];
    }
  }

  const int t4 = lane_id() & 3;
#pragma unroll
  for (int n = 0; n < NDW; ++n) {
    const int nd = part * NDW + n;
    if (nd >= ND) continue;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int t = tc.t0 + 16 * mt + g + 8 * h;
      if (t >= tc.len) continue;
      T* dst = o + row_offset<Cfg>(b, tc.h, tc.r + tc.D * t, DH) + 8 * nd + 2 * t4;
      dst[0] = from_float<T>(acc[n][2 * h]);
      dst[1] = from_float<T>(acc[n][2 * h + 1]);
    }
  }
}

}  // namespace bandjit
