#include <map>
#include <set>

#include "bandjit/errors.hpp"
#include "generator/family_registry.hpp"
#include "generator/tile_config.hpp"
#include "support/catch.hpp"
#include "support/problems.hpp"

using namespace bandjit;

namespace {

Problem make(std::int64_t n, std::int64_t wl, std::int64_t wr, std::vector<std::int64_t> dil, DType dt = DType::float16,
             std::int64_t dh = 64, std::int64_t heads = 4) {
  return test::band_problem(1, heads, n, dh, wl, wr, dt, std::move(dil));
}

// The block → (head, residue, rows) decoding of templates/band_tiles.cuh, restated on the
// host: every query row of every head must belong to exactly one block.
template <class Tiling>
std::map<std::pair<int, int>, int> rows_covered(const Problem& p, const Tiling& t) {
  std::map<std::pair<int, int>, int> seen;
  for (int x = 0; x < t.tiles_per_batch; ++x) {
    int h = 0;
    while (x >= t.head_tile_start[h + 1]) ++h;
    const int local = x - t.head_tile_start[h];
    const int D = static_cast<int>(p.dilation_of(h));
    const int per_residue = tiles_per_residue(p.seq_len, D, t.block_rows());
    const int r = local / per_residue, t0 = (local % per_residue) * t.block_rows();
    const int len = static_cast<int>((p.seq_len - r + D - 1) / D);
    for (int row = t0; row < std::min(len, t0 + t.block_rows()); ++row) seen[{h, r + D * row}]++;
  }
  return seen;
}

}  // namespace

TEST_CASE("tiling: diagonal chunks are balanced and cover C", "[tiling]") {
  CHECK(balanced_chunk(513, 64) == 57);  // 9 × 57 = 513, not 8 × 64 + 1
  CHECK(pieces_per_row(513, DType::float16) == 65);  // 513 + 7 elements of phase, 8 per piece
  CHECK(pieces_per_row(513, DType::float32) == 129);
  CHECK(balanced_chunk(33, 64) == 33);
  CHECK(balanced_chunk(64, 64) == 64);
  CHECK(balanced_chunk(65, 64) == 33);
  for (std::int64_t c = 1; c < 3000; c += 7) {
    const int tj = balanced_chunk(c, 64);
    const std::int64_t chunks = (c + tj - 1) / tj;
    CHECK(tj <= 64);
    CHECK(chunks * tj >= c);
    CHECK((chunks - 1) * tj < c);  // no empty chunk
  }
}

TEST_CASE("tiling: every query row is in exactly one block", "[tiling]") {
  for (const auto& p : {make(4096, 256, 256, {1}), make(100, 8, 8, {3}), make(13, 5, 3, {1}), make(129, 16, 16, {1, 2, 3, 4}),
                        make(40, 30, 25, {3}), make(23040, 512, 0, {1, 1, 3, 3}), make(1, 0, 0, {1}),
                        make(77, 12, 0, {2}, DType::float32, 256)}) {
    for (const BandTiling& t : {band_qk_tiling(p), band_pv_tiling(p)}) {
      const auto seen = rows_covered(p, t);
      CHECK(seen.size() == static_cast<std::size_t>(p.heads * p.seq_len));
      for (const auto& [row, count] : seen) CHECK(count == 1);
    }
    for (int tile_rows : {0, 32}) {
      const auto seen = rows_covered(p, band_tpv_tiling(p, tile_rows));
      CHECK(seen.size() == static_cast<std::size_t>(p.heads * p.seq_len));
      for (const auto& [row, count] : seen) CHECK(count == 1);
    }
  }
}

