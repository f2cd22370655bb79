#include "cache/disk_cache.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <set>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "bandjit/cache.hpp"
#include "bandjit/errors.hpp"
#include "cache/atomic_file.hpp"
#include "cache/sha256.hpp"
#include "cache/trust.hpp"
#include "runtime/stats.hpp"

namespace fs = std::filesystem;

namespace bandjit {
namespace {

bool is_hex(const std::string& s, std::size_t n) {
  return s.size() == n && std::all_of(s.begin(), s.end(), [](char c) { return std::isxdigit(static_cast<unsigned char>(c)) && !std::isupper(static_cast<unsigned char>(c)); });
}

// Only files of the cache's own layout are ever touched: <hh>/<64 hex>.bjk with hh its
// first two digits, their temp files (<that>.tmp.<pid>.<random>), and the top-level probe.
// A cache directory pointed at the wrong place loses nothing of anyone else's.
bool is_entry_name(const std::string& dir_name, const std::string& name) {
  const std::string suffix = kEntrySuffix;
  return name.size() == 64 + suffix.size() && name.compare(64, suffix.size(), suffix) == 0 &&
         is_hex(name.substr(0, 64), 64) && name.compare(0, 2, dir_name) == 0;
}
bool is_temp_name(const std::string& dir_name, const std::string& name) {
  const std::string marker = std::string(kEntrySuffix) + std::string(kTempMarker);
  return name.size() > 64 + marker.size() && name.compare(64, marker.size(), marker) == 0 &&
         is_hex(name.substr(0, 64), 64) && name.compare(0, 2, dir_name) == 0;
}
// Build locks (<hash>.lock) count with the temp files: a holder removes its own; one left
// by a process that was killed is taken over by the next build of that key.
bool is_lock_name(const std::string& dir_name, const std::string& name) {
  const std::string suffix = kLockSuffix;
  return name.size() == 64 + suffix.size() && name.compare(64, suffix.size(), suffix) == 0 &&
         is_hex(name.substr(0, 64), 64) && name.compare(0, 2, dir_name) == 0;
}

bool first_time(const std::string& what) {
  static std::mutex mutex;
  static std::set<std::string> seen;
  std::lock_guard<std::mutex> lock(mutex);
  return seen.insert(what).second;
}

void warn_once(const std::string& path, const std::string& defect) {
  if (first_time(path + defect))
    spdlog::warn("bandjit: cache entry {} is unusable ({}); removed, it will be rebuilt", path, defect);
}

void warn_untrusted_once(const std::string& path, const std::string& why) {
  if (first_time(path + why))
    spdlog::warn("bandjit: not using {}: it is {}, so another user could have written it", path, why);
}

std::string shard_of(const std::string& entry_path) { return fs::path(entry_path).parent_path().string(); }

// Removes `path`; "" when it is gone (also when another process removed it first), else why not.
std::string remove_file(const fs::path& path) {
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) return std::strerror(errno);
  return "";
}

// Removes `path` only if it is still the file that was read: a concurrent writer may have
// published a good entry under the same name meanwhile. Returns "" when the file read is gone
// (removed here or by another process, or replaced), else why it could not be removed.
std::string remove_if_same(const std::string& path, const FileIdentity& read) {
  struct stat now {};
  if (::stat(path.c_str(), &now) != 0) return errno == ENOENT ? "" : std::strerror(errno);
  if (now.st_ino != read.inode || now.st_dev != read.device) return "";
  return remove_file(path);
}

// Records a removal's outcome `why` ("" = gone) in `failures` as "path: reason"; true when gone.
bool note_failure(std::vector<std::string>* failures, const fs::path& path, const std::string& why) {
  if (failures && !why.empty()) failures->push_back(fmt::format("{}: {}", path.string(), why));
  return why.empty();
}

struct FileRow {
  fs::path path;
  std::uint64_t bytes;
  fs::file_time_type mtime;
};

// A directory of the cache that could not be listed: Error(io) in strict listings, since
// inspection and maintenance must not take a directory they cannot read for an empty one.
[[noreturn]] void unlistable(const fs::path& dir, const std::error_code& ec) {
  throw Error(ErrorKind::io, fmt::format("cannot read the cache directory {}: {}", dir.string(), ec.message()),
              {{"path", dir.string()}});
}

// The cache's files. `strict`: Error(io) when the cache directory or a shard cannot be listed
// (opened or read to the end), as the open or read itself reports it; a cache directory that
// does not exist is empty. The writer's eviction passes false: its entry is written, and what
// it cannot see it keeps.
std::vector<FileRow> entry_files(const std::string& dir, std::vector<fs::path>* temps = nullptr, bool strict = true) {
  std::vector<FileRow> rows;
  const auto options = strict ? fs::directory_options::none : fs::directory_options::skip_permission_denied;
  // An error a strict listing reports: anything but a file or shard removed meanwhile (by a
  // concurrent clear or eviction), which is simply gone.
  const auto fails = [strict](const std::error_code& e) { return strict && e && e != std::errc::no_such_file_or_directory; };
  std::error_code ec;
  fs::directory_iterator top(dir, options, ec), end;
  if (ec) {
    if (fails(ec)) unlistable(dir, ec);
    return rows;
  }
  for (; top != end; top.increment(ec)) {
    std::error_code fe;
    const std::string top_name = top->path().filename().string();
    if (top_name.rfind(".probe" + std::string(kTempMarker), 0) == 0 && top->is_regular_file(fe)) {
      if (temps) temps->push_back(top->path());
      continue;
    }
    if (!is_hex(top_name, 2)) continue;
    const bool shard = top->is_directory(fe);
    if (fails(fe)) unlistable(top->path(), fe);
    if (!shard) continue;
    fs::directory_iterator it(top->path(), options, fe), stop;
    for (; !fe && it != stop; it.increment(fe)) {
      // A shard that can be read but not searched lists names whose sizes cannot be read.
      std::error_code type_ec, size_ec, time_ec;
      const bool regular = it->is_regular_file(type_ec);
      if (fails(type_ec)) unlistable(top->path(), type_ec);
      if (!regular) continue;
      const std::string name = it->path().filename().string();
      if (is_temp_name(top_name, name) || is_lock_name(top_name, name)) {
        if (temps) temps->push_back(it->path());
      } else if (is_entry_name(top_name, name)) {
        const auto size = it->file_size(size_ec);
        const auto mtime = it->last_write_time(time_ec);
        if (fails(size_ec)) unlistable(top->path(), size_ec);
        if (fails(time_ec)) unlistable(top->path(), time_ec);
        if (!size_ec && !time_ec) rows.push_back({it->path(), size, mtime});
      }
    }
    if (fails(fe)) unlistable(top->path(), fe);  // a shard removed meanwhile is empty
  }
  if (fails(ec)) unlistable(dir, ec);
  return rows;
}

// Temp files older than this belong to a writer that died; younger ones may be live.
constexpr auto kStaleTemp = std::chrono::minutes(1);

// A build lock is removed only while this process holds it and the path still names the file
// it holds, as its holder does on release (cache/file_lock.cpp): a builder may hold one much
// longer than a minute (it waits up to five for another's lock before it compiles). A held
// lock is skipped. Without the second check, a holder that released (and unlinked) the file
// between our open and our flock would let us unlink the next builder's new lock file.
std::string remove_unheld_lock(const fs::path& path, bool* removed) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return errno == ENOENT ? "" : std::strerror(errno);
  std::string why;
  if (::flock(fd, LOCK_EX | LOCK_NB) == 0) {
    if (same_file(fd, path.string())) {
      why = remove_file(path);
      *removed = why.empty();
    }  // else: released and replaced meanwhile; the new file is its builder's
  } else if (errno != EWOULDBLOCK) {
    why = std::strerror(errno);
  }
  ::close(fd);
  return why;
}

