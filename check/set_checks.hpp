// `bandjit check` for the families of parameter sets other than the band: each set
// registers one function that runs the entry's ops on fresh random inputs with NaN-poisoned
// outputs and compares them with the set's float64 reference.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "check/check_problem.hpp"

namespace bandjit {

using SetCheck = std::vector<OpCheck> (*)(const std::vector<std::string>& ops, const nlohmann::json& params,
                                          const CheckOptions& options, std::uint64_t* seed_used);

/// The check of parameter set `set`; Error(usage) naming the set when it has none.
SetCheck find_set_check(const std::string& set);

/// Runs one shape-file entry's ops: check_problem for the band, else the set's check.
std::vector<OpCheck> check_entry(const ShapeEntry& entry, const CheckOptions& options, std::uint64_t* seed_used);

}  // namespace bandjit
