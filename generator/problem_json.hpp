// JSON form of a Problem (internal): the canonical document used by the cache key.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "bandjit/problem.hpp"

namespace bandjit {

/// All fields, sorted keys; dilation as one int when uniform.
nlohmann::json problem_to_json(const Problem& problem);

/// Reads the fields of SPEC §2 (+ optional scale, key_mask); `where`, when not empty,
/// prefixes error messages ("shapes/x.json problems[3]"). Unknown fields are rejected. Validates.
Problem problem_from_json(const nlohmann::json& doc, const std::string& where = "");

}  // namespace bandjit
