// layer_norm and layer_norm_backward on the GPU against the float64 reference through the
// check harness: every entry of tests/shapes/layer-norm.json (each hidden size of issue 7 ×
// dtype × {weight and bias, neither, weight only}, and 16-bit H = 100 with weight and bias
// and an even row count; the forward of the even-row 16-bit H = 100 entries takes two-row
// units, 10485 rows keep one row a unit; the staged backward's H = 16384 and 65536 rows with
// enough rows a block or cluster to refill stages and rotate the 32-row statistics batches),
// both families.
#include "bandjit/bandjit.hpp"
#include "check/set_checks.hpp"
#include "support/catch.hpp"
#include "support/temp_dir.hpp"

using namespace bandjit;

TEST_CASE("layer_norm: every hidden size, dtype and weight/bias choice matches float64", "[layer_norm]") {
  const ShapeFile file = load_shape_file(test::source_path("tests/shapes/layer-norm.json"));
  REQUIRE(file.entries.size() == 88);
  for (const auto& entry : file.entries) {
    std::uint64_t seed = 0;
    const auto results = check_entry(entry, CheckOptions{0, 0, 1, {}}, &seed);
    REQUIRE(results.size() == 2);
    for (const OpCheck& c : results) {
      INFO(c.family << " " << entry.parameters << " seed " << seed << ": rel_error " << c.rel_error << " (tol "
                    << c.tolerance << ") nan " << c.nan_count << " inf " << c.inf_count << " rows " << c.rows_checked
                    << " — " << c.note);
      CHECK(c.rows_checked > 0);
      CHECK(c.passed);
    }
  }
}
