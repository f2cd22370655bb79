// layer_norm's parameters (validation names field and range), its tiling heuristic (a pure
// function: every row and every piece covered once, register and shared-memory budgets) and
// the generated source's arguments.
#include <string>
#include <vector>

#include <fmt/format.h>

#include "bandjit/bandjit.hpp"
#include "bandjit/errors.hpp"
#include "generator/family_registry.hpp"
#include "generator/layer_norm.hpp"
#include "support/catch.hpp"

using namespace bandjit;

namespace {
const int kHidden[] = {32, 100, 768, 1024, 2048, 4096, 5120, 16384, 65536, 1, 33, 65535, 4, 12, 65532};

std::string error_of(const std::string& json) {
  try {
    find_family("layer_norm").canonical(nlohmann::json::parse(json), "test");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::invalid_problem);
    return e.what();
  }
  return "";
}
bool has(const std::string& text, const std::string& piece) { return text.find(piece) != std::string::npos; }
}  // namespace

TEST_CASE("generator: layer_norm parameters are validated with field and range", "[generator][layer_norm]") {
  const auto c = find_family("layer_norm_backward").canonical(nlohmann::json::parse(R"({"rows": 8, "hidden": 768, "dtype": "bfloat16"})"));
  CHECK(c.at("weight") == true);
  CHECK(c.at("bias") == true);
  CHECK(c.at("epsilon") == 1e-5);
  CHECK(has(error_of(R"({"rows": 8, "hidden": 0, "dtype": "float16"})"), "hidden = 0"));
  CHECK(has(error_of(R"({"rows": 8, "hidden": 65537, "dtype": "float16"})"), "1 … 65536"));
  CHECK(has(error_of(R"({"rows": 0, "hidden": 8, "dtype": "float16"})"), "rows = 0"));
  CHECK(has(error_of(R"({"rows": 8, "hidden": 8, "dtype": "float64"})"), "\"bfloat16\""));
  CHECK(has(error_of(R"({"rows": 8, "hidden": 8, "dtype": "float16", "epsilon": 0})"), "epsilon = 0"));
  CHECK(has(error_of(R"({"rows": 8, "hidden": 8, "dtype": "float16", "weight": 1})"), "true or false"));
  CHECK(has(error_of(R"({"rows": 8, "hiden": 8, "dtype": "float16"})"), "hiden"));
  CHECK(has(error_of(R"({"rows": 8, "dtype": "float16"})"), "hidden = (missing)"));
  CHECK(error_of(R"({"rows": 8, "hidden": 8, "dtype": "float16"})").empty());
}

