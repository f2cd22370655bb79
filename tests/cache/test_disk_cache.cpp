#include <grp.h>
#include <signal.h>
#include <sys/resource.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>
#include <thread>

#include "bandjit/bandjit.hpp"
#include "bandjit/cache.hpp"
#include "cache/atomic_file.hpp"
#include "cache/disk_cache.hpp"
#include "support/catch.hpp"
#include "support/problems.hpp"
#include "support/temp_dir.hpp"

using namespace bandjit;
namespace fs = std::filesystem;

namespace {

Problem tiny(std::int64_t seq_len = 64) { return test::band_problem(1, 2, seq_len, 16, 3, 2); }

Options in(const test::TempDir& dir) {
  Options o;
  o.arch = "sm_90";
  o.cache_dir = dir.path();
  return o;
}

std::string only_entry(const std::string& dir) {
  const auto entries = list_cache(dir);
  REQUIRE(entries.size() == 1);
  return entries.front().path;
}

void rewrite(const std::string& path, const std::function<void(std::string&)>& edit) {
  std::string bytes;
  REQUIRE(read_file(path, bytes));
  edit(bytes);
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

void pause_for_mtime() { std::this_thread::sleep_for(std::chrono::milliseconds(30)); }

// Runs `checks` (0: all held, else the number of the first that failed) with `path` at mode
// `mode` (0555: not writable, 0: not readable either), then restores 0755. Root ignores modes,
// so as root `checks` runs in a forked child that drops to `uid` (default 65534, nobody).
int with_mode(const std::string& path, mode_t mode, const std::function<int()>& checks, uid_t uid = 65534) {
  if (::chmod(path.c_str(), mode) != 0) return 200;
  int failed = 0;
  if (::geteuid() != 0) {
    failed = checks();
  } else {
    const pid_t child = ::fork();
    if (child < 0) return 201;
    if (child == 0) {  // no Catch2 in here: every outcome is an exit code
      if (::setgroups(0, nullptr) != 0 || ::setgid(uid) != 0 || ::setuid(uid) != 0) ::_exit(100);
      try {
        ::_exit(checks());
      } catch (...) {
        ::_exit(99);
      }
    }
    int status = 0;
    failed = ::waitpid(child, &status, 0) == child && WIFEXITED(status) ? WEXITSTATUS(status) : 202;
  }
  ::chmod(path.c_str(), 0755);
  return failed;
}

}  // namespace

TEST_CASE("disk_cache: a miss compiles and stores, the next request loads", "[disk_cache]") {
  test::TempDir dir;
  reset_stats();
  const auto first = pregenerate("band_qk", tiny(), in(dir));
  CHECK(first.origin == Origin::compiled);
  CHECK(stats().compiles == 1);
  const auto second = pregenerate("band_qk", tiny(), in(dir));
  CHECK(second.origin == Origin::disk);
  CHECK(second.key_hash == first.key_hash);
  CHECK(stats().compiles == 1);
  CHECK(stats().disk_hits == 1);
  const auto entries = list_cache(dir.path());
  REQUIRE(entries.size() == 1);
  CHECK(entries[0].valid);
  CHECK(entries[0].family == "band_qk");
  CHECK(entries[0].arch == "sm_90");
  CHECK(entries[0].key_hash == first.key_hash);
  CHECK(entries[0].path == DiskCache(dir.path(), 1 << 30).path_of(first.key_hash));
}

TEST_CASE("disk_cache: a truncated or bit-flipped entry is detected, removed and rebuilt", "[disk_cache]") {
  test::TempDir dir;
  pregenerate("band_pv", tiny(), in(dir));
  const std::string path = only_entry(dir.path());
  SECTION("truncated") {
    rewrite(path, [](std::string& b) { b.resize(b.size() / 2); });
  }
  SECTION("one bit flipped in the cubin") {
    rewrite(path, [](std::string& b) { b[b.size() - 100] ^= 0x10; });
  }
  SECTION("empty") {
    rewrite(path, [](std::string& b) { b.clear(); });
  }
  CHECK_FALSE(list_cache(dir.path()).front().valid);
  reset_stats();
  const auto again = pregenerate("band_pv", tiny(), in(dir));
  CHECK(again.origin == Origin::compiled);
  CHECK(stats().corrupt_entries == 1);
  CHECK(stats().compiles == 1);
  CHECK(list_cache(dir.path()).front().valid);
  CHECK(pregenerate("band_pv", tiny(), in(dir)).origin == Origin::disk);
}

TEST_CASE("disk_cache: an entry holding another key document is not used", "[disk_cache]") {
  test::TempDir dir;
  const auto a = pregenerate("band_qk", tiny(64), in(dir));
  const auto b = pregenerate("band_qk", tiny(65), in(dir));
  DiskCache cache(dir.path(), 1 << 30);
  // Plant a's entry under b's name: a valid file, but for another key.
  fs::copy_file(cache.path_of(a.key_hash), cache.path_of(b.key_hash), fs::copy_options::overwrite_existing);
  reset_stats();
  CHECK(pregenerate("band_qk", tiny(65), in(dir)).origin == Origin::compiled);
  CHECK(stats().corrupt_entries == 1);
}

TEST_CASE("disk_cache: the size cap evicts the least recently used entries", "[disk_cache]") {
  test::TempDir dir;
  const auto a = pregenerate("band_softmax", tiny(64), in(dir));
  pause_for_mtime();
  const auto b = pregenerate("band_softmax", tiny(65), in(dir));
  pause_for_mtime();
  CHECK(pregenerate("band_softmax", tiny(64), in(dir)).origin == Origin::disk);  // a is now the most recent
  pause_for_mtime();
  std::uint64_t one = 0;
  for (const auto& e : list_cache(dir.path())) one = std::max(one, e.bytes);
  ::setenv("BANDJIT_CACHE_MAX_SIZE", std::to_string(2 * one + one / 2).c_str(), 1);
  const auto c = pregenerate("band_softmax", tiny(66), in(dir));
  ::unsetenv("BANDJIT_CACHE_MAX_SIZE");
  std::set<std::string> kept;
  for (const auto& e : list_cache(dir.path())) kept.insert(e.key_hash);
  CHECK(kept == std::set<std::string>{a.key_hash, c.key_hash});  // b was least recently used

  const auto report = prune_cache(dir.path(), 0);
  CHECK(report.removed == 2);
  CHECK(report.bytes_after == 0);
  CHECK(list_cache(dir.path()).empty());
}

TEST_CASE("disk_cache: verify reports bad entries and removes them and stale temp files", "[disk_cache]") {
  test::TempDir dir;
  pregenerate("band_qk", tiny(64), in(dir));
  pregenerate("band_qk", tiny(65), in(dir));
  const std::string bad = list_cache(dir.path()).front().path;
  rewrite(bad, [](std::string& b) { b[20] ^= 1; });
  const std::string stale = bad + ".tmp.12345.deadbeef", fresh = bad + ".tmp.12346.cafe";
  test::write_text(stale, "half an entry");
  test::write_text(fresh, "a write in progress");
  const struct timespec old[2] = {{std::time(nullptr) - 600, 0}, {std::time(nullptr) - 600, 0}};
  ::utimensat(AT_FDCWD, stale.c_str(), old, 0);

  const auto summary = summarize_cache(dir.path());
  CHECK(summary.entries == 2);
  CHECK(summary.invalid == 1);
  CHECK(summary.temp_files == 2);
  const auto look = verify_cache(dir.path(), false);
  CHECK(look.valid == 1);
  REQUIRE(look.invalid.size() == 1);
  CHECK(look.invalid[0].path == bad);
  CHECK(look.invalid[0].defect == "checksum mismatch");
  CHECK(fs::exists(bad));
  const auto fix = verify_cache(dir.path(), true);
  CHECK(fix.invalid.size() == 1);
  CHECK(fix.stale_temp_removed == 1);
  CHECK_FALSE(fs::exists(bad));
  CHECK_FALSE(fs::exists(stale));
  CHECK(fs::exists(fresh));  // may belong to a live writer
  CHECK(verify_cache(dir.path(), false).invalid.empty());
  CHECK(clear_cache(dir.path()) == 1);  // the valid entry; the young temp file stays with its writer
  CHECK(fs::exists(fresh));
}

TEST_CASE("disk_cache: an unwritable directory is a clear I/O error", "[disk_cache]") {
  test::TempDir dir;
  test::write_text(dir / "file", "not a directory");
  Options o;
  o.arch = "sm_90";
  o.cache_dir = dir / "file/cache";
  try {
    pregenerate("band_qk", tiny(), o);
    FAIL("pregenerate wrote into a file");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::io);
    CHECK(std::string(e.what()).find(dir / "file") != std::string::npos);
  }
}

