// The layer_norm parameter set: families layer_norm (forward) and layer_norm_backward
// (docs/layer_norm.md). Parameters, the tiling heuristic (a pure function, tested on the
// CPU and shared with the SIMT emulator's tests) and the generated sources.
#pragma once

#include <cstdint>
#include <vector>

#include "bandjit/problem.hpp"
#include "generator/family_registry.hpp"
#include "generator/source.hpp"

namespace bandjit {

/// How one layer_norm kernel covers its rows (templates/layer_norm.cuh's Cfg).
struct LayerNormTiling {
  int row_bundle = 1;         ///< rows a thread group takes as one unit: 2 for an even number of
                              ///< 16-bit rows of hidden ≡ 4 (mod 8), whose pieces are then 16 bytes
  int vec = 1;                ///< V: elements per vector access; divides hidden · row_bundle, V·sizeof ≤ 16 bytes
  int pieces = 1;             ///< hidden · row_bundle / V (the whole unit; a block holds pieces / cluster_blocks)
  int row_threads = 1;        ///< R: threads per row, a power of two ≤ 1024
  int pieces_per_thread = 1;  ///< NV: pieces a thread holds at once (per chunk)
  int chunks = 1;             ///< 1: the row stays in registers; > 1: walked in chunks, re-read
  int cluster_blocks = 1;     ///< backward: blocks of a cluster sharing each row (sm_90), 1 = none
  int rows_per_block = 1;     ///< thread groups per block (one unit each at a time)
  int threads = 256;          ///< per block
  int row_iterations = 1;     ///< backward and a prefetching forward: unit groups each block takes in turn
  int min_blocks = 1;         ///< __launch_bounds__ minimum blocks per SM (caps the registers)
  bool prefetch = false;      ///< chunks = 1: the next row's loads issued before this row's reductions
  bool register_sums = false; ///< backward, chunks = 1: column sums in registers until the block's end
  bool hold_weights = false;  ///< backward, chunks = 1, no cluster, one row a unit: weights in registers
  int row_set = 1;            ///< forward: rows a thread group takes at once (2: same columns of two
                              ///< rows, one weight and bias read for both; chunks = 1, no prefetch)
  int weight_ahead = 0;       ///< forward, one chunk: pieces whose weight and bias are loaded
                              ///< with the row, before its statistics
  int weight_ring = 0;        ///< forward: pieces of weight and bias in flight into shared
                              ///< memory by cp.async (replaces weight_ahead)
  std::int64_t blocks = 1;
  std::uint32_t shared_bytes = 0;  ///< dynamic: reduction scratch (+ backward column sums)
};

/// layer_norm_backward's staged kernel for sm_90 (templates/layer_norm_staged.cuh; with
/// `overlap`, layer_norm_overlapped.cuh): each block's slice of a row arrives in shared memory
/// by bulk copies, `stages` rows ahead.
struct LayerNormStagedTiling {
  bool staged = false;        ///< false: the register kernel everywhere
  int vec = 1;                ///< V: elements of a 16-byte piece
  int cluster_blocks = 1;     ///< blocks of a cluster sharing each row
  int threads = 0;            ///< T: per block, whole warps, ≤ 512
  int pieces_per_thread = 0;  ///< NV, with NV · T · V = hidden / cluster_blocks
  int stages = 0;             ///< rows in shared memory at once (2 … 4; Tuning::row_stages up to 8)
  bool overlap = false;       ///< the next row's first pass before this row's cluster sum
  int row_iterations = 0;     ///< most rows a block (cluster) takes in turn; the rows split evenly over
                              ///< the blocks (clusters) = blocks / cluster_blocks = ⌈rows / row_iterations⌉
  std::int64_t blocks = 0;
  std::uint32_t shared_bytes = 0;  ///< dynamic: scratch, barriers and the stages
};

/// Bytes at the start of a register layer_norm block's shared memory (Shape::kScratch in
/// templates/layer_norm.cuh): reduction scratch (2 floats a warp, rounded to 4), 4 cluster
/// slots and, for cluster_blocks > 1, the forward's mailbox (two 8-byte barriers and two
/// float2 slots a block of the cluster; templates/cluster.cuh).
std::uint32_t layer_norm_scratch_bytes(int threads, int cluster_blocks);

/// Whether a BANDJIT_ROW_* layout knob is set (row_pieces, row_registers, row_block_threads,
/// row_prefetch, row_register_sums): it then replaces every per-size default.
bool any_row_knob(const Tuning& tuning);

/// Whether the staged backward is the default for rows of `hidden` (Tuning::row_staged: 1
/// off, 2 on wherever a layout exists; unset, a layout knob means the register kernel, so a
/// sweep of that knob measures it).
bool layer_norm_staged_default(int hidden, DType dtype);

/// Whether the staged backward overlaps its rows by default (Tuning::row_overlap: 1 off, 2 on).
bool layer_norm_overlap_default(int hidden, DType dtype);

/// The staged backward's layout, or staged = false where it is off or no layout fits: rows of
/// 16-byte multiples, split over the fewest cluster blocks (1, 2, 4, 8) whose slice has a
/// layout of whole pieces a thread (≤ 32 elements; overlapped 16, float32 8; ≤ 512 threads,
/// float32 without overlap 256; Tuning::row_block_threads exactly where set, if ≤ 512) and
/// two stages fit in 227 KiB; overlapped where asked and a layout exists, else not. Up to 4
/// stages (Tuning::row_stages exactly). Grid: one wave of blocks (clusters), one an SM, as many
/// as assumed_clusters_at_once (Tuning::row_waves: that many waves).
LayerNormStagedTiling layer_norm_staged_tiling(std::int64_t rows, int hidden, DType dtype, const Tuning& tuning = {});

/// The tiling for one problem. `weight`/`bias` matter to the backward's shared column sums.
/// `tuning` (Tuning::row_*; 0 = the defaults) overrides the thread layout: row_pieces the
/// most pieces a thread holds when a warp holds whole rows (default 4, backward 2),
/// row_registers the registers of raw row data a thread holds (backward: dy and x together;
/// default 32 elements, backward 16 of each) — longer rows then take the fewest threads (at
/// least a warp) within it —, row_block_threads the threads per block and so the most a row
/// (a cluster's block) takes (default 256, or the row's 512 / 1024), row_waves the waves of
/// resident blocks (clusters) in the backward's grid (default 1). Two-row units are laid
/// out as rows / 2 rows of 2 · hidden (the knobs then apply to the unit).
LayerNormTiling layer_norm_tiling(std::int64_t rows, int hidden, DType dtype, bool backward, bool weight, bool bias,
                                  const Tuning& tuning = {});

/// Whether the problem asks for two-row units (16-bit, hidden ≡ 4 mod 8, even rows; the
/// forward unless Tuning::row_bundle says otherwise); the tiling takes them where a unit fits
/// one block in registers.
bool layer_norm_wants_units(std::int64_t rows, int hidden, DType dtype, bool backward, const Tuning& tuning);

/// Appends layer_norm and layer_norm_backward to the registry list.
void append_layer_norm_families(std::vector<Family>& families);

/// The parameters both families take: rows, hidden, dtype, weight, bias, epsilon.
const std::vector<ParamSpec>& layer_norm_params();

}  // namespace bandjit
