#include "cache/atomic_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <random>

#include <fmt/format.h>

#include "bandjit/errors.hpp"
#include "cache/trust.hpp"

namespace bandjit {
namespace {

[[noreturn]] void fail(const std::string& what, const std::string& path, int err) {
  throw Error(ErrorKind::io, fmt::format("{} {}: {}", what, path, std::strerror(err)),
              {{"path", path}, {"errno", std::to_string(err)}});
}

std::string random_suffix() {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  return fmt::format("{:016x}", rng());
}

}  // namespace

void write_file_atomically(const std::string& path, std::string_view bytes) {
  const std::filesystem::path target(path);
  make_directories(target.parent_path().string());

  const std::string temp = fmt::format("{}{}{}.{}", path, kTempMarker, ::getpid(), random_suffix());
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) fail("cannot create", temp, errno);
  std::size_t done = 0;
  int err = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      err = n < 0 ? errno : ENOSPC;
      break;
    }
    done += static_cast<std::size_t>(n);
  }
  if (!err && ::fsync(fd) != 0) err = errno;
  if (::close(fd) != 0 && !err) err = errno;
  if (!err && ::rename(temp.c_str(), path.c_str()) != 0) err = errno;
  if (err) {
    ::unlink(temp.c_str());
    fail("cannot write", path, err);
  }
  // Make the rename itself durable (best effort: some filesystems refuse fsync on a directory).
  const int dir_fd = ::open(target.parent_path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd >= 0) {
    ::fsync(dir_fd);
    ::close(dir_fd);
  }
}

void ensure_writable_directory(const std::string& dir) {
  make_directories(dir);
  require_trusted_directory(dir);
  const std::string probe = fmt::format("{}/.probe{}{}", dir, kTempMarker, ::getpid());
  write_file_atomically(probe, "bandjit");
  ::unlink(probe.c_str());
}

bool read_file(const std::string& path, std::string& bytes, FileIdentity* identity) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    ::close(fd);
    return false;
  }
  if (identity)
    *identity = {static_cast<unsigned long long>(st.st_dev), static_cast<unsigned long long>(st.st_ino),
                 static_cast<unsigned>(st.st_uid), static_cast<unsigned>(st.st_mode)};
  bytes.resize(static_cast<std::size_t>(st.st_size));
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::read(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += static_cast<std::size_t>(n);
  }
  ::close(fd);
  bytes.resize(done);  // a short read shows up as a truncated entry
  return true;
}

}  // namespace bandjit