TEST_CASE("disk_cache: a write that runs out of space leaves nothing behind", "[disk_cache]") {
  // RLIMIT_FSIZE makes write() fail part-way (EFBIG), as a full disk does (ENOSPC).
  test::TempDir dir;
  const std::string path = dir / "ab/entry.bjk";
  struct rlimit saved {};
  ::getrlimit(RLIMIT_FSIZE, &saved);
  auto* previous = ::signal(SIGXFSZ, SIG_IGN);
  struct rlimit small = saved;
  small.rlim_cur = 1000;
  ::setrlimit(RLIMIT_FSIZE, &small);
  bool threw = false;
  try {
    write_file_atomically(path, std::string(5000, 'x'));
  } catch (const Error& e) {
    threw = e.kind() == ErrorKind::io;
  }
  ::setrlimit(RLIMIT_FSIZE, &saved);
  ::signal(SIGXFSZ, previous);
  CHECK(threw);
  CHECK_FALSE(fs::exists(path));
  CHECK(fs::is_empty(dir / "ab"));  // no temp file left
}

TEST_CASE("disk_cache: maintenance never touches files outside the cache's layout", "[disk_cache]") {
  test::TempDir dir;
  pregenerate("band_qk", tiny(), in(dir));
  // A user's files in a directory mistaken for the cache.
  fs::create_directories(dir / "src");
  fs::create_directories(dir / "ab");
  for (const std::string f : {"notes.bjk", "src/report.tmp.txt", "src/kernel.bjk", "ab/readme.bjk", "ab/x.tmp.1.2"})
    test::write_text(dir / f, "mine");
  const struct timespec old[2] = {{std::time(nullptr) - 600, 0}, {std::time(nullptr) - 600, 0}};
  ::utimensat(AT_FDCWD, (dir / "ab/x.tmp.1.2").c_str(), old, 0);
  CHECK(list_cache(dir.path()).size() == 1);
  verify_cache(dir.path(), true);
  prune_cache(dir.path(), 0);
  CHECK(clear_cache(dir.path()) == 0);
  for (const std::string f : {"notes.bjk", "src/report.tmp.txt", "src/kernel.bjk", "ab/readme.bjk", "ab/x.tmp.1.2"})
    CHECK(fs::exists(dir / f));
}

