// The softmax templates (templates/softmax.cuh, softmax_backward.cuh) run on the CPU by the
// SIMT emulator against the float64 reference, on the tiling the generator picks: pieces of
// every width, a few lanes per row, multi-warp rows with a non-power-of-two warp count,
// boolean / additive (−inf) / causal masks, fully masked rows, odd L, in place, and a row
// that spans a cluster (the emulator has no clusters: it runs the two-pass path of sm_80).
#define BANDJIT_USE_FP16 1
#define __shared__ static  // the block's fixed shared arrays (blocks run one at a time)
#include "bandjit/softmax_backward.cuh"

#include <cmath>
#include <random>

#include "generator/softmax_tiling.hpp"
#include "reference/softmax_reference.hpp"
#include "support/catch.hpp"

using namespace bandjit;

namespace {

template <class T_, int ROWS, int L, int H, int Q, int MASK, bool CAUSAL, int V, int R, int NV, int CL, int RPB,
          int THREADS, bool STAGED = false, bool HELD = false>
struct SmCfg {
  using T = T_;
  static constexpr long long kRows = ROWS;
  static constexpr int kRowLength = L, kHeads = H, kQueries = Q;
  static constexpr float kScale = 0.75f;
  static constexpr float kScaleLog2e = 0.75f * 1.4426950408889634f;
  static constexpr int kMask = MASK;
  static constexpr bool kCausal = CAUSAL;
  static constexpr int kVec = V, kPieces = L / V, kRowThreads = R, kPiecesPerThread = NV;
  static constexpr int kCluster = CL, kRowsPerBlock = RPB, kThreads = THREADS;
  static constexpr bool kStaged = STAGED, kHeld = HELD;
};

int mask_bytes_of(int mask, int element_bytes) { return mask == kMaskBool ? 1 : mask == kMaskAdditive ? element_bytes : 0; }

template <class T>
T* aligned(std::vector<T>& v) {
  return reinterpret_cast<T*>((reinterpret_cast<std::uintptr_t>(v.data()) + 15) / 16 * 16);
}

template <class Cfg>
void check_tiling(bool backward, const Tuning& tuning) {
  const SoftmaxRowTiling t =
      softmax_row_tiling(Cfg::kRows, Cfg::kRowLength, std::is_same_v<typename Cfg::T, float> ? DType::float32 : DType::float16,
                         backward, tuning, backward ? 0 : mask_bytes_of(Cfg::kMask, sizeof(typename Cfg::T)));
  INFO((backward ? "backward" : "forward") << " tiling");
  REQUIRE(t.vec == Cfg::kVec);
  REQUIRE(t.pieces == Cfg::kPieces);
  REQUIRE(t.row_threads == Cfg::kRowThreads);
  REQUIRE(t.pieces_per_thread == Cfg::kPiecesPerThread);
  REQUIRE(t.cluster == Cfg::kCluster);
  REQUIRE(t.rows_per_block == Cfg::kRowsPerBlock);
  REQUIRE(t.threads == Cfg::kThreads);
  REQUIRE(t.staged == (Cfg::kStaged && !backward));
  REQUIRE(t.held == (Cfg::kHeld && !backward));
}

// Cfg: the forward's tiling; BCfg: the backward's (the same for 16-bit types).
template <class Cfg, class BCfg = Cfg>
void run_case(bool in_place, const Tuning& tuning = {}) {
  using T = typename Cfg::T;
  constexpr bool f32 = std::is_same_v<T, float>;
  constexpr std::int64_t rows = Cfg::kRows, L = Cfg::kRowLength, Q = Cfg::kQueries, H = Cfg::kHeads;
  INFO("rows " << rows << " L " << L << " mask " << Cfg::kMask << " causal " << Cfg::kCausal << (in_place ? " in place" : ""));
  check_tiling<Cfg>(false, tuning);
  check_tiling<BCfg>(true, tuning);
  const SoftmaxRowTiling t = softmax_row_tiling(rows, L, f32 ? DType::float32 : DType::float16, false, tuning,
                                                mask_bytes_of(Cfg::kMask, sizeof(T)));
  const SoftmaxRowTiling bt = softmax_row_tiling(rows, L, f32 ? DType::float32 : DType::float16, true, tuning);
  std::vector<uint4> stage(t.stage_bytes / 16 + 1);  // a staged forward's dynamic shared memory

  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(-1, 1);
  const std::size_t n = static_cast<std::size_t>(rows * L), mask_rows = static_cast<std::size_t>(rows / H);
  // Mask rows [batch, 1, queries, L]: ~30 % removed, mask row 1 removes every key.
  std::vector<unsigned char> removed(mask_rows * L);
  std::vector<double> additive(mask_rows * L);
  for (std::size_t k = 0; k < removed.size(); ++k) {
    // Any non-zero byte removes its key (Megatron): 1 … 255, so 0x80 and 0xff are among them.
    removed[k] = u(rng) < -0.4 || k / L == 1 ? static_cast<unsigned char>(1 + (k * 37) % 255) : 0;
    additive[k] = removed[k] ? -INFINITY : 2 * u(rng);
    // Mask row 2 holds HF's fill, finfo(float32).min, on every key: finite, so the row is a
    // plain softmax of x (float16 stores it as −inf: a fully masked row).
    if (k / L == 2) additive[k] = -3.4028234663852886e38;
  }
  std::vector<T> buf_x(n + 16), buf_y(n + 16), buf_m(n + 16), buf_dy(n + 16), buf_dx(n + 16);
  T *x = aligned(buf_x), *y = in_place ? x : aligned(buf_y), *add = aligned(buf_m);
  std::vector<double> xd(n), ref(n);
  for (std::size_t k = 0; k < n; ++k) {
    x[k] = from_float<T>(static_cast<float>(4 * u(rng)));
    xd[k] = to_float(x[k]);
    if (!in_place) y[k] = from_float<T>(std::nanf(""));
  }
  for (std::size_t k = 0; k < additive.size(); ++k) {
    add[k] = from_float<T>(static_cast<float>(additive[k]));
    additive[k] = to_float(add[k]);
  }
  const void* mask = Cfg::kMask == kMaskBool ? static_cast<const void*>(removed.data()) : static_cast<const void*>(add);

  sim::failures.clear();
  sim::launch({static_cast<unsigned>(t.blocks), 1, 1}, t.threads, [&] { softmax_forward<Cfg>(x, y, mask, stage.data()); });
  CHECK(sim::failures.empty());

  double d2 = 0, r2 = 0;
  std::size_t structure = 0;
  for (std::int64_t r = 0; r < rows; ++r) {
    const std::int64_t q = r % Q, mask_row = (r / (H * Q)) * Q + q;
    reference::RowMask m;
    if (Cfg::kMask == kMaskBool) m.boolean = &removed[mask_row * L];
    if (Cfg::kMask == kMaskAdditive) m.additive = &additive[mask_row * L];
    if (Cfg::kCausal) m.last_key = reference::causal_last_key(q, Q, L);
    reference::softmax_row(&xd[r * L], L, Cfg::kScale, m, &ref[r * L]);
    for (std::int64_t j = 0; j < L; ++j) {
      const double out = to_float(y[r * L + j]);
      if (ref[r * L + j] == 0.0) structure += out != 0.0;  // removed keys, fully masked rows
      d2 += (out - ref[r * L + j]) * (out - ref[r * L + j]);
      r2 += ref[r * L + j] * ref[r * L + j];
    }
  }
  CHECK(structure == 0);
  INFO("forward relative error " << std::sqrt(d2 / r2));
  CHECK(std::sqrt(d2 / r2) <= (f32 ? 1e-6 : 2e-3));

  // Backward on the forward's y (as the kernel wrote it), dx in place over dy when asked.
  std::vector<double> yd(n), gd(n), dref(n);
  T *dy = aligned(buf_dy), *dx = in_place ? dy : aligned(buf_dx);
  for (std::size_t k = 0; k < n; ++k) {
    yd[k] = to_float(y[k]);
    dy[k] = from_float<T>(static_cast<float>(u(rng)));
    gd[k] = to_float(dy[k]);
    if (!in_place) dx[k] = from_float<T>(std::nanf(""));
  }
  sim::launch({static_cast<unsigned>(bt.blocks), 1, 1}, bt.threads, [&] { softmax_backward<BCfg>(y, dy, dx); });
  CHECK(sim::failures.empty());
  d2 = r2 = 0;
  structure = 0;
  for (std::int64_t r = 0; r < rows; ++r) {
    reference::softmax_backward_row(&yd[r * L], &gd[r * L], L, Cfg::kScale, &dref[r * L]);
    for (std::int64_t j = 0; j < L; ++j) {
      const double out = to_float(dx[r * L + j]);
      if (yd[r * L + j] == 0.0) structure += out != 0.0;
      d2 += (out - dref[r * L + j]) * (out - dref[r * L + j]);
      r2 += dref[r * L + j] * dref[r * L + j];
    }
  }
  CHECK(structure == 0);
  INFO("backward relative error " << std::sqrt(d2 / r2));
  CHECK(std::sqrt(d2 / r2) <= (f32 ? 1e-6 : 2e-3));
}

}  // namespace

