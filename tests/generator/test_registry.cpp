// The registry by name: declared parameters are validated and completed, band families take
// their Problem as JSON too, every family describes itself, shape-file entries name their
// parameter set. (The row families' own tests check their parameters.)
#include <functional>
#include <string>

#include "bandjit/bandjit.hpp"
#include "generator/family_registry.hpp"
#include "generator/problem_json.hpp"
#include "support/catch.hpp"
#include "support/problems.hpp"
#include "support/temp_dir.hpp"

using namespace bandjit;
using nlohmann::json;

namespace {

bool has(const std::string& text, const std::string& piece) { return text.find(piece) != std::string::npos; }

const std::vector<ParamSpec>& specs() {
  static const std::vector<ParamSpec> s = {
      {"rows", ParamSpec::Type::integer, 1, 1000, {}, json(), "rows"},
      {"scale", ParamSpec::Type::number, -10, 10, {}, 1.0, "multiplier"},
      {"causal", ParamSpec::Type::boolean, 0, 0, {}, false, "mask keys after the query"},
      dtype_param("element type"),
  };
  return s;
}

std::string error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::invalid_problem);
    return e.what();
  }
  FAIL("no error");
  return "";
}

}  // namespace

TEST_CASE("registry: declared parameters are checked by name, range and type, and defaults filled", "[registry]") {
  const json c = canonical_params(specs(), json{{"rows", 7}, {"dtype", "float16"}}, "fam", "f.json problems[1]");
  CHECK(c.dump() == R"({"causal":false,"dtype":"float16","rows":7,"scale":1.0})");
  // One spelling per value, given or defaulted: 1 and 1.0 and -0.0 and 0 key alike.
  CHECK(canonical_params(specs(), json{{"rows", 7}, {"dtype", "float16"}, {"scale", 1}}, "fam", "").dump() == c.dump());
  CHECK(canonical_params(specs(), json{{"rows", 7}, {"dtype", "float16"}, {"scale", -0.0}}, "fam", "").dump() ==
        canonical_params(specs(), json{{"rows", 7}, {"dtype", "float16"}, {"scale", 0}}, "fam", "").dump());
  CHECK(params_slug(c) == "f16_rows7_scale1");

  std::string what = error_of([] { canonical_params(specs(), json{{"rows", 0}, {"dtype", "float32"}}, "fam", "w"); });
  CHECK(has(what, "w: fam: rows = 0"));
  CHECK(has(what, "1 … 1000"));
  what = error_of([] { canonical_params(specs(), json{{"rows", 2.5}, {"dtype", "float32"}}, "fam", ""); });
  CHECK(has(what, "an integer"));
  what = error_of([] { canonical_params(specs(), json{{"dtype", "float32"}}, "fam", ""); });
  CHECK(has(what, "rows = (missing)"));
  what = error_of([] { canonical_params(specs(), json{{"rows", 3}, {"dtype", "float64"}}, "fam", ""); });
  CHECK(has(what, "\"float32\", \"float16\", \"bfloat16\""));
  what = error_of([] { canonical_params(specs(), json{{"rows", 3}, {"dtype", "float32"}, {"colums", 3}}, "fam", ""); });
  CHECK(has(what, "colums"));
  CHECK(has(what, "rows, scale, causal, dtype"));
  what = error_of([] { canonical_params(specs(), json{{"rows", 3}, {"dtype", "float32"}, {"causal", 1}}, "fam", ""); });
  CHECK(has(what, "true or false"));
  what = error_of([] { canonical_params(specs(), json{{"rows", 3}, {"dtype", "float32"}, {"scale", 11}}, "fam", ""); });
  CHECK(has(what, "scale = 11"));
  CHECK(has(error_of([] { canonical_params(specs(), json::array(), "fam", ""); }), "a JSON object"));
}

TEST_CASE("registry: band families take their Problem as JSON parameters too", "[registry]") {
  const Problem p = test::band_problem(2, 3, 300, 32, 17, 4, DType::float16, {1, 2, 3}, Layout::bhnd);
  for (const auto& name : families_of_set(kBandSet)) {
    INFO(name);
    const Family& f = find_family(name);
    CHECK(f.is_band());
    CHECK(f.canonical(json::parse(to_json(p))) == problem_to_json(p));
    CHECK(f.generate(json::parse(to_json(p))).text == f.generate(p).text);
    CHECK(emit_source(name, to_json(p)) == emit_source(name, p));
  }
  Problem folded = p;  // a dilation list of the wrong length must not pass as one value
  folded.dilation = {2, 2, 2, 2};
  CHECK_THROWS_AS(emit_source("band_qk", folded), Error);
  CHECK_THROWS_AS(pregenerate("band_qk", folded, Options{"sm_90", "/nonexistent", true}), Error);
  json with_ops = json::parse(to_json(p));
  with_ops["ops"] = "garbage";
  CHECK(has(error_of([&] { find_family("band_qk").canonical(with_ops); }), "shape-file field"));
  CHECK(has(error_of([] { emit_source("band_qk", R"({"scale": 1e400})"); }), "not valid JSON"));
  const std::string what = error_of([] { emit_source("band_qk", "{\"batch\": 1"); });
  CHECK(has(what, "not valid JSON"));
  CHECK(has(error_of([] { emit_source("band_qk", R"({"batch": 1, "heads": 1})"); }), "seq_len"));
  CHECK(has(error_of([] { pregenerate("band_qkk", "{}"); }), "unknown kernel family \"band_qkk\""));
}

TEST_CASE("registry: every family describes its parameters, arguments, formula and reference", "[registry]") {
  const auto infos = family_infos();
  REQUIRE(infos.size() == families().size());
  for (const auto& f : infos) {
    INFO(f.name);
    CHECK(!f.parameter_set.empty());
    CHECK(!f.summary.empty());
    CHECK(!f.reference.empty());
    CHECK(!f.arguments.empty());
    CHECK(f.parameters.size() >= 3);
    bool dtype = false;
    for (const auto& p : f.parameters) {
      dtype |= p.name == "dtype";
      CHECK(!p.allowed.empty());
      CHECK(!p.doc.empty());
    }
    CHECK(dtype);
  }
  CHECK(infos.front().name == "band_qk");
  CHECK(infos.front().parameters.size() == 12);
}

TEST_CASE("registry: shape-file entries name their parameter set; ops must belong to it", "[registry]") {
  test::TempDir dir;
  const std::string band =
      R"("batch": 1, "heads": 2, "seq_len": 64, "head_dim": 32, "window_left": 4, "window_right": 0, "dtype": "float32")";
  test::write_text(dir / "a.json", R"({"name": "a", "problems": [{"parameter_set": "band", )" + band + R"(}]})");
  const ShapeFile a = load_shape_file(dir / "a.json");
  CHECK(a.entries[0].parameter_set == "band");
  CHECK(json::parse(a.entries[0].parameters) == problem_to_json(a.entries[0].problem));

  test::write_text(dir / "b.json", R"({"name": "b", "problems": [{"parameter_set": "bands", )" + band + R"(}]})");
  std::string what = error_of([&] { load_shape_file(dir / "b.json"); });
  CHECK(has(what, "b.json problems[0]: parameter_set = \"bands\""));
  CHECK(has(what, "band"));
  test::write_text(dir / "c.json", R"({"name": "c", "problems": [7]})");
  CHECK(has(error_of([&] { load_shape_file(dir / "c.json"); }), "must be a JSON object"));
}
