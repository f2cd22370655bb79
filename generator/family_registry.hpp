// The kernel families get_kernel knows, by name: each declares its launch arguments and
// generates its source. Operations a shape file may list ("ops") are the families, the
// composed attention_backward (several families in a row) and shorthands for groups of them.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "generator/source.hpp"

namespace bandjit {

struct Family {
  std::string name;
  std::string summary;  ///< one line: formula and SPEC section
  Source (*generator)(const Problem& problem, const Tuning& tuning);

  /// Validates the problem for this family and generates its source (throws invalid_problem).
  Source generate(const Problem& problem, const Tuning& tuning = {}) const { return generator(problem, tuning); }
};

const std::vector<Family>& all_families();

/// Throws Error(invalid_problem) naming the unknown family and listing the known ones.
const Family& find_family(std::string_view name);

/// band_qk, band_softmax, band_pv: the default `ops` of a shape-file problem (SPEC §6).
std::vector<std::string> default_family_names();

/// The composed backward of the unfused attention (include/bandjit/backward.hpp): an
/// operation, not a family; it launches the kernels attention_backward_kernels lists.
constexpr const char* kAttentionBackward = "attention_backward";

/// An operation name — a family or attention_backward — or a shorthand expanded to its
/// operations: "forward" (band_qk, band_softmax, band_pv), "backward" (band_tpv,
/// band_softmax_backward, attention_backward), "training" (both). Throws
/// Error(invalid_problem) naming `where`, the name and the known ones.
std::vector<std::string> expand_family_names(const std::string& name, const std::string& where);

/// One kernel to build: its family and the problem it is generated for.
struct KernelRequest {
  std::string family;
  Problem problem;
};

/// The kernels of attention_backward for `problem`, in launch order:
/// band_qk at scale 1 (dP = dO·Vᵀ), band_softmax_backward (dS), band_pv (dQ), band_tpv (dK, dV).
std::vector<KernelRequest> attention_backward_kernels(const Problem& problem);

/// The kernels one operation needs: a family, itself; attention_backward, its kernels.
std::vector<KernelRequest> kernels_of_op(const std::string& op, const Problem& problem);

Source generate_band_qk(const Problem& problem, const Tuning& tuning = {});
Source generate_band_softmax(const Problem& problem, const Tuning& tuning = {});
Source generate_band_pv(const Problem& problem, const Tuning& tuning = {});
Source generate_band_tpv(const Problem& problem, const Tuning& tuning = {});
Source generate_band_softmax_backward(const Problem& problem, const Tuning& tuning = {});

}  // namespace bandjit
