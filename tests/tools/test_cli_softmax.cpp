// The softmax sets through the command line: `families` lists their parameters, `emit`
// and `pregenerate` take them from JSON and shape files, bad parameters exit 3 naming the
// field, and the issue's check and bench shape files load.
#include <string>

#include "bandjit/bandjit.hpp"
#include "generator/family_registry.hpp"
#include "support/catch.hpp"
#include "support/run_command.hpp"
#include "support/temp_dir.hpp"

using namespace bandjit;
using test::run_cli;

namespace {
bool has(const std::string& text, const std::string& piece) { return text.find(piece) != std::string::npos; }
}  // namespace

TEST_CASE("cli: families lists the softmax sets with their parameters", "[cli]") {
  auto r = run_cli("families");
  CHECK(r.exit_code == 0);
  CHECK(has(r.output, "parameters \"scale_mask_softmax\""));
  CHECK(has(r.output, "parameters \"softmax\""));
  CHECK(has(r.output, "scale_mask_softmax_backward"));
  CHECK(has(r.output, "row_length"));
  CHECK(has(r.output, "\"none\", \"boolean\", \"additive\""));
  CHECK(has(run_cli("families --names").output, "softmax\nsoftmax_backward\n"));
}

TEST_CASE("cli: softmax kernels are emitted and pregenerated from JSON and shape files", "[cli]") {
  auto r = run_cli(R"(emit --family scale_mask_softmax --problem '{"batch": 2, "heads": 4, "queries": 8, "row_length": 100, "dtype": "bfloat16", "mask": "additive", "causal": true}')");
  CHECK(r.exit_code == 0);
  CHECK(has(r.output, "kRowLength = 100;"));
  CHECK(has(r.output, "kCausal = true;"));
  r = run_cli(R"(emit --family softmax --problem '{"rows": 8, "row_length": 0, "dtype": "float16"}')");
  CHECK(r.exit_code == 3);
  CHECK(has(r.output, "row_length"));
  CHECK(has(r.output, "1 … 131072"));

  test::TempDir dir;
  test::write_text(dir / "sm.json", R"({"name": "sm", "problems": [
      {"parameter_set": "scale_mask_softmax", "batch": 1, "heads": 2, "queries": 16, "row_length": 64,
       "dtype": "float16", "mask": "boolean", "causal": true, "ops": ["training"]},
      {"parameter_set": "softmax", "rows": 5, "row_length": 65536, "dtype": "float32", "ops": ["forward"]}]})");
  r = run_cli("pregenerate --arch sm_90 --cache-dir " + dir.path() + "/c --shapes " + dir / "sm.json");
  INFO(r.output);
  CHECK(r.exit_code == 0);
  CHECK(has(r.output, "3 kernels: 3 compiled"));
  r = run_cli("pregenerate --arch sm_90 --cache-dir " + dir.path() + "/c --shapes " + dir / "sm.json");
  CHECK(has(r.output, "3 kernels: 0 compiled, 3 loaded from cache"));
}

TEST_CASE("cli: the issue-7 softmax shape files load with every entry valid", "[cli]") {
  for (const char* file : {"tests/shapes/softmax.json", "bench/shapes/issue-7-softmax.json"}) {
    const auto shapes = load_shape_file(test::source_path(file));
    INFO(file);
    CHECK(shapes.entries.size() >= 50);
    for (const auto& e : shapes.entries) {
      CHECK((e.parameter_set == "scale_mask_softmax" || e.parameter_set == "softmax"));
      CHECK(e.ops.size() == 2);
      for (const auto& op : e.ops) CHECK_NOTHROW(find_family(op).generate(nlohmann::json::parse(e.parameters)));
    }
  }
}
