#include <fstream>
#include <sstream>

#include "cache/entry_format.hpp"
#include "cache/sha256.hpp"
#include "support/catch.hpp"
#include "support/temp_dir.hpp"

using namespace bandjit;

namespace {
CacheEntry sample() {
  CacheEntry e;
  e.manifest = {{"key", {{"family", "band_qk"}, {"arch", "sm_90"}}}, {"key_hash", "ab"}, {"registers", 40}};
  for (int i = 0; i < 300; ++i) e.cubin.push_back(static_cast<char>((i * 37) & 0xff));
  return e;
}
}  // namespace

TEST_CASE("entry: serialize then parse gives the same entry", "[entry]") {
  const CacheEntry e = sample();
  const std::string bytes = serialize_entry(e);
  std::string defect;
  const auto back = parse_entry(bytes, &defect);
  REQUIRE(back);
  CHECK(back->manifest == e.manifest);
  CHECK(back->cubin == e.cubin);
}

TEST_CASE("entry: every truncation is rejected", "[entry]") {
  const std::string bytes = serialize_entry(sample());
  for (std::size_t n = 0; n < bytes.size(); ++n) {
    std::string defect;
    INFO("kept " << n << " of " << bytes.size() << " bytes");
    CHECK_FALSE(parse_entry(std::string_view(bytes).substr(0, n), &defect));
    CHECK_FALSE(defect.empty());
  }
  std::string longer = bytes + "x";
  CHECK_FALSE(parse_entry(longer, nullptr));
}

TEST_CASE("entry: a flipped bit anywhere is rejected", "[entry]") {
  const std::string bytes = serialize_entry(sample());
  for (std::size_t pos = 0; pos < bytes.size(); ++pos)
    for (int bit : {0, 5}) {
      std::string flipped = bytes;
      flipped[pos] = static_cast<char>(flipped[pos] ^ (1 << bit));
      INFO("byte " << pos << " bit " << bit);
      CHECK_FALSE(parse_entry(flipped, nullptr));
    }
}

TEST_CASE("entry: the version-1 golden file still parses", "[entry]") {
  std::ifstream in(test::source_path("tests/cache/golden/entry-v1.bjk"), std::ios::binary);
  REQUIRE(in);
  std::stringstream buf;
  buf << in.rdbuf();
  std::string defect;
  const auto e = parse_entry(buf.str(), &defect);
  INFO(defect);
  REQUIRE(e);
  CHECK(e->manifest["kernel_name"] == "bandjit_golden");
  REQUIRE(e->cubin.size() == 512);
  for (int i = 0; i < 512; ++i) CHECK(static_cast<unsigned char>(e->cubin[i]) == i % 256);
}

TEST_CASE("entry: a manifest nested past 64 levels or with a repeated key is refused, not a crash", "[entry]") {
  // Bundles and Redis bring entries from other machines: one with a valid checksum around a
  // manifest nested 10^6 deep crashed the comparison of its key (recursive) before the limit.
  const auto entry_with_manifest = [](const std::string& manifest) {
    // Layout: magic (8 bytes), version (u32), manifest size (u32), manifest, cubin size (u64),
    // cubin, SHA-256 of everything before it.
    const std::string good = serialize_entry(sample());
    REQUIRE(good.compare(16, sample().manifest.dump().size(), sample().manifest.dump()) == 0);
    std::string out = good.substr(0, 12);
    const auto n = static_cast<std::uint32_t>(manifest.size());
    for (int b = 0; b < 4; ++b) out.push_back(static_cast<char>((n >> (8 * b)) & 0xff));
    out += manifest;
    out += good.substr(16 + sample().manifest.dump().size(), good.size() - 32 - 16 - sample().manifest.dump().size());
    const Digest d = sha256(out);
    out.append(reinterpret_cast<const char*>(d.data()), d.size());
    return out;
  };
  std::string defect;
  const std::string deep = R"({"key": )" + std::string(1000000, '[') + std::string(1000000, ']') + "}";
  CHECK_FALSE(parse_entry(entry_with_manifest(deep), &defect));
  CHECK(defect == "manifest refused (nested more than 64 levels deep)");
  CHECK_FALSE(parse_entry(entry_with_manifest(R"({"key": {}, "key": {}})"), &defect));
  CHECK(defect == R"(manifest refused (the key "key" appears twice in one object))");
  CHECK(parse_entry(entry_with_manifest(R"({"key": {"a": [[1]]}})"), &defect));  // shallow: fine
}
