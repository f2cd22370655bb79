#include "generator/tile_config.hpp"

#include <algorithm>

namespace bandjit {
namespace {

// Three blocks per SM (24 warps) fit under the first budget; larger tiles fall back to
// two blocks, then one.
constexpr std::uint32_t kBudgets[] = {74 * 1024, 112 * 1024, 200 * 1024};

int ceil_div(std::int64_t a, std::int64_t b) { return static_cast<int>((a + b - 1) / b); }
int round_up(int a, int b) { return ceil_div(a, b) * b; }
int vec_elems(DType d) { return 16 / static_cast<int>(element_size(d)); }

void fill_grid(BandTiling& t, const Problem& p) {
  t.diagonal_chunks = ceil_div(p.diagonals(), t.tile_diagonals);
  t.head_tile_start = head_tile_starts(p, t.tile_rows);
  t.tiles_per_batch = t.head_tile_start.back();
}

// Shrinks the diagonal chunk, then the slab, until the tile fits the budget.
template <class Bytes>
void fit(BandTiling& t, const Problem& p, int max_chunk, Bytes bytes) {
  const int v = vec_elems(p.dtype);
  for (std::uint32_t budget : kBudgets) {
    for (int chunk = max_chunk; chunk >= 32; chunk /= 2) {
      t.tile_diagonals = balanced_chunk(p.diagonals(), chunk);
      t.stage_ld = round_up(t.tile_diagonals + v - 1, v);
      t.shared_bytes = bytes(t);
      if (t.shared_bytes <= budget) return;
    }
  }
}

}  // namespace

std::vector<int> head_tile_starts(const Problem& p, int tile_rows) {
  std::vector<int> start(1, 0);
  for (std::int64_t h = 0; h < p.heads; ++h) {
    const auto d = p.dilation_of(h);
    start.push_back(start.back() + static_cast<int>(d) * tiles_per_residue(p.seq_len, d, tile_rows));
  }
  return start;
}

int tiles_per_residue(std::int64_t seq_len, std::int64_t dilation, int tile_rows) {
  return ceil_div(ceil_div(seq_len, dilation), tile_rows);
}

int balanced_chunk(std::int64_t diagonals, int max_chunk) {
  const int chunks = ceil_div(diagonals, max_chunk);
  return ceil_div(diagonals, chunks);
}

int pieces_per_row(std::int64_t diagonals, DType dtype) {
  const int v = vec_elems(dtype);
  return ceil_div(diagonals + v - 1, v);
}

bool qk_q_in_registers(const Problem& p) { return p.dtype != DType::float32 || p.head_dim <= 64; }

BandTiling band_qk_tiling(const Problem& p, int tile_rows) {
  BandTiling t;
  const std::uint32_t es = static_cast<std::uint32_t>(element_size(p.dtype));
  const std::uint32_t ldq = static_cast<std::uint32_t>(p.head_dim) + 16 / es;
  t.threads = 256;  // 8 warps: row groups of 16 rows, each split over 8·16 / TM warps
  t.tile_rows = tile_rows ? tile_rows : 64;
  t.slab_rows = p.dtype == DType::float32 ? 32 : 64;
  const bool q_in_regs = qk_q_in_registers(p);
  fit(t, p, p.dtype == DType::float32 ? 256 : 576, [&](const BandTiling& x) {
    const std::uint32_t q = x.tile_rows * ldq * es, stage = x.tile_rows * x.stage_ld * es;
    const std::uint32_t ring = 3 * x.slab_rows * ldq * es;
    return (q_in_regs ? std::max(q, stage) : q + stage) + ring;  // Q's space is reused for staging
  });
  fill_grid(t, p);
  return t;
}

BandTiling band_pv_tiling(const Problem& p, int tile_rows) {
  BandTiling t;
  const std::uint32_t es = static_cast<std::uint32_t>(element_size(p.dtype));
  const std::uint32_t ldv = static_cast<std::uint32_t>(p.head_dim) + 8;
  t.threads = 256;  // 8 warps: row groups of 16 rows × column parts
  t.tile_rows = tile_rows ? tile_rows : 64;
  t.slab_rows = p.dtype == DType::float32 ? 32 : 64;
  fit(t, p, p.dtype == DType::float32 ? 256 : 576, [&](const BandTiling& x) {
    return x.tile_rows * x.stage_ld * es + 3 * x.slab_rows * ldv * es;
  });
  fill_grid(t, p);
  return t;
}

TpvTiling band_tpv_tiling(const Problem& p, int tile_rows) {
  TpvTiling t;
  const int es = static_cast<int>(element_size(p.dtype)), v = vec_elems(p.dtype);
  const int nd = static_cast<int>(p.head_dim / 8);
  t.column_parts = ceil_div(nd, 8);  // at most 8 n-tiles (64 columns) of accumulators per warp
  t.tile_rows = tile_rows ? tile_rows : 64;
  t.threads = 32 * (t.tile_rows / 16) * t.column_parts;
  t.slab_rows = 32;
  t.stage_ld = round_up(t.tile_rows + v - 1, v);
  t.value_ld = static_cast<int>(p.head_dim) + 8;  // as band_pv: conflict-free B fragments
  t.stages = p.dtype == DType::float32 ? 3 : 4;
  const auto bytes = [&] {
    return static_cast<std::uint32_t>(t.stages * t.slab_rows * (t.stage_ld + t.value_ld) * es);
  };
  while (t.stages > 2 && bytes() > kBudgets[1]) --t.stages;
  t.shared_bytes = bytes();
  // 16-bit types with one column part: ≤ 85 registers, so six blocks (24 warps) fit an SM
  // and the seed problem's 768 tiles run in one wave. Otherwise ≤ 128 registers. Never more
  // blocks than the SM's shared memory holds (228 KiB, 1 KiB reserved per block).
  const int wanted = p.dtype != DType::float32 && t.column_parts == 1 && t.tile_rows == 64 ? 6
                     : t.threads <= 128                                                  ? 4
                                                                                         : 1;
  t.min_blocks = std::max(1, std::min(wanted, static_cast<int>(228 * 1024 / (t.shared_bytes + 1024))));
  t.head_tile_start = head_tile_starts(p, t.tile_rows);
  t.tiles_per_batch = t.head_tile_start.back();
  return t;
}

SoftmaxTiling band_softmax_tiling(const Problem& p) {
  SoftmaxTiling t;
  const int v = vec_elems(p.dtype);
  const int pieces = pieces_per_row(p.diagonals(), p.dtype);
  t.row_threads = 1;
  while (t.row_threads < 1024 && ceil_div(pieces, t.row_threads) * v > 32) t.row_threads *= 2;
  t.pieces_per_thread = ceil_div(pieces, t.row_threads);
  t.threads = std::max(t.row_threads, 256);
  t.rows_per_block = t.threads / t.row_threads;
  t.blocks = (p.batch * p.heads * p.seq_len + t.rows_per_block - 1) / t.rows_per_block;
  return t;
}

}  // namespace bandjit
