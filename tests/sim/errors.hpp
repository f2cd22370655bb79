// The sim tests' comparison of a kernel's output with the float64 reference: ‖out − ref‖ /
// ‖ref‖ over finite outputs; a non-finite output (poison that survived) is counted and the
// first few are named.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>

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

}  // namespace bandjit::sim
