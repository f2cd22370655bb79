#include "cache/file_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <thread>
#include <utility>

namespace bandjit {
namespace {

constexpr auto kPoll = std::chrono::milliseconds(20);

}  // namespace

bool same_file(int fd, const std::string& path) {
  struct stat open_st {}, path_st {};
  return ::fstat(fd, &open_st) == 0 && ::stat(path.c_str(), &path_st) == 0 && open_st.st_ino == path_st.st_ino &&
         open_st.st_dev == path_st.st_dev;
}

FileLock FileLock::acquire(const std::string& path, std::chrono::milliseconds patience,
                           const std::function<bool()>& done) {
  FileLock lock;
  const auto deadline = std::chrono::steady_clock::now() + patience;
  while (true) {
    const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) return lock;
    bool got = false;
    while (true) {
      if (::flock(fd, LOCK_EX | LOCK_NB) == 0) {
        got = true;
        break;
      }
      if (errno != EWOULDBLOCK && errno != EINTR) break;
      if (std::chrono::steady_clock::now() >= deadline || (done && done())) break;
      std::this_thread::sleep_for(kPoll);
    }
    if (!got) {
      ::close(fd);
      return lock;
    }
    if (same_file(fd, path)) {
      lock.path_ = path;
      lock.fd_ = fd;
      return lock;
    }
    ::close(fd);  // the previous holder removed this file: start over on the current one
  }
}

FileLock::FileLock(FileLock&& other) noexcept
    : path_(std::move(other.path_)), fd_(std::exchange(other.fd_, -1)) {}

FileLock& FileLock::operator=(FileLock&& other) noexcept {
  if (this != &other) {
    release();
    path_ = std::move(other.path_);
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

FileLock::~FileLock() { release(); }

void FileLock::release() {
  if (fd_ < 0) return;
  if (same_file(fd_, path_)) ::unlink(path_.c_str());
  ::close(fd_);
  fd_ = -1;
}

}  // namespace bandjit
