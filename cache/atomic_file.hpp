// Atomic publication of a file: written under a temporary name (pid + random suffix) in the
// same directory, flushed, then renamed over the final name. A reader sees the old file or
// the whole new one, never half of it; a writer that dies leaves only a temp file.
#pragma once

#include <string>
#include <string_view>

namespace bandjit {

/// Suffix that marks unfinished writes ("<name>.tmp.<pid>.<random>").
inline constexpr std::string_view kTempMarker = ".tmp.";

/// Writes `bytes` to `path` atomically, creating parent directories. Throws Error(io)
/// naming the path and the system error (ENOSPC: "no space left on device"); the
/// temporary file is removed on failure.
void write_file_atomically(const std::string& path, std::string_view bytes);

struct FileIdentity {
  unsigned long long device = 0, inode = 0;
  unsigned uid = 0, mode = 0;  ///< owner and st_mode, for the trust check (cache/trust.hpp)
};

/// Creates `dir` if needed, refuses it when another user could write there
/// (cache/trust.hpp), and proves it writable by publishing and removing a probe file;
/// throws Error(io) naming the directory and the reason otherwise.
void ensure_writable_directory(const std::string& dir);

/// Reads a whole file; returns false when it does not exist or cannot be read. `identity`
/// receives the device, inode, owner and mode of the file that was read.
bool read_file(const std::string& path, std::string& bytes, FileIdentity* identity = nullptr);

}  // namespace bandjit