TEST_CASE("tiling: staged rows hold any 16-byte phase and shared memory fits", "[tiling]") {
  for (DType dt : {DType::float32, DType::float16, DType::bfloat16})
    for (std::int64_t dh : {16, 32, 48, 64, 128, 256})
      for (std::int64_t w : {0, 1, 16, 63, 256, 4096}) {
        const Problem p = make(10000, w, w / 2, {1}, dt, dh);
        const BandTiling qk = band_qk_tiling(p), pv = band_pv_tiling(p);
        INFO("dtype " << to_string(dt) << " head_dim " << dh << " window " << w);
        const int v = 16 / static_cast<int>(element_size(dt));
        for (const BandTiling& t : {qk, pv}) {
          CHECK(t.stage_ld >= t.tile_diagonals + v - 1);
          CHECK(t.stage_ld % v == 0);
          CHECK(t.shared_bytes <= kMaxSharedBytes);
          CHECK(t.diagonal_chunks * t.tile_diagonals >= p.diagonals());
          CHECK((t.diagonal_chunks - 1) * t.tile_diagonals < p.diagonals());
          CHECK(t.tile_rows % 16 == 0);
        }
        CHECK(qk.stage_ld >= qk.tile_diagonals + 45);  // band_qk's slack for off-band products
        CHECK((qk.threads / 32) % (qk.tile_rows / 32) == 0);  // warps split evenly over 32-row groups
        CHECK(pv.stage_ld >= pv.tile_diagonals + 54);  // band_pv's zero slack around each row
        CHECK(pv.threads == 32 * (pv.tile_rows / 32) * pv.column_parts);
        CHECK(p.head_dim / 8 % pv.column_parts == 0);
        CHECK(pv.threads <= 1024);
      }
  // The seed problem: band_qk in two chunks of 257 diagonals, two blocks per SM; band_pv
  // in four chunks of 129, three blocks per SM.
  const Problem seed = make(4096, 256, 256, {1});
  CHECK(band_qk_tiling(seed).diagonal_chunks == 2);
  CHECK(band_qk_tiling(seed).min_blocks == 2);
  CHECK(band_pv_tiling(seed).diagonal_chunks == 4);
  CHECK(band_qk_tiling(seed).shared_bytes <= 112 * 1024);
  CHECK(band_pv_tiling(seed).shared_bytes <= 74 * 1024);
  CHECK(balanced_chunk(513, 256) == 171);
  // band_pv's Hopper kernel: 128-key slabs, two in flight, from 513 diagonals on (three blocks
  // per SM); narrower bands 32 keys, four in flight; an override wins.
  const BandTiling wide = band_pv_tiling(seed), narrow = band_pv_tiling(make(4096, 255, 256, {1}));
  REQUIRE(wide.wgmma);
  CHECK(wide.wgmma_slab_keys == 128);
  CHECK(wide.wgmma_stages == 2);
  CHECK(wide.wgmma_shared_bytes == 1024 + 2 * (128 * 128 + 64 * 136 * 2));
  CHECK(3 * (wide.wgmma_shared_bytes + 1024) <= 228 * 1024);  // three blocks per SM (1 KiB reserved each)
  CHECK(narrow.wgmma_slab_keys == 32);
  CHECK(narrow.wgmma_stages == 4);
  // Off the Hopper path the source keeps 32,4 whatever the band (float32 here).
  const BandTiling portable = band_pv_tiling(make(4096, 256, 256, {1}, DType::float32));
  CHECK_FALSE(portable.wgmma);
  CHECK(portable.wgmma_slab_keys == 32);
  CHECK(portable.wgmma_stages == 4);
  CHECK(band_pv_tiling(seed, 0, 0, 0, 64, 3).wgmma_slab_keys == 64);
  CHECK(band_pv_tiling(seed, 0, 0, 0, 64, 3).wgmma_stages == 3);
}

