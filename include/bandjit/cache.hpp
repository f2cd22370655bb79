// bandjit/cache.hpp — inspecting and maintaining the disk cache (SPEC §4).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace bandjit {

/// The cache directory in use: $BANDJIT_CACHE_DIR, else $XDG_CACHE_HOME/bandjit,
/// else ~/.cache/bandjit. `override_dir` wins when not empty.
std::string cache_directory(const std::string& override_dir = "");

/// Size cap in bytes: $BANDJIT_CACHE_MAX_SIZE (e.g. "2G", "500M", "123456"), default 2 GiB.
std::uint64_t cache_max_bytes();

/// One entry file as found on disk.
struct CacheEntryInfo {
  std::string path;
  std::string key_hash;
  std::string family;
  std::string problem;  ///< slug
  std::string arch;
  std::string kernel_name;
  std::uint64_t bytes = 0;
  std::int64_t last_used = 0;  ///< unix seconds (file mtime, refreshed on every hit)
  bool valid = false;
  std::string defect;  ///< why the entry is unusable, when !valid
  bool removed = false;  ///< verify_cache with remove_invalid deleted it
};

/// Every entry of the directory, fully checked (magic, lengths, checksum, key hash).
/// This and the functions below throw Error(io) for a cache (or <hh>) directory this process
/// cannot list, rather than report it empty; a cache directory that does not exist is empty.
std::vector<CacheEntryInfo> list_cache(const std::string& dir);

struct CacheSummary {
  std::string dir;
  std::uint64_t entries = 0;
  std::uint64_t bytes = 0;
  std::uint64_t max_bytes = 0;
  std::uint64_t invalid = 0;
  std::uint64_t temp_files = 0;  ///< unfinished writes (a writer died, or one is running)
};
CacheSummary summarize_cache(const std::string& dir);

struct VerifyReport {
  std::uint64_t valid = 0;
  std::vector<CacheEntryInfo> invalid;  ///< with remove_invalid: deleted unless .removed is false
  std::uint64_t stale_temp_removed = 0;
  std::vector<std::string> failures;  ///< "path: reason" of each file remove_invalid could not delete
};
/// Checks every entry; with remove_invalid, deletes bad entries, temp files older than a
/// minute (left by a writer that died) and build locks older than a minute that no process
/// holds. A clean cache has invalid.empty(); files it could not delete are in failures.
VerifyReport verify_cache(const std::string& dir, bool remove_invalid);

struct PruneReport {
  std::uint64_t removed = 0;
  std::uint64_t bytes_before = 0;
  std::uint64_t bytes_after = 0;
  std::vector<std::string> failures;  ///< "path: reason" of each entry that could not be deleted
};
/// Evicts least-recently-used entries until the total is at most max_bytes (or until every
/// entry it could delete is gone: the others are in failures).
PruneReport prune_cache(const std::string& dir, std::uint64_t max_bytes);

/// Removes every entry, temp files older than a minute (younger ones may belong to a live
/// writer) and unheld build locks older than a minute; returns the number of files removed.
/// Throws Error(io), after removing what it could, when a file could not be removed (a
/// read-only cache, another user's directory). Only files of the cache's layout
/// (<hh>/<64 hex>.bjk, their temp files and locks) are ever touched, here and in every command.
std::uint64_t clear_cache(const std::string& dir);

}  // namespace bandjit
