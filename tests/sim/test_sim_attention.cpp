// sliding_window_attention's template (templates/sliding_window_attention.cuh) run on the CPU
// by the SIMT emulator against the float64 composition of SPEC §3.1–3.3: the key tiles the
// band touches, the band and sequence-end masks, the online softmax across tiles, the P
// fragments handed from one product to the next, dilation by remapping, the key-padding
// masks (fully masked rows included), the epilogue's O rows and LSE — for the portable kernel
// and for the Hopper one (its swizzled staging, descriptors and register P fragments).
#define BANDJIT_USE_FP16 1
#define BANDJIT_SIM_WGMMA 1  // Cfgs with kWgmma take the Hopper kernel (wgmma emulated: tests/sim/bandjit/wgmma.cuh)
#define __shared__  // the template uses only the dynamic (extern) shared memory
#include "bandjit/sliding_window_attention.cuh"

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

// The generated struct Cfg (generator/sliding_window_attention.cpp) for one problem: sizes
// from the template arguments, the rest from the problem and the generator's tiling.
template <class T_, int B, int H, int N, int DH, int WL, int WR, int LAYOUT, int DIL, int MASK, int TM = 64,
          int TN = 64, bool WGMMA = false>
struct AttnCfg : sim::BandCfg<T_, B, H, N, DH, WL, WR, LAYOUT, DIL> {
  using T = T_;
  static inline float kScaleLog2e = 0;
  static constexpr int kKeyMask = MASK, kThreads = 2 * TM, kTileRows = TM, kKeyTile = TN, kStages = 2;
  static constexpr int kRowLD = DH + 16 / static_cast<int>(sizeof(T));
  static constexpr bool kWgmma = WGMMA;
  static constexpr unsigned kWgmmaSharedBytes = sizeof(smem);
  static constexpr unsigned kSharedBytes = sizeof(smem);
};

template <class T>
T to_t(double x) {
  return from_float<T>(static_cast<float>(x));
}

template <class T>
T* aligned(std::vector<T>& v) {
  const auto addr = reinterpret_cast<std::uintptr_t>(v.data());
  return reinterpret_cast<T*>((addr + 15) / 16 * 16);
}

// Fills the key mask: keys of batch 0 removed at random; in batch 1 (if any) a run of keys
// wider than the band is removed, so its middle rows have no allowed key at all.
std::vector<double> make_mask(const Problem& p, std::mt19937& rng) {
  std::vector<double> mask(static_cast<std::size_t>(p.batch * p.seq_len));
  std::uniform_real_distribution<double> u(0, 1);
  for (std::int64_t b = 0; b < p.batch; ++b)
    for (std::int64_t i = 0; i < p.seq_len; ++i) {
      bool kept = b == 0 ? u(rng) > 0.3 : (i < p.seq_len / 4 || i >= p.seq_len / 4 + p.seq_len / 2);
      // Kept keys of an additive mask add 0 … 2, a third of them exactly 0 (HF's value for a kept key).
      const double additive = u(rng) < 0.33 ? 0.0 : u(rng) * 2;
      mask[static_cast<std::size_t>(b * p.seq_len + i)] =
          p.key_mask == KeyMask::boolean ? (kept ? 1.0 : 0.0) : (kept ? additive : -10000.0);
    }
  return mask;
}

