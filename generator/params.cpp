#include "generator/params.hpp"

#include <cmath>
#include <cstdint>

#include <fmt/format.h>

#include "bandjit/errors.hpp"

namespace bandjit {
namespace {

using nlohmann::json;

std::string allowed_text(const ParamSpec& s) {
  switch (s.type) {
    case ParamSpec::Type::integer: return fmt::format("an integer in {} … {}", std::int64_t(s.min), std::int64_t(s.max));
    case ParamSpec::Type::number: return fmt::format("a number in {} … {}", s.min, s.max);
    case ParamSpec::Type::boolean: return "true or false";
    case ParamSpec::Type::choice: {
      std::string text;
      for (const auto& c : s.choices) text += fmt::format("{}\"{}\"", text.empty() ? "" : ", ", c);
      return text;
    }
  }
  return "";
}

json checked_value(const ParamSpec& s, const json& v, const std::string& family, const std::string& where) {
  const auto bad = [&] { bad_params(family, where, s.name, v.dump(), allowed_text(s)); };
  switch (s.type) {
    case ParamSpec::Type::integer: {
      if (!v.is_number_integer()) bad();
      if (v.is_number_unsigned() && v.get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX)) bad();
      const auto x = v.get<std::int64_t>();
      if (x < std::int64_t(s.min) || x > std::int64_t(s.max)) bad();
      return x;
    }
    case ParamSpec::Type::number: {
      if (!v.is_number()) bad();
      const double x = v.get<double>();
      if (!std::isfinite(x) || x < s.min || x > s.max) bad();
      return x == 0 ? 0.0 : x;  // one spelling per value: -0.0 and 0 give the key of 0.0
    }
    case ParamSpec::Type::boolean:
      if (!v.is_boolean()) bad();
      return v;
    case ParamSpec::Type::choice:
      if (!v.is_string()) bad();
      for (const auto& c : s.choices)
        if (v.get<std::string>() == c) return v;
      bad();
  }
  return v;
}

}  // namespace

void bad_params(const std::string& family, const std::string& where, const std::string& field,
                const std::string& value, const std::string& allowed) {
  throw Error(ErrorKind::invalid_problem,
              fmt::format("{}{}: {} = {} is not valid; allowed: {}", where.empty() ? "" : where + ": ", family, field,
                          value, allowed),
              {{"family", family}, {"field", field}, {"value", value}, {"allowed", allowed}});
}

json canonical_params(const std::vector<ParamSpec>& specs, const json& doc, const std::string& family,
                      const std::string& where) {
  if (!doc.is_object()) bad_params(family, where, "parameters", doc.dump(), "a JSON object");
  std::string names;
  for (const auto& s : specs) names += (names.empty() ? "" : ", ") + s.name;
  for (const auto& [key, value] : doc.items()) {
    bool known = false;
    for (const auto& s : specs) known |= s.name == key;
    if (!known) bad_params(family, where, key, value.dump(), fmt::format("a parameter of {} ({})", family, names));
  }
  json out = json::object();
  for (const auto& s : specs) {
    auto it = doc.find(s.name);
    if (it == doc.end()) {
      if (s.default_value.is_null()) bad_params(family, where, s.name, "(missing)", "required: " + allowed_text(s));
      out[s.name] = checked_value(s, s.default_value, family, where);
    } else {
      out[s.name] = checked_value(s, *it, family, where);
    }
  }
  return out;
}

ParameterInfo describe(const ParamSpec& s) {
  static const char* const types[] = {"integer", "number", "boolean", "string"};
  return {s.name, types[static_cast<int>(s.type)], allowed_text(s),
          s.default_value.is_null() ? "" : s.default_value.dump(), s.doc};
}

ParamSpec dtype_param(const std::string& doc) {
  return {"dtype", ParamSpec::Type::choice, 0, 0, {"float32", "float16", "bfloat16"}, json(), doc};
}

DType dtype_of(const json& canonical) {
  const auto name = canonical.at("dtype").get<std::string>();
  return name == "float16" ? DType::float16 : name == "bfloat16" ? DType::bfloat16 : DType::float32;
}

std::string params_slug(const json& canonical) {
  static const std::pair<const char*, const char*> short_names[] = {
      {"float32", "f32"}, {"float16", "f16"}, {"bfloat16", "bf16"}};
  std::string slug;
  for (const auto& [key, value] : canonical.items()) {
    std::string part;
    if (value.is_boolean()) {
      if (!value.get<bool>()) continue;
      part = key;
    } else if (value.is_string()) {
      part = value.get<std::string>();
      if (part == "none") continue;
      for (const auto& [lng, shrt] : short_names)
        if (part == lng) part = shrt;
      if (key != "dtype") part = key + "-" + part;
    } else if (value.is_number_integer()) {
      part = fmt::format("{}{}", key, value.get<std::int64_t>());
    } else {
      part = fmt::format("{}{:g}", key, value.get<double>());
    }
    slug += (slug.empty() ? "" : "_") + part;
  }
  for (char& c : slug)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-')) c = 'p';
  return slug;
}

}  // namespace bandjit
