// bandjit/band_pv_wgmma.cuh — the Hopper path of band_pv (SPEC §3.3) for 16-bit types and
// head_dim 64: O[t] = Σ_u A[t][u] · V[u], A[t][u] = P[t][u − t + w_l] (one residue
// sub-sequence, dilation by remapping as band_tiles.cuh).
//
// One warpgroup owns TM = 64 query rows. The keys u its rows see stream through shared memory
// in slabs of KS keys (32, 64 or 128), kStages in flight (cp.async): the slab's V rows in the
// 128-byte-swizzled layout of wgmma_layout.cuh, and for each query row t the KS elements of
// P's row that meet the slab (diagonals u0 − t + w_l …, one contiguous run) at their global
// 16-byte phase. Per 16 keys Z += A·V is one wgmma: A's fragments come from the staged runs
// (16-bit loads, the run's phase differs from row to row), V is an MN-major operand. The run
// of row t steps by KS elements from slab to slab, so its phase and each lane's staging and
// fragment addresses are computed once. Entries off the band or past the sequence's end read
// as zero; only the k-steps a warp's band edge crosses pay for that test.
//
// Staging, per slab: lane 2r + s copies pieces s, s + 2, … of row r's run (KS / 8 + 1 pieces
// of 16 bytes hold KS elements at any phase) and KS / 16 16-byte chunks of V rows. Pieces holding
// none of the row's diagonals in [0, C) are skipped; their slots keep stale data the masked
// loads never let through. V rows past the sequence are zero-filled (0 · NaN is NaN).
// kWgmmaWholeRows instead stages the tile's 64 P rows whole, once, with the first slab (every
// 16-byte piece that holds a diagonal of the row, clipped at its end): all of the block's P
// is in flight at once rather than a slab's runs at a time; the slabs then carry V only.
#pragma once

#include "bandjit/band_tiles.cuh"
#include "bandjit/vector_io.cuh"
#include "bandjit/wgmma.cuh"

