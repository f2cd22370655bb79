// Helper kernels of `bandjit check` (not problem families): compiled and cached like the rest.
#pragma once

#include "generator/source.hpp"

namespace bandjit {

/// count_nonfinite(const T* x, long long n, unsigned long long* counts[2]): NaN and ±inf counts.
Source generate_count_nonfinite(DType dtype);

/// gather(const T* x, const long long* index, long long n, T* out): out[k] = x[index[k]].
Source generate_gather(DType dtype);

}  // namespace bandjit
