#include "generator/tile_config.hpp"

#include <algorithm>

namespace bandjit {
namespace {

constexpr std::uint32_t kSharedBudget = 160 * 1024;  // leaves room for 1 block + L1

int ceil_div(std::int64_t a, std::int64_t b) { return static_cast<int>((a + b - 1) / b); }

// Key rows staged per chunk so that the n-tiles (band_qk) or k-steps (band_pv) of every
// m-tile of 16 rows stay inside the staged rows.
int qk_key_rows(int tile_rows, int tj) {
  const int mt = tile_rows / 16;
  const int n_tiles = (14 + tj) / 8 + 1;
  return 8 * (2 * (mt - 1) + n_tiles);
}
int pv_key_rows(int tile_rows, int tj, int k_step) {
  const int last = 16 * (tile_rows / 16 - 1) + 14 + tj;
  return k_step * (last / k_step + 1);
}

void fill_grid(BandTiling& t, const Problem& p) {
  t.diagonal_chunks = ceil_div(p.diagonals(), t.tile_diagonals);
  t.head_tile_start.assign(1, 0);
  for (std::int64_t h = 0; h < p.heads; ++h) {
    const auto d = p.dilation_of(h);
    t.head_tile_start.push_back(t.head_tile_start.back() +
                                static_cast<int>(d) * tiles_per_residue(p.seq_len, d, t.tile_rows));
  }
  t.tiles_per_batch = t.head_tile_start.back();
}

}  // namespace

int tiles_per_residue(std::int64_t seq_len, std::int64_t dilation, int tile_rows) {
  return ceil_div(ceil_div(seq_len, dilation), tile_rows);
}

int balanced_chunk(std::int64_t diagonals, int max_chunk) {
  const int chunks = ceil_div(diagonals, max_chunk);
  return ceil_div(diagonals, chunks);
}

BandTiling band_qk_tiling(const Problem& p) {
  BandTiling t;
  const std::uint32_t es = static_cast<std::uint32_t>(element_size(p.dtype));
  const std::uint32_t ld = static_cast<std::uint32_t>(p.head_dim) + 16 / es;
  for (t.tile_rows = 64;; t.tile_rows /= 2) {
    t.tile_diagonals = balanced_chunk(p.diagonals(), 64);
    t.key_rows = qk_key_rows(t.tile_rows, t.tile_diagonals);
    t.shared_bytes = (t.tile_rows + t.key_rows) * ld * es + t.tile_rows * t.tile_diagonals * 4;
    if (t.shared_bytes <= kSharedBudget || t.tile_rows == 16) break;
  }
  fill_grid(t, p);
  return t;
}

BandTiling band_pv_tiling(const Problem& p) {
  BandTiling t;
  const std::uint32_t es = static_cast<std::uint32_t>(element_size(p.dtype));
  const int k_step = p.dtype == DType::float32 ? 8 : 16;
  for (t.tile_rows = 64;; t.tile_rows /= 2) {
    t.tile_diagonals = balanced_chunk(p.diagonals(), 64);
    t.key_rows = pv_key_rows(t.tile_rows, t.tile_diagonals, k_step);
    const std::uint32_t lda = t.key_rows + 16 / es, ldv = static_cast<std::uint32_t>(p.head_dim) + 8;
    t.shared_bytes = (t.tile_rows * lda + t.key_rows * ldv) * es;
    if (t.shared_bytes <= kSharedBudget || t.tile_rows == 16) break;
  }
  fill_grid(t, p);
  return t;
}

SoftmaxTiling band_softmax_tiling(const Problem& p) {
  SoftmaxTiling t;
  const auto c = p.diagonals();
  t.row_threads = 1;
  while (t.row_threads < 1024 && ceil_div(c, t.row_threads) > 16) t.row_threads *= 2;
  t.elems_per_thread = ceil_div(c, t.row_threads);
  t.threads = std::max(t.row_threads, 256);
  t.rows_per_block = t.threads / t.row_threads;
  t.blocks = (p.batch * p.heads * p.seq_len + t.rows_per_block - 1) / t.rows_per_block;
  return t;
}

}  // namespace bandjit
