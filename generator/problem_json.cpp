#include "generator/problem_json.hpp"

#include <cstdint>
#include <set>

#include <fmt/format.h>

#include "bandjit/errors.hpp"
#include "generator/json_input.hpp"

namespace bandjit {
namespace {

using nlohmann::json;

[[noreturn]] void bad_field(const std::string& where, const std::string& field, const std::string& value,
                            const std::string& allowed) {
  throw Error(ErrorKind::invalid_problem,
              fmt::format("{}{} = {} is not valid; allowed: {}", where.empty() ? "" : where + ": ", field, value, allowed),
              {{"field", field}, {"value", value}, {"allowed", allowed}});
}

std::int64_t get_int(const json& doc, const std::string& where, const char* field, bool required,
                     std::int64_t fallback) {
  auto it = doc.find(field);
  if (it == doc.end()) {
    if (required) bad_field(where, field, "(missing)", "a required integer");
    return fallback;
  }
  if (!it->is_number_integer()) bad_field(where, field, it->dump(), "an integer");
  if (it->is_number_unsigned() && it->get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX))
    bad_field(where, field, it->dump(), "an integer below 2^63");
  return it->get<std::int64_t>();
}

template <class Enum>
Enum get_enum(const json& doc, const std::string& where, const char* field, Enum fallback,
              std::initializer_list<Enum> values) {
  auto it = doc.find(field);
  if (it == doc.end()) return fallback;
  std::string allowed;
  for (Enum v : values) {
    if (it->is_string() && it->get<std::string>() == to_string(v)) return v;
    allowed += fmt::format("{}\"{}\"", allowed.empty() ? "" : ", ", to_string(v));
  }
  bad_field(where, field, it->dump(), allowed);
}

}  // namespace

json problem_to_json(const Problem& p) {
  json doc = {
      {"batch", p.batch},
      {"heads", p.heads},
      {"seq_len", p.seq_len},
      {"head_dim", p.head_dim},
      {"window_left", p.window_left},
      {"window_right", p.window_right},
      {"dtype", std::string(to_string(p.dtype))},
      {"layout", std::string(to_string(p.layout))},
      {"scale", p.scale},
      {"key_mask", std::string(to_string(p.key_mask))},
  };
  if (p.runtime_batch) doc["runtime_batch"] = true;
  if (p.uniform_dilation())
    doc["dilation"] = p.dilation.front();
  else
    doc["dilation"] = p.dilation;
  return doc;
}

Problem problem_from_json(const json& doc, const std::string& where) {
  if (!doc.is_object()) bad_field(where, "problem", doc.dump(), "a JSON object");
  static const std::set<std::string> known = {"batch",       "heads",        "seq_len",  "head_dim",
                                              "window_left", "window_right", "dilation", "dtype",
                                              "layout",      "scale",        "key_mask", "ops",
                                              "runtime_batch"};
  for (const auto& [key, value] : doc.items())
    if (!known.count(key))
      bad_field(where, key, value.dump(),
                "a known field (batch, heads, seq_len, head_dim, window_left, window_right, dilation, "
                "dtype, layout, scale, key_mask, runtime_batch, ops)");
  Problem p;
  p.batch = get_int(doc, where, "batch", true, 0);
  p.heads = get_int(doc, where, "heads", true, 0);
  p.seq_len = get_int(doc, where, "seq_len", true, 0);
  p.head_dim = get_int(doc, where, "head_dim", true, 0);
  p.window_left = get_int(doc, where, "window_left", true, 0);
  p.window_right = get_int(doc, where, "window_right", true, 0);
  if (auto it = doc.find("dilation"); it != doc.end()) {
    if (it->is_number_integer() && !(it->is_number_unsigned() && it->get<std::uint64_t>() > INT64_MAX)) {
      p.dilation = {it->get<std::int64_t>()};
    } else if (it->is_array() && !it->empty()) {
      p.dilation.clear();
      for (const auto& d : *it) {
        if (!d.is_number_integer() || (d.is_number_unsigned() && d.get<std::uint64_t>() > INT64_MAX))
          bad_field(where, "dilation", it->dump(), "an int or a list of ints");
        p.dilation.push_back(d.get<std::int64_t>());
      }
    } else {
      bad_field(where, "dilation", it->dump(), "an int or a non-empty list of ints (one per head)");
    }
  }
  if (doc.find("dtype") == doc.end()) bad_field(where, "dtype", "(missing)", "\"float32\", \"float16\", \"bfloat16\"");
  p.dtype = get_enum(doc, where, "dtype", DType::float32, {DType::float32, DType::float16, DType::bfloat16});
  p.layout = get_enum(doc, where, "layout", Layout::bnhd, {Layout::bnhd, Layout::bhnd});
  p.key_mask = get_enum(doc, where, "key_mask", KeyMask::none, {KeyMask::none, KeyMask::boolean, KeyMask::additive});
  if (auto it = doc.find("runtime_batch"); it != doc.end()) {
    if (!it->is_boolean()) bad_field(where, "runtime_batch", it->dump(), "true or false");
    p.runtime_batch = it->get<bool>();
  }
  if (auto it = doc.find("scale"); it != doc.end()) {
    if (!it->is_number()) bad_field(where, "scale", it->dump(), "a finite number");
    p.scale = it->get<double>();
  }
  try {
    validate(p);
  } catch (const Error& e) {
    throw Error(e.kind(), where.empty() ? e.message() : fmt::format("{}: {}", where, e.message()), e.evidence());
  }
  return p;
}

std::string to_json(const Problem& problem) { return problem_to_json(problem).dump(); }

Problem problem_from_json(std::string_view json_text) {
  return problem_from_json(parse_input_json(json_text, "problem"), "");
}

}  // namespace bandjit
