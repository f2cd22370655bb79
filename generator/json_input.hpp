// JSON that comes from outside the process (problems, family parameters, shape files, bundle
// indexes, cache-entry manifests), parsed with limits.
#pragma once

#include <stdexcept>
#include <string_view>

#include <nlohmann/json.hpp>

#include "bandjit/errors.hpp"

namespace bandjit {

/// Deepest nesting accepted: objects and arrays inside one another. Deeper documents are
/// refused while parsing, because copying, printing or comparing a JSON value recurses once
/// a level, and a document nested hundreds of thousands deep would overflow the stack.
inline constexpr int kMaxJsonDepth = 64;

/// Why a document was refused: "not valid JSON: …" (syntax, a number out of range such as
/// 1e400), nesting deeper than kMaxJsonDepth, or a key repeated within one object (RFC 8259
/// allows it, nlohmann keeps the last one silently; bandjit refuses it). The text gives the
/// byte position where the parser has one.
struct JsonRefused : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Parses `text` under those limits; throws JsonRefused.
nlohmann::json parse_json_limited(std::string_view text);

/// parse_json_limited for input a user wrote: throws Error(invalid_problem) "<what>: <why>",
/// with `evidence` attached (and the repeated key as "field").
nlohmann::json parse_input_json(std::string_view text, std::string_view what, Error::Evidence evidence = {});

}  // namespace bandjit