TEST_CASE("sim: softmax rows of a few lanes, masks, causal, odd L", "[sim]") {
  // L = 100 float32: 16-byte pieces, 16 lanes × 2 pieces (32 bytes a thread); boolean mask and causal.
  run_case<SmCfg<float, 30, 100, 3, 5, kMaskBool, true, 4, 16, 2, 1, 4, 64>>(false);
  // L = 100 float16: 8-byte pieces; additive mask with −inf, in place.
  run_case<SmCfg<__half, 24, 100, 2, 4, kMaskAdditive, false, 4, 8, 4, 1, 8, 64>>(true);
  // L = 37 float16: element pieces, 4 lanes × 10; causal with more queries than keys.
  run_case<SmCfg<__half, 2 * 3 * 41, 37, 3, 41, kMaskNone, true, 1, 4, 10, 1, 16, 64>>(false);
  // L = 32 float16: two threads per row, 2 pieces each.
  run_case<SmCfg<__half, 300, 32, 1, 300, kMaskBool, false, 8, 2, 2, 1, 32, 64>>(true);
}

TEST_CASE("sim: softmax rows over several warps of one block", "[sim]") {
  // L = 768 float16: one warp, 3 pieces each.
  run_case<SmCfg<__half, 6, 768, 2, 3, kMaskNone, true, 8, 32, 3, 1, 2, 64>>(false);
  // L = 5120 float32: 5 warps per row (not a power of two), additive mask; the backward 10 warps.
  run_case<SmCfg<float, 4, 5120, 1, 4, kMaskAdditive, true, 4, 160, 8, 1, 1, 160>,
           SmCfg<float, 4, 5120, 1, 4, kMaskAdditive, true, 4, 320, 4, 1, 1, 320>>(true);
}

