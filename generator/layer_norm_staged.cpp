// The staged layer_norm_backward's tiling (templates/layer_norm_staged.cuh): slices of rows
// through shared memory by bulk copies, sm_90.
#include <algorithm>

#include "generator/layer_norm.hpp"
#include "generator/tile_config.hpp"

namespace bandjit {
namespace {

constexpr int kMostStages = 4;
constexpr int kMostHeldStages = 6;  // held rows refill sooner, so more stages stay in flight
constexpr int kMostThreads = 512;   // ≤ 128 registers a thread

// Most elements a thread takes a row, so that what it holds stays near 96 registers: the
// backward's weights and two column sums (3 a column), with held rows also dy and x (16-bit:
// 1 register a column), overlapped two rows of them; the forward's weight and bias, and two
// rows of x.
int most_elements(int size, bool backward, bool held, bool overlap) {
  if (!backward) return size == 2 ? 32 : 16;
  if (overlap) return size == 2 ? 16 : 8;
  return held ? 16 : 32;
}


std::int64_t ceil_div64(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

// templates/layer_norm_staged.cuh's StagedShape: scratch and cluster slots (overlapped: two
// parities of partial sums and a sink word a warp), barriers, stages.
std::uint32_t stage_offset(int threads, int stages, bool overlap) {
  const std::uint32_t scratch = static_cast<std::uint32_t>((((overlap ? 5 : 2) * (threads / 32) + 3) / 4 * 4 + 4) * 4);
  return (scratch + 8 * static_cast<std::uint32_t>(stages) + 15) / 16 * 16;
}

}  // namespace

bool layer_norm_staged_default(int hidden, DType dtype) {
  // From the H200 measurement (bench/results/2026-12-02-layer-norm-staged, against the
  // register kernel in the same run): 16-bit H = 5120 74 → 85 %, 16384 67 → 73 %, 65536 float16
  // 40 → 46 % (bfloat16 level); shorter 16-bit rows and every float32 row lost (float32 H =
  // 16384 83 → 50 %, 65536 62 → 41 %; 16-bit H = 4096 81–85 → 75 %).
  return element_size(dtype) == 2 && hidden >= 5120;
}

LayerNormStagedTiling layer_norm_staged_tiling(std::int64_t rows, int hidden, DType dtype, const Tuning& tuning,
                                               bool backward) {
  LayerNormStagedTiling t;
  const int size = static_cast<int>(element_size(dtype));
  const bool by_default = backward && !any_row_knob(tuning) && layer_norm_staged_default(hidden, dtype);
  const bool wanted = tuning.row_staged ? tuning.row_staged == 2 : by_default;
  if (!wanted || (std::int64_t(hidden) * size) % 16 != 0) return t;
  t.vec = 16 / size;
  // The forward always holds and overlaps its rows (templates/layer_norm_overlapped.cuh); a
  // stage holds x alone.
  t.overlap = !backward || tuning.row_overlap == 2;
  t.held_rows = t.overlap || tuning.row_held_rows == 2;
  const int most = most_elements(size, backward, t.held_rows, t.overlap);
  const std::uint32_t tensors = backward ? 2 : 1;
  for (int cb = 1; cb <= 8; cb *= 2) {
    if (hidden % (cb * t.vec) != 0) break;
    const int pieces = hidden / cb / t.vec;
    const std::uint32_t slice = static_cast<std::uint32_t>(hidden / cb * size) * tensors;  // a stage's bytes
    // The fewest pieces a thread holds with at most kMostThreads (or the knob's) threads,
    // whole warps and every thread the same number of pieces.
    int threads = 0, per_thread = 0;
    for (int nv = 1; nv * t.vec <= most; ++nv) {
      if (pieces % nv != 0) continue;
      const int th = pieces / nv;
      const int most_threads = tuning.row_block_threads ? std::min(kMostThreads, tuning.row_block_threads) : kMostThreads;
      if (th % 32 != 0 || th > most_threads || (tuning.row_block_threads && th != tuning.row_block_threads)) continue;
      threads = th, per_thread = nv;
      break;
    }
    if (!threads) continue;
    // As many stages as fit up to the most (Tuning::row_stages: exactly that many).
    auto fits = [&](int st) { return stage_offset(threads, st, t.overlap) + st * slice <= kMaxSharedBytes; };
    int stages = tuning.row_stages ? tuning.row_stages : t.held_rows ? kMostHeldStages : kMostStages;
    if (!tuning.row_stages)
      while (stages >= 2 && !fits(stages)) --stages;
    if (stages < 2 || !fits(stages)) continue;
    t.staged = true;
    t.cluster_blocks = cb, t.threads = threads, t.pieces_per_thread = per_thread, t.stages = stages;
    t.shared_bytes = stage_offset(threads, stages, t.overlap) + static_cast<std::uint32_t>(stages) * slice;
    break;
  }
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
