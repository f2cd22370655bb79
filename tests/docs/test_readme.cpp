#include <fstream>
#include <sstream>

#include "support/catch.hpp"
#include "support/temp_dir.hpp"

namespace {
std::string slurp(const std::string& relative) {
  std::ifstream in(bandjit::test::source_path(relative));
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}
}  // namespace

TEST_CASE("docs: the README's C++ example is examples/quickstart.cpp, which the tests build and run", "[docs]") {
  const std::string example = slurp("examples/quickstart.cpp");
  REQUIRE(example.size() > 500);
  CHECK(slurp("README.md").find("```cpp\n" + example + "```") != std::string::npos);
}

TEST_CASE("docs: the README holds exactly the two set-up commands, and CI runs the test one", "[docs]") {
  const std::string readme = slurp("README.md");
  CHECK(readme.find("```sh\nscripts/main\n```") != std::string::npos);
  CHECK(readme.find("```sh\nscripts/test\n```") != std::string::npos);
  CHECK(slurp(".ci/run").find("scripts/test") != std::string::npos);
}