TEST_CASE("tiling: band_pv's Hopper kernel stages whole P rows of bands of 41 to 129 diagonals", "[tiling]") {
  // The measured default (bench/results/2026-12-02-band-staging): 41 and 129 diagonals whole
  // rows; 40, 33, 130, 131 and the seed's 513 slabs. Whole rows: V slabs + 64 rows of C + 7
  // rounded up to an odd multiple of 8, between margins of 64 and KS + 16 elements + the rows'
  // starts.
  const BandTiling w129 = band_pv_tiling(make(4096, 64, 64, {1})), w131 = band_pv_tiling(make(4096, 65, 65, {1}));
  const BandTiling causal = band_pv_tiling(make(4096, 128, 0, {1})), seed = band_pv_tiling(make(4096, 256, 256, {1}));
  REQUIRE(w129.wgmma);
  CHECK(w129.wgmma_whole_rows);
  CHECK(w129.wgmma_shared_bytes == 1024 + 4 * 32 * 128 + (64 + 64 * 136 + 32 + 16) * 2 + 64 * 8);
  CHECK(causal.wgmma_whole_rows);
  CHECK_FALSE(band_pv_tiling(make(4096, 65, 64, {1})).wgmma_whole_rows);  // 130 diagonals
  CHECK(band_pv_tiling(make(4096, 20, 20, {1})).wgmma_whole_rows);         // 41
  CHECK_FALSE(band_pv_tiling(make(4096, 20, 19, {1})).wgmma_whole_rows);   // 40
  CHECK_FALSE(band_pv_tiling(make(4096, 16, 16, {1})).wgmma_whole_rows);   // 33
  CHECK_FALSE(w131.wgmma_whole_rows);
  // Rows an odd number of 16-byte units apart: 57 diagonals would round to 64 elements (bank
  // conflicts between the 8 rows of a fragment load), so they take 72.
  CHECK(band_pv_tiling(make(4096, 28, 28, {1})).wgmma_shared_bytes ==
        1024 + 4 * 32 * 128 + (64 + 64 * 72 + 32 + 16) * 2 + 64 * 8);
  CHECK(w131.wgmma_shared_bytes == 1024 + 4 * (32 * 128 + 64 * 40 * 2));
  CHECK_FALSE(seed.wgmma_whole_rows);
  // The switch: 1 (BANDJIT_PV_WHOLE_ROWS=0) keeps slabs, 2 (=1) takes whole rows wherever a
  // block fits an SM: the seed (two blocks) and C = 1025 (one), not C = 4097.
  CHECK_FALSE(band_pv_tiling(make(4096, 64, 64, {1}), 0, 0, 0, 0, 0, 1).wgmma_whole_rows);
  const BandTiling forced = band_pv_tiling(make(4096, 256, 256, {1}), 0, 0, 0, 0, 0, 2);
  CHECK(forced.wgmma_whole_rows);
  CHECK(forced.wgmma_shared_bytes == 1024 + 2 * 128 * 128 + (64 + 64 * 520 + 128 + 16) * 2 + 64 * 8);
  CHECK(band_pv_tiling(make(32768, 512, 512, {1}), 0, 0, 0, 0, 0, 2).wgmma_whole_rows);
  CHECK_FALSE(band_pv_tiling(make(32768, 2048, 2048, {1}), 0, 0, 0, 0, 0, 2).wgmma_whole_rows);
  // O is staged in the V slabs: 32 keys, two in flight (8 KiB) cannot hold its 9 KiB.
  CHECK_FALSE(band_pv_tiling(make(4096, 64, 64, {1}), 0, 0, 0, 32, 2).wgmma_whole_rows);
  // Off the Hopper path never.
  CHECK_FALSE(band_pv_tiling(make(4096, 64, 64, {1}, DType::float32)).wgmma_whole_rows);
}

TEST_CASE("tiling: softmax threads hold the whole row in registers", "[tiling]") {
  for (std::int64_t c : {1, 2, 17, 33, 129, 513, 1601, 2049, 8193, 32767}) {
    Problem p = make(40000, c / 2, c - 1 - c / 2, {1});
    const SoftmaxTiling t = band_softmax_tiling(p);
    INFO("C = " << c);
    CHECK(t.row_threads * t.pieces_per_thread >= pieces_per_row(c, p.dtype));
    CHECK(t.pieces_per_thread * 8 <= (t.row_threads == 1024 ? 40 : 32));
    CHECK((t.row_threads & (t.row_threads - 1)) == 0);
    CHECK(t.rows_per_block * t.row_threads == t.threads);
    CHECK(t.threads <= 1024);
    CHECK(t.blocks * t.rows_per_block >= p.heads * p.seq_len);  // per batch: grid.z = batch
  }
}

