#include <algorithm>
#include <random>

#include "check/check_attention.hpp"
#include "check/check_backward.hpp"
#include "check/check_problem.hpp"
#include "reference/band_reference.hpp"
#include "support/catch.hpp"
#include "support/problems.hpp"

using namespace bandjit;

namespace {
Problem make(std::int64_t b, std::int64_t h, std::int64_t n, std::int64_t wl, std::int64_t wr, std::vector<std::int64_t> d) {
  return test::band_problem(b, h, n, 64, wl, wr, DType::float32, std::move(d));
}
}  // namespace

TEST_CASE("check: small problems are checked on every row", "[check]") {
  const Problem p = make(2, 3, 50, 5, 5, {1});
  CHECK(rows_to_check(p, 1).size() == 2 * 3 * 50);
}

TEST_CASE("check: large problems sample the clipped ends of every head", "[check]") {
  const Problem p = make(12, 12, 32768, 4096, 4096, {4});
  const auto rows = rows_to_check(p, 7);
  CHECK(rows.size() < 5000);
  CHECK(std::is_sorted(rows.begin(), rows.end()));
  CHECK(std::adjacent_find(rows.begin(), rows.end()) == rows.end());
  for (std::int64_t b : {std::int64_t{0}, p.batch - 1})
    for (std::int64_t h = 0; h < p.heads; ++h) {
      auto has = [&](std::int64_t i) { return std::binary_search(rows.begin(), rows.end(), RowRef{b, h, i}); };
      CHECK(has(0));
      CHECK(has(p.seq_len - 1));
      const auto head = std::count_if(rows.begin(), rows.end(), [&](const RowRef& r) {
        return r.b == b && r.h == h && r.i > 8 && r.i < p.window_left * 4;
      });
      CHECK(head >= 5);
    }
  // Fresh seeds pick fresh rows.
  CHECK(rows_to_check(p, 8) != rows);
}

TEST_CASE("check: the expected count of out-of-range slots matches a brute-force count", "[check]") {
  for (const auto& p : {make(1, 1, 13, 5, 3, {1}), make(2, 3, 40, 30, 25, {3}), make(1, 4, 129, 16, 16, {1, 2, 3, 4}),
                        make(1, 2, 77, 12, 0, {2}), make(1, 1, 1, 0, 0, {1})}) {
    std::uint64_t brute = 0;
    for (std::int64_t h = 0; h < p.heads; ++h)
      for (std::int64_t i = 0; i < p.seq_len; ++i)
        for (std::int64_t j = 0; j < p.diagonals(); ++j) brute += reference::key_of(p, h, i, j) < 0;
    CHECK(expected_out_of_range_slots(p) == brute * p.batch);
  }
}

