#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "bandjit/bandjit.hpp"
#include "bandjit/cache.hpp"
#include "cache/atomic_file.hpp"
#include "cache/disk_cache.hpp"
#include "cache/entry_format.hpp"
#include "support/catch.hpp"
#include "support/problems.hpp"
#include "support/run_command.hpp"
#include "support/temp_dir.hpp"

using namespace bandjit;
namespace fs = std::filesystem;

namespace {

Problem tiny() { return test::band_problem(1, 2, 64, 16, 3, 2); }

Options in(const std::string& dir) {
  Options o;
  o.arch = "sm_90";
  o.cache_dir = dir;
  return o;
}

unsigned mode_of(const std::string& path) {
  struct stat st {};
  REQUIRE(::stat(path.c_str(), &st) == 0);
  return st.st_mode & 07777;
}

// A kernel that is not the one asked for, with a valid checksum and the right key document:
// what someone who can write the cache would plant.
void plant(const std::string& path) {
  std::string bytes;
  REQUIRE(read_file(path, bytes));
  auto entry = parse_entry(bytes, nullptr);
  REQUIRE(entry);
  entry->cubin = "not the kernel you asked for";
  std::ofstream(path, std::ios::binary | std::ios::trunc) << serialize_entry(*entry);
}

constexpr unsigned kNobody = 65534;

}  // namespace

TEST_CASE("trust: an entry in a trusted directory is used (the control)", "[trust]") {
  test::TempDir dir;
  const auto r = pregenerate("band_qk", tiny(), in(dir / "cache"));
  reset_stats();
  CHECK(pregenerate("band_qk", tiny(), in(dir / "cache")).origin == Origin::disk);
  CHECK(stats().untrusted_entries == 0);
  CHECK(mode_of(dir / "cache") == 0755);
  CHECK(mode_of(DiskCache(dir / "cache", 1 << 30).path_of(r.key_hash)) == 0644);
}

TEST_CASE("trust: a cache directory others can write is refused; planted entries are never read", "[trust]") {
  test::TempDir dir;
  const std::string cache = dir / "cache";
  const auto r = pregenerate("band_qk", tiny(), in(cache));
  const DiskCache disk(cache, 1 << 30);
  const std::string entry = disk.path_of(r.key_hash);
  plant(entry);
  std::string what, target = cache;
  SECTION("cache directory writable by all") {
    ::chmod(cache.c_str(), 0777);
    what = "writable by group and others (mode 0777)";
  }
  SECTION("shard directory writable by the group") {
    target = fs::path(entry).parent_path().string();
    ::chmod(target.c_str(), 0775);
    what = "writable by group (mode 0775)";
  }
  SECTION("cache directory owned by another user") {
    if (::geteuid() != 0) {
      WARN("not root: cannot give a directory to another user; covered where the tests run as root (CI)");
      return;
    }
    REQUIRE(::chown(cache.c_str(), kNobody, kNobody) == 0);
    what = "owned by uid 65534";
  }
  // get() never reads the planted kernel.
  reset_stats();
  CacheKey key;
  {
    std::string bytes;
    REQUIRE(read_file(entry, bytes));
    const auto parsed = parse_entry(bytes, nullptr);
    key = {parsed->manifest["key"], r.key_hash};
  }
  CHECK_FALSE(disk.get(key));
  CHECK(stats().untrusted_entries == 1);
  // pregenerate refuses the directory, naming it and the reason.
  try {
    pregenerate("band_qk", tiny(), in(cache));
    FAIL("pregenerate used an untrusted directory");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::io);
    CHECK(std::string(e.what()).find(target) != std::string::npos);
    CHECK(std::string(e.what()).find(what) != std::string::npos);
  }
  test::write_text(dir / "tiny.json", R"({"name": "tiny", "problems": [{"batch": 1, "heads": 2, "seq_len": 64,
      "head_dim": 16, "window_left": 3, "window_right": 2, "dtype": "float32", "ops": ["band_qk"]}]})");
  const auto cli = test::run_cli("pregenerate --arch sm_90 --cache-dir " + cache + " --shapes " + dir / "tiny.json");
  CHECK(cli.exit_code == 6);
  CHECK(cli.output.find(what) != std::string::npos);
  // verify reports it.
  const auto report = verify_cache(cache, false);
  REQUIRE(report.invalid.size() == 1);
  CHECK(report.invalid[0].defect.find("untrusted: " + what) == 0);
}

TEST_CASE("trust: an entry others can write, or another user owns, is not used and gets replaced", "[trust]") {
  test::TempDir dir;
  const std::string cache = dir / "cache";
  const auto r = pregenerate("band_pv", tiny(), in(cache));
  const std::string entry = DiskCache(cache, 1 << 30).path_of(r.key_hash);
  plant(entry);
  SECTION("writable by others") { ::chmod(entry.c_str(), 0646); }
  SECTION("owned by another user") {
    if (::geteuid() != 0) {
      WARN("not root: cannot give a file to another user; covered where the tests run as root (CI)");
      return;
    }
    REQUIRE(::chown(entry.c_str(), kNobody, kNobody) == 0);
  }
  CHECK(verify_cache(cache, false).invalid.size() == 1);
  reset_stats();
  CHECK(pregenerate("band_pv", tiny(), in(cache)).origin == Origin::compiled);
  CHECK(stats().untrusted_entries >= 1);  // looked at before and after taking the build lock
  CHECK(mode_of(entry) == 0644);  // ours now
  CHECK(verify_cache(cache, false).valid == 1);
  CHECK(pregenerate("band_pv", tiny(), in(cache)).origin == Origin::disk);
}

TEST_CASE("trust: a permissive umask does not make the cache writable by others", "[trust]") {
  test::TempDir dir;
  const mode_t saved = ::umask(0);
  const auto r = pregenerate("band_softmax", tiny(), in(dir / "deep/cache"));
  ::umask(saved);
  CHECK(mode_of(dir / "deep/cache") == 0755);
  const std::string entry = DiskCache(dir / "deep/cache", 1 << 30).path_of(r.key_hash);
  CHECK(mode_of(fs::path(entry).parent_path().string()) == 0755);
  CHECK(mode_of(entry) == 0644);
  CHECK(verify_cache(dir / "deep/cache", false).valid == 1);
}
