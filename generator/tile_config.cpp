#include "generator/tile_config.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "bandjit/errors.hpp"

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
  t.head_tile_start = head_tile_starts(p, t.block_rows());
  t.tiles_per_batch = t.head_tile_start.back();
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

int qk_row_tiles_per_warp(const Problem& p) {
  return p.dtype != DType::float32 && p.head_dim <= 128 ? 2 : 1;
}

bool qk_q_in_registers(const Problem& p) { return p.dtype != DType::float32 || p.head_dim <= 64; }

int qk_stage_ld(int tile_diagonals, DType dtype) {
  const int v = vec_elems(dtype);
  int ld = round_up(tile_diagonals + 45, v);
  if ((ld / v) % 2 == 0) ld += v;  // an odd number of 16-byte units: rows start on rotating banks
  return ld;
}

BandTiling band_qk_tiling(const Problem& p, int tile_rows, int max_diagonals, int wgmma) {
  BandTiling t;
  const std::uint32_t es = static_cast<std::uint32_t>(element_size(p.dtype));
  const int v = vec_elems(p.dtype);
  const std::uint32_t ldk = static_cast<std::uint32_t>(p.head_dim + v);
  t.threads = 256;  // 8 warps over row groups of 32 rows × their key n-tiles
  // 32 rows: the smaller tile keeps more blocks per SM, which measured faster (H200, seed
  // problem: 54.7 vs 71.4 µs float16, 184 vs 232 µs float32).
  t.tile_rows = tile_rows ? tile_rows : 32;
  t.row_tiles_per_warp = qk_row_tiles_per_warp(p);
  // Two blocks per SM with 257-diagonal chunks measured faster than four with 129 (H200,
  // seed problem float16: 52.3 vs 56.7 µs): the first budget is the two-block one.
  for (std::uint32_t budget : {kBudgets[1], kBudgets[2]}) {
    if (max_diagonals) budget = kMaxSharedBytes;
    for (int chunk = max_diagonals ? max_diagonals : 576; chunk >= 16; chunk /= 2) {
      t.tile_diagonals = balanced_chunk(p.diagonals(), chunk);
      t.stage_ld = qk_stage_ld(t.tile_diagonals, p.dtype);
      // a ring of round8(TM + TJ) + TM key rows, two Q tiles, the staging tile (32-element margin)
      const std::uint32_t ring = static_cast<std::uint32_t>(round_up(t.tile_rows + t.tile_diagonals, 8) + t.tile_rows);
      const std::uint32_t stage = static_cast<std::uint32_t>(32 + t.tile_rows * t.stage_ld) * es;
      t.shared_bytes = (ring + 2 * t.tile_rows) * ldk * es + stage;
      if (t.shared_bytes <= budget) break;
    }
    if (t.shared_bytes <= budget) break;
  }
  // A tuning override (rows, diagonals) can ask for more than an SM holds: say so here
  // rather than let the launch fail (the template adds 8·TM static bytes).
  if (t.shared_bytes + 8u * static_cast<std::uint32_t>(t.tile_rows) > kMaxSharedBytes)
    throw Error(ErrorKind::invalid_problem,
                fmt::format("band_qk needs {} bytes of shared memory with {} rows per tile (BANDJIT_TILE_ROWS) "
                            "for head_dim {} {}; at most {} fit an SM: use BANDJIT_TILE_ROWS=32",
                            t.shared_bytes, t.tile_rows, p.head_dim, to_string(p.dtype), kMaxSharedBytes));
  // Registers: 64 per thread keep four blocks per SM for 16-bit head_dim ≤ 64 without
  // spills; wider Q fragments or 3xTF32 need up to 128.
  const std::uint32_t by_smem = kMaxSharedBytes / (t.shared_bytes + 1024);
  const std::uint32_t wanted = p.dtype != DType::float32 && p.head_dim <= 64 ? 4 : 2;
  t.min_blocks = static_cast<int>(std::max<std::uint32_t>(1, std::min(wanted, by_smem)));
  // Runs of consecutive tiles per block (each prefetches the next): long enough to hide the
  // loads, short enough to leave ~3 waves of blocks on a 132-SM card for balance.
  t.run_tiles = 1;
  fill_grid(t, p);
  const std::int64_t tiles = std::int64_t{t.tiles_per_batch} * t.diagonal_chunks * sized_batch(p);
  t.run_tiles = static_cast<int>(std::clamp<std::int64_t>(tiles / (3 * kAssumedSms * t.min_blocks), 1, 16));
  fill_grid(t, p);
  // The Hopper kernel: one warpgroup per 64 rows × a chunk of at most 560 diagonals, two
  // blocks per SM (QkWgmmaSmem: 1 KiB slack, Q and four K tiles of 8 KiB, the staging tile, 64
  // row starts). One 513-diagonal chunk measured faster than two of 257 at three blocks per SM
  // (H200 float16: seed 42.3 against 43.0 µs, B = 12 418.6 against 501.9; the mma.sync kernel
  // 46.0 and 428.6: bench/results/2026-12-02-hopper-pv-tpv/5-qk-first). Staged rows are
  // 16-byte multiples, not 128-byte ones (bank conflicts).
  t.wgmma = wgmma != 1 && p.dtype != DType::float32 && p.head_dim == 64 && p.uniform_dilation();
  if (t.wgmma) {
    t.wgmma_diagonals = balanced_chunk(p.diagonals(), max_diagonals ? max_diagonals : 560);
    t.wgmma_stage_ld = round_up(t.wgmma_diagonals + 7, 8);
    if (t.wgmma_stage_ld % 64 == 0) t.wgmma_stage_ld += 8;
    t.wgmma_chunks = static_cast<int>((p.diagonals() + t.wgmma_diagonals - 1) / t.wgmma_diagonals);
    t.wgmma_tiles_per_batch = head_tile_starts(p, 64).back();
    t.wgmma_shared_bytes = static_cast<std::uint32_t>(1024 + 5 * 64 * 128 + 64 * t.wgmma_stage_ld * 2 + 64 * 8);
    if (t.wgmma_shared_bytes > kMaxSharedBytes) t.wgmma = false;  // only a huge override gets here
  }
  return t;
}