namespace bandjit {

// Shared memory: 1 KiB of alignment slack, STAGES V slabs, then either STAGES × TM P runs of
// LDP (slabs) or, with kWgmmaWholeRows, the TM whole P rows: row tl's diagonal d at
// kRowFront + tl·LDR + mis + d, mis its global 16-byte phase; then the rows' global starts.
// The masked A loads of a row reach up to 63 diagonals before its first (into the row before;
// row 0 never does) and less than KS past the last row's end, hence the margins. LDR is an
// odd number of 16-byte units, so the 8 rows of a fragment load start in different banks.
template <class Cfg>
struct PvWgmmaSmem {
  static constexpr int TM = 64, KS = Cfg::kWgmmaSlabKeys, LDP = KS + 8, STAGES = Cfg::kWgmmaStages;
  static constexpr bool kWholeRows = Cfg::kWgmmaWholeRows;
  static constexpr int LDR = ((Cfg::kDiagonals + 7 + 7) / 8 | 1) * 8, kRowFront = 64, kRowBack = KS + 16;
  static constexpr int kVSlabBytes = KS * 128, kPSlabBytes = TM * LDP * 2;
  static constexpr int kPRowBytes = (kRowFront + TM * LDR + kRowBack) * 2;
  static constexpr unsigned kBytes =
      1024 + STAGES * kVSlabBytes + (kWholeRows ? kPRowBytes + TM * 8 : STAGES * kPSlabBytes);
};

template <class Cfg>
__device__ __forceinline__ void band_pv_wgmma(const typename Cfg::T* __restrict__ p, const typename Cfg::T* __restrict__ v,
                                              typename Cfg::T* __restrict__ o) {
  using T = typename Cfg::T;
  using L = PvWgmmaSmem<Cfg>;
  constexpr int TM = L::TM, KS = L::KS, LDP = L::LDP, STAGES = L::STAGES;
  constexpr int C = Cfg::kDiagonals, WL = Cfg::kWindowLeft, WR = Cfg::kWindowRight, DH = Cfg::kHeadDim;
  static_assert(sizeof(T) == 2 && DH == 64 && Cfg::kThreads == 128 && Cfg::kTileRows == TM,
                "one warpgroup of 64 rows, head_dim 64, 16-bit types");
  static_assert((KS == 32 || KS == 64 || KS == 128) && STAGES >= 2, "slabs of 32, 64 or 128 keys, at least double buffering");
  constexpr int PIECES = KS / 8 + 1, VCH = KS / 16;  // pieces of a P run; V chunks per lane
  static_assert(L::kBytes <= Cfg::kWgmmaSharedBytes, "the generator's shared-memory size covers the layout");

  constexpr bool kWhole = L::kWholeRows;
  constexpr int LDR = L::LDR, PPR = (C + 7 + 7) / 8;  // whole rows: stride, pieces covering a row

  extern __shared__ __align__(16) unsigned char smem[];
  const u32 base = smem_addr(smem);
  unsigned char* sV = smem + (((base + 1023) & ~1023u) - base);     // STAGES × KS swizzled rows
  T* sP = reinterpret_cast<T*>(sV + STAGES * L::kVSlabBytes);       // STAGES × TM runs of LDP, or the rows
  i64* row_start = reinterpret_cast<i64*>(reinterpret_cast<unsigned char*>(sP) + L::kPRowBytes);  // (whole rows)
  const u64 dV = wgmma_desc(smem_addr(sV), KS * 128, 1024);

  const BandTile tc = decode_band_tile<Cfg>(blockIdx.x);
  if (tc.t0 >= tc.len) return;
  const int b = blockIdx.z, len = tc.len, t0 = tc.t0;
  // Keys the tile's valid rows see: [t0 − w_l, t_end − 1 + w_r] ∩ [0, len).
  const int t_end = min(t0 + TM, len);
  const int u_begin = max(0, t0 - WL), u_end = min(len, t_end + WR);
  const int slabs = ceil_div(u_end - u_begin, KS);

  // This lane's staging: row pr's run (pieces ps, ps + 2, …) and V chunk vc of slab rows
  // vr, vr + 16, ….
  const SubsequenceRows<Cfg> prow(b, tc, C), vrow(b, tc, DH);
  const int pr = threadIdx.x >> 1, ps = threadIdx.x & 1, tp = t0 + pr;
  const bool p_in = tp < len;
  const int c_first = u_begin - tp + WL;  // diagonal of key u_begin in row tp
  const i64 p_at = prow.at(min(tp, len - 1)) + c_first;
  const int pmis = misalignment<T>(p_at);
  const T* psrc = p + (p_at - pmis);  // piece q of slab s: psrc + s·KS + 8q (read only where valid)
  // V: chunk vc of slab rows vr + 16i (same swizzle phase: (vr + 16i) & 7 = vr & 7).
  const int vr = threadIdx.x >> 3, vc = threadIdx.x & 7;
  const T* vsrc = v + vrow.at(u_begin + vr) + 8 * vc;
  const i64 v_step16 = 16 * vrow.step;
  const int v_dst = vr * 128 + ((vc ^ (vr & 7)) << 4);
  auto stage = [&](int s) {
    const int buf = s % STAGES, u0 = u_begin + s * KS;
    unsigned char* vs = sV + buf * L::kVSlabBytes;
#pragma unroll
    for (int i = 0; i < VCH; ++i) {
      const bool in = u0 + vr + 16 * i < len;
      cp_async_16(vs + v_dst + i * 16 * 128, in ? vsrc + i * v_step16 : v, in ? 16 : 0);
    }
    vsrc += KS * vrow.step;
    if constexpr (kWhole) return;  // the rows came whole with the first slab
    // Staged element e of the run is diagonal c − pmis + e, c = c_first + s·KS; the ones in
    // [0, C) are e in [pmis + lo, pmis + hi].
    const int c = c_first + s * KS, lo = max(0, -c), hi = min(KS - 1, C - 1 - c);
    if (p_in && lo <= hi) {
      T* dst = sP + buf * (TM * LDP) + pr * LDP;
#pragma unroll
      for (int k = 0; k < (PIECES + 1) / 2; ++k) {
        const int q = ps + 2 * k, e = 8 * q;
        if (q < PIECES && e <= pmis + hi && e + 8 > pmis + lo)
          cp_async_16(dst + e, psrc + s * KS + e, min(8, pmis + hi + 1 - e) * 2);
      }
    }
  };

  // This lane's A entries: rows tl = 16·warp + g and tl + 8, keys 2t4 (+1, +8, +9) of a k-step.
  const int warp = threadIdx.x >> 5, g = lane_id() >> 2, t4 = lane_id() & 3;
  const int tw = t0 + 16 * warp;  // the warp's first row
  int a_off[2];
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int tl = 16 * warp + g + 8 * h, t = t0 + tl;
    if constexpr (kWhole) {  // key u of row t is diagonal u − t + w_l of its staged row
      const int tc = min(t, len - 1);
      a_off[h] = L::kRowFront + tl * LDR + misalignment<T>(prow.at(tc)) + u_begin - tc + WL + 2 * t4;
    } else {
      a_off[h] = tl * LDP + misalignment<T>(prow.at(min(t, len - 1)) + u_begin - t + WL) + 2 * t4;
    }
  }

