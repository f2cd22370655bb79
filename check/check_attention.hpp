// The sliding_window_attention part of `bandjit check` (check_problem runs it on the
// forward's inputs): O and LSE against the float64 composition of SPEC §3.1–3.3, with
// NaN-poisoned outputs. Internal to check/.
#pragma once

#include <cstdint>
#include <vector>

#include "check/check_backward.hpp"

namespace bandjit {

/// Rows (b, h, i) with no allowed key: every slot's key is outside the sequence or removed by
/// the key-padding mask (`mask` as the reference reads it; null when p.key_mask is none).
/// Their O is zero and their LSE −inf.
std::uint64_t rows_without_keys(const Problem& p, const double* mask);

/// Checks sliding_window_attention: one row for O (relative error; structure mismatches =
/// non-finite O at checked rows) and one for LSE (relative error of the finite values;
/// structure mismatches = rows where exactly one of kernel and reference is −inf).
std::vector<OpCheck> check_attention(const ForwardState& forward, const CheckOptions& options);

}  // namespace bandjit
