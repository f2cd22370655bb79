// The disk tier (SPEC §4): one file per kernel, <dir>/<hash[0:2]>/<hash>.bjk, written
// atomically; every read checks the whole entry and compares the stored key document.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "cache/entry_format.hpp"
#include "cache/key.hpp"

namespace bandjit {

inline constexpr const char* kEntrySuffix = ".bjk";

class DiskCache {
 public:
  DiskCache(std::string dir, std::uint64_t max_bytes);

  const std::string& dir() const { return dir_; }
  std::string path_of(const std::string& key_hash) const;

  /// The entry of `key`, or nullopt. A defective entry (truncated, corrupt, other format,
  /// other key document) is reported once, removed, counted in stats().corrupt_entries and
  /// treated as a miss. A hit refreshes the file's mtime (the LRU clock).
  std::optional<CacheEntry> get(const CacheKey& key) const;

  /// Publishes the entry atomically, then evicts least-recently-used entries beyond the cap.
  /// Throws Error(io) when the entry cannot be written (nothing partial is left behind).
  void put(const CacheKey& key, const CacheEntry& entry) const;

 private:
  std::string dir_;
  std::uint64_t max_bytes_;
};

}  // namespace bandjit
