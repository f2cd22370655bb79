#include "generator/json_input.hpp"

#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

namespace bandjit {

nlohmann::json parse_input_json(std::string_view text, std::string_view what, Error::Evidence evidence) {
  using json = nlohmann::json;
  std::vector<std::set<std::string>> keys;  // of each object being parsed, innermost last
  const auto refuse = [&](const std::string& why, Error::Evidence more) {
    more.insert(more.end(), evidence.begin(), evidence.end());
    throw Error(ErrorKind::invalid_problem, fmt::format("{} is not valid JSON: {}", what, why), std::move(more));
  };
  const json::parser_callback_t check = [&](int depth, json::parse_event_t event, json& parsed) {
    switch (event) {
      case json::parse_event_t::object_start:
      case json::parse_event_t::array_start:
        // depth counts the values this one is inside of: 0 for the document itself.
        if (depth >= kMaxJsonDepth)
          refuse(fmt::format("nested more than {} levels deep", kMaxJsonDepth), {{"limit", std::to_string(kMaxJsonDepth)}});
        if (event == json::parse_event_t::object_start) keys.emplace_back();
        break;
      case json::parse_event_t::key: {
        const auto& name = parsed.get_ref<const std::string&>();
        if (!keys.empty() && !keys.back().insert(name).second)
          refuse(fmt::format("the key \"{}\" appears twice in one object", name), {{"field", name}});
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
  } catch (const json::exception& e) {  // syntax, and numbers out of range (1e400)
    refuse(e.what(), {});
  }
  return {};  // not reached: refuse throws
}

}  // namespace bandjit
