// Declared parameters of the families that do not take a band Problem (scale_mask_softmax,
// layer_norm, …): each family lists them once, and validation, defaults, the cache key's
// canonical document, `bandjit families` and the docs all read that list.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bandjit/family.hpp"
#include "bandjit/problem.hpp"

namespace bandjit {

struct ParamSpec {
  enum class Type { integer, number, boolean, choice };
  std::string name;
  Type type = Type::integer;
  double min = 0, max = 0;           ///< integer and number: inclusive range
  std::vector<std::string> choices;  ///< choice: the allowed strings
  nlohmann::json default_value;      ///< null: required
  std::string doc;                   ///< one line: meaning, unit, layout
};

/// The family's parameters of `doc` checked and completed: unknown names, wrong types and
/// out-of-range values throw Error(invalid_problem) naming `where`, the family, the field,
/// its value and the allowed range; missing optional ones get their default. The result has
/// every parameter (sorted keys), each spelt one way (numbers as doubles, -0.0 as 0.0): what
/// jobs, bundles and Python's kernel table are keyed by. Each generator puts the parameters
/// that change its code into Source::key_fields.
nlohmann::json canonical_params(const std::vector<ParamSpec>& specs, const nlohmann::json& doc,
                                const std::string& family, const std::string& where);

/// Throws Error(invalid_problem) for a constraint between parameters (e.g. rows × L).
[[noreturn]] void bad_params(const std::string& family, const std::string& where, const std::string& field,
                             const std::string& value, const std::string& allowed);

/// What `bandjit families` prints for one parameter.
ParameterInfo describe(const ParamSpec& spec);

/// The dtype parameter every family has (float32, float16, bfloat16).
ParamSpec dtype_param(const std::string& doc);
DType dtype_of(const nlohmann::json& canonical);

/// Short file- and symbol-safe name of canonical parameters: "rows4096_hidden1024_f16_w_b".
std::string params_slug(const nlohmann::json& canonical);

}  // namespace bandjit
