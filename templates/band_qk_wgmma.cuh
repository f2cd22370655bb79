// bandjit/band_qk_wgmma.cuh — the Hopper kernel of band_qk (SPEC §3.1) for 16-bit types,
// head_dim 64 and one dilation for all heads: S[t][j] = scale · Q[t] · K[t + j − w_l].
//
// One warpgroup owns 64 query rows t0 … t0 + 63 of one residue sub-sequence and a chunk of
// TJ diagonals j0 … j0 + TJ − 1 (grid.y). Those rows meet the keys ub = t0 + j0 − w_l …
// ub + 62 + TJ; they stream in tiles of 64 (kStages in flight, cp.async into the 128-byte
// swizzle of wgmma_layout.cuh, zeros past the sequence). Per key tile S_tile = Q·Kᵀ is four m64n64k16
// products with both operands in shared memory, and each accumulator (row r, key kl) is the
// band element (r, kl − r): it is scaled, rounded and stored into a staging tile (row r's
// diagonal jl at r·LDS + mis(r) + jl, mis(r) its global 16-byte phase). Elements off the
// chunk are not stored; keys past the sequence's ends score −inf. Only the first and last
// key tiles of a chunk (and tiles at the sequence's ends) test anything. When the chunk is
// done, its rows leave by write_band_rows (a bulk copy per row on sm_90). In bnhd the blocks
// run head-fastest (decode_band_tile's kTileMajor): the blocks in flight together write the
// rows of every head of the same positions, which lie side by side, not H·C elements apart.
#pragma once

#include "bandjit/band_tiles.cuh"
#include "bandjit/vector_io.cuh"
#include "bandjit/wgmma.cuh"

namespace bandjit {

// Shared memory: 1024 bytes of slack to align the swizzle atoms, Q (64 rows), kStages K tiles
// (64 rows each), the staging tile, the rows' global starts.
template <class Cfg>
struct QkWgmmaSmem {
  static constexpr int TM = 64, TN = 64, TJ = Cfg::kWgmmaDiagonals, LDS = Cfg::kWgmmaStageLD, STAGES = 4;
  static constexpr unsigned kQBytes = TM * 128, kKBytes = TN * 128, kStageBytes = TM * LDS * 2;
  static constexpr unsigned kBytes = 1024 + kQBytes + STAGES * kKBytes + kStageBytes + TM * 8;
};

// Copies 64 rows u0 … u0 + 63 of a [.., 64] tensor's sub-sequence (rows outside [0, len) as
// zeros) into the swizzled layout; 128 threads, each the same 16-byte chunk of 8 rows.
template <class Cfg, class T>
__device__ __forceinline__ void stage_qk_tile(unsigned char* tile, const T* __restrict__ g, const SubsequenceRows<Cfg>& rows,
                                              int len, int u0) {
  const int r0 = threadIdx.x >> 3, c = threadIdx.x & 7;
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const int r = r0 + 16 * i, u = u0 + r;
    const bool inside = static_cast<unsigned>(u) < static_cast<unsigned>(len);
    cp_async_16(tile + swizzled_offset<64>(r, c), inside ? g + rows.at(u) + 8 * c : g, inside ? 16 : 0);
  }
}

// Scales, rounds and stages one key tile's accumulators (see band_qk_wgmma). kWhole: no tests.
// Else the element of row r = r0 + 8h at block-local key kl has diagonal kl − r (stored only in
// [0, count)) and scores −inf unless key_lo ≤ kl < key_hi (the sequence, block-local).
template <class Cfg, bool kWhole>
__device__ __forceinline__ void store_qk_tile(const float (&acc)[32], typename Cfg::T* const (&at)[2], int kb, int r0,
                                              int count, int key_lo, int key_hi) {
  using T = typename Cfg::T;
  const int t4 = lane_id() & 3;
#pragma unroll
  for (int nt = 0; nt < 8; ++nt)
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const int h = e >> 1, kl = kb + 8 * nt + 2 * t4 + (e & 1);
      float x = acc[4 * nt + e] * Cfg::kScale;
      if constexpr (!kWhole) {
        const int jl = kl - (r0 + 8 * h);
        if (static_cast<unsigned>(jl) >= static_cast<unsigned>(count)) continue;
        if (kl < key_lo || kl >= key_hi) x = neg_inf();
      }
      at[h][kb + 8 * nt + (e & 1)] = from_float<T>(x);
    }
}

