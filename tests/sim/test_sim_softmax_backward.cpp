// band_softmax_backward's template run on the CPU by the SIMT emulator against the float64
// reference: row decoding, 16-byte pieces at any phase, the shuffle and cross-warp
// reductions, masks, exact zeros off the allowed slots, and dS written in place over dP.
#define BANDJIT_USE_FP16 1
#define __shared__ static  // the block's fixed shared arrays (blocks run one at a time)
#include "bandjit/band_softmax_backward.cuh"

#include <cmath>
#include <random>

#include "generator/tile_config.hpp"
#include "reference/band_reference.hpp"
#include "support/catch.hpp"
#include "support/problems.hpp"

using namespace bandjit;

namespace {

template <class T_, int B, int H, int N, int WL, int WR, int LAYOUT, int DIL, int MASK, int R, int NV, int RPB>
struct SoftmaxBackwardCfg {
  using T = T_;
  static constexpr int kBatch = B, kHeads = H, kSeqLen = N, kHeadDim = 64, kWindowLeft = WL, kWindowRight = WR;
  static constexpr int kDiagonals = WL + WR + 1, kLayout = LAYOUT;
  static constexpr bool kUniformDilation = DIL > 0;
  static constexpr int kDilation = DIL > 0 ? DIL : 0;
  static inline std::vector<int> per_head_dilation;
  static int dilation(int h) { return DIL > 0 ? DIL : per_head_dilation[h]; }
  static constexpr float kScale = 0.75f;
  static constexpr int kKeyMask = MASK, kRowThreads = R, kPiecesPerThread = NV, kRowsPerBlock = RPB;
  static constexpr int kThreads = R * RPB;
};

template <class Cfg>
void run_case(Problem p, bool in_place) {
  using T = typename Cfg::T;
  p.dtype = std::is_same_v<T, float> ? DType::float32 : DType::float16;
  p.scale = Cfg::kScale;
  p.key_mask = Cfg::kKeyMask == kMaskNone ? KeyMask::none : Cfg::kKeyMask == kMaskBool ? KeyMask::boolean : KeyMask::additive;
  INFO(slug(p) << (in_place ? " in place" : ""));
  const SoftmaxTiling t = band_softmax_tiling(p);
  REQUIRE(t.row_threads == Cfg::kRowThreads);
  REQUIRE(t.pieces_per_thread == Cfg::kPiecesPerThread);
  REQUIRE(t.rows_per_block == Cfg::kRowsPerBlock);
  REQUIRE(t.threads == Cfg::kThreads);
  Cfg::per_head_dilation.clear();
  for (std::int64_t h = 0; h < p.heads; ++h) Cfg::per_head_dilation.push_back(static_cast<int>(p.dilation_of(h)));

  const auto C = p.diagonals();
  const std::size_t n = static_cast<std::size_t>(p.batch * p.heads * p.seq_len * C);
  std::mt19937 rng(9);
  std::uniform_real_distribution<double> u(0, 1);
  // Key-padding mask: ~30 % removed, batch 0's first 20 keys all removed (fully masked rows).
  std::vector<double> mask(static_cast<std::size_t>(p.batch * p.seq_len));
  for (std::size_t k = 0; k < mask.size(); ++k) {
    const bool removed = u(rng) < 0.3 || k < 20;
    mask[k] = p.key_mask == KeyMask::boolean ? (removed ? 0.0 : 1.0) : (removed ? -10000.0 : u(rng));
  }
  std::vector<unsigned char> mask_bool(mask.size());
  std::vector<float> mask_add(mask.size());
  for (std::size_t k = 0; k < mask.size(); ++k) {
    mask_bool[k] = mask[k] != 0.0;
    mask_add[k] = static_cast<float>(mask[k]);
  }
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
  auto aligned = [](std::vector<T>& v) {
    return reinterpret_cast<T*>((reinterpret_cast<std::uintptr_t>(v.data()) + 15) / 16 * 16);
  };
  T *gp = aligned(buf_p), *gdp = aligned(buf_dp), *gds = in_place ? gdp : aligned(buf_ds);
  for (std::size_t k = 0; k < n; ++k) {
    gp[k] = from_float<T>(static_cast<float>(prob[k]));
    prob[k] = to_float(gp[k]);
    gdp[k] = from_float<T>(static_cast<float>(dprob[k]));
    dprob[k] = to_float(gdp[k]);
    if (!in_place) gds[k] = from_float<T>(std::nanf(""));
  }
  const void* m = Cfg::kKeyMask == kMaskBool ? static_cast<const void*>(mask_bool.data())
                                              : static_cast<const void*>(mask_add.data());
  sim::failures.clear();
  sim::launch({static_cast<unsigned>(t.blocks), 1, static_cast<unsigned>(p.batch)}, t.threads, [&] { band_softmax_backward<Cfg>(gp, gdp, gds, m); });
  CHECK(sim::failures.empty());

  std::vector<double> ref(static_cast<std::size_t>(C));
  double d2 = 0, r2 = 0;
  std::size_t structure = 0;
  const double* mask_ptr = p.key_mask == KeyMask::none ? nullptr : mask.data();
  for (std::int64_t b = 0; b < p.batch; ++b)
    for (std::int64_t h = 0; h < p.heads; ++h)
      for (std::int64_t i = 0; i < p.seq_len; ++i) {
        const auto at = reference::band_index(p, b, h, i, 0);
        reference::band_softmax_backward_row(p, &prob[at], &dprob[at], mask_ptr, b, h, i, ref.data());
        for (std::int64_t j = 0; j < C; ++j) {
          const double out = to_float(gds[at + j]);
          if (!reference::slot_allowed(p, mask_ptr, b, h, i, j)) {
            structure += out != 0.0;
            continue;
          }
          d2 += (out - ref[j]) * (out - ref[j]);
          r2 += ref[j] * ref[j];
        }
      }
  CHECK(structure == 0);
  const double rel = std::sqrt(d2 / r2);
  INFO("relative error " << rel);
  CHECK(rel <= (std::is_same_v<T, float> ? 1e-6 : 2e-3));
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
