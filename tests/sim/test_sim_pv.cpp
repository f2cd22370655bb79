// band_pv's Hopper path (templates/band_pv_wgmma.cuh) run on the CPU by the SIMT emulator, wgmma
// emulated (tests/sim/bandjit/wgmma.cuh), against the float64 reference: the P runs staged at
// their phase, the swizzled V slabs, the band-edge and sequence-end masks, the slab pipeline.
// (The mma.sync kernel of band_pv.cuh uses PTX the emulator does not model; the GPU tests and
// `check` cover it.)
#define BANDJIT_USE_FP16 1
#define BANDJIT_SIM_WGMMA 1
#define __shared__  // the template uses only the dynamic (extern) shared memory
#include "bandjit/band_pv_wgmma.cuh"

#include <cmath>
#include <random>

#include "generator/tile_config.hpp"
#include "reference/band_reference.hpp"
#include "sim/band_cfg.hpp"
#include "sim/device_tensor.hpp"
#include "sim/errors.hpp"
#include "support/catch.hpp"
#include "support/problems.hpp"

namespace bandjit {
extern unsigned char smem[256 * 1024];  // the block's dynamic shared memory (test_sim_tpv.cpp)
}

using namespace bandjit;

namespace {

template <class T_, int B, int H, int N, int WL, int WR, int LAYOUT, int DIL, int KS = 32, int STAGES = 4,
          bool WHOLE = false>
struct PvCfg : sim::BandCfg<T_, B, H, N, 64, WL, WR, LAYOUT, DIL> {
  using T = T_;
  static constexpr int kThreads = 128, kTileRows = 64, kWgmmaSlabKeys = KS, kWgmmaStages = STAGES;
  static constexpr bool kWgmma = true, kWgmmaWholeRows = WHOLE;
  static constexpr unsigned kWgmmaSharedBytes = PvWgmmaSmem<PvCfg>::kBytes;
};

template <class Cfg>
void run_case(Problem p) {
  using T = typename Cfg::T;
  p.dtype = DType::float16;
  INFO(slug(p));
  const BandTiling t =
      band_pv_tiling(p, 0, 0, 0, Cfg::kWgmmaSlabKeys, Cfg::kWgmmaStages, Cfg::kWgmmaWholeRows ? 2 : 1);
  REQUIRE(t.wgmma);
  REQUIRE(t.wgmma_whole_rows == Cfg::kWgmmaWholeRows);
  REQUIRE(t.threads == Cfg::kThreads);
  REQUIRE(t.tile_rows == Cfg::kTileRows);
  REQUIRE(t.wgmma_shared_bytes == PvWgmmaSmem<Cfg>::kBytes);
  Cfg::set_tables(p, t.head_tile_start);

  const auto C = p.diagonals();
  const std::size_t n_band = static_cast<std::size_t>(p.batch * p.heads * p.seq_len * C);
  const std::size_t n_qkv = static_cast<std::size_t>(p.batch * p.heads * p.seq_len * p.head_dim);
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<double> pr = sim::random_band_nan_off_sequence(p, rng), v(n_qkv);
  for (auto& x : v) x = u(rng);
  sim::DeviceTensor<T> gp(n_band), gv(n_qkv), go(n_qkv);
  gp.upload(pr);
  gv.upload(v);
  go.poison();
  sim::global_ranges = {{gp.data(), gp.bytes()}, {gv.data(), gv.bytes()}};
  // Skipped pieces keep the NaN shared memory: they must be masked, never multiplied in.
  sim::launch_checked({static_cast<unsigned>(t.tiles_per_batch), 1, static_cast<unsigned>(p.batch)}, t.threads, smem,
                      sizeof(smem), [&] { band_pv_wgmma<Cfg>(gp.data(), gv.data(), go.data()); });
  sim::check_head_dim_rows(
      p, go,
      [&](std::int64_t b, std::int64_t h, std::int64_t i, double* row) {
        reference::band_pv_row(p, &pr[reference::band_index(p, b, h, i, 0)], v.data(), b, h, i, row);
      },
      2e-3);
}

using test::band_problem;

}  // namespace

