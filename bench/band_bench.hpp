// `bandjit bench`: CUDA-event medians of each family, the unfused forward and the composed
// backward on one problem, with the bytes and FLOPs each must move and do (each input read
// once, each output written once, SPEC §3; for the forward and backward the sum over their
// kernels), against the device-to-device copy bandwidth measured in the same run.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "bandjit/bandjit.hpp"

namespace bandjit {

struct BenchRow {
  /// band_qk, band_softmax, band_pv, "forward" (the three in a row), sliding_window_attention
  /// (the fused forward: O and LSE), band_tpv (as dV =
  /// band_tpv(P, dO)), band_softmax_backward, "backward" (attention_backward: five launches)
  std::string family;
  double median_us = 0;
  double min_us = 0;
  double bytes = 0;  ///< must-move bytes
  double flops = 0;  ///< must-do FLOPs (2 per multiply-add; softmax: 0)
  int buffer_sets = 1;
};

struct BenchOptions {
  int warmup = 10;
  int runs = 50;
  /// Input/output sets rotated between launches so that the working set is at least this
  /// many bytes (several times the L2) and timings measure DRAM, not cache.
  double min_working_set = 256e6;
  Options kernel_options;
};

/// Must-move bytes and must-do FLOPs of one family on a problem.
double family_bytes(const std::string& family, const Problem& p);
double family_flops(const std::string& family, const Problem& p);

std::vector<BenchRow> bench_problem(const Problem& p, const BenchOptions& options);

/// Device-to-device copy of `bytes` (cuMemcpyDtoD), median; returns GB/s counting bytes
/// read plus written.
double copy_bandwidth_gbps(std::size_t bytes, int runs);

}  // namespace bandjit
