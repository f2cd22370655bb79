// The softmax families' parameters, tiling and generated source (generator/softmax.cpp,
// softmax_tiling.cpp): validation names the field and range, every listed L gets a tiling
// inside the register and block budgets, and the cache key holds what the code reads.
#include <nlohmann/json.hpp>

#include "bandjit/bandjit.hpp"
#include "generator/family_registry.hpp"
#include "generator/softmax_tiling.hpp"
#include "generator/tile_config.hpp"
#include "support/catch.hpp"

using namespace bandjit;
using nlohmann::json;

namespace {
bool has(const std::string& text, const std::string& piece) { return text.find(piece) != std::string::npos; }
json megatron() {
  return {{"batch", 4}, {"heads", 16}, {"queries", 1024}, {"row_length", 1024}, {"dtype", "float16"}, {"mask", "boolean"}};
}
void expect_invalid(const std::string& family, const json& params, const std::string& field, const std::string& allowed) {
  INFO(family << " " << params.dump());
  try {
    find_family(family).generate(params);
    FAIL("accepted");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::invalid_problem);
    CHECK(e.evidence_of("field") == field);
    CHECK(has(e.what(), allowed));
    CHECK(has(e.what(), family));
  }
}
}  // namespace

TEST_CASE("generator: softmax parameters are validated with the field and its range", "[generator]") {
  json p = megatron();
  p["row_length"] = 0;
  expect_invalid("scale_mask_softmax", p, "row_length", "1 … 131072");
  p["row_length"] = 131073;
  expect_invalid("scale_mask_softmax_backward", p, "row_length", "1 … 131072");
  p = megatron();
  p["mask"] = "bool";
  expect_invalid("scale_mask_softmax", p, "mask", "\"none\", \"boolean\", \"additive\"");
  p = megatron();
  p.erase("queries");
  expect_invalid("scale_mask_softmax", p, "queries", "required");
  p = megatron();
  p["seq_len"] = 5;
  expect_invalid("scale_mask_softmax", p, "seq_len", "batch, heads, queries, row_length");
  p = megatron();
  p["causal"] = 1;
  expect_invalid("scale_mask_softmax", p, "causal", "true or false");
  p = megatron();
  p["batch"] = 1048576;
  p["heads"] = 65536;
  expect_invalid("scale_mask_softmax", p, "batch × heads × queries", "2147483647");
  expect_invalid("softmax", {{"rows", 1 << 30}, {"row_length", 65536}, {"dtype", "float32"}}, "rows × row_length", "2^36");
  expect_invalid("softmax", {{"rows", 8}, {"row_length", 64}, {"dtype", "float64"}}, "dtype", "\"bfloat16\"");
  CHECK_NOTHROW(find_family("softmax").generate(json{{"rows", 1}, {"row_length", 1}, {"dtype", "float32"}}));
}