namespace {
// Every BANDJIT_ROW_* value the environment parser allows (runtime/kernel_cache.cpp), and 0
// (weights ahead: 0, 1, 4 and 8 pieces).
std::vector<Tuning> all_tunings() {
  std::vector<Tuning> out;
  for (int pieces : {0, 1, 2, 4, 8})
    for (int registers : {0, 16, 32, 64})
      for (int block : {0, 128, 256, 512, 1024})
        for (int waves : {0, 1, 2, 4, 8, 16})
          for (int prefetch : {0, 1, 2})
            for (int sums : {0, 1, 2}) {
              if ((prefetch || sums) && waves > 2) continue;  // the switches × fewer grids: keeps the test quick
              Tuning t;
              t.row_pieces = pieces, t.row_registers = registers, t.row_block_threads = block, t.row_waves = waves;
              t.row_prefetch = prefetch, t.row_register_sums = sums;
              out.push_back(t);
              if (sums == 0 && waves <= 2) {  // the backward's weights held in registers
                t.row_hold_weights = 2;
                out.push_back(t);
                t.row_hold_weights = 0, t.row_pairs = 2;  // the forward's row pairs
                out.push_back(t);
                for (int vec_bytes : {4, 8, 16})  // the forward's piece width, and weights ahead (value + 1)
                  for (int ahead : {1, 2, 9}) {
                    t.row_vec_bytes = vec_bytes, t.row_weight_ahead = ahead;
                    out.push_back(t);
                  }
                t.row_pairs = 0, t.row_weight_ahead = 1 + 4;
                out.push_back(t);
                for (int ring : {1, 3, 9}) {  // the forward's weight ring (value + 1), with weights ahead asked too,
                  t.row_weight_ring = ring;      // in 16-byte pieces and 8-byte ones, with row pairs off and on
                  out.push_back(t);
                  t.row_vec_bytes = 8;
                  out.push_back(t);
                  t.row_pairs = 2;
                  out.push_back(t);
                  t.row_vec_bytes = 16, t.row_pairs = 0;
                }
                t.row_weight_ring = 0;
              }
            }
  return out;
}

void check_tiling(std::int64_t rows, int hidden, DType dt, bool backward, bool weight, bool bias, const Tuning& tuning) {
  const auto t = layer_norm_tiling(rows, hidden, dt, backward, weight, bias, tuning);
  INFO("hidden " << hidden << " dtype " << to_string(dt) << (backward ? " backward" : " forward") << " rows " << rows
                 << " pieces " << tuning.row_pieces << " registers " << tuning.row_registers << " block "
                 << tuning.row_block_threads << " waves " << tuning.row_waves << " prefetch " << tuning.row_prefetch
                 << " register sums " << tuning.row_register_sums << " vec bytes " << tuning.row_vec_bytes
                 << " ahead + 1 " << tuning.row_weight_ahead << " ring + 1 " << tuning.row_weight_ring);
  const int size = static_cast<int>(element_size(dt));
  // Two-row units exactly where two 16-bit rows make a 16-byte multiple and one does not,
  // unless the unit would need a cluster or chunks.
  const bool eligible = size == 2 && hidden % 8 == 4 && rows % 2 == 0 &&
                        (tuning.row_bundle ? tuning.row_bundle == 2 : !backward);
  if (t.row_bundle == 2) {
    CHECK((eligible && t.cluster_blocks == 1 && t.chunks == 1));
  } else {
    CHECK(t.row_bundle == 1);
    if (eligible) {
      const auto unit = layer_norm_tiling(rows / 2, 2 * hidden, dt, backward, weight, bias, tuning);
      CHECK((unit.cluster_blocks > 1 || unit.chunks > 1));
    }
  }
  const int width = hidden * t.row_bundle;  // elements of a unit
  CHECK(t.vec * t.pieces == width);
  CHECK(t.vec * size <= 16);
  CHECK((t.row_threads & (t.row_threads - 1)) == 0);
  CHECK(t.row_threads <= (tuning.row_block_threads ? tuning.row_block_threads : backward ? 1024 : 512));
  if (tuning.row_block_threads) CHECK(t.threads == tuning.row_block_threads);
  // ≤ 64 registers a thread; prefetching ≤ 85 where the block size allows (768 threads an SM).
  CHECK(t.min_blocks == std::max(1, (t.prefetch ? 768 : 1024) / t.threads));
  if (t.row_set == 2)
    CHECK((!backward && t.chunks == 1 && !t.prefetch && t.row_bundle == 1 && tuning.row_pairs == 2));
  else
    CHECK(t.row_set == 1);
  if (t.prefetch) CHECK((t.chunks == 1 && t.cluster_blocks == 1 && tuning.row_prefetch == 2));
  if (t.register_sums) CHECK((backward && t.chunks == 1 && (weight || bias)));
  if (t.hold_weights)
    CHECK((backward && weight && t.chunks == 1 && t.cluster_blocks == 1 && t.row_bundle == 1 && tuning.row_hold_weights == 2));
  if (!backward && tuning.row_vec_bytes && t.row_bundle == 1) CHECK(t.vec * size <= tuning.row_vec_bytes);
  if (t.row_bundle == 2) CHECK(t.vec * size == 16);  // what a unit is for (the template asserts it)
  if (t.weight_ahead)
    CHECK((!backward && t.chunks == 1 && (weight || bias) && t.weight_ring == 0 &&
           t.weight_ahead == std::min(tuning.row_weight_ahead - 1, t.pieces_per_thread)));
  else
    CHECK((backward || t.chunks > 1 || !(weight || bias) || tuning.row_weight_ahead <= 1 || t.weight_ring > 0));
  // The ring (templates/layer_norm.cuh takes it for one row a unit and a set in registers,
  // without prefetch, in 4-float quads): its slots after the scratch, as many as asked unless
  // the thread's pieces or the room run out; the room: sm_80's 160 KiB a block and the launch
  // bounds' blocks' share of an sm_90 SM (227 KiB, 1 KiB reserved a block).
  if (t.weight_ring) {
    CHECK((!backward && t.chunks == 1 && (weight || bias) && t.row_set == 1 && t.row_bundle == 1 && !t.prefetch &&
           t.vec % 4 == 0));
    const std::uint32_t slot = 2u * t.threads * t.vec * 4;
    CHECK(t.shared_bytes == layer_norm_scratch_bytes(t.threads, t.cluster_blocks) + std::uint32_t(t.weight_ring) * slot);
    CHECK(t.shared_bytes <= 160 * 1024);
    CHECK(std::int64_t(t.min_blocks) * (t.shared_bytes + 1024) <= 227 * 1024);
    const bool more_fit = t.shared_bytes + slot <= 160 * 1024 &&
                          std::int64_t(t.min_blocks) * (t.shared_bytes + slot + 1024) <= 227 * 1024;
    CHECK((t.weight_ring == tuning.row_weight_ring - 1 || t.weight_ring == t.pieces_per_thread || !more_fit));
    CHECK(t.weight_ring <= std::min(tuning.row_weight_ring - 1, t.pieces_per_thread));
  } else if (!backward && t.chunks == 1 && (weight || bias) && t.row_set == 1 && t.row_bundle == 1 && !t.prefetch &&
             t.vec % 4 == 0) {
    CHECK(tuning.row_weight_ring <= 1);
  }
  if (tuning.row_prefetch == 1) CHECK_FALSE(t.prefetch);
  if (tuning.row_register_sums == 1) CHECK_FALSE(t.register_sums);
  const std::int64_t slice = t.pieces / t.cluster_blocks;  // pieces a block holds
  CHECK(slice * t.cluster_blocks == t.pieces);
  CHECK(std::int64_t(t.row_threads) * t.pieces_per_thread * t.chunks >= slice);
  CHECK(std::int64_t(t.row_threads) * t.pieces_per_thread * (t.chunks - 1) < slice);  // no empty chunk
  if (t.cluster_blocks > 1) CHECK((t.rows_per_block == 1 && t.chunks == 1 && t.blocks % t.cluster_blocks == 0));
  CHECK(t.cluster_blocks <= 8);
  // Registers of raw row data (backward: dy and x; row pairs: both rows).
  if (tuning.row_registers) {
    const int piece_registers = std::max(1, t.vec * size / 4) * (backward ? 2 : 1) * t.row_set;
    CHECK(t.pieces_per_thread * piece_registers <= std::max(tuning.row_registers, piece_registers));
  } else {
    CHECK(t.pieces_per_thread * t.vec * t.row_set <= (backward ? 16 : 32));  // elements a thread holds (64 registers)
  }
  CHECK(t.threads == t.row_threads * t.rows_per_block);
  CHECK(t.threads % 32 == 0);
  CHECK(t.threads <= 1024);
  CHECK(t.shared_bytes <= 160 * 1024 + 1024);
  const std::int64_t rows_per_block = std::int64_t(t.rows_per_block) * t.row_iterations * t.row_set;
  const std::int64_t units = rows / t.row_bundle;
  const std::int64_t row_blocks = t.blocks / t.cluster_blocks;
  CHECK(row_blocks * rows_per_block >= units);
  CHECK((row_blocks - 1) * rows_per_block < units);  // no block without rows
  CHECK(t.blocks <= 2147483647);
  // The widest piece that divides, up to 16 bytes or the forward's BANDJIT_ROW_VEC_BYTES.
  const int widest = !backward && tuning.row_vec_bytes && t.row_bundle == 1 ? tuning.row_vec_bytes : 16;
  if (t.vec * size < widest) CHECK(width % (2 * t.vec) != 0);
}
}  // namespace