int pv_column_parts(const Problem& p) {
  const int ntiles = static_cast<int>(p.head_dim / 8);  // even: head_dim is a multiple of 16
  return ntiles / (ntiles % 4 == 0 ? 4 : 2);         // 2 or 4 n-tiles per warp
}

BandTiling band_pv_tiling(const Problem& p, int tile_rows, int max_diagonals, int wgmma, int wgmma_slab_keys,
                          int wgmma_stages, int whole_rows) {
  BandTiling t;
  const std::uint32_t es = static_cast<std::uint32_t>(element_size(p.dtype));
  const int v = vec_elems(p.dtype);
  const std::uint32_t ldv = static_cast<std::uint32_t>(p.head_dim) + 8;
  t.tile_rows = tile_rows ? tile_rows : 64;
  t.column_parts = pv_column_parts(p);
  t.threads = 32 * (t.tile_rows / 32) * t.column_parts;  // row groups of 32 × column parts
  for (std::uint32_t budget : kBudgets) {
    if (max_diagonals) budget = kMaxSharedBytes;
    for (int chunk = max_diagonals ? max_diagonals : 288; chunk >= 16; chunk /= 2) {
      t.tile_diagonals = balanced_chunk(p.diagonals(), chunk);
      t.stage_ld = round_up(t.tile_diagonals + 54, v);  // zero slack: templates/band_pv.cuh
      const std::uint32_t values = static_cast<std::uint32_t>(round_up(t.tile_rows + t.tile_diagonals, 16) + 1);
      t.shared_bytes = values * ldv * es + static_cast<std::uint32_t>(32 + t.tile_rows * t.stage_ld) * es;
      if (t.shared_bytes <= budget) break;
    }
    if (t.shared_bytes <= budget) break;
  }
  // The Hopper path: one warpgroup (64 rows, 128 threads: the portable launch) streaming
  // slabs of keys (PvWgmmaSmem: 1 KiB of alignment slack, then per stage the swizzled V rows
  // and the 64 P runs of slab + 8 elements).
  t.wgmma = wgmma != 1 && p.dtype != DType::float32 && p.head_dim == 64 && t.tile_rows == 64 && t.threads == 128;
  // (The override reaches only kernels that take the Hopper path: other sources, and their
  // cache keys, keep the defaults.)
  // Bands of 513 diagonals or more take slabs of 128 keys, two in flight (three blocks per SM):
  // each row's P leaves in runs of 272 bytes instead of 80, which is what bounds the kernel
  // (H200, same run, float16 µs: seed 36.8 -> 34.8, B = 12 337.9 -> 313.1, N = 32768 w = 512
  // 458.9 -> 410.4; 64,4 in between, 128,3 slower than 32,4 on three of four problems:
  // bench/results/2026-12-02-qk-pv-anatomy/pv-slabs). Narrower bands keep 32 keys, four in
  // flight (not measured with longer slabs). Kernels off the Hopper path keep 32,4 (their
  // source, and cache key, do not depend on the band).
  const bool long_slabs = t.wgmma && p.diagonals() >= 513;
  t.wgmma_slab_keys = t.wgmma && wgmma_slab_keys ? wgmma_slab_keys : long_slabs ? 128 : 32;
  t.wgmma_stages = t.wgmma && wgmma_stages ? wgmma_stages : long_slabs ? 2 : 4;
  if (t.wgmma) {
    const int ks = t.wgmma_slab_keys, v_bytes = t.wgmma_stages * ks * 128;
    t.wgmma_shared_bytes = static_cast<std::uint32_t>(1024 + v_bytes + t.wgmma_stages * 64 * (ks + 8) * 2);
    // Whole P rows (PvWgmmaSmem): 64 rows of C + 7 rounded up to an odd multiple of 8, between
    // margins of 64 and KS + 16 elements, and their starts; O is staged in the V slabs, so
    // those must hold it.
    // By default for bands of 41 to 129 diagonals, where the slabs' P runs are short: H200,
    // float16, same run, µs: C = 57 12.2 → 11.8, 65 12.8 → 12.0, 89 14.4 → 13.6, 121 16.4 →
    // 15.2, 129 16.9 → 15.5 (B = 12: 110.3 → 102.4); no gain at 25 (9.7 → 10.1) and 33 (10.0
    // → 10.1, causal 10.1 → 10.6); wider bands lose: C = 193 20.6 → 21.0, 257 23.9 → 24.5, the
    // seed's 513 34.9 → 38.1 (two blocks an SM instead of three;
    // bench/results/2026-12-02-band-staging).
    const std::int64_t ldr = ((p.diagonals() + 14) / 8 | 1) * 8;  // odd 16-byte units: no bank conflicts
    const std::int64_t whole = 1024 + v_bytes + (64 + 64 * ldr + ks + 16) * 2 + 64 * 8;
    const bool o_fits = v_bytes >= 64 * (64 + 8) * 2;
    const bool by_default = whole_rows == 0 && p.diagonals() > 40 && p.diagonals() <= 129;  // (≤ 85 KB)
    t.wgmma_whole_rows = o_fits && (by_default || (whole_rows == 2 && whole <= kMaxSharedBytes));
    if (t.wgmma_whole_rows) t.wgmma_shared_bytes = static_cast<std::uint32_t>(whole);
  }
  fill_grid(t, p);
  return t;
}

