// The oracle of the backward pass is proven here: the float64 backward reference (SPEC §3.4
// identities) must equal central finite differences of the float64 forward reference, and
// band_tpv must be the transpose of the band that band_qk / band_pv walk.
#include <cmath>
#include <random>

#include "reference/band_reference.hpp"
#include "support/catch.hpp"
#include "support/problems.hpp"

using namespace bandjit;
using namespace bandjit::reference;

namespace {

std::vector<double> random_values(std::size_t n, std::mt19937& rng, double lo = -1, double hi = 1) {
  std::uniform_real_distribution<double> u(lo, hi);
  std::vector<double> v(n);
  for (auto& x : v) x = u(rng);
  return v;
}

std::size_t qkv_size(const Problem& p) { return static_cast<std::size_t>(p.batch * p.heads * p.seq_len * p.head_dim); }
std::size_t band_size(const Problem& p) {
  return static_cast<std::size_t>(p.batch * p.heads * p.seq_len * p.diagonals());
}

// Key-padding mask as the reference reads it ([B, N] doubles): ~25 % of keys removed and the
// second batch's keys all removed, so that fully masked rows occur.
std::vector<double> make_mask(const Problem& p, std::mt19937& rng) {
  std::vector<double> mask(static_cast<std::size_t>(p.batch * p.seq_len));
  std::uniform_real_distribution<double> u(0, 1);
  for (std::size_t idx = 0; idx < mask.size(); ++idx) {
    const bool removed = u(rng) < 0.25 || idx >= static_cast<std::size_t>(p.seq_len);
    if (p.key_mask == KeyMask::boolean)
      mask[idx] = removed ? 0.0 : 1.0;
    else
      mask[idx] = removed ? -10000.0 : u(rng);  // kept keys: a value added to the score
  }
  return mask;
}

// L(Q, K, V) = Σ O ⊙ G with O the forward reference: its gradient is the backward of dO = G.
double loss(const Problem& p, const std::vector<double>& q, const std::vector<double>& k, const std::vector<double>& v,
            const double* mask, const std::vector<double>& g) {
  std::vector<double> prob(band_size(p)), o(qkv_size(p));
  attention_forward(p, q.data(), k.data(), v.data(), mask, prob.data(), o.data());
  double sum = 0;
  for (std::size_t idx = 0; idx < o.size(); ++idx) sum += o[idx] * g[idx];
  return sum;
}

double rel_diff(const std::vector<double>& a, const std::vector<double>& b) {
  double d2 = 0, r2 = 0;
  for (std::size_t idx = 0; idx < a.size(); ++idx) {
    d2 += (a[idx] - b[idx]) * (a[idx] - b[idx]);
    r2 += b[idx] * b[idx];
  }
  return r2 > 0 ? std::sqrt(d2 / r2) : std::sqrt(d2);
}

struct Case {
  const char* what;
  Problem problem;
};

std::vector<Case> cases() {
  using test::band_problem;
  std::vector<Case> out;
  out.push_back({"symmetric window", band_problem(1, 2, 11, 16, 2, 2)});
  out.push_back({"w_l != w_r, bhnd, scale", band_problem(2, 1, 13, 16, 3, 1, DType::float32, {1}, Layout::bhnd)});
  out.back().problem.scale = 0.37;
  out.push_back({"window_right = 0 (causal)", band_problem(1, 2, 12, 16, 4, 0)});
  out.push_back({"window_left = 0", band_problem(1, 1, 10, 16, 0, 3)});
  out.push_back({"dilation 3", band_problem(1, 1, 14, 16, 2, 2, DType::float32, {3})});
  out.push_back({"per-head dilation, window >= N/2", band_problem(1, 3, 9, 16, 5, 4, DType::float32, {1, 2, 4})});
  out.push_back({"dilation * window >= N, bhnd", band_problem(1, 2, 8, 16, 3, 2, DType::float32, {4, 1}, Layout::bhnd)});
  out.push_back({"bool key mask with fully masked rows", band_problem(2, 2, 10, 16, 3, 2)});
  out.back().problem.key_mask = KeyMask::boolean;
  out.push_back({"additive key mask, causal, dilated, scale", band_problem(2, 2, 12, 16, 3, 0, DType::float32, {1, 2})});
  out.back().problem.key_mask = KeyMask::additive;
  out.back().problem.scale = 0.5;
  return out;
}

}  // namespace

