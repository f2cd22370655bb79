// bandjit/band_pv.cuh — O[i, k] = Σ_j P[i, j] · V[key(i, j), k] over valid slots (SPEC §3.3).
// Whatever P holds at a slot whose key is outside the sequence contributes nothing.
//
// One block: TM query rows of one residue sub-sequence, all Dh columns, the C diagonals in
// chunks of TJ. Per chunk, the P rows are staged at their 16-byte phase (cp.async) with
// zeros around them, and all the value rows the chunk touches at once. The product
// O += A·V uses A[row][kl] = P[row][kl − row] (kl: block-local key), read from the staged
// rows along the diagonal: rows come in groups of 32, m-tile 0 the even rows and m-tile 1
// the odd ones, and an m-tile whose rows sit at odd element offsets takes its k-steps one
// key early, so every A register is one aligned 32-bit load. Rows are LDP ≥ TJ + 54 apart
// and the slack between them is zero: the A entries off a row's band read as 0, so only
// k-steps that reach past the sequence's ends check anything. The warps of a group split
// the Dh columns.
#pragma once

#include "bandjit/band_pv_wgmma.cuh"
#include "bandjit/band_tiles.cuh"
#include "bandjit/mma.cuh"
#include "bandjit/vector_io.cuh"

namespace bandjit {

__device__ __forceinline__ u32 lds32(u32 addr) {
  u32 v;
  asm volatile("ld.shared.b32 %0, [%1];\n" : "=r"(v) : "r"(addr));
  return v;
}
__device__ __forceinline__ float lds_f32(u32 addr) {
  float v;
  asm volatile("ld.shared.f32 %0, [%1];\n" : "=f"(v) : "r"(addr));
  return v;
}
__device__ __forceinline__ void ldsm_x4_trans(u32 addr, u32& r0, u32& r1, u32& r2, u32& r3) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3)
               : "r"(addr));
}

