// Experiment: band_qk's Hopper kernel with S staged in per-tile slots and written out while
// the products of the next tile run (16-byte stores of whole pieces, element stores of the
// ragged ones). Smaller shared memory (3 K stages, 4 slots of 64 × 72) → 3 blocks per SM.
#pragma once

#include "bandjit/band_qk_wgmma.cuh"

namespace bandjit {

template <class Cfg>
struct QkSlotsSmem {
  static constexpr int TM = 64, TN = 64, STAGES = QKX_STAGES, SLOTS = 4, SW = 72;
  static constexpr unsigned kQBytes = TM * 128, kKBytes = TN * 128, kSlotBytes = TM * SW * 2;
  static constexpr unsigned kBytes = 1024 + kQBytes + STAGES * kKBytes + SLOTS * kSlotBytes;
};

template <class Cfg>
__device__ __forceinline__ void band_qk_slots(const typename Cfg::T* __restrict__ q, const typename Cfg::T* __restrict__ k,
                                              typename Cfg::T* __restrict__ s) {
  using T = typename Cfg::T;
  using L = QkSlotsSmem<Cfg>;
  constexpr int TM = L::TM, TN = L::TN, TJ = Cfg::kWgmmaDiagonals, STAGES = L::STAGES, SW = L::SW;
  constexpr int C = Cfg::kDiagonals, WL = Cfg::kWindowLeft;
  static_assert(STAGES >= 2, "");

  extern __shared__ __align__(16) unsigned char smem[];
  const u32 base = smem_addr(smem);
  unsigned char* sQ = smem + (((base + 1023) & ~1023u) - base);
  unsigned char* sK = sQ + L::kQBytes;
  T* sS = reinterpret_cast<T*>(sK + STAGES * L::kKBytes);  // SLOTS × TM rows × SW
  const u64 dQ = wgmma_desc(smem_addr(sQ), 16, 1024), dK = wgmma_desc(smem_addr(sK), 16, 1024);

  QKX_MARK(0);
  const BandTile tc = decode_band_tile<Cfg, TM>(blockIdx.x);
  if (tc.t0 >= tc.len) return;
  const int b = blockIdx.z, len = tc.len, t0 = tc.t0;
  const int j0 = blockIdx.y * TJ, count = min(TJ, C - j0);
  const int ub = t0 + j0 - WL;
  const int tiles = ceil_div(TM - 1 + count, TN);
  const SubsequenceRows<Cfg> qrows(b, tc, 64), srows(b, tc, C);

  stage_qk_tile<Cfg>(sQ, q, qrows, len, t0);
#pragma unroll
  for (int n = 0; n < STAGES - 1; ++n) {
    if (n < tiles) stage_qk_tile<Cfg>(sK + n * L::kKBytes, k, qrows, len, ub + TN * n);
    cp_async_commit();
  }

  // Logical staged index of (row r, diagonal jl): x = mis_r + jl = (mis_r − r) + kl. Tile m
  // (keys kl in [64m, 64m + 64)) keeps its elements in slot m mod 4 at x − 8·(8m + d_r),
  // d_r = floor((mis_r − r) / 8): positions [ph_r, ph_r + 64), ph_r = (mis_r − r) mod 8.
  const int warp = threadIdx.x >> 5, g = lane_id() >> 2, t4 = lane_id() & 3;
  int sto[2];
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int r = 16 * warp + g + 8 * h, t = min(t0 + r, len - 1);
    sto[h] = r * SW + ((misalignment<T>(srows.at(t) + j0) - r) & 7) + 2 * t4;
  }