TEST_CASE("gradient: band_tpv is the transpose of the band (SPEC §3.4 index convention)", "[gradient]") {
  std::mt19937 rng(11);
  for (const auto& c : cases()) {
    const Problem& p = c.problem;
    INFO(c.what << ": " << slug(p));
    const auto C = p.diagonals();
    const auto x = random_values(band_size(p), rng), y = random_values(qkv_size(p), rng);
    // Scatter: every valid slot (s, j') sends X[s, j']·Y[s] to its key. band_tpv gathers it.
    std::vector<double> scattered(qkv_size(p), 0.0), gathered(qkv_size(p));
    for (std::int64_t b = 0; b < p.batch; ++b)
      for (std::int64_t h = 0; h < p.heads; ++h)
        for (std::int64_t s = 0; s < p.seq_len; ++s)
          for (std::int64_t j = 0; j < C; ++j) {
            const auto key = key_of(p, h, s, j);
            if (key < 0) continue;
            CHECK(transposed_query_of(p, h, key, C - 1 - j) == s);
            for (std::int64_t d = 0; d < p.head_dim; ++d)
              scattered[qkv_index(p, b, h, key, d)] += x[band_index(p, b, h, s, j)] * y[qkv_index(p, b, h, s, d)];
          }
    for (std::int64_t b = 0; b < p.batch; ++b)
      for (std::int64_t h = 0; h < p.heads; ++h)
        for (std::int64_t i = 0; i < p.seq_len; ++i)
          band_tpv_row(p, x.data(), y.data(), b, h, i, gathered.data() + qkv_index(p, b, h, i, 0));
    CHECK(rel_diff(gathered, scattered) < 1e-14);
  }
}

TEST_CASE("gradient: the backward reference equals central differences of the forward reference", "[gradient]") {
  std::mt19937 rng(5);
  for (const auto& c : cases()) {
    const Problem& p = c.problem;
    INFO(c.what << ": " << slug(p));
    auto q = random_values(qkv_size(p), rng), k = random_values(qkv_size(p), rng), v = random_values(qkv_size(p), rng);
    const auto g = random_values(qkv_size(p), rng);
    std::vector<double> mask;
    if (p.key_mask != KeyMask::none) mask = make_mask(p, rng);
    const double* m = mask.empty() ? nullptr : mask.data();

    std::vector<double> prob(band_size(p)), o(qkv_size(p));
    attention_forward(p, q.data(), k.data(), v.data(), m, prob.data(), o.data());
    std::vector<double> dq(qkv_size(p)), dk(qkv_size(p)), dv(qkv_size(p));
    attention_backward(p, q.data(), k.data(), v.data(), prob.data(), g.data(), m, dq.data(), dk.data(), dv.data());

    const double step = 1e-5;
    auto numeric = [&](std::vector<double>& x) {
      std::vector<double> grad(x.size());
      for (std::size_t idx = 0; idx < x.size(); ++idx) {
        const double keep = x[idx];
        x[idx] = keep + step;
        const double up = loss(p, q, k, v, m, g);
        x[idx] = keep - step;
        const double down = loss(p, q, k, v, m, g);
        x[idx] = keep;
        grad[idx] = (up - down) / (2 * step);
      }
      return grad;
    };
    const auto nq = numeric(q), nk = numeric(k), nv = numeric(v);
    CHECK(rel_diff(dq, nq) < 1e-7);
    CHECK(rel_diff(dk, nk) < 1e-7);
    CHECK(rel_diff(dv, nv) < 1e-7);
    // Not vacuous: every gradient has substance, and per element the agreement holds too.
    double norm_q = 0, norm_k = 0;
    for (std::size_t idx = 0; idx < dq.size(); ++idx) {
      norm_q += dq[idx] * dq[idx];
      norm_k += dk[idx] * dk[idx];
      REQUIRE(std::abs(dq[idx] - nq[idx]) < 1e-7 * (1 + std::abs(nq[idx])));
      REQUIRE(std::abs(dk[idx] - nk[idx]) < 1e-7 * (1 + std::abs(nk[idx])));
      REQUIRE(std::abs(dv[idx] - nv[idx]) < 1e-7 * (1 + std::abs(nv[idx])));
    }
    CHECK(norm_q > 1e-6);
    CHECK(norm_k > 1e-6);
  }
}