TEST_CASE("tiling: layer_norm covers every piece and row once within its budgets", "[tiling][layer_norm]") {
  for (int hidden : kHidden)
    for (DType dt : {DType::float32, DType::float16, DType::bfloat16})
      for (bool backward : {false, true})
        for (std::int64_t rows : {std::int64_t(1), std::int64_t(3), std::int64_t(1000), (std::int64_t(1) << 26) / hidden,
                                  std::int64_t(2147483647), std::int64_t(2147483646)}) {
          if (rows < 1) continue;
          const auto t = layer_norm_tiling(rows, hidden, dt, backward, true, true);
          if (t.blocks > 2147483647) {  // one block (cluster) a row: refused by the parameter check
            CHECK(!backward);
            CHECK(has(error_of(fmt::format(R"({{"rows": {}, "hidden": {}, "dtype": "{}"}})", rows, hidden,
                                           to_string(dt))),
                      fmt::format("rows = {}", rows)));
            continue;
          }
          check_tiling(rows, hidden, dt, backward, true, true, Tuning{});
        }
  // Rows that fit the registers stay there: one DRAM pass.
  CHECK(layer_norm_tiling(4096, 16384, DType::float32, true, true, true).chunks == 1);
  for (DType dt : {DType::float32, DType::float16, DType::bfloat16}) {
    const auto f = layer_norm_tiling(1024, 65536, dt, false, true, true);
    CHECK(f.cluster_blocks == 4);
    CHECK(f.threads == 512);
    CHECK(f.chunks == 1);
  }
  // H = 65536 backward: four blocks a row, 16384 columns and their sums each.
  const auto t = layer_norm_tiling(1024, 65536, DType::float16, true, true, true);
  CHECK(t.cluster_blocks == 4);
  CHECK(t.chunks == 1);
  CHECK(t.row_iterations == 35);  // one wave of the 30 clusters of 4 an H200 holds at once
  CHECK(t.blocks == 4 * 30);
}

