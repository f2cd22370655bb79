#include <string>

#include "bandjit/errors.hpp"
#include "bandjit/problem.hpp"
#include "support/catch.hpp"
#include "support/problems.hpp"

using namespace bandjit;

namespace {

Problem seed_problem() { return test::band_problem(1, 12, 4096, 64, 256, 256, DType::float16); }

// Validation must fail naming the field, the offending value and the allowed range.
void expect_rejected(const Problem& p, const std::string& field, const std::string& value,
                     const std::string& allowed_fragment) {
  try {
    validate(p);
    FAIL("validate accepted a problem with a bad " << field);
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::invalid_problem);
    CHECK(e.evidence_of("field") == field);
    CHECK(e.evidence_of("value") == value);
    CHECK(e.evidence_of("allowed").find(allowed_fragment) != std::string::npos);
    const std::string what = e.what();
    CHECK(what.find(field) != std::string::npos);
    CHECK(what.find(allowed_fragment) != std::string::npos);
  }
}

}  // namespace

TEST_CASE("problem: the seed problem is valid and has 513 diagonals", "[problem]") {
  const Problem p = seed_problem();
  CHECK_NOTHROW(validate(p));
  CHECK(p.diagonals() == 513);
  CHECK(p.uniform_dilation());
  CHECK(p.dilation_of(11) == 1);
}

TEST_CASE("problem: each out-of-range field is rejected with field, value and range", "[problem]") {
  Problem p = seed_problem();
  SECTION("batch 0") {
    p.batch = 0;
    expect_rejected(p, "batch", "0", "1 … 65535");
  }
  SECTION("heads 0") {
    p.heads = 0;
    expect_rejected(p, "heads", "0", "1 … 1024");
  }
  SECTION("seq_len 0") {
    p.seq_len = 0;
    expect_rejected(p, "seq_len", "0", "1 …");
  }
  SECTION("head_dim not a multiple of 16") {
    p.head_dim = 40;
    expect_rejected(p, "head_dim", "40", "multiple of 16");
  }
  SECTION("head_dim too large") {
    p.head_dim = 512;
    expect_rejected(p, "head_dim", "512", "16 to 256");
  }
  SECTION("window_left = seq_len") {
    p.window_left = 4096;
    expect_rejected(p, "window_left", "4096", "0 … 4095");
  }
  SECTION("negative window_right") {
    p.window_right = -1;
    expect_rejected(p, "window_right", "-1", "0 … 4095");
  }
  SECTION("dilation 0") {
    p.dilation = {0};
    expect_rejected(p, "dilation", "0", "1 … seq_len = 4096");
  }
  SECTION("per-head dilation of the wrong length") {
    p.dilation = {1, 2, 3};
    expect_rejected(p, "dilation", "a list of 3 values", "heads = 12");
  }
  SECTION("one head's dilation out of range") {
    p.dilation.assign(12, 1);
    p.dilation[7] = 5000;
    expect_rejected(p, "dilation[7]", "5000", "1 … seq_len");
  }
  SECTION("non-finite scale") {
    p.scale = std::numeric_limits<double>::quiet_NaN();
    expect_rejected(p, "scale", "nan", "finite");
  }
  SECTION("scale beyond float32") {
    p.scale = 1e39;
    expect_rejected(p, "scale", "1e+39", "float32");
    p.scale = 3e38;  // finite as float, but scale·log2(e) is not
    expect_rejected(p, "scale", "3e+38", "float32");
  }
  SECTION("more rows than one launch covers") {
    p.batch = 65535;
    p.heads = 1024;
    p.seq_len = 1 << 20;
    p.window_left = p.window_right = 1;
    expect_rejected(p, "batch × heads × seq_len", std::to_string(65535LL * 1024 * (1 << 20)), "2147483647 rows");
  }
  SECTION("too many diagonals") {
    p.seq_len = 100000;
    p.window_left = 20000;
    p.window_right = 20000;
    expect_rejected(p, "window_left + window_right + 1", "40001", "32768");
  }
}

TEST_CASE("problem: JSON round trip is exact and canonical", "[problem]") {
  Problem p = seed_problem();
  p.dilation = {1, 1, 2, 2, 3, 3, 4, 4, 1, 1, 1, 1};
  p.scale = 0.125;
  p.layout = Layout::bhnd;
  p.key_mask = KeyMask::additive;
  const std::string text = to_json(p);
  const Problem back = problem_from_json(text);
  CHECK(to_json(back) == text);
  CHECK(back.dilation == p.dilation);
  CHECK(back.scale == 0.125);
  CHECK(back.layout == Layout::bhnd);
  CHECK(back.key_mask == KeyMask::additive);
  CHECK_FALSE(back.runtime_batch);
  CHECK(text.find("runtime_batch") == std::string::npos);  // the default is not written
  Problem any = seed_problem();
  any.runtime_batch = true;
  CHECK(problem_from_json(to_json(any)).runtime_batch);
  CHECK(slug(any).rfind("bany_", 0) == 0);
  // A uniform per-head list is written as one int: the same kernel, the same document.
  Problem uniform = seed_problem();
  uniform.dilation.assign(12, 2);
  Problem single = seed_problem();
  single.dilation = {2};
  CHECK(to_json(uniform) == to_json(single));
}

TEST_CASE("problem: JSON errors name the field", "[problem]") {
  const std::string base =
      R"("batch": 1, "heads": 2, "seq_len": 64, "head_dim": 64, "window_left": 4, "window_right": 4)";
  auto message_of = [](const std::string& json) -> std::string {
    try {
      problem_from_json(json);
    } catch (const Error& e) {
      CHECK(e.kind() == ErrorKind::invalid_problem);
      return e.what();
    }
    FAIL("accepted " << json);
    return {};
  };
  CHECK(message_of("{" + base + R"(, "dtype": "float64"})").find("\"float32\", \"float16\", \"bfloat16\"") !=
        std::string::npos);
  CHECK(message_of("{" + base + R"(, "dtype": "float16", "layout": "nbhd"})").find("layout") != std::string::npos);
  CHECK(message_of("{" + base + R"(, "dtype": "float16", "windw": 3})").find("windw") != std::string::npos);
  CHECK(message_of("{" + base + "}").find("dtype") != std::string::npos);
  CHECK(message_of(R"({"batch": 1, "dtype": "float16"})").find("heads") != std::string::npos);
  CHECK(message_of("{" + base + R"(, "dtype": "float16", "dilation": 1.5})").find("dilation") != std::string::npos);
  CHECK(message_of("{" + base + R"(, "dtype": "float16", "batch": "1"})").find("batch") != std::string::npos);
  CHECK(message_of("{" + base + R"(, "dtype": "float16", "runtime_batch": 1})").find("runtime_batch = 1 is not valid") !=
        std::string::npos);
  CHECK(message_of("not json").find("not valid JSON") != std::string::npos);
}

TEST_CASE("problem: slug names every field that tells problems apart", "[problem]") {
  Problem p = seed_problem();
  CHECK(slug(p) == "b1_h12_n4096_d64_wl256_wr256_dil1_f16_bnhd");
  p.dilation = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2};
  p.layout = Layout::bhnd;
  p.dtype = DType::bfloat16;
  p.key_mask = KeyMask::boolean;
  CHECK(slug(p) == "b1_h12_n4096_d64_wl256_wr256_dil1-1-1-1-1-1-1-1-1-1-2-2_bf16_bhnd_maskbool");
}
