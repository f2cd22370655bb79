#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <thread>

#include <nlohmann/json.hpp>

#include "bandjit/cache.hpp"
#include "cache/disk_cache.hpp"
#include "cache/sha256.hpp"
#include "support/catch.hpp"
#include "support/run_command.hpp"
#include "support/temp_dir.hpp"

using namespace bandjit;
namespace fs = std::filesystem;

namespace {

std::string three_problems() { return test::source_path("tests/shapes/three-problems.json"); }

std::size_t count(const std::string& text, const std::string& piece) {
  std::size_t n = 0;
  for (auto at = text.find(piece); at != std::string::npos; at = text.find(piece, at + 1)) ++n;
  return n;
}

// Starts `command` through /bin/sh in its own process (exec'd: the pid is the command's).
pid_t spawn(const std::string& command) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::execl("/bin/sh", "sh", "-c", ("exec " + command).c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  return pid;
}

// Names only: cheap enough to poll every millisecond.
std::size_t files_named(const std::string& dir, const std::string& piece) {
  std::size_t n = 0;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    n += it->path().filename().string().find(piece) != std::string::npos;
  return n;
}
bool has_temp_file(const std::string& dir) { return files_named(dir, ".tmp.") > 0; }
std::size_t published_entries(const std::string& dir) { return files_named(dir, ".bjk") - files_named(dir, ".tmp."); }

void wait_until(const std::function<bool()>& done, std::chrono::seconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!done() && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

}  // namespace

TEST_CASE("processes: several processes filling one cache leave it valid", "[processes]") {
  test::TempDir dir;
  const std::string cache = dir / "cache";
  std::string script;
  for (int i = 0; i < 4; ++i)
    script += test::cli_path() + " pregenerate --shapes " + three_problems() + " --arch sm_90 -j 2 --cache-dir " + cache +
              " > " + dir.path() + "/out" + std::to_string(i) + ".txt 2>&1 & pids=\"$pids $!\"; ";
  script += "for pid in $pids; do wait $pid || exit 1; done";
  const auto r = test::run_command("sh -c '" + script + "'");
  INFO(r.output);
  CHECK(r.exit_code == 0);

  const auto report = verify_cache(cache, false);
  CHECK(report.valid == 9);
  CHECK(report.invalid.empty());
  CHECK(summarize_cache(cache).temp_files == 0);
  // A later run finds everything.
  const auto again = test::run_cli("pregenerate --shapes " + three_problems() + " --arch sm_90 --cache-dir " + cache);
  CHECK(again.exit_code == 0);
  CHECK(again.output.find("0 compiled, 9 loaded from cache, 0 failed") != std::string::npos);
}

TEST_CASE("processes: 8 processes pregenerating one list at once compile each key about once", "[processes]") {
  test::TempDir dir;
  const std::string cache = dir / "cache";
  std::string script;
  for (int i = 0; i < 8; ++i)
    script += test::cli_path() + " pregenerate --shapes " + three_problems() + " --arch sm_90 -j 1 --cache-dir " +
              cache + " --json " + dir / ("out" + std::to_string(i) + ".json") + " > " +
              dir / ("log" + std::to_string(i)) + " 2>&1 & pids=\"$pids $!\"; ";
  script += "for pid in $pids; do wait $pid || exit 1; done";
  const auto r = test::run_command("sh -c '" + script + "'");
  INFO(r.output);
  CHECK(r.exit_code == 0);
  int compiles = 0;
  for (int i = 0; i < 8; ++i) {
    std::ifstream in(dir / ("out" + std::to_string(i) + ".json"));
    compiles += nlohmann::json::parse(in)["nvrtc_compiles"].get<int>();
  }
  INFO("NVRTC compiles across the 8 processes: " << compiles << " for 9 keys");
  CHECK(compiles >= 9);
  CHECK(compiles <= 2 * 9);  // the per-key lock makes it 9 unless a waiter gave up
  CHECK(verify_cache(cache, false).valid == 9);
  CHECK(verify_cache(cache, false).invalid.empty());
  CHECK(summarize_cache(cache).temp_files == 0);  // no temp or lock file left
}

TEST_CASE("processes: a writer killed in the middle of an entry leaves a cache that verify reports clean",
          "[processes]") {
  test::TempDir dir;
  const std::string cache = dir / "cache";
  // A writer of large entries, so that SIGKILL lands while a temp file is being written.
  bool killed_mid_write = false;
  for (int attempt = 0; attempt < 5 && !killed_mid_write; ++attempt) {
    const pid_t child = ::fork();
    if (child == 0) {
      try {
        const DiskCache disk(cache, 1ull << 40);
        for (int i = 0;; ++i) {
          CacheKey key;
          key.document = {{"test", "killed writer"}, {"attempt", attempt}, {"i", i}};
          key.hash = sha256_hex(key.document.dump());
          CacheEntry entry;
          entry.manifest = {{"key", key.document}, {"key_hash", key.hash}, {"family", "band_qk"},
                            {"kernel_name", "k"}, {"arch", "sm_90"}};
          entry.cubin.assign(24u << 20, static_cast<char>(i));
          disk.put(key, entry);
        }
      } catch (...) {
      }
      ::_exit(0);  // never back into the test runner
    }
    wait_until([&] { return has_temp_file(cache) && published_entries(cache) >= 1; }, std::chrono::seconds(60));
    ::kill(child, SIGKILL);
    ::waitpid(child, nullptr, 0);
    killed_mid_write = has_temp_file(cache);
  }
  REQUIRE(killed_mid_write);
  const auto after_kill = verify_cache(cache, false);
  CHECK(after_kill.valid >= 1);  // the entries it finished
  CHECK(after_kill.invalid.empty());
  // The next run, then verify: clean.
  auto r = test::run_cli("pregenerate --shapes " + three_problems() + " --arch sm_90 -j 2 --cache-dir " + cache);
  INFO(r.output);
  CHECK(r.exit_code == 0);
  r = test::run_cli("cache verify --cache-dir " + cache);
  CHECK(r.exit_code == 0);
  CHECK(r.output.find(" 0 invalid") != std::string::npos);
  // The dead writer's temp file goes once it is stale (a minute old).
  for (fs::recursive_directory_iterator it(cache), end; it != end; ++it)
    if (it->path().filename().string().find(".tmp.") != std::string::npos)
      fs::last_write_time(it->path(), fs::file_time_type::clock::now() - std::chrono::minutes(10));
  CHECK(verify_cache(cache, true).stale_temp_removed >= 1);
  CHECK(summarize_cache(cache).temp_files == 0);
}

TEST_CASE("processes: pregenerate killed while it builds leaves a cache the next run completes", "[processes]") {
  test::TempDir dir;
  const std::string cache = dir / "cache";
  const pid_t child = spawn(test::cli_path() + " pregenerate --shapes " + three_problems() +
                            " --arch sm_90 -j 2 --cache-dir " + cache + " > " + dir / "killed.log" + " 2>&1");
  wait_until([&] { return published_entries(cache) >= 2; }, std::chrono::seconds(120));
  ::kill(child, SIGKILL);
  int status = 0;
  ::waitpid(child, &status, 0);
  REQUIRE(WIFSIGNALED(status));  // it was killed, not finished
  CHECK(verify_cache(cache, false).invalid.empty());
  const auto r = test::run_cli("pregenerate --shapes " + three_problems() + " --arch sm_90 -j 2 --cache-dir " + cache);
  INFO(r.output);
  CHECK(r.exit_code == 0);
  const auto verify = test::run_cli("cache verify --cache-dir " + cache);
  CHECK(verify.exit_code == 0);
  CHECK(verify.output.find("verify: 9 valid, 0 invalid") != std::string::npos);
}

TEST_CASE("processes: a full disk is a clear I/O error and leaves no corrupt entry", "[processes]") {
  test::TempDir dir;
  const std::string cli = test::cli_path();
  const std::string run = cli + " pregenerate --shapes " + three_problems() + " --arch sm_90 -j 1 --cache-dir CACHE; " +
                          "echo \"pregenerate-exit=$?\"; " + cli + " cache verify --cache-dir CACHE; " + cli +
                          " cache stats --cache-dir CACHE";
  auto with_cache = [&](std::string text, const std::string& cache) {
    for (auto at = text.find("CACHE"); at != std::string::npos; at = text.find("CACHE")) text.replace(at, 5, cache);
    return text;
  };
  // A real full disk: a 512 KiB tmpfs in a private mount namespace (root, or user
  // namespaces). Else a file-size limit, which fails write() part-way the same way.
  const std::string mnt = dir / "mnt";
  fs::create_directories(mnt);
  std::string message;
  bool tmpfs = false;
  test::CommandResult r;
  if (test::run_command("unshare -rm sh -c 'mount -t tmpfs -o size=512k tmpfs " + mnt + "'").exit_code == 0) {
    r = test::run_command("unshare -rm sh -c 'mount -t tmpfs -o size=512k tmpfs " + mnt + " && " +
                          with_cache(run, mnt + "/cache") + "'");
    message = "No space left on device";
    tmpfs = true;
  } else {
    WARN("no tmpfs here (no mount namespace): filling the disk with RLIMIT_FSIZE instead");
    r = test::run_command("sh -c 'trap \"\" XFSZ; ulimit -f 64; " + with_cache(run, dir / "cache") + "'");
    message = "File too large";
  }
  INFO(r.output);
  CHECK(r.output.find("pregenerate-exit=6") != std::string::npos);
  CHECK(r.output.find("I/O error") != std::string::npos);
  CHECK(r.output.find(message) != std::string::npos);
  CHECK(r.output.find("/cache/") != std::string::npos);  // names the entry it could not write
  if (tmpfs) CHECK(count(r.output, "compiled ") >= 1);  // it failed part-way, after whole entries
  CHECK(r.output.find(" 0 invalid") != std::string::npos);
  CHECK(r.output.find("temp files   0") != std::string::npos);
}
