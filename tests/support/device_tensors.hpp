// GPU tests: host values ↔ device tensors in a problem's dtype, and the check harness run
// over the edge cases of tests/shapes/edge-cases.json.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "check/check_problem.hpp"
#include "check/device_buffer.hpp"
#include "support/catch.hpp"
#include "support/temp_dir.hpp"

namespace bandjit::test {

inline std::uint16_t to_bits(DType d, float x) {
  std::uint16_t bits;
  if (d == DType::float16) {
    const __half h = __float2half_rn(x);
    std::memcpy(&bits, &h, 2);
  } else {
    const __nv_bfloat16 h = __float2bfloat16_rn(x);
    std::memcpy(&bits, &h, 2);
  }
  return bits;
}

inline float from_bits(DType d, std::uint16_t bits) {
  if (d == DType::float16) {
    __half h;
    std::memcpy(&h, &bits, 2);
    return __half2float(h);
  }
  __nv_bfloat16 h;
  std::memcpy(&h, &bits, 2);
  return __bfloat162float(h);
}

/// Uploads `values` in the dtype; replaces them by the values as stored (rounded).
inline DeviceBuffer upload(DType d, std::vector<double>& values) {
  DeviceBuffer buf(values.size() * element_size(d));
  if (d == DType::float32) {
    std::vector<float> host(values.begin(), values.end());
    for (std::size_t i = 0; i < values.size(); ++i) values[i] = host[i];
    buf.upload(host.data(), host.size() * 4);
  } else {
    std::vector<std::uint16_t> host(values.size());
    for (std::size_t i = 0; i < values.size(); ++i) {
      host[i] = to_bits(d, static_cast<float>(values[i]));
      if (!std::isnan(values[i])) values[i] = from_bits(d, host[i]);
    }
    buf.upload(host.data(), host.size() * 2);
  }
  return buf;
}

inline std::vector<double> download(DType d, const DeviceBuffer& buf, std::size_t n) {
  std::vector<double> out(n);
  if (d == DType::float32) {
    std::vector<float> host(n);
    buf.download(host.data(), n * 4);
    std::copy(host.begin(), host.end(), out.begin());
  } else {
    std::vector<std::uint16_t> host(n);
    buf.download(host.data(), n * 2);
    for (std::size_t i = 0; i < n; ++i) out[i] = from_bits(d, host[i]);
  }
  return out;
}

inline double tolerance(DType d) { return d == DType::float32 ? 1e-5 : 1e-2; }

inline std::vector<Problem> edge_cases() {
  std::vector<Problem> out;
  for (const auto& e : load_shape_file(source_path("tests/shapes/edge-cases.json")).entries) out.push_back(e.problem);
  return out;
}

/// `op` (a family or attention_backward) on every edge case through the check harness; each
/// problem must report `reports` passing results.
inline void check_edge_cases(const char* op, std::size_t reports = 1) {
  int checked = 0;
  for (const Problem& p : edge_cases()) {
    std::uint64_t seed = 0;
    const auto results = check_problem(p, {op}, CheckOptions{0, 0, 1, {}}, &seed);
    REQUIRE(results.size() == reports);
    for (const OpCheck& c : results) {
      INFO(c.family << " " << slug(p) << " seed " << seed << ": rel_error " << c.rel_error << " nan " << c.nan_count
                    << " inf " << c.inf_count << "/" << c.inf_expected << " structure " << c.structure_mismatches
                    << " rows " << c.rows_checked << " " << c.note);
      CHECK(c.rows_checked > 0);
      CHECK(c.passed);
    }
    ++checked;
  }
  CHECK(checked >= 60);
}

}  // namespace bandjit::test