TEST_CASE("tiling: every row length fits the register, block and cluster budgets", "[tiling]") {
  for (DType d : {DType::float32, DType::float16, DType::bfloat16})
    for (std::int64_t L : {1, 3, 32, 37, 100, 768, 1024, 2048, 4096, 5120, 12345, 16384, 16386, 16388, 32768, 32772,
                           65536, 65540, 100003, 131068, 131072}) {
      const SoftmaxRowTiling t = softmax_row_tiling(1 << 14, L, d);
      INFO(to_string(d) << " L " << L);
      CHECK(L % t.vec == 0);
      CHECK(t.vec * element_size(d) <= 16);
      CHECK(t.pieces * t.vec == L);
      CHECK(t.row_threads * t.pieces_per_thread >= t.pieces);
      CHECK(t.row_threads * (t.pieces_per_thread - 1) < t.pieces);  // no thread without a piece
      if (t.staged)  // long 16-bit rows through shared memory: within every sm_80+ card's 99 KiB
        CHECK(t.stage_bytes == std::uint32_t(t.threads) * t.pieces_per_thread * t.vec * element_size(d));
      else
        CHECK(t.pieces_per_thread * t.vec <= 32);
      // Unmasked 16-bit rows of 16-byte pieces held in registers at 2048 … 8192 pieces but for
      // 4096 (one staged block), staged from 4096 pieces otherwise.
      const bool held = element_size(d) == 2 && t.vec * element_size(d) == 16 && t.pieces >= 2048 &&
                        t.pieces <= 8192 && t.pieces != 4096;
      CHECK(t.held == held);
      CHECK_FALSE((t.held && t.staged));
      if (t.held) CHECK(t.stage_bytes == 0);
      if (t.held) CHECK(t.pieces_per_thread * t.vec <= 32);  // 4 pieces: 16 registers of x
      CHECK(t.staged == (!held && element_size(d) == 2 && t.pieces >= 4096 && t.vec * element_size(d) >= 4));
      if (t.staged) CHECK(t.stage_bytes <= kPortableSharedBytes);  // every sm_80+ card's limit a block
      // Masked: boolean masks staged from 4096 pieces (512-thread blocks' slots fit), additive never.
      const SoftmaxRowTiling boolean = softmax_row_tiling(1 << 14, L, d, false, {}, 1);
      CHECK(boolean.staged == (element_size(d) == 2 && boolean.pieces >= 4096 && boolean.vec >= 4));
      CHECK_FALSE(boolean.held);  // masked rows lost held (bench/results/2026-12-04-held-rows)
      if (boolean.staged) CHECK(boolean.stage_bytes <= kPortableSharedBytes);
      // Default layouts keep a boolean mask as 64 bits a thread: its slots hold x alone.
      if (boolean.staged) CHECK(boolean.pieces_per_thread * boolean.vec <= 64);
      if (boolean.staged) CHECK(boolean.stage_bytes == std::uint32_t(boolean.threads) * boolean.pieces_per_thread * boolean.vec * element_size(d));
      CHECK_FALSE(softmax_row_tiling(1 << 14, L, d, false, {}, int(element_size(d))).staged);
      CHECK_FALSE(softmax_row_tiling(1 << 14, L, d, false, {}, int(element_size(d))).held);
      CHECK_FALSE(softmax_row_tiling(1 << 14, L, d, true).held);  // the backward
      CHECK(t.threads % 32 == 0);
      CHECK(t.threads <= 512);
      CHECK(t.cluster <= 8);
      CHECK(t.row_threads % t.cluster == 0);
      CHECK(t.rows_per_block * (t.row_threads / t.cluster) == t.threads);
      if (t.row_threads / t.cluster > 32) CHECK((t.row_threads / t.cluster) % 32 == 0);
      if (t.row_threads < 32) CHECK((t.row_threads & (t.row_threads - 1)) == 0);
      if (t.cluster > 1) CHECK(t.blocks == (1 << 14) * t.cluster);
    }
  // 16-byte pieces wherever L allows them, clusters only past one block's worth.
  CHECK(softmax_row_tiling(100, 1024, DType::float16).vec == 8);
  CHECK(softmax_row_tiling(100, 100, DType::float16).vec == 4);
  CHECK(softmax_row_tiling(100, 16384, DType::float32).cluster == 1);
  CHECK(softmax_row_tiling(100, 65536, DType::float32).cluster == 8);   // 8 × 256 threads
  CHECK(softmax_row_tiling(100, 65536, DType::bfloat16).cluster == 8);  // held: 8 × 256 threads × 4 pieces
  CHECK(softmax_row_tiling(100, 65536, DType::bfloat16).pieces_per_thread == 4);
  CHECK(softmax_row_tiling(100, 65536, DType::bfloat16).held);
  CHECK(softmax_row_tiling(100, 16384, DType::bfloat16).cluster == 2);  // held: 2 × 256 threads × 4 pieces
  CHECK(softmax_row_tiling(100, 16384, DType::bfloat16).threads == 256);
  CHECK(softmax_row_tiling(100, 131072, DType::bfloat16).staged);  // past 8192 pieces: staged
  CHECK(softmax_row_tiling(100, 65544, DType::bfloat16).staged);   // 8193 pieces
  Tuning not_held;
  not_held.row_held = 1;
  CHECK(softmax_row_tiling(100, 65536, DType::bfloat16, false, not_held).staged);  // 2 × 512 × 8 pieces
  CHECK(softmax_row_tiling(100, 65536, DType::bfloat16, false, not_held).cluster == 2);
  CHECK_FALSE(softmax_row_tiling(100, 8192, DType::float16).held);   // 1024 pieces: registers
  CHECK_FALSE(softmax_row_tiling(100, 16376, DType::float16).held);  // 2047 pieces
  CHECK(softmax_row_tiling(100, 16384, DType::float16).held);        // 2048
  Tuning held_masked;
  held_masked.row_held = 2;
  Tuning held_narrow = held_masked;  // 16 pieces a thread: 128 keys, past the mask's 64 bits
  held_narrow.row_block_threads = 128;
  CHECK_FALSE(softmax_row_tiling(100, 131072, DType::bfloat16, false, held_narrow, 1).held);
  CHECK(softmax_row_tiling(100, 131072, DType::bfloat16, false, held_narrow).held);  // unmasked
  CHECK(softmax_row_tiling(100, 65536, DType::bfloat16, false, held_masked, 1).held);  // a knob may hold masked rows
  CHECK_FALSE(softmax_row_tiling(100, 65536, DType::bfloat16, false, held_masked, 2).held);  // never additive ones
  CHECK(softmax_row_tiling(100, 65536, DType::bfloat16, false, {}, 1).threads == 512);  // boolean mask: staged too
  // boolean mask: its bits stay in registers, so the slots are x's alone
  CHECK(softmax_row_tiling(100, 65536, DType::bfloat16, false, {}, 1).stage_bytes == 512 * 8 * 16);
  CHECK_FALSE(softmax_row_tiling(100, 16384, DType::bfloat16, false, {}, 1).staged);  // masked, shorter: registers
  CHECK_FALSE(softmax_row_tiling(100, 65536, DType::bfloat16, false, {}, 2).staged);  // additive: registers
  Tuning staged;
  staged.row_staged = 2;
  CHECK(softmax_row_tiling(100, 65536, DType::bfloat16, false, staged, 2).stage_bytes == 256 * 8 * (16 + 16));
  // A knob layout with more than 64 keys a thread stages the boolean mask beside x.
  Tuning narrow;
  narrow.row_block_threads = 128;
  const SoftmaxRowTiling wide = softmax_row_tiling(100, 131072, DType::bfloat16, false, narrow, 1);
  CHECK(wide.pieces_per_thread * wide.vec > 64);
  CHECK(wide.stage_bytes == std::uint32_t(wide.threads) * wide.pieces_per_thread * (16 + 8));
  // Knobs that would need more shared memory than an SM has are refused, naming them.
  Tuning big = staged;
  big.row_block_threads = 1024;
  try {
    softmax_row_tiling(100, 65536, DType::bfloat16, false, big, 2);  // 1024 × 8 × (16 + 16) bytes
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::invalid_problem);
    CHECK(std::string(e.what()).find("BANDJIT_ROW_BLOCK_THREADS") != std::string::npos);
  }
  CHECK(softmax_row_tiling(100, 65536, DType::bfloat16, false, big).stage_bytes == 1024 * 8 * 16);
  CHECK(softmax_row_tiling(100, 65536, DType::float16, true).cluster == 8);  // 8 × 256
  CHECK(softmax_row_tiling(100, 65536, DType::float32, true).cluster == 4);  // 4 × 1024: 256s would need 16
  CHECK(softmax_row_tiling(100, 5120, DType::float32).threads == 160);       // one 5-warp row per block
  CHECK(softmax_row_tiling(100, 16384, DType::float16, false, {}, 1).cluster == 1);  // registers: 512 threads × 4 pieces
  CHECK(softmax_row_tiling(100, 16384, DType::float16, false, {}, 1).threads == 512);
  CHECK_FALSE(softmax_row_tiling(100, 16384, DType::float16, false, {}, 1).staged);
  CHECK_FALSE(softmax_row_tiling(100, 16384, DType::float32).held);
  CHECK(softmax_row_tiling(100, 32768, DType::float16).staged);  // staged: one block of 512 × 8 pieces
  CHECK(softmax_row_tiling(100, 32768, DType::float16).threads == 512);
  CHECK_FALSE(softmax_row_tiling(100, 8192, DType::float16).staged);
  CHECK_FALSE(softmax_row_tiling(100, 65536, DType::float16, true).staged);  // the backward holds raw pieces
  CHECK(softmax_row_tiling(1 << 20, 32, DType::float16).row_threads == 2);   // 32 bytes a thread
  CHECK(softmax_row_tiling(3, 1024, DType::float32).blocks >= 1);
}