TEST_CASE("sim: band_pv's Hopper path (wgmma with register A fragments)", "[sim]") {
  // bnhd with 2 heads: rows of a head are 2·C apart, so the P runs take every phase; interior
  // and edge slabs; a tile shorter than 64 rows at the sequence's end.
  run_case<PvCfg<__half, 1, 2, 300, 100, 77, kLayoutBNHD, 1>>(band_problem(1, 2, 300, 64, 100, 77));
  // Per-head dilation, bhnd, two batches; window_right = 0 with dilation 2.
  run_case<PvCfg<__half, 2, 3, 211, 40, 45, kLayoutBHND, 0>>(
      band_problem(2, 3, 211, 64, 40, 45, DType::float16, {1, 3, 2}, Layout::bhnd));
  run_case<PvCfg<__half, 1, 2, 150, 50, 0, kLayoutBNHD, 2>>(band_problem(1, 2, 150, 64, 50, 0, DType::float16, {2}));
  // Narrow bands (C < a k-step), window_left = 0, N < 16.
  run_case<PvCfg<__half, 1, 3, 90, 3, 5, kLayoutBNHD, 1>>(band_problem(1, 3, 90, 64, 3, 5));
  run_case<PvCfg<__half, 2, 1, 13, 0, 4, kLayoutBNHD, 1>>(band_problem(2, 1, 13, 64, 0, 4));
  // The masked/unmasked boundary one key off: w_l ≡ 14 mod 16 in a first tile, and C ≡ 15 mod
  // 16 with rows whose last diagonal starts a new 16-byte piece (found by review: an off-by-one
  // in the unmasked test passed every case above).
  run_case<PvCfg<__half, 1, 2, 200, 30, 16, kLayoutBNHD, 1>>(band_problem(1, 2, 200, 64, 30, 16));
  run_case<PvCfg<__half, 1, 2, 199, 30, 16, kLayoutBHND, 1>>(
      band_problem(1, 2, 199, 64, 30, 16, DType::float16, {1}, Layout::bhnd));
}

TEST_CASE("sim: band_pv's Hopper path with 64-key slabs and three stages", "[sim]") {
  run_case<PvCfg<__half, 1, 2, 300, 100, 77, kLayoutBNHD, 1, 64, 3>>(band_problem(1, 2, 300, 64, 100, 77));
  run_case<PvCfg<__half, 2, 3, 211, 40, 45, kLayoutBHND, 0, 64, 2>>(
      band_problem(2, 3, 211, 64, 40, 45, DType::float16, {1, 3, 2}, Layout::bhnd));
  run_case<PvCfg<__half, 1, 3, 90, 3, 5, kLayoutBNHD, 1, 32, 3>>(band_problem(1, 3, 90, 64, 3, 5));
}

TEST_CASE("sim: band_pv's Hopper path with 128-key slabs", "[sim]") {
  // Runs of 136 elements (17 pieces, nine a lane); a band narrower and one wider than a slab.
  run_case<PvCfg<__half, 1, 2, 300, 100, 77, kLayoutBNHD, 1, 128, 3>>(band_problem(1, 2, 300, 64, 100, 77));
  run_case<PvCfg<__half, 2, 3, 211, 40, 45, kLayoutBHND, 0, 128, 2>>(
      band_problem(2, 3, 211, 64, 40, 45, DType::float16, {1, 3, 2}, Layout::bhnd));
  run_case<PvCfg<__half, 1, 2, 400, 200, 190, kLayoutBNHD, 2, 128, 4>>(
      band_problem(1, 2, 400, 64, 200, 190, DType::float16, {2}));
}

// (The emulator's cp.async copies land when their group is waited for: a row's copies that
// missed the first slab's group would read as NaN before its products.)
TEST_CASE("sim: band_pv's Hopper path with whole P rows", "[sim]") {
  // The rows staged once (every phase in bnhd with 2 heads), V in slabs of 32, 64 and 128 keys;
  // per-head dilation in bhnd; window_right = 0; a narrow band; N < 16; the tile at the
  // sequence's end shorter than 64 rows, whose unstaged rows keep NaN shared memory.
  run_case<PvCfg<__half, 1, 2, 300, 100, 77, kLayoutBNHD, 1, 128, 2, true>>(band_problem(1, 2, 300, 64, 100, 77));
  run_case<PvCfg<__half, 1, 2, 300, 100, 77, kLayoutBNHD, 1, 32, 4, true>>(band_problem(1, 2, 300, 64, 100, 77));
  run_case<PvCfg<__half, 2, 3, 211, 40, 45, kLayoutBHND, 0, 64, 3, true>>(
      band_problem(2, 3, 211, 64, 40, 45, DType::float16, {1, 3, 2}, Layout::bhnd));
  run_case<PvCfg<__half, 1, 2, 150, 50, 0, kLayoutBNHD, 2, 64, 2, true>>(band_problem(1, 2, 150, 64, 50, 0, DType::float16, {2}));
  run_case<PvCfg<__half, 1, 3, 90, 3, 5, kLayoutBNHD, 1, 32, 4, true>>(band_problem(1, 3, 90, 64, 3, 5));
  run_case<PvCfg<__half, 1, 2, 200, 28, 28, kLayoutBNHD, 1, 32, 4, true>>(band_problem(1, 2, 200, 64, 28, 28));
  run_case<PvCfg<__half, 2, 1, 13, 0, 4, kLayoutBNHD, 1, 32, 4, true>>(band_problem(2, 1, 13, 64, 0, 4));
  run_case<PvCfg<__half, 1, 2, 199, 30, 16, kLayoutBHND, 1, 64, 4, true>>(
      band_problem(1, 2, 199, 64, 30, 16, DType::float16, {1}, Layout::bhnd));
  run_case<PvCfg<__half, 1, 2, 400, 200, 190, kLayoutBNHD, 2, 128, 2, true>>(
      band_problem(1, 2, 400, 64, 200, 190, DType::float16, {2}));
}
