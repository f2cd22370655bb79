// JSON written by users (problems, family parameters, shape files), parsed with limits.
#pragma once

#include <string_view>

#include <nlohmann/json.hpp>

#include "bandjit/errors.hpp"

namespace bandjit {

/// Deepest nesting accepted: objects and arrays inside one another. Deeper documents are
/// refused while parsing, because copying, printing or comparing a JSON value recurses once
/// a level, and a document nested hundreds of thousands deep would overflow the stack.
inline constexpr int kMaxJsonDepth = 64;

/// Parses `text`. Throws Error(invalid_problem) "<what> is not valid JSON: …" on a syntax
/// error or a number out of range (1e400), on nesting deeper than kMaxJsonDepth, and on a key
/// repeated within one object (naming it: nlohmann would keep the last one silently).
/// `evidence` is attached to the error.
nlohmann::json parse_input_json(std::string_view text, std::string_view what, Error::Evidence evidence = {});

}  // namespace bandjit
