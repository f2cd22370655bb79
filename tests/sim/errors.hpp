// The sim tests' comparison of a kernel's output with the float64 reference: ‖out − ref‖ /
// ‖ref‖ over finite outputs; a non-finite output (poison that survived) is counted and the
// first few are named.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>

#include <vector>

#include "reference/band_reference.hpp"
#include "support/catch.hpp"

namespace bandjit::sim {

struct ErrorTotals {
  double d2 = 0, r2 = 0;
  std::size_t bad = 0;
  void add(double out, double ref, std::int64_t b, std::int64_t h, std::int64_t i, std::int64_t column) {
    if (!std::isfinite(out)) {
      if (++bad <= 5) UNSCOPED_INFO("row " << i << " head " << h << " batch " << b << " column " << column << ": " << out);
      return;
    }
    d2 += (out - ref) * (out - ref);
    r2 += ref * ref;
  }
  double rel() const { return std::sqrt(d2 / r2); }
};

// Checks a [.., Dh] output (out.at(index) as double) against ref_row(b, h, i, row), which
// writes the float64 reference row of Dh values: no poison left, relative error ≤ tol.
template <class Out, class RefRow>
void check_head_dim_rows(const Problem& p, const Out& out, RefRow ref_row, double tol) {
  std::vector<double> ref(static_cast<std::size_t>(p.head_dim));
  ErrorTotals err;
  for (std::int64_t b = 0; b < p.batch; ++b)
    for (std::int64_t h = 0; h < p.heads; ++h)
      for (std::int64_t i = 0; i < p.seq_len; ++i) {
        ref_row(b, h, i, ref.data());
        for (std::int64_t k = 0; k < p.head_dim; ++k)
          err.add(out.at(reference::qkv_index(p, b, h, i, k)), ref[k], b, h, i, k);
      }
  CHECK(err.bad == 0);
  const double rel = err.rel();
  INFO("relative error " << rel);
  CHECK(rel <= tol);
}

}  // namespace bandjit::sim
