#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "bandjit/bundle.hpp"
#include "bandjit/cache.hpp"
#include "cache/atomic_file.hpp"
#include "cache/bundle.hpp"
#include "cache/sha256.hpp"
#include "runtime/bundles.hpp"
#include "runtime/driver_api.hpp"
#include "runtime/nvrtc_api.hpp"
#include "support/catch.hpp"
#include "support/problems.hpp"
#include "support/run_command.hpp"
#include "support/temp_dir.hpp"

using namespace bandjit;
namespace fs = std::filesystem;

namespace {

std::vector<BundleKernel> small_list() {
  return {{"band_qk", test::band_problem(1, 2, 64, 16, 3, 2)},
          {"band_softmax", test::band_problem(1, 2, 64, 16, 3, 2)},
          {"band_pv", test::band_problem(2, 3, 77, 32, 4, 0, DType::float16, {2})}};
}

Options sm90(const std::string& dir) {
  Options o;
  o.arch = "sm_90";
  o.cache_dir = dir;
  return o;
}

std::string read_bytes(const std::string& path) {
  std::string bytes;
  REQUIRE(read_file(path, bytes));
  return bytes;
}

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

Error import_error(const std::string& bundle, const std::string& cache, const std::string& arch = "sm_90") {
  try {
    import_bundle(bundle, cache, arch);
  } catch (const Error& e) {
    return e;
  }
  FAIL("import accepted " << bundle);
  return Error(ErrorKind::usage, "");
}

}  // namespace

TEST_CASE("bundle: export, then import into an empty cache, gives every entry", "[bundle]") {
  test::TempDir build, node;
  const std::string path = build / "kernels.bundle";
  reset_stats();
  const auto made = export_bundle(path, small_list(), sm90(build / "cache"), 2);
  CHECK(made.kernels == 3);
  CHECK(made.compiled == 3);
  CHECK(made.arch == "sm_90");
  CHECK(made.nvrtc == nvrtc().version);
  CHECK(made.bytes == fs::file_size(path));
  CHECK(made.sha256 == sha256_hex(read_bytes(path)));
  // A second export takes everything from the disk cache.
  CHECK(export_bundle(build / "again.bundle", small_list(), sm90(build / "cache"), 2).compiled == 0);

  const auto in = import_bundle(path, node / "cache", "sm_90");
  CHECK(in.kernels == 3);
  CHECK(in.written == 3);
  CHECK(in.present == 0);
  CHECK(verify_cache(node / "cache", false).valid == 3);
  CHECK(import_bundle(path, node / "cache", "sm_90").present == 3);
  // The imported entries are the ones get_kernel's lookup finds: no compile.
  reset_stats();
  for (const auto& k : small_list()) CHECK(pregenerate(k.family, k.problem, sm90(node / "cache")).origin == Origin::disk);
  CHECK(stats().compiles == 0);
}

TEST_CASE("bundle: a flipped bit anywhere, a cut or an addition rejects the whole bundle", "[bundle]") {
  test::TempDir dir;
  const std::string path = dir / "kernels.bundle";
  export_bundle(path, small_list(), sm90(dir / "cache"), 2);
  const std::string good = read_bytes(path);
  std::string bad = good;
  std::string expected;
  SECTION("magic") {
    bad[0] ^= 0x20;
    expected = "bad magic";
  }
  SECTION("format version") {
    bad[8] ^= 0x02;
    expected = "format version";
  }
  SECTION("index") {
    bad[40] ^= 0x01;
    expected = "index checksum mismatch";
  }
  SECTION("index checksum") {
    const auto index_size = static_cast<unsigned char>(good[12]) | static_cast<unsigned char>(good[13]) << 8 |
                            static_cast<unsigned char>(good[14]) << 16;
    bad[20 + index_size + 5] ^= 0x80;
    expected = "index checksum mismatch";
  }
  SECTION("an index nested past 64 levels, with a valid checksum") {
    // Layout: magic (8), version (u32), index size (u64), index, SHA-256 of all that, entries.
    std::uint64_t index_size = 0;
    for (int b = 0; b < 8; ++b) index_size |= std::uint64_t(static_cast<unsigned char>(good[12 + b])) << (8 * b);
    const std::string index = R"({"arch": )" + std::string(100000, '[') + std::string(100000, ']') + "}";
    bad = good.substr(0, 12);
    for (int b = 0; b < 8; ++b) bad.push_back(static_cast<char>((index.size() >> (8 * b)) & 0xff));
    bad += index;
    const Digest d = sha256(bad);
    bad.append(reinterpret_cast<const char*>(d.data()), d.size());
    bad += good.substr(20 + index_size + 32);
    expected = "index refused (nested more than 64 levels deep)";
  }
  SECTION("the last byte (the last entry's own checksum)") {
    bad[good.size() - 1] ^= 0x01;
    expected = "checksum mismatch";
  }
  SECTION("inside the entries (the index is a few hundred bytes)") {
    bad[good.size() * 3 / 4] ^= 0x10;
    expected = "checksum mismatch";
  }
  SECTION("truncated") {
    bad.resize(good.size() - 7);
    expected = "outside the file";
  }
  SECTION("trailing bytes") {
    bad += "extra";
    expected = "trailing bytes";
  }
  const std::string bad_path = dir / "bad.bundle";
  write_bytes(bad_path, bad);
  const Error e = import_error(bad_path, dir / "node");
  CHECK(e.kind() == ErrorKind::io);
  CHECK(std::string(e.what()).find(bad_path) != std::string::npos);
  CHECK(std::string(e.what()).find(expected) != std::string::npos);
  CHECK_FALSE(fs::exists(dir / "node"));  // nothing taken from it
  // The command line says the same and exits 6 (I/O).
  const auto r = test::run_cli("cache import " + bad_path + " --arch sm_90 --cache-dir " + dir / "node");
  CHECK(r.exit_code == 6);
  CHECK(r.output.find(expected) != std::string::npos);
}

