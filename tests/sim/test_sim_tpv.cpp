// band_tpv's template (templates/band_tpv.cuh, with band_tiles.cuh and vector_io.cuh) run on
// the CPU by the SIMT emulator, against the float64 reference: the staging of the X
// segments at their phase, the transposed A fragments, the band-edge checks and the slab
// pipeline are exercised here without a GPU, on the tiling the generator picks.
#define BANDJIT_USE_FP16 1
#define BANDJIT_SIM_WGMMA 1  // Cfgs with kWgmma take the Hopper path (wgmma emulated: tests/sim/bandjit/wgmma.cuh)
#define __shared__  // band_tpv uses only the dynamic (extern) shared memory
#include "bandjit/band_tpv.cuh"

#include <cmath>
#include <cstring>
#include <random>

#include "generator/tile_config.hpp"
#include "reference/band_reference.hpp"
#include "sim/band_cfg.hpp"
#include "sim/device_tensor.hpp"
#include "sim/errors.hpp"
#include "support/catch.hpp"
#include "support/problems.hpp"

namespace bandjit {
alignas(16) unsigned char smem[256 * 1024];  // the block's dynamic shared memory
}

using namespace bandjit;

namespace {

// The generated struct Cfg of docs/kernels.md for one problem; sizes from the template
// arguments, tables from the generator's tiling (checked against it by the test).
// KS other than 32 makes the case pass its slab rows and stages to the tiling as overrides
// (BANDJIT_TPV_TILING).
template <class T_, int B, int H, int N, int DH, int WL, int WR, int LAYOUT, int DIL, int TM, int PARTS, int STAGES,
          int MW = 1, int KS = 32, bool WGMMA = false>
struct TpvCfg : sim::BandCfg<T_, B, H, N, DH, WL, WR, LAYOUT, DIL> {
  using T = T_;
  static constexpr bool kWgmma = WGMMA;
  static constexpr unsigned kWgmmaSharedBytes = sizeof(smem);
  static constexpr int kThreads = 32 * (TM / (16 * MW)) * PARTS, kTileRows = TM, kColumnParts = PARTS, kSlabRows = KS;
  static constexpr int kRowTilesPerWarp = MW;
  static constexpr int kStages = STAGES, kValueLD = DH + 8;
  static constexpr int kVec = 16 / sizeof(T);
  static constexpr int kStageLD = (TM + kVec - 1 + kVec - 1) / kVec * kVec;
};

// override_tiling: pass the slab rows and stages to the tiling even for 32-row slabs.
template <class Cfg>
void run_case(Problem p, int tile_rows = Cfg::kTileRows, bool override_tiling = false) {  // 0: the generator's default
  using T = typename Cfg::T;
  p.dtype = std::is_same_v<T, float> ? DType::float32 : DType::float16;
  INFO(slug(p));
  const bool overrides = override_tiling || Cfg::kSlabRows != 32;
  const TpvTiling t = band_tpv_tiling(p, tile_rows, overrides ? Cfg::kSlabRows : 0, overrides ? Cfg::kStages : 0,
                                      Cfg::kRowTilesPerWarp, Cfg::kWgmma ? 2 : 1);
  REQUIRE(t.wgmma == Cfg::kWgmma);
  if (Cfg::kWgmma) REQUIRE(t.wgmma_shared_bytes == TpvWgmmaSmem<Cfg>::kBytes);
  REQUIRE(t.threads == Cfg::kThreads);
  REQUIRE(t.tile_rows == Cfg::kTileRows);
  REQUIRE(t.column_parts == Cfg::kColumnParts);
  REQUIRE(t.slab_rows == Cfg::kSlabRows);
  REQUIRE(t.stages == Cfg::kStages);
  REQUIRE(t.stage_ld == Cfg::kStageLD);
  REQUIRE(t.value_ld == Cfg::kValueLD);
  REQUIRE(t.shared_bytes <= sizeof(smem));
  Cfg::set_tables(p, t.head_tile_start);

  const auto C = p.diagonals();
  const std::size_t n_band = static_cast<std::size_t>(p.batch * p.heads * p.seq_len * C);
  const std::size_t n_qkv = static_cast<std::size_t>(p.batch * p.heads * p.seq_len * p.head_dim);
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<double> x = sim::random_band_nan_off_sequence(p, rng), y(n_qkv);
  for (auto& v : y) v = u(rng);
  // Device tensors, and their values as the kernel sees them.
  sim::DeviceTensor<T> gx(n_band), gy(n_qkv), gz(n_qkv);
  gx.upload(x);
  gy.upload(y);
  gz.poison();
  sim::global_ranges = {{gx.data(), gx.bytes()}, {gy.data(), gy.bytes()}};
  // Edge slabs stage only the band's pieces; the rest keeps the NaN shared memory and must be
  // masked, never multiplied in.
  sim::launch_checked({static_cast<unsigned>(t.tiles_per_batch), 1, static_cast<unsigned>(p.batch)}, t.threads, smem,
                      sizeof(smem), [&] { band_tpv<Cfg>(gx.data(), gy.data(), gz.data()); });
  // NaN at the invalid slots of X would make the reference NaN too: it reads only valid ones.
  sim::check_head_dim_rows(
      p, gz,
      [&](std::int64_t b, std::int64_t h, std::int64_t i, double* row) {
        reference::band_tpv_row(p, x.data(), y.data(), b, h, i, row);
      },
      std::is_same_v<T, float> ? 1e-6 : 2e-3);
}

using test::band_problem;

}  // namespace

