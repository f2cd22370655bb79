// band_softmax_backward's template run on the CPU by the SIMT emulator against the float64
// reference: row decoding, 16-byte pieces at any phase, the shuffle and cross-warp
// reductions, masks, exact zeros off the allowed slots, and dS written in place over dP.
#define BANDJIT_USE_FP16 1
#define __shared__ static  // the block's fixed shared arrays (blocks run one at a time)
#include "bandjit/band_softmax_backward.cuh"

#include <cmath>
#include <random>

#include "band_softmax_case.hpp"
#include "reference/band_reference.hpp"
#include "support/catch.hpp"
#include "support/problems.hpp"

using namespace bandjit;

namespace {

template <class T, int B, int H, int N, int WL, int WR, int LAYOUT, int DIL, int MASK, int R, int NV, int RPB>
using SoftmaxBackwardCfg = sim::SoftmaxRowsCfg<T, B, H, N, WL, WR, LAYOUT, DIL, MASK, R, NV, RPB>;

template <class Cfg>
void run_case(Problem p, bool in_place) {
  using T = typename Cfg::T;
  const SoftmaxTiling t = sim::softmax_rows_setup<Cfg>(p);
  INFO(slug(p) << (in_place ? " in place" : ""));
  const auto C = p.diagonals();
  const std::size_t n = static_cast<std::size_t>(p.batch * p.heads * p.seq_len * C);
  std::mt19937 rng(9);
  std::uniform_real_distribution<double> u(0, 1);
  const sim::KeyPaddingMask mask(p, rng);
  // P: NaN where the key is outside the sequence; dP: −inf there, as band_qk writes it.
  std::vector<double> prob(n), dprob(n);
  for (std::int64_t b = 0; b < p.batch; ++b)
    for (std::int64_t h = 0; h < p.heads; ++h)
      for (std::int64_t i = 0; i < p.seq_len; ++i)
        for (std::int64_t j = 0; j < C; ++j) {
          const auto at = reference::band_index(p, b, h, i, j);
          const bool valid = reference::key_of(p, h, i, j) >= 0;
          prob[at] = valid ? u(rng) / C : std::nan("");
          dprob[at] = valid ? 8 * u(rng) - 4 : -INFINITY;
        }
  std::vector<T> buf_p(n + 16), buf_dp(n + 16), buf_ds(n + 16);
  T *gp = sim::aligned16(buf_p), *gdp = sim::aligned16(buf_dp), *gds = in_place ? gdp : sim::aligned16(buf_ds);
  for (std::size_t k = 0; k < n; ++k) {
    gp[k] = from_float<T>(static_cast<float>(prob[k]));
    prob[k] = to_float(gp[k]);
    gdp[k] = from_float<T>(static_cast<float>(dprob[k]));
    dprob[k] = to_float(gdp[k]);
    if (!in_place) gds[k] = from_float<T>(std::nanf(""));
  }
  const void* m = mask.for_kernel(Cfg::kKeyMask);
  sim::failures.clear();
  sim::launch({static_cast<unsigned>(t.blocks), 1, static_cast<unsigned>(p.batch)}, t.threads, [&] { band_softmax_backward<Cfg>(gp, gdp, gds, m); });
  CHECK(sim::failures.empty());

  const double* mask_ptr = mask.for_reference(p);
  sim::check_band_rows(p, mask_ptr, gds, [&](std::int64_t b, std::int64_t h, std::int64_t i, std::size_t at, double* ref) {
    reference::band_softmax_backward_row(p, &prob[at], &dprob[at], mask_ptr, b, h, i, ref);
  });
}

using test::band_problem;

}  // namespace

TEST_CASE("sim: band_softmax_backward float32 and float16, one warp per row", "[sim]") {
  run_case<SoftmaxBackwardCfg<float, 2, 3, 40, 9, 4, kLayoutBNHD, 1, kMaskNone, 1, 5, 256>>(
      band_problem(2, 3, 40, 64, 9, 4), false);
  run_case<SoftmaxBackwardCfg<__half, 1, 3, 50, 20, 0, kLayoutBHND, 0, kMaskBool, 1, 4, 256>>(
      band_problem(1, 3, 50, 64, 20, 0, DType::float16, {1, 2, 3}, Layout::bhnd), true);
  run_case<SoftmaxBackwardCfg<__half, 2, 2, 60, 30, 30, kLayoutBNHD, 2, kMaskAdditive, 4, 3, 64>>(
      band_problem(2, 2, 60, 64, 30, 30, DType::float16, {2}), false);
}

TEST_CASE("sim: band_softmax_backward rows spanning two warps, in place", "[sim]") {
  run_case<SoftmaxBackwardCfg<__half, 1, 1, 608, 600, 499, kLayoutBNHD, 1, kMaskBool, 64, 3, 4>>(
      band_problem(1, 1, 608, 64, 600, 499, DType::float16), true);
}
