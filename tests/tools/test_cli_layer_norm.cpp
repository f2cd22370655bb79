// The layer_norm families through the command line: `families` lists their parameters and
// arguments, `pregenerate` and `emit` take layer_norm shape-file entries, bad parameters exit 3.
#include <string>

#include "support/catch.hpp"
#include "support/run_command.hpp"
#include "support/temp_dir.hpp"

using namespace bandjit;
using test::run_cli;

namespace {
bool has(const std::string& text, const std::string& piece) { return text.find(piece) != std::string::npos; }
}  // namespace

TEST_CASE("cli: families lists layer_norm's parameters and arguments", "[cli][layer_norm]") {
  const auto r = run_cli("families");
  INFO(r.output);
  CHECK(r.exit_code == 0);
  CHECK(has(r.output, "parameters \"layer_norm\":"));
  CHECK(has(r.output, "hidden"));
  CHECK(has(r.output, "1 … 65536"));
  CHECK(has(r.output, "epsilon"));
  CHECK(has(r.output, "(x, [weight], [bias], y, mean, rstd)"));
  CHECK(has(r.output, "(dy, x, mean, rstd, [weight], dx, [dweight: weight], [dbias: bias])"));
}

TEST_CASE("cli: pregenerate and emit take layer_norm entries", "[cli][layer_norm]") {
  test::TempDir dir;
  test::write_text(dir / "ln.json", R"({"name": "ln", "problems": [
      {"parameter_set": "layer_norm", "rows": 100, "hidden": 768, "dtype": "bfloat16", "ops": ["training"]},
      {"parameter_set": "layer_norm", "rows": 7, "hidden": 100, "dtype": "float16", "weight": false, "bias": false,
       "ops": ["forward"]}]})");
  const std::string args = "pregenerate --arch sm_90 --cache-dir " + dir.path() + "/c --shapes " + dir / "ln.json";
  auto r = run_cli(args);
  INFO(r.output);
  CHECK(r.exit_code == 0);
  CHECK(has(r.output, "3 kernels: 3 compiled, 0 loaded from cache, 0 failed"));
  CHECK(has(r.output, "layer_norm_backward"));
  r = run_cli(args);
  CHECK(has(r.output, "3 kernels: 0 compiled, 3 loaded from cache, 0 failed"));

  r = run_cli("emit --family layer_norm_backward --shapes " + dir / "ln.json");
  CHECK(r.exit_code == 0);
  CHECK(has(r.output, "bandjit::layer_norm_backward<Cfg>(dy, x, mean, rstd, weight, dx, dweight, dbias"));

  test::write_text(dir / "bad.json", R"({"name": "bad", "problems": [
      {"parameter_set": "layer_norm", "rows": 100, "hidden": 70000, "dtype": "float16"}]})");
  r = run_cli("pregenerate --arch sm_90 --cache-dir " + dir.path() + "/c --shapes " + dir / "bad.json");
  CHECK(r.exit_code == 3);
  CHECK(has(r.output, "hidden = 70000"));
  CHECK(has(r.output, "1 … 65536"));
}