TEST_CASE("sim: band_tpv float32, w_l != w_r, bnhd", "[sim]") {
  run_case<TpvCfg<float, 1, 2, 50, 16, 7, 3, kLayoutBNHD, 1, 64, 1, 4>>(band_problem(1, 2, 50, 16, 7, 3));
}

TEST_CASE("sim: band_tpv float16, per-head dilation, bhnd, two batches", "[sim]") {
  run_case<TpvCfg<__half, 2, 3, 150, 32, 20, 9, kLayoutBHND, 0, 64, 1, 4>>(
      band_problem(2, 3, 150, 32, 20, 9, DType::float16, {1, 2, 3}, Layout::bhnd));
}

TEST_CASE("sim: band_tpv float16, window_right = 0, dilation 2", "[sim]") {
  run_case<TpvCfg<__half, 1, 2, 100, 64, 40, 0, kLayoutBNHD, 2, 64, 1, 4>>(
      band_problem(1, 2, 100, 64, 40, 0, DType::float16, {2}));
}

TEST_CASE("sim: band_tpv float16, window_left = 0 and N < 16", "[sim]") {
  run_case<TpvCfg<__half, 1, 1, 13, 16, 0, 5, kLayoutBNHD, 1, 64, 1, 4>>(band_problem(1, 1, 13, 16, 0, 5));
  run_case<TpvCfg<__half, 2, 1, 13, 16, 5, 3, kLayoutBHND, 1, 64, 1, 4>>(
      band_problem(2, 1, 13, 16, 5, 3, DType::float16, {1}, Layout::bhnd));
}

TEST_CASE("sim: band_tpv float32, two column parts, window >= N/2", "[sim]") {
  run_case<TpvCfg<float, 1, 1, 77, 80, 12, 40, kLayoutBNHD, 1, 64, 2, 4>>(band_problem(1, 1, 77, 80, 12, 40));
}

TEST_CASE("sim: band_tpv float16, dilation * window >= N, 32-row tiles", "[sim]") {
  run_case<TpvCfg<__half, 1, 2, 90, 16, 30, 31, kLayoutBNHD, 0, 32, 1, 4>>(
      band_problem(1, 2, 90, 16, 30, 31, DType::float16, {4, 1}), 32);
}