TEST_CASE("tiling: layer_norm is valid under every BANDJIT_ROW_* setting", "[tiling][layer_norm]") {
  const auto tunings = all_tunings();
  for (int hidden : kHidden)
    for (DType dt : {DType::float32, DType::float16, DType::bfloat16})
      for (bool backward : {false, true})
        for (bool sums : {false, true})
          for (std::int64_t rows : {std::int64_t(1), std::int64_t(1000), (std::int64_t(1) << 26) / hidden})
            for (const Tuning& tuning : tunings) {
              if (rows < 1) continue;
              check_tiling(rows, hidden, dt, backward, sums, sums, tuning);
            }
  // The knobs change what they name: one multi-warp row per 256-thread block at H = 5120 float32.
  Tuning block;
  block.row_block_threads = 256;
  const auto f = layer_norm_tiling(13107, 5120, DType::float32, false, true, true, block);
  CHECK((f.threads == 256 && f.row_threads == 256 && f.rows_per_block == 1 && f.pieces_per_thread == 5));
  // Short rows: at most one piece a thread.
  Tuning one;
  one.row_pieces = 1;
  CHECK(layer_norm_tiling(2097152, 32, DType::float16, false, true, true, one).row_threads == 4);
  CHECK(layer_norm_tiling(2097152, 32, DType::float16, false, true, true).row_threads == 1);
  // Backward waves: more blocks, fewer row groups each.
  Tuning waves;
  waves.row_waves = 4;
  const auto b1 = layer_norm_tiling(13107, 5120, DType::float32, true, true, true);
  const auto b4 = layer_norm_tiling(13107, 5120, DType::float32, true, true, true, waves);
  CHECK(b4.row_iterations < b1.row_iterations);
  CHECK(b4.blocks > b1.blocks);
}

TEST_CASE("generator: layer_norm sources take the arguments their parameters ask for", "[generator][layer_norm]") {
  const Source f = find_family("layer_norm").generate(nlohmann::json::parse(
      R"({"rows": 10, "hidden": 100, "dtype": "float16", "bias": false})"));
  CHECK(f.arguments == std::vector<std::string>{"x", "weight", "y", "mean", "rstd"});
  CHECK(f.argument_alignment == std::vector<std::uint32_t>{16, 16, 16, 4, 4});
  CHECK(has(f.text, "kHidden = 100"));
  CHECK(has(f.text, "bandjit::layer_norm_forward<Cfg>(x, weight, nullptr, y, mean, rstd"));
  const Source b = find_family("layer_norm_backward").generate(nlohmann::json::parse(
      R"({"rows": 10, "hidden": 100, "dtype": "bfloat16", "weight": false})"));
  CHECK(b.arguments == std::vector<std::string>{"dy", "x", "mean", "rstd", "dx", "dbias"});
  CHECK(has(b.text, "#define BANDJIT_USE_BF16"));
  // The parameters that change the code are the cache key's.
  CHECK(b.key_fields.at("weight") == false);
  CHECK(b.key_fields.at("epsilon") == 1e-5);
  const auto names = families_of_set("layer_norm");
  CHECK(names == std::vector<std::string>{"layer_norm", "layer_norm_backward"});
  CHECK(expand_ops("backward", "layer_norm", "") == std::vector<std::string>{"layer_norm_backward"});
}