TEST_CASE("generator: softmax sources bake in the sizes; the key holds what the code reads", "[generator]") {
  const Source s = find_family("scale_mask_softmax").generate(megatron());
  CHECK(has(s.text, "kRowLength = 1024;"));
  CHECK(has(s.text, "kRows = 65536;"));
  CHECK(has(s.text, "kQueries = 1024;"));
  CHECK(has(s.text, "kMask = bandjit::kMaskBool;"));
  CHECK(has(s.text, "using T = __half;"));
  CHECK(s.arguments == std::vector<std::string>{"x", "y", "mask"});
  CHECK(s.argument_alignment == std::vector<std::uint32_t>{16, 16, 8});
  CHECK_FALSE(has(s.text, "__cluster_dims__"));
  json big = megatron();
  big["row_length"] = 65536;
  big["queries"] = 4;
  // Boolean-masked 16-bit L = 65536: staged, 2 × 512 threads × 8 pieces of x (the mask's bits
  // in registers).
  const Source masked = find_family("scale_mask_softmax").generate(big);
  CHECK(has(masked.text, "__cluster_dims__(2, 1, 1)"));
  CHECK(masked.launch.shared_bytes == 512 * 8 * 16);
  big["mask"] = "additive";  // additive: registers, 8 × 256 threads
  CHECK(has(find_family("scale_mask_softmax").generate(big).text, "__cluster_dims__(8, 1, 1)"));
  CHECK(find_family("scale_mask_softmax").generate(big).launch.shared_bytes == 0);
  // Unmasked 16-bit L = 65536: the sm_90a build holds the row in registers, 8 × 256 threads ×
  // 4 pieces, with its own launch; every other target's build stages it, 2 × 512 × 8 pieces.
  big["mask"] = "none";
  const Source held = find_family("scale_mask_softmax").generate(big);
  CHECK(held.arch_specific);
  CHECK(has(held.text, "#if defined(__CUDA_ARCH_FEAT_SM90_ALL)\nstruct Cfg {"));
  CHECK(has(held.text, "__cluster_dims__(8, 1, 1)"));
  CHECK(has(held.text, "kStaged = false, kHeld = true;"));
  CHECK(has(held.text, "kStaged = true, kHeld = false;"));
  CHECK(has(held.text, "__cluster_dims__(2, 1, 1)"));
  // The held layout under the sm_90a branch, the staged one after its #else; a plain sm_90
  // build stops (its launch would be the held one).
  const auto at = [&](const char* text) { return held.text.find(text); };
  CHECK(at("#if defined(__CUDA_ARCH_FEAT_SM90_ALL)\nstruct Cfg {") < at("kStaged = false, kHeld = true;"));
  CHECK(at("kStaged = false, kHeld = true;") < at("#define BANDJIT_THREADS 256\n#else\nstruct Cfg {"));
  CHECK(at("#define BANDJIT_THREADS 256\n#else\nstruct Cfg {") < at("kStaged = true, kHeld = false;"));
  CHECK(at("kStaged = true, kHeld = false;") < at("#define BANDJIT_THREADS 512\n#endif"));
  CHECK(has(held.text, "#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ == 900 && !defined(__CUDA_ARCH_FEAT_SM90_ALL)\n#error"));
  CHECK(launch_for(held, "sm_100").block[0] == 512);  // no arch-specific target: the generic launch
  const LaunchShape sm90 = launch_for(held, "sm_90"), sm80 = launch_for(held, "sm_80");
  CHECK(sm90.block[0] == 256);
  CHECK(sm90.grid[0] == 4 * 16 * 4 * 8);  // batch 4 × heads 16 × queries 4 rows, 8 blocks each
  CHECK(sm90.shared_bytes == 0);      // registers only
  CHECK(sm80.block[0] == 512);
  CHECK(sm80.grid[0] == 4 * 16 * 4 * 2);
  CHECK(sm80.shared_bytes == 512 * 8 * 16);
  // Held rows asked for by the knob are every target's (one build).
  Tuning held_on;
  held_on.row_held = 2;
  const Source forced = find_family("scale_mask_softmax").generate(big, held_on);
  CHECK_FALSE(forced.arch_specific);
  CHECK(forced.launch.block[0] == 256);
  CHECK(forced.launch.shared_bytes == 0);
  big["row_length"] = 32768;  // unmasked 16-bit L = 32768: staged, one block of 512 threads × 8 pieces
  const Source staged = find_family("scale_mask_softmax").generate(big);
  CHECK(has(staged.text, "kStaged = true, kHeld = false;"));
  CHECK(has(staged.text, "extern __shared__ uint4 bandjit_stage[];"));
  CHECK(staged.launch.shared_bytes == 512 * 8 * 16);

  const auto key = [](const char* family, const json& p) { return find_family(family).generate(p).key_fields; };
  json other_mask = megatron(), causal = megatron(), scaled = megatron(), reshaped = megatron();
  other_mask["mask"] = "additive";
  causal["causal"] = true;
  scaled["scale"] = 0.125;
  reshaped["heads"] = 32;
  reshaped["queries"] = 512;
  CHECK(key("scale_mask_softmax", other_mask) != key("scale_mask_softmax", megatron()));
  CHECK(key("scale_mask_softmax", causal) != key("scale_mask_softmax", megatron()));
  CHECK(key("scale_mask_softmax", scaled) != key("scale_mask_softmax", megatron()));
  CHECK(key("scale_mask_softmax", reshaped) != key("scale_mask_softmax", megatron()));  // the mask's broadcast differs
  // The backward reads neither mask nor causal nor the (batch, heads, queries) split: one kernel for all.
  CHECK(key("scale_mask_softmax_backward", other_mask) == key("scale_mask_softmax_backward", megatron()));
  CHECK(key("scale_mask_softmax_backward", causal) == key("scale_mask_softmax_backward", megatron()));
  CHECK(key("scale_mask_softmax_backward", reshaped) == key("scale_mask_softmax_backward", megatron()));
  CHECK(key("scale_mask_softmax_backward", scaled) != key("scale_mask_softmax_backward", megatron()));
  // Without mask and causal the forward is a plain row softmax: the split does not matter either.
  json plain = megatron(), plain_reshaped = reshaped;
  plain["mask"] = plain_reshaped["mask"] = "none";
  CHECK(key("scale_mask_softmax", plain) == key("scale_mask_softmax", plain_reshaped));
}

TEST_CASE("generator: the softmax sets and their shorthands", "[generator]") {
  CHECK(families_of_set("scale_mask_softmax") ==
        std::vector<std::string>{"scale_mask_softmax", "scale_mask_softmax_backward"});
  CHECK(families_of_set("softmax") == std::vector<std::string>{"softmax", "softmax_backward"});
  CHECK(expand_ops("forward", "softmax", "") == std::vector<std::string>{"softmax"});
  CHECK(expand_ops("backward", "scale_mask_softmax", "") == std::vector<std::string>{"scale_mask_softmax_backward"});
  CHECK(expand_ops("training", "softmax", "").size() == 2);
  CHECK_THROWS_AS(expand_ops("softmax", "scale_mask_softmax", ""), Error);
}