TEST_CASE("sim: band_tpv float16, long band (several slabs per row group)", "[sim]") {
  run_case<TpvCfg<__half, 1, 1, 300, 16, 100, 77, kLayoutBHND, 1, 64, 1, 4>>(
      band_problem(1, 1, 300, 16, 100, 77, DType::float16, {1}, Layout::bhnd));
}

TEST_CASE("sim: band_tpv at every k-step alignment of the band's edges", "[sim]") {
  // The first tile's k-steps start at u = 0, so w_r mod 16 (float32: 8) decides where the
  // band's edges cut them: cover the residues next to the checked/unchecked boundary.
  run_case<TpvCfg<__half, 1, 1, 70, 16, 3, 14, kLayoutBNHD, 1, 64, 1, 4>>(band_problem(1, 1, 70, 16, 3, 14));
  run_case<TpvCfg<__half, 1, 1, 70, 16, 17, 15, kLayoutBNHD, 1, 64, 1, 4>>(band_problem(1, 1, 70, 16, 17, 15));
  run_case<TpvCfg<__half, 1, 1, 70, 16, 1, 30, kLayoutBHND, 1, 64, 1, 4>>(
      band_problem(1, 1, 70, 16, 1, 30, DType::float16, {1}, Layout::bhnd));
  run_case<TpvCfg<float, 1, 1, 70, 16, 9, 22, kLayoutBNHD, 1, 64, 1, 4>>(band_problem(1, 1, 70, 16, 9, 22));
  run_case<TpvCfg<float, 1, 1, 70, 16, 2, 7, kLayoutBNHD, 1, 64, 1, 4>>(band_problem(1, 1, 70, 16, 2, 7));
}

TEST_CASE("sim: band_tpv interior slabs (the unchecked staging) at odd segment phases", "[sim]") {
  // bnhd with 2 heads: consecutive rows of a head are 2·C − 1 elements apart, an odd step, so
  // the staged segments take every phase; the bands are wide enough for whole interior slabs.
  run_case<TpvCfg<__half, 1, 2, 400, 64, 96, 64, kLayoutBNHD, 1, 64, 1, 4>>(band_problem(1, 2, 400, 64, 96, 64));
  run_case<TpvCfg<__half, 2, 1, 300, 32, 70, 90, kLayoutBHND, 2, 64, 1, 4>>(
      band_problem(2, 1, 300, 32, 70, 90, DType::float16, {2}, Layout::bhnd));
  run_case<TpvCfg<float, 1, 2, 300, 32, 80, 70, kLayoutBNHD, 1, 64, 1, 4>>(band_problem(1, 2, 300, 32, 80, 70));
}

TEST_CASE("sim: band_tpv float16 at the default tiles: 128 rows, 64 for narrow bands", "[sim]") {
  // tile_rows 0: the generator's own choice must be the tile of these Cfgs (128 rows and
  // three stages from C ≥ 159 diagonals on).
  run_case<TpvCfg<__half, 1, 2, 400, 64, 96, 64, kLayoutBNHD, 1, 128, 1, 3>>(band_problem(1, 2, 400, 64, 96, 64), 0);
  run_case<TpvCfg<__half, 2, 3, 333, 32, 80, 90, kLayoutBHND, 0, 128, 1, 3>>(
      band_problem(2, 3, 333, 32, 80, 90, DType::float16, {1, 3, 2}, Layout::bhnd), 0);
  run_case<TpvCfg<__half, 1, 1, 300, 16, 100, 57, kLayoutBNHD, 1, 64, 1, 4>>(band_problem(1, 1, 300, 16, 100, 57), 0);
}

