#include "runtime/nvrtc_api.hpp"

#include <fmt/format.h>

#include "bandjit/errors.hpp"
#include "runtime/config.hpp"
#include "runtime/dynamic_library.hpp"

namespace bandjit {
namespace {

// The oldest NVRTC that compiles every kernel: the cluster rows' mailbox (st.async) and the
// backward's vector reductions need PTX ISA 8.1, which NVRTC 12.0 refuses in ptxas.
constexpr int kOldestMajor = 12, kOldestMinor = 1;

bool recent_enough(int major, int minor) {
  return major > kOldestMajor || (major == kOldestMajor && minor >= kOldestMinor);
}

NvrtcApi load() {
  const std::string soname = fmt::format("libnvrtc.so.{}", BANDJIT_NVRTC_MAJOR);
  std::vector<std::string> candidates;
  if (auto path = config::nvrtc_library(); !path.empty()) {
    candidates = {path};
  } else {
    candidates = {soname, config::nvrtc_default_dir() + "/" + soname};
  }
  // The first candidate recent enough to compile the kernels; an older one is closed again
  // and named in the error if nothing newer opens (an entry keyed by its version could only
  // have been compiled by it, so it would serve no lookup either).
  DynamicLibrary lib;
  std::string tried;
  int major = 0, minor = 0;  // the chosen library's version
  for (const auto& candidate : candidates) {
    auto opened = DynamicLibrary::open_first({candidate});
    if (!opened.is_open()) {
      tried += opened.error();
      continue;
    }
    major = minor = 0;
    auto version = reinterpret_cast<decltype(&::nvrtcVersion)>(opened.symbol("nvrtcVersion"));
    if (version && version(&major, &minor) == NVRTC_SUCCESS && !recent_enough(major, minor)) {
      tried += fmt::format("  {}: NVRTC {}.{}, older than {}.{}\n", candidate, major, minor, kOldestMajor, kOldestMinor);
      opened.close();
      continue;
    }
    lib = opened;
    break;
  }
  if (!lib.is_open())
    throw Error(ErrorKind::compile_failed,
                fmt::format("cannot load NVRTC {}.{} or later; set BANDJIT_NVRTC_LIBRARY to libnvrtc.so", kOldestMajor,
                            kOldestMinor),
                {{"tried", tried}});
  NvrtcApi api;
  api.library_path = lib.path();
  auto bind = [&](auto& fn, const char* name) {
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(lib.symbol(name));
    if (!fn)
      throw Error(ErrorKind::compile_failed, fmt::format("NVRTC library lacks {}", name), {{"library", lib.path()}});
  };
  bind(api.Version, "nvrtcVersion");
  bind(api.CreateProgram, "nvrtcCreateProgram");
  bind(api.DestroyProgram, "nvrtcDestroyProgram");
  bind(api.CompileProgram, "nvrtcCompileProgram");
  bind(api.GetProgramLogSize, "nvrtcGetProgramLogSize");
  bind(api.GetProgramLog, "nvrtcGetProgramLog");
  bind(api.GetCUBINSize, "nvrtcGetCUBINSize");
  bind(api.GetCUBIN, "nvrtcGetCUBIN");
  bind(api.GetErrorString, "nvrtcGetErrorString");
  decltype(&::nvrtcGetNumSupportedArchs) num_archs = nullptr;
  decltype(&::nvrtcGetSupportedArchs) archs = nullptr;
  bind(num_archs, "nvrtcGetNumSupportedArchs");
  bind(archs, "nvrtcGetSupportedArchs");
  int count = 0;
  if (num_archs(&count) == NVRTC_SUCCESS && count > 0) {
    api.supported_archs.resize(static_cast<std::size_t>(count));
    archs(api.supported_archs.data());
  }
  api.version = fmt::format("{}.{}", major, minor);
  return api;
}

}  // namespace

const NvrtcApi& nvrtc() {
  static const NvrtcApi api = load();  // a throw leaves it unset; the next call retries
  return api;
}

}  // namespace bandjit
