#include <fstream>
#include <sstream>

#include "cache/entry_format.hpp"
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