TEST_CASE("disk_cache: clear leaves young temp files to their writers", "[disk_cache]") {
  test::TempDir dir;
  const auto r = pregenerate("band_pv", tiny(), in(dir));
  const std::string entry = DiskCache(dir.path(), 1 << 30).path_of(r.key_hash);
  test::write_text(entry + ".tmp.77.abc", "in progress");
  CHECK(clear_cache(dir.path()) == 1);
  CHECK(fs::exists(entry + ".tmp.77.abc"));
}

TEST_CASE("disk_cache: an entry with a malformed manifest is reported, not fatal", "[disk_cache]") {
  test::TempDir dir;
  const auto r = pregenerate("band_qk", tiny(), in(dir));
  const std::string path = DiskCache(dir.path(), 1 << 30).path_of(r.key_hash);
  std::string bytes;
  REQUIRE(read_file(path, bytes));
  auto entry = parse_entry(bytes, nullptr);
  REQUIRE(entry);
  entry->manifest["family"] = 5;  // valid checksum, wrong type
  std::ofstream(path, std::ios::binary | std::ios::trunc) << serialize_entry(*entry);
  const auto entries = list_cache(dir.path());
  REQUIRE(entries.size() == 1);
  CHECK_FALSE(entries[0].valid);
  CHECK(verify_cache(dir.path(), true).invalid.size() == 1);
  CHECK(list_cache(dir.path()).empty());
}