  // Write-out: this thread takes piece wk of each pass for rows (tid >> 3) + 16i. Piece p =
  // logical elements [8p, 8p + 8) = global (st − mis) + 8p …, 16-byte aligned.
  const int wk = threadIdx.x & 7;
  i64 wg[4];
  int wmis[4], wd[4];
  bool wv[4];
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const int r = (threadIdx.x >> 3) + 16 * i, t = t0 + r;
    wv[i] = t < len;
    const i64 st = srows.at(min(t, len - 1)) + j0;
    wmis[i] = misalignment<T>(st);
    wg[i] = st - wmis[i];
    wd[i] = (wmis[i] - r) >> 3;
  }
  // Element at logical index x of row r (its tile: (jl + r) / 64).
  auto elem = [&](int r, int mis, int d, int x) -> T {
    const int m = (x - mis + r) >> 6;
    return sS[(m & 3) * (TM * SW) + r * SW + x - 8 * (8 * m + d)];
  };
  // Piece p of row i, all of whose elements are final; m = (p − d) / 8.
  auto write_piece = [&](int i, int p) {
    const int r = (threadIdx.x >> 3) + 16 * i, mis = wmis[i], d = wd[i];
    if (!wv[i] || p < 0 || 8 * p + 8 <= mis || 8 * p >= mis + count) return;
    T* dst = s + wg[i] + 8 * p;
    if (8 * p >= mis && 8 * p + 8 <= mis + count) {
      const int qq = p - d, m = qq >> 3, kk = qq & 7, ph = (mis - r) & 7;
      const uint4 bv = *reinterpret_cast<const uint4*>(sS + (m & 3) * (TM * SW) + r * SW + 8 * kk);
      uint4 out = bv;
      if (kk == 0 && ph != 0) {  // straddles tiles m − 1 (its positions 64 …) and m
        const uint4 av = *reinterpret_cast<const uint4*>(sS + ((m - 1) & 3) * (TM * SW) + r * SW + 64);
        const unsigned* a = reinterpret_cast<const unsigned*>(&av);
        const unsigned* bb = reinterpret_cast<const unsigned*>(&bv);
        unsigned* o = reinterpret_cast<unsigned*>(&out);
#pragma unroll
        for (int w = 0; w < 4; ++w)
          o[w] = 2 * w + 1 < ph ? a[w] : 2 * w >= ph ? bb[w] : __byte_perm(a[w], bb[w], 0x7610);
      }
      *reinterpret_cast<uint4*>(dst) = out;
    } else {
#pragma unroll
      for (int c = 0; c < 8; ++c) {
        const int x = 8 * p + c, jl = x - mis;
        if (jl >= 0 && jl < count) dst[c] = elem(r, mis, d, x);
      }
    }
  };
  auto write_pass = [&](int n) {
#pragma unroll
    for (int i = 0; i < 4; ++i) write_piece(i, 8 * n + wd[i] + wk);
  };

#pragma unroll 1
  for (int n = 0; n < tiles; ++n) {
    const int stage = n % STAGES, kb = TN * n;
    cp_async_wait<STAGES - 2>();
    fence_proxy_async();
    __syncthreads();  // tile n's K is in; every warp stored tile n − 1
    if (n + STAGES - 1 < tiles)
      stage_qk_tile<Cfg>(sK + (n + STAGES - 1) % STAGES * L::kKBytes, k, qrows, len, ub + kb + (STAGES - 1) * TN);
    cp_async_commit();
    float acc[32];
    wgmma_fence_operands<32>(acc);
    wgmma_fence();
#pragma unroll
    for (int ks = 0; ks < 4; ++ks)
      wgmma_ss<T>(acc, dQ + wgmma_desc_offset(32 * ks), dK + wgmma_desc_offset(stage * L::kKBytes + 32 * ks), ks > 0);
    wgmma_commit();
    if (n > 0) write_pass(n - 1);
    wgmma_wait<0>();
    wgmma_fence_operands<32>(acc);
    T* slot = sS + (n & 3) * (TM * SW);
    T* const at[2] = {slot + sto[0] - kb, slot + sto[1] - kb};
    if (kb >= TM - 1 && kb + TN <= count && ub + kb >= 0 && ub + kb + TN <= len)
      store_qk_tile<Cfg, true>(acc, at, kb, 0, 0, 0, 0);
    else
      store_qk_tile<Cfg, false>(acc, at, kb, 16 * warp + g, count, -ub, len - ub);
  }
  cp_async_wait<0>();
  __syncthreads();
  QKX_MARK(1);
  write_pass(tiles - 1);
  if (wk == 0) {
#pragma unroll
    for (int i = 0; i < 4; ++i) write_piece(i, 8 * tiles + wd[i]);
  }
  QKX_MARK(2);
}

}  // namespace bandjit