TEST_CASE("sim: band_tpv float16 with two m-tiles per warp", "[sim]") {
  run_case<TpvCfg<__half, 1, 2, 400, 64, 96, 64, kLayoutBNHD, 1, 128, 1, 4, 2>>(band_problem(1, 2, 400, 64, 96, 64));
  run_case<TpvCfg<__half, 2, 3, 333, 32, 80, 90, kLayoutBHND, 0, 128, 1, 4, 2>>(
      band_problem(2, 3, 333, 32, 80, 90, DType::float16, {1, 3, 2}, Layout::bhnd));
  run_case<TpvCfg<__half, 1, 1, 300, 16, 100, 57, kLayoutBNHD, 1, 64, 1, 4, 2>>(band_problem(1, 1, 300, 16, 100, 57));
  run_case<TpvCfg<__half, 1, 2, 90, 16, 30, 31, kLayoutBNHD, 0, 64, 1, 4, 2>>(
      band_problem(1, 2, 90, 16, 30, 31, DType::float16, {4, 1}));
  run_case<TpvCfg<__half, 1, 1, 13, 16, 0, 5, kLayoutBNHD, 1, 64, 1, 4, 2>>(band_problem(1, 1, 13, 16, 0, 5));
}

TEST_CASE("sim: band_tpv interior slabs with several column parts", "[sim]") {
  // head_dim above 64 splits the columns over 2 or 4 warps per row group; the staging lanes
  // per row (TPR) grow with the block, up to more lanes than pieces (one round, XK = 1).
  run_case<TpvCfg<__half, 1, 1, 300, 128, 100, 60, kLayoutBNHD, 1, 64, 2, 4>>(band_problem(1, 1, 300, 128, 100, 60));
  run_case<TpvCfg<float, 1, 1, 300, 128, 100, 60, kLayoutBHND, 1, 64, 2, 4>>(
      band_problem(1, 1, 300, 128, 100, 60, DType::float32, {1}, Layout::bhnd));
  run_case<TpvCfg<__half, 1, 1, 200, 256, 70, 50, kLayoutBNHD, 1, 64, 4, 4>>(band_problem(1, 1, 200, 256, 70, 50));
}

TEST_CASE("sim: band_tpv tiny and odd bands, per-head dilation, both layouts", "[sim]") {
  run_case<TpvCfg<__half, 2, 1, 1, 16, 0, 0, kLayoutBNHD, 1, 64, 1, 4>>(band_problem(2, 1, 1, 16, 0, 0));  // N = 1, C = 1
  run_case<TpvCfg<__half, 2, 3, 37, 16, 0, 0, kLayoutBNHD, 0, 64, 1, 4>>(
      band_problem(2, 3, 37, 16, 0, 0, DType::float16, {1, 2, 5}));
  run_case<TpvCfg<__half, 2, 3, 201, 48, 33, 0, kLayoutBHND, 0, 64, 1, 4>>(
      band_problem(2, 3, 201, 48, 33, 0, DType::float16, {1, 2, 3}, Layout::bhnd));
  run_case<TpvCfg<float, 1, 2, 150, 48, 0, 41, kLayoutBNHD, 1, 64, 1, 4>>(
      band_problem(1, 2, 150, 48, 0, 41, DType::float32));
}

TEST_CASE("sim: band_tpv tiling overrides: 64-row slabs and the general staging", "[sim]") {
  run_case<TpvCfg<__half, 1, 2, 300, 64, 70, 50, kLayoutBNHD, 1, 32, 1, 4, 1, 64>>(band_problem(1, 2, 300, 64, 70, 50),
                                                                                  32);
  run_case<TpvCfg<__half, 1, 2, 200, 64, 100, 77, kLayoutBNHD, 1, 128, 1, 2, 1, 64>>(
      band_problem(1, 2, 200, 64, 100, 77), 128);
  // 32-row tiles, two m-tiles per warp, head_dim 192: 96 threads for 64-row slabs, so the
  // per-lane staging does not apply and stage_tpv_slab (with load_masked) does the work.
  run_case<TpvCfg<__half, 1, 2, 250, 192, 70, 60, kLayoutBNHD, 1, 32, 3, 2, 2, 64>>(
      band_problem(1, 2, 250, 192, 70, 60), 32);
  run_case<TpvCfg<__half, 2, 2, 41, 192, 3, 9, kLayoutBHND, 0, 32, 3, 2, 2, 64>>(
      band_problem(2, 2, 41, 192, 3, 9, DType::float16, {1, 2}, Layout::bhnd), 32);
  // One warp per block (32 threads) for 64-row slabs: fewer threads than slab rows.
  run_case<TpvCfg<__half, 1, 2, 120, 64, 20, 30, kLayoutBNHD, 1, 32, 1, 2, 2, 64>>(band_problem(1, 2, 120, 64, 20, 30),
                                                                                  32);
}

