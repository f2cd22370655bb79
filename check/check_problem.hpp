// `bandjit check` for one problem: fresh random inputs, NaN-poisoned outputs, each kernel
// run on the GPU and compared with the float64 reference (SPEC §7).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "bandjit/bandjit.hpp"

namespace bandjit {

/// One output row (b, h, i) compared with the reference.
struct RowRef {
  std::int64_t b, h, i;
  bool operator<(const RowRef& o) const { return b != o.b ? b < o.b : h != o.h ? h < o.h : i < o.i; }
  bool operator==(const RowRef& o) const { return b == o.b && h == o.h && i == o.i; }
};

/// Every row when the reference is cheap (≤ full_cost multiply-adds), else a sample that
/// always holds the first and last rows, rows where the band is clipped at either end, and
/// random rows of the first and last batch and of every head (SPEC §7).
std::vector<RowRef> rows_to_check(const Problem& p, std::uint64_t seed, double full_cost = 4e8);

/// Expected number of −inf slots in S: slots whose key is outside the sequence.
std::uint64_t expected_out_of_range_slots(const Problem& p);

struct OpCheck {
  std::string family;
  Origin origin = Origin::compiled;
  double get_kernel_ms = 0;
  double rel_error = 0;        ///< ‖out − ref‖ / ‖ref‖ over the checked rows
  double tolerance = 0;        ///< 1e-5 float32, 1e-2 float16/bfloat16
  std::uint64_t rows_checked = 0;
  std::uint64_t structure_mismatches = 0;  ///< −inf (S) / exact-zero (P) slots that differ
  std::uint64_t nan_count = 0;             ///< NaN anywhere in the output (poison survived)
  std::uint64_t inf_count = 0;             ///< ±inf anywhere in the output
  std::uint64_t inf_expected = 0;          ///< out-of-range slots for S, 0 otherwise
  double median_us = 0;                    ///< CUDA-event median after warm-up
  std::string note;                        ///< what the reference took as input, when it matters
  bool passed = false;
};

struct CheckOptions {
  std::uint64_t seed = 0;  ///< 0 = fresh random seed
  int warmup = 2;
  int timing_runs = 10;
  Options kernel_options;
};

/// Runs band_qk → band_softmax → band_pv on one problem (inputs of a later kernel are the
/// outputs of the earlier one) and checks the families listed in `ops`; then, when `ops`
/// names band_tpv, band_softmax_backward or attention_backward, the backward on the
/// forward's P with a fresh random dO (check_backward.hpp). Needs a GPU.
std::vector<OpCheck> check_problem(const Problem& p, const std::vector<std::string>& ops,
                                   const CheckOptions& options, std::uint64_t* seed_used = nullptr);

}  // namespace bandjit
