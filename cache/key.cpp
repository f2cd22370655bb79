#include "cache/key.hpp"

#include <map>
#include <mutex>

#include "cache/sha256.hpp"

namespace bandjit {
namespace {

// Template hashes: computed once per header set (they are constant for a build).
const nlohmann::json& header_hashes(const std::vector<TemplateFile>* headers) {
  static std::mutex mutex;
  static std::map<const std::vector<TemplateFile>*, nlohmann::json> memo;
  std::lock_guard<std::mutex> lock(mutex);
  auto& doc = memo[headers];
  if (doc.is_null()) {
    doc = nlohmann::json::object();
    for (const auto& h : *headers) doc[h.name] = sha256_hex(h.text);
  }
  return doc;
}

}  // namespace

CacheKey make_cache_key(const Source& source, const std::string& arch, const std::vector<std::string>& options,
                        const std::string& nvrtc_version) {
  CacheKey key;
  key.document = {
      {"format", 1},
      {"generator", kGeneratorVersion},
      {"family", source.family},
      {"kernel_name", source.kernel_name},
      {"problem", source.key_fields},
      {"source", source.text},
      {"templates", header_hashes(source.headers)},
      {"options", options},
      {"arch", arch},
      {"nvrtc", nvrtc_version},
  };
  key.hash = sha256_hex(key.document.dump());
  return key;
}

}  // namespace bandjit
