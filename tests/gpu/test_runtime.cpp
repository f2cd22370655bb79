#include <atomic>
#include <thread>

#include "bandjit/bandjit.h"
#include "bandjit/bandjit.hpp"
#include "bandjit/bundle.hpp"
#include "check/device_buffer.hpp"
#include "runtime/driver_api.hpp"
#include "support/catch.hpp"
#include "support/problems.hpp"
#include "support/run_command.hpp"
#include "support/temp_dir.hpp"

using namespace bandjit;

namespace {
Problem tiny() { return test::band_problem(1, 2, 96, 32, 7, 7, DType::float16); }
}  // namespace

TEST_CASE("runtime: memory, then disk, then NVRTC", "[runtime]") {
  test::TempDir dir;
  Options o;
  o.cache_dir = dir.path();
  reset_stats();
  const Kernel first = get_kernel("band_qk", tiny(), o);
  CHECK(first.info().origin == Origin::compiled);
  CHECK(first.info().arch.rfind("sm_", 0) == 0);
  CHECK(first.info().registers > 0);
  const Kernel second = get_kernel("band_qk", tiny(), o);
  CHECK(second.info().origin == Origin::memory);
  CHECK(second.info().key_hash == first.info().key_hash);
  CHECK(stats().compiles == 1);
  CHECK(stats().memory_hits == 1);
}

TEST_CASE("runtime: concurrent get_kernel calls compile once", "[runtime]") {
  test::TempDir dir;
  Options o;
  o.cache_dir = dir.path();
  Problem p = tiny();
  p.seq_len = 97;
  reset_stats();
  std::vector<std::thread> threads;
  std::atomic<int> ok{0};
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&] {
      get_kernel("band_pv", p, o);
      ++ok;
    });
  for (auto& t : threads) t.join();
  CHECK(ok == 8);
  CHECK(stats().compiles == 1);
  CHECK(stats().memory_hits == 7);
}

TEST_CASE("runtime: a warm disk cache serves a fresh process without NVRTC", "[runtime]") {
  test::TempDir dir;
  const std::string shapes = test::source_path("shapes/longformer-base-4096.json");
  const std::string cache = " --cache-dir " + dir.path();
  auto r = test::run_cli("pregenerate --shapes " + shapes + cache);
  REQUIRE(r.exit_code == 0);
  // NVRTC is only asked for its version; pointing compiles at a missing library would fail them.
  r = test::run_cli("warmup --shapes " + shapes + cache + " --json " + dir / "warm.json");
  INFO(r.output);
  CHECK(r.exit_code == 0);
  CHECK(r.output.find("18 kernels") != std::string::npos);
  CHECK(r.output.find("0 compiled, 0 failed") != std::string::npos);
}

TEST_CASE("runtime: launch checks its arguments", "[runtime]") {
  const Kernel k = get_kernel("band_qk", tiny());
  CHECK(k.info().arguments == std::vector<std::string>{"q", "k", "s"});
  DeviceBuffer a(1 << 16), b(1 << 16), c(1 << 20);
  try {
    k.launch(nullptr, {a.ptr(), b.ptr()});
    FAIL("launched with two pointers");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::usage);
    CHECK(std::string(e.what()).find("q, k, s") != std::string::npos);
  }
  try {
    k.launch(nullptr, {a.ptr() + 2, b.ptr(), c.ptr()});
    FAIL("launched with a misaligned pointer");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::usage);
    CHECK(std::string(e.what()).find("aligned to 16 bytes") != std::string::npos);
  }
  CHECK_NOTHROW(k.launch(nullptr, {a.ptr(), b.ptr(), c.ptr()}));
  // The batch is baked in: only its own batch launches.
  try {
    k.launch(nullptr, {a.ptr(), b.ptr(), c.ptr()}, 2);
    FAIL("launched a baked-in batch-1 kernel for batch 2");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::usage);
    CHECK(std::string(e.what()).find("runtime_batch") != std::string::npos);
  }
  Problem any = tiny();
  any.runtime_batch = true;
  const Kernel r = get_kernel("band_qk", any);
  CHECK_NOTHROW(r.launch(nullptr, {a.ptr(), b.ptr(), c.ptr()}, 1));
  for (std::int64_t bad : {std::int64_t{0}, Limits::max_batch + 1}) {
    try {
      r.launch(nullptr, {a.ptr(), b.ptr(), c.ptr()}, bad);
      FAIL("launched batch " << bad);
    } catch (const Error& e) {
      CHECK(e.kind() == ErrorKind::usage);
      CHECK(std::string(e.what()).find("out of range: 1 … 65535") != std::string::npos);
    }
  }
}

