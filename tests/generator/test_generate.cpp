#include <cmath>
#include <cstdlib>
#include <regex>
#include <set>

#include "bandjit/bandjit.hpp"
#include "generator/family_registry.hpp"
#include "generator/tile_config.hpp"
#include "support/catch.hpp"
#include "support/problems.hpp"

using namespace bandjit;

namespace {
Problem small() { return test::band_problem(3, 4, 777, 32, 21, 5, DType::bfloat16, {1}, Layout::bhnd); }
bool has(const std::string& text, const std::string& piece) { return text.find(piece) != std::string::npos; }
}  // namespace

TEST_CASE("generator: every size is a compile-time constant", "[generator]") {
  for (const auto& family : families_of_set(kBandSet)) {
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
  CHECK(has(generate_band_softmax_backward(p).text, "kScale = 0x1p-3f;"));
}

TEST_CASE("generator: fields a family ignores do not change its source", "[generator]") {
  Problem p = small(), q = small();
  q.scale = 0.5;
  q.key_mask = KeyMask::boolean;
  CHECK(generate_band_tpv(p).text == generate_band_tpv(q).text);
  CHECK(generate_band_pv(p).text == generate_band_pv(q).text);
  q.scale = 1.0;
  CHECK(generate_band_qk(p).text == generate_band_qk(q).text);  // band_qk ignores the mask
  CHECK(generate_band_softmax_backward(p).text != generate_band_softmax_backward(q).text);
}

TEST_CASE("generator: band_tpv's tiling is baked in and its grid covers every row", "[generator]") {
  Problem p = small();
  p.dilation = {1, 2, 3, 4};
  const Source s = generate_band_tpv(p);
  CHECK(s.arguments == std::vector<std::string>{"x", "y", "z"});
  CHECK(has(s.text, "bj_head_tile_start[5]"));
  CHECK(has(s.text, "kColumnParts = 1;"));
  CHECK(has(s.text, "__launch_bounds__(128, 5)"));  // per-head dilation: five blocks (registers)
  CHECK(s.launch.grid[0] == static_cast<std::uint32_t>(band_tpv_tiling(p).tiles_per_batch));
  CHECK(s.launch.grid[2] == 3);
}

TEST_CASE("generator: attention_backward's kernels and the op shorthands", "[generator]") {
  Problem p = small();
  p.scale = 0.125;
  p.key_mask = KeyMask::additive;
  const auto kernels = attention_backward_kernels(p);
  REQUIRE(kernels.size() == 4);
  CHECK(kernels[0].family == "band_qk");
  CHECK(kernels[0].problem.scale == 1.0);  // dP = dO·Vᵀ is unscaled
  CHECK(kernels[1].family == "band_softmax_backward");
  CHECK(kernels[1].problem.scale == 0.125);  // the softmax backward applies the scale once
  CHECK(kernels[1].problem.key_mask == KeyMask::additive);
  CHECK(kernels[2].family == "band_pv");
  CHECK(kernels[3].family == "band_tpv");
  CHECK(kernels_of_op("attention_backward", p).size() == 4);
  CHECK(kernels_of_op("band_tpv", p).size() == 1);
  CHECK_THROWS_AS(kernels_of_op("backward", p), Error);  // shorthands are expanded first
  CHECK(expand_family_names("backward", "x") ==
        std::vector<std::string>{"band_tpv", "band_softmax_backward", "attention_backward"});
  CHECK(expand_family_names("training", "x").size() == 6);
  CHECK(expand_family_names("attention_backward", "x") == std::vector<std::string>{"attention_backward"});
  try {
    expand_family_names("band_tpvv", "f.json problems[2]");
    FAIL("accepted band_tpvv");
  } catch (const Error& e) {
    CHECK(has(e.what(), "f.json problems[2]"));
    CHECK(has(e.what(), "band_tpv, band_softmax_backward"));
    CHECK(has(e.what(), "training"));
  }
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
  CHECK(generate_band_tpv(p).arguments == std::vector<std::string>{"x", "y", "z"});
  CHECK(generate_band_softmax_backward(p).arguments == std::vector<std::string>{"p", "dp", "ds", "mask"});
  p.key_mask = KeyMask::none;
  CHECK(generate_band_softmax_backward(p).arguments == std::vector<std::string>{"p", "dp", "ds"});
}

TEST_CASE("generator: band_softmax groups take rows in turn where a thread holds few values", "[generator]") {
  auto group_of = [](const Source& s) {
    std::smatch m;
    REQUIRE(std::regex_search(s.text, m, std::regex("kRowGroup = ([0-9]+);")));
    return std::stoi(m[1]);
  };
  const Problem seed = test::band_problem(1, 12, 4096, 64, 256, 256, DType::float16);
  CHECK(group_of(generate_band_softmax(seed)) == 4);
  Problem f32 = seed;
  f32.dtype = DType::float32;
  CHECK(group_of(generate_band_softmax(f32)) == 2);
  // Eight rows where the grid still has ≥ 16 blocks an SM (132 SMs) with eight: B = 12, and
  // N = 32768, w = 512 (64-thread rows of three pieces); not with the batch left to run time.
  Problem wide = seed;
  wide.seq_len = 32768, wide.window_left = wide.window_right = 512;
  CHECK(group_of(generate_band_softmax(wide)) == 8);
  Problem b12 = seed;
  b12.batch = 12;
  CHECK(group_of(generate_band_softmax(b12)) == 8);
  b12.runtime_batch = true;
  CHECK(group_of(generate_band_softmax(b12)) == 4);
  b12.runtime_batch = false;
  Tuning four;
  four.row_waves = 4;  // the knob still wins
  CHECK(group_of(generate_band_softmax(b12, four)) == 4);
  Problem bf16 = b12;  // bfloat16 as float16 (not measured apart)
  bf16.dtype = DType::bfloat16;
  CHECK(group_of(generate_band_softmax(bf16)) == 8);
  // The threshold: 16 × kAssumedSms = 2112 blocks at eight rows (64 rows a block here, C = 513):
  // 11 heads × 12288 positions fill 2112 blocks; × 12282 positions, 2111.
  Problem edge = seed;
  edge.heads = 11, edge.seq_len = 12288;
  CHECK(band_softmax_tiling(edge, 8).blocks == 2112);
  CHECK(group_of(generate_band_softmax(edge)) == 8);
  edge.seq_len = 12282;
  CHECK(band_softmax_tiling(edge, 8).blocks == 2111);
  CHECK(group_of(generate_band_softmax(edge)) == 4);
  Problem f32_705 = test::band_problem(1, 12, 4096, 64, 352, 352, DType::float32);  // six pieces: one row
  CHECK(group_of(generate_band_softmax(f32_705)) == 1);
  // The grid covers every row once: blocks of rows_per_block groups of row_group rows.
  for (std::int64_t c : {1, 14, 33, 249, 513, 705, 1025, 2049, 8193})
    for (DType dt : {DType::float16, DType::float32}) {
      const Problem p = test::band_problem(2, 3, 9000, 64, c / 2, c - 1 - c / 2, dt);
      const SoftmaxTiling one = band_softmax_tiling(p);
      const int values = one.pieces_per_thread * 16 / static_cast<int>(element_size(dt));
      const int group = group_of(generate_band_softmax(p));
      INFO("C = " << c << " " << to_string(dt) << ": " << values << " values a thread, " << one.row_threads
                  << " threads a row");
      // Two rows' raw pieces and one row's values in ≤ 60 registers, rows of ≤ 64 threads.
      const bool measured = 8 * one.pieces_per_thread + values <= 60 && one.row_threads <= 64;
      const bool many_blocks = band_softmax_tiling(p, 8).blocks * p.batch >= 16 * kAssumedSms;
      CHECK(group == (!measured ? 1 : dt == DType::float32 ? 2 : many_blocks ? 8 : 4));
      const SoftmaxTiling t = band_softmax_tiling(p, group);
      const std::int64_t block_rows = std::int64_t(t.rows_per_block) * t.row_group, rows = p.heads * p.seq_len;
      CHECK(t.blocks * block_rows >= rows);
      CHECK((t.blocks - 1) * block_rows < rows);
    }
  // Tuning::row_prefetch off keeps one row; on with row_waves sets the rows.
  Tuning off, eight;
  off.row_prefetch = 1;
  eight.row_prefetch = 2, eight.row_waves = 8;
  CHECK(group_of(generate_band_softmax(seed, off)) == 1);
  CHECK(group_of(generate_band_softmax(seed, eight)) == 8);
  CHECK(generate_band_softmax(seed, eight).launch.grid[0] == 12 * 4096 / (8 * 8));
  // band_softmax_backward keeps one row a group.
  CHECK(group_of(generate_band_softmax_backward(seed)) == 1);
}

TEST_CASE("generator: templates are embedded in the library", "[generator]") {
  std::set<std::string> names;
  for (const auto& t : embedded_templates()) {
    names.insert(t.name);
    CHECK(has(t.text, "#pragma once"));
    CHECK(t.text.size() > 200);
  }
  for (const char* n : {"bandjit/common.cuh", "bandjit/mma.cuh", "bandjit/band_tiles.cuh", "bandjit/band_qk.cuh",
                        "bandjit/band_softmax.cuh", "bandjit/band_pv.cuh", "bandjit/band_tpv.cuh",
                        "bandjit/band_softmax_backward.cuh", "bandjit/util.cuh",
                        "bandjit/sliding_window_attention.cuh"})
    CHECK(names.count(n) == 1);
}

TEST_CASE("generator: families are found by name; unknown names list the known ones", "[generator]") {
  CHECK(families_of_set(kBandSet) ==
        std::vector<std::string>{"band_qk", "band_softmax", "band_pv", "band_tpv", "band_softmax_backward",
                                 "sliding_window_attention"});
  try {
    find_family("band_qkv");
    FAIL("found band_qkv");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::invalid_problem);
    CHECK(has(e.what(), "band_qkv"));
    CHECK(has(e.what(), "band_qk, band_softmax, band_pv, band_tpv, band_softmax_backward, sliding_window_attention"));
  }
  Problem bad = small();
  bad.head_dim = 24;
  CHECK_THROWS_AS(generate_band_pv(bad), Error);
}

TEST_CASE("generator: runtime_batch leaves the batch out of the source and the key", "[generator]") {
  for (const auto& family : families_of_set(kBandSet)) {
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
