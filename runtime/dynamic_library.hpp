// dlopen at first use: CI and build machines have no driver, and a binary linked to
// libcuda does not even start there.
#pragma once

#include <string>
#include <vector>

namespace bandjit {

class DynamicLibrary {
 public:
  /// Opens the first candidate that loads; on failure returns a closed library whose
  /// error() lists every candidate with dlerror's reason.
  static DynamicLibrary open_first(const std::vector<std::string>& candidates);

  bool is_open() const { return handle_ != nullptr; }
  const std::string& path() const { return path_; }
  const std::string& error() const { return error_; }
  /// dlsym; nullptr when missing.
  void* symbol(const char* name) const;
  /// dlclose: for a library opened only to be passed over (an open one is otherwise kept for
  /// the life of the process).
  void close();

 private:
  void* handle_ = nullptr;
  std::string path_;
  std::string error_;
};

}  // namespace bandjit
