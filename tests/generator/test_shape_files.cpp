#include <string>

#include "bandjit/errors.hpp"
#include "bandjit/problem.hpp"
#include "support/catch.hpp"
#include "support/temp_dir.hpp"

using namespace bandjit;
using bandjit::test::source_path;

TEST_CASE("shapes: the four shape files load as they are", "[shapes]") {
  struct Expect {
    const char* file;
    std::size_t problems;
  };
  for (const Expect e : {Expect{"shapes/longformer-base-4096.json", 6}, Expect{"shapes/longformer-large-4096.json", 4},
                         Expect{"shapes/longformer-charlm-small.json", 6}, Expect{"shapes/seed-workload-grid.json", 51}}) {
    INFO(e.file);
    const ShapeFile f = load_shape_file(source_path(e.file));
    CHECK(f.entries.size() == e.problems);
    for (const auto& entry : f.entries) {
      CHECK(entry.ops == std::vector<std::string>{"band_qk", "band_softmax", "band_pv"});
      CHECK_NOTHROW(validate(entry.problem));
    }
  }
  // The project's own lists load too: the GPU tests and `check` read them.
  CHECK(load_shape_file(source_path("tests/shapes/edge-cases.json")).entries.size() == 69);
  CHECK(load_shape_file(source_path("bench/shapes/issue-3.json")).entries.size() >= 9);
  const ShapeFile charlm = load_shape_file(source_path("shapes/longformer-charlm-small.json"));
  const Problem& dilated = charlm.entries[5].problem;
  CHECK(dilated.window_right == 0);
  CHECK(dilated.dilation == std::vector<std::int64_t>{1, 1, 1, 1, 1, 1, 4, 4});
  CHECK(dilated.seq_len == 23040);
}

TEST_CASE("shapes: ops, shorthands and errors", "[shapes]") {
  test::TempDir dir;
  const std::string problem =
      R"("batch": 1, "heads": 2, "seq_len": 64, "head_dim": 32, "window_left": 4, "window_right": 0, "dtype": "float32")";
  SECTION("explicit ops and the forward, backward and training shorthands") {
    test::write_text(dir / "a.json", R"({"name": "a", "problems": [{)" + problem + R"(, "ops": ["band_pv"]},
                                         {)" + problem + R"(, "ops": ["forward"]},
                                         {)" + problem + R"(, "ops": ["band_tpv", "attention_backward"]},
                                         {)" + problem + R"(, "ops": ["backward", "band_tpv"]},
                                         {)" + problem + R"(, "ops": ["training"]}]})");
    const ShapeFile f = load_shape_file(dir / "a.json");
    CHECK(f.name == "a");
    CHECK(f.entries[0].ops == std::vector<std::string>{"band_pv"});
    CHECK(f.entries[1].ops.size() == 3);
    CHECK(f.entries[2].ops == std::vector<std::string>{"band_tpv", "attention_backward"});
    CHECK(f.entries[3].ops == std::vector<std::string>{"band_tpv", "band_softmax_backward", "attention_backward"});
    CHECK(f.entries[4].ops == std::vector<std::string>{"band_qk", "band_softmax", "band_pv", "band_tpv",
                                                       "band_softmax_backward", "attention_backward"});
  }
  SECTION("an unknown family names itself and the known ones") {
    test::write_text(dir / "b.json", R"({"name": "b", "problems": [{)" + problem + R"(, "ops": ["band_qv"]}]})");
    try {
      load_shape_file(dir / "b.json");
      FAIL("accepted an unknown family");
    } catch (const Error& e) {
      const std::string what = e.what();
      CHECK(e.kind() == ErrorKind::invalid_problem);
      CHECK(what.find("band_qv") != std::string::npos);
      CHECK(what.find("band_softmax") != std::string::npos);
      CHECK(what.find("problems[0]") != std::string::npos);
    }
  }
  SECTION("a number out of range, a repeated key or nesting past 64 levels is invalid JSON naming the file") {
    const std::string deep = std::string(200000, '[') + std::string(200000, ']');
    const std::pair<std::string, std::string> cases[] = {
        {R"({"name": "d", "problems": [{)" + problem + R"(, "scale": 1e400}]})", "number overflow"},
        {R"({"name": "d", "problems": [{)" + problem + R"(, "heads": 3}]})", R"(the key "heads" appears twice)"},
        {R"({"name": "d", "problems": [)" + deep + "]}", "nested more than 64 levels"}};
    for (const auto& [text, why] : cases) {
      test::write_text(dir / "d.json", text);
      try {
        load_shape_file(dir / "d.json");
        FAIL("accepted " << why);
      } catch (const Error& e) {
        const std::string what = e.what();
        CHECK(e.kind() == ErrorKind::invalid_problem);
        CHECK(what.find("d.json: ") != std::string::npos);
        CHECK(what.find(why) != std::string::npos);
      }
    }
  }
  SECTION("a bad problem names the file and its index") {
    const std::string bad =
        R"("batch": 1, "heads": 2, "seq_len": 64, "head_dim": 7, "window_left": 4, "window_right": 0, "dtype": "float32")";
    test::write_text(dir / "c.json", R"({"name": "c", "problems": [{)" + problem + R"(}, {)" + bad + R"(}]})");
    try {
      load_shape_file(dir / "c.json");
      FAIL("accepted head_dim 7");
    } catch (const Error& e) {
      const std::string what = e.what();
      CHECK(what.find("c.json problems[1]") != std::string::npos);
      CHECK(what.find("head_dim") != std::string::npos);
    }
  }
  SECTION("missing and malformed files") {
    CHECK_THROWS_AS(load_shape_file(dir / "missing.json"), Error);
    test::write_text(dir / "d.json", R"({"name": "d"})");
    try {
      load_shape_file(dir / "d.json");
      FAIL("accepted a file without problems");
    } catch (const Error& e) {
      CHECK(std::string(e.what()).find("\"problems\" list") != std::string::npos);
    }
  }
}
