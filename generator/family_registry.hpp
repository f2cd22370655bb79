// The kernel families get_kernel knows, by name: each declares its parameters (the band
// Problem of SPEC §2, or a list of ParamSpec), their validation, its launch arguments and
// reference, and generates its source. Operations a shape file may list ("ops") are the
// families, the composed attention_backward (several band families in a row) and
// shorthands for groups of them.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "bandjit/family.hpp"
#include "generator/params.hpp"
#include "generator/source.hpp"

namespace bandjit {

/// The parameter set of the band families (bandjit::Problem).
constexpr const char* kBandSet = "band";

struct Family {
  std::string name;
  std::string parameter_set;  ///< kBandSet, or the set its ParamSpecs belong to
  std::string summary;        ///< one line: formula and source
  std::string reference;      ///< the float64 reference check compares with
  std::vector<std::string> arguments;  ///< as FamilyInfo::arguments (documentation)
  /// Band families: the generator of a Problem.
  Source (*band_generator)(const Problem& problem, const Tuning& tuning) = nullptr;
  /// Other families: their parameters, the checks between parameters after
  /// canonical_params (may be null; throw via bad_params), and the generator of canonical parameters.
  const std::vector<ParamSpec>& (*param_specs)() = nullptr;
  void (*check_params)(const nlohmann::json& canonical, const std::string& where) = nullptr;
  Source (*params_generator)(const nlohmann::json& canonical, const Tuning& tuning) = nullptr;

  bool is_band() const { return band_generator != nullptr; }
  /// Validated parameters with defaults filled (band: the Problem's canonical JSON). Throws
  /// Error(invalid_problem) naming `where`, the field and the allowed range.
  nlohmann::json canonical(const nlohmann::json& params, const std::string& where = "") const;
  /// Band families only (Error usage otherwise). Validates the problem.
  Source generate(const Problem& problem, const Tuning& tuning = {}) const;
  /// Any family: validates `params` and generates.
  Source generate(const nlohmann::json& params, const Tuning& tuning = {}) const;
  /// File-safe name of canonical parameters.
  std::string slug(const nlohmann::json& canonical) const;
  FamilyInfo info() const;
};

const std::vector<Family>& all_families();

/// Every family as `bandjit families --json` and bandjit_families_json give it: name,
/// parameter_set, summary, reference, arguments, parameters (default null when required).
nlohmann::json families_json();

/// Throws Error(invalid_problem) naming the unknown family and listing the known ones.
const Family& find_family(std::string_view name);

/// The families of one parameter set, in registry order.
std::vector<std::string> families_of_set(const std::string& set);

/// Default `ops` of a shape-file entry: band → band_qk, band_softmax, band_pv (SPEC §6);
/// any other set → all its families (forward and backward).
std::vector<std::string> default_ops(const std::string& set);
/// band_qk, band_softmax, band_pv.
std::vector<std::string> default_family_names();

/// The composed backward of the unfused attention (include/bandjit/backward.hpp): an
/// operation, not a family; it launches the kernels attention_backward_kernels lists.
constexpr const char* kAttentionBackward = "attention_backward";

/// An operation of parameter set `set` — a family of the set, attention_backward (band) —
/// or a shorthand expanded to the set's operations: "forward" (band: band_qk,
/// band_softmax, band_pv; others: the families not named *_backward), "backward" (band:
/// band_tpv, band_softmax_backward, attention_backward; others: the *_backward families),
/// "training" (both). Throws Error(invalid_problem) naming `where`, the name and the known ones.
std::vector<std::string> expand_ops(const std::string& name, const std::string& set, const std::string& where);
/// expand_ops for the band set.
std::vector<std::string> expand_family_names(const std::string& name, const std::string& where);

/// One kernel to build: its family and the problem it is generated for.
struct KernelRequest {
  std::string family;
  Problem problem;
};

/// The kernels of attention_backward for `problem`, in launch order:
/// band_qk at scale 1 (dP = dO·Vᵀ), band_softmax_backward (dS), band_pv (dQ), band_tpv (dK, dV).
std::vector<KernelRequest> attention_backward_kernels(const Problem& problem);

/// The kernels one band operation needs: a family, itself; attention_backward, its kernels.
std::vector<KernelRequest> kernels_of_op(const std::string& op, const Problem& problem);

Source generate_band_qk(const Problem& problem, const Tuning& tuning = {});
Source generate_band_softmax(const Problem& problem, const Tuning& tuning = {});
Source generate_band_pv(const Problem& problem, const Tuning& tuning = {});
Source generate_band_tpv(const Problem& problem, const Tuning& tuning = {});
Source generate_band_softmax_backward(const Problem& problem, const Tuning& tuning = {});
Source generate_sliding_window_attention(const Problem& problem, const Tuning& tuning = {});

/// The families of other parameter sets register here (generator/row_families.cpp).
const std::vector<Family>& row_families();

}  // namespace bandjit