template <class Cfg>
__device__ __forceinline__ void band_pv_mma(const typename Cfg::T* __restrict__ p,
                                            const typename Cfg::T* __restrict__ v,
                                            typename Cfg::T* __restrict__ o) {
  using T = typename Cfg::T;
  using Ops = MmaOps<T>;
  constexpr int TM = Cfg::kTileRows, TJ = Cfg::kTileDiagonals, LDP = Cfg::kStageLD;
  constexpr int DH = Cfg::kHeadDim, C = Cfg::kDiagonals, WL = Cfg::kWindowLeft;
  constexpr int RG = 32, MARGIN = 32, G = TM / RG, PARTS = Cfg::kColumnParts;
  constexpr int V = Vec<T>::kElems, ES = sizeof(T);
  constexpr int LDV = DH + 8;                         // conflict-free B fragments
  constexpr int NV = ceil_div(TM + TJ, 16) * 16;      // value rows a chunk touches (and one before)
  constexpr int NCW = DH / 8 / PARTS;                 // n-tiles of 8 columns per warp
  constexpr int PIECES = ceil_div(TJ + V - 1, V);     // 16-byte pieces of a staged row
  constexpr bool k16 = sizeof(T) == 2;
  constexpr int kVElems = (NV + 1) * LDV, kPElems = MARGIN + TM * LDP;
  static_assert(Cfg::kThreads == 32 * G * PARTS && TM % RG == 0, "warps: row groups × column parts");
  static_assert(DH % (8 * PARTS) == 0 && (!k16 || NCW % 2 == 0), "column parts hold whole n-tile pairs");
  static_assert(LDP >= TJ + 54 && LDP % V == 0, "staged rows keep zero slack around them");
  static_assert((kVElems + kPElems) * ES <= Cfg::kSharedBytes, "the generator's shared-memory size covers the layout");

  extern __shared__ __align__(16) unsigned char smem[];
  T* sV = reinterpret_cast<T*>(smem) + LDV;  // row −1 exists: odd m-tiles start one key early
  T* sP = sV - LDV + kVElems;

  const BandTile tc = decode_band_tile<Cfg>(blockIdx.x);
  if (tc.t0 >= tc.len) return;
  const int b = blockIdx.z;
  const int warp = threadIdx.x >> 5, grp = warp % G, part = warp / G;
  const int g = lane_id() >> 2, t4 = lane_id() & 3;
  const int kg = RG * grp, n0 = part * NCW * 8;
  const SubsequenceRows<Cfg> prow(b, tc, C);

  float acc[2][NCW][4];
#pragma unroll
  for (int m = 0; m < 2; ++m)
#pragma unroll
    for (int n = 0; n < NCW; ++n) acc[m][n][0] = acc[m][n][1] = acc[m][n][2] = acc[m][n][3] = 0.f;

  for (int chunk = 0; chunk < Cfg::kDiagonalChunks; ++chunk) {
    const int j0 = chunk * TJ;
    const int count = min(TJ, C - j0);
    const int u0 = tc.t0 + j0 - WL;  // key (sub-sequence index) of block-local key 0
    if (chunk > 0) __syncthreads();   // the previous chunk is done with sP and sV
    if (chunk == 0) {  // the slack between rows, and value row −1, stay zero from here on
      for (int i = threadIdx.x; i < kPElems / V; i += Cfg::kThreads)
        *reinterpret_cast<uint4*>(sP + i * V) = make_uint4(0, 0, 0, 0);
      for (int i = threadIdx.x; i < LDV / V; i += Cfg::kThreads)
        *reinterpret_cast<uint4*>(sV - LDV + i * V) = make_uint4(0, 0, 0, 0);
      __syncthreads();
    }
    // P rows at their phase: piece q of row r holds global elements st − mis + q·V. Pieces
    // past the row's end are zeroed: an earlier chunk (another phase) may have filled them.
    for (int idx = threadIdx.x; idx < TM * PIECES; idx += Cfg::kThreads) {
      const int r = idx / PIECES, q = idx - r * PIECES, t = tc.t0 + r;
      if (t >= tc.len) continue;
      const i64 st = prow.at(t) + j0;
      const int mis = misalignment<T>(st), j = q * V - mis;
      T* dst = sP + MARGIN + r * LDP + q * V;
      if (j < count)
        cp_async_16(dst, p + (st - mis) + q * V, min(16, (count - j) * ES));
      else
        *reinterpret_cast<uint4*>(dst) = make_uint4(0, 0, 0, 0);
    }
    stage_row_range_async<Cfg, LDV>(sV, v, b, tc, u0, 0, NV);
    cp_async_commit();
    cp_async_wait<0>();
    // The first piece of a row also brought the elements before it: zero them (the thread
    // that copied a piece is the one that sees it landed).
    for (int idx = threadIdx.x; idx < TM * PIECES; idx += Cfg::kThreads) {
      const int r = idx / PIECES, t = tc.t0 + r;
      if (idx - r * PIECES != 0 || t >= tc.len) continue;
      const int mis = misalignment<T>(prow.at(t) + j0);
      for (int e = 0; e < mis; ++e) sP[MARGIN + r * LDP + e] = from_float<T>(0.f);
    }
    __syncthreads();

    // Row of m-tile m, fragment half h: kg + 2·(g + 8h) + m; A[row][kl] sits at at + kl.
    int shift[2];
    u32 aaddr[2][2], vaddr[2];
#pragma unroll
    for (int m = 0; m < 2; ++m) {
      int at[2];
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int r = kg + 2 * (g + 8 * h) + m;
        at[h] = MARGIN + r * LDP + misalignment<T>(prow.at(tc.t0 + r) + j0) - r;
      }
      shift[m] = at[0] & 1;
      const int first = kg - shift[m];  // block-local key of the m-tile's first k-step
#pragma unroll
      for (int h = 0; h < 2; ++h) aaddr[m][h] = smem_addr(sP + at[h] + first + (k16 ? 2 : 1) * t4);
      vaddr[m] = k16 ? smem_addr(sV + (first + (lane_id() & 15)) * LDV + n0 + 8 * (lane_id() >> 4))
                     : smem_addr(sV + (first + t4) * LDV + n0 + g);
    }
#pragma unroll
    for (int m = 0; m < 2; ++m) {
      keep_in_register(shift[m]);
      keep_in_register(aaddr[m][0]);
      keep_in_register(aaddr[m][1]);
      keep_in_register(vaddr[m]);
    }
    const int key_lo = max(0, -u0), key_hi = min(NV, tc.len - u0);
    const int steps = ceil_div(RG + count, 16);
#pragma unroll 1
    for (int s = 0, kk = kg; s < steps; ++s, kk += 16) {  // addresses step with kk (no remat)
      const bool edge = kk - 1 < key_lo || kk + 16 > key_hi;  // some key outside the sequence
#pragma unroll
      for (int m = 0; m < 2; ++m) {
        const int key = kk - shift[m] + (k16 ? 2 : 1) * t4;  // key of this lane's first A entry
        const u32 a_at = aaddr[m][0], a_at8 = aaddr[m][1], v_at = vaddr[m];
        aaddr[m][0] += 16 * ES;
        aaddr[m][1] += 16 * ES;
        vaddr[m] += 16 * LDV * ES;
        if constexpr (k16) {
          typename Ops::AFrag a;
          a.r[0] = lds32(a_at);
          a.r[1] = lds32(a_at8);
          a.r[2] = lds32(a_at + 8 * ES);
          a.r[3] = lds32(a_at8 + 8 * ES);
          if (edge) {
            const auto in = [&](int kl) { return kl >= key_lo && kl < key_hi ? 0xffffu : 0u; };
            const u32 lo = in(key) | (in(key + 1) << 16), hi = in(key + 8) | (in(key + 9) << 16);
            a.r[0] &= lo; a.r[1] &= lo; a.r[2] &= hi; a.r[3] &= hi;
          }
#pragma unroll
          for (int n = 0; n < NCW; n += 2) {
            typename Ops::BFrag b0, b1;
            ldsm_x4_trans(v_at + n * 8 * ES, b0.r[0], b0.r[1], b1.r[0], b1.r[1]);
            Ops::mma(acc[m][n], a, b0);
            Ops::mma(acc[m][n + 1], a, b1);
          }
        } else {
          // float: two m16n8k8 k-steps of 8 keys, 3xTF32; A entries are single words.
          float part_acc[NCW][4];
#pragma unroll
          for (int n = 0; n < NCW; ++n) part_acc[n][0] = part_acc[n][1] = part_acc[n][2] = part_acc[n][3] = 0.f;
#pragma unroll
          for (int half = 0; half < 2; ++half) {
            typename Ops::AFrag a;
            const int k0 = key + 8 * half;
            float x[4] = {lds_f32(a_at + 32 * half), lds_f32(a_at8 + 32 * half), lds_f32(a_at + 32 * half + 16),
                          lds_f32(a_at8 + 32 * half + 16)};
            if (edge) {
              const bool in0 = k0 >= key_lo && k0 < key_hi, in4 = k0 + 4 >= key_lo && k0 + 4 < key_hi;
              x[0] = in0 ? x[0] : 0.f; x[1] = in0 ? x[1] : 0.f; x[2] = in4 ? x[2] : 0.f; x[3] = in4 ? x[3] : 0.f;
            }
#pragma unroll
            for (int e = 0; e < 4; ++e) Ops::split(x[e], a.big[e], a.small[e]);
#pragma unroll
            for (int n = 0; n < NCW; ++n) {
              typename Ops::BFrag bf;
              const u32 b_at = v_at + (8 * half * LDV + 8 * n) * ES;
              Ops::split(lds_f32(b_at), bf.big[0], bf.small[0]);
              Ops::split(lds_f32(b_at + 4 * LDV * ES), bf.big[1], bf.small[1]);
              Ops::mma(part_acc[n], a, bf);
            }
          }
          // Fresh products per 16 keys, added in float32: the tensor cores' accumulation
          // loses low bits, which over thousands of diagonals would exceed float32's 1e-5.
#pragma unroll
          for (int n = 0; n < NCW; ++n)
#pragma unroll
            for (int e = 0; e < 4; ++e) acc[m][n][e] += part_acc[n][e];
        }
      }
    }
  }

  const SubsequenceRows<Cfg> orow(b, tc, DH);