TEST_CASE("sim: softmax rows spanning a cluster (the two-pass path)", "[sim]") {
  // L = 16388 float32: 3 blocks × 192 threads × 8 pieces; the backward 5 blocks × 224 × 4.
  run_case<SmCfg<float, 2, 16388, 1, 2, kMaskBool, false, 4, 576, 8, 3, 1, 192>,
           SmCfg<float, 2, 16388, 1, 2, kMaskBool, false, 4, 1120, 4, 5, 1, 224>>(false);
  // L = 32768 float16: the forward staged through shared memory, in 256-thread blocks (the
  // default takes one block of 512 there) so that the row spans 2 blocks × 256 threads × 8
  // pieces; the backward 4 blocks × 256 threads × 4 pieces; causal, in place.
  Tuning blocks_256;
  blocks_256.row_block_threads = 256;
  run_case<SmCfg<__half, 2, 32768, 1, 2, kMaskNone, true, 8, 512, 8, 2, 1, 256, true>,
           SmCfg<__half, 2, 32768, 1, 2, kMaskNone, true, 8, 1024, 4, 4, 1, 256>>(true, blocks_256);
  // The same with a boolean mask, staged (as 16-bit rows from L = 32768 are by default).
  Tuning masked = blocks_256;
  masked.row_staged = 2;
  run_case<SmCfg<__half, 2, 32768, 1, 2, kMaskBool, false, 8, 512, 8, 2, 1, 256, true>,
           SmCfg<__half, 2, 32768, 1, 2, kMaskBool, false, 8, 1024, 4, 4, 1, 256>>(false, masked);
}

