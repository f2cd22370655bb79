// One cache entry file. Grammar (all integers little-endian):
//
//   entry         := magic version manifest_size manifest payload_size payload checksum
//   magic         := "BJKCACHE"                      8 bytes
//   version       := u32                             kEntryFormatVersion
//   manifest_size := u32
//   manifest      := UTF-8 JSON object: key (the whole key document), key_hash, family,
//                    kernel_name, problem (slug), arch, registers, shared_bytes, threads,
//                    nvrtc_log, compile_ms, created (unix seconds)
//   payload_size  := u64
//   payload       := the cubin
//   checksum      := SHA-256 of every byte before it (32 bytes)
//
// A file that is short, long, of another version or whose checksum differs is rejected
// as a whole: a reader never trusts part of an entry.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace bandjit {

inline constexpr std::uint32_t kEntryFormatVersion = 1;

struct CacheEntry {
  nlohmann::json manifest;
  std::string cubin;
};

std::string serialize_entry(const CacheEntry& entry);

/// The entry, or nullopt with `defect` saying what is wrong ("truncated", "checksum mismatch", …).
std::optional<CacheEntry> parse_entry(std::string_view bytes, std::string* defect);

/// parse_entry, and the stored key document must equal `key_document`: the one check every
/// tier (disk, Redis, bundle) applies before it hands out a cubin.
std::optional<CacheEntry> parse_entry_for_key(std::string_view bytes, const nlohmann::json& key_document,
                                              std::string* defect);

}  // namespace bandjit
