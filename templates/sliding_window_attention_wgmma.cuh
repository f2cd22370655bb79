// bandjit/sliding_window_attention_wgmma.cuh — the Hopper kernel of sliding_window_attention
// (SPEC §3.5): the portable kernel's scheme with both products on wgmma (sm_90a), for 16-bit
// types and head_dim 64 or 128.
//
// One warpgroup per block owns 64 query rows of one residue sub-sequence; Q, and per stage TN
// K and TN V rows, are staged by cp.async straight into the 128-byte-swizzled layout of
// wgmma.cuh (rows past the sequence's end zero-filled), then made visible to the tensor cores
// (fence.proxy.async) before the barrier. Per key tile: S = Q·Kᵀ as m64n64k16 products with
// both operands in shared memory (K-major: Q rows and K rows are the operands' rows); the
// online softmax of attention_common.cuh on the accumulators (per warp the mma.sync layout);
// O += P·V with P's A fragments from registers and V as an MN-major operand (its rows are the
// products' K dimension). One barrier per tile: after it, tile n is in and every warp is done
// with tile n − 1, so the copies of tile n + 1 into that stage go out while Q·Kᵀ runs. Several
// blocks per SM overlap one's softmax with another's products.
#pragma once

#include "bandjit/attention_common.cuh"
#include "bandjit/wgmma.cuh"