TEST_CASE("disk_cache: one build lock per key; released on scope exit, its file removed", "[disk_cache]") {
  test::TempDir dir;
  const DiskCache cache(dir.path(), 1 << 30);
  const std::string hash(64, 'a');
  {
    const FileLock first = cache.lock(hash, std::chrono::milliseconds(0));
    REQUIRE(first.held());
    CHECK(fs::exists(cache.lock_path_of(hash)));
    const auto started = std::chrono::steady_clock::now();
    const FileLock second = cache.lock(hash, std::chrono::milliseconds(200));
    CHECK_FALSE(second.held());  // waited, then gave up: the caller builds without it
    CHECK(std::chrono::steady_clock::now() - started >= std::chrono::milliseconds(200));
    CHECK(summarize_cache(dir.path()).temp_files == 1);  // counted with the unfinished writes
  }
  CHECK_FALSE(fs::exists(cache.lock_path_of(hash)));
  CHECK(cache.lock(hash, std::chrono::milliseconds(0)).held());
}

TEST_CASE("disk_cache: verify --remove and clear leave a build lock that a live builder holds", "[disk_cache]") {
  test::TempDir dir;
  const DiskCache cache(dir.path(), 1 << 30);
  const std::string held_hash(64, 'b'), dead_hash(64, 'c');
  const FileLock held = cache.lock(held_hash, std::chrono::milliseconds(0));
  REQUIRE(held.held());
  { const FileLock dead = cache.lock(dead_hash, std::chrono::milliseconds(0)); }
  test::write_text(cache.lock_path_of(dead_hash), "");  // a lock file left by a killed builder
  const struct timespec old[2] = {{std::time(nullptr) - 600, 0}, {std::time(nullptr) - 600, 0}};
  for (const auto& h : {held_hash, dead_hash}) ::utimensat(AT_FDCWD, cache.lock_path_of(h).c_str(), old, 0);
  const auto report = verify_cache(dir.path(), true);
  CHECK(report.stale_temp_removed == 1);
  CHECK(report.failures.empty());
  CHECK(fs::exists(cache.lock_path_of(held_hash)));  // older than a minute, but held
  CHECK_FALSE(fs::exists(cache.lock_path_of(dead_hash)));
  CHECK(clear_cache(dir.path()) == 0);
  CHECK(fs::exists(cache.lock_path_of(held_hash)));
  CHECK_FALSE(cache.lock(held_hash, std::chrono::milliseconds(0)).held());  // still exclusive
}

