#include <string>

#include <nlohmann/json.hpp>

#include "bandjit/bandjit.h"
#include "support/catch.hpp"
#include "support/temp_dir.hpp"

namespace {
const char* kProblem =
    R"({"batch":1,"heads":2,"seq_len":96,"head_dim":32,"window_left":7,"window_right":3,"dtype":"float16"})";

std::string summary(const std::string& dir) {
  std::size_t needed = 0;
  REQUIRE(bandjit_cache_summary_json(dir.c_str(), nullptr, 0, &needed) == BANDJIT_ERROR_USAGE);
  std::string text(needed, '\0');
  REQUIRE(bandjit_cache_summary_json(dir.c_str(), text.data(), text.size(), &needed) == BANDJIT_OK);
  text.resize(needed - 1);
  return text;
}
}  // namespace

TEST_CASE("capi: validation errors carry the field, the status and the message", "[capi]") {
  CHECK(bandjit_validate_problem(kProblem) == BANDJIT_OK);
  CHECK(std::string(bandjit_last_error()).empty());
  CHECK(bandjit_validate_problem(R"({"batch":0,"heads":2,"seq_len":96,"head_dim":32,"window_left":7,)"
                                 R"("window_right":3,"dtype":"float16"})") == BANDJIT_ERROR_INVALID_PROBLEM);
  CHECK(std::string(bandjit_last_error()).find("batch") != std::string::npos);
  CHECK(bandjit_validate_problem("not json") == BANDJIT_ERROR_INVALID_PROBLEM);
  CHECK(bandjit_validate_problem(nullptr) == BANDJIT_ERROR_USAGE);
  CHECK(std::string(bandjit_last_error()).find("problem_json") != std::string::npos);
  CHECK(std::string(bandjit_version()) == "0.1.0");
}

TEST_CASE("capi: pregenerate compiles into the cache once, then finds it", "[capi]") {
  bandjit::test::TempDir dir;
  int compiled = -1;
  REQUIRE(bandjit_pregenerate("band_qk", kProblem, "sm_90", dir.path().c_str(), &compiled) == BANDJIT_OK);
  CHECK(compiled == 1);
  REQUIRE(bandjit_pregenerate("band_qk", kProblem, "sm_90", dir.path().c_str(), &compiled) == BANDJIT_OK);
  CHECK(compiled == 0);
  const auto doc = nlohmann::json::parse(summary(dir.path()));
  CHECK(doc["entries"] == 1);
  CHECK(doc["invalid"] == 0);
  CHECK(bandjit_pregenerate("band_nope", kProblem, "sm_90", dir.path().c_str(), nullptr) ==
        BANDJIT_ERROR_INVALID_PROBLEM);
  CHECK(std::string(bandjit_last_error()).find("band_qk") != std::string::npos);  // lists the known families
  CHECK(bandjit_pregenerate("band_qk", kProblem, "sm_75", dir.path().c_str(), nullptr) ==
        BANDJIT_ERROR_INVALID_PROBLEM);
  CHECK(std::string(bandjit_last_error()).find("sm_75") != std::string::npos);
}

TEST_CASE("capi: null handles and pointers are usage errors, never crashes", "[capi]") {
  CHECK(bandjit_get_kernel("band_qk", kProblem, nullptr, nullptr) == BANDJIT_ERROR_USAGE);
  CHECK(bandjit_kernel_launch(nullptr, nullptr, nullptr, 0, 0) == BANDJIT_ERROR_USAGE);
  CHECK(bandjit_kernel_info_json(nullptr, nullptr, 0, nullptr) == BANDJIT_ERROR_USAGE);
  bandjit_kernel_free(nullptr);
  bandjit_kernel* k = reinterpret_cast<bandjit_kernel*>(0x1);
  CHECK(bandjit_get_kernel(nullptr, kProblem, nullptr, &k) == BANDJIT_ERROR_USAGE);
}

TEST_CASE("capi: any family's parameters are validated by name, and the families described", "[capi]") {
  CHECK(bandjit_validate_parameters("band_pv", kProblem) == BANDJIT_OK);
  CHECK(bandjit_validate_parameters("band_pv", R"({"batch":1})") == BANDJIT_ERROR_INVALID_PROBLEM);
  CHECK(std::string(bandjit_last_error()).find("heads") != std::string::npos);
  CHECK(bandjit_validate_parameters("band_pv", R"({"scale":1e400})") == BANDJIT_ERROR_INVALID_PROBLEM);
  CHECK(bandjit_validate_parameters("band_pvv", kProblem) == BANDJIT_ERROR_INVALID_PROBLEM);
  CHECK(bandjit_validate_parameters(nullptr, kProblem) == BANDJIT_ERROR_USAGE);
  std::size_t needed = 0;
  REQUIRE(bandjit_families_json(nullptr, 0, &needed) == BANDJIT_ERROR_USAGE);
  std::string text(needed, '\0');
  REQUIRE(bandjit_families_json(text.data(), text.size(), &needed) == BANDJIT_OK);
  text.resize(needed - 1);
  const auto doc = nlohmann::json::parse(text);
  REQUIRE(doc.size() >= 5);
  CHECK(doc[0]["name"] == "band_qk");
  CHECK(doc[0]["arguments"] == nlohmann::json{"q", "k", "s"});
  CHECK(!doc[0]["reference"].get<std::string>().empty());
  for (const auto& p : doc[0]["parameters"]) {
    if (p["name"] == "batch") CHECK(p["default"].is_null());  // required
    if (p["name"] == "layout") CHECK(p["default"] == "bnhd");
  }
}

TEST_CASE("capi: JSON nested deeper than 64 levels is refused, not a crash; a repeated key is named", "[capi]") {
  const auto nested = [](int depth, const std::string& inner) {  // {"batch": [[…inner…]]}: depth levels in all
    return R"({"batch":)" + std::string(depth - 1, '[') + inner + std::string(depth - 1, ']') + "}";
  };
  // 64 levels parse (then fail as a problem: batch is not an integer); 65 do not.
  CHECK(bandjit_validate_problem(nested(64, "1").c_str()) == BANDJIT_ERROR_INVALID_PROBLEM);
  CHECK(std::string(bandjit_last_error()).find("allowed: an integer") != std::string::npos);
  CHECK(bandjit_validate_problem(nested(65, "1").c_str()) == BANDJIT_ERROR_INVALID_PROBLEM);
  CHECK(std::string(bandjit_last_error()).find("nested more than 64 levels") != std::string::npos);
  // Deep enough to overflow the stack of a recursive copy or print (it did before the limit).
  const std::string deep = std::string(300000, '[') + std::string(300000, ']');
  CHECK(bandjit_validate_problem(deep.c_str()) == BANDJIT_ERROR_INVALID_PROBLEM);
  CHECK(bandjit_validate_parameters("layer_norm", deep.c_str()) == BANDJIT_ERROR_INVALID_PROBLEM);
  CHECK(bandjit_validate_problem(nested(300000, "1").c_str()) == BANDJIT_ERROR_INVALID_PROBLEM);
  CHECK(std::string(bandjit_last_error()).find("nested more than 64 levels") != std::string::npos);
  CHECK(bandjit_validate_parameters("layer_norm", R"({"rows": 8, "hidden": 64, "dtype": "float16", "hidden": 65})") ==
        BANDJIT_ERROR_INVALID_PROBLEM);
  CHECK(std::string(bandjit_last_error()).find(R"(the key "hidden" appears twice)") != std::string::npos);
  CHECK(bandjit_validate_parameters("layer_norm", R"({"rows": 8, "hidden": 64, "dtype": "float16"})") == BANDJIT_OK);
}
