#include "check/set_checks.hpp"

#include <utility>

#include <fmt/format.h>

#include "bandjit/errors.hpp"
#include "check/check_layer_norm.hpp"
#include "check/check_softmax.hpp"

namespace bandjit {
namespace {

// One line per parameter set; each set's check lives in its own file.
const std::vector<std::pair<std::string, SetCheck>>& set_checks() {
  static const std::vector<std::pair<std::string, SetCheck>> checks = {
      {"scale_mask_softmax", &check_scale_mask_softmax_set},
      {"softmax", &check_softmax_set},
      {"layer_norm", &check_layer_norm},
  };
  return checks;
}

}  // namespace

SetCheck find_set_check(const std::string& set) {
  for (const auto& [name, fn] : set_checks())
    if (name == set) return fn;
  throw Error(ErrorKind::usage, fmt::format("check has no reference for the \"{}\" families", set));
}

std::vector<OpCheck> check_entry(const ShapeEntry& entry, const CheckOptions& options, std::uint64_t* seed_used) {
  if (entry.parameter_set == "band") return check_problem(entry.problem, entry.ops, options, seed_used);
  return find_set_check(entry.parameter_set)(entry.ops, nlohmann::json::parse(entry.parameters), options, seed_used);
}

}  // namespace bandjit