TEST_CASE("generator: layer_norm's per-size defaults reach the generated source", "[generator][layer_norm]") {
  const auto source = [](const char* family, std::int64_t rows, int hidden, const char* dtype) {
    return find_family(family)
        .generate({{"rows", rows}, {"hidden", hidden}, {"dtype", dtype}, {"weight", true}, {"bias", true}})
        .text;
  };
  // Backward: prefetch where the pieces are uneven or few, float32 H = 100 with its column
  // sums in registers; float32 H = 5120 in 512-thread blocks; none for power-of-two rows.
  const std::string f32_100 = source("layer_norm_backward", 671088, 100, "float32");
  CHECK(has(f32_100, "kPrefetch = true, kRegisterSums = true"));
  CHECK(has(f32_100, "__launch_bounds__(256, 3)"));  // 768 threads an SM while prefetching
  CHECK(has(source("layer_norm_backward", 13107, 5120, "float32"), "kThreads = 512"));
  CHECK(has(source("layer_norm_backward", 4096, 16384, "float16"), "kPrefetch = false, kRegisterSums = false"));
  // 16-bit: one piece a thread at H = 32, 32 registers in 256-thread blocks at H = 768.
  CHECK(has(source("layer_norm_backward", 2097152, 32, "float16"), "kRowThreads = 4, kPiecesPerThread = 1"));
  CHECK(has(source("layer_norm_backward", 87381, 768, "bfloat16"), "kThreads = 256"));
  // Weights held in registers for the prefetching 16-bit rows of ≤ 32 pieces only.
  CHECK(has(source("layer_norm_backward", 671088, 100, "bfloat16"), "kHoldWeights = true"));
  CHECK(has(source("layer_norm_backward", 2097152, 32, "float16"), "kHoldWeights = true"));
  CHECK(has(source("layer_norm_backward", 262144, 256, "float16"), "kHoldWeights = false"));
  CHECK(has(source("layer_norm_backward", 524288, 128, "bfloat16"), "kHoldWeights = false"));
  CHECK(has(source("layer_norm_backward", 87381, 768, "float16"), "kHoldWeights = false"));
  CHECK(has(f32_100, "kHoldWeights = false"));
  // A cluster row never prefetches (H = 12288 float32: uneven, split over blocks).
  const std::string cluster = source("layer_norm_backward", 4096, 12288, "float32");
  CHECK(has(cluster, "kClusterBlocks = 2"));
  CHECK(has(cluster, "kPrefetch = false"));
  // Forward: 16-bit rows of ≥ 640 pieces with 32 registers in 256-thread blocks.
  CHECK(has(source("layer_norm", 13107, 5120, "float16"), "kThreads = 256"));
  CHECK(has(source("layer_norm", 13107, 5120, "float16"), "kPrefetch = false"));
  // Row pairs for 16-bit rows of 128 … 2048 pieces (H = 1024 … 16384), H = 16384 in one
  // 512-thread block; not for shorter rows, float32 or H = 65536.
  CHECK(has(source("layer_norm", 13107, 5120, "float16"), "kRowSet = 2"));
  CHECK(has(source("layer_norm", 65536, 1024, "bfloat16"), "kRowSet = 2"));
  const std::string pairs_16384 = source("layer_norm", 4096, 16384, "float16");
  CHECK(has(pairs_16384, "kRowSet = 2"));
  CHECK(has(pairs_16384, "kThreads = 512"));
  CHECK(has(pairs_16384, "kClusterBlocks = 1"));
  CHECK(has(source("layer_norm", 87381, 768, "float16"), "kRowSet = 1"));
  CHECK(has(source("layer_norm", 16384, 4096, "float32"), "kRowSet = 1"));
  CHECK(has(source("layer_norm", 1024, 65536, "float16"), "kRowSet = 1"));
  CHECK(has(source("layer_norm_backward", 16384, 4096, "float16"), "kRowSet = 1"));
  // Only for an even row count (an odd one's predicated stores spill at H = 16384), and
  // two-row units (16-bit H ≡ 4 mod 8, even rows) keep their own layout: 256-thread blocks.
  CHECK(has(source("layer_norm", 4097, 16384, "float16"), "kRowSet = 1"));
  CHECK(has(source("layer_norm", 4097, 16384, "float16"), "kThreads = 256"));
  CHECK(has(source("layer_norm", 16368, 4100, "float16"), "kRowBundle = 2"));
  CHECK(has(source("layer_norm", 16368, 4100, "float16"), "kThreads = 256"));
  // The forward's 16-bit rows of H ≥ 1024 in 8-byte pieces; float16 rows of H ≥ 16384 load
  // their first piece's weight and bias with the row; shorter rows, bfloat16 and float32 not.
  for (const char* dtype : {"float16", "bfloat16"}) {
    INFO(dtype);
    const bool f16 = std::string(dtype) == "float16";
    for (auto [rows, hidden] : {std::pair{1024, 65536}, {4096, 16384}, {4097, 16384}}) {
      const std::string text = source("layer_norm", rows, hidden, dtype);
      CHECK(has(text, "kVec = 4"));
      CHECK(has(text, "kWeightAhead = 1") == f16);
    }
    for (auto [rows, hidden] : {std::pair{13107, 5120}, {65536, 1024}}) {
      const std::string text = source("layer_norm", rows, hidden, dtype);
      CHECK(has(text, "kVec = 4"));
      CHECK_FALSE(has(text, "kWeightAhead"));
    }
    CHECK(has(source("layer_norm", 87381, 768, dtype), "kVec = 8"));
  }
  CHECK(has(source("layer_norm", 1024, 65536, "float32"), "kVec = 4"));
  CHECK_FALSE(has(source("layer_norm", 1024, 65536, "float32"), "kWeightAhead"));
  // The weight ring: 4 slots for float32 rows of H > 16384 (clusters), none at H = 16384, none
  // for 16-bit rows or the backward.
  CHECK(has(source("layer_norm", 1024, 65536, "float32"), "kWeightRing = 4"));
  CHECK(has(source("layer_norm", 2048, 32768, "float32"), "kWeightRing = 4"));
  CHECK_FALSE(has(source("layer_norm", 4096, 16384, "float32"), "kWeightRing"));
  CHECK_FALSE(has(source("layer_norm", 1024, 65536, "float16"), "kWeightRing"));
  CHECK_FALSE(has(source("layer_norm_backward", 1024, 65536, "float32"), "kWeightRing"));
  // 16-bit H = 100 forward: an even number of rows moves as two-row units in 16-byte pieces,
  // laid out as float32 H = 100 is; an odd number, and the backward, keep 8-byte pieces.
  for (const char* dtype : {"float16", "bfloat16"}) {
    INFO(dtype);
    const std::string even = source("layer_norm", 671088, 100, dtype), odd = source("layer_norm", 671087, 100, dtype);
    CHECK(has(even, "kRowBundle = 2"));
    CHECK(has(even, "kVec = 8"));
    CHECK(has(odd, "kRowBundle = 1"));
    CHECK(has(odd, "kVec = 4"));
    const std::string f32 = source("layer_norm", 671088, 100, "float32");
    CHECK(has(f32, "kRowBundle = 1"));
    const auto layout = [](const std::string& text) { return text.substr(text.find("kRowThreads"), 60); };
    CHECK(layout(even) == layout(f32));
    CHECK(has(source("layer_norm_backward", 671088, 100, dtype), "kRowBundle = 1"));
  }
  // The per-size defaults come from the unit's shape: H = 12 float16 units are 3 pieces of
  // 16 bytes, 2 a thread (≤ 32 bytes), where one row's 3 pieces of 8 bytes took 4 a thread.
  const std::string h12 = source("layer_norm", 1000, 12, "float16");
  CHECK(has(h12, "kRowBundle = 2"));
  CHECK(has(h12, "kRowThreads = 2, kPiecesPerThread = 2"));
  // BANDJIT_ROW_BUNDLE=0 keeps one row a unit, =1 gives the backward units too; every tiling
  // stays valid either way.
  Tuning off, on;
  off.row_bundle = 1, on.row_bundle = 2;
  for (bool backward : {false, true}) {
    const auto t = layer_norm_tiling(671088, 100, DType::float16, backward, true, true, off);
    CHECK((t.row_bundle == 1 && t.vec == 4));
    const auto u = layer_norm_tiling(671088, 100, DType::bfloat16, backward, true, true, on);
    CHECK((u.row_bundle == 2 && u.vec == 8));
    for (const Tuning& tuning : {off, on, Tuning{}}) {
      check_tiling(671088, 100, DType::float16, backward, true, true, tuning);
      check_tiling(1000, 12, DType::bfloat16, backward, true, false, tuning);
      check_tiling(999, 12, DType::float16, backward, false, true, tuning);
    }
  }
}

