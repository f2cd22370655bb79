#include "generator/json_input.hpp"

#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

namespace bandjit {
namespace {

// The repeated key, carried from the parser callback to parse_input_json's "field".
struct RepeatedKey : JsonRefused {
  std::string key;
  RepeatedKey(const std::string& why, std::string k) : JsonRefused(why), key(std::move(k)) {}
};

}  // namespace

nlohmann::json parse_json_limited(std::string_view text) {
  using json = nlohmann::json;
  std::vector<std::set<std::string>> keys;  // of each object being parsed, innermost last
  const json::parser_callback_t check = [&](int depth, json::parse_event_t event, json& parsed) {
    switch (event) {
      case json::parse_event_t::object_start:
      case json::parse_event_t::array_start:
        // depth counts the containers this one is inside of: 0 for the document itself.
        if (depth >= kMaxJsonDepth)
          throw JsonRefused(fmt::format("nested more than {} levels deep", kMaxJsonDepth));
        if (event == json::parse_event_t::object_start) keys.emplace_back();
        break;
      case json::parse_event_t::key: {
        const auto& name = parsed.get_ref<const std::string&>();
        if (!keys.empty() && !keys.back().insert(name).second)
          throw RepeatedKey(fmt::format("the key \"{}\" appears twice in one object", name), name);
        break;
      }
      case json::parse_event_t::object_end:
        if (!keys.empty()) keys.pop_back();
        break;
      default:
        break;
    }
    return true;
  };
  try {
    return json::parse(text, check);
  } catch (const json::exception& e) {  // syntax (with its byte position), numbers out of range
    throw JsonRefused(fmt::format("not valid JSON: {}", e.what()));
  }
}

nlohmann::json parse_input_json(std::string_view text, std::string_view what, Error::Evidence evidence) {
  try {
    return parse_json_limited(text);
  } catch (const JsonRefused& e) {
    if (const auto* repeated = dynamic_cast<const RepeatedKey*>(&e)) evidence.insert(evidence.begin(), {"field", repeated->key});
    throw Error(ErrorKind::invalid_problem, fmt::format("{}: {}", what, e.what()), std::move(evidence));
  }
}

}  // namespace bandjit
