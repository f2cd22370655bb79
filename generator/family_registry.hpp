// The kernel families get_kernel knows, by name: each declares its launch arguments and
// generates its source. Shorthands expand to several families.
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

/// A family name, or a shorthand ("forward") expanded to its families.
std::vector<std::string> expand_family_names(const std::string& name, const std::string& where);

Source generate_band_qk(const Problem& problem, const Tuning& tuning = {});
Source generate_band_softmax(const Problem& problem, const Tuning& tuning = {});
Source generate_band_pv(const Problem& problem, const Tuning& tuning = {});

}  // namespace bandjit
