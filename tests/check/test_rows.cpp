#include <algorithm>

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
