// The softmax sets on the GPU through `bandjit check`'s harness (check/check_softmax.cpp):
// every entry of tests/shapes/softmax.json — each listed L × dtype × mask, causal, fully
// masked rows, odd shapes — forward and backward against float64, in place included.
#include <fmt/format.h>

#include "check/set_checks.hpp"
#include "support/catch.hpp"
#include "support/temp_dir.hpp"

using namespace bandjit;

TEST_CASE("softmax: every entry of the softmax shape file matches float64, forward and backward", "[softmax]") {
  const auto shapes = load_shape_file(test::source_path("tests/shapes/softmax.json"));
  CheckOptions options;
  options.timing_runs = 3;
  options.warmup = 1;
  for (std::size_t i = 0; i < shapes.entries.size(); ++i) {
    const auto checks = check_entry(shapes.entries[i], options, nullptr);
    CHECK(checks.size() == shapes.entries[i].ops.size());
    for (const auto& c : checks) {
      INFO(fmt::format("problems[{}] {} {}: rel {:.2e} (tol {:.0e}), structure {}, nan {}, inf {}; {}", i, c.family,
                       shapes.entries[i].parameters, c.rel_error, c.tolerance, c.structure_mismatches, c.nan_count,
                       c.inf_count, c.note));
      CHECK(c.passed);
    }
  }
}
