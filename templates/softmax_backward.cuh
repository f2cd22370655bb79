// bandjit/softmax_backward.cuh — dx = scale · y ⊙ (dy − Σ_j dy_j · y_j) over rows of
// kRowLength elements: the gradient of softmax.cuh's y = softmax(scale · x + mask). The
// mask does not enter: y is exactly 0 at removed keys, so they get dx = 0 (for finite dy)
// and one kernel serves every mask. dx may alias dy.
//
// softmax.cuh's row layout: kRowThreads threads hold the row's pieces of y and dy in
// registers as loaded (float16/bfloat16 stay packed, half the registers of floats), one
// sum reduction (a cluster of blocks on sm_90 for the longest rows; a two-pass walk of one
// block elsewhere), dx written once.
#pragma once

#include "bandjit/opaque.cuh"
#include "bandjit/softmax.cuh"

namespace bandjit {

template <class Cfg>
struct GradPieces {
  typedef typename RawPiece<sizeof(typename Cfg::T) * Cfg::kVec>::type Raw;
  Raw y[Cfg::kPiecesPerThread], dy[Cfg::kPiecesPerThread];
};

// Loads this lane's pieces of y and dy (zeros past the row); returns Σ y · dy over them.
template <class Cfg>
__device__ __forceinline__ float load_row_grad(const typename Cfg::T* y, const typename Cfg::T* dy, i64 row, int lane,
                                               bool active, GradPieces<Cfg>& g) {
  using T = typename Cfg::T;
  typedef typename GradPieces<Cfg>::Raw Raw;
  constexpr int V = Cfg::kVec, L = Cfg::kRowLength;
  float dot = 0.f;
#pragma unroll
  for (int e = 0; e < Cfg::kPiecesPerThread; ++e) {
    const int piece = lane + e * Cfg::kRowThreads;
    const bool in_row = active && piece_in_row<Cfg>(piece);
    g.y[e] = in_row ? load_piece<T, V>(y + row * L + piece * V) : Raw{};
    g.dy[e] = in_row ? load_piece<T, V>(dy + row * L + piece * V) : Raw{};
  }
#pragma unroll
  for (int e = 0; e < Cfg::kPiecesPerThread; ++e) {
    const T* iy = reinterpret_cast<const T*>(&g.y[e]);
    const T* ig = reinterpret_cast<const T*>(&g.dy[e]);
#pragma unroll
    for (int c = 0; c < V; ++c) dot = fmaf(to_float(iy[c]), to_float(ig[c]), dot);
  }
#pragma unroll
  for (int e = 0; e < Cfg::kPiecesPerThread; ++e) {
    opaque(g.y[e]);
    opaque(g.dy[e]);
  }
  return dot;
}

template <class Cfg>
__device__ __forceinline__ void store_row_grad(typename Cfg::T* dx, i64 row, int lane, bool active,
                                               const GradPieces<Cfg>& g, float dot) {
  using T = typename Cfg::T;
  constexpr int V = Cfg::kVec;
#pragma unroll
  for (int e = 0; e < Cfg::kPiecesPerThread; ++e) {
    const int piece = lane + e * Cfg::kRowThreads;
    if (!active || !piece_in_row<Cfg>(piece)) continue;
    const T* iy = reinterpret_cast<const T*>(&g.y[e]);
    const T* ig = reinterpret_cast<const T*>(&g.dy[e]);
    typename GradPieces<Cfg>::Raw raw;
    T* out = reinterpret_cast<T*>(&raw);
#pragma unroll
    for (int c = 0; c < V; ++c) out[c] = from_float<T>(Cfg::kScale * to_float(iy[c]) * (to_float(ig[c]) - dot));
    store_piece<T, V>(dx + row * Cfg::kRowLength + piece * V, raw);
  }
}

// y and dy are not __restrict__: dx may alias dy.
template <class Cfg>
__device__ __forceinline__ void softmax_backward(const typename Cfg::T* y, const typename Cfg::T* dy,
                                                 typename Cfg::T* dx) {
  constexpr int CL = Cfg::kCluster;
  constexpr int RB = Cfg::kRowThreads / CL;  // threads of a row inside one block
  static_assert(CL == 1 || Cfg::kRowsPerBlock == 1, "a cluster row fills its blocks");
  __shared__ float scratch[Cfg::kThreads / 32 > 0 ? Cfg::kThreads / 32 : 1];
  GradPieces<Cfg> g;
  if constexpr (CL == 1 || kClusters) {
    const RowLane<Cfg> at(row_block_rank<CL>());
    float dot = load_row_grad<Cfg>(y, dy, at.row, at.lane, at.active, g);
    dot = block_row_reduce<RB>(dot, SumOp{}, scratch);
#if defined(BANDJIT_CLUSTERS)
    __shared__ float slot;
    if constexpr (CL > 1) dot = cluster_reduce<CL>(dot, SumOp{}, &slot);
#endif
    store_row_grad<Cfg>(dx, at.row, at.lane, at.active, g, dot);
#if defined(BANDJIT_CLUSTERS)
    if constexpr (CL > 1) cluster_wait();  // peers are done reading this block's slot
#endif
  } else {
    // No clusters: the cluster's first block walks the row twice (see softmax_forward).
    if (blockIdx.x % CL != 0) return;
    float dot = 0.f;
#pragma unroll 1
    for (int rank = 0; rank < CL; ++rank) {
      const RowLane<Cfg> at(rank);
      dot += load_row_grad<Cfg>(y, dy, at.row, at.lane, at.active, g);
    }
    dot = block_row_reduce<RB>(dot, SumOp{}, scratch);
#pragma unroll 1
    for (int rank = 0; rank < CL; ++rank) {
      const RowLane<Cfg> at(rank);
      load_row_grad<Cfg>(y, dy, at.row, at.lane, at.active, g);
      store_row_grad<Cfg>(dx, at.row, at.lane, at.active, g, dot);
    }
  }
}

}  // namespace bandjit
