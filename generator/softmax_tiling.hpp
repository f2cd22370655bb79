// How the softmax families (templates/softmax.cuh) lay a row of L elements over threads:
// a pure function of L and the element size, unit-tested on the CPU.
#pragma once

#include <cstdint>

#include "bandjit/problem.hpp"
#include "generator/source.hpp"

namespace bandjit {

/// A row is cut into pieces of `vec` elements (one vector load each; vec divides L so
/// every row starts aligned) and held in registers by row_threads threads, pieces_per_thread
/// pieces each (piece p belongs to thread p mod row_threads). Rows longer than one block
/// holds span a cluster of `cluster` blocks (sm_90; a two-pass loop in one block elsewhere).
struct SoftmaxRowTiling {
  int vec = 1;                ///< elements per piece: the largest of 16 bytes / element, …, 1 dividing L
  int pieces = 1;             ///< L / vec
  int row_threads = 1;        ///< threads per row over the whole cluster
  int pieces_per_thread = 1;  ///< ceil(pieces / row_threads)
  int cluster = 1;            ///< blocks per row (1: a block holds whole rows)
  int rows_per_block = 1;     ///< 1 when cluster > 1
  int threads = 32;           ///< per block
  std::int64_t blocks = 1;    ///< grid.x
  bool staged = false;        ///< forward: pieces copied through shared memory (cp.async), not held in registers
  std::uint32_t stage_bytes = 0;  ///< staged: dynamic shared memory per block
  bool held = false;  ///< forward: the staged layout with the pieces held as loaded in registers
};

/// Longest row the tiling supports: 8 blocks × 512 threads × 32 values (the float32
/// backward, 16 values of y and dy each: 8 blocks × 1024 threads).
constexpr std::int64_t kMaxSoftmaxRow = 131072;

/// The forward's tiling (≤ 32 float32 values per thread) or the backward's (≤ 32 registers
/// of raw y and dy pieces: 16 values of each in float32, up to 32 in float16/bfloat16).
/// Throws Error(invalid_problem) when L is outside 1 … kMaxSoftmaxRow.
/// `tuning` (Tuning::row_*; 0 = the defaults 4, 32, 512) overrides the thread layout;
/// `mask_bytes` (forward: 0 none, 1 boolean, else the additive mask's element size) sizes
/// a staged row's shared memory.
SoftmaxRowTiling softmax_row_tiling(std::int64_t rows, std::int64_t row_length, DType dtype, bool backward = false,
                                    const Tuning& tuning = {}, int mask_bytes = 0);

}  // namespace bandjit
