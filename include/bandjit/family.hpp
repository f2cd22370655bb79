// bandjit/family.hpp — what a kernel family declares: its parameters, launch arguments and
// reference (what `bandjit families` prints). Families are reached by name through
// get_kernel(name, problem) for the band families and get_kernel(name, parameters_json)
// for every family (bandjit.hpp).
#pragma once

#include <string>
#include <vector>

namespace bandjit {

/// One parameter of a family.
struct ParameterInfo {
  std::string name;
  std::string type;           ///< "integer", "number", "boolean", "string", "integer or list"
  std::string allowed;        ///< the allowed range or values, as errors state it
  std::string default_value;  ///< JSON text; empty = required
  std::string doc;            ///< meaning, unit, layout
};

struct FamilyInfo {
  std::string name;
  /// Families that share one parameter set: "band" (bandjit::Problem, SPEC §2),
  /// "scale_mask_softmax", "softmax", "layer_norm". One shape-file entry lists families of one set.
  std::string parameter_set;
  std::string summary;    ///< the formula and its source (SPEC section or paper)
  std::string reference;  ///< the float64 reference `check` compares with
  std::vector<ParameterInfo> parameters;
  /// Launch arguments (device pointers) in order; "[x]" = only when parameter x asks for it.
  std::vector<std::string> arguments;
};

/// Every family, in registry order.
std::vector<FamilyInfo> family_infos();

}  // namespace bandjit
