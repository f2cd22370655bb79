// The float64 layer_norm reference checked against itself: forward invariants (x̂ has mean 0
// and variance 1/(1 + ε/var)) and the backward against central finite differences of the forward.
#include <cmath>
#include <random>
#include <vector>

#include "reference/layer_norm_reference.hpp"
#include "support/catch.hpp"

using namespace bandjit::reference;

namespace {
std::vector<double> random_values(int n, double lo, double hi, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(lo, hi);
  std::vector<double> v(n);
  for (auto& e : v) e = u(rng);
  return v;
}

// L = Σ dy·y for the forward of x with weight w and bias b.
double loss(const std::vector<double>& x, const std::vector<double>& w, const std::vector<double>& b,
            const std::vector<double>& dy, double eps) {
  std::vector<double> y(x.size());
  layer_norm_row(x.data(), w.data(), b.data(), static_cast<int>(x.size()), eps, y.data());
  double l = 0;
  for (std::size_t c = 0; c < x.size(); ++c) l += dy[c] * y[c];
  return l;
}
}  // namespace

TEST_CASE("reference: layer_norm forward normalises each row", "[reference][layer_norm]") {
  const int H = 37;
  const auto x = random_values(H, 2, 3, 1);
  std::vector<double> y(H);
  const auto s = layer_norm_row(x.data(), nullptr, nullptr, H, 1e-5, y.data());
  double mean = 0, var = 0, xv = 0;
  for (double v : y) mean += v / H;
  for (double v : y) var += v * v / H;
  for (double v : x) xv += (v - s.mean) * (v - s.mean) / H;
  CHECK(std::abs(mean) < 1e-13);
  CHECK(var == Approx(xv / (xv + 1e-5)).epsilon(1e-12));
  CHECK(s.rstd == Approx(1 / std::sqrt(xv + 1e-5)).epsilon(1e-12));
  // weight and bias are applied per column after normalising
  const auto w = random_values(H, 0.5, 1.5, 2), b = random_values(H, -1, 1, 3);
  std::vector<double> yw(H);
  layer_norm_row(x.data(), w.data(), b.data(), H, 1e-5, yw.data());
  for (int c = 0; c < H; ++c) CHECK(yw[c] == Approx(y[c] * w[c] + b[c]).epsilon(1e-13));
}

TEST_CASE("reference: layer_norm backward matches finite differences of the forward", "[reference][layer_norm]") {
  for (int H : {1, 2, 5, 33}) {
    INFO("hidden " << H);
    const double eps = 1e-3, h = 1e-6;
    auto x = random_values(H, -1, 2, 4);
    auto w = random_values(H, 0.5, 1.5, 5), b = random_values(H, -1, 1, 6);
    const auto dy = random_values(H, -1, 1, 7);
    std::vector<double> y(H), dx(H), dw(H, 0.25), db(H, -0.5);  // dweight, dbias accumulate
    const auto s = layer_norm_row(x.data(), w.data(), b.data(), H, eps, y.data());
    layer_norm_backward_row(dy.data(), x.data(), s, w.data(), H, dx.data(), dw.data(), db.data());
    for (int c = 0; c < H; ++c) {
      auto fd = [&](std::vector<double>& v) {
        const double keep = v[c];
        v[c] = keep + h;
        const double up = loss(x, w, b, dy, eps);
        v[c] = keep - h;
        const double down = loss(x, w, b, dy, eps);
        v[c] = keep;
        return (up - down) / (2 * h);
      };
      CHECK(dx[c] == Approx(fd(x)).margin(1e-7));
      CHECK(dw[c] - 0.25 == Approx(fd(w)).margin(1e-7));
      CHECK(db[c] + 0.5 == Approx(fd(b)).margin(1e-7));
    }
    // Without a weight, g = dy.
    std::vector<double> dx1(H);
    layer_norm_backward_row(dy.data(), x.data(), s, nullptr, H, dx1.data(), nullptr, nullptr);
    std::vector<double> ones(H, 1.0), dx_ones(H);
    layer_norm_backward_row(dy.data(), x.data(), s, ones.data(), H, dx_ones.data(), nullptr, nullptr);
    for (int c = 0; c < H; ++c) CHECK(dx1[c] == Approx(dx_ones[c]).margin(1e-15));
  }
}
