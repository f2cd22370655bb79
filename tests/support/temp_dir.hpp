// A fresh directory under $TMPDIR, removed with everything in it at scope exit.
#pragma once

#include <string>

namespace bandjit::test {

class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

/// tests/shapes or shapes/ file path in the source tree.
std::string source_path(const std::string& relative);

/// Writes a small text file.
void write_text(const std::string& path, const std::string& text);

}  // namespace bandjit::test