TEST_CASE("gradient: a fully masked row has zero gradients and band_softmax_backward zeroes non-allowed slots",
          "[gradient]") {
  Problem p = test::band_problem(2, 1, 9, 16, 3, 2);
  p.key_mask = KeyMask::boolean;
  p.scale = 2.0;
  std::mt19937 rng(3);
  std::vector<double> mask(static_cast<std::size_t>(p.batch * p.seq_len), 1.0);
  for (std::int64_t i = 0; i < p.seq_len; ++i) mask[static_cast<std::size_t>(p.seq_len + i)] = 0.0;  // batch 1: all removed
  mask[4] = 0.0;                                                                                    // batch 0: key 4
  const auto C = p.diagonals();
  const auto prow = random_values(static_cast<std::size_t>(C), rng, 0, 1);
  auto dprow = random_values(static_cast<std::size_t>(C), rng);
  std::vector<double> ds(static_cast<std::size_t>(C));
  band_softmax_backward_row(p, prow.data(), dprow.data(), mask.data(), 0, 0, 0, ds.data());  // row 0: slots 0..2 off
  double dot = 0;
  for (std::int64_t j = 3; j < C; ++j) dot += prow[j] * dprow[j];
  for (std::int64_t j = 0; j < C; ++j) CHECK(ds[j] == (j < 3 ? 0.0 : 2.0 * prow[j] * (dprow[j] - dot)));
  band_softmax_backward_row(p, prow.data(), dprow.data(), mask.data(), 0, 0, 5, ds.data());  // key 4 = slot 2
  CHECK(ds[2] == 0.0);
  band_softmax_backward_row(p, prow.data(), dprow.data(), mask.data(), 1, 0, 5, ds.data());
  for (double x : ds) CHECK(x == 0.0);

  const auto n = static_cast<std::size_t>(p.batch * p.heads * p.seq_len * p.head_dim);
  const auto q = random_values(n, rng), k = random_values(n, rng), v = random_values(n, rng), g = random_values(n, rng);
  std::vector<double> prob(static_cast<std::size_t>(p.batch * p.heads * p.seq_len * C)), o(n), dq(n), dk(n), dv(n);
  attention_forward(p, q.data(), k.data(), v.data(), mask.data(), prob.data(), o.data());
  attention_backward(p, q.data(), k.data(), v.data(), prob.data(), g.data(), mask.data(), dq.data(), dk.data(), dv.data());
  for (std::int64_t i = 0; i < p.seq_len; ++i)
    for (std::int64_t d = 0; d < p.head_dim; ++d) {
      CHECK(o[qkv_index(p, 1, 0, i, d)] == 0.0);
      CHECK(dq[qkv_index(p, 1, 0, i, d)] == 0.0);
      CHECK(dk[qkv_index(p, 1, 0, i, d)] == 0.0);
      CHECK(dv[qkv_index(p, 1, 0, i, d)] == 0.0);
    }
  // Key 4 of batch 0 is removed: nothing flows into its K and V rows.
  for (std::int64_t d = 0; d < p.head_dim; ++d) {
    CHECK(dk[qkv_index(p, 0, 0, 4, d)] == 0.0);
    CHECK(dv[qkv_index(p, 0, 0, 4, d)] == 0.0);
  }
}
