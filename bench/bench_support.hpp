// Timing pieces every bench uses: CUDA-event medians over rotating buffer sets (so that
// timings measure DRAM, not the L2) and random device data.
#pragma once

#include <cstdint>
#include <functional>

#include "bandjit/problem.hpp"
#include "check/device_buffer.hpp"

namespace bandjit {

struct Sample {
  double median_us, min_us;
};

/// Runs work(i % sets) `warmup` times, then `runs` times each between its own pair of CUDA
/// events on the default stream; the median and minimum in µs.
Sample time_rotating(const std::function<void(int)>& work, int sets, int warmup, int runs);

/// Random values in (-1, 1) of dtype `d` over the whole buffer (for timing, not checking).
void fill_random(DeviceBuffer& buf, DType d, std::uint64_t seed);

}  // namespace bandjit
