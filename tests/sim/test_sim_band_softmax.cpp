// band_softmax's template run on the CPU by the SIMT emulator against the float64 reference:
// row decoding, 16-byte pieces at any phase (a neighbour row's elements in the first and
// last), positive and negative scales, boolean and additive key masks, fully masked rows,
// exact zeros off the allowed slots, and P written in place over S.
#define BANDJIT_USE_FP16 1
#define __shared__ static  // the block's fixed shared arrays (blocks run one at a time)
#include "bandjit/band_softmax.cuh"

#include <cmath>
#include <random>

#include "band_softmax_case.hpp"
#include "reference/band_reference.hpp"
#include "support/catch.hpp"
#include "support/problems.hpp"

using namespace bandjit;

namespace {

template <class T, int B, int H, int N, int WL, int WR, int LAYOUT, int DIL, int MASK, int R, int NV, int RPB,
          bool NEGATIVE_SCALE = false, int GROUP = 1>
using SoftmaxCfg = sim::SoftmaxRowsCfg<T, B, H, N, WL, WR, LAYOUT, DIL, MASK, R, NV, RPB, NEGATIVE_SCALE, GROUP>;

// `fully_masked_rows`: the mask leaves some rows without a key (short windows over batch 0's
// first keys), and the test checks that some were exercised.
template <class Cfg>
void run_case(Problem p, bool in_place, bool fully_masked_rows = false) {
  using T = typename Cfg::T;
  const SoftmaxTiling t = sim::softmax_rows_setup<Cfg>(p);
  INFO(slug(p) << (in_place ? " in place" : ""));
  const auto C = p.diagonals();
  const std::size_t n = static_cast<std::size_t>(p.batch * p.heads * p.seq_len * C);
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> u(0, 1);
  const sim::KeyPaddingMask mask(p, rng);
  // S: scores in [−6, 6); NaN where the key is outside the sequence (never read as a value).
  std::vector<double> score(n);
  for (std::int64_t b = 0; b < p.batch; ++b)
    for (std::int64_t h = 0; h < p.heads; ++h)
      for (std::int64_t i = 0; i < p.seq_len; ++i)
        for (std::int64_t j = 0; j < C; ++j) {
          const auto at = reference::band_index(p, b, h, i, j);
          score[at] = reference::key_of(p, h, i, j) >= 0 ? 12 * u(rng) - 6 : std::nan("");
        }
  std::vector<T> buf_s(n + 16), buf_p(n + 16);
  T *gs = sim::aligned16(buf_s), *gp = in_place ? gs : sim::aligned16(buf_p);
  for (std::size_t k = 0; k < n; ++k) {
    gs[k] = from_float<T>(static_cast<float>(score[k]));
    score[k] = to_float(gs[k]);
    if (!in_place) gp[k] = from_float<T>(std::nanf(""));
  }
  const void* m = mask.for_kernel(Cfg::kKeyMask);
  sim::failures.clear();
  sim::launch({static_cast<unsigned>(t.blocks), 1, static_cast<unsigned>(p.batch)}, t.threads,
              [&] { band_softmax<Cfg>(gs, gp, m); });
  CHECK(sim::failures.empty());

  const double* mask_ptr = mask.for_reference(p);
  const std::size_t rows_all_zero =
      sim::check_band_rows(p, mask_ptr, gp, [&](std::int64_t b, std::int64_t h, std::int64_t i, std::size_t at, double* ref) {
        reference::band_softmax_row(p, &score[at], mask_ptr, b, h, i, ref);
      });
  if (fully_masked_rows) CHECK(rows_all_zero > 0);  // short windows over batch 0's first keys
}

using test::band_problem;

}  // namespace

