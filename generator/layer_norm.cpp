// layer_norm and layer_norm_backward: templates/layer_norm.cuh instantiated for one problem.
#include "generator/layer_norm.hpp"

#include <algorithm>
#include <tuple>

#include <fmt/format.h>

#include "bandjit/errors.hpp"
#include "generator/tile_config.hpp"

namespace bandjit {
namespace {

using nlohmann::json;

// The backward's grid is one wave of resident blocks on kAssumedSms SMs (tile_config.hpp):
// every block then adds its column sums once; on a GPU with fewer SMs the grid is a little
// over one wave (correct, a little slower).
constexpr std::uint32_t kSharedBudget = 160 * 1024;  // column sums per block (A100: 163 KiB)

int next_pow2(std::int64_t n) {
  int p = 1;
  while (p < n) p *= 2;
  return p;
}

std::int64_t ceil_div64(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

// V: the widest power of two with V · sizeof ≤ 16 bytes that divides H (every piece aligned).
int piece_vec(int hidden, DType dtype) {
  int vec = 16 / static_cast<int>(element_size(dtype));
  while (hidden % vec != 0) vec /= 2;
  return vec;
}


// Threads (at most `most_threads` a row, a power of two), rows per block and pieces per
// thread for rows of `pieces` pieces: the fewest threads with at most `warp_pieces` each when
// that is a warp or less, else at least a warp with at most `long_pieces` each.
// `block_threads` (0: 256, or the row's threads if more) is the block size.
void spread(LayerNormTiling& t, std::int64_t pieces, int warp_pieces, int long_pieces, int most_threads,
            int block_threads) {
  const std::int64_t warp_threads = ceil_div64(pieces, warp_pieces);
  t.row_threads = warp_threads <= 32 ? next_pow2(warp_threads)
                                     : std::max(32, next_pow2(ceil_div64(pieces, long_pieces)));
  t.row_threads = std::min(most_threads, t.row_threads);
  t.pieces_per_thread = static_cast<int>(ceil_div64(pieces, t.row_threads));
  t.threads = block_threads ? block_threads : std::max(256, t.row_threads);
  t.rows_per_block = t.threads / t.row_threads;
}

}  // namespace

namespace {
LayerNormTiling row_tiling(std::int64_t rows, int hidden, DType dtype, bool backward, bool weight, bool bias,
                           const Tuning& tuning) {
  LayerNormTiling t;
  const int size = static_cast<int>(element_size(dtype));
  t.vec = piece_vec(hidden, dtype);
  if (!backward && tuning.row_vec_bytes) t.vec = std::max(1, std::min(t.vec, tuning.row_vec_bytes / size));
  t.pieces = hidden / t.vec;
  // Pieces a thread aims to hold, and the most it may hold: 32 elements (64 registers at
  // 1024 threads); the backward holds dy and x and keeps 16 of each. Tuning::row_registers
  // replaces the latter by registers of raw row data (a piece narrower than 4 bytes still
  // takes one), and then longer rows take the fewest threads (at least a warp) within it;
  // Tuning::row_pieces replaces the target of rows a warp holds.
  const int target = backward ? 2 : 4, most_elements = backward ? 16 : 32;
  const int piece_registers = std::max(1, t.vec * size / 4) * (backward ? 2 : 1);
  // The forward's row pairs (Tuning::row_pairs) hold two rows: half of that for each.
  auto on = [](int knob, bool otherwise) { return knob ? knob == 2 : otherwise; };
  const int rows_at_once = !backward && on(tuning.row_pairs, false) ? 2 : 1;
  const int most_pieces = std::max(1, (tuning.row_registers ? tuning.row_registers / piece_registers
                                                            : most_elements / t.vec) / rows_at_once);
  const int warp_pieces = std::min(most_pieces, tuning.row_pieces ? tuning.row_pieces : target);
  const int long_pieces = tuning.row_registers ? most_pieces : warp_pieces;
  // The forward's rows take at most 512 threads, so that two blocks share an SM and one's
  // reductions overlap the other's loads; the backward's column sums want whole rows a block.
  // Tuning::row_block_threads sets the block size, and so the most threads a row (a cluster
  // block) takes.
  const int most_threads = tuning.row_block_threads ? tuning.row_block_threads : backward ? 1024 : 512;
  const int sums = backward ? int(weight) + int(bias) : 0;
  auto column_bytes = [&] {
    return static_cast<std::uint32_t>(t.rows_per_block) * (hidden / t.cluster_blocks) * sums * 4;
  };
  auto fits = [&] { return t.pieces_per_thread <= most_pieces && column_bytes() <= kSharedBudget; };
  auto spread_over = [&](std::int64_t pieces) {
    spread(t, pieces, warp_pieces, long_pieces, most_threads, tuning.row_block_threads);
  };
  spread_over(t.pieces);
  // A row too long for one block: split over a cluster (sm_90; elsewhere each block also
  // reads the other slices), else walk it in chunks.
  for (int cb = 2; !fits() && cb <= 8; cb *= 2) {
    if (hidden % (cb * t.vec) != 0) break;
    t.cluster_blocks = cb;
    spread_over(t.pieces / cb);
    if (t.rows_per_block > 1) {  // a cluster's blocks hold one row (Tuning::row_block_threads above the row's)
      t.row_threads = t.threads;
      t.rows_per_block = 1;
      t.pieces_per_thread = static_cast<int>(ceil_div64(t.pieces / cb, t.row_threads));
    }
  }
  if (!fits()) {
    t.cluster_blocks = 1;
    spread_over(t.pieces);
    t.pieces_per_thread = std::min(long_pieces, most_pieces);
    t.chunks = static_cast<int>(ceil_div64(t.pieces, std::int64_t(t.row_threads) * t.pieces_per_thread));
    if (t.chunks == 1) {
      // Only the column sums did not fit (BANDJIT_ROW_* settings with many rows a block):
      // two chunks, whose backward adds row by row instead of through shared memory.
      t.pieces_per_thread = static_cast<int>(ceil_div64(ceil_div64(t.pieces, t.row_threads), 2));
      t.chunks = 2;
    }
  }
  const bool one_chunk = t.chunks == 1;
  if (rows_at_once == 2 && !one_chunk) {  // pairs only in registers: this row alone
    Tuning alone = tuning;
    alone.row_pairs = 1;
    return row_tiling(rows, hidden, dtype, backward, weight, bias, alone);
  }
  // Never with clusters: a cluster's rows prefetched measured slower (H = 65536 float16
  // backward in 512-thread blocks: 46 → 35 %, bench/results/2026-12-01-issue-7/final/sweep-ln;
  // the forward 65 → 55 % at best, 2026-12-03-layer-norm-row-pairs); never with row pairs
  // (they hold two rows already).
  t.prefetch = one_chunk && t.cluster_blocks == 1 && rows_at_once == 1 && on(tuning.row_prefetch, false);
  // Column sums in registers by default where they take ≤ 16 floats a thread: float32 rows,
  // and 16-bit rows of ≤ 8 pieces, in blocks of ≤ 512 threads and no cluster (longer 16-bit
  // rows, and 1024-thread blocks at 64 registers, then spill on sm_80 and sm_90).
  const bool small_sums = t.pieces_per_thread * t.vec * sums <= 16 && (size == 4 || t.pieces <= 8) &&
                          t.threads <= 512 && t.cluster_blocks == 1;  // (clusters: never measured; spill on sm_80)
  t.register_sums = backward && one_chunk && sums > 0 && on(tuning.row_register_sums, small_sums);
  t.hold_weights = backward && weight && one_chunk && t.cluster_blocks == 1 && on(tuning.row_hold_weights, false);
  // Row pairs: each weight and bias read once for both rows.
  t.row_set = rows_at_once;
  t.weight_ahead = !backward && one_chunk && (weight || bias) && tuning.row_weight_ahead
                       ? std::min(tuning.row_weight_ahead - 1, t.pieces_per_thread)  // as the template clamps it
                       : 0;
  t.shared_bytes = layer_norm_scratch_bytes(t.threads, t.cluster_blocks) + (one_chunk ? column_bytes() : 0);
  // The ring (templates/layer_norm.cuh; it replaces the weights ahead): at most the thread's
  // pieces, within the budget a block has on sm_80 and so that the launch bounds' blocks share
  // an sm_90 SM's 227 KiB (1 KiB reserved a block; GPUs with less shared memory then hold
  // fewer blocks an SM).
  if (!backward && one_chunk && rows_at_once == 1 && !t.prefetch && (weight || bias) &&
      t.vec % 4 == 0 && tuning.row_weight_ring > 1) {
    const std::uint32_t slot = 2u * t.threads * t.vec * 4, blocks = std::max(1, 1024 / t.threads);
    const std::uint32_t budget = std::min(227u * 1024 / blocks - 1024, kSharedBudget);
    const std::uint32_t room = budget > t.shared_bytes ? (budget - t.shared_bytes) / slot : 0;
    t.weight_ring = std::min<int>({tuning.row_weight_ring - 1, t.pieces_per_thread, static_cast<int>(room)});
    if (t.weight_ring > 0) t.weight_ahead = 0, t.shared_bytes += t.weight_ring * slot;
  }
  // ≤ 64 registers a thread, 1024 threads an SM at least; prefetching holds two rows' pieces:
  // ≤ 85 registers (768 threads) where the block size allows it.
  t.min_blocks = std::max(1, (t.prefetch ? 768 : 1024) / t.threads);
  const std::int64_t groups = ceil_div64(rows, std::int64_t(t.rows_per_block) * t.row_set);
  if (!backward && !t.prefetch) {
    t.blocks = groups * t.cluster_blocks;
    return t;
  }
  // The backward (and a prefetching forward) take row groups in turn: one wave of blocks, or
  // of the clusters the GPU holds at once (assumed_clusters_at_once: 30 of 4 on the H200;
  // float32 H = 65536, four waves of them 66 % of the copy bandwidth, one 72 %,
  // bench/results/2026-12-02-layer-norm-staged); the forward two waves of the blocks its
  // launch bounds guarantee. Tuning::row_waves sets the waves in every case.
  const int resident = std::max(1, std::min<int>(t.min_blocks, (227 * 1024) / (t.shared_bytes + 1024)));
  const int waves = tuning.row_waves ? tuning.row_waves : !backward ? 2 : 1;
  const std::int64_t per_wave = backward && t.cluster_blocks > 1 ? assumed_clusters_at_once(t.cluster_blocks)
                                                                  : std::int64_t(kAssumedSms) * resident / t.cluster_blocks;
  t.row_iterations = static_cast<int>(ceil_div64(groups, std::max<std::int64_t>(1, per_wave) * waves));
  t.blocks = ceil_div64(groups, t.row_iterations) * t.cluster_blocks;
  return t;
}
}  // namespace

bool layer_norm_wants_units(std::int64_t rows, int hidden, DType dtype, bool backward, const Tuning& tuning) {
  const bool on = tuning.row_bundle ? tuning.row_bundle == 2 : !backward;
  return on && element_size(dtype) == 2 && hidden % 8 == 4 && rows % 2 == 0;
}

LayerNormTiling layer_norm_tiling(std::int64_t rows, int hidden, DType dtype, bool backward, bool weight, bool bias,
                                  const Tuning& tuning) {
  // A 16-bit row of H ≡ 4 (mod 8) elements is 8 bytes short of a 16-byte multiple: alone it
  // moves in 8-byte pieces, two of them in 16-byte ones (templates/layer_norm.cuh, kRowBundle).
  // So an even number of such rows is tiled as rows / 2 rows of 2H, where that keeps one block
  // a unit, in registers. Measured on the H200 at H = 100 (bench/results/2026-12-02-row-units):
  // the forward 76 → 83 % of the copy bandwidth (bfloat16 73 → 82 %), the backward 79 → 71 %
  // (74 % at best over eleven layouts), so by default only the forward takes units.
  // Tuning::row_bundle off (BANDJIT_ROW_BUNDLE=0) keeps one row a unit, on gives the backward
  // units too.
  if (layer_norm_wants_units(rows, hidden, dtype, backward, tuning)) {
    Tuning unit_tuning = tuning;
    unit_tuning.row_pairs = 1;  // units or pairs, not both (pairs take one row a unit)
    unit_tuning.row_vec_bytes = 0;  // a unit exists for its 16-byte pieces (BANDJIT_ROW_VEC_BYTES: one-row units)
    unit_tuning.row_weight_ring = 1;  // nor the ring: the template takes it for one row a unit
    LayerNormTiling t = row_tiling(rows / 2, 2 * hidden, dtype, backward, weight, bias, unit_tuning);
    if (t.cluster_blocks == 1 && t.chunks == 1) {
      t.row_bundle = 2;
      t.hold_weights = false;  // a unit's two rows read each weight at two positions
      return t;
    }
  }
  return row_tiling(rows, hidden, dtype, backward, weight, bias, tuning);
}

namespace {
// The forward's grid has a block (a cluster) per row group: rows beyond 2^31 − 1 blocks are refused.
void check_layer_norm_params(const json& p, const std::string& where) {
  const std::int64_t rows = p.at("rows").get<std::int64_t>();
  const int hidden = p.at("hidden").get<int>();
  const auto t = layer_norm_tiling(rows, hidden, dtype_of(p), false, p.at("weight").get<bool>(), p.at("bias").get<bool>());
  const std::int64_t most = std::int64_t(2147483647) / t.cluster_blocks * t.rows_per_block * t.row_bundle;
  if (rows > most)
    bad_params("layer_norm", where, "rows", std::to_string(rows),
               fmt::format("1 … {} for hidden {} ({} blocks a row)", most, hidden, t.cluster_blocks));
}
}  // namespace

const std::vector<ParamSpec>& layer_norm_params() {
  using Type = ParamSpec::Type;
  static const std::vector<ParamSpec> specs = {
      {"rows", Type::integer, 1, 2147483647.0, {}, json(), "rows of x (all leading dimensions flattened)"},
      {"hidden", Type::integer, 1, 65536, {}, json(), "H, elements per row (the normalised dimension)"},
      dtype_param("x, y, dy, dx; weight, bias, mean, rstd and their gradients are float32"),
      {"weight", Type::boolean, 0, 0, {}, true, "a float32 weight [H] (gamma); the backward adds to dweight"},
      {"bias", Type::boolean, 0, 0, {}, true, "a float32 bias [H] (beta); the backward adds to dbias"},
      {"epsilon", Type::number, 1e-30, 1.0, {}, 1e-5, "added to the biased variance before the square root"},
  };
  return specs;
}

namespace {

std::string cfg_text(const json& p, const LayerNormTiling& t) {
  return fmt::format(
      "struct Cfg {{\n"
      "  using T = {type};\n"
      "  static constexpr bandjit::i64 kRows = {rows};\n"
      "  static constexpr int kHidden = {hidden};\n"
      "  static constexpr bool kWeight = {weight}, kBias = {bias};\n"
      "  static constexpr float kEpsilon = {eps};\n"
      "  static constexpr int kVec = {vec}, kRowThreads = {r}, kPiecesPerThread = {nv}, kChunks = {ch};\n"
      "  static constexpr int kRowsPerBlock = {rpb}, kThreads = {threads}, kRowIterations = {iter};\n"
      "  static constexpr int kClusterBlocks = {cb}, kRowBundle = {bundle};\n"
      "  static constexpr bool kPrefetch = {pf}, kRegisterSums = {rs}, kHoldWeights = {hw};\n"
      "  static constexpr int kRowSet = {set};\n"
      "{wp}"
      "}};\n\n",
      fmt::arg("type", cuda_type(dtype_of(p))), fmt::arg("rows", p.at("rows").get<std::int64_t>()),
      fmt::arg("hidden", p.at("hidden").get<int>()), fmt::arg("weight", p.at("weight").get<bool>()),
      fmt::arg("bias", p.at("bias").get<bool>()), fmt::arg("eps", float_literal(p.at("epsilon").get<double>())),
      fmt::arg("vec", t.vec), fmt::arg("r", t.row_threads), fmt::arg("nv", t.pieces_per_thread),
      fmt::arg("ch", t.chunks), fmt::arg("rpb", t.rows_per_block), fmt::arg("threads", t.threads),
      fmt::arg("iter", t.row_iterations), fmt::arg("cb", t.cluster_blocks), fmt::arg("bundle", t.row_bundle),
      fmt::arg("pf", t.prefetch), fmt::arg("rs", t.register_sums), fmt::arg("hw", t.hold_weights),
      fmt::arg("set", t.row_set),
      // Emitted only when set: every other kernel's source stays byte-identical.
      fmt::arg("wp", t.weight_ahead  ? fmt::format("  static constexpr int kWeightAhead = {};\n", t.weight_ahead)
                     : t.weight_ring ? fmt::format("  static constexpr int kWeightRing = {};\n", t.weight_ring)
                                     : ""));
}

// The staged backward's Cfg (templates/layer_norm_staged.cuh, layer_norm_overlapped.cuh).
std::string staged_cfg_text(const json& p, const LayerNormStagedTiling& t) {
  return fmt::format(
      "struct StagedCfg {{\n"
      "  using T = {type};\n"
      "  static constexpr bandjit::i64 kRows = {rows};\n"
      "  static constexpr int kHidden = {hidden};\n"
      "  static constexpr bool kWeight = {weight}, kBias = {bias};\n"
      "  static constexpr int kVec = {vec}, kThreads = {threads}, kPiecesPerThread = {nv};\n"
      "  static constexpr int kClusterBlocks = {cb}, kStages = {stages}, kRowIterations = {iter};\n"
      "  static constexpr bool kOverlap = {overlap};\n"
      "  static constexpr unsigned kSharedBytes = {smem};\n"
      "}};\n\n",
      fmt::arg("type", cuda_type(dtype_of(p))), fmt::arg("rows", p.at("rows").get<std::int64_t>()),
      fmt::arg("hidden", p.at("hidden").get<int>()), fmt::arg("weight", p.at("weight").get<bool>()),
      fmt::arg("bias", p.at("bias").get<bool>()), fmt::arg("vec", t.vec), fmt::arg("threads", t.threads),
      fmt::arg("nv", t.pieces_per_thread), fmt::arg("cb", t.cluster_blocks), fmt::arg("stages", t.stages),
      fmt::arg("iter", t.row_iterations), fmt::arg("overlap", t.overlap ? "true" : "false"),
      fmt::arg("smem", t.shared_bytes));
}

// Fills what both families share; `params` lists the kernel's parameters in order as
// (name, C++ type, present).
// `staged` (the backward, where its tiling says so): the sm_90a build runs the staged kernel
// with its own grid, block, shared memory and cluster; every other target the kernel of `t`.
Source make_source(const char* family, const json& p, const LayerNormTiling& t,
                   const std::vector<std::tuple<std::string, std::string, bool>>& params, const std::string& call,
                   const LayerNormStagedTiling& staged = {}, const std::string& staged_call = {}) {
  Source s;
  s.family = family;
  s.kernel_name = std::string("bandjit_") + family;
  s.name = std::string(family) + "_" + params_slug(p) + ".cu";
  s.key_fields = p;
  s.launch.grid[0] = static_cast<std::uint32_t>(t.blocks);
  s.launch.block[0] = static_cast<std::uint32_t>(t.threads);
  s.launch.shared_bytes = t.shared_bytes;
  std::string list;
  for (const auto& [name, type, present] : params) {
    if (!present) continue;
    list += fmt::format("{}{}* __restrict__ {}", list.empty() ? "" : ", ", type, name);
    s.arguments.push_back(name);
    s.argument_alignment.push_back(name == "mean" || name == "rstd" ? 4 : 16);
  }
  // Blocks of a cluster split each row on sm_90 (compile-time cluster size, so a plain launch
  // works); other targets launch the same grid without clusters.
  const std::string cluster =
      t.cluster_blocks == 1 ? ""
                            : fmt::format("#if defined(BANDJIT_CLUSTERS)\n#define BANDJIT_LN_CLUSTER_DIMS __cluster_dims__({}, 1, 1)\n"
                                          "#else\n#define BANDJIT_LN_CLUSTER_DIMS\n#endif\n\n",
                                          t.cluster_blocks);
  const std::string launch = fmt::format("{}__launch_bounds__({}, {})", cluster.empty() ? "" : "BANDJIT_LN_CLUSTER_DIMS ",
                                         t.threads, t.min_blocks);
  std::string include = "#include \"bandjit/layer_norm.cuh\"\n\n", entry = launch, body = "  " + call + ";\n";
  if (staged.staged) {
    s.arch_specific = true;
    s.arch_specific_shared_bytes = staged.shared_bytes;
    s.arch_specific_grid_xy[0] = static_cast<std::uint32_t>(staged.blocks);
    s.arch_specific_grid_xy[1] = 1;
    s.arch_specific_threads = static_cast<std::uint32_t>(staged.threads);
    include = "#include \"bandjit/layer_norm_overlapped.cuh\"\n\n";  // includes layer_norm_staged.cuh
    const std::string staged_cluster =
        staged.cluster_blocks == 1 ? "" : fmt::format("__cluster_dims__({}, 1, 1) ", staged.cluster_blocks);
    entry = "BANDJIT_LN_ENTRY";
    body = fmt::format("#if defined(__CUDA_ARCH_FEAT_SM90_ALL)\n  {};\n#else\n  {};\n#endif\n", staged_call, call);
    include += staged_cfg_text(p, staged);
    include += fmt::format(
        "// The sm_90a build stages rows through shared memory (bulk copies); others hold them in registers.\n"
        "// The launch for sm_90 is the sm_90a build's, so a plain sm_90 build would be launched wrongly.\n"
        "#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ == 900 && !defined(__CUDA_ARCH_FEAT_SM90_ALL)\n"
        "#error \"compile this kernel for sm_90a: its sm_90 launch is the staged kernel's\"\n#endif\n"
        "#if defined(__CUDA_ARCH_FEAT_SM90_ALL)\n#define BANDJIT_LN_ENTRY {}__launch_bounds__({}, 1)\n"
        "#else\n#define BANDJIT_LN_ENTRY {}\n#endif\n\n",
        staged_cluster, staged.threads, launch);
  }
  s.text = fmt::format(
      "// Generated by bandjit: {family} for {fields}\n"
      "{macro}"
      "{include}"
      "{cfg}"
      "{cluster}"
      "extern \"C\" __global__ void {entry}\n"
      "{name}({list}) {{\n"
      "  extern __shared__ float4 bandjit_smem[];\n"
      "{body}"
      "}}\n",
      fmt::arg("family", family), fmt::arg("fields", p.dump()), fmt::arg("macro", cuda_type_macro(dtype_of(p))),
      fmt::arg("include", include), fmt::arg("cfg", cfg_text(p, t)), fmt::arg("cluster", cluster),
      fmt::arg("entry", entry), fmt::arg("name", s.kernel_name), fmt::arg("list", list), fmt::arg("body", body));
  return s;
}

bool power_of_two(int n) { return n > 0 && (n & (n - 1)) == 0; }

int pieces_of(const json& p) {
  const int hidden = p.at("hidden").get<int>();
  return hidden / piece_vec(hidden, dtype_of(p));
}

// The forward's layout without knobs, from the H200 sweeps (bench/results/2026-11-30-issue-7/
// final/sweep-layer-norm, 2026-12-01-issue-7/sweep): float32 rows up to H = 8192 in 256-thread
// blocks (H = 5120: 81 → 95 %; at H = 16384 it fell from 94 to 80 %), rows of ≤ 8 pieces
// spread so a thread holds ≤ 32 bytes (H = 32 float16: 70 → 88 %), and 16-bit rows of 640
// pieces or more (H ≥ 5120) with 32 registers of row data in 256-thread blocks (H = 5120:
// 78 → 86 %, 16384: 75 → 81 %, 65536: 49 → 65 %). Prefetching measured no gain.
// Row pairs (two rows a thread at once, each weight and bias read once for both) for 16-bit
// rows of 128 … 2048 pieces, those over 1024 in 512-thread blocks so that a pair needs no
// cluster (bench/results/2026-12-03-layer-norm-row-pairs, two rounds: H = 1024 87 → 90 %,
// 2048 87 → 90 %, 4096 86.5 → 90 %, 5120 85.6 → 89 %, 16384 82 → 83 % float16, 81 → 84 %
// bfloat16); shorter rows lost (H = 32 88.5 → 85 %, 768 86 → 83 %), float32 rows lost, and
// H = 65536 did not move. Rows of ≥ 1024 pieces only for an even row count: with an odd
// one the second row's stores are predicated and the kernels of H = 8192 and 16384 spill
// ~200 bytes (a review's H200 run: H = 16384, 4097 rows, 81 → 48 %); shorter ones do not.
Tuning forward_defaults(const json& p, const Tuning& tuning) {
  if (any_row_knob(tuning)) return tuning;
  Tuning t = tuning;
  const int size = static_cast<int>(element_size(dtype_of(p))), hidden = p.at("hidden").get<int>();
  const int pieces = pieces_of(p), vec = hidden / pieces;
  if (size == 4 && hidden <= 8192) t.row_block_threads = 256;
  if (pieces <= 8) t.row_pieces = std::max(1, 32 / (vec * size));
  if (size == 2 && pieces >= 640) t.row_registers = 32, t.row_block_threads = 256;
  const bool even = p.at("rows").get<std::int64_t>() % 2 == 0;
  if (!tuning.row_pairs && size == 2 && pieces >= 128 && pieces <= 2048 && (even || pieces < 1024)) {
    t.row_pairs = 2;
    if (pieces > 1024) t.row_registers = 32, t.row_block_threads = 512;
  }
  // 16-bit rows of ≥ 128 16-byte pieces (H ≥ 1024) in 8-byte pieces instead: a lane's four
  // weights (and biases) are then 16 bytes next to its neighbours', one 512-byte stretch a
  // warp load where 16-byte pieces took two loads striding 32 bytes. float16 also loads its
  // first piece's weight and bias with the row (bench/results/2026-12-03-weight-prefetch).
  if (size == 2 && hidden % 8 == 0 && pieces >= 128) {
    if (!tuning.row_vec_bytes) t.row_vec_bytes = 8;
    if (!tuning.row_weight_ahead && dtype_of(p) == DType::float16 && pieces >= 2048 && t.row_vec_bytes == 8)
      t.row_weight_ahead = 2;
  }
  // float32 rows longer than a block (H > 16384: split over a cluster) take weight and bias
  // through a ring of 4 pieces (H = 65536: 84 → 88 %; no other H > 16384 measured); 16-bit
  // ones lost 10 points, float32 H = 16384 was level (bench/results/2026-12-04-weight-ring,
  // calls 4 and 5).
  if (!tuning.row_weight_ring && size == 4 && hidden > 16384) t.row_weight_ring = 1 + 4;
  return t;
}

// The backward's, from the same sweeps. Loading the next row before this one's reduction
// pays where the power-of-two thread groups cover the row unevenly (pieces not a power of
// two) and for the shortest rows; elsewhere it cost up to 20 points (its registers spill).
// 16-bit: rows of ≤ 4 pieces one piece a thread (H = 32: 52 → 86 %), 9–32 pieces eight
// (H = 100: 72 → 78 %), longer uneven rows 32 registers in 256-thread blocks (H = 768:
// 74 → 89 %, 5120: 61 → 78 %); float32 uneven rows of > 256 pieces in 512-thread blocks
// (H = 5120: 43 → 93 %).
Tuning backward_defaults(const json& p, const Tuning& tuning) {
  if (any_row_knob(tuning)) return tuning;
  Tuning t = tuning;
  const int size = static_cast<int>(element_size(dtype_of(p))), pieces = pieces_of(p);
  const bool uneven = !power_of_two(pieces);
  t.row_prefetch = pieces <= 8 || uneven ? 2 : 1;
  if (size == 2 && pieces <= 4) t.row_pieces = 1;
  if (size == 2 && pieces > 8 && pieces <= 32) t.row_pieces = 8;
  if (size == 2 && pieces > 32 && uneven) t.row_registers = 32, t.row_block_threads = 256;
  if (size == 4 && pieces > 256 && uneven) t.row_block_threads = 512;
  // Weights held in registers for the prefetching 16-bit rows of ≤ 32 pieces (H200, against
  // the L1 reads in the same run, bench/results/2026-12-03-layer-norm-held-weights: H = 100
  // 78.7 → 84.3 % float16, 77.9 → 83.2 % bfloat16, H = 32 +1 point); longer rows lost (H = 768
  // float16 90 → 72 %, 4096 81 → 69 %: their kernels spill), float32 rows moved −3 … +2.5
  // points. (A review's run: H = 64 +1, the non-prefetching H = 128 and 256 −0.5 … −4.)
  const bool prefetching = pieces <= 8 || uneven;
  if (!tuning.row_hold_weights && size == 2 && pieces <= 32 && prefetching) t.row_hold_weights = 2;
  return t;
}

LayerNormTiling tiling_of(const json& p, bool backward, const Tuning& tuning) {
  const std::int64_t rows = p.at("rows").get<std::int64_t>();
  const int hidden = p.at("hidden").get<int>();
  auto tiling = [&](const json& shape, Tuning knobs) {
    return layer_norm_tiling(rows, hidden, dtype_of(p), backward, p.at("weight").get<bool>(), p.at("bias").get<bool>(),
                             backward ? backward_defaults(shape, knobs) : forward_defaults(shape, knobs));
  };
  // Two-row units take the defaults of their own shape (rows / 2 rows of 2H); where the unit
  // does not fit one block, one row a unit with its own.
  LayerNormTiling t;
  bool units = false;
  if (layer_norm_wants_units(rows, hidden, dtype_of(p), backward, tuning)) {
    json unit = p;
    unit["rows"] = rows / 2, unit["hidden"] = 2 * hidden;
    Tuning unit_tuning = tuning;
    if (!unit_tuning.row_pairs) unit_tuning.row_pairs = 1;  // units take no pairs, nor their layout
    t = tiling(unit, unit_tuning);
    units = t.row_bundle == 2;
  }
  if (!units) {
    Tuning one_row = tuning;
    one_row.row_bundle = 1;
    t = tiling(p, one_row);
  }
  // The parameter check bounds rows for the default tiling; a tuned one may take more blocks.
  if (t.blocks > 2147483647)
    throw Error(ErrorKind::invalid_problem,
                fmt::format("layer_norm: rows = {} with hidden = {} needs {} blocks under the BANDJIT_ROW_* "
                            "settings; at most 2147483647",
                            p.at("rows").get<std::int64_t>(), p.at("hidden").get<int>(), t.blocks));
  return t;
}

Source generate_layer_norm(const json& p, const Tuning& tuning) {
  const bool w = p.at("weight").get<bool>(), b = p.at("bias").get<bool>();
  return make_source("layer_norm", p, tiling_of(p, false, tuning),
                     {{"x", "const Cfg::T", true},
                      {"weight", "const float", w},
                      {"bias", "const float", b},
                      {"y", "Cfg::T", true},
                      {"mean", "float", true},
                      {"rstd", "float", true}},
                     fmt::format("bandjit::layer_norm_forward<Cfg>(x, {}, {}, y, mean, rstd, "
                                 "reinterpret_cast<float*>(bandjit_smem))",
                                 w ? "weight" : "nullptr", b ? "bias" : "nullptr"));
}

Source generate_layer_norm_backward(const json& p, const Tuning& tuning) {
  const bool w = p.at("weight").get<bool>(), b = p.at("bias").get<bool>();
  const auto staged = layer_norm_staged_tiling(p.at("rows").get<std::int64_t>(), p.at("hidden").get<int>(),
                                               dtype_of(p), tuning);
  const std::string args = fmt::format("(dy, x, mean, rstd, {}, dx, {}, {}, reinterpret_cast<float*>(bandjit_smem))",
                                       w ? "weight" : "nullptr", w ? "dweight" : "nullptr", b ? "dbias" : "nullptr");
  return make_source("layer_norm_backward", p, tiling_of(p, true, tuning),
                     {{"dy", "const Cfg::T", true},
                      {"x", "const Cfg::T", true},
                      {"mean", "const float", true},
                      {"rstd", "const float", true},
                      {"weight", "const float", w},
                      {"dx", "Cfg::T", true},
                      {"dweight", "float", w},
                      {"dbias", "float", b}},
                     "bandjit::layer_norm_backward<Cfg>" + args, staged,
                     std::string(staged.overlap ? "bandjit::layer_norm_backward_overlapped<StagedCfg>"
                                                : "bandjit::layer_norm_backward_staged<StagedCfg>") +
                         args);
}

const char* const kReference = "reference/layer_norm_reference.cpp (float64)";

}  // namespace

std::uint32_t layer_norm_scratch_bytes(int threads, int cluster_blocks) {
  const int mailbox = cluster_blocks > 1 ? 4 + 4 * cluster_blocks : 0;
  return static_cast<std::uint32_t>(((2 * (threads / 32) + 3) / 4 * 4 + 4 + mailbox) * 4);
}

bool any_row_knob(const Tuning& t) {
  return t.row_pieces || t.row_registers || t.row_block_threads || t.row_prefetch || t.row_register_sums;
}

void append_layer_norm_families(std::vector<Family>& families) {
  Family forward;
  forward.name = "layer_norm";
  forward.parameter_set = "layer_norm";
  forward.summary =
      "y = (x - mean) * rstd * w + b, rstd = 1/sqrt(biased var + eps), per row of H (Ba et al. 2016; Apex "
      "MixedFusedLayerNorm)";
  forward.reference = kReference;
  forward.arguments = {"x", "[weight]", "[bias]", "y", "mean", "rstd"};
  forward.param_specs = &layer_norm_params;
  forward.check_params = &check_layer_norm_params;
  forward.params_generator = &generate_layer_norm;
  Family backward = forward;
  backward.name = "layer_norm_backward";
  backward.summary =
      "dx = rstd (g - mean(g) - xhat mean(g xhat)), g = dy w; dweight += sum_rows dy xhat, dbias += sum_rows dy "
      "(accumulates)";
  backward.arguments = {"dy", "x", "mean", "rstd", "[weight]", "dx", "[dweight: weight]", "[dbias: bias]"};
  backward.params_generator = &generate_layer_norm_backward;
  families.push_back(forward);
  families.push_back(backward);
}

}  // namespace bandjit
