// bandjit/band_qk.cuh — S[i, j] = scale · Σ_k Q[i, k] · K[key(i, j), k]  (SPEC §3.1)
// key(i, j) = i + D·(j − w_l); S = −inf where the key is outside the sequence.
//
// One block: a run of RT tiles of TM consecutive query rows of one residue sub-sequence,
// × TJ diagonals. A tile touches NK = TM + TJ keys (block-local key kl = row + diagonal);
// the next tile touches the same keys shifted by TM, so the key rows live in a ring of
// NK + TM rows and each tile loads only its TM new key rows and its Q rows — prefetched
// with cp.async while the previous tile is multiplied. Q fragments live in registers.
// Rows come in groups of 32: m-tile 0 holds the even rows, m-tile 1 the odd ones, and the
// warps of a group share out its 8-key n-tiles (one ldmatrix.x4 per 32 head-dim columns).
//
// Accumulator (row, kl) is S[row][kl − row]. It goes to a staging tile where row r keeps
// diagonal jl at r·LDS + MARGIN + mis(r) + jl, mis(r) being the 16-byte phase of the row's
// global start, so the rows leave as aligned 16-byte (sm_90: bulk) copies. All rows of an
// m-tile sit at the same element parity, so an m-tile at odd offsets takes its n-tiles one
// key early and every accumulator pair is one 32-bit (float: 64-bit) store. Rows are
// LDS ≥ TJ + 45 apart and MARGIN = 32: what a warp computes off its rows' band lands in
// slack no row reads, so the epilogue has no band checks — only n-tiles that reach past
// the sequence's ends choose −inf per element.
#pragma once

#include "bandjit/band_qk_wgmma.cuh"
#include "bandjit/band_tiles.cuh"
#include "bandjit/mma.cuh"
#include "bandjit/vector_io.cuh"

