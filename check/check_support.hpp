// Pieces shared by the forward and backward checks (check_problem.cpp, check_backward.cpp):
// reproducible random inputs, NaN poison, non-finite counts and gathers on the GPU, and the
// relative-error sum. Internal to check/.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "bandjit/bandjit.hpp"
#include "check/check_problem.hpp"
#include "check/device_buffer.hpp"

namespace bandjit {

/// Counter-based uniform in [-1, 1): reproducible from (seed, index), fillable in parallel.
double uniform(std::uint64_t seed, std::uint64_t index);

template <class Fn>
void parallel_for(std::size_t n, Fn fn) {
  const std::size_t workers = std::max(1u, std::min(32u, std::thread::hardware_concurrency()));
  std::vector<std::thread> pool;
  for (std::size_t w = 0; w < workers; ++w)
    pool.emplace_back([&, w] {
      for (std::size_t i = w; i < n; i += workers) fn(i);
    });
  for (auto& t : pool) t.join();
}

/// Host values in the kernel's element type, and their exact value as double.
struct HostTensor {
  std::string bytes;
  std::vector<double> values;
};

/// The value of one element of dtype `d` stored at `p`.
double element_value(DType d, const char* p);

/// `v` rounded to dtype `d` (round to nearest even, through float), as a double.
double round_to(DType d, double v);

/// n uniform values in [-1, 1) rounded to the dtype.
HostTensor random_tensor(DType d, std::size_t n, std::uint64_t seed);

/// Key-padding mask with ~20 % of keys removed, and the first half of batch 0 removed
/// entirely so that fully masked rows occur: `values` as the reference reads them, `bytes`
/// as the kernel does (uint8 or float32).
void random_mask(const Problem& p, std::uint64_t seed, std::vector<double>& values, std::string& bytes);

/// Fills the buffer with the dtype's quiet NaN.
void poison(DeviceBuffer& buf, DType d);

struct NonFinite {
  std::uint64_t nan = 0, inf = 0;
};
/// NaN and ±inf among the first n elements of `buf` (a helper kernel, cached like the rest).
NonFinite count_nonfinite(const DeviceBuffer& buf, DType d, std::size_t n, const Options& options);

/// buf[index[k]] for every k, as doubles (a helper kernel gathers them on the GPU, so a
/// column of a band tensor costs one download).
std::vector<double> gather(const DeviceBuffer& buf, DType d, const std::vector<std::int64_t>& index,
                           const Options& options);

/// ‖out − ref‖² and ‖ref‖² over compared elements, and slots that had to match exactly.
struct ErrorSum {
  double diff2 = 0, ref2 = 0;
  std::uint64_t structure = 0;
  void add(double out, double ref, bool exact_slot);
  void merge(const ErrorSum& o) {
    diff2 += o.diff2;
    ref2 += o.ref2;
    structure += o.structure;
  }
  double rel() const;
};
ErrorSum total(const std::vector<ErrorSum>& parts);

/// One report row: passed when rows were checked, the relative error is within tolerance, no
/// exact slot differs, no NaN survived and exactly `inf_expected` infinities remain.
OpCheck make_op_check(const std::string& family, Origin origin, double get_kernel_ms, const ErrorSum& error,
                      double tolerance, std::uint64_t rows, const NonFinite& nonfinite, std::uint64_t inf_expected,
                      double median_us);

}  // namespace bandjit