std::uint64_t remove_stale(const std::vector<fs::path>& temps, std::vector<std::string>* failures) {
  const auto now = fs::file_time_type::clock::now();
  std::uint64_t removed = 0;
  for (const auto& t : temps) {
    std::error_code ec;
    const auto mtime = fs::last_write_time(t, ec);
    if (ec || now - mtime <= kStaleTemp) continue;
    if (t.extension() == kLockSuffix) {
      bool gone = false;
      note_failure(failures, t, remove_unheld_lock(t, &gone));
      removed += gone;
    } else {
      removed += note_failure(failures, t, remove_file(t));
    }
  }
  return removed;
}

std::int64_t to_unix(fs::file_time_type t) {
  const auto sys = std::chrono::time_point_cast<std::chrono::seconds>(
      t - fs::file_time_type::clock::now() + std::chrono::system_clock::now());
  return sys.time_since_epoch().count();
}

// `dir_untrusted`: why the cache directory itself is not trusted, "" when it is.
CacheEntryInfo inspect(const FileRow& row, const std::string& dir_untrusted, FileIdentity* identity = nullptr) {
  CacheEntryInfo info;
  info.path = row.path.string();
  info.bytes = row.bytes;
  info.last_used = to_unix(row.mtime);
  info.key_hash = row.path.stem().string();
  std::string bytes, defect;
  FileIdentity read;
  if (!read_file(info.path, bytes, &read)) {
    info.defect = "unreadable";
    return info;
  }
  if (identity) *identity = read;
  std::string why = untrusted_reason(read.uid, read.mode);
  if (why.empty()) why = untrusted_path_reason(row.path.parent_path().string());
  if (why.empty()) why = dir_untrusted;
  if (!why.empty()) {
    info.defect = "untrusted: " + why;
    return info;
  }
  auto entry = parse_entry(bytes, &defect);
  if (!entry) {
    info.defect = defect;
    return info;
  }
  const auto& m = entry->manifest;
  auto text = [&](const char* field) {
    auto it = m.find(field);
    return it != m.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  info.family = text("family");
  info.problem = text("problem");
  info.arch = text("arch");
  info.kernel_name = text("kernel_name");
  if (text("key_hash") != info.key_hash) {
    info.defect = "file name does not match the key hash";
  } else if (to_hex(sha256(m["key"].dump())) != info.key_hash) {
    info.defect = "key document does not hash to the file name";
  } else if (info.family.empty() || info.kernel_name.empty() || info.arch.empty()) {
    info.defect = "manifest lacks family, kernel_name or arch";
  } else {
    info.valid = true;
  }
  return info;
}

std::uint64_t evict(const std::string& dir, std::uint64_t max_bytes, const fs::path& keep, std::uint64_t* removed,
                    std::vector<std::string>* failures = nullptr) {
  auto rows = entry_files(dir, nullptr, failures != nullptr);  // put's eviction lists what it can
  std::uint64_t total = 0;
  for (const auto& r : rows) total += r.bytes;
  if (total <= max_bytes) return total;
  std::sort(rows.begin(), rows.end(), [](const FileRow& a, const FileRow& b) { return a.mtime < b.mtime; });
  for (const auto& r : rows) {
    if (total <= max_bytes) break;
    if (r.path == keep) continue;
    if (note_failure(failures, r.path, remove_file(r.path))) {
      total -= r.bytes;
      if (removed) ++*removed;
    }
  }
  return total;
}

}  // namespace