#pragma unroll
  for (int m = 0; m < 2; ++m)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int t = tc.t0 + kg + 2 * (g + 8 * h) + m;
      if (t >= tc.len) continue;
      T* dst = o + orow.at(t) + n0 + 2 * t4;
#pragma unroll
      for (int n = 0; n < NCW; ++n) {
        if constexpr (k16) {
          *reinterpret_cast<u32*>(dst + 8 * n) =
              pack_pair(from_float<T>(acc[m][n][2 * h]), from_float<T>(acc[m][n][2 * h + 1]));
        } else {
          *reinterpret_cast<float2*>(dst + 8 * n) = make_float2(acc[m][n][2 * h], acc[m][n][2 * h + 1]);
        }
      }
    }
}

// The entry point: the Hopper path (band_pv_wgmma.cuh) where the generator asked for it
// (Cfg::kWgmma) and the target has wgmma (sm_90a), else the mma.sync kernel above.
template <class Cfg>
__device__ __forceinline__ void band_pv(const typename Cfg::T* __restrict__ p, const typename Cfg::T* __restrict__ v,
                                        typename Cfg::T* __restrict__ o) {
  constexpr bool kWgmma = takes_wgmma_kernel<Cfg>();
  if constexpr (kWgmma)
    band_pv_wgmma<Cfg>(p, v, o);
  else
    band_pv_mma<Cfg>(p, v, o);
}

}  // namespace bandjit