namespace {
// A staged backward layout covers every column and row once and fits an SM.
void check_staged(std::int64_t rows, int hidden, DType dt, const LayerNormStagedTiling& t) {
  INFO("rows " << rows << " hidden " << hidden << " " << to_string(dt));
  const int size = static_cast<int>(element_size(dt));
  CHECK(t.vec * size == 16);
  CHECK(std::int64_t(t.pieces_per_thread) * t.threads * t.vec * t.cluster_blocks == hidden);
  CHECK(t.threads % 32 == 0);
  CHECK(t.threads <= 512);
  CHECK(t.pieces_per_thread * t.vec <= (t.overlap ? (size == 2 ? 16 : 8) : 32));
  CHECK((t.stages >= 2 && t.stages <= 8));
  CHECK(t.shared_bytes <= 227u * 1024);
  CHECK(t.shared_bytes >= std::uint32_t(t.stages) * 2 * (hidden / t.cluster_blocks) * size);
  CHECK(t.blocks % t.cluster_blocks == 0);
  const std::int64_t clusters = t.blocks / t.cluster_blocks;
  CHECK(clusters * t.row_iterations >= rows);
  CHECK((clusters - 1) * t.row_iterations < rows);
}
}  // namespace

TEST_CASE("tiling: layer_norm_backward's staged kernel (sm_90 bulk copies)", "[tiling][layer_norm]") {
  // The defaults (the H200 measurements): 16-bit rows from H = 5120 on, overlapped from 16384;
  // float32 rows from 16384 on, overlapped where a layout exists.
  for (DType dt : {DType::float16, DType::bfloat16}) {
    CHECK(!layer_norm_staged_tiling(16384, 4096, dt).staged);
    CHECK(layer_norm_staged_tiling(13107, 5120, dt).staged);
    CHECK(!layer_norm_staged_tiling(13107, 5120, dt).overlap);
    CHECK(layer_norm_staged_tiling(1024, 65536, dt).overlap);
  }
  CHECK(!layer_norm_staged_tiling(8192, 8192, DType::float32).staged);
  CHECK(layer_norm_staged_tiling(4096, 16384, DType::float32).overlap);
  CHECK(layer_norm_staged_tiling(1024, 65536, DType::float32).staged);
  CHECK(!layer_norm_staged_tiling(1024, 65536, DType::float32).overlap);  // no overlapped layout
  Tuning off, on;
  off.row_staged = 1, on.row_staged = 2;
  // The layouts of issue 7's long rows: overlapped, 512 threads of 16 elements in clusters of
  // two (16-bit H = 16384) and eight (65536), four stages; float32 H = 65536 has no overlapped
  // layout (8 elements a thread would take 1024 threads): 256 threads of 32 elements, clusters
  // of eight; 320 threads at 5120, not overlapped.
  const auto h16k = layer_norm_staged_tiling(4096, 16384, DType::float16);
  CHECK((h16k.overlap && h16k.cluster_blocks == 2 && h16k.threads == 512 && h16k.pieces_per_thread == 2));
  CHECK((h16k.stages == 4 && h16k.row_iterations == 63 && h16k.blocks == 2 * 66));
  const auto h64k = layer_norm_staged_tiling(1024, 65536, DType::bfloat16);
  CHECK((h64k.overlap && h64k.cluster_blocks == 8 && h64k.threads == 512 && h64k.pieces_per_thread == 2));
  CHECK((h64k.stages == 4 && h64k.row_iterations == 69 && h64k.blocks == 8 * 15));  // one wave: the 15 clusters of 8 an H200 holds
  const auto f64k = layer_norm_staged_tiling(1024, 65536, DType::float32, on);
  CHECK((!f64k.overlap && f64k.cluster_blocks == 8 && f64k.threads == 256 && f64k.pieces_per_thread == 8));
  CHECK(f64k.stages == 3);
  Tuning no_overlap;  // float32 without overlap takes 256-thread blocks whether asked or fallen back to
  no_overlap.row_overlap = 1;
  const auto f64k_plain = layer_norm_staged_tiling(1024, 65536, DType::float32, no_overlap);
  CHECK((!f64k_plain.overlap && f64k_plain.threads == 256 && f64k_plain.cluster_blocks == 8));
  const auto f16k = layer_norm_staged_tiling(4096, 16384, DType::float32);
  CHECK((f16k.overlap && f16k.cluster_blocks == 4 && f16k.threads == 512 && f16k.pieces_per_thread == 2));
  const auto h5k = layer_norm_staged_tiling(13107, 5120, DType::float16);
  CHECK((h5k.cluster_blocks == 1 && h5k.threads == 320 && h5k.pieces_per_thread == 2 && h5k.stages == 4));
  CHECK(h5k.row_iterations == 100);
  // Switched: off everywhere; on wherever a layout exists: rows of 16-byte multiples with whole
  // warps of whole pieces (not 16-bit H = 100: 200-byte rows; not H = 32: four pieces).
  CHECK(!layer_norm_staged_tiling(4096, 16384, DType::float16, off).staged);
  CHECK(!layer_norm_staged_tiling(671088, 100, DType::float16, on).staged);
  CHECK(!layer_norm_staged_tiling(1000, 32, DType::float16, on).staged);
  CHECK(layer_norm_staged_tiling(1000, 768, DType::float16, on).threads == 96);
  for (int hidden : kHidden)
    for (DType dt : {DType::float32, DType::float16, DType::bfloat16})
      for (std::int64_t rows : {std::int64_t(1), std::int64_t(1000), std::int64_t(67108864) / hidden}) {
        const auto t = layer_norm_staged_tiling(rows, hidden, dt, on);
        if (t.staged) check_staged(rows, hidden, dt, t);
      }
  // BANDJIT_ROW_BLOCK_THREADS sets the block exactly (16-bit H = 16384 in 256 threads: four
  // slices of 16 elements a thread overlapped, two of 32 not; or the register kernel where
  // none fits), BANDJIT_ROW_WAVES the waves, BANDJIT_ROW_STAGES the stages where they fit.
  Tuning threads = on, waves = on, plain = on, stages = on;
  threads.row_block_threads = 256, waves.row_waves = 4;
  const auto t256 = layer_norm_staged_tiling(4096, 16384, DType::float16, threads);
  CHECK((t256.staged && t256.overlap && t256.threads == 256 && t256.pieces_per_thread == 2 && t256.cluster_blocks == 4));
  plain.row_block_threads = 256, plain.row_overlap = 1;
  const auto p256 = layer_norm_staged_tiling(4096, 16384, DType::float16, plain);
  CHECK((p256.staged && !p256.overlap && p256.threads == 256 && p256.pieces_per_thread == 4 && p256.cluster_blocks == 2));
  CHECK(layer_norm_staged_tiling(4096, 16384, DType::float16, waves).row_iterations == 16);
  stages.row_stages = 8;  // 8 × 32 KiB of a cluster of two's slices do not fit; of four they do
  const auto s8 = layer_norm_staged_tiling(4096, 16384, DType::float16, stages);
  CHECK((s8.stages == 8 && s8.cluster_blocks == 4 && s8.shared_bytes <= 227u * 1024));
  // A register-kernel knob alone means the register kernel (a sweep of it measures it), and
  // the staged block stays within 512 threads.
  Tuning prefetch, wide = on;
  prefetch.row_prefetch = 2, wide.row_block_threads = 1024;
  CHECK(!layer_norm_staged_tiling(4096, 16384, DType::float16, prefetch).staged);
  CHECK(!layer_norm_staged_tiling(4096, 16384, DType::float16, wide).staged);
}

