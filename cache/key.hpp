// The cache key (SPEC §4): SHA-256 of a canonical document holding the family, the
// problem fields that change its code, the generator version, the final source, a hash of
// every template, every compile option, the target arch and the NVRTC version.
// No paths, times or pointers.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "generator/source.hpp"

namespace bandjit {

/// Bumped whenever the generator's output could change without the source text changing.
inline constexpr int kGeneratorVersion = 1;

struct CacheKey {
  nlohmann::json document;
  std::string hash;  ///< hex SHA-256 of document.dump()
};

CacheKey make_cache_key(const Source& source, const std::string& arch, const std::vector<std::string>& options,
                        const std::string& nvrtc_version);

}  // namespace bandjit