template <class Cfg>
// The default scale keeps the logits within a few units, so every key of a row carries a
// weight the per-row LSE check (1e-5) sees: a key wrongly dropped or added shows.
void run_case(Problem p, double scale = 0.1) {
  using T = typename Cfg::T;
  p.dtype = std::is_same_v<T, float> ? DType::float32 : DType::float16;
  p.scale = scale;
  p.key_mask = Cfg::kKeyMask == kMaskNone ? KeyMask::none
               : Cfg::kKeyMask == kMaskBool ? KeyMask::boolean
                                            : KeyMask::additive;
  INFO(slug(p));
  const bool override_tiles = Cfg::kTileRows != 64 || Cfg::kKeyTile != 64;
  // The portable kernel's cases switch the Hopper one off where the generator would take it.
  const AttentionTiling t = sliding_window_attention_tiling(p, override_tiles ? Cfg::kTileRows : 0,
                                                            override_tiles ? Cfg::kKeyTile : 0, Cfg::kWgmma ? 2 : 1);
  REQUIRE(t.wgmma == Cfg::kWgmma);
  REQUIRE(t.threads == Cfg::kThreads);
  REQUIRE(t.tile_rows == Cfg::kTileRows);
  REQUIRE(t.key_tile == Cfg::kKeyTile);
  REQUIRE(t.stages == Cfg::kStages);
  REQUIRE(t.row_ld == Cfg::kRowLD);
  // The generator sizes the template's layouts.
  REQUIRE(t.shared_bytes == AttentionSmem<Cfg>::kBytes);
  REQUIRE(t.wgmma_shared_bytes == (Cfg::kWgmma ? AttentionWgmmaSmem<Cfg>::kBytes : 0u));
  Cfg::set_tables(p, t.head_tile_start);
  Cfg::kScaleLog2e = static_cast<float>(p.scale * 1.4426950408889634);

  const std::size_t n_qkv = static_cast<std::size_t>(p.batch * p.heads * p.seq_len * p.head_dim);
  const std::size_t n_rows = static_cast<std::size_t>(p.batch * p.heads * p.seq_len);
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> u(-2, 2);
  std::vector<double> q(n_qkv), k(n_qkv), v(n_qkv);
  std::vector<T> dq(n_qkv + 16), dk(n_qkv + 16), dv(n_qkv + 16), d_o(n_qkv + 16);
  T *gq = aligned(dq), *gk = aligned(dk), *gv = aligned(dv), *go = aligned(d_o);
  // The values as the kernel sees them (rounded to T) are the reference's inputs.
  for (std::size_t i = 0; i < n_qkv; ++i) {
    gq[i] = to_t<T>(u(rng));
    gk[i] = to_t<T>(u(rng));
    gv[i] = to_t<T>(u(rng));
    q[i] = to_float(gq[i]);
    k[i] = to_float(gk[i]);
    v[i] = to_float(gv[i]);
    go[i] = to_t<T>(std::nan(""));  // poison
  }
  std::vector<float> lse(n_rows, std::nanf(""));
  std::vector<double> mask;
  std::vector<unsigned char> mask_bool;
  std::vector<float> mask_add;
  const void* gmask = nullptr;
  if (p.key_mask != KeyMask::none) {
    mask = make_mask(p, rng);
    for (double& m : mask) {
      mask_bool.push_back(m != 0.0);
      mask_add.push_back(static_cast<float>(m));
      m = mask_add.back();  // the reference adds what the kernel reads
    }
    gmask = p.key_mask == KeyMask::boolean ? static_cast<const void*>(mask_bool.data()) : mask_add.data();
  }
  sim::global_ranges = {{gq, n_qkv * sizeof(T)}, {gk, n_qkv * sizeof(T)}, {gv, n_qkv * sizeof(T)}};
  // Every block starts from NaN shared memory: nothing unstaged may reach a product.
  sim::launch_checked({static_cast<unsigned>(t.tiles_per_batch), 1, static_cast<unsigned>(p.batch)}, t.threads, smem,
                      sizeof(smem), [&] { sliding_window_attention<Cfg>(gq, gk, gv, go, lse.data(), gmask); });

  std::vector<double> ref(static_cast<std::size_t>(p.head_dim));
  double lse_err = 0;
  sim::ErrorTotals err;
  std::size_t bad = 0, empty_rows = 0;
  for (std::int64_t b = 0; b < p.batch; ++b)
    for (std::int64_t h = 0; h < p.heads; ++h)
      for (std::int64_t i = 0; i < p.seq_len; ++i) {
        const double ref_lse = reference::sliding_window_attention_row(
            p, q.data(), k.data(), v.data(), mask.empty() ? nullptr : mask.data(), b, h, i, ref.data());
        const float got_lse = lse[static_cast<std::size_t>((b * p.heads + h) * p.seq_len + i)];
        if (std::isinf(ref_lse)) {
          ++empty_rows;
          if (!(std::isinf(got_lse) && got_lse < 0) && ++bad <= 5)
            UNSCOPED_INFO("row " << i << " head " << h << " batch " << b << ": LSE " << got_lse << ", not -inf");
        } else if (!std::isfinite(got_lse)) {
          if (++bad <= 5) UNSCOPED_INFO("row " << i << " head " << h << " batch " << b << ": LSE " << got_lse);
        } else {
          lse_err = std::max(lse_err, std::abs(got_lse - ref_lse) / std::max(1.0, std::abs(ref_lse)));
        }
        for (std::int64_t c = 0; c < p.head_dim; ++c)
          err.add(to_float(go[reference::qkv_index(p, b, h, i, c)]), ref[c], b, h, i, c);
      }
  CHECK(bad == 0);
  CHECK(err.bad == 0);
  if (p.key_mask != KeyMask::none && p.batch > 1) CHECK(empty_rows > 0);  // the case has fully masked rows
  const double rel = err.rel();
  INFO("relative error " << rel << ", LSE error " << lse_err << ", rows with no key " << empty_rows);
  CHECK(rel <= (std::is_same_v<T, float> ? 1e-6 : 3e-3));
  CHECK(lse_err <= 1e-5);
}