TEST_CASE("sim: softmax forward staged with a boolean mask past 64 keys a thread (staged mask)", "[sim]") {
  // L = 73728 float16 in 128-thread blocks (a knob layout): 8 blocks × 128 threads × 9
  // pieces, 72 keys a thread, so the mask is staged beside x instead of kept as 64 bits.
  Tuning narrow;
  narrow.row_staged = 2;
  narrow.row_block_threads = 128;
  run_case<SmCfg<__half, 1, 73728, 1, 1, kMaskBool, false, 8, 1024, 9, 8, 1, 128, true>,
           SmCfg<__half, 1, 73728, 1, 1, kMaskBool, false, 8, 2304, 4, 3, 1, 768>>(false, narrow);
}

TEST_CASE("sim: softmax forward staged through shared memory", "[sim]") {
  Tuning staged;
  staged.row_staged = 2;
  // L = 100 float16 with an additive mask (−inf): 8-byte pieces of x and of the mask.
  run_case<SmCfg<__half, 24, 100, 2, 4, kMaskAdditive, false, 4, 32, 1, 1, 1, 32, true>,
           SmCfg<__half, 24, 100, 2, 4, kMaskAdditive, false, 4, 8, 4, 1, 8, 64>>(false, staged);
  // L = 768 float16, boolean mask and causal, in place.
  run_case<SmCfg<__half, 6, 768, 2, 3, kMaskBool, true, 8, 32, 3, 1, 1, 32, true>,
           SmCfg<__half, 6, 768, 2, 3, kMaskBool, true, 8, 32, 3, 1, 2, 64>>(true, staged);
  // L = 5120 float32, additive mask and causal: 5 warps × 8 pieces.
  run_case<SmCfg<float, 4, 5120, 1, 4, kMaskAdditive, true, 4, 160, 8, 1, 1, 160, true>,
           SmCfg<float, 4, 5120, 1, 4, kMaskAdditive, true, 4, 320, 4, 1, 1, 320>>(true, staged);
}

TEST_CASE("sim: softmax forward held in registers", "[sim]") {
  // L = 16384 float16 unmasked, as the generator lays it out: 2 blocks × 256 threads × 4
  // pieces held as loaded (the emulator has no clusters: the two-pass path); causal, in place.
  run_case<SmCfg<__half, 2, 16384, 1, 2, kMaskNone, true, 8, 512, 4, 2, 1, 256, false, true>,
           SmCfg<__half, 2, 16384, 1, 2, kMaskNone, true, 8, 512, 4, 1, 1, 512>>(true);
  // One 512-thread block a row (a knob layout): the held path itself, out of place.
  Tuning one_block;
  one_block.row_block_threads = 512;
  run_case<SmCfg<__half, 3, 16384, 1, 3, kMaskNone, false, 8, 512, 4, 1, 1, 512, false, true>,
           SmCfg<__half, 3, 16384, 1, 3, kMaskNone, false, 8, 512, 4, 1, 1, 512>>(false, one_block);
  // L = 20000 float16 as laid out: 3 blocks × 224 threads × 4 pieces, the last pieces of the
  // row partial (2500 pieces over 672 threads); causal, in place.
  run_case<SmCfg<__half, 2, 20000, 1, 2, kMaskNone, true, 8, 672, 4, 3, 1, 224, false, true>,
           SmCfg<__half, 2, 20000, 1, 2, kMaskNone, true, 8, 672, 4, 3, 1, 224>>(true);
  // A boolean mask as bits beside held pieces (knob only), causal: L = 8192, one block of 256.
  Tuning masked;
  masked.row_held = 2;
  run_case<SmCfg<__half, 4, 8192, 2, 2, kMaskBool, true, 8, 256, 4, 1, 1, 256, false, true>,
           SmCfg<__half, 4, 8192, 2, 2, kMaskBool, true, 8, 256, 4, 1, 1, 256>>(false, masked);
}