namespace bandjit {

// Shared-memory layout of the Hopper kernel: 1024 bytes of slack to align the swizzle atoms,
// then Q (64 rows), two stages of K and V (TN rows each), the key mask's two stages.
template <class Cfg>
struct AttentionWgmmaSmem {
  static constexpr int TM = 64, TN = Cfg::kKeyTile, DH = Cfg::kHeadDim;
  static constexpr int kQBytes = TM * DH * 2, kKVBytes = TN * DH * 2;
  static constexpr int kMaskFloats = Cfg::kKeyMask != kMaskNone ? 2 * TN : 0;
  static constexpr unsigned kBytes = 1024 + kQBytes + 4 * kKVBytes + kMaskFloats * 4;
};

// Copies R-row tiles of a [.., Dh] tensor's sub-sequence (rows u0 … u0 + R − 1; rows past the
// sequence's end become zeros) into the swizzled layout. Each thread always copies the same
// 16-byte chunk c of rows row0 + P·i, P = threads / chunks a row (a multiple of 8), so its
// swizzled column and the strides are fixed: a copy is one address add and a bounds test.
template <class Cfg, int R>
struct SwizzledStager {
  static constexpr int CH = Cfg::kHeadDim / 8, P = Cfg::kThreads / CH, PASSES = R / P;
  static_assert(Cfg::kThreads % CH == 0 && P % 8 == 0 && R % P == 0, "whole passes of 8-row groups");
  SubsequenceRows<Cfg> rows;
  int row0, dst0;
  __device__ __forceinline__ SwizzledStager(int b, const BandTile& tc)
      : rows(b, tc, Cfg::kHeadDim), row0(threadIdx.x / CH), dst0(swizzled_offset<R>(threadIdx.x / CH, threadIdx.x % CH)) {}
  template <class T>
  __device__ __forceinline__ void operator()(unsigned char* tile, const T* __restrict__ g, int len, int u0) const {
    const T* src = g + rows.at(u0 + row0) + (threadIdx.x % CH) * 8;
    const i64 step = P * rows.step;
    if (u0 + R <= len) {  // the whole tile inside the sequence (uniform): no tests
#pragma unroll
      for (int i = 0; i < PASSES; ++i) cp_async_16(tile + dst0 + i * P * 128, src + i * step, 16);
    } else {
#pragma unroll
      for (int i = 0; i < PASSES; ++i) {
        const bool inside = u0 + row0 + P * i < len;
        cp_async_16(tile + dst0 + i * P * 128, inside ? src + i * step : g, inside ? 16 : 0);
      }
    }
  }
};

template <class Cfg>
__device__ __forceinline__ void sliding_window_attention_wgmma(const typename Cfg::T* __restrict__ q,
                                                               const typename Cfg::T* __restrict__ k,
                                                               const typename Cfg::T* __restrict__ v,
                                                               typename Cfg::T* __restrict__ o,
                                                               float* __restrict__ lse, const void* mask) {
  using T = typename Cfg::T;
  using L = AttentionWgmmaSmem<Cfg>;
  constexpr int TM = L::TM, TN = L::TN, DH = L::DH, CB = DH / 64, NB = TN / 64, KS = DH / 16;
  constexpr int NT = TN / 8, OT = DH / 8;
  static_assert(sizeof(T) == 2 && DH % 64 == 0 && TN % 64 == 0, "16-bit types, head_dim and key tiles of 64s");
  static_assert(Cfg::kThreads == 128 && Cfg::kTileRows == TM, "one warpgroup of 64 rows per block");
  static_assert(L::kBytes <= Cfg::kWgmmaSharedBytes, "the generator's shared-memory size covers the layout");

  extern __shared__ __align__(16) unsigned char smem[];
  const u32 base = smem_addr(smem);
  unsigned char* sQ = smem + (((base + 1023) & ~1023u) - base);  // swizzle atoms on 1024 bytes
  unsigned char* sK = sQ + L::kQBytes;                            // 2 stages
  unsigned char* sV = sK + 2 * L::kKVBytes;                       // 2 stages
  float* sMask = reinterpret_cast<float*>(sV + 2 * L::kKVBytes);  // 2 × TN, log2 units
  // Operand descriptors of the tiles' starts; a k-step or a stage adds its byte offset.
  const u64 dQ = wgmma_desc(smem_addr(sQ), 16, 1024), dK = wgmma_desc(smem_addr(sK), 16, 1024);
  const u64 dV = wgmma_desc(smem_addr(sV), TN * 128, 1024);

  const AttentionBlock<Cfg, TM, TN> blk;
  if (blk.empty()) return;
  const BandTile& tc = blk.tc;
  const int b = blk.b, len = tc.len, t0 = tc.t0, u_lo = blk.u_lo, tiles = blk.tiles;
  const int warp = threadIdx.x >> 5;
  const int tw = t0 + 16 * warp;

  const SwizzledStager<Cfg, TM> stage_q(b, tc);
  const SwizzledStager<Cfg, TN> stage_kv(b, tc);
  stage_q(sQ, q, len, t0);
  stage_kv(sK, k, len, u_lo);
  stage_kv(sV, v, len, u_lo);
  cp_async_commit();
  if constexpr (Cfg::kKeyMask != kMaskNone) stage_key_mask<Cfg, TN>(sMask, mask, b, tc, u_lo);

  float acc[OT][4];
#pragma unroll
  for (int ot = 0; ot < OT; ++ot) acc[ot][0] = acc[ot][1] = acc[ot][2] = acc[ot][3] = 0.f;
  float m[2] = {neg_inf(), neg_inf()}, l[2] = {0.f, 0.f};

#pragma unroll 1
  for (int n = 0; n < tiles; ++n) {
    const int stage = n & 1, ub = u_lo + n * TN;
    cp_async_wait<0>();   // tile n (and Q, at n = 0): the only copies in flight
    fence_proxy_async();  // this thread's copies → the tensor cores' view of shared memory
    __syncthreads();      // tile n is in for all; all are done with tile n − 1, whose stage refills next

    // S = Q·Kᵀ: k-step ks reads 16 columns of head_dim, 32 bytes into column block ks / 4.
    const u64 dKs = dK + wgmma_desc_offset(stage * L::kKVBytes), dVs = dV + wgmma_desc_offset(stage * L::kKVBytes);
    float s[NT][4];
    wgmma_fence_operands<NT * 4>(&s[0][0]);
    wgmma_fence();
#pragma unroll
    for (int ks = 0; ks < KS; ++ks) {
      const u32 at = (ks & 3) * 32;
      const u64 da = dQ + wgmma_desc_offset((ks >> 2) * (TM * 128) + at);
#pragma unroll
      for (int nb = 0; nb < NB; ++nb)
        wgmma_ss<T>(&s[8 * nb][0], da, dKs + wgmma_desc_offset((ks >> 2) * (TN * 128) + nb * 64 * 128 + at), ks > 0);
    }
    wgmma_commit();
    if (n + 1 < tiles) {  // tile n + 1 into the other stage while the products run
      stage_kv(sK + (stage ^ 1) * L::kKVBytes, k, len, ub + TN);
      stage_kv(sV + (stage ^ 1) * L::kKVBytes, v, len, ub + TN);
      cp_async_commit();
      if constexpr (Cfg::kKeyMask != kMaskNone)
        stage_key_mask<Cfg, TN>(sMask + (stage ^ 1) * TN, mask, b, tc, ub + TN);
    }
    wgmma_wait<0>();
    wgmma_fence_operands<NT * 4>(&s[0][0]);

    online_softmax_tile<Cfg, TN>(s, acc, m, l, Cfg::kKeyMask != kMaskNone ? sMask + stage * TN : nullptr, ub, tw, len);

    // O += P·V: k-step kk takes keys 16kk … 16kk + 15 (two swizzle atoms of V), each 64-column
    // block of head_dim is one product.
    u32 pa[TN / 16][4];
#pragma unroll
    for (int kk = 0; kk < TN / 16; ++kk) pack_p_fragment<T>(pa[kk], s, kk);
    wgmma_fence_operands<OT * 4>(&acc[0][0]);
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < TN / 16; ++kk)
#pragma unroll
      for (int cb = 0; cb < CB; ++cb)
        wgmma_rs<T>(&acc[8 * cb][0], pa[kk], dVs + wgmma_desc_offset(cb * (TN * 128) + kk * 16 * 128));
    wgmma_commit();
    wgmma_wait<0>();
    wgmma_fence_operands<OT * 4>(&acc[0][0]);
  }
  __syncthreads();  // the last tile's products are done in every warp before its stage is reused

  // O leaves through plain rows (head_dim + 8 apart) over the K stages, free now.
  constexpr int LD = DH + 8;
  attention_epilogue<Cfg, LD>(reinterpret_cast<T*>(sK) + 16 * warp * LD, o, lse, acc, m, l, b, tc, tw);
}

}  // namespace bandjit
