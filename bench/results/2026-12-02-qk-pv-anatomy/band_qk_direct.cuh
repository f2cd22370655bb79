// bandjit/band_qk_wgmma.cuh — the Hopper kernel of band_qk (SPEC §3.1) for 16-bit types,
// head_dim 64 and one dilation for all heads: S[t][j] = scale · Q[t] · K[t + j − w_l].
//
// A block owns 128 rows t0 … t0 + 127 of one residue sub-sequence and all C diagonals; its two
// warpgroups own 64 rows each and share the key tiles. The rows meet the keys ub = t0 − w_l …
// ub + 126 + C, streamed in tiles of 64 (kStages in flight, cp.async into the 128-byte swizzle of
// wgmma_layout.cuh, zeros past the sequence). Per key tile each warpgroup computes Q·Kᵀ (four
// m64n64k16) and stores its accumulators straight to S: element (row δ, block-local key kl)
// is S[t0 + δ][kl − δ] at global g_δ + kl, g_δ = start of row t0 + δ − δ.
//
// Why no staging: g_δ = g_0 + δ·(step − 1) (step: elements between consecutive rows of the
// sub-sequence). Its parity is the same for every row of a warpgroup when the warpgroup's rows
// are consecutive (step odd) or every other row (step even: kWgmmaPairRows), so each lane's two
// adjacent keys land on one aligned 32-bit word, or, for an odd g_δ, the word of its even key and
// the previous (odd) key, which the lane to its left in the quad holds (one shuffle a pair).
// A quad then writes 16 contiguous bytes of a row; successive key tiles fill whole sectors.
#pragma once

#include "bandjit/band_tiles.cuh"
#include "bandjit/vector_io.cuh"
#include "bandjit/wgmma.cuh"

