#include "generator/family_registry.hpp"

#include <fmt/format.h>

#include "bandjit/errors.hpp"

namespace bandjit {

const std::vector<Family>& all_families() {
  static const std::vector<Family> families = {
      {"band_qk", "S[i,j] = scale * sum_k Q[i,k] K[i+D(j-wl),k]; -inf off the sequence (SPEC 3.1)",
       &generate_band_qk},
      {"band_softmax", "P[i,:] = softmax(scale*S[i,:] + M[i,:]); masked rows give zeros (SPEC 3.2)",
       &generate_band_softmax},
      {"band_pv", "O[i,k] = sum_j P[i,j] V[i+D(j-wl),k] over valid slots (SPEC 3.3)", &generate_band_pv},
  };
  return families;
}

const Family& find_family(std::string_view name) {
  std::string known;
  for (const auto& f : all_families()) {
    if (f.name == name) return f;
    known += (known.empty() ? "" : ", ") + f.name;
  }
  throw Error(ErrorKind::invalid_problem, fmt::format("unknown kernel family \"{}\"; known: {}", name, known),
              {{"field", "family"}, {"value", std::string(name)}, {"allowed", known}});
}

std::vector<std::string> default_family_names() { return {"band_qk", "band_softmax", "band_pv"}; }

std::vector<std::string> expand_family_names(const std::string& name, const std::string& where) {
  if (name == "forward") return default_family_names();
  try {
    return {find_family(name).name};
  } catch (const Error& e) {
    throw Error(e.kind(), fmt::format("{}: {} (or the shorthand \"forward\")", where, e.message()), e.evidence());
  }
}

}  // namespace bandjit
