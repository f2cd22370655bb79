#include <cmath>
#include <cstdlib>
#include <regex>
#include <set>

#include "bandjit/bandjit.hpp"
#include "generator/family_registry.hpp"
#include "support/catch.hpp"
#include "support/problems.hpp"

using namespace bandjit;

namespace {
Problem small() { return test::band_problem(3, 4, 777, 32, 21, 5, DType::bfloat16, {1}, Layout::bhnd); }
bool has(const std::string& text, const std::string& piece) { return text.find(piece) != std::string::npos; }
}  // namespace

TEST_CASE("generator: every size is a compile-time constant", "[generator]") {
  for (const auto& family : families()) {
    INFO(family);
    const Source s = find_family(family).generate(small());
    CHECK(has(s.text, "kBatch = 3;"));
    CHECK(has(s.text, "kHeads = 4;"));
    CHECK(has(s.text, "kSeqLen = 777;"));
    CHECK(has(s.text, "kHeadDim = 32;"));
    CHECK(has(s.text, "kWindowLeft = 21;"));
    CHECK(has(s.text, "kWindowRight = 5;"));
    CHECK(has(s.text, "kDiagonals = 27;"));
    CHECK(has(s.text, "kDilation = 1;"));
    CHECK(has(s.text, "kLayout = bandjit::kLayoutBHND;"));
    CHECK(has(s.text, "using T = __nv_bfloat16;"));
    CHECK(has(s.text, "extern \"C\" __global__"));
    CHECK(has(s.text, s.kernel_name + "("));
    // The entry point takes device pointers only: no size travels at run time.
    const std::regex signature(s.kernel_name + "\\(([^)]*)\\)");
    std::smatch m;
    REQUIRE(std::regex_search(s.text, m, signature));
    CHECK_FALSE(has(m[1].str(), "int "));
    CHECK(s.arguments.size() >= 2);
    CHECK(s.launch.block[0] > 0);
    CHECK(s.launch.grid[0] > 0);
  }
}

TEST_CASE("generator: per-head dilation becomes a constant table", "[generator]") {
  Problem p = small();
  p.dilation = {1, 2, 3, 4};
  const Source s = generate_band_qk(p);
  CHECK(has(s.text, "__constant__ int bj_dilation[4] = {1, 2, 3, 4};"));
  CHECK(has(s.text, "kUniformDilation = false;"));
  CHECK(has(s.text, "bj_head_tile_start[5]"));
}

TEST_CASE("generator: the scale is baked in exactly", "[generator]") {
  CHECK(float_literal(0.125) == "0x1p-3f");
  for (double scale : {1.0, 0.125, 1.0 / std::sqrt(64.0), 1.0 / std::sqrt(3.0), -2.5, 1e-30}) {
    std::string lit = float_literal(scale);
    lit.pop_back();  // the f suffix
    CHECK(std::strtof(lit.c_str(), nullptr) == static_cast<float>(scale));
  }
  Problem p = small();
  p.scale = 0.125;
  CHECK(has(generate_band_qk(p).text, "kScale = 0x1p-3f;"));
  CHECK(has(generate_band_softmax(p).text, "kScale = 0x1p-3f;"));
}

TEST_CASE("generator: the key-padding mask adds an argument to band_softmax only", "[generator]") {
  Problem p = small();
  p.key_mask = KeyMask::boolean;
  const Source sm = generate_band_softmax(p);
  CHECK(sm.arguments == std::vector<std::string>{"s", "p", "mask"});
  CHECK(has(sm.text, "const unsigned char* __restrict__ mask"));
  p.key_mask = KeyMask::additive;
  CHECK(has(generate_band_softmax(p).text, "const float* __restrict__ mask"));
  CHECK(generate_band_qk(p).arguments == std::vector<std::string>{"q", "k", "s"});
  CHECK(generate_band_pv(p).arguments == std::vector<std::string>{"p", "v", "o"});
}

TEST_CASE("generator: templates are embedded in the library", "[generator]") {
  std::set<std::string> names;
  for (const auto& t : embedded_templates()) {
    names.insert(t.name);
    CHECK(has(t.text, "#pragma once"));
    CHECK(t.text.size() > 200);
  }
  for (const char* n : {"bandjit/common.cuh", "bandjit/mma.cuh", "bandjit/band_tiles.cuh", "bandjit/band_qk.cuh",
                        "bandjit/band_softmax.cuh", "bandjit/band_pv.cuh", "bandjit/util.cuh"})
    CHECK(names.count(n) == 1);
}

TEST_CASE("generator: families are found by name; unknown names list the known ones", "[generator]") {
  CHECK(families() == std::vector<std::string>{"band_qk", "band_softmax", "band_pv"});
  try {
    find_family("band_qkv");
    FAIL("found band_qkv");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::invalid_problem);
    CHECK(has(e.what(), "band_qkv"));
    CHECK(has(e.what(), "band_qk, band_softmax, band_pv"));
  }
  Problem bad = small();
  bad.head_dim = 24;
  CHECK_THROWS_AS(generate_band_pv(bad), Error);
}

TEST_CASE("generator: runtime_batch leaves the batch out of the source and the key", "[generator]") {
  for (const auto& family : families()) {
    INFO(family);
    Problem a = small(), b = small();
    a.runtime_batch = b.runtime_batch = true;
    b.batch = 40;
    const Source sa = find_family(family).generate(a), sb = find_family(family).generate(b);
    CHECK(sa.text == sb.text);
    CHECK(sa.key_fields == sb.key_fields);
    CHECK(sa.key_fields["batch"] == "runtime");
    CHECK(has(sa.text, "kBatch = 0;"));
    CHECK(sa.launch.grid[2] == 3);  // the default launch still covers the problem's batch
    CHECK(sb.launch.grid[2] == 40);
    // Baked in, the batch changes the key.
    Problem c = small();
    c.batch = 40;
    CHECK(find_family(family).generate(small()).key_fields != find_family(family).generate(c).key_fields);
  }
}