DiskCache::DiskCache(std::string dir, std::uint64_t max_bytes) : dir_(std::move(dir)), max_bytes_(max_bytes) {}

std::string DiskCache::path_of(const std::string& hash) const {
  return fmt::format("{}/{}/{}{}", dir_, hash.substr(0, 2), hash, kEntrySuffix);
}

std::string DiskCache::lock_path_of(const std::string& hash) const {
  return fmt::format("{}/{}/{}{}", dir_, hash.substr(0, 2), hash, kLockSuffix);
}

std::optional<CacheEntry> DiskCache::get(const CacheKey& key) const {
  const std::string path = path_of(key.hash);
  for (const std::string& dir : {dir_, shard_of(path)}) {
    if (const std::string why = untrusted_path_reason(dir); !why.empty()) {
      warn_untrusted_once(dir, why);
      counters().untrusted_entries++;
      return std::nullopt;
    }
  }
  std::string bytes, defect;
  FileIdentity identity;
  if (!read_file(path, bytes, &identity)) return std::nullopt;
  if (const std::string why = untrusted_reason(identity.uid, identity.mode); !why.empty()) {
    warn_untrusted_once(path, why);  // put() will replace it with a file of ours
    counters().untrusted_entries++;
    return std::nullopt;
  }
  auto entry = parse_entry_for_key(bytes, key.document, &defect);
  if (!entry) {
    warn_once(path, defect);
    counters().corrupt_entries++;
    remove_if_same(path, identity);
    return std::nullopt;
  }
  ::utimensat(AT_FDCWD, path.c_str(), nullptr, 0);  // LRU: best effort on read-only caches
  return entry;
}

