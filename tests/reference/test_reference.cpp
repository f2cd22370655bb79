#include <cmath>
#include <limits>
#include <random>
#include <set>

#include "reference/band_reference.hpp"
#include "support/catch.hpp"
#include "support/problems.hpp"

using namespace bandjit;
using namespace bandjit::reference;

namespace {

Problem make(Layout layout, std::vector<std::int64_t> dilation) {
  Problem p = test::band_problem(2, 3, 23, 16, 4, 2, DType::float32, std::move(dilation), layout);
  p.scale = 0.5;
  return p;
}

std::vector<double> random_values(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<double> v(n);
  for (auto& x : v) x = u(rng);
  return v;
}

}  // namespace

TEST_CASE("reference: layouts index every element exactly once", "[reference]") {
  for (Layout layout : {Layout::bnhd, Layout::bhnd}) {
    const Problem p = make(layout, {1});
    std::set<std::size_t> qkv, band;
    for (std::int64_t b = 0; b < p.batch; ++b)
      for (std::int64_t h = 0; h < p.heads; ++h)
        for (std::int64_t i = 0; i < p.seq_len; ++i) {
          for (std::int64_t k = 0; k < p.head_dim; ++k) qkv.insert(qkv_index(p, b, h, i, k));
          for (std::int64_t j = 0; j < p.diagonals(); ++j) band.insert(band_index(p, b, h, i, j));
        }
    CHECK(qkv.size() == static_cast<std::size_t>(p.batch * p.heads * p.seq_len * p.head_dim));
    CHECK(*qkv.rbegin() == qkv.size() - 1);
    CHECK(band.size() == static_cast<std::size_t>(p.batch * p.heads * p.seq_len * p.diagonals()));
    CHECK(*band.rbegin() == band.size() - 1);
  }
  // bnhd is [B, N, H, Dh]: heads are adjacent in memory; bhnd is [B, H, N, Dh].
  CHECK(qkv_index(make(Layout::bnhd, {1}), 0, 1, 0, 0) == 16);
  CHECK(qkv_index(make(Layout::bhnd, {1}), 0, 0, 1, 0) == 16);
}

TEST_CASE("reference: band_qk holds the dense scores of exactly the keys in the band", "[reference]") {
  for (Layout layout : {Layout::bnhd, Layout::bhnd})
    for (const auto& dil : std::vector<std::vector<std::int64_t>>{{1}, {3}, {1, 2, 5}}) {
      const Problem p = make(layout, dil);
      const auto n = static_cast<std::size_t>(p.batch * p.heads * p.seq_len * p.head_dim);
      const auto q = random_values(n, 1), k = random_values(n, 2);
      std::vector<double> s(p.diagonals());
      for (std::int64_t b = 0; b < p.batch; ++b)
        for (std::int64_t h = 0; h < p.heads; ++h)
          for (std::int64_t i = 0; i < p.seq_len; ++i) {
            band_qk_row(p, q.data(), k.data(), b, h, i, s.data());
            // Walk the keys instead of the slots: key t is in the band when t − i is a
            // multiple of D between −w_l·D and w_r·D.
            const auto D = p.dilation_of(h);
            std::int64_t in_band = 0;
            for (std::int64_t t = 0; t < p.seq_len; ++t) {
              if ((t - i) % D != 0 || t - i < -p.window_left * D || t - i > p.window_right * D) continue;
              ++in_band;
              double dense = 0;
              for (std::int64_t d = 0; d < p.head_dim; ++d)
                dense += q[qkv_index(p, b, h, i, d)] * k[qkv_index(p, b, h, t, d)];
              CHECK(s[(t - i) / D + p.window_left] == Approx(0.5 * dense).epsilon(1e-12));
            }
            std::int64_t finite = 0;
            for (double x : s) finite += std::isfinite(x);
            CHECK(finite == in_band);
            for (double x : s) CHECK((std::isfinite(x) || x == -std::numeric_limits<double>::infinity()));
          }
    }
}

TEST_CASE("reference: band_softmax normalises allowed slots and zeroes the rest", "[reference]") {
  Problem p = make(Layout::bnhd, {1});
  p.scale = 1.0;
  std::vector<double> s(p.diagonals()), out(p.diagonals());
  SECTION("two allowed slots with scores 0 and ln 2 give 1/3 and 2/3") {
    // Row 0: only slots j ≥ w_l have keys; give them −inf except two.
    p.window_left = 0;
    p.window_right = 1;
    s = {0.0, std::log(2.0)};
    out.resize(2);
    band_softmax_row(p, s.data(), nullptr, 0, 0, 0, out.data());
    CHECK(out[0] == Approx(1.0 / 3));
    CHECK(out[1] == Approx(2.0 / 3));
  }
  SECTION("out-of-range slots are 0 and the rest sums to 1") {
    s = random_values(p.diagonals(), 3);
    band_softmax_row(p, s.data(), nullptr, 0, 0, 1, out.data());  // row 1: slots 0..2 are before the sequence
    for (int j = 0; j < 3; ++j) CHECK(out[j] == 0.0);
    double sum = 0;
    for (double x : out) sum += x;
    CHECK(sum == Approx(1.0));
  }
  SECTION("masks: removed keys are 0; a fully masked row is all zeros") {
    std::vector<double> mask(p.batch * p.seq_len, 1.0);
    p.key_mask = KeyMask::boolean;
    mask[5] = 0;
    s = random_values(p.diagonals(), 4);
    band_softmax_row(p, s.data(), mask.data(), 0, 0, 5, out.data());
    CHECK(out[p.window_left] == 0.0);  // slot of key 5 itself
    for (auto& m : mask) m = 0;
    band_softmax_row(p, s.data(), mask.data(), 0, 0, 5, out.data());
    for (double x : out) CHECK(x == 0.0);
    p.key_mask = KeyMask::additive;
    for (auto& m : mask) m = 0.0;
    mask[6] = -10000;  // removed
    mask[4] = 1.0;     // added to the score
    std::vector<double> plain(p.diagonals());
    p.key_mask = KeyMask::none;
    band_softmax_row(p, s.data(), nullptr, 0, 0, 5, plain.data());
    p.key_mask = KeyMask::additive;
    band_softmax_row(p, s.data(), mask.data(), 0, 0, 5, out.data());
    CHECK(out[p.window_left + 1] == 0.0);
    CHECK(out[p.window_left - 1] / out[p.window_left] ==
          Approx(std::exp(1.0) * plain[p.window_left - 1] / plain[p.window_left]));
  }
}

TEST_CASE("reference: band_pv with a one-hot row picks that key's value row", "[reference]") {
  const Problem p = make(Layout::bhnd, {2});
  const auto v = random_values(static_cast<std::size_t>(p.batch * p.heads * p.seq_len * p.head_dim), 5);
  std::vector<double> prow(p.diagonals()), out(p.head_dim);
  for (std::int64_t j = 0; j < p.diagonals(); ++j) {
    std::fill(prow.begin(), prow.end(), 0.0);
    prow[j] = 1.0;
    band_pv_row(p, prow.data(), v.data(), 1, 2, 9, out.data());
    const auto key = key_of(p, 2, 9, j);
    for (std::int64_t d = 0; d < p.head_dim; ++d) CHECK(out[d] == (key < 0 ? 0.0 : v[qkv_index(p, 1, 2, key, d)]));
  }
}
