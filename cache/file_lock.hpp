// One build per key among the processes of a host: an exclusive flock on
// <dir>/<hh>/<hash>.lock, held while the holder compiles and publishes. The kernel frees
// the lock when its holder dies (SIGKILL included), so no one waits on a dead process.
// The holder removes the file before it lets go; a waiter that then finds its file gone
// starts over on a new one, so two holders never overlap.
#pragma once

#include <chrono>
#include <functional>
#include <string>

namespace bandjit {

class FileLock {
 public:
  /// Waits up to `patience` for the lock at `path`, or until `done` says the holder's
  /// result is there (checked at every poll, so waiters do not queue for the lock only to
  /// find the result). The result holds nothing then, or when the file cannot be created
  /// (a read-only cache) or the wait ran out: the caller looks for the result, else builds
  /// without the lock (a duplicate build, never a wrong one).
  static FileLock acquire(const std::string& path, std::chrono::milliseconds patience,
                          const std::function<bool()>& done = {});

  FileLock() = default;
  FileLock(FileLock&& other) noexcept;
  FileLock& operator=(FileLock&& other) noexcept;
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;
  ~FileLock();

  bool held() const { return fd_ >= 0; }

 private:
  void release();

  std::string path_;
  int fd_ = -1;
};

/// Whether the open file `fd` is still the file at `path` (same device and inode). The lock
/// protocol's check: only whoever holds the flock on the file now at `path` may unlink it.
bool same_file(int fd, const std::string& path);

}  // namespace bandjit