using test::band_problem;

}  // namespace

TEST_CASE("sim: sliding_window_attention float16, w_l != w_r, bnhd, several key tiles", "[sim]") {
  run_case<AttnCfg<__half, 1, 2, 150, 32, 20, 9, kLayoutBNHD, 1, kMaskNone>>(band_problem(1, 2, 150, 32, 20, 9));
}

TEST_CASE("sim: sliding_window_attention float32, dilation 2, bhnd, two batches", "[sim]") {
  run_case<AttnCfg<float, 2, 1, 77, 16, 7, 3, kLayoutBHND, 2, kMaskNone>>(
      band_problem(2, 1, 77, 16, 7, 3, DType::float32, {2}, Layout::bhnd));
}

TEST_CASE("sim: sliding_window_attention float16, per-head dilation, bhnd", "[sim]") {
  run_case<AttnCfg<__half, 2, 3, 150, 32, 20, 9, kLayoutBHND, 0, kMaskNone>>(
      band_problem(2, 3, 150, 32, 20, 9, DType::float16, {1, 2, 3}, Layout::bhnd));
}

TEST_CASE("sim: sliding_window_attention float16, causal (window_right = 0), dilation 2, head_dim 64", "[sim]") {
  run_case<AttnCfg<__half, 1, 2, 100, 64, 40, 0, kLayoutBNHD, 2, kMaskNone>>(
      band_problem(1, 2, 100, 64, 40, 0, DType::float16, {2}));
}

TEST_CASE("sim: sliding_window_attention, N < 16, window >= N/2, dilation * window >= N", "[sim]") {
  run_case<AttnCfg<__half, 2, 1, 13, 16, 5, 7, kLayoutBNHD, 1, kMaskNone>>(band_problem(2, 1, 13, 16, 5, 7));
  run_case<AttnCfg<float, 1, 2, 13, 16, 0, 12, kLayoutBHND, 3, kMaskNone>>(
      band_problem(1, 2, 13, 16, 0, 12, DType::float32, {3}, Layout::bhnd));
}

TEST_CASE("sim: sliding_window_attention, key masks with fully masked rows", "[sim]") {
  run_case<AttnCfg<__half, 2, 2, 120, 32, 9, 9, kLayoutBNHD, 1, kMaskBool>>(band_problem(2, 2, 120, 32, 9, 9));
  run_case<AttnCfg<float, 2, 1, 120, 16, 12, 5, kLayoutBHND, 0, kMaskAdditive>>(
      band_problem(2, 1, 120, 16, 12, 5, DType::float32, {2}, Layout::bhnd));
  run_case<AttnCfg<__half, 2, 2, 90, 16, 8, 0, kLayoutBHND, 0, kMaskAdditive>>(
      band_problem(2, 2, 90, 16, 8, 0, DType::float16, {1, 3}, Layout::bhnd));
}

TEST_CASE("sim: sliding_window_attention, long band (key tiles wholly inside it)", "[sim]") {
  run_case<AttnCfg<__half, 1, 1, 300, 16, 100, 77, kLayoutBNHD, 1, kMaskNone>>(band_problem(1, 1, 300, 16, 100, 77));
}

TEST_CASE("sim: sliding_window_attention, head_dim with an odd number of k-steps and Q from shared memory",
          "[sim]") {
  run_case<AttnCfg<__half, 1, 1, 70, 48, 10, 10, kLayoutBNHD, 1, kMaskNone>>(band_problem(1, 1, 70, 48, 10, 10));
  run_case<AttnCfg<__half, 1, 1, 40, 144, 9, 6, kLayoutBHND, 1, kMaskNone>>(
      band_problem(1, 1, 40, 144, 9, 6, DType::float16, {1}, Layout::bhnd));
}