TEST_CASE("tiling: band_tpv's warps, segments and shared memory", "[tiling]") {
  for (DType dt : {DType::float32, DType::float16, DType::bfloat16})
    for (std::int64_t dh : {16, 32, 48, 64, 80, 128, 208, 256})
      for (int tile_rows : {0, 32}) {
        const TpvTiling t = band_tpv_tiling(make(5000, 300, 20, {1}, dt, dh), tile_rows);
        INFO("dtype " << to_string(dt) << " head_dim " << dh << " tile_rows " << tile_rows);
        const int v = 16 / static_cast<int>(element_size(dt));
        const bool wide16 = dt != DType::float32 && dh <= 64;  // one column part: 128-row tiles
        CHECK(t.tile_rows == (tile_rows ? tile_rows : wide16 ? 128 : 64));
        CHECK(t.threads == 32 * (t.tile_rows / 16) * t.column_parts);
        CHECK(t.threads <= 1024);
        CHECK((dh / 8 + t.column_parts - 1) / t.column_parts <= 8);  // ≤ 64 accumulator columns per warp
        CHECK(t.stage_ld >= t.tile_rows + v - 1);  // a segment of TM elements at any phase
        CHECK(t.stage_ld % v == 0);
        CHECK((t.value_ld * element_size(dt)) % 16 == 0);
        CHECK(t.slab_rows % 16 == 0);
        CHECK(t.stages >= 2);
        // Three slabs in flight for 128-row tiles (one m-tile per warp), four otherwise, fewer
        // only where shared memory asks.
        CHECK(t.stages <= (t.tile_rows == 128 ? 3 : 4));
        if (wide16 && !tile_rows) CHECK(t.stages == 3);
        CHECK(t.shared_bytes ==
              static_cast<std::uint32_t>(t.stages * t.slab_rows * (t.stage_ld + t.value_ld) * element_size(dt)));
        CHECK(t.shared_bytes <= kMaxSharedBytes);
        CHECK(t.min_blocks * (t.shared_bytes + 1024) <= 228u * 1024);  // the promised blocks fit an SM
      }
  // The seed problem in float16: 384 tiles of 128 rows, three slabs in flight, three blocks
  // of 39 KiB per SM (one wave on 132 SMs); 64-row tiles: 768 tiles, five blocks of 36 KiB.
  const TpvTiling seed = band_tpv_tiling(make(4096, 256, 256, {1}, DType::float16, 64, 12));
  CHECK(seed.tiles_per_batch == 384);
  CHECK(seed.min_blocks == 3);
  CHECK(seed.stages == 3);
  CHECK(seed.shared_bytes == 39936);
  const TpvTiling seed64 = band_tpv_tiling(make(4096, 256, 256, {1}, DType::float16, 64, 12), 64);
  CHECK(seed64.tiles_per_batch == 768);
  CHECK(seed64.min_blocks == 5);  // a wide band: the interior-slab paths need > 80 registers
  CHECK(seed64.shared_bytes == 36864);
}

TEST_CASE("tiling: tuning overrides fit an SM or are refused by name", "[tiling]") {
  for (DType dt : {DType::float32, DType::float16})
    for (std::int64_t dh : {16, 64, 128, 192, 256})
      for (int rows : {0, 32, 64})
        for (int diagonals : {0, 16, 1024}) {
          const Problem p = make(5000, 700, 300, {1}, dt, dh);
          INFO("dtype " << to_string(dt) << " head_dim " << dh << " rows " << rows << " diagonals " << diagonals);
          try {
            const BandTiling qk = band_qk_tiling(p, rows, diagonals);
            CHECK(qk.shared_bytes + 8u * static_cast<std::uint32_t>(qk.tile_rows) <= kMaxSharedBytes);
          } catch (const Error& e) {
            CHECK(rows == 64);  // only the 64-row tile can outgrow an SM
            CHECK(std::string(e.what()).find("BANDJIT_TILE_ROWS") != std::string::npos);
          }
          CHECK(band_pv_tiling(p, rows, diagonals).shared_bytes <= kMaxSharedBytes);
        }
  // band_tpv: 64,64,4 of a float32 head_dim 256 problem needs 4 × 64 × (68 + 264) × 4 bytes.
  const Problem wide = make(4096, 256, 256, {1}, DType::float32, 256, 12);
  try {
    (void)band_tpv_tiling(wide, 64, 64, 4);
    FAIL("a band_tpv tiling larger than an SM was accepted");
  } catch (const Error& e) {
    CHECK(std::string(e.what()).find("BANDJIT_TPV_TILING") != std::string::npos);
    CHECK(std::string(e.what()).find("fit an SM") != std::string::npos);
  }
  CHECK(band_tpv_tiling(wide, 64, 32, 2).shared_bytes <= kMaxSharedBytes);
}