TpvTiling band_tpv_tiling(const Problem& p, int tile_rows, int slab_rows, int stages, int row_tiles, int wgmma) {
  TpvTiling t;
  const int es = static_cast<int>(element_size(p.dtype)), v = vec_elems(p.dtype);
  const int nd = static_cast<int>(p.head_dim / 8);
  t.column_parts = ceil_div(nd, 8);  // at most 8 n-tiles (64 columns) of accumulators per warp
  const bool one_part16 = p.dtype != DType::float32 && t.column_parts == 1;
  // 16-bit types with one column part: 128-row tiles, which read each Y row half as often as
  // 64-row ones (seed problem 40.8 → 35.6 µs, BANDJIT_TPV_TILING sweep 2026-12-01). Bands
  // narrower than 128 + 32 − 1 diagonals have no slab wholly inside the band, so they keep
  // 64-row tiles.
  t.tile_rows = tile_rows ? tile_rows : one_part16 && p.diagonals() >= 128 + 32 - 1 ? 128 : 64;
  // Two m-tiles per warp only for 16-bit types (float32's slab partials would double too).
  t.row_tiles_per_warp = row_tiles && p.dtype != DType::float32 && t.tile_rows % (16 * row_tiles) == 0 ? row_tiles : 1;
  t.threads = 32 * (t.tile_rows / (16 * t.row_tiles_per_warp)) * t.column_parts;
  t.slab_rows = slab_rows ? slab_rows : 32;
  t.stage_ld = round_up(t.tile_rows + v - 1, v);
  t.value_ld = static_cast<int>(p.head_dim) + 8;  // as band_pv: conflict-free B fragments
  // Four slabs in flight (float32 64,32,4: 128 µs against 142.9 with three, BANDJIT_TPV_TILING
  // sweep 2026-12-01), three for 128-row tiles of one m-tile per warp (seed float16 31.6 µs
  // against 33.4 once edge slabs staged per lane; B = 12 the same, 294.7 against 291.7:
  // bench/results/2026-12-01-issue-4/10-final-record), fewer where shared memory says so.
  t.stages = stages ? stages : t.tile_rows == 128 && t.row_tiles_per_warp == 1 ? 3 : 4;
  const auto bytes = [&] {
    return static_cast<std::uint32_t>(t.stages * t.slab_rows * (t.stage_ld + t.value_ld) * es);
  };
  while (!stages && t.stages > 2 && bytes() > kBudgets[1]) --t.stages;
  t.shared_bytes = bytes();
  // An override (BANDJIT_TPV_TILING) can ask for more than an SM holds: say so here rather
  // than let the launch fail with the driver's bare error.
  if (t.shared_bytes > kMaxSharedBytes)
    throw Error(ErrorKind::invalid_problem,
                fmt::format("band_tpv needs {} bytes of shared memory with {} rows per tile, {} rows per slab and {} "
                            "stages (BANDJIT_TPV_TILING) for head_dim {} {}; at most {} fit an SM: use fewer stages, "
                            "slab rows or tile rows",
                            t.shared_bytes, t.tile_rows, t.slab_rows, t.stages, p.head_dim, to_string(p.dtype),
                            kMaxSharedBytes));
  // Blocks per SM the registers must allow, never more than the SM's shared memory holds
  // (228 KiB, 1 KiB reserved per block). 16-bit types with one column part: 64-row tiles six
  // (≤ 85 registers), 128-row tiles three (≤ 85); per-head dilation tables and head_dim
  // 48-style n-tile counts spill at 80, and so do the interior-slab paths (bands of
  // ≥ TM + KS − 1 diagonals) with 64-row tiles: one block fewer there. Two m-tiles per warp
  // (twice the accumulators): four blocks, ≤ 128 registers. Otherwise 4 (≤ 128 threads) or 1.
  const bool lean = p.uniform_dilation() && p.head_dim % 32 == 0;
  const bool interior = p.window_left + p.window_right >= t.tile_rows + t.slab_rows - 2;
  const int wanted = one_part16 && t.row_tiles_per_warp == 2 ? 4
                     : one_part16 && t.tile_rows == 64    ? (lean && !interior ? 6 : 5)
                     : one_part16 && t.tile_rows == 128 ? (lean ? 3 : 2)
                     : t.threads <= 128               ? 4
                                                      : 1;
  t.min_blocks = std::max(1, std::min(wanted, static_cast<int>(228 * 1024 / (t.shared_bytes + 1024))));
  // The Hopper path: whole warpgroups of 64 rows, one 128-byte Y row per band row u (head_dim
  // 64), Y swizzled (TpvWgmmaSmem: 1 KiB of alignment slack, then the slabs).
  t.wgmma = wgmma != 1 && p.dtype != DType::float32 && p.head_dim == 64 && t.tile_rows % 64 == 0 &&
            t.row_tiles_per_warp == 1 && t.column_parts == 1 && t.slab_rows % 16 == 0 &&
            t.threads % t.slab_rows == 0 && t.stage_ld == t.tile_rows + v;
  if (t.wgmma)
    t.wgmma_shared_bytes =
        static_cast<std::uint32_t>(1024 + t.stages * t.slab_rows * (128 + t.stage_ld * es));
  t.head_tile_start = head_tile_starts(p, t.tile_rows);
  t.tiles_per_batch = t.head_tile_start.back();
  return t;
}