TEST_CASE("bundle: a bundle for another arch or NVRTC is refused, naming both", "[bundle]") {
  test::TempDir dir;
  const std::string path = dir / "kernels.bundle";
  export_bundle(path, small_list(), sm90(dir / "cache"), 2);
  SECTION("another arch") {
    const Error e = import_error(path, dir / "node", "sm_80");
    CHECK(e.kind() == ErrorKind::invalid_problem);
    CHECK(std::string(e.what()).find("made for sm_90") != std::string::npos);
    CHECK(std::string(e.what()).find("this process targets sm_80") != std::string::npos);
    const auto r = test::run_cli("cache import " + path + " --arch sm_80 --cache-dir " + dir / "node");
    CHECK(r.exit_code == 3);
    CHECK(r.output.find("made for sm_90") != std::string::npos);
  }
  SECTION("another NVRTC") {
    // The same kernels as a build machine with NVRTC 12.4 would have made them.
    Bundle other = parse_bundle(read_bytes(path), path);
    other.nvrtc = "12.4";
    for (auto& k : other.kernels) {
      k.entry.manifest["key"]["nvrtc"] = "12.4";
      k.key_hash = sha256_hex(k.entry.manifest["key"].dump());
      k.entry.manifest["key_hash"] = k.key_hash;
    }
    const std::string other_path = dir / "nvrtc-12.4.bundle";
    write_bytes(other_path, serialize_bundle(other));
    const Error e = import_error(other_path, dir / "node");
    CHECK(e.kind() == ErrorKind::invalid_problem);
    CHECK(std::string(e.what()).find("with NVRTC 12.4") != std::string::npos);
    CHECK(std::string(e.what()).find("with NVRTC " + nvrtc().version) != std::string::npos);
  }
  CHECK_FALSE(fs::exists(dir / "node"));
}

TEST_CASE("bundle: a bundle whose keys this build would not compute is refused before loading", "[bundle]") {
  test::TempDir dir;
  const std::string path = dir / "kernels.bundle";
  export_bundle(path, small_list(), sm90(dir / "cache"), 2);
  const Bundle bundle = parse_bundle(read_bytes(path), path);
  CHECK(match_bundle(bundle, path, "sm_90").size() == 3);  // this build: every key matches
  ::setenv("BANDJIT_TILE_ROWS", "64", 1);  // another tuning changes band_qk's source (default 32)
  try {
    match_bundle(bundle, path, "sm_90");
    FAIL("a bundle of other sources matched");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::invalid_problem);
    CHECK(std::string(e.what()).find("kernel 0 (band_qk") != std::string::npos);
  }
  ::unsetenv("BANDJIT_TILE_ROWS");
}

TEST_CASE("bundle: a bundle file that others can write is refused", "[bundle]") {
  test::TempDir dir;
  const std::string path = dir / "kernels.bundle";
  export_bundle(path, small_list(), sm90(dir / "cache"), 2);
  ::chmod(path.c_str(), 0666);
  const Error e = import_error(path, dir / "node");
  CHECK(e.kind() == ErrorKind::io);
  CHECK(std::string(e.what()).find("writable by group and others") != std::string::npos);
}

TEST_CASE("bundle: the command line exports, imports, and warmup needs a GPU", "[bundle]") {
  test::TempDir dir;
  const std::string shapes = test::source_path("tests/shapes/three-problems.json");
  auto r = test::run_cli("cache export --shapes " + shapes + " --arch sm_90 -j 2 -o " + dir / "k.bundle" +
                         " --cache-dir " + dir / "build" + " --json " + dir / "export.json");
  INFO(r.output);
  CHECK(r.exit_code == 0);
  CHECK(r.output.find("export: 9 kernels (9 compiled, 0 from the caches) for sm_90") != std::string::npos);
  r = test::run_cli("cache import " + dir / "k.bundle" + " --arch sm_90 --cache-dir " + dir / "node");
  CHECK(r.exit_code == 0);
  CHECK(r.output.find("9 written, 0 already cached") != std::string::npos);
  r = test::run_cli("cache verify --cache-dir " + dir / "node");
  CHECK(r.exit_code == 0);
  CHECK(r.output.find("verify: 9 valid, 0 invalid") != std::string::npos);
  r = test::run_cli("cache export --shapes " + shapes + " --arch sm_90 --cache-dir " + dir / "build");
  CHECK(r.exit_code == 2);  // -o is required
  if (!gpu_available()) {
    r = test::run_cli("warmup --bundle " + dir / "k.bundle");
    CHECK(r.exit_code == 5);
    CHECK(r.output.find("needs a GPU") != std::string::npos);
  }
}
