// The disk tier (SPEC §4): one file per kernel, <dir>/<hash[0:2]>/<hash>.bjk, written
// atomically; every read checks the whole entry and compares the stored key document.
// Nothing is read from or written to a directory or entry that another user could have
// written (cache/trust.hpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "cache/entry_format.hpp"
#include "cache/file_lock.hpp"
#include "cache/key.hpp"

namespace bandjit {

inline constexpr const char* kEntrySuffix = ".bjk";
inline constexpr const char* kLockSuffix = ".lock";

class DiskCache {
 public:
  DiskCache(std::string dir, std::uint64_t max_bytes);

  const std::string& dir() const { return dir_; }
  std::string path_of(const std::string& key_hash) const;
  /// <dir>/<hh>/<hash>.lock: the per-key build lock (cache/file_lock.hpp).
  std::string lock_path_of(const std::string& key_hash) const;

  /// The entry of `key`, or nullopt. A defective entry (truncated, corrupt, other format,
  /// other key document) is reported once, removed, counted in stats().corrupt_entries and
  /// treated as a miss. An entry in an untrusted directory, or itself untrusted, is
  /// reported once, counted in stats().untrusted_entries and not read. A hit refreshes the
  /// file's mtime (the LRU clock).
  std::optional<CacheEntry> get(const CacheKey& key) const;

  /// The build lock of `key_hash` (cache/file_lock.hpp), waiting up to `patience` or until
  /// the entry appears; holds nothing in an untrusted or unwritable directory.
  FileLock lock(const std::string& key_hash, std::chrono::milliseconds patience) const;

  /// Publishes the entry atomically, then evicts least-recently-used entries beyond the cap.
  /// Throws Error(io) when the entry cannot be written (nothing partial is left behind) or
  /// the directory is untrusted.
  void put(const CacheKey& key, const CacheEntry& entry) const;

 private:
  std::string dir_;
  std::uint64_t max_bytes_;
};

}  // namespace bandjit