TEST_CASE("runtime: a process warmed from a bundle finds every kernel in memory, compiling nothing", "[runtime][bundle]") {
  test::TempDir dir;
  const std::vector<BundleKernel> kernels = {{"band_qk", test::band_problem(1, 3, 130, 32, 9, 9, DType::float16)},
                                             {"band_softmax", test::band_problem(1, 3, 130, 32, 9, 9, DType::float16)},
                                             {"band_pv", test::band_problem(1, 3, 130, 32, 9, 9, DType::float16)}};
  Options build;
  build.cache_dir = dir / "build-cache";
  const auto made = export_bundle(dir / "k.bundle", kernels, build, 2);
  REQUIRE(made.kernels == 3);
  reset_stats();
  const auto loaded = load_bundle(dir / "k.bundle");
  CHECK(loaded.kernels == 3);
  Options serve;
  serve.cache_dir = dir / "empty";  // nothing on disk: a miss would compile
  for (const auto& k : kernels) CHECK(get_kernel(k.family, k.problem, serve).info().origin == Origin::memory);
  CHECK(stats().compiles == 0);
  CHECK(stats().disk_hits == 0);

  // The same from the command line, in a fresh process.
  test::write_text(dir / "s.json", R"({"name": "s", "problems": [{"batch": 1, "heads": 3, "seq_len": 130,
      "head_dim": 32, "window_left": 9, "window_right": 9, "dtype": "float16"}]})");
  const auto r = test::run_cli("warmup --bundle " + dir / "k.bundle" + " --shapes " + dir / "s.json" + " --cache-dir " +
                               dir / "empty");
  INFO(r.output);
  CHECK(r.exit_code == 0);
  CHECK(r.output.find("bundle: 3 kernels") != std::string::npos);
  CHECK(r.output.find("0 compiled, 0 failed") != std::string::npos);
}

TEST_CASE("runtime: a bundle for another arch is refused, naming both", "[runtime][bundle]") {
  test::TempDir dir;
  ensure_context();
  const std::string here = current_arch();
  Options other;
  other.arch = here == "sm_80" ? "sm_90" : "sm_80";
  other.cache_dir = dir / "cache";
  export_bundle(dir / "other.bundle", {{"band_softmax", tiny()}}, other, 1);
  try {
    load_bundle(dir / "other.bundle");
    FAIL("loaded a bundle for " << other.arch << " on " << here);
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::invalid_problem);
    CHECK(std::string(e.what()).find("made for " + other.arch) != std::string::npos);
    CHECK(std::string(e.what()).find("targets " + here) != std::string::npos);
  }
  const auto r = test::run_cli("warmup --bundle " + dir / "other.bundle");
  CHECK(r.exit_code == 3);
}

TEST_CASE("runtime: the C ABI loads, describes and launches a kernel", "[runtime]") {
  const char* problem =
      R"({"batch":1,"heads":2,"seq_len":96,"head_dim":32,"window_left":7,"window_right":7,"dtype":"float16"})";
  bandjit_kernel* kernel = nullptr;
  REQUIRE(bandjit_get_kernel("band_qk", problem, nullptr, &kernel) == BANDJIT_OK);
  REQUIRE(kernel != nullptr);
  std::size_t needed = 0;
  CHECK(bandjit_kernel_info_json(kernel, nullptr, 0, &needed) == BANDJIT_ERROR_USAGE);
  std::string info(needed, '\0');
  REQUIRE(bandjit_kernel_info_json(kernel, info.data(), info.size(), &needed) == BANDJIT_OK);
  CHECK(info.find(R"("arguments":["q","k","s"])") != std::string::npos);
  DeviceBuffer a(1 << 16), b(1 << 16), c(1 << 20);
  const std::uint64_t two[] = {a.ptr(), b.ptr()};
  CHECK(bandjit_kernel_launch(kernel, nullptr, two, 2, 0) == BANDJIT_ERROR_USAGE);
  CHECK(std::string(bandjit_last_error()).find("q, k, s") != std::string::npos);
  const std::uint64_t three[] = {a.ptr(), b.ptr(), c.ptr()};
  CHECK(bandjit_kernel_launch(kernel, nullptr, three, 3, 0) == BANDJIT_OK);
  CHECK(bandjit_kernel_launch(kernel, nullptr, three, 3, 2) == BANDJIT_ERROR_USAGE);  // batch baked in
  bandjit_kernel_free(kernel);
}