FileLock DiskCache::lock(const std::string& key_hash, std::chrono::milliseconds patience) const {
  const std::string shard = shard_of(path_of(key_hash));
  try {
    make_directories(shard);
  } catch (const Error&) {
    return {};  // put() reports the directory
  }
  if (!untrusted_path_reason(dir_).empty() || !untrusted_path_reason(shard).empty()) return {};
  const std::string entry = path_of(key_hash);
  return FileLock::acquire(lock_path_of(key_hash), patience, [&] { return ::access(entry.c_str(), F_OK) == 0; });
}

void DiskCache::put(const CacheKey& key, const CacheEntry& entry) const {
  const std::string path = path_of(key.hash);
  require_trusted_directory(dir_);
  require_trusted_directory(shard_of(path));
  write_file_atomically(path, serialize_entry(entry));
  evict(dir_, max_bytes_, path, nullptr);
}

// ---- bandjit/cache.hpp: inspection and maintenance -------------------------------------

std::vector<CacheEntryInfo> list_cache(const std::string& dir) {
  std::vector<CacheEntryInfo> infos;
  const std::string dir_untrusted = untrusted_path_reason(dir);
  for (const auto& row : entry_files(dir)) infos.push_back(inspect(row, dir_untrusted));
  std::sort(infos.begin(), infos.end(),
            [](const CacheEntryInfo& a, const CacheEntryInfo& b) { return a.last_used > b.last_used; });
  return infos;
}

CacheSummary summarize_cache(const std::string& dir) {
  CacheSummary s;
  s.dir = dir;
  s.max_bytes = cache_max_bytes();
  std::vector<fs::path> temps;
  const std::string dir_untrusted = untrusted_path_reason(dir);
  for (const auto& row : entry_files(dir, &temps)) {
    ++s.entries;
    s.bytes += row.bytes;
    if (!inspect(row, dir_untrusted).valid) ++s.invalid;
  }
  s.temp_files = temps.size();
  return s;
}

VerifyReport verify_cache(const std::string& dir, bool remove_invalid) {
  VerifyReport report;
  std::vector<fs::path> temps;
  // Removing anything from a directory others can write would be a fight over their files.
  if (remove_invalid) require_trusted_directory(dir);
  const std::string dir_untrusted = untrusted_path_reason(dir);
  for (const auto& row : entry_files(dir, &temps)) {
    FileIdentity identity;
    auto info = inspect(row, dir_untrusted, &identity);
    if (info.valid) {
      ++report.valid;
      continue;
    }
    if (remove_invalid)  // not a good entry renamed in since
      info.removed = note_failure(&report.failures, info.path, remove_if_same(info.path, identity));
    report.invalid.push_back(std::move(info));
  }
  if (remove_invalid) report.stale_temp_removed = remove_stale(temps, &report.failures);
  return report;
}

PruneReport prune_cache(const std::string& dir, std::uint64_t max_bytes) {
  PruneReport report;
  for (const auto& row : entry_files(dir)) report.bytes_before += row.bytes;
  report.bytes_after = evict(dir, max_bytes, {}, &report.removed, &report.failures);
  return report;
}

std::uint64_t clear_cache(const std::string& dir) {
  std::vector<fs::path> temps;
  std::vector<std::string> failures;
  std::uint64_t removed = 0;
  for (const auto& row : entry_files(dir, &temps)) removed += note_failure(&failures, row.path, remove_file(row.path));
  removed += remove_stale(temps, &failures);  // younger temp files may belong to live writers
  if (!failures.empty())
    throw Error(ErrorKind::io,
                fmt::format("cache clear removed {} files but could not remove {}; the first: {}", removed,
                            failures.size(), failures.front()),
                {{"dir", dir}, {"removed", std::to_string(removed)}, {"failed", std::to_string(failures.size())}});
  return removed;
}

}  // namespace bandjit