TEST_CASE("tiling: a clustered layer_norm block's shared memory holds the mailbox", "[tiling][layer_norm]") {
  // Shape::kScratch in templates/layer_norm.cuh: 2 floats a warp rounded to 4, 4 cluster
  // slots, and with a cluster the mailbox of cluster.cuh: two 8-byte barriers and two float2
  // slots a block of the cluster (256 threads: 16 + 4 floats; a cluster of 4: 16 + 64 bytes).
  CHECK(layer_norm_scratch_bytes(256, 1) == 80);
  CHECK(layer_norm_scratch_bytes(256, 4) == 80 + 16 + 2 * 4 * 8);
  CHECK(layer_norm_scratch_bytes(96, 2) == (8 + 4) * 4 + 16 + 2 * 2 * 8);
  // The 16-bit forward at H = 65536 as generated (issue 7): a row a cluster of 4 blocks of
  // 256 threads, no weight ring.
  const Source s = find_family("layer_norm")
                       .generate({{"rows", 1024}, {"hidden", 65536}, {"dtype", "float16"}, {"weight", true}, {"bias", true}});
  CHECK(has(s.text, "kRowsPerBlock = 1, kThreads = 256"));
  CHECK(has(s.text, "kClusterBlocks = 4"));
  CHECK(s.launch.shared_bytes == 160);
}