TEST_CASE("tiling: sliding_window_attention fits every target; the Hopper kernel has its own launch", "[tiling]") {
  for (DType dt : {DType::float32, DType::float16, DType::bfloat16})
    for (std::int64_t dh = 16; dh <= 256; dh += 16)
      for (KeyMask m : {KeyMask::none, KeyMask::additive}) {
        Problem p = make(4096, 256, 256, {1}, dt, dh);
        p.key_mask = m;
        INFO(slug(p));
        const AttentionTiling t = sliding_window_attention_tiling(p);
        CHECK(t.shared_bytes <= kPortableSharedBytes);  // sm_86/sm_89 hold it, so sm_80 and sm_90 do
        CHECK(t.key_tile >= 16);
        CHECK(t.key_tile % 16 == 0);
        const bool hopper = dt != DType::float32 && (dh == 64 || dh == 128);
        CHECK(t.wgmma == hopper);
        CHECK((t.wgmma_shared_bytes > 0) == hopper);
        CHECK(t.wgmma_shared_bytes <= kMaxSharedBytes);
        CHECK_FALSE(sliding_window_attention_tiling(p, 0, 0, 1).wgmma);  // switched off
        // The source carries both launches: the sm_90a build takes the Hopper kernel's.
        const Source s = generate_sliding_window_attention(p);
        CHECK(s.arch_specific == hopper);
        CHECK(launch_for(s, "sm_80").shared_bytes == t.shared_bytes);
        CHECK(launch_for(s, "sm_90").shared_bytes == (hopper ? t.wgmma_shared_bytes : t.shared_bytes));
      }
  // An override that does not fit sm_90 is refused, naming the knobs.
  try {
    sliding_window_attention_tiling(make(4096, 256, 256, {1}, DType::float32, 256), 128, 128);
    FAIL("accepted a tile larger than an SM");
  } catch (const Error& e) {
    CHECK(std::string(e.what()).find("BANDJIT_ATTENTION_KEY_TILE") != std::string::npos);
  }
}

TEST_CASE("tiling: the Hopper band products' launches (band_qk tiles the problem its own way)", "[tiling]") {
  for (DType dt : {DType::float32, DType::float16, DType::bfloat16})
    for (std::int64_t dh : {32, 64, 128})
      for (std::vector<std::int64_t> dil : {std::vector<std::int64_t>{1}, std::vector<std::int64_t>{4}}) {
        const Problem p = make(4096, 256, 256, dil, dt, dh, 12);
        INFO(slug(p));
        const bool hopper = dt != DType::float32 && dh == 64;
        // band_qk: 64-row tiles × chunks of ≤ 560 diagonals (the seed problem: one chunk),
        // 128 threads, on sm_90 only; other targets keep the mma.sync kernel's launch.
        const BandTiling qk = band_qk_tiling(p);
        const Source sq = generate_band_qk(p);
        CHECK(qk.wgmma == hopper);
        CHECK(sq.arch_specific == hopper);
        const LaunchShape q80 = launch_for(sq, "sm_80"), q90 = launch_for(sq, "sm_90");
        CHECK(q80.block[0] == static_cast<std::uint32_t>(qk.threads));
        CHECK(q80.grid[0] == static_cast<std::uint32_t>(qk.tiles_per_batch));
        CHECK(q80.grid[1] == static_cast<std::uint32_t>(qk.diagonal_chunks));
        CHECK(q90.grid[2] == q80.grid[2]);  // the batch
        if (hopper) {
          CHECK(q90.block[0] == 128u);
          CHECK(q90.grid[0] == static_cast<std::uint32_t>(12 * 4096 / 64));  // 768: every residue has 4096 / D rows
          CHECK(q90.grid[1] == 1u);
          CHECK(q90.shared_bytes == qk.wgmma_shared_bytes);
          CHECK(2 * (qk.wgmma_shared_bytes + 1024) <= 228u * 1024);  // two blocks per SM
        } else {
          CHECK(q90.block[0] == q80.block[0]);
          CHECK(q90.grid[0] == q80.grid[0]);
          CHECK(q90.shared_bytes == q80.shared_bytes);
        }
        CHECK_FALSE(band_qk_tiling(p, 0, 0, 1).wgmma);  // switched off
        // band_pv and band_tpv: the portable launch, the Hopper build's own shared memory.
        for (const Source& s : {generate_band_pv(p), generate_band_tpv(p)}) {
          CHECK(s.arch_specific == hopper);
          const LaunchShape l80 = launch_for(s, "sm_80"), l90 = launch_for(s, "sm_90");
          CHECK(l90.block[0] == l80.block[0]);
          CHECK(l90.grid[0] == l80.grid[0]);
          CHECK(l90.shared_bytes == (hopper ? s.arch_specific_shared_bytes : l80.shared_bytes));
        }
      }
}
