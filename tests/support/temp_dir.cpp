#include "support/temp_dir.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <vector>

namespace bandjit::test {

TempDir::TempDir() {
  const char* base = std::getenv("TMPDIR");
  std::string pattern = std::string(base && *base ? base : "/tmp") + "/bandjit-test-XXXXXX";
  std::vector<char> buf(pattern.begin(), pattern.end());
  buf.push_back('\0');
  if (!::mkdtemp(buf.data())) throw std::runtime_error("mkdtemp failed");
  path_ = buf.data();
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

// The build machine's paths, unless the environment names others (a test binary carried to
// the GPU machine runs in another checkout).
std::string source_path(const std::string& relative) {
  const char* dir = std::getenv("BANDJIT_SOURCE_DIR");
  return std::string(dir && *dir ? dir : BANDJIT_SOURCE_DIR) + "/" + relative;
}

void write_text(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
}

}  // namespace bandjit::test
