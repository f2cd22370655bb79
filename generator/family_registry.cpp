#include "generator/family_registry.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "bandjit/errors.hpp"
#include "generator/problem_json.hpp"

namespace bandjit {
namespace {

const char* const kBandReference = "reference/band_reference.cpp (float64, SPEC §3)";

std::vector<Family> make_families() {
  std::vector<Family> families = {
      {"band_qk", kBandSet, "S[i,j] = scale * sum_k Q[i,k] K[i+D(j-wl),k]; -inf off the sequence (SPEC 3.1)",
       kBandReference, {"q", "k", "s"}, &generate_band_qk},
      {"band_softmax", kBandSet, "P[i,:] = softmax(scale*S[i,:] + M[i,:]); masked rows give zeros (SPEC 3.2)",
       kBandReference, {"s", "p", "[mask: key_mask]"}, &generate_band_softmax},
      {"band_pv", kBandSet, "O[i,k] = sum_j P[i,j] V[i+D(j-wl),k] over valid slots (SPEC 3.3)", kBandReference,
       {"p", "v", "o"}, &generate_band_pv},
      {"band_tpv", kBandSet, "Z[i,k] = sum_j X[s,C-1-j] Y[s,k], s = i+D(j-wr), over valid s (SPEC 3.4)",
       kBandReference, {"x", "y", "z"}, &generate_band_tpv},
      {"band_softmax_backward", kBandSet,
       "dS = scale * P (dP - rowsum(dP P)) on allowed slots, 0 elsewhere (SPEC 3.4)", kBandReference,
       {"p", "dp", "ds", "[mask: key_mask]"}, &generate_band_softmax_backward},
      {"sliding_window_attention", kBandSet,
       "O = band_pv(band_softmax(scale Q K^T + M), V) fused, S and P never stored; LSE[b,h,i] = "
       "ln sum_j exp(scale S + M), float32 [B, H, N] (SPEC 3.5)",
       kBandReference, {"q", "k", "v", "o", "lse", "[mask: key_mask]"}, &generate_sliding_window_attention},
  };
  for (const auto& f : row_families()) families.push_back(f);
  return families;
}

std::vector<ParameterInfo> band_parameters() {
  return {
      {"batch", "integer", fmt::format("1 … {}", Limits::max_batch), "", "B, sequences per call"},
      {"heads", "integer", fmt::format("1 … {}", Limits::max_heads), "", "H"},
      {"seq_len", "integer", fmt::format("1 … {}", Limits::max_seq_len), "", "N, tokens per sequence"},
      {"head_dim", "integer",
       fmt::format("{} … {}, a multiple of {}", Limits::min_head_dim, Limits::max_head_dim, Limits::head_dim_multiple),
       "", "Dh, features per head"},
      {"window_left", "integer", "0 … N-1", "", "w_l, keys to the left"},
      {"window_right", "integer", "0 … N-1", "", "w_r, keys to the right (0 = causal)"},
      {"dilation", "integer or list", "1 … N, one or one per head", "1", "D, stride between attended keys"},
      {"dtype", "string", "\"float32\", \"float16\", \"bfloat16\"", "", "element type; accumulation in float32"},
      {"layout", "string", "\"bnhd\", \"bhnd\"", "\"bnhd\"", "order of Q/K/V/O and of the band tensors"},
      {"scale", "number", "finite", "1.0",
       "band_qk multiplies S by it; band_softmax uses softmax(scale S + M); sliding_window_attention's logits are "
       "scale Q K^T + M (pass 1/sqrt(head_dim) for the usual scaling: one default for every family, so a fused "
       "forward and attention_backward built from one problem agree)"},
      {"key_mask", "string", "\"none\", \"bool\", \"additive\"", "\"none\"",
       "key-padding mask [B, N] of band_softmax, band_softmax_backward and sliding_window_attention"},
      {"runtime_batch", "boolean", "true or false", "false", "leave batch out of the kernel (one kernel, any batch)"},
  };
}

bool is_backward(const std::string& name) {
  const std::string suffix = "_backward";
  return name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

const std::vector<Family>& all_families() {
  static const std::vector<Family> families = make_families();
  return families;
}

nlohmann::json Family::canonical(const nlohmann::json& params_in, const std::string& where) const {
  // A shape-file entry's "parameter_set" may come along; it must name this family's set.
  nlohmann::json params = params_in;
  if (params.is_object() && params.contains("parameter_set")) {
    if (params["parameter_set"] != parameter_set)
      throw Error(ErrorKind::invalid_problem,
                  fmt::format("{}{} takes the \"{}\" parameters, not parameter_set = {}", where.empty() ? "" : where + ": ",
                              name, parameter_set, params["parameter_set"].dump()),
                  {{"field", "parameter_set"}, {"value", params["parameter_set"].dump()}, {"allowed", parameter_set}});
    params.erase("parameter_set");
  }
  if (is_band()) {
    // "ops" belongs to shape-file entries (which remove it), not to a problem.
    if (params.is_object() && params.contains("ops"))
      throw Error(ErrorKind::invalid_problem,
                  fmt::format("{}{}: ops is a shape-file field, not a parameter", where.empty() ? "" : where + ": ", name),
                  {{"field", "ops"}});
    return problem_to_json(problem_from_json(params, where));
  }
  nlohmann::json c = canonical_params(param_specs(), params, name, where);
  if (check_params) check_params(c, where);
  return c;
}

Source Family::generate(const Problem& problem, const Tuning& tuning) const {
  if (!is_band())
    throw Error(ErrorKind::usage, fmt::format("{} does not take a band Problem; pass its parameters as JSON "
                                              "(`bandjit families` lists them)",
                                              name));
  return band_generator(problem, tuning);
}

Source Family::generate(const nlohmann::json& params, const Tuning& tuning) const {
  if (is_band()) return band_generator(problem_from_json(canonical(params), ""), tuning);
  return params_generator(canonical(params), tuning);
}

std::string Family::slug(const nlohmann::json& canonical) const {
  if (is_band()) return bandjit::slug(problem_from_json(canonical, ""));
  return params_slug(canonical);
}

FamilyInfo Family::info() const {
  FamilyInfo info{name, parameter_set, summary, reference, {}, arguments};
  if (is_band()) {
    info.parameters = band_parameters();
  } else {
    for (const auto& spec : param_specs()) info.parameters.push_back(describe(spec));
  }
  return info;
}

nlohmann::json families_json() {
  nlohmann::json doc = nlohmann::json::array();
  for (const auto& f : family_infos()) {
    nlohmann::json params = nlohmann::json::array();
    for (const auto& p : f.parameters)
      params.push_back({{"name", p.name}, {"type", p.type}, {"allowed", p.allowed},
                        {"default", p.default_value.empty() ? nlohmann::json() : nlohmann::json::parse(p.default_value)},
                        {"doc", p.doc}});
    doc.push_back({{"name", f.name}, {"parameter_set", f.parameter_set}, {"summary", f.summary},
                   {"reference", f.reference}, {"arguments", f.arguments}, {"parameters", params}});
  }
  return doc;
}

std::vector<FamilyInfo> family_infos() {
  std::vector<FamilyInfo> infos;
  for (const auto& f : all_families()) infos.push_back(f.info());
  return infos;
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

std::vector<std::string> families_of_set(const std::string& set) {
  std::vector<std::string> names;
  for (const auto& f : all_families())
    if (f.parameter_set == set) names.push_back(f.name);
  return names;
}

std::vector<std::string> default_family_names() { return {"band_qk", "band_softmax", "band_pv"}; }

std::vector<std::string> default_ops(const std::string& set) {
  return set == kBandSet ? default_family_names() : families_of_set(set);
}

namespace {
std::vector<std::string> backward_names() { return {"band_tpv", "band_softmax_backward", kAttentionBackward}; }

std::vector<std::string> shorthand(const std::string& name, const std::string& set) {
  if (set == kBandSet) {
    if (name == "forward") return default_family_names();
    if (name == "backward") return backward_names();
    auto names = default_family_names();
    for (auto& n : backward_names()) names.push_back(n);
    return names;
  }
  std::vector<std::string> names;
  for (const auto& f : families_of_set(set))
    if (name == "training" || (name == "backward") == is_backward(f)) names.push_back(f);
  return names;
}
}  // namespace

std::vector<std::string> expand_ops(const std::string& name, const std::string& set, const std::string& where) {
  if (name == "forward" || name == "backward" || name == "training") {
    auto names = shorthand(name, set);
    if (names.empty())
      throw Error(ErrorKind::invalid_problem,
                  fmt::format("{}\"{}\" names no family of the \"{}\" parameters ({})", where.empty() ? "" : where + ": ",
                              name, set, fmt::join(families_of_set(set), ", ")),
                  {{"field", "ops"}, {"value", name}});
    return names;
  }
  if (name == kAttentionBackward && set == kBandSet) return {name};
  const auto in_set = families_of_set(set);
  if (std::find(in_set.begin(), in_set.end(), name) != in_set.end()) return {name};
  std::string known = fmt::format("{}", fmt::join(in_set, ", "));
  if (set == kBandSet) known += fmt::format(", the composed \"{}\"", kAttentionBackward);
  known += ", or a shorthand: \"forward\", \"backward\", \"training\"";
  std::string why = fmt::format("unknown kernel family \"{}\"", name);
  for (const auto& f : all_families())
    if (f.name == name) why = fmt::format("{} takes the \"{}\" parameters, not \"{}\"", name, f.parameter_set, set);
  throw Error(ErrorKind::invalid_problem,
              fmt::format("{}{}; the \"{}\" parameters go with: {}", where.empty() ? "" : where + ": ", why, set, known),
              {{"field", "ops"}, {"value", name}, {"allowed", known}});
}

std::vector<std::string> expand_family_names(const std::string& name, const std::string& where) {
  return expand_ops(name, kBandSet, where);
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
