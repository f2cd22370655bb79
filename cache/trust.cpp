#include "cache/trust.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>

#include "bandjit/errors.hpp"

namespace bandjit {

std::string untrusted_reason(unsigned uid, unsigned mode) {
  const unsigned me = ::geteuid();
  if (uid != me && uid != 0) return fmt::format("owned by uid {}, not by this user (uid {}) or root", uid, me);
  const unsigned writable = mode & (S_IWGRP | S_IWOTH);
  if (writable)
    return fmt::format("writable by {} (mode {:04o})",
                       writable == (S_IWGRP | S_IWOTH) ? "group and others" : (writable & S_IWGRP ? "group" : "others"),
                       mode & 07777);
  return {};
}

std::string untrusted_path_reason(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 ? untrusted_reason(st.st_uid, st.st_mode) : std::string();
}

void require_trusted_directory(const std::string& dir) {
  if (const std::string why = untrusted_path_reason(dir); !why.empty())
    throw Error(ErrorKind::io,
                fmt::format("refusing cache directory {}: it is {}, so another user could plant a kernel that this "
                            "process would run; use a directory of your own, or `chmod go-w` it",
                            dir, why),
                {{"path", dir}, {"reason", why}});
}

void make_directories(const std::string& dir) {
  if (dir.empty()) return;  // the current directory
  const std::filesystem::path target(dir);
  std::filesystem::path partial;
  for (const auto& part : target) {
    partial /= part;
    if (partial.empty() || part == "/" || part == "." || part == "..") continue;
    if (::mkdir(partial.c_str(), 0755) != 0 && errno != EEXIST)
      throw Error(ErrorKind::io, fmt::format("cannot create directory {}: {}", partial.string(), std::strerror(errno)),
                  {{"path", partial.string()}, {"errno", std::to_string(errno)}});
  }
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    throw Error(ErrorKind::io, fmt::format("cannot create directory {}: {}", dir, std::strerror(errno ? errno : ENOTDIR)),
                {{"path", dir}});
}

}  // namespace bandjit
