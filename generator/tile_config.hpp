// Launch heuristics as pure functions of the problem (unit-tested on the CPU).
// The templates static_assert the invariants these functions promise.
#pragma once

#include <cstdint>
#include <vector>

#include "bandjit/problem.hpp"

namespace bandjit {

/// Tiling of band_qk and band_pv (templates/band_tiles.cuh explains the scheme).
struct BandTiling {
  int threads = 256;
  int tile_rows = 64;        ///< TM: rows of one residue sub-sequence per block
  int tile_diagonals = 64;   ///< TJ: diagonals per chunk
  int diagonal_chunks = 1;   ///< ceil(C / TJ): grid.y of band_qk, loop count of band_pv
  int key_rows = 0;          ///< K/V rows staged per chunk
  std::vector<int> head_tile_start;  ///< prefix sums of tiles per head (size heads + 1)
  int tiles_per_batch = 0;   ///< grid.x
  std::uint32_t shared_bytes = 0;
};

/// Tiles of one residue sub-sequence: ceil(ceil(N / D) / TM).
int tiles_per_residue(std::int64_t seq_len, std::int64_t dilation, int tile_rows);

/// Chunks of at most `max_chunk` diagonals, balanced: C = 513 → 9 chunks of 57, not 8×64 + 1.
int balanced_chunk(std::int64_t diagonals, int max_chunk);

BandTiling band_qk_tiling(const Problem& problem);
BandTiling band_pv_tiling(const Problem& problem);

/// Tiling of band_softmax: kRowThreads threads per row, each holding kElemsPerThread values.
struct SoftmaxTiling {
  int row_threads = 32;
  int elems_per_thread = 1;
  int rows_per_block = 8;
  int threads = 256;
  std::int64_t blocks = 0;
};
SoftmaxTiling band_softmax_tiling(const Problem& problem);

/// Most dynamic shared memory a block may use on sm_80/sm_90 (bytes).
constexpr std::uint32_t kMaxSharedBytes = 227 * 1024;

}  // namespace bandjit
