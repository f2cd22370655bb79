// Launch heuristics as pure functions of the problem (unit-tested on the CPU).
// The templates static_assert the invariants these functions promise.
#pragma once

#include <cstdint>
#include <vector>

#include "bandjit/problem.hpp"

namespace bandjit {

/// Tiling of band_qk and band_pv (templates/band_tiles.cuh explains the scheme).
struct BandTiling {
  int threads = 128;
  int tile_rows = 64;        ///< TM: rows of one residue sub-sequence per block (16 per warp group)
  int tile_diagonals = 64;   ///< TJ: diagonals per chunk (all C when they fit)
  int diagonal_chunks = 1;   ///< ceil(C / TJ): grid.y of band_qk, loop count of band_pv
  int row_tiles_per_warp = 1;  ///< (band_qk)
  int min_blocks = 1;        ///< band_qk: __launch_bounds__ blocks per SM (caps registers)
  int run_tiles = 1;         ///< band_qk: consecutive row tiles per block, the next one's rows prefetched
  int block_rows() const { return tile_rows * run_tiles; }
  int column_parts = 1;      ///< band_pv: warps that split the head_dim columns of a row group
  int stage_ld = 0;          ///< row stride (elements) of the staged S/P rows, slack included
  std::vector<int> head_tile_start;  ///< prefix sums of tiles per head (size heads + 1)
  int tiles_per_batch = 0;   ///< grid.x
  std::uint32_t shared_bytes = 0;
  /// band_pv's Hopper path (templates/band_pv_wgmma.cuh; built for sm_90a only) and its shared
  /// memory: 16-bit types, head_dim 64, one warpgroup of 64 rows.
  bool wgmma = false;
  std::uint32_t wgmma_shared_bytes = 0;
  int wgmma_slab_keys = 32;  ///< band_pv: keys per slab of the Hopper kernel
  int wgmma_stages = 4;      ///< band_pv: its slabs in flight
  bool wgmma_whole_rows = false;  ///< band_pv: the tile's P rows staged whole (then slabs carry V only)
  /// band_qk's Hopper kernel (templates/band_qk_wgmma.cuh, its own launch: 64-row tiles of one
  /// warpgroup × chunks of diagonals): diagonals per chunk, staging row stride, grid.
  int wgmma_diagonals = 0;
  int wgmma_stage_ld = 0;
  int wgmma_chunks = 0;
  int wgmma_tiles_per_batch = 0;
};

/// Tiles of one residue sub-sequence: ceil(ceil(N / D) / TM).
int tiles_per_residue(std::int64_t seq_len, std::int64_t dilation, int tile_rows);

/// Chunks of at most `max_chunk` diagonals, balanced: C = 513, max 256 → 3 × 171, not 2 × 256 + 1.
int balanced_chunk(std::int64_t diagonals, int max_chunk);

/// tile_rows, max_diagonals: Tuning overrides (0: the generator decides). A chunk limit
/// skips the occupancy budgets; a band_qk tile that still does not fit the SM's shared
/// memory (64 rows, float32, head_dim ≥ 192) throws Error(invalid_problem) naming the knob.
/// wgmma: 1 leaves band_qk's Hopper kernel out, 0 or 2 take it where it applies.
BandTiling band_qk_tiling(const Problem& problem, int tile_rows = 0, int max_diagonals = 0, int wgmma = 0);
/// Whether band_qk keeps its Q fragments in registers (≤ 64 per thread); float32 with
/// head_dim > 64 reads them from the staged Q tile per n-tile instead.
bool qk_q_in_registers(const Problem& problem);
/// m-tiles per band_qk warp: 2 for 16-bit types up to head_dim 128 (one K fragment feeds two
/// products), else 1.
int qk_row_tiles_per_warp(const Problem& problem);
/// Row stride of band_qk's staging tile: TJ + 45 slack (templates/band_qk.cuh), an odd
/// number of 16-byte units.
int qk_stage_ld(int tile_diagonals, DType dtype);
/// wgmma: 1 leaves the Hopper path out, 0 or 2 take it where it applies.
/// wgmma_slab_keys, wgmma_stages: overrides of the Hopper kernel's slabs (0: the default).
/// whole_rows: 0 stages whole P rows for bands of 41 to 129 diagonals, 1 never, 2 wherever a
/// block fits an SM.
BandTiling band_pv_tiling(const Problem& problem, int tile_rows = 0, int max_diagonals = 0, int wgmma = 0,
                          int wgmma_slab_keys = 0, int wgmma_stages = 0, int whole_rows = 0);
/// Warps of band_pv that share a 32-row group, each taking 2 or 4 n-tiles of 8 columns.
int pv_column_parts(const Problem& problem);

/// Tiling of band_tpv (templates/band_tpv.cuh): a block owns tile_rows output rows of one
/// residue sub-sequence and all Dh columns (column_parts warps per 16-row group share them);
/// it streams the tile_rows + C − 1 band rows u that meet it through slabs of slab_rows rows,
/// `stages` slabs in flight.
struct TpvTiling {
  int threads = 128;
  int tile_rows = 64;      ///< TM, a multiple of 16
  int block_rows() const { return tile_rows; }  ///< query rows per block (as BandTiling)
  int column_parts = 1;    ///< warps per row group, each with Dh / column_parts columns (≤ 64)
  int row_tiles_per_warp = 1;  ///< MW: 16-row m-tiles per warp (a row group is 16·MW rows)
  int slab_rows = 32;      ///< KS: band rows u per pipeline stage
  int stages = 4;          ///< slabs in flight (cp.async groups)
  int stage_ld = 0;        ///< row stride (elements) of a staged X segment: TM + one 16-byte phase
  int value_ld = 0;        ///< row stride (elements) of a staged Y row: Dh + 8
  int min_blocks = 1;      ///< __launch_bounds__ blocks per SM the register allocation must allow
  std::vector<int> head_tile_start;  ///< prefix sums of tiles per head (size heads + 1)
  int tiles_per_batch = 0;           ///< grid.x
  std::uint32_t shared_bytes = 0;
  /// The Hopper path (templates/band_tpv.cuh, wgmma; built for sm_90a only) and its shared
  /// memory: 16-bit types, head_dim 64, 64-row warpgroups, per-lane staging.
  bool wgmma = false;
  std::uint32_t wgmma_shared_bytes = 0;
};
/// slab_rows, stages, row_tiles (m-tiles per warp): overrides (0: the generator decides).
/// wgmma: 1 leaves the Hopper path out, 0 or 2 take it where it applies.
TpvTiling band_tpv_tiling(const Problem& problem, int tile_rows = 0, int slab_rows = 0, int stages = 0,
                          int row_tiles = 0, int wgmma = 0);

/// Tiling of sliding_window_attention's portable kernel (templates/sliding_window_attention.cuh):
/// a block owns tile_rows query rows of one residue sub-sequence (one warp per 16) and
/// streams the keys they see in tiles of key_tile rows of K and V, `stages` tiles in flight.
struct AttentionTiling {
  int threads = 128;
  int tile_rows = 64;   ///< TM: query rows per block, 16 per warp
  int block_rows() const { return tile_rows; }  ///< as BandTiling
  int key_tile = 64;    ///< TN: K/V rows per pipeline stage
  int stages = 2;
  int row_ld = 0;       ///< row stride (elements) of a staged Q/K/V row: head_dim + one 16-byte pad
  /// The Hopper kernel (wgmma, compiled for sm_90a on sm_90; the portable one elsewhere):
  /// float16/bfloat16, head_dim 64 or 128, 64-row tiles, key tiles of 64 or 128.
  bool wgmma = false;
  std::uint32_t wgmma_shared_bytes = 0;  ///< the Hopper kernel's (its build's launch); 0 without it
  std::vector<int> head_tile_start;  ///< prefix sums of tiles per head (size heads + 1)
  int tiles_per_batch = 0;           ///< grid.x
  std::uint32_t shared_bytes = 0;
};
/// tile_rows (64 or 128), key_tile (32, 64, 128): overrides (0: the generator decides).
/// Throws Error(invalid_problem) when an override does not fit an SM's shared memory.
/// wgmma: 0 the generator decides (on where it applies), 1 off, 2 on where it applies.
AttentionTiling sliding_window_attention_tiling(const Problem& problem, int tile_rows = 0, int key_tile = 0,
                                                int wgmma = 0);

/// Prefix sums over the heads of D·tiles_per_residue: the tile index where each head starts.
std::vector<int> head_tile_starts(const Problem& problem, int tile_rows);

/// Tiling of band_softmax (and band_softmax_backward): row_threads threads per row, each holding pieces_per_thread
/// 16-byte pieces of it in registers.
struct SoftmaxTiling {
  int row_threads = 32;
  int pieces_per_thread = 1;
  int rows_per_block = 8;
  int threads = 256;
  int row_group = 1;  ///< band_softmax: rows each thread group takes in turn, the next one's pieces loaded early
  std::int64_t blocks = 0;
};
/// `row_group` > 1 (band_softmax only) makes each thread group take that many consecutive rows.
SoftmaxTiling band_softmax_tiling(const Problem& problem, int row_group = 1);

/// 16-byte pieces that can cover a row of C elements at any alignment.
int pieces_per_row(std::int64_t diagonals, DType dtype);

/// Most dynamic shared memory a block may use on sm_90 (bytes).
constexpr std::uint32_t kMaxSharedBytes = 227 * 1024;
/// SMs the generator sizes grids for (H100/H200 SXM): it does not know the device, and on a
/// GPU with another count those grids are correct, a little off balance.
constexpr int kAssumedSms = 132;
/// Clusters of `blocks` blocks, one an SM, that the assumed GPU holds at once: a GPC's SMs
/// need not divide by the cluster size, so it is fewer than kAssumedSms / blocks
/// (cudaOccupancyMaxActiveClusters on the H200: 132, 66, 30, 15 and 7 for 1, 2, 4, 8 and 16,
/// bench/results/2026-12-02-layer-norm-staged).
constexpr int assumed_clusters_at_once(int blocks) {
  return blocks <= 1 ? kAssumedSms : blocks == 2 ? 66 : blocks == 4 ? 30 : blocks == 8 ? 15 : blocks == 16 ? 7
                                                                                          : kAssumedSms / blocks / 2;
}
/// Sequences a grid-size heuristic may count on: the batch, or 1 when the batch is a launch
/// argument (the source must not depend on it).
inline std::int64_t sized_batch(const Problem& problem) { return problem.runtime_batch ? 1 : problem.batch; }
/// Most a block may use on every target bandjit builds for (sm_86/sm_89: 99 KiB; sm_80 163).
constexpr std::uint32_t kPortableSharedBytes = 99 * 1024;

}  // namespace bandjit
