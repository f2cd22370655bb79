// bandjit/band_softmax_backward.cuh — dS[i, :] = scale · P ⊙ (dP − Σ_j dP ⊙ P)  (SPEC §3.4)
// over the slots band_softmax lets through (key inside the sequence and kept by the optional
// key-padding mask); every other slot gets dS = 0 exactly, whatever P and dP hold there (dP
// from band_qk is −inf off the sequence). dS may alias dP (in place).
//
// The row layout of band_softmax: kRowThreads threads share one row and hold its 16-byte
// pieces of P and dP in registers, so each is read once and dS written once; pieces shared
// with a neighbouring row are written element by element.
#pragma once

#include "bandjit/band_softmax.cuh"

namespace bandjit {

template <class Cfg>
__device__ __forceinline__ void band_softmax_backward(const typename Cfg::T* __restrict__ p,
                                                      const typename Cfg::T* dp, typename Cfg::T* ds,
                                                      const void* mask) {
  using T = typename Cfg::T;
  constexpr int R = Cfg::kRowThreads, NV = Cfg::kPiecesPerThread, V = Vec<T>::kElems;
  constexpr int C = Cfg::kDiagonals, N = Cfg::kSeqLen, WL = Cfg::kWindowLeft;
  __shared__ float scratch[R > 32 ? Cfg::kThreads / 32 : 1];

  const SoftmaxRow<Cfg> sr;
  const int lr = sr.lr, b = sr.b, h = sr.h, i = sr.i, D = sr.D, jlo = sr.jlo, jhi = sr.jhi, mis = sr.mis,
            pieces = sr.pieces;
  const bool active = sr.active;
  const i64 row = sr.row, first = sr.first;
  const i64 kTotal = sr.total;  // elements of P (and dP, dS)

  float pv[NV][V], gv[NV][V];
  unsigned allowed[NV];  // bit c: slot j_first + c takes part
  float dot = 0.f;
#pragma unroll
  for (int e = 0; e < NV; ++e) {
    const int piece = lr + e * R;
    const int j_first = piece * V - mis;
    const i64 at = first + i64(piece) * V;
    const uint4 raw_p = piece < pieces ? load_row_piece(p, at, kTotal) : make_uint4(0, 0, 0, 0);
    const uint4 raw_g = piece < pieces ? load_row_piece(dp, at, kTotal) : make_uint4(0, 0, 0, 0);
    const T* in_p = reinterpret_cast<const T*>(&raw_p);
    const T* in_g = reinterpret_cast<const T*>(&raw_g);
    allowed[e] = 0;
#pragma unroll
    for (int c = 0; c < V; ++c) {
      const int j = j_first + c;
      bool ok = piece < pieces && j >= jlo && j < jhi;
      if constexpr (Cfg::kKeyMask != kMaskNone) {
        if (ok) {
          const i64 key = i64(b) * N + i + D * (j - WL);
          if constexpr (Cfg::kKeyMask == kMaskBool)
            ok = static_cast<const unsigned char*>(mask)[key] != 0;
          else
            ok = !(static_cast<const float*>(mask)[key] < 0.f);
        }
      }
      // Selected, not multiplied: P and dP off the allowed slots may be ±inf or NaN.
      pv[e][c] = ok ? to_float(in_p[c]) : 0.f;
      gv[e][c] = ok ? to_float(in_g[c]) : 0.f;
      allowed[e] |= ok ? 1u << c : 0u;
      dot += pv[e][c] * gv[e][c];
    }
  }
  dot = group_reduce<R>(dot, false, scratch);

#pragma unroll
  for (int e = 0; e < NV; ++e) {
    const int piece = lr + e * R;
    if (piece >= pieces) continue;
    const int j_first = piece * V - mis;
    uint4 raw;
    T* out = reinterpret_cast<T*>(&raw);
#pragma unroll
    for (int c = 0; c < V; ++c)
      out[c] = from_float<T>((allowed[e] >> c) & 1u ? Cfg::kScale * pv[e][c] * (gv[e][c] - dot) : 0.f);
    store_row_piece<T, C>(ds, first + i64(piece) * V, j_first, raw);
  }
}

}  // namespace bandjit