template <class Cfg>
__device__ __forceinline__ void band_qk_wgmma(const typename Cfg::T* __restrict__ q, const typename Cfg::T* __restrict__ k,
                                              typename Cfg::T* __restrict__ s) {
  using T = typename Cfg::T;
  using L = QkWgmmaSmem<Cfg>;
  constexpr int TM = L::TM, TN = L::TN, TJ = L::TJ, LDS = L::LDS, STAGES = L::STAGES;
  constexpr int C = Cfg::kDiagonals, WL = Cfg::kWindowLeft;
  static_assert(sizeof(T) == 2 && Cfg::kHeadDim == 64 && Cfg::kUniformDilation, "16-bit, head_dim 64, one dilation");
  static_assert(LDS % 8 == 0 && LDS >= TJ + 7, "staged rows at any 16-byte phase");
  static_assert(L::kBytes <= Cfg::kWgmmaSharedBytes, "the generator's shared-memory size covers the layout");

  extern __shared__ __align__(16) unsigned char smem[];
  const u32 base = smem_addr(smem);
  unsigned char* sQ = smem + (((base + 1023) & ~1023u) - base);
  unsigned char* sK = sQ + L::kQBytes;  // STAGES tiles
  T* sS = reinterpret_cast<T*>(sK + STAGES * L::kKBytes);
  i64* row_start = reinterpret_cast<i64*>(reinterpret_cast<unsigned char*>(sS) + L::kStageBytes);
  const u64 dQ = wgmma_desc(smem_addr(sQ), 16, 1024), dK = wgmma_desc(smem_addr(sK), 16, 1024);

  const BandTile tc = decode_band_tile<Cfg, TM, Cfg::kLayout == kLayoutBNHD>(blockIdx.x);
  if (tc.t0 >= tc.len) return;
  const int b = blockIdx.z, len = tc.len, t0 = tc.t0;
  const int j0 = blockIdx.y * TJ, count = min(TJ, C - j0);
  const int ub = t0 + j0 - WL;                 // key of block-local key 0
  const int tiles = ceil_div(TM - 1 + count, TN);
  const SubsequenceRows<Cfg> qrows(b, tc, 64), srows(b, tc, C);

  stage_qk_tile<Cfg>(sQ, q, qrows, len, t0);
#pragma unroll
  for (int n = 0; n < STAGES - 1; ++n) {  // Q comes with the first group
    if (n < tiles) stage_qk_tile<Cfg>(sK + n * L::kKBytes, k, qrows, len, ub + TN * n);
    cp_async_commit();
  }
  if (threadIdx.x < TM) {
    const int t = t0 + threadIdx.x;
    row_start[threadIdx.x] = t < len ? srows.at(t) + j0 : -1;
  }

  // This lane's rows r = 16·warp + g + 8h: (r, block-local key kl) is staged at
  // at[h][kl − 2t4] (its pair of columns in an n-tile: 2t4, 2t4 + 1).
  const int warp = threadIdx.x >> 5, g = lane_id() >> 2, t4 = lane_id() & 3;
  T* at[2];
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int r = 16 * warp + g + 8 * h, t = min(t0 + r, len - 1);
    at[h] = sS + (r * LDS + misalignment<T>(srows.at(t) + j0) - r + 2 * t4);
  }

#pragma unroll 1
  for (int n = 0; n < tiles; ++n) {
    const int stage = n % STAGES, kb = TN * n;  // block-local key of the tile's first column
    cp_async_wait<STAGES - 2>();
    fence_proxy_async();
    __syncthreads();  // tile n is in; every warp is done with tile n − 1 (its stage refills now)
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
    wgmma_wait<0>();
    wgmma_fence_operands<32>(acc);

    // Tiles wholly on the chunk (jl = kb + col − r in [0, count) for every element) with every
    // key inside the sequence store with no tests; the others (a chunk's first and last
    // tiles, the sequence's ends) skip what lies off the chunk and score −inf past the ends.
    if (kb >= TM - 1 && kb + TN <= count && ub + kb >= 0 && ub + kb + TN <= len)
      store_qk_tile<Cfg, true>(acc, at, kb, 0, 0, 0, 0);
    else
      store_qk_tile<Cfg, false>(acc, at, kb, 16 * warp + g, count, -ub, len - ub);
  }
  cp_async_wait<0>();   // (empty groups only) no copy outlives the block
  fence_proxy_async();  // the staged rows → the copy engine
  __syncthreads();
  write_band_rows<T, TM, LDS, TJ, 128>(s, sS, row_start, count);
}

}  // namespace bandjit
