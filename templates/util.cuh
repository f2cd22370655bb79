// bandjit/util.cuh — helper kernels of `bandjit check`: counting elements nothing wrote,
// gathering scattered elements (a column of a band tensor) for the reference.
#pragma once

#include "bandjit/common.cuh"

namespace bandjit {

// counts[0] += number of NaN elements, counts[1] += number of ±inf elements.
template <class T>
__device__ __forceinline__ void count_nonfinite(const T* __restrict__ x, long long n,
                                                unsigned long long* counts) {
  unsigned long long nan = 0, inf = 0;
  for (long long idx = blockIdx.x * (long long)blockDim.x + threadIdx.x; idx < n;
       idx += (long long)gridDim.x * blockDim.x) {
    const float v = to_float(x[idx]);
    nan += (v != v);
    inf += (v - v != v - v) && (v == v);
  }
  for (int o = 16; o > 0; o >>= 1) {
    nan += __shfl_xor_sync(0xffffffffu, nan, o);
    inf += __shfl_xor_sync(0xffffffffu, inf, o);
  }
  if ((threadIdx.x & 31) == 0) {
    if (nan) atomicAdd(&counts[0], nan);
    if (inf) atomicAdd(&counts[1], inf);
  }
}

// out[k] = x[index[k]] for k < n.
template <class T>
__device__ __forceinline__ void gather(const T* __restrict__ x, const long long* __restrict__ index, long long n,
                                       T* __restrict__ out) {
  for (long long k = blockIdx.x * (long long)blockDim.x + threadIdx.x; k < n; k += (long long)gridDim.x * blockDim.x)
    out[k] = x[index[k]];
}

}  // namespace bandjit
