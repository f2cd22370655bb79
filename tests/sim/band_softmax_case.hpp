// What the emulator tests of band_softmax and band_softmax_backward share: the Cfg their
// templates see, the problem and tiling that go with it, the key-padding mask in its three
// forms, and 16-byte aligned tensors.
#pragma once

#include <cmath>
#include <cstdint>
#include <random>
#include <type_traits>
#include <vector>

#include "bandjit/problem.hpp"
#include "generator/tile_config.hpp"
#include "reference/band_reference.hpp"
#include "support/catch.hpp"

namespace bandjit::sim {

// The generated Cfg of the two families (generator/softmax_rows.cpp); head_dim 64.
template <class T_, int B, int H, int N, int WL, int WR, int LAYOUT, int DIL, int MASK, int R, int NV, int RPB,
          bool NEGATIVE_SCALE = false, int GROUP = 1>
struct SoftmaxRowsCfg {
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

// Gives p Cfg's dtype, scale and mask kind, checks that the generator's tiling is Cfg's, and
// fills Cfg's per-head dilation table; returns the tiling (its grid).
template <class Cfg>
SoftmaxTiling softmax_rows_setup(Problem& p) {
  using T = typename Cfg::T;
  p.dtype = std::is_same_v<T, float> ? DType::float32 : DType::float16;
  p.scale = Cfg::kScale;
  p.key_mask = Cfg::kKeyMask == kMaskNone ? KeyMask::none : Cfg::kKeyMask == kMaskBool ? KeyMask::boolean : KeyMask::additive;
  const SoftmaxTiling t = band_softmax_tiling(p, Cfg::kRowGroup);
  REQUIRE(t.row_threads == Cfg::kRowThreads);
  REQUIRE(t.pieces_per_thread == Cfg::kPiecesPerThread);
  REQUIRE(t.rows_per_block == Cfg::kRowsPerBlock);
  REQUIRE(t.threads == Cfg::kThreads);
  Cfg::per_head_dilation.clear();
  for (std::int64_t h = 0; h < p.heads; ++h) Cfg::per_head_dilation.push_back(static_cast<int>(p.dilation_of(h)));
  return t;
}

// Key-padding mask over [batch, seq_len]: ~30 % of keys removed and batch 0's first 20 keys
// all removed (fully masked rows where a window is short). `values` as the float64 reference
// reads it (boolean: 0 removes; additive: −10000 removes), `boolean` and `additive` as the
// kernels do.
struct KeyPaddingMask {
  std::vector<double> values;
  std::vector<unsigned char> boolean;
  std::vector<float> additive;
  KeyPaddingMask(const Problem& p, std::mt19937& rng) {
    std::uniform_real_distribution<double> u(0, 1);
    values.resize(static_cast<std::size_t>(p.batch * p.seq_len));
    for (std::size_t k = 0; k < values.size(); ++k) {
      const bool removed = u(rng) < 0.3 || k < 20;
      values[k] = p.key_mask == KeyMask::boolean ? (removed ? 0.0 : 1.0) : (removed ? -10000.0 : u(rng));
      boolean.push_back(values[k] != 0.0);
      additive.push_back(static_cast<float>(values[k]));
    }
  }
  const void* for_kernel(int kind) const {
    return kind == kMaskBool ? static_cast<const void*>(boolean.data()) : static_cast<const void*>(additive.data());
  }
  const double* for_reference(const Problem& p) const { return p.key_mask == KeyMask::none ? nullptr : values.data(); }
};

// The first 16-byte aligned element of v (allocate 16 / sizeof(T) spare elements).
template <class T>
T* aligned16(std::vector<T>& v) {
  return reinterpret_cast<T*>((reinterpret_cast<std::uintptr_t>(v.data()) + 15) / 16 * 16);
}

// Each row of the kernel's band tensor `out` against reference_row(b, h, i, ref) (float64):
// relative L2 error over the allowed slots ≤ 1e-6 (float32) or 2e-3, every other slot exactly
// 0. Returns the rows without an allowed slot.
template <class T, class ReferenceRow>
std::size_t check_band_rows(const Problem& p, const double* mask, const T* out, ReferenceRow&& reference_row) {
  const auto C = p.diagonals();
  std::vector<double> ref(static_cast<std::size_t>(C));
  double d2 = 0, r2 = 0;
  std::size_t structure = 0, rows_without_slots = 0;
  for (std::int64_t b = 0; b < p.batch; ++b)
    for (std::int64_t h = 0; h < p.heads; ++h)
      for (std::int64_t i = 0; i < p.seq_len; ++i) {
        const auto at = reference::band_index(p, b, h, i, 0);
        reference_row(b, h, i, at, ref.data());
        bool any = false;
        for (std::int64_t j = 0; j < C; ++j) {
          const double o = to_float(out[at + j]);
          if (!reference::slot_allowed(p, mask, b, h, i, j)) {
            structure += o != 0.0;
            continue;
          }
          any = true;
          d2 += (o - ref[j]) * (o - ref[j]);
          r2 += ref[j] * ref[j];
        }
        rows_without_slots += !any;
      }
  CHECK(structure == 0);
  const double rel = std::sqrt(d2 / r2);
  INFO("relative error " << rel);
  CHECK(rel <= (std::is_same_v<T, float> ? 1e-6 : 2e-3));
  return rows_without_slots;
}

}  // namespace bandjit::sim