TEST_CASE("sim: sliding_window_attention at other tiles (128 rows, 32 and 128 keys)", "[sim]") {
  run_case<AttnCfg<__half, 1, 1, 200, 32, 60, 30, kLayoutBNHD, 1, kMaskNone, 128, 32>>(
      band_problem(1, 1, 200, 32, 60, 30));
  run_case<AttnCfg<float, 1, 1, 200, 16, 60, 30, kLayoutBNHD, 1, kMaskBool, 64, 128>>(
      band_problem(1, 1, 200, 16, 60, 30));
}

// The Hopper kernel (wgmma): float16, head_dim 64 and 128, key tiles of 64 and 128.
template <int DH, int WL, int WR, int LAYOUT, int DIL, int MASK, int TN = 64, int B = 1, int H = 2, int N = 200>
using WgmmaCfg = AttnCfg<__half, B, H, N, DH, WL, WR, LAYOUT, DIL, MASK, 64, TN, true>;

TEST_CASE("sim: sliding_window_attention on wgmma, head_dim 64, several key tiles, bnhd", "[sim]") {
  run_case<WgmmaCfg<64, 70, 50, kLayoutBNHD, 1, kMaskNone>>(band_problem(1, 2, 200, 64, 70, 50));
}

TEST_CASE("sim: sliding_window_attention on wgmma, head_dim 128, 128-key tiles, per-head dilation, bhnd",
          "[sim]") {
  run_case<WgmmaCfg<128, 40, 90, kLayoutBHND, 0, kMaskNone, 128>>(
      band_problem(1, 2, 200, 128, 40, 90, DType::float16, {1, 3}, Layout::bhnd));
}

TEST_CASE("sim: sliding_window_attention on wgmma, causal, masks with fully masked rows, N < 64", "[sim]") {
  run_case<WgmmaCfg<64, 30, 0, kLayoutBNHD, 2, kMaskBool, 64, 2, 2, 150>>(
      band_problem(2, 2, 150, 64, 30, 0, DType::float16, {2}));
  run_case<WgmmaCfg<128, 9, 9, kLayoutBHND, 1, kMaskAdditive, 64, 2, 1, 120>>(
      band_problem(2, 1, 120, 128, 9, 9, DType::float16, {1}, Layout::bhnd));
  run_case<WgmmaCfg<64, 20, 33, kLayoutBNHD, 1, kMaskNone, 64, 1, 1, 40>>(band_problem(1, 1, 40, 64, 20, 33));
}

TEST_CASE("sim: sliding_window_attention at the band's and the sequence's tile boundaries", "[sim]") {
  // Key tiles that end exactly at the sequence's end or one key past it; warps whose band
  // just covers or just misses a whole tile (the unchecked path's bounds); w_l = w_r = 0,
  // where each row's only key is its own; a peaky softmax (large scale).
  run_case<AttnCfg<__half, 1, 1, 63, 16, 31, 48, kLayoutBNHD, 1, kMaskNone>>(band_problem(1, 1, 63, 16, 31, 48));
  run_case<AttnCfg<__half, 1, 1, 64, 16, 30, 47, kLayoutBNHD, 1, kMaskNone>>(band_problem(1, 1, 64, 16, 30, 47));
  run_case<AttnCfg<float, 1, 1, 65, 16, 0, 0, kLayoutBHND, 1, kMaskNone>>(
      band_problem(1, 1, 65, 16, 0, 0, DType::float32, {1}, Layout::bhnd));
  run_case<AttnCfg<__half, 1, 2, 130, 32, 49, 14, kLayoutBNHD, 1, kMaskNone>>(band_problem(1, 2, 130, 32, 49, 14), 1.5);
  run_case<WgmmaCfg<64, 31, 48, kLayoutBNHD, 1, kMaskNone, 64, 1, 1, 63>>(band_problem(1, 1, 63, 64, 31, 48));
  run_case<WgmmaCfg<64, 45, 62, kLayoutBNHD, 1, kMaskNone, 64, 1, 1, 64>>(band_problem(1, 1, 64, 64, 45, 62));
  run_case<WgmmaCfg<64, 30, 47, kLayoutBNHD, 1, kMaskNone, 64, 1, 1, 64>>(band_problem(1, 1, 64, 64, 30, 47));
  run_case<WgmmaCfg<64, 0, 0, kLayoutBHND, 1, kMaskAdditive, 64, 2, 1, 65>>(
      band_problem(2, 1, 65, 64, 0, 0, DType::float16, {1}, Layout::bhnd));
}

