// bandjit/band_softmax.cuh — P[i, :] = softmax(scale · S[i, :] + M[i, :])  (SPEC §3.2)
// M is −inf at slots whose key is outside the sequence and at keys the optional key-padding
// mask removes. A row with no allowed key gives zeros. P may alias S (in place): every
// thread reads all its elements before it writes any.
//
// kRowThreads threads share one row (a power of two); each holds kElemsPerThread values in
// registers, so the row is read once and written once.
#pragma once

#include "bandjit/common.cuh"

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

template <class Cfg>
__device__ __forceinline__ void band_softmax(const typename Cfg::T* s, typename Cfg::T* p, const void* mask) {
  using T = typename Cfg::T;
  constexpr int R = Cfg::kRowThreads, E = Cfg::kElemsPerThread, RPB = Cfg::kRowsPerBlock;
  constexpr int C = Cfg::kDiagonals, N = Cfg::kSeqLen, H = Cfg::kHeads, WL = Cfg::kWindowLeft;
  constexpr i64 kRows = i64(Cfg::kBatch) * H * N;
  __shared__ float scratch[R > 32 ? Cfg::kThreads / 32 : 1];

  const int lr = threadIdx.x % R;
  const i64 row = i64(blockIdx.x) * RPB + threadIdx.x / R;
  const bool active = row < kRows;  // inactive threads still join the shuffles
  int b, h, i;
  if (Cfg::kLayout == kLayoutBNHD) {
    h = int(row % H);
    i = int((row / H) % N);
    b = int(row / (i64(H) * N));
  } else {
    i = int(row % N);
    h = int((row / N) % H);
    b = int(row / (i64(H) * N));
  }
  const int D = Cfg::dilation(active ? h : 0);
  const i64 base = row * C;

  float x[E];
  float mx = neg_inf();
#pragma unroll
  for (int e = 0; e < E; ++e) {
    const int j = lr + e * R;
    x[e] = neg_inf();
    if (active && j < C) {
      const int key = i + D * (j - WL);
      if (key >= 0 && key < N) {
        float add = 0.f;
        bool keep = true;
        if constexpr (Cfg::kKeyMask == kMaskBool) {
          keep = static_cast<const unsigned char*>(mask)[i64(b) * N + key] != 0;
        } else if constexpr (Cfg::kKeyMask == kMaskAdditive) {
          add = static_cast<const float*>(mask)[i64(b) * N + key];
          keep = !(add < 0.f);
        }
        if (keep) x[e] = Cfg::kScale * to_float(s[base + j]) + add;
      }
    }
    mx = fmaxf(mx, x[e]);
  }
  mx = group_reduce<R>(mx, true, scratch);

  constexpr float kLog2e = 1.4426950408889634f;
  float sum = 0.f;
#pragma unroll
  for (int e = 0; e < E; ++e) {
    // A fully masked row has mx = −inf: every slot becomes 0 rather than NaN.
    x[e] = (x[e] == neg_inf()) ? 0.f : exp2f((x[e] - mx) * kLog2e);
    sum += x[e];
  }
  sum = group_reduce<R>(sum, false, scratch);
  const float inv = sum > 0.f ? 1.f / sum : 0.f;

#pragma unroll
  for (int e = 0; e < E; ++e) {
    const int j = lr + e * R;
    if (active && j < C) p[base + j] = from_float<T>(x[e] * inv);
  }
}

}  // namespace bandjit
