// band_softmax's template run on the CPU by the SIMT emulator against the float64 reference:
// row decoding, 16-byte pieces at any phase (a neighbour row's elements in the first and
// last), positive and negative scales, boolean and additive key masks, fully masked rows,
// exact zeros off the allowed slots, and P written in place over S.
#define BANDJIT_USE_FP16 1
#define __shared__ static  // the block's fixed shared arrays (blocks run one at a time)
#include "bandjit/band_softmax.cuh"

#include <cmath>
#include <random>

#include "generator/tile_config.hpp"
#include "reference/band_reference.hpp"
#include "support/catch.hpp"
#include "support/problems.hpp"

using namespace bandjit;

namespace {

template <class T_, int B, int H, int N, int WL, int WR, int LAYOUT, int DIL, int MASK, int R, int NV, int RPB,
          bool NEGATIVE_SCALE = false, int GROUP = 1>
struct SoftmaxCfg {
  using T = T_;
  static constexpr int kBatch = B, kHeads = H, kSeqLen = N, kHeadDim = 64, kWindowLeft = WL, kWindowRight = WR;
  static constexpr int kDiagonals = WL + WR + 1, kLayout = LAYOUT;
  static constexpr bool kUniformDilation = DIL > 0;
  static constexpr int kDilation = DIL > 0 ? DIL : 0;
  static inline std::vector<int> per_head_dilation;
  static int dilation(int h) { return DIL > 0 ? DIL : per_head_dilation[h]; }
  static constexpr float kScale = NEGATIVE_SCALE ? -0.5f : 0.75f;
  static constexpr int kKeyMask = MASK, kRowThreads = R, kPiecesPerThread = NV, kRowsPerBlock = RPB;
  static constexpr int kThreads = R * RPB;
  static constexpr int kRowGroup = GROUP;
};

template <class Cfg>
void run_case(Problem p, bool in_place, bool fully_masked_rows = false) {
  using T = typename Cfg::T;
  p.dtype = std::is_same_v<T, float> ? DType::float32 : DType::float16;
  p.scale = Cfg::kScale;
  p.key_mask = Cfg::kKeyMask == kMaskNone ? KeyMask::none : Cfg::kKeyMask == kMaskBool ? KeyMask::boolean : KeyMask::additive;
  INFO(slug(p) << (in_place ? " in place" : ""));
  const SoftmaxTiling t = band_softmax_tiling(p, Cfg::kRowGroup);
  REQUIRE(t.row_threads == Cfg::kRowThreads);
  REQUIRE(t.pieces_per_thread == Cfg::kPiecesPerThread);
  REQUIRE(t.rows_per_block == Cfg::kRowsPerBlock);
  REQUIRE(t.threads == Cfg::kThreads);
  Cfg::per_head_dilation.clear();
  for (std::int64_t h = 0; h < p.heads; ++h) Cfg::per_head_dilation.push_back(static_cast<int>(p.dilation_of(h)));

  const auto C = p.diagonals();
  const std::size_t n = static_cast<std::size_t>(p.batch * p.heads * p.seq_len * C);
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> u(0, 1);
  // Key-padding mask: ~30 % removed, batch 0's first 20 keys all removed (fully masked rows
  // where the window is short: `fully_masked_rows` expects some).
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
  auto aligned = [](std::vector<T>& v) {
    return reinterpret_cast<T*>((reinterpret_cast<std::uintptr_t>(v.data()) + 15) / 16 * 16);
  };
  T *gs = aligned(buf_s), *gp = in_place ? gs : aligned(buf_p);
  for (std::size_t k = 0; k < n; ++k) {
    gs[k] = from_float<T>(static_cast<float>(score[k]));
    score[k] = to_float(gs[k]);
    if (!in_place) gp[k] = from_float<T>(std::nanf(""));
  }
  const void* m = Cfg::kKeyMask == kMaskBool ? static_cast<const void*>(mask_bool.data())
                                              : static_cast<const void*>(mask_add.data());
  sim::failures.clear();
  sim::launch({static_cast<unsigned>(t.blocks), 1, static_cast<unsigned>(p.batch)}, t.threads,
              [&] { band_softmax<Cfg>(gs, gp, m); });
  CHECK(sim::failures.empty());

  std::vector<double> ref(static_cast<std::size_t>(C));
  double d2 = 0, r2 = 0;
  std::size_t structure = 0, rows_all_zero = 0;
  const double* mask_ptr = p.key_mask == KeyMask::none ? nullptr : mask.data();
  for (std::int64_t b = 0; b < p.batch; ++b)
    for (std::int64_t h = 0; h < p.heads; ++h)
      for (std::int64_t i = 0; i < p.seq_len; ++i) {
        const auto at = reference::band_index(p, b, h, i, 0);
        reference::band_softmax_row(p, &score[at], mask_ptr, b, h, i, ref.data());
        bool any = false;
        for (std::int64_t j = 0; j < C; ++j) {
          const double out = to_float(gp[at + j]);
          if (!reference::slot_allowed(p, mask_ptr, b, h, i, j)) {
            structure += out != 0.0;
            continue;
          }
          any = true;
          d2 += (out - ref[j]) * (out - ref[j]);
          r2 += ref[j] * ref[j];
        }
        rows_all_zero += !any;
      }
  CHECK(structure == 0);
  if (fully_masked_rows) CHECK(rows_all_zero > 0);  // short windows over batch 0's first keys
  const double rel = std::sqrt(d2 / r2);
  INFO("relative error " << rel);
  CHECK(rel <= (std::is_same_v<T, float> ? 1e-6 : 2e-3));
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
  run_case<SoftmaxCfg<__half, 2, 2, 60, 30, 30, kLayoutBNHD, 2, kMaskAdditive, 4, 3, 64, false, 2>>(
      band_problem(2, 2, 60, 64, 30, 30, DType::float16, {2}), true);
  run_case<SoftmaxCfg<__half, 1, 1, 608, 600, 499, kLayoutBNHD, 1, kMaskNone, 64, 3, 4, false, 4>>(
      band_problem(1, 1, 608, 64, 600, 499, DType::float16), true);
}
