#include "runtime/dynamic_library.hpp"

#include <dlfcn.h>

namespace bandjit {

DynamicLibrary DynamicLibrary::open_first(const std::vector<std::string>& candidates) {
  DynamicLibrary lib;
  for (const auto& c : candidates) {
    if (c.empty()) continue;
    if (void* h = dlopen(c.c_str(), RTLD_NOW | RTLD_LOCAL)) {
      lib.handle_ = h;  // kept for the life of the process
      lib.path_ = c;
      lib.error_.clear();
      return lib;
    }
    const char* why = dlerror();
    lib.error_ += "  " + c + ": " + (why ? why : "not found") + "\n";
  }
  return lib;
}

void* DynamicLibrary::symbol(const char* name) const { return handle_ ? dlsym(handle_, name) : nullptr; }

void DynamicLibrary::close() {
  if (handle_) dlclose(handle_);
  handle_ = nullptr;
}

}  // namespace bandjit