AttentionTiling sliding_window_attention_tiling(const Problem& p, int tile_rows, int key_tile, int wgmma) {
  AttentionTiling t;
  const int es = static_cast<int>(element_size(p.dtype));
  t.tile_rows = tile_rows ? tile_rows : 64;
  t.threads = 32 * (t.tile_rows / 16);
  t.row_ld = static_cast<int>(p.head_dim) + vec_elems(p.dtype);  // 16-byte pad: conflict-free ldmatrix rows
  // The layout of AttentionSmem (the template static_asserts that this covers it).
  const auto bytes = [&] {
    const int warps = t.tile_rows / 16;
    int floats = p.dtype == DType::float32 ? warps * 16 * (t.key_tile + 4) : 0;  // float32: P per warp
    if (p.key_mask != KeyMask::none) floats += t.stages * t.key_tile;
    return static_cast<std::uint32_t>((t.tile_rows + 2 * t.stages * t.key_tile) * t.row_ld * es + floats * 4);
  };
  // 64-key tiles, halved (down to 16), then fewer query rows (down to 16), until the block
  // fits every target's shared memory (99 KiB on sm_86/sm_89; sm_80 has 163, sm_90 227):
  // float32 with head_dim ≥ 64 and 16-bit head_dim 256 take smaller tiles. Overrides may use
  // up to sm_90's.
  t.key_tile = key_tile ? key_tile : 64;
  while (bytes() > kPortableSharedBytes) {
    if (!key_tile && t.key_tile > 16) {
      t.key_tile /= 2;
    } else if (!tile_rows && t.tile_rows > 16) {
      t.tile_rows /= 2;
      t.threads = 32 * (t.tile_rows / 16);
    } else {
      break;
    }
  }
  t.shared_bytes = bytes();
  // The Hopper kernel (built for sm_90a only, launched with its own shared memory): 1 KiB of
  // alignment slack, Q, two stages of K and V in the swizzled layout, the mask.
  t.wgmma = wgmma != 1 && p.dtype != DType::float32 && (p.head_dim == 64 || p.head_dim == 128) &&
            t.tile_rows == 64 && t.key_tile % 64 == 0;
  if (t.wgmma)
    t.wgmma_shared_bytes = static_cast<std::uint32_t>(1024 + (t.tile_rows + 4 * t.key_tile) * p.head_dim * es +
                                                      (p.key_mask != KeyMask::none ? 2 * t.key_tile * 4 : 0));
  if (std::max(t.shared_bytes, t.wgmma_shared_bytes) > kMaxSharedBytes)
    throw Error(ErrorKind::invalid_problem,
                fmt::format("sliding_window_attention needs {} bytes of shared memory with {} query rows and {} keys "
                            "per tile (BANDJIT_ATTENTION_TILE_ROWS, BANDJIT_ATTENTION_KEY_TILE) for head_dim {} {}; at "
                            "most {} fit an SM: use smaller tiles",
                            std::max(t.shared_bytes, t.wgmma_shared_bytes), t.tile_rows, t.key_tile, p.head_dim,
                            to_string(p.dtype), kMaxSharedBytes));
  t.head_tile_start = head_tile_starts(p, t.tile_rows);
  t.tiles_per_batch = t.head_tile_start.back();
  return t;
}

SoftmaxTiling band_softmax_tiling(const Problem& p, int row_group) {
  SoftmaxTiling t;
  const int v = vec_elems(p.dtype);
  const int pieces = pieces_per_row(p.diagonals(), p.dtype);
  t.row_threads = 1;
  while (t.row_threads < 1024 && ceil_div(pieces, t.row_threads) * v > 32) t.row_threads *= 2;
  t.pieces_per_thread = ceil_div(pieces, t.row_threads);
  t.threads = std::max(t.row_threads, 256);
  t.rows_per_block = t.threads / t.row_threads;
  t.row_group = std::max(1, row_group);
  const std::int64_t block_rows = std::int64_t(t.rows_per_block) * t.row_group;
  t.blocks = (p.heads * p.seq_len + block_rows - 1) / block_rows;  // per batch: grid.z
  return t;
}

}  // namespace bandjit
