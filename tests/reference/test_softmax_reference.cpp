// The softmax float64 reference (reference/softmax_reference.cpp) against what it must be:
// rows sum to 1, removed keys and fully masked rows are exact zeros, the causal pattern, an
// additive −inf equals a boolean removal, and the backward equals central differences of
// the forward.
#include <cmath>
#include <random>
#include <vector>

#include "reference/softmax_reference.hpp"
#include "support/catch.hpp"

using namespace bandjit::reference;

TEST_CASE("reference: softmax rows sum to 1 and removed keys are exact zeros", "[reference]") {
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> u(-3, 3);
  const std::int64_t L = 50;
  std::vector<double> x(L), y(L), add(L), y_add(L);
  std::vector<unsigned char> removed(L);
  for (std::int64_t j = 0; j < L; ++j) {
    x[j] = u(rng);
    removed[j] = u(rng) < -1;
    add[j] = removed[j] ? -INFINITY : 0.0;
  }
  RowMask m;
  m.boolean = removed.data();
  softmax_row(x.data(), L, 0.5, m, y.data());
  double sum = 0;
  for (std::int64_t j = 0; j < L; ++j) {
    sum += y[j];
    if (removed[j]) CHECK(y[j] == 0.0);
  }
  CHECK(sum == Approx(1.0).epsilon(1e-14));
  // An additive −inf removes the key exactly as a boolean mask does.
  RowMask a;
  a.additive = add.data();
  softmax_row(x.data(), L, 0.5, a, y_add.data());
  for (std::int64_t j = 0; j < L; ++j) CHECK(y_add[j] == Approx(y[j]).epsilon(1e-14));
  // The formula: exp(scale·x + add) / Σ over a small row.
  const double x3[3] = {1.0, 2.0, -1.0}, add3[3] = {0.5, -INFINITY, 0.25};
  double y3[3];
  RowMask a3;
  a3.additive = add3;
  softmax_row(x3, 3, 2.0, a3, y3);
  const double e0 = std::exp(2.5), e2 = std::exp(-1.75);
  CHECK(y3[0] == Approx(e0 / (e0 + e2)));
  CHECK(y3[1] == 0.0);
  CHECK(y3[2] == Approx(e2 / (e0 + e2)));
}

TEST_CASE("reference: a fully masked row gives zeros; the causal mask is Megatron's", "[reference]") {
  const std::int64_t L = 8;
  std::vector<double> x(L, 1.0), y(L, 7.0);
  std::vector<unsigned char> all(L, 1);
  RowMask m;
  m.boolean = all.data();
  softmax_row(x.data(), L, 1.0, m, y.data());
  for (double v : y) CHECK(v == 0.0);
  std::vector<double> minus_inf(L, -INFINITY);
  RowMask a;
  a.additive = minus_inf.data();
  softmax_row(x.data(), L, 1.0, a, y.data());
  for (double v : y) CHECK(v == 0.0);
  // queries = L: query q keeps keys 0 … q (upper triangle removed).
  for (std::int64_t q = 0; q < L; ++q) {
    RowMask c;
    c.last_key = causal_last_key(q, L, L);
    softmax_row(x.data(), L, 1.0, c, y.data());
    for (std::int64_t j = 0; j < L; ++j) CHECK((y[j] > 0) == (j <= q));
    CHECK(y[0] == Approx(1.0 / double(q + 1)));
  }
  // Fewer queries than keys (decoding with a cache): query q keeps keys 0 … q + L − queries.
  CHECK(causal_last_key(0, 2, L) == 6);
  CHECK(causal_last_key(1, 2, L) == 7);
  // More queries than keys: the first rows keep no key at all.
  RowMask c;
  c.last_key = causal_last_key(0, 10, L);
  softmax_row(x.data(), L, 1.0, c, y.data());
  for (double v : y) CHECK(v == 0.0);
}

TEST_CASE("reference: the softmax backward equals central differences of the forward", "[reference]") {
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> u(-2, 2);
  const std::int64_t L = 17;
  const double scale = 0.7, h = 1e-6;
  std::vector<double> x(L), dy(L), add(L), y(L), dx(L), yp(L), ym(L);
  std::vector<unsigned char> removed(L);
  for (std::int64_t j = 0; j < L; ++j) {
    x[j] = u(rng);
    dy[j] = u(rng);
    add[j] = j % 5 == 2 ? -INFINITY : u(rng);
    removed[j] = j % 7 == 3;
  }
  for (int variant = 0; variant < 3; ++variant) {
    RowMask m;
    if (variant == 1) m.additive = add.data();
    if (variant == 2) {
      m.boolean = removed.data();
      m.last_key = 12;
    }
    softmax_row(x.data(), L, scale, m, y.data());
    softmax_backward_row(y.data(), dy.data(), L, scale, dx.data());
    for (std::int64_t k = 0; k < L; ++k) {  // d(Σ dy·y)/dx_k
      std::vector<double> xp = x, xm = x;
      xp[k] += h;
      xm[k] -= h;
      softmax_row(xp.data(), L, scale, m, yp.data());
      softmax_row(xm.data(), L, scale, m, ym.data());
      double lp = 0, lm = 0;
      for (std::int64_t j = 0; j < L; ++j) {
        lp += dy[j] * yp[j];
        lm += dy[j] * ym[j];
      }
      INFO("variant " << variant << " k " << k);
      CHECK(dx[k] == Approx((lp - lm) / (2 * h)).margin(1e-8));
      if (key_removed(m, k)) CHECK(dx[k] == 0.0);
    }
  }
}
