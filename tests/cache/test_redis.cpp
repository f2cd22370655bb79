#include <chrono>
#include <cstdlib>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "bandjit/bandjit.hpp"
#include "bandjit/cache.hpp"
#include "bandjit/errors.hpp"
#include "cache/redis_tier.hpp"
#include "support/catch.hpp"
#include "support/problems.hpp"
#include "support/redis_server.hpp"
#include "support/run_command.hpp"
#include "support/temp_dir.hpp"

using namespace bandjit;

namespace {

Problem tiny(std::int64_t seq_len = 64) { return test::band_problem(1, 2, seq_len, 16, 3, 2); }

Options in(const std::string& dir) {
  Options o;
  o.arch = "sm_90";
  o.cache_dir = dir;
  return o;
}

// Sets BANDJIT_REDIS_URL (and the timeout) for one scope.
struct RedisEnvironment {
  explicit RedisEnvironment(const std::string& url, const char* timeout_ms = nullptr) {
    ::setenv("BANDJIT_REDIS_URL", url.c_str(), 1);
    if (timeout_ms) ::setenv("BANDJIT_REDIS_TIMEOUT_MS", timeout_ms, 1);
  }
  ~RedisEnvironment() {
    ::unsetenv("BANDJIT_REDIS_URL");
    ::unsetenv("BANDJIT_REDIS_TIMEOUT_MS");
  }
};

std::size_t count(const std::string& text, const std::string& piece) {
  std::size_t n = 0;
  for (auto at = text.find(piece); at != std::string::npos; at = text.find(piece, at + 1)) ++n;
  return n;
}

nlohmann::json read_json(const std::string& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

}  // namespace

TEST_CASE("redis: URLs are parsed, and malformed ones named", "[redis]") {
  auto a = parse_redis_url("redis://127.0.0.1:6380/2");
  CHECK(a.host == "127.0.0.1");
  CHECK(a.port == 6380);
  CHECK(a.db == 2);
  CHECK(a.password.empty());
  a = parse_redis_url("redis://:s3cret@cache.internal");
  CHECK(a.host == "cache.internal");
  CHECK(a.port == 6379);
  CHECK(a.password == "s3cret");
  CHECK(a.shown.find("s3cret") == std::string::npos);  // never printed
  a = parse_redis_url("redis://fleet:pw@[::1]:7000/0");
  CHECK(a.user == "fleet");
  CHECK(a.host == "::1");
  CHECK(a.port == 7000);
  for (const char* bad : {"http://x", "redis://", "redis://host:0", "redis://host:99999", "redis://host:x",
                          "redis://host/db", "redis://[::1", "redis://host:"}) {
    INFO(bad);
    try {
      parse_redis_url(bad);
      FAIL("accepted");
    } catch (const Error& e) {
      CHECK(e.kind() == ErrorKind::usage);
      CHECK(std::string(e.what()).find("BANDJIT_REDIS_URL") != std::string::npos);
    }
  }
  test::TempDir dir;
  const auto r = test::run_command("BANDJIT_REDIS_URL=localhost:6379 " + test::cli_path() + " pregenerate --arch sm_90 --cache-dir " +
                                   dir.path() + " --shapes " + test::source_path("tests/shapes/three-problems.json"));
  CHECK(r.exit_code == 2);
  CHECK(r.output.find("BANDJIT_REDIS_URL = \"localhost:6379\"") != std::string::npos);
  CHECK(count(r.output, "is not a Redis URL") == 1);  // once, before any kernel
  const auto t = test::run_command("BANDJIT_REDIS_URL=redis://127.0.0.1 BANDJIT_REDIS_TIMEOUT_MS=2s " + test::cli_path() +
                                   " pregenerate --arch sm_90 --cache-dir " + dir.path() + " --shapes " +
                                   test::source_path("tests/shapes/three-problems.json"));
  CHECK(t.exit_code == 2);
  CHECK(t.output.find("BANDJIT_REDIS_TIMEOUT_MS = \"2s\"; allowed: milliseconds from 1 to 60000") != std::string::npos);
}

TEST_CASE("redis: a node with an empty disk takes the kernel from Redis and keeps it on disk", "[redis]") {
  test::RedisServer server;
  RedisEnvironment env(server.url());
  test::TempDir a, b;
  reset_stats();
  const auto built = pregenerate("band_qk", tiny(), in(a.path()));
  CHECK(built.origin == Origin::compiled);
  CHECK(stats().compiles == 1);
  CHECK(!server.get(RedisTier::entry_key(built.key_hash)).empty());

  reset_stats();
  const auto fetched = pregenerate("band_qk", tiny(), in(b.path()));
  CHECK(fetched.origin == Origin::remote);
  CHECK(fetched.key_hash == built.key_hash);
  CHECK(stats().compiles == 0);
  CHECK(stats().remote_hits == 1);
  // Written back to the disk tier: the next lookup does not leave the host.
  CHECK(pregenerate("band_qk", tiny(), in(b.path())).origin == Origin::disk);
  CHECK(verify_cache(b.path(), false).valid == 1);
}

TEST_CASE("redis: a value with a flipped bit, or another key's value, is rejected, removed and rebuilt", "[redis]") {
  test::RedisServer server;
  RedisEnvironment env(server.url());
  test::TempDir a, b;
  const auto built = pregenerate("band_pv", tiny(), in(a.path()));
  const std::string name = RedisTier::entry_key(built.key_hash);
  std::string value = server.get(name);
  REQUIRE(value.size() > 200);
  SECTION("one bit flipped in the cubin") { value[value.size() - 100] ^= 0x08; }
  SECTION("one bit flipped in the manifest") { value[40] ^= 0x01; }
  SECTION("truncated") { value.resize(value.size() - 1); }
  SECTION("a valid entry of another key") {
    const auto other = pregenerate("band_pv", tiny(65), in(a.path()));
    value = server.get(RedisTier::entry_key(other.key_hash));
  }
  server.set(name, value);
  reset_stats();
  const auto again = pregenerate("band_pv", tiny(), in(b.path()));
  CHECK(again.origin == Origin::compiled);
  CHECK(stats().corrupt_entries == 1);
  CHECK(stats().remote_hits == 0);
  // The rebuilt entry replaced the bad value.
  std::string defect;
  CHECK(parse_entry(server.get(name), &defect));
  CHECK(server.get(name) != value);
}

TEST_CASE("redis: a down Redis degrades to the local cache with one warning", "[redis]") {
  test::TempDir dir;
  const std::string url = "redis://127.0.0.1:" + std::to_string(test::free_port());
  const auto r = test::run_command("BANDJIT_REDIS_URL=" + url + " " + test::cli_path() +
                                   " pregenerate --arch sm_90 -j 2 --cache-dir " + dir / "cache" + " --json " +
                                   dir / "out.json" + " --shapes " + test::source_path("tests/shapes/three-problems.json"));
  INFO(r.output);
  CHECK(r.exit_code == 0);
  CHECK(count(r.output, "is unavailable") == 1);
  CHECK(count(r.output, "[warning]") == 1);
  const auto out = read_json(dir / "out.json");
  CHECK(out["compiled"] == 9);
  CHECK(out["redis_failures"] == 1);  // one refused connect, then 30 s without trying
  CHECK(verify_cache(dir / "cache", false).valid == 9);
}

TEST_CASE("redis: a Redis that stops answering costs one timeout, never a hang", "[redis]") {
  test::RedisServer server;
  server.pause();  // accepts connections (the kernel does), answers nothing
  test::TempDir dir;
  const auto started = std::chrono::steady_clock::now();
  const auto r = test::run_command("BANDJIT_REDIS_URL=" + server.url() + " BANDJIT_REDIS_TIMEOUT_MS=300 " +
                                   test::cli_path() + " pregenerate --arch sm_90 -j 2 --cache-dir " + dir / "cache" +
                                   " --json " + dir / "out.json" + " --shapes " +
                                   test::source_path("tests/shapes/three-problems.json"));
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  server.resume();
  INFO(r.output);
  CHECK(r.exit_code == 0);
  CHECK(count(r.output, "no reply within 300 ms") == 1);
  CHECK(count(r.output, "[warning]") == 1);
  const auto out = read_json(dir / "out.json");
  CHECK(out["compiled"] == 9);
  CHECK(out["redis_failures"] == 1);
  CHECK(seconds < 120);  // nine compiles take seconds; a hang would take forever
}

TEST_CASE("redis: 8 processes filling one Redis-backed fleet compile each key once", "[redis]") {
  test::RedisServer server;
  test::TempDir dir;
  const std::string shapes = test::source_path("tests/shapes/three-problems.json");
  std::string script;
  for (int i = 0; i < 8; ++i)  // each process is a node with its own disk cache
    script += "BANDJIT_REDIS_URL=" + server.url() + " " + test::cli_path() + " pregenerate --shapes " + shapes +
              " --arch sm_90 -j 2 --cache-dir " + dir / ("node" + std::to_string(i)) + " --json " +
              dir / ("out" + std::to_string(i) + ".json") + " > " + dir / ("log" + std::to_string(i)) +
              " 2>&1 & pids=\"$pids $!\"; ";
  script += "for pid in $pids; do wait $pid || exit 1; done";
  const auto r = test::run_command("sh -c '" + script + "'");
  INFO(r.output);
  CHECK(r.exit_code == 0);
  int compiles = 0, from_redis = 0;
  for (int i = 0; i < 8; ++i) {
    const auto out = read_json(dir / ("out" + std::to_string(i) + ".json"));
    compiles += out["nvrtc_compiles"].get<int>();
    from_redis += out["from_redis"].get<int>();
    CHECK(verify_cache(dir / ("node" + std::to_string(i)), false).valid == 9);
  }
  CHECK(compiles == 9);
  CHECK(from_redis == 8 * 9 - 9);
}
