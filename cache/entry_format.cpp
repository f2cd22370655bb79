#include "cache/entry_format.hpp"

#include <cstring>

#include <fmt/format.h>

#include "cache/little_endian.hpp"
#include "cache/sha256.hpp"
#include "generator/json_input.hpp"

namespace bandjit {
namespace {

constexpr char kMagic[8] = {'B', 'J', 'K', 'C', 'A', 'C', 'H', 'E'};

}  // namespace

std::string serialize_entry(const CacheEntry& entry) {
  const std::string manifest = entry.manifest.dump();
  std::string out(kMagic, sizeof(kMagic));
  put_le<std::uint32_t>(out, kEntryFormatVersion);
  put_le<std::uint32_t>(out, static_cast<std::uint32_t>(manifest.size()));
  out += manifest;
  put_le<std::uint64_t>(out, entry.cubin.size());
  out += entry.cubin;
  const Digest d = sha256(out);
  out.append(reinterpret_cast<const char*>(d.data()), d.size());
  return out;
}

std::optional<CacheEntry> parse_entry(std::string_view in, std::string* defect) {
  auto fail = [&](std::string why) -> std::optional<CacheEntry> {
    if (defect) *defect = std::move(why);
    return std::nullopt;
  };
  if (in.size() < sizeof(kMagic) || std::memcmp(in.data(), kMagic, sizeof(kMagic)) != 0)
    return fail(in.size() < sizeof(kMagic) ? "truncated (no header)" : "not a bandjit entry (bad magic)");
  std::size_t pos = sizeof(kMagic);
  std::uint32_t version = 0, manifest_size = 0;
  std::uint64_t payload_size = 0;
  if (!get_le(in, pos, version)) return fail("truncated (no version)");
  if (version != kEntryFormatVersion)
    return fail(fmt::format("format version {} (this build reads {})", version, kEntryFormatVersion));
  if (!get_le(in, pos, manifest_size) || in.size() - pos < manifest_size) return fail("truncated (manifest)");
  const std::string_view manifest = in.substr(pos, manifest_size);
  pos += manifest_size;
  if (!get_le(in, pos, payload_size) || in.size() - pos < payload_size) return fail("truncated (payload)");
  pos += payload_size;
  if (in.size() - pos != 32) return fail(in.size() - pos < 32 ? "truncated (checksum)" : "trailing bytes");
  const Digest d = sha256(in.substr(0, pos));
  if (std::memcmp(d.data(), in.data() + pos, 32) != 0) return fail("checksum mismatch");
  CacheEntry entry;
  try {
    entry.manifest = parse_json_limited(manifest);  // bundles and Redis bring manifests from elsewhere
  } catch (const JsonRefused& e) {
    return fail(fmt::format("manifest refused ({})", e.what()));
  }
  if (!entry.manifest.is_object() || !entry.manifest.contains("key")) return fail("manifest lacks the key");
  entry.cubin.assign(in.substr(pos - payload_size, payload_size));
  return entry;
}

std::optional<CacheEntry> parse_entry_for_key(std::string_view bytes, const nlohmann::json& key_document,
                                              std::string* defect) {
  auto entry = parse_entry(bytes, defect);
  if (entry && entry->manifest["key"] != key_document) {
    if (defect) *defect = "stored key document differs from the requested one";
    return std::nullopt;
  }
  return entry;
}

}  // namespace bandjit
