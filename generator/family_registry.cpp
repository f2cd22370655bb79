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
      {"band_tpv", "Z[i,k] = sum_j X[s,C-1-j] Y[s,k], s = i+D(j-wr), over valid s (SPEC 3.4)", &generate_band_tpv},
      {"band_softmax_backward", "dS = scale * P (dP - rowsum(dP P)) on allowed slots, 0 elsewhere (SPEC 3.4)",
       &generate_band_softmax_backward},
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

namespace {
std::vector<std::string> backward_names() { return {"band_tpv", "band_softmax_backward", kAttentionBackward}; }
}  // namespace

std::vector<std::string> expand_family_names(const std::string& name, const std::string& where) {
  if (name == "forward") return default_family_names();
  if (name == "backward") return backward_names();
  if (name == "training") {
    auto names = default_family_names();
    for (auto& n : backward_names()) names.push_back(n);
    return names;
  }
  if (name == kAttentionBackward) return {name};
  try {
    return {find_family(name).name};
  } catch (const Error& e) {
    throw Error(e.kind(),
                fmt::format("{}: {} (or the composed \"{}\", or a shorthand: \"forward\", \"backward\", \"training\")",
                            where, e.message(), kAttentionBackward),
                e.evidence());
  }
}

std::vector<KernelRequest> attention_backward_kernels(const Problem& p) {
  // dP = dO·Vᵀ must be unscaled: the scale belongs to the softmax (logits scale·Q·Kᵀ + M),
  // whose backward applies it once. band_qk ignores key_mask, band_pv and band_tpv ignore
  // both, so only band_qk's problem differs from the caller's.
  Problem unscaled = p;
  unscaled.scale = 1.0;
  return {{"band_qk", unscaled}, {"band_softmax_backward", p}, {"band_pv", p}, {"band_tpv", p}};
}

std::vector<KernelRequest> kernels_of_op(const std::string& op, const Problem& problem) {
  if (op == kAttentionBackward) return attention_backward_kernels(problem);
  return {{find_family(op).name, problem}};
}

}  // namespace bandjit