TEST_CASE("sim: sliding_window_attention with logits that spread over dozens of log2 units", "[sim]") {
  // The running reference maximum moves only when a tile's maximum passes it by more than its
  // slack (8 log2 units); at scale 1 and head_dim 64 the logits spread over ~±40, so it moves
  // in later tiles too, and O must be rescaled then: the Hopper kernel's warp vote (the
  // portable one rescales every tile), with and without a mask, 64- and 128-key tiles.
  run_case<AttnCfg<__half, 1, 2, 200, 64, 70, 50, kLayoutBNHD, 1, kMaskNone, 64, 32>>(
      band_problem(1, 2, 200, 64, 70, 50), 1.0);
  run_case<AttnCfg<float, 1, 1, 200, 32, 60, 60, kLayoutBHND, 1, kMaskAdditive, 64, 32>>(
      band_problem(1, 1, 200, 32, 60, 60, DType::float32, {1}, Layout::bhnd), 2.0);
  run_case<WgmmaCfg<64, 70, 50, kLayoutBNHD, 1, kMaskNone>>(band_problem(1, 2, 200, 64, 70, 50), 1.0);
  run_case<WgmmaCfg<128, 90, 60, kLayoutBHND, 1, kMaskNone, 128>>(
      band_problem(1, 2, 200, 128, 90, 60, DType::float16, {1}, Layout::bhnd), 0.7);
  run_case<WgmmaCfg<64, 40, 30, kLayoutBNHD, 1, kMaskAdditive, 64, 2, 1>>(
      band_problem(2, 1, 200, 64, 40, 30), 1.0);
}

TEST_CASE("sim: sliding_window_attention with large logits (within the documented 2^24 log2 units)", "[sim]") {
  // Scale 1e5: reference maxima of ~4e6 log2 units. The Hopper kernel folds scale·log2 e into
  // exp2's FFMA, which keeps the reference's rounding error (half an ulp, here 0.25) in P's
  // exponent; docs/kernels.md states the range where that stays below the slack's headroom.
  run_case<WgmmaCfg<64, 70, 50, kLayoutBNHD, 1, kMaskNone>>(band_problem(1, 2, 200, 64, 70, 50), 1e5);
  run_case<AttnCfg<__half, 1, 2, 200, 64, 70, 50, kLayoutBNHD, 1, kMaskNone, 64, 32>>(
      band_problem(1, 2, 200, 64, 70, 50), 1e5);
}

TEST_CASE("sim: sliding_window_attention, key masks on key tiles wholly inside the band", "[sim]") {
  run_case<AttnCfg<__half, 1, 1, 300, 16, 100, 77, kLayoutBNHD, 1, kMaskBool>>(band_problem(1, 1, 300, 16, 100, 77));
  run_case<AttnCfg<float, 1, 1, 300, 16, 100, 77, kLayoutBHND, 1, kMaskAdditive>>(
      band_problem(1, 1, 300, 16, 100, 77, DType::float32, {1}, Layout::bhnd));
  run_case<WgmmaCfg<64, 100, 77, kLayoutBNHD, 1, kMaskAdditive, 64, 1, 1, 300>>(
      band_problem(1, 1, 300, 64, 100, 77));
}

TEST_CASE("sim: sliding_window_attention with 16- and 32-row tiles and 16-key tiles (float32, wide head_dim)",
          "[sim]") {
  run_case<AttnCfg<float, 1, 1, 90, 16, 20, 11, kLayoutBNHD, 2, kMaskNone, 16, 16>>(
      band_problem(1, 1, 90, 16, 20, 11, DType::float32, {2}));
  run_case<AttnCfg<float, 1, 1, 90, 32, 20, 11, kLayoutBHND, 1, kMaskBool, 32, 16>>(
      band_problem(1, 1, 90, 32, 20, 11, DType::float32, {1}, Layout::bhnd));
}