namespace bandjit {

// Shared memory: 1024 bytes of slack to align the swizzle atoms, Q (two warpgroups × 64
// rows), kStages K tiles of 64 rows.
template <class Cfg>
struct QkWgmmaSmem {
  static constexpr int TM = 128, TN = 64, STAGES = 4;
  static constexpr unsigned kQBytes = 64 * 128, kKBytes = TN * 128;
  static constexpr unsigned kBytes = 1024 + 2 * kQBytes + STAGES * kKBytes;
};

// Row δ (0 … 127, from t0) of warpgroup wg's row k.
template <class Cfg>
__device__ __forceinline__ int qk_row_of(int wg, int k) {
  return Cfg::kWgmmaPairRows ? wg + 2 * k : 64 * wg + k;
}

// Copies 64 rows of a [.., 64] tensor's sub-sequence into the swizzled layout, rows outside
// [0, len) as zeros: row r of the tile is sub-sequence row row(r). THREADS threads, each the
// same 16-byte chunk of 64 / (THREADS / 8) rows.
template <class Cfg, int THREADS, class T, class RowFn>
__device__ __forceinline__ void stage_qk_rows(unsigned char* tile, const T* __restrict__ g, const SubsequenceRows<Cfg>& rows,
                                              int len, int tid, RowFn row) {
  const int r0 = tid >> 3, c = tid & 7;
#pragma unroll
  for (int i = 0; i < 64 / (THREADS / 8); ++i) {
    const int r = r0 + (THREADS / 8) * i, u = row(r);
    const bool inside = static_cast<unsigned>(u) < static_cast<unsigned>(len);
    cp_async_16(tile + swizzled_offset<64>(r, c), inside ? g + rows.at(u) + 8 * c : g, inside ? 16 : 0);
  }
}

template <class Cfg>
__device__ __forceinline__ void band_qk_wgmma(const typename Cfg::T* __restrict__ q, const typename Cfg::T* __restrict__ k,
                                              typename Cfg::T* __restrict__ s) {
  using T = typename Cfg::T;
  using L = QkWgmmaSmem<Cfg>;
  constexpr int TM = L::TM, TN = L::TN, STAGES = L::STAGES;
  constexpr int C = Cfg::kDiagonals, WL = Cfg::kWindowLeft;
  constexpr int NT = ceil_div(TM - 1 + C, TN);  // key tiles of a block
  static_assert(sizeof(T) == 2 && Cfg::kHeadDim == 64 && Cfg::kUniformDilation, "16-bit, head_dim 64, one dilation");
  static_assert(L::kBytes <= Cfg::kWgmmaSharedBytes, "the generator's shared-memory size covers the layout");

  extern __shared__ __align__(16) unsigned char smem[];
  const u32 base = smem_addr(smem);
  unsigned char* sQ = smem + (((base + 1023) & ~1023u) - base);  // two Q tiles
  unsigned char* sK = sQ + 2 * L::kQBytes;                        // STAGES K tiles
  const BandTile tc = decode_band_tile<Cfg, TM>(blockIdx.x);
  if (tc.t0 >= tc.len) return;
  const int b = blockIdx.z, len = tc.len, t0 = tc.t0;
  const int ub = t0 - WL;  // key of block-local key 0
  const int wg = threadIdx.x >> 7, wt = threadIdx.x & 127;
  const SubsequenceRows<Cfg> qrows(b, tc, 64), srows(b, tc, C);
  const u64 dQ = wgmma_desc(smem_addr(sQ + wg * L::kQBytes), 16, 1024), dK = wgmma_desc(smem_addr(sK), 16, 1024);

  // K tile n: block-local keys 64n … 64n + 63; all 256 threads, two rows each.
  auto stage_k = [&](int n) {
    stage_qk_rows<Cfg, 256>(sK + n % STAGES * L::kKBytes, k, qrows, len, threadIdx.x, [&](int r) { return ub + TN * n + r; });
  };
  stage_qk_rows<Cfg, 128>(sQ + wg * L::kQBytes, q, qrows, len, wt, [&](int r) { return t0 + qk_row_of<Cfg>(wg, r); });
#pragma unroll
  for (int n = 0; n < STAGES - 1; ++n) {  // Q comes with the first group
    if (n < NT) stage_k(n);
    cp_async_commit();
  }

  // This lane's rows k = 16·warp + g + 8h of the warpgroup: δ_h, and g_δ (see the top); its
  // keys in an n-tile nt are 8nt + 2t4 (+1).
  const int warp = wt >> 5, g = lane_id() >> 2, t4 = lane_id() & 3;
  int delta[2];
  T* row_at[2];  // g_δ + 2t4: the element of key kl is row_at[h][kl − 2t4]
  bool row_in[2];
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    delta[h] = qk_row_of<Cfg>(wg, 16 * warp + g + 8 * h);
    row_in[h] = t0 + delta[h] < len;
    row_at[h] = s + (srows.at(t0 + delta[h]) - delta[h] + 2 * t4);
  }
  // The same parity for both rows and every lane of the warpgroup.
  const bool odd = (srows.at(t0 + delta[0]) - delta[0]) & 1;
  const int dmin = qk_row_of<Cfg>(wg, 0), dmax = qk_row_of<Cfg>(wg, 63);
  float carry[2] = {0.f, 0.f};  // odd g_δ: the odd key before this n-tile's first (quad lane 3's)

#pragma unroll 1
  for (int n = 0; n < NT; ++n) {
    const int stage = n % STAGES, kb = TN * n;
    cp_async_wait<STAGES - 2>();
    fence_proxy_async();
    __syncthreads();  // tile n is in; every warp is done with tile n − 1 (its stage refills now)
    if (n + STAGES - 1 < NT) stage_k(n + STAGES - 1);
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

    // Whole tiles: every key of the tile (and, for odd g_δ, the one before) on the band of every
    // row of the warpgroup and inside the sequence, every row inside the sequence.
    const bool whole = kb - 1 >= dmax && kb + TN - 1 - dmin < C && ub + kb - 1 >= 0 && ub + kb + TN <= len &&
                       t0 + TM <= len;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      T* at = row_at[h] + kb;  // key kb + 2t4 (+ 8nt)
      const int dl = delta[h];
#pragma unroll
      for (int nt = 0; nt < 8; ++nt) {
        const int kl = kb + 8 * nt + 2 * t4;  // this lane's even key
        float v0 = acc[4 * nt + 2 * h] * Cfg::kScale, v1 = acc[4 * nt + 2 * h + 1] * Cfg::kScale;
        if (!whole) {
          if (ub + kl < 0 || ub + kl >= len) v0 = neg_inf();
          if (ub + kl + 1 < 0 || ub + kl + 1 >= len) v1 = neg_inf();
        }
        if (!odd) {
          if (whole) {
            *reinterpret_cast<u32*>(at + 8 * nt) = pack_pair(from_float<T>(v0), from_float<T>(v1));
          } else if (row_in[h]) {
            const bool in0 = static_cast<unsigned>(kl - dl) < static_cast<unsigned>(C);
            const bool in1 = static_cast<unsigned>(kl + 1 - dl) < static_cast<unsigned>(C);
            if (in0 && in1) *reinterpret_cast<u32*>(at + 8 * nt) = pack_pair(from_float<T>(v0), from_float<T>(v1));
            else if (in0) at[8 * nt] = from_float<T>(v0);
            else if (in1) at[8 * nt + 1] = from_float<T>(v1);
          }
        } else {
          // The word of keys kl − 1 and kl: kl − 1 is the odd key of the lane to the left (lane 3
          // of the quad holds the one before the next n-tile's first key).
          const float left = __shfl_sync(0xffffffffu, v1, (lane_id() & ~3) | ((t4 + 3) & 3));
          const float vm = t4 == 0 ? carry[h] : left;
          carry[h] = left;
          if (whole) {
            *reinterpret_cast<u32*>(at + 8 * nt - 1) = pack_pair(from_float<T>(vm), from_float<T>(v0));
          } else if (row_in[h]) {
            const bool inm = static_cast<unsigned>(kl - 1 - dl) < static_cast<unsigned>(C);
            const bool in0 = static_cast<unsigned>(kl - dl) < static_cast<unsigned>(C);
            if (inm && in0) *reinterpret_cast<u32*>(at + 8 * nt - 1) = pack_pair(from_float<T>(vm), from_float<T>(v0));
            else if (inm) at[8 * nt - 1] = from_float<T>(vm);
            else if (in0) at[8 * nt] = from_float<T>(v0);
          }
        }
      }
    }
  }
  // Odd g_δ: the last key of the last tile (quad lane 3's odd key, now lane 0's carry) has no
  // pair partner; it is on the band only for the block's last row when 64·NT = 127 + C.
  if (odd && t4 == 0) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int kl = TN * NT - 1;
      if (row_in[h] && static_cast<unsigned>(kl - delta[h]) < static_cast<unsigned>(C))
        row_at[h][kl] = from_float<T>(carry[h]);
    }
  }
  cp_async_wait<0>();  // (empty groups only) no copy outlives the block
}

}  // namespace bandjit