TEST_CASE("generator: the staged backward reaches the sm_90a build only", "[generator][layer_norm]") {
  const Source s = find_family("layer_norm_backward")
                       .generate({{"rows", 1024}, {"hidden", 65536}, {"dtype", "float16"}, {"weight", true}, {"bias", true}});
  const auto t = layer_norm_staged_tiling(1024, 65536, DType::float16);
  CHECK(s.arch_specific);
  CHECK(has(s.text, "bandjit::layer_norm_backward_overlapped<StagedCfg>(dy, x, mean, rstd, weight, dx, dweight, dbias"));
  CHECK(has(s.text, "#define BANDJIT_LN_ENTRY __cluster_dims__(8, 1, 1) __launch_bounds__(512, 1)"));
  // Not overlapped (16-bit H = 5120): the staged kernel of layer_norm_staged.cuh.
  const Source h5k = find_family("layer_norm_backward")
                         .generate({{"rows", 13107}, {"hidden", 5120}, {"dtype", "float16"}, {"weight", true}, {"bias", true}});
  CHECK(has(h5k.text, "bandjit::layer_norm_backward_staged<StagedCfg>(dy, x, mean, rstd, weight, dx, dweight, dbias"));
  CHECK(has(h5k.text, "static constexpr bool kOverlap = false;"));
  const LaunchShape l90 = launch_for(s, "sm_90"), l80 = launch_for(s, "sm_80"), l100 = launch_for(s, "sm_100");
  CHECK((l90.grid[0] == t.blocks && l90.block[0] == 512 && l90.shared_bytes == t.shared_bytes));
  CHECK((l80.grid[0] == s.launch.grid[0] && l80.block[0] == s.launch.block[0] && l80.shared_bytes == s.launch.shared_bytes));
  CHECK((l100.grid[0] == s.launch.grid[0] && l100.block[0] == 1024));  // the register kernel's
  CHECK(l80.block[0] == 1024);
  // Only sm_90 has the arch-specific build; a plain sm_90 build of the source stops.
  CHECK(arch_specific_target("sm_90") == "sm_90a");
  CHECK(arch_specific_target("sm_100").empty());
  CHECK(has(s.text, "__CUDA_ARCH__ == 900 && !defined(__CUDA_ARCH_FEAT_SM90_ALL)\n#error"));
  // Not staged: one kernel for every target, as before.
  const Source h100 = find_family("layer_norm_backward")
                          .generate({{"rows", 671088}, {"hidden", 100}, {"dtype", "float16"}, {"weight", true}, {"bias", true}});
  CHECK(!h100.arch_specific);
  CHECK(!has(h100.text, "StagedCfg"));
}