TEST_CASE("sim: band_tpv writes Z through shared memory, or from the fragments where it does not fit", "[sim]") {
  // Z's tile (TM × (Dh + 8) halves) against the pipeline's buffers (stages × KS × (LD + LDY)):
  // 128 rows of head_dim 144 need 38 912 bytes, two 32-row slabs hold 36 864, so this
  // tiling (BANDJIT_TPV_TILING=128,32,2) stores Z from the fragments; three stages stage it.
  static_assert(128 * (144 + 8) * 2 > 2 * 32 * (136 + 152) * 2 && 128 * (144 + 8) * 2 <= 3 * 32 * (136 + 152) * 2);
  run_case<TpvCfg<__half, 1, 1, 150, 144, 40, 30, kLayoutBNHD, 1, 128, 3, 2>>(band_problem(1, 1, 150, 144, 40, 30), 128,
                                                                            true);
  run_case<TpvCfg<__half, 1, 1, 150, 144, 40, 30, kLayoutBNHD, 1, 128, 3, 3>>(band_problem(1, 1, 150, 144, 40, 30), 128,
                                                                            true);
}

TEST_CASE("sim: band_tpv's Hopper path (wgmma with register A fragments)", "[sim]") {
  // Two warpgroups per 128-row tile at the default tiling: interior and edge slabs, odd
  // segment phases (bnhd, 2 heads), per-head dilation, a tile whose second warpgroup has no rows.
  run_case<TpvCfg<__half, 1, 2, 400, 64, 96, 64, kLayoutBNHD, 1, 128, 1, 3, 1, 32, true>>(
      band_problem(1, 2, 400, 64, 96, 64), 0);
  run_case<TpvCfg<__half, 2, 3, 333, 64, 80, 90, kLayoutBHND, 0, 128, 1, 3, 1, 32, true>>(
      band_problem(2, 3, 333, 64, 80, 90, DType::float16, {1, 3, 2}, Layout::bhnd), 0);
  // One warpgroup (64-row tiles: two Y pieces per lane), window_right = 0, dilation 2; a band
  // narrower than a tile (no interior slab) at odd k-step alignments.
  run_case<TpvCfg<__half, 1, 2, 150, 64, 40, 0, kLayoutBNHD, 2, 64, 1, 4, 1, 32, true>>(
      band_problem(1, 2, 150, 64, 40, 0, DType::float16, {2}), 64);
  run_case<TpvCfg<__half, 1, 1, 70, 64, 3, 14, kLayoutBNHD, 1, 64, 1, 4, 1, 32, true>>(
      band_problem(1, 1, 70, 64, 3, 14), 64);
  // The band-edge tests one key off: w_r ≡ 14 or 1 mod 16 in first tiles, C ≡ 15 mod 16 (found
  // by review: off-by-ones in them passed the cases above).
  run_case<TpvCfg<__half, 1, 2, 200, 64, 16, 14, kLayoutBNHD, 1, 64, 1, 4, 1, 32, true>>(
      band_problem(1, 2, 200, 64, 16, 14), 0);
  run_case<TpvCfg<__half, 1, 2, 150, 64, 45, 1, kLayoutBHND, 1, 64, 1, 4, 1, 32, true>>(
      band_problem(1, 2, 150, 64, 45, 1, DType::float16, {1}, Layout::bhnd), 0);
  // 64-row slabs (four k-steps per slab).
  run_case<TpvCfg<__half, 1, 2, 300, 64, 100, 77, kLayoutBNHD, 1, 128, 1, 2, 1, 64, true>>(
      band_problem(1, 2, 300, 64, 100, 77), 128);
}