  float acc[32];
#pragma unroll
  for (int i = 0; i < 32; ++i) acc[i] = 0.f;
  wgmma_fence_operands<32>(acc);  // the zeros stay before the loop (see band_tpv.cuh: C7515)

  if constexpr (kWhole) {  // every row's 16-byte pieces, in the first slab's group
    if (threadIdx.x < TM) row_start[threadIdx.x] = t0 + int(threadIdx.x) < len ? prow.at(t0 + threadIdx.x) : -1;
    __syncthreads();
    stage_tile_async<T, TM, LDR, PPR, 128>(sP + L::kRowFront, p, row_start, C);
  }
#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) {
    if (s < slabs) stage(s);
    cp_async_commit();
  }
#pragma unroll 1
  for (int it = 0; it < slabs; ++it) {
    cp_async_wait<STAGES - 2>();
    wgmma_wait<0>();  // the previous slab's products are done before its buffer refills
    wgmma_fence_operands<32>(acc);
    fence_proxy_async();
    __syncthreads();
    if (it + STAGES - 1 < slabs) stage(it + STAGES - 1);
    cp_async_commit();

    const int buf = it % STAGES, u0 = u_begin + it * KS;
    const T* sp = kWhole ? sP + it * KS : sP + buf * (TM * LDP);
    u32 a[KS / 16][4];
#pragma unroll
    for (int q = 0; q < KS / 16; ++q) {
      const int uk = u0 + 16 * q;
      const T* r0 = sp + a_off[0] + 16 * q;
      const T* r1 = sp + a_off[1] + 16 * q;
      // Inside the band of all 16 rows of the warp, and inside the sequence, for all 16 keys.
      if (uk >= tw + 15 - WL && uk + 15 <= tw + WR && uk + 16 <= len) {
        a[q][0] = pack_pair(r0[0], r0[1]);
        a[q][1] = pack_pair(r1[0], r1[1]);
        a[q][2] = pack_pair(r0[8], r0[9]);
        a[q][3] = pack_pair(r1[8], r1[9]);
      } else {
        const T zero = from_float<T>(0.f);
        T x[2][4];
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const T* r = h ? r1 : r0;
          const int t = tw + g + 8 * h;
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            const int dk = (e & 1) + 8 * (e >> 1), key = uk + 2 * t4 + dk, d = key - t + WL;
            x[h][e] = key < len && static_cast<unsigned>(d) < static_cast<unsigned>(C) ? r[dk] : zero;
          }
        }
        a[q][0] = pack_pair(x[0][0], x[0][1]);
        a[q][1] = pack_pair(x[1][0], x[1][1]);
        a[q][2] = pack_pair(x[0][2], x[0][3]);
        a[q][3] = pack_pair(x[1][2], x[1][3]);
      }
    }
    // No branch around the products: ptxas serialises wgmma on a possibly divergent path.
    wgmma_fence_operands<32>(acc);
    wgmma_fence();
#pragma unroll
    for (int q = 0; q < KS / 16; ++q)
      wgmma_rs<T>(acc, a[q], dV + wgmma_desc_offset(buf * L::kVSlabBytes + 16 * q * 128));
    wgmma_commit();  // awaited at the next slab (or after the loop)
  }
  cp_async_wait<0>();
  wgmma_wait<0>();
  wgmma_fence_operands<32>(acc);

  // O leaves through shared memory (the slab buffers, free once all four warps' last products
  // are done) as 16-byte row pieces (write_row_range).
  constexpr int LDO = DH + 8;
  static_assert(TM * LDO * 2 <= STAGES * (L::kVSlabBytes + (kWhole ? 0 : L::kPSlabBytes)), "O fits the slab buffers");
  T* sO = reinterpret_cast<T*>(sV);
  __syncthreads();
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    T* dst = sO + (16 * warp + g + 8 * h) * LDO + 2 * t4;
#pragma unroll
    for (int n = 0; n < 8; ++n)
      *reinterpret_cast<u32*>(dst + 8 * n) = pack_pair(from_float<T>(acc[4 * n + 2 * h]), from_float<T>(acc[4 * n + 2 * h + 1]));
  }
  __syncthreads();
  write_row_range<Cfg, TM, LDO, 128>(o, sO, b, tc, t0);
}

}  // namespace bandjit