TEST_CASE("check: the sampled end-to-end backward reference equals the whole-problem one", "[check]") {
  std::mt19937 rng(4);
  std::uniform_real_distribution<double> u(-1, 1);
  for (auto p : {test::band_problem(2, 3, 40, 16, 6, 3, DType::float32, {1, 2, 5}),
                 test::band_problem(1, 2, 33, 16, 0, 7, DType::float16, {3}, Layout::bhnd),
                 test::band_problem(2, 1, 50, 16, 9, 0, DType::float32, {2})}) {
    p.scale = 0.3;
    p.key_mask = p.batch == 2 ? KeyMask::additive : KeyMask::none;
    INFO(slug(p));
    const auto C = p.diagonals();
    const auto n = static_cast<std::size_t>(p.batch * p.heads * p.seq_len * p.head_dim);
    const auto nb = static_cast<std::size_t>(p.batch * p.heads * p.seq_len * C);
    std::vector<double> q(n), k(n), v(n), d_o(n), prob(nb), mask(static_cast<std::size_t>(p.batch * p.seq_len));
    for (auto* t : {&q, &k, &v, &d_o})
      for (auto& x : *t) x = u(rng);
    for (std::size_t i = 0; i < mask.size(); ++i) mask[i] = i % 4 == 1 ? -10000.0 : 0.5;
    const double* m = p.key_mask == KeyMask::none ? nullptr : mask.data();
    std::vector<double> o(n), dq(n), dk(n), dv(n);
    reference::attention_forward(p, q.data(), k.data(), v.data(), m, prob.data(), o.data());
    reference::attention_backward(p, q.data(), k.data(), v.data(), prob.data(), d_o.data(), m, dq.data(), dk.data(), dv.data());
    for (std::int64_t b = 0; b < p.batch; ++b)
      for (std::int64_t h = 0; h < p.heads; ++h) {
        const std::vector<std::int64_t> rows = {0, 1, p.seq_len / 2, p.seq_len - 2, p.seq_len - 1};
        const auto read = [&](const std::vector<std::int64_t>& s, std::vector<double>& values) {
          for (std::size_t r = 0; r < s.size(); ++r)
            for (std::int64_t j = 0; j < C; ++j) values[r * C + j] = prob[reference::band_index(p, b, h, s[r], j)];
        };
        const auto needed = backward_reference_rows(p, h, rows);
        CHECK(std::is_sorted(needed.begin(), needed.end()));
        CHECK(std::binary_search(needed.begin(), needed.end(), p.seq_len / 2));
        const auto ref = backward_reference(p, q, k, v, d_o, m, b, h, rows, read);
        for (std::size_t r = 0; r < rows.size(); ++r)
          for (std::int64_t d = 0; d < p.head_dim; ++d) {
            const auto at = reference::qkv_index(p, b, h, rows[r], d);
            CHECK(ref.dq[r * p.head_dim + d] == Approx(dq[at]).margin(1e-12));
            CHECK(ref.dk[r * p.head_dim + d] == Approx(dk[at]).margin(1e-12));
            CHECK(ref.dv[r * p.head_dim + d] == Approx(dv[at]).margin(1e-12));
          }
      }
  }
}

TEST_CASE("check: rows without an allowed key are counted as the reference finds them", "[check]") {
  // sliding_window_attention's LSE is −inf exactly there: check expects that many infinities.
  std::mt19937 rng(std::random_device{}());
  for (KeyMask m : {KeyMask::none, KeyMask::boolean, KeyMask::additive})
    for (const auto& d : std::vector<std::vector<std::int64_t>>{{1}, {3}, {1, 2, 5}}) {
      Problem p = make(2, 3, 97, 6, m == KeyMask::additive ? 0 : 4, d);
      p.key_mask = m;
      std::vector<double> mask(static_cast<std::size_t>(p.batch * p.seq_len));
      std::bernoulli_distribution keep(0.25);
      for (auto& x : mask) x = m == KeyMask::boolean ? (keep(rng) ? 1.0 : 0.0) : (keep(rng) ? 0.5 : -10000.0);
      // Batch 1 loses keys 10 … 79, wider than any row's keys (51 positions at dilation 5): some
      // rows surely have none (random runs alone leave none in about one case of eight).
      for (std::int64_t i = 10; i < 80; ++i)
        mask[static_cast<std::size_t>(p.seq_len + i)] = m == KeyMask::boolean ? 0.0 : -10000.0;
      std::uint64_t brute = 0;
      for (std::int64_t b = 0; b < p.batch; ++b)
        for (std::int64_t h = 0; h < p.heads; ++h)
          for (std::int64_t i = 0; i < p.seq_len; ++i) {
            bool any = false;
            for (std::int64_t j = 0; j < p.diagonals(); ++j) any = any || reference::slot_allowed(p, mask.data(), b, h, i, j);
            brute += !any;
          }
      INFO(slug(p));
      CHECK(rows_without_keys(p, mask.data()) == brute);
      if (m != KeyMask::none) CHECK(brute > 0);  // the case has such rows
    }
}
