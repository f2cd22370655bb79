// bandjit/band_softmax.cuh — P[i, :] = softmax(scale · S[i, :] + M[i, :])  (SPEC §3.2)
// M is −inf at slots whose key is outside the sequence and at keys the optional key-padding
// mask removes. A row with no allowed key gives zeros. P may alias S (in place).
//
// kRowThreads threads share one row and hold it in registers, so S is read once and P
// written once. They read the 16-byte pieces that cover the row (the first and last may
// carry a neighbour row's elements, which are ignored) and write whole pieces only inside
// the row, so in-place rows never clobber each other. The slots with a key inside the
// sequence form one range [jlo, jhi), found from i and D without per-slot division.
#pragma once

#include "bandjit/common.cuh"
#include "bandjit/vector_io.cuh"

namespace bandjit {

template <int R>
__device__ __forceinline__ float group_reduce(float v, bool is_max, float* scratch) {
#pragma unroll
  for (int o = (R < 32 ? R : 32) / 2; o > 0; o >>= 1) {
    const float other = __shfl_xor_sync(0xffffffffu, v, o);
    v = is_max ? fmaxf(v, other) : v + other;
  }
  if constexpr (R > 32) {  // a row spans R / 32 warps: combine them through shared memory
    const int warp = threadIdx.x >> 5, first = warp - warp % (R / 32);
    if ((threadIdx.x & 31) == 0) scratch[warp] = v;
    __syncthreads();
    v = scratch[first];
#pragma unroll
    for (int w = 1; w < R / 32; ++w) v = is_max ? fmaxf(v, scratch[first + w]) : v + scratch[first + w];
    __syncthreads();
  }
  return v;
}

// One 16-byte piece of a band tensor at element `at` (16-byte aligned); the tensor's last
// piece may be cut short at `total` elements: only what exists is read (the rest is 0).
template <class T>
__device__ __forceinline__ uint4 load_row_piece(const T* g, i64 at, i64 total) {
  constexpr int V = Vec<T>::kElems;
  uint4 raw = make_uint4(0, 0, 0, 0);
  if (at + V <= total) {
    raw = *reinterpret_cast<const uint4*>(g + at);
  } else {
#pragma unroll
    for (int c = 0; c < V; ++c)
      if (at + c < total) reinterpret_cast<T*>(&raw)[c] = g[at + c];
  }
  return raw;
}

// Stores a row's 16-byte piece whose first element is row slot j_first (may be < 0); a
// piece shared with a neighbour row writes only this row's slots [0, C), so rows processed
// in place never clobber each other.
template <class T, int C>
__device__ __forceinline__ void store_row_piece(T* g, i64 at, int j_first, const uint4& raw) {
  constexpr int V = Vec<T>::kElems;
  if (j_first >= 0 && j_first + V <= C) {
    *reinterpret_cast<uint4*>(g + at) = raw;
  } else {
    const T* out = reinterpret_cast<const T*>(&raw);
#pragma unroll
    for (int c = 0; c < V; ++c)
      if (j_first + c >= 0 && j_first + c < C) g[at + c] = out[c];
  }
}

// The band row of the thread group of band_softmax / band_softmax_backward this thread is
// in: blocks of kRowsPerBlock groups over one batch (grid.z = batch, which may be a launch
// argument), each group taking kRowGroup consecutive rows (this is member g), the row's
// (b, h, i), its diagonals [jlo, jhi) whose key lies in the sequence
// (key(i, j) = i + D·(j − w_l)), and its 16-byte pieces.
template <class Cfg>
struct SoftmaxRow {
  int lr, b, h, i, D, jlo, jhi, mis, pieces;
  bool active;  // inactive threads still join the reductions
  i64 row, first, total;
  __device__ __forceinline__ explicit SoftmaxRow(int g = 0) {
    constexpr int R = Cfg::kRowThreads, RPB = Cfg::kRowsPerBlock, V = Vec<typename Cfg::T>::kElems;
    constexpr int C = Cfg::kDiagonals, N = Cfg::kSeqLen, H = Cfg::kHeads, WL = Cfg::kWindowLeft;
    constexpr i64 kRowsPerBatch = i64(H) * N;
    lr = threadIdx.x % R;
    const i64 row_in_batch = (i64(blockIdx.x) * RPB + threadIdx.x / R) * Cfg::kRowGroup + g;
    active = row_in_batch < kRowsPerBatch;
    row = blockIdx.z * kRowsPerBatch + row_in_batch;
    total = i64(gridDim.z) * kRowsPerBatch * C;  // elements of the band tensor
    if (Cfg::kLayout == kLayoutBNHD) {
      h = int(row % H);
      i = int((row / H) % N);
    } else {
      i = int(row % N);
      h = int((row / N) % H);
    }
    b = int(row / (i64(H) * N));
    D = Cfg::dilation(active ? h : 0);
    jlo = active ? max(0, WL - i / D) : 0;
    jhi = active ? min(C, WL + (N - 1 - i) / D + 1) : 0;
    const i64 start = row * C;
    mis = misalignment<typename Cfg::T>(start);
    first = start - mis;
    pieces = active ? (mis + C + V - 1) / V : 0;
  }
};

// This thread's pieces of row `sr` of S (zero bits past the row).
template <class Cfg>
__device__ __forceinline__ void load_row_pieces(const typename Cfg::T* s, const SoftmaxRow<Cfg>& sr,
                                                uint4 (&raw)[Cfg::kPiecesPerThread]) {
  constexpr int V = Vec<typename Cfg::T>::kElems;
#pragma unroll
  for (int e = 0; e < Cfg::kPiecesPerThread; ++e) {
    const int piece = sr.lr + e * Cfg::kRowThreads;
    raw[e] = piece < sr.pieces ? load_row_piece(s, sr.first + i64(piece) * V, sr.total) : make_uint4(0, 0, 0, 0);
  }
}

// One row, whose pieces this thread loaded into `raw_pieces` (load_row_pieces).
template <class Cfg>
__device__ __forceinline__ void band_softmax_row(typename Cfg::T* p, const void* mask, const SoftmaxRow<Cfg>& sr,
                                                 const uint4 (&raw_pieces)[Cfg::kPiecesPerThread]) {
  using T = typename Cfg::T;
  constexpr int R = Cfg::kRowThreads, NV = Cfg::kPiecesPerThread, V = Vec<T>::kElems;
  constexpr int C = Cfg::kDiagonals, N = Cfg::kSeqLen, WL = Cfg::kWindowLeft;
  // Values are kept in the log2 domain: x = (scale·s + add)·log2(e), P = 2^(x − max).
  constexpr float kLog2e = 1.4426950408889634f, kScaleLog2e = Cfg::kScale * kLog2e;
  __shared__ float scratch[R > 32 ? Cfg::kThreads / 32 : 1];

  const int lr = sr.lr, b = sr.b, h = sr.h, i = sr.i, D = sr.D, jlo = sr.jlo, jhi = sr.jhi, mis = sr.mis,
            pieces = sr.pieces;
  const bool active = sr.active;
  const i64 row = sr.row, first = sr.first;

  float x[NV][V];
  float mx = neg_inf();
#pragma unroll
  for (int e = 0; e < NV; ++e) {
    const int piece = lr + e * R;
    const int j_first = piece * V - mis;
    const uint4 raw = raw_pieces[e];
    const T* in = reinterpret_cast<const T*>(&raw);
    if (Cfg::kKeyMask == kMaskNone && piece < pieces && j_first >= jlo && j_first + V <= jhi) {
#pragma unroll
      for (int c = 0; c < V; ++c) x[e][c] = to_float(in[c]) * kScaleLog2e;  // every slot allowed
    } else {
#pragma unroll
      for (int c = 0; c < V; ++c) {
        const int j = j_first + c;
        float value = neg_inf();
        if (piece < pieces && j >= jlo && j < jhi) {
          if constexpr (Cfg::kKeyMask == kMaskNone) {
            value = to_float(in[c]) * kScaleLog2e;
          } else {
            const i64 key = i64(b) * N + i + D * (j - WL);
            if constexpr (Cfg::kKeyMask == kMaskBool) {
              if (static_cast<const unsigned char*>(mask)[key] != 0) value = to_float(in[c]) * kScaleLog2e;
            } else {
              const float add = static_cast<const float*>(mask)[key];
              if (!(add < 0.f)) value = (Cfg::kScale * to_float(in[c]) + add) * kLog2e;
            }
          }
        }
        x[e][c] = value;
      }
    }
#pragma unroll
    for (int c = 0; c < V; ++c) mx = fmaxf(mx, x[e][c]);
  }
  mx = group_reduce<R>(mx, true, scratch);
  // A fully masked row has mx = −inf: subtracting 0 instead keeps every slot at 2^−inf = 0.
  const float shift = mx == neg_inf() ? 0.f : mx;

  float sum = 0.f;
#pragma unroll
  for (int e = 0; e < NV; ++e)
#pragma unroll
    for (int c = 0; c < V; ++c) {
      x[e][c] = exp2_approx(x[e][c] - shift);
      sum += x[e][c];
    }
  sum = group_reduce<R>(sum, false, scratch);
  const float inv = sum > 0.f ? 1.f / sum : 0.f;

#pragma unroll
  for (int e = 0; e < NV; ++e) {
    const int piece = lr + e * R;
    if (piece >= pieces) continue;
    const int j_first = piece * V - mis;
    uint4 raw;
    T* out = reinterpret_cast<T*>(&raw);
#pragma unroll
    for (int c = 0; c < V; ++c) out[c] = from_float<T>(x[e][c] * inv);
    store_row_piece<T, C>(p, first + i64(piece) * V, j_first, raw);
  }
}

// kRowGroup > 1: a thread group takes that many consecutive rows, each one's pieces loaded
// before the previous one is reduced, so the SM keeps loads in flight through the reductions.
template <class Cfg>
__device__ __forceinline__ void band_softmax(const typename Cfg::T* s, typename Cfg::T* p, const void* mask) {
  constexpr int G = Cfg::kRowGroup, NV = Cfg::kPiecesPerThread;
  uint4 raw[NV];
  load_row_pieces<Cfg>(s, SoftmaxRow<Cfg>(0), raw);
  if constexpr (G == 1) {
    band_softmax_row<Cfg>(p, mask, SoftmaxRow<Cfg>(0), raw);
  } else {
#pragma unroll 1
    for (int g = 0; g < G; ++g) {
      uint4 next[NV] = {};
      if (g + 1 < G) load_row_pieces<Cfg>(s, SoftmaxRow<Cfg>(g + 1), next);
      band_softmax_row<Cfg>(p, mask, SoftmaxRow<Cfg>(g), raw);
#pragma unroll
      for (int e = 0; e < NV; ++e) raw[e] = next[e];
    }
  }
}

}  // namespace bandjit