TEST_CASE("sim: band_softmax float32 and float16, rows of one lane to two warps", "[sim]") {
  run_case<SoftmaxCfg<float, 2, 3, 40, 9, 4, kLayoutBNHD, 1, kMaskNone, 1, 5, 256>>(band_problem(2, 3, 40, 64, 9, 4),
                                                                                     false);
  run_case<SoftmaxCfg<__half, 1, 3, 50, 20, 0, kLayoutBHND, 0, kMaskBool, 1, 4, 256>>(
      band_problem(1, 3, 50, 64, 20, 0, DType::float16, {1, 2, 3}, Layout::bhnd), true, true);
  // 513 diagonals (the seed's window): 65 or 66 pieces a row over a warp, three a lane.
  run_case<SoftmaxCfg<__half, 1, 2, 70, 256, 256, kLayoutBNHD, 1, kMaskNone, 32, 3, 8>>(
      band_problem(1, 2, 70, 64, 256, 256, DType::float16), true);
  run_case<SoftmaxCfg<__half, 1, 1, 608, 600, 499, kLayoutBNHD, 1, kMaskBool, 64, 3, 4>>(
      band_problem(1, 1, 608, 64, 600, 499, DType::float16), false);
}

TEST_CASE("sim: band_softmax with an additive mask or a negative scale", "[sim]") {
  run_case<SoftmaxCfg<__half, 2, 2, 60, 30, 30, kLayoutBNHD, 2, kMaskAdditive, 4, 3, 64>>(
      band_problem(2, 2, 60, 64, 30, 30, DType::float16, {2}), false);
  run_case<SoftmaxCfg<float, 1, 2, 45, 12, 7, kLayoutBHND, 1, kMaskNone, 1, 6, 256, true>>(
      band_problem(1, 2, 45, 64, 12, 7, DType::float32, {1}, Layout::bhnd), true);
  run_case<SoftmaxCfg<__half, 2, 3, 40, 9, 4, kLayoutBNHD, 0, kMaskBool, 1, 3, 256, true>>(
      band_problem(2, 3, 40, 64, 9, 4, DType::float16, {1, 2, 1}), false, true);
}

TEST_CASE("sim: band_softmax with rows taken in turn, the next one loaded early", "[sim]") {
  // Groups of two or four consecutive rows (BANDJIT_ROW_PREFETCH); the last block's groups run
  // past the last row, in place and not.
  run_case<SoftmaxCfg<__half, 1, 2, 70, 256, 256, kLayoutBNHD, 1, kMaskNone, 32, 3, 8, false, 2>>(
      band_problem(1, 2, 70, 64, 256, 256, DType::float16), true);
  run_case<SoftmaxCfg<float, 2, 3, 41, 9, 4, kLayoutBHND, 0, kMaskBool, 1, 5, 256, false, 4>>(
      band_problem(2, 3, 41, 64, 9, 4, DType::float32, {1, 2, 3}, Layout::bhnd), false, true);
  // In place with two batches of 123 rows (not a multiple of 4): a group past its batch's
  // last row must not take the next batch's rows (found by review).
  run_case<SoftmaxCfg<float, 2, 3, 41, 9, 4, kLayoutBHND, 0, kMaskBool, 1, 5, 256, false, 4>>(
      band_problem(2, 3, 41, 64, 9, 4, DType::float32, {1, 2, 3}, Layout::bhnd), true, true);
  run_case<SoftmaxCfg<__half, 2, 2, 60, 30, 30, kLayoutBNHD, 2, kMaskAdditive, 4, 3, 64, false, 2>>(
      band_problem(2, 2, 60, 64, 30, 30, DType::float16, {2}), true);
  run_case<SoftmaxCfg<__half, 1, 1, 608, 600, 499, kLayoutBNHD, 1, kMaskNone, 64, 3, 4, false, 4>>(
      band_problem(1, 1, 608, 64, 600, 499, DType::float16), true);
  // Eight rows a group (the default for large 16-bit grids): two batches of 140 rows, and
  // 64-thread rows over 604 rows; both end in a partial group.
  run_case<SoftmaxCfg<__half, 2, 2, 70, 256, 256, kLayoutBNHD, 1, kMaskNone, 32, 3, 8, false, 8>>(
      band_problem(2, 2, 70, 64, 256, 256, DType::float16), true);
  run_case<SoftmaxCfg<__half, 1, 1, 604, 600, 499, kLayoutBNHD, 1, kMaskNone, 64, 3, 4, false, 8>>(
      band_problem(1, 1, 604, 64, 600, 499, DType::float16), false);
}
