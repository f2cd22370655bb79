// The staged layer_norm_backward's tiling (templates/layer_norm_staged.cuh and, with
// overlapped rows, layer_norm_overlapped.cuh): slices of rows through shared memory by bulk
// copies, sm_90.
#include <algorithm>

#include "generator/layer_norm.hpp"
#include "generator/tile_config.hpp"

namespace bandjit {
namespace {

constexpr int kMostStages = 4;
constexpr int kMostThreads = 512;  // ≤ 128 registers a thread

std::int64_t ceil_div64(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

// Most elements a thread takes of a row, so that what it holds stays near 96 registers:
// weights and two column sums (3 a column); overlapped also two rows of dy and x (16-bit: 2
// registers a column, float32 4).
int most_elements(int size, bool overlap) { return overlap ? (size == 2 ? 16 : 8) : 32; }

// templates/layer_norm_staged.cuh's StagedShape: scratch (overlapped: two parities of partial
// sums and a sink word a warp) and cluster slots, barriers, stages.
std::uint32_t stage_offset(int threads, int stages, bool overlap) {
  const int warps = threads / 32;
  const auto scratch = static_cast<std::uint32_t>((((overlap ? 5 : 2) * warps + 3) / 4 * 4 + 4) * 4);
  return (scratch + 8 * static_cast<std::uint32_t>(stages) + 15) / 16 * 16;
}

// The layout over the fewest cluster blocks that has one, or staged = false.
LayerNormStagedTiling layout(int hidden, int size, bool overlap, int most_threads, const Tuning& tuning) {
  LayerNormStagedTiling t;
  t.vec = 16 / size;
  t.overlap = overlap;
  for (int cb = 1; cb <= 8; cb *= 2) {
    if (hidden % (cb * t.vec) != 0) break;
    const int pieces = hidden / cb / t.vec;
    const std::uint32_t slice = static_cast<std::uint32_t>(hidden / cb * size);
    // The fewest pieces a thread holds within the block size (the knob's exactly), whole
    // warps, every thread the same number of pieces.
    int threads = 0, per_thread = 0;
    for (int nv = 1; nv * t.vec <= most_elements(size, overlap); ++nv) {
      if (pieces % nv != 0) continue;
      const int th = pieces / nv;
      if (th % 32 != 0 || th > most_threads || (tuning.row_block_threads && th != tuning.row_block_threads)) continue;
      threads = th, per_thread = nv;
      break;
    }
    if (!threads) continue;
    // As many stages as fit, up to 4 (Tuning::row_stages: exactly that many).
    auto fits = [&](int st) { return stage_offset(threads, st, overlap) + st * 2 * slice <= kMaxSharedBytes; };
    int stages = tuning.row_stages ? tuning.row_stages : kMostStages;
    if (!tuning.row_stages)
      while (stages >= 2 && !fits(stages)) --stages;
    if (stages < 2 || !fits(stages)) continue;
    t.staged = true;
    t.cluster_blocks = cb, t.threads = threads, t.pieces_per_thread = per_thread, t.stages = stages;
    t.shared_bytes = stage_offset(threads, stages, overlap) + static_cast<std::uint32_t>(stages) * 2 * slice;
    return t;
  }
  return {};
}

}  // namespace

bool layer_norm_staged_default(int hidden, DType dtype) {
  // From the H200 measurements against the register kernel in the same run
  // (bench/results/2026-12-02-layer-norm-staged: 16-bit H = 5120 74 → 85 %, shorter 16-bit
  // rows lost; 2026-12-03-layer-norm-staged-forward: float32 H = 16384 83 → 89 % overlapped,
  // 65536 78 → 81 % in 256-thread blocks).
  return element_size(dtype) == 2 ? hidden >= 5120 : hidden >= 16384;
}

bool layer_norm_overlap_default(int hidden, DType dtype) {
  // bench/results/2026-12-03-layer-norm-staged-forward, call 2 (4 stages, against the staged
  // kernel): 16-bit H = 16384 73 → 82–83 %, 65536 65–70 → 75–79 %, float32 16384 60 → 89 %;
  // 16-bit H = 5120 87 → 84–88 % (kept staged).
  return element_size(dtype) == 2 ? hidden >= 16384 : true;
}

LayerNormStagedTiling layer_norm_staged_tiling(std::int64_t rows, int hidden, DType dtype, const Tuning& tuning) {
  const int size = static_cast<int>(element_size(dtype));
  const bool wanted =
      tuning.row_staged ? tuning.row_staged == 2 : !any_row_knob(tuning) && layer_norm_staged_default(hidden, dtype);
  if (!wanted || (std::int64_t(hidden) * size) % 16 != 0) return {};
  const bool overlap = tuning.row_overlap ? tuning.row_overlap == 2 : layer_norm_overlap_default(hidden, dtype);
  // Without overlap float32 slices go to 256-thread blocks (twice the clusters of 512 at
  // H = 65536: 69 → 81 %, call 1 of the record above).
  const int plain_threads = size == 4 ? 256 : kMostThreads;
  const int knob = tuning.row_block_threads;
  const int most = knob ? std::min(knob, kMostThreads) : 0;
  LayerNormStagedTiling t = layout(hidden, size, overlap, most ? most : overlap ? kMostThreads : plain_threads, tuning);
  if (!t.staged && overlap) t = layout(hidden, size, false, most ? most : plain_threads, tuning);
  if (!t.staged) return t;
  // One wave of blocks (clusters), one an SM, each taking its rows in turn: as many clusters as
  // the GPU holds at once. Sized for the 132 / 4 = 33 clusters of 4 that do not all fit (30
  // do), 16-bit H = 65536 ran two waves and a third, 46 % of the copy bandwidth; for 30, 60 %.
  // Two blocks an SM (≤ 16 elements a thread) measured slower at 16-bit H = 5120 (85 → 79 %).
  const int waves = tuning.row_waves ? tuning.row_waves : 1;
  const std::int64_t per_wave = assumed_clusters_at_once(t.cluster_blocks);
  t.row_iterations = static_cast<int>(ceil_div64(rows, per_wave * waves));
  t.blocks = ceil_div64(rows, t.row_iterations) * t.cluster_blocks;
  return t;
}

}  // namespace bandjit