namespace bandjit {

// Two adjacent staged elements from float values, as one 32-bit (float: 64-bit) store at a
// shared address aligned to the pair.
template <class T>
__device__ __forceinline__ void store_pair(u32 addr, float lo, float hi) {
  if constexpr (sizeof(T) == 2) {
    sts32(addr, pack_pair(from_float<T>(lo), from_float<T>(hi)));
  } else {
    sts64(addr, lo, hi);
  }
}

template <class Cfg>
__device__ __forceinline__ void band_qk_mma(const typename Cfg::T* __restrict__ q,
                                        const typename Cfg::T* __restrict__ k,
                                        typename Cfg::T* __restrict__ s) {
  using T = typename Cfg::T;
  using Ops = MmaOps<T>;
  constexpr int TM = Cfg::kTileRows, TJ = Cfg::kTileDiagonals, LDS = Cfg::kStageLD, RT = Cfg::kRunTiles;
  constexpr int DH = Cfg::kHeadDim, C = Cfg::kDiagonals, WL = Cfg::kWindowLeft;
  constexpr int MW = Cfg::kRowTilesPerWarp;  // 2: one warp multiplies both m-tiles of a group
  constexpr int RG = 32, MARGIN = 32;        // rows per group: even rows (m-tile 0), odd (1)
  constexpr int W = Cfg::kThreads / 32, G = TM / RG, PARTS = W / G, NP = PARTS * MW / 2;
  constexpr int V = Vec<T>::kElems;
  constexpr int LDK = DH + V;  // one 16-byte pad per row: conflict-free fragments
  constexpr int NK = ceil_div(TM + TJ, 8) * 8, RING = NK + TM;
  constexpr int NTW = ceil_div(ceil_div(RG + TJ, 8), NP);
  constexpr int KSTEPS = DH / Ops::kK;
  constexpr bool kQInRegs = Cfg::kQInRegisters;
  constexpr int kRingElems = RING * LDK, kQElems = TM * LDK, kStageElems = MARGIN + TM * LDS;
  static_assert(kQInRegs || sizeof(T) == 4, "16-bit Q fragments are always in registers");
  static_assert(TM % RG == 0 && W % G == 0 && PARTS * MW % 2 == 0, "warps split evenly over the row groups");
  static_assert(LDS >= TJ + 45 && LDS % V == 0 && MARGIN % V == 0, "staged rows keep their slack");
  static_assert((kRingElems + 2 * kQElems + kStageElems) * sizeof(T) <= Cfg::kSharedBytes,
                "the generator's shared-memory size covers the layout");
  static_assert(Cfg::kSharedBytes + 8 * TM <= 227 * 1024, "dynamic and static shared memory fit an SM");

  extern __shared__ __align__(16) unsigned char smem[];
  T* sK = reinterpret_cast<T*>(smem);  // ring: key u0 + x of the first tile at row x mod RING
  T* sQ = sK + kRingElems;             // two tiles of Q rows
  T* sS = sQ + 2 * kQElems;            // staging tile
  __shared__ i64 row_start[TM];        // global element of each row's first diagonal; −1 past the end

  const BandTile tc = decode_band_tile<Cfg, TM * RT>(blockIdx.x);
  if (tc.t0 >= tc.len) return;
  const int b = blockIdx.z, j0 = blockIdx.y * TJ;
  const int count = min(TJ, C - j0);
  const int tiles = min(RT, ceil_div(tc.len - tc.t0, TM));
  const SubsequenceRows<Cfg> srows(b, tc, C);

  const int warp = threadIdx.x >> 5, grp = warp % G, part = warp / G;
  const int np = MW == 2 ? part : part >> 1, m0 = MW == 2 ? 0 : part & 1;
  const int g = lane_id() >> 2, t4 = lane_id() & 3;
  const int kg = RG * grp;  // first row (and first key) of the group
  const int ntiles = ceil_div(RG + count, 8), kb_end = kg + 8 * ntiles;

  // The first tile: Q and every key row; then each tile prefetches the next one's.
  stage_row_range_async<Cfg, LDK>(sQ, q, b, tc, tc.t0, 0, TM);
  stage_ring_rows_async<Cfg, LDK, RING>(sK, k, b, tc, tc.t0 + j0 - WL, 0, NK);
  cp_async_commit();

#pragma unroll 1
  for (int tile = 0; tile < tiles; ++tile) {
    const int t0 = tc.t0 + tile * TM;
    const int u0 = t0 + j0 - WL;                 // key (sub-sequence index) of block-local key 0
    const int ring0 = tile * TM % RING;          // its ring row
    const T* sQt = sQ + (tile & 1) * kQElems;
    if (tile + 1 < tiles) {
      // Keys u0 + NK … u0 + NK + TM − 1 replace this tile's first TM keys' ring rows, which
      // the previous tile was the last to read; the Q buffer was the previous tile's.
      stage_row_range_async<Cfg, LDK>(sQ + ((tile + 1) & 1) * kQElems, q, b, tc, t0 + TM, 0, TM);
      stage_ring_rows_async<Cfg, LDK, RING>(sK, k, b, tc, u0 + NK, (ring0 + NK) % RING, TM);
      cp_async_commit();
      cp_async_wait<1>();
    } else {
      cp_async_wait<0>();
    }
    __syncthreads();  // this tile's Q and keys landed; the last tile's rows are written out
    for (int r = threadIdx.x; r < TM; r += Cfg::kThreads) {
      const int t = t0 + r;
      row_start[r] = t < tc.len ? srows.at(t) + j0 : -1;
    }

    typename Ops::AFrag qa[kQInRegs ? MW : 1][kQInRegs ? KSTEPS : 1];
    if constexpr (kQInRegs) {
#pragma unroll
      for (int m = 0; m < MW; ++m)
#pragma unroll
        for (int ks = 0; ks < KSTEPS; ++ks)
          Ops::load_a(qa[m][ks], sQt + (kg + m0 + m) * LDK, 2 * LDK, 0, ks * Ops::kK);
    }
    // Row of m-tile m, fragment half h: kg + 2·(g + 8h) + m0 + m. Its staging index for key
    // kl is at[m][h] + kl. Its parity is the same for every row of an m-tile (row starts
    // step by a fixed stride), so the m-tile takes its n-tiles one key early when odd.
    int at[MW][2], shift[MW];
#pragma unroll
    for (int m = 0; m < MW; ++m) {
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int r = kg + 2 * (g + 8 * h) + m0 + m;
        at[m][h] = MARGIN + r * LDS + misalignment<T>(srows.at(t0 + r) + j0) - r;
      }
      shift[m] = at[m][0] & 1;
    }
    const int key_lo = max(0, -u0), key_hi = min(TM + count, tc.len - u0);

    // Per-lane shared addresses, stepped from n-tile to n-tile: the ldmatrix row of each
    // m-tile's n-tile (in the ring), and the staged pair of each accumulator row.
    int kb = kg + 8 * np;
    u32 ka[MW], sa[MW][2];
    const u32 ring_end = smem_addr(sK + kRingElems);
#pragma unroll
    for (int m = 0; m < MW; ++m) {
      int row = ring0 + kb + (lane_id() & 7) - shift[m];
      row = row < 0 ? row + RING : row >= RING ? row - RING : row;
      ka[m] = smem_addr(sK + row * LDK + 8 * (lane_id() >> 3));
#pragma unroll
      for (int h = 0; h < 2; ++h) sa[m][h] = smem_addr(sS + at[m][h] + kb - shift[m] + 2 * t4);
      keep_in_register(shift[m]);
      keep_in_register(ka[m]);
      keep_in_register(sa[m][0]);
      keep_in_register(sa[m][1]);
    }
#pragma unroll 1
    for (int i = 0; i < NTW && kb < kb_end; ++i, kb += 8 * NP) {
      float acc[MW][4];
#pragma unroll
      for (int m = 0; m < MW; ++m) {
        acc[m][0] = acc[m][1] = acc[m][2] = acc[m][3] = 0.f;
        if constexpr (sizeof(T) == 2) {  // two k-steps per ldmatrix.x4
#pragma unroll
          for (int ks = 0; ks < KSTEPS; ks += 2) {
            typename Ops::BFrag b0, b1;
            if (ks + 1 < KSTEPS) {
              ldsm_x4(ka[m] + ks * 32, b0.r[0], b0.r[1], b1.r[0], b1.r[1]);
              Ops::mma(acc[m], qa[m][ks], b0);
              Ops::mma(acc[m], qa[m][ks + 1], b1);
            } else {
              ldsm_x2(ka[m] + ks * 32, b0.r[0], b0.r[1]);
              Ops::mma(acc[m], qa[m][ks], b0);
            }
          }
        } else {
          // float32: B fragments from key row n-tile + g of the ring, split into TF32 halves
          int row = ring0 + kb - shift[m] + g;
          row = row < 0 ? row + RING : row >= RING ? row - RING : row;
#pragma unroll
          for (int ks = 0; ks < KSTEPS; ++ks) {
            typename Ops::AFrag a;
            if constexpr (!kQInRegs) Ops::load_a(a, sQt + (kg + m0 + m) * LDK, 2 * LDK, 0, ks * Ops::kK);
            typename Ops::BFrag bf;
            const float* p = reinterpret_cast<const float*>(sK) + row * LDK + ks * 8 + t4;
            Ops::split(p[0], bf.big[0], bf.small[0]);
            Ops::split(p[4], bf.big[1], bf.small[1]);
            Ops::mma(acc[m], kQInRegs ? qa[m][ks] : a, bf);
          }
        }
      }
      if (kb - 1 >= key_lo && kb + 8 <= key_hi) {
#pragma unroll
        for (int m = 0; m < MW; ++m)
#pragma unroll
          for (int h = 0; h < 2; ++h)
            store_pair<T>(sa[m][h], acc[m][2 * h] * Cfg::kScale, acc[m][2 * h + 1] * Cfg::kScale);
      } else {  // the n-tile reaches past the sequence: those keys score −inf
#pragma unroll
        for (int m = 0; m < MW; ++m) {
          const int kl = kb - shift[m] + 2 * t4;
          const bool in0 = kl >= key_lo && kl < key_hi, in1 = kl + 1 >= key_lo && kl + 1 < key_hi;
#pragma unroll
          for (int h = 0; h < 2; ++h)
            store_pair<T>(sa[m][h], in0 ? acc[m][2 * h] * Cfg::kScale : neg_inf(),
                          in1 ? acc[m][2 * h + 1] * Cfg::kScale : neg_inf());
        }
      }
#pragma unroll
      for (int m = 0; m < MW; ++m) {
        ka[m] += 8 * NP * LDK * sizeof(T);
        if (ka[m] >= ring_end) ka[m] -= RING * LDK * sizeof(T);
#pragma unroll
        for (int h = 0; h < 2; ++h) sa[m][h] += 8 * NP * sizeof(T);
      }
    }
#if __CUDA_ARCH__ >= 900
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");  // staged rows → copy engine
#endif
    __syncthreads();
    write_band_rows<T, TM, LDS, TJ, Cfg::kThreads>(s, sS + MARGIN, row_start, count);
  }
}

// The entry point: the Hopper kernel (band_qk_wgmma.cuh, its own launch) where the generator
// asked for it (Cfg::kWgmma) and the target has wgmma (sm_90a), else the mma.sync kernel above.
template <class Cfg>
__device__ __forceinline__ void band_qk(const typename Cfg::T* __restrict__ q, const typename Cfg::T* __restrict__ k,
                                        typename Cfg::T* __restrict__ s) {
  constexpr bool kWgmma = takes_wgmma_kernel<Cfg>();
  if constexpr (kWgmma)
    band_qk_wgmma<Cfg>(q, k, s);
  else
    band_qk_mma<Cfg>(q, k, s);
}

}  // namespace bandjit
