// Who may have written a cache file. A cubin from the cache runs with the rights of the
// process that loads it, so an entry that another user could have planted is never used:
// the cache directory, its shard directories and its entries must be owned by this user
// (or root) and writable by no one else (docs/cache.md, "Trust").
#pragma once

#include <string>

namespace bandjit {

/// Why a file or directory with this status is not to be trusted ("writable by group and
/// others (mode 0777)", "owned by uid 1000, not by this user (uid 0) or root"), or "" when
/// it is trusted.
std::string untrusted_reason(unsigned uid, unsigned mode);

/// "" when `path` is missing or trusted, else the reason (the path is not in it).
std::string untrusted_path_reason(const std::string& path);

/// Throws Error(io) naming the directory, the reason and the fix, when `dir` exists and is
/// not trusted.
void require_trusted_directory(const std::string& dir);

/// Creates `dir` and its missing parents with mode 0755 (less the umask), never group- or
/// world-writable whatever the umask; throws Error(io) naming the directory.
void make_directories(const std::string& dir);

}  // namespace bandjit