TEST_CASE("disk_cache: files that cannot be removed are reported, never counted as removed; an unreadable cache is an error", "[disk_cache]") {
  // Another user's cache: its directories are not writable (or not readable) by this process.
  test::TempDir dir;
  pregenerate("band_qk", tiny(64), in(dir));
  const std::string bad = only_entry(dir.path());
  rewrite(bad, [](std::string& b) { b[20] ^= 1; });
  const std::string shard = fs::path(bad).parent_path().string();
  ::chmod(dir.path().c_str(), 0755);  // the temp dir is 0700: let another user in
  // Another user's cache (or one shard of it) this process cannot read: an I/O error naming
  // the directory, not an empty cache.
  std::string unreadable_path;
  const auto unreadable = [&]() -> int {
    const std::function<void()> reads[] = {[&] { list_cache(dir.path()); }, [&] { summarize_cache(dir.path()); },
                                           [&] { verify_cache(dir.path(), false); }, [&] { prune_cache(dir.path(), 0); },
                                           [&] { clear_cache(dir.path()); }};
    int n = 10;
    for (const auto& read : reads) {
      ++n;
      try {
        read();
        return n;
      } catch (const Error& e) {
        if (e.kind() != ErrorKind::io ||
            std::string(e.what()).find("cannot read the cache directory " + unreadable_path + ":") == std::string::npos)
          return n + 10;
      }
    }
    return 0;
  };
  unreadable_path = dir.path();
  CHECK(with_mode(dir.path(), 0, unreadable) == 0);
  unreadable_path = shard;
  CHECK(with_mode(shard, 0, unreadable) == 0);
  CHECK(with_mode(shard, 0644, unreadable) == 0);  // names readable, entries not (no search permission)
  // A cache directory that does not exist is empty; a file in its place is an error.
  CHECK(list_cache(dir / "none/cache").empty());
  CHECK(summarize_cache(dir / "none/cache").entries == 0);
  test::write_text(dir / "file", "not a directory");
  CHECK_THROWS_AS(list_cache(dir / "file"), Error);
  CHECK_THROWS_AS(summarize_cache(dir / "file/cache"), Error);
  const auto checks = [&]() -> int {  // 0 when every check holds, else the first that failed
    const auto v = verify_cache(dir.path(), true);
    if (v.invalid.size() != 1 || v.invalid[0].removed) return 1;
    if (v.failures.size() != 1 || v.failures[0].find(bad) != 0) return 2;
    if (v.failures[0].find("Permission denied") == std::string::npos) return 3;
    const auto p = prune_cache(dir.path(), 0);
    if (p.removed != 0 || p.failures.size() != 1 || p.bytes_after != p.bytes_before) return 4;
    try {
      clear_cache(dir.path());
      return 5;
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::io || std::string(e.what()).find("could not remove 1") == std::string::npos) return 6;
    }
    return fs::exists(bad) ? 0 : 7;
  };
  CHECK(with_mode(shard, 0555, checks) == 0);
  CHECK(verify_cache(dir.path(), true).failures.empty());  // writable again: removed now
  CHECK_FALSE(fs::exists(bad));
}

TEST_CASE("disk_cache: a writer publishes and evicts past a shard it cannot read", "[disk_cache]") {
  // Maintenance refuses an unreadable shard (above); the writer's own eviction must not: its
  // entry is written, and what it cannot see it keeps. Run as the cache's owner (uid 65534 in
  // a child when the tests run as root: root reads every directory).
  test::TempDir dir;
  ::chmod(dir.path().c_str(), 0755);
  const std::string cache_dir = dir / "cache", other = cache_dir + "/0f";
  fs::create_directories(other);
  test::write_text(other + "/" + "0f" + std::string(62, '0') + kEntrySuffix, "an entry");
  ::chmod(cache_dir.c_str(), 0755);
  const uid_t owner = ::geteuid() == 0 ? 65534 : ::geteuid();
  if (::geteuid() == 0)
    for (const auto& p : {cache_dir, other, other + "/" + "0f" + std::string(62, '0') + kEntrySuffix})
      REQUIRE(::chown(p.c_str(), owner, owner) == 0);
  const auto writes = [&]() -> int {
    CacheKey key;
    key.document = {{"family", "test"}, {"n", 1}};
    key.hash = "ab" + std::string(62, 'c');
    CacheEntry entry;
    entry.manifest = {{"key", key.document}, {"key_hash", key.hash}};
    entry.cubin = "not a cubin";
    try {
      DiskCache(cache_dir, 1).put(key, entry);  // a cap of 1 byte: eviction lists everything it can
    } catch (...) {
      return 1;
    }
    try {
      list_cache(cache_dir);
      return 2;  // maintenance must refuse the unreadable shard
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::io) return 3;
    }
    return 0;
  };
  CHECK(with_mode(other, 0, writes, owner) == 0);
}
