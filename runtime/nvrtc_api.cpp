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
  // The first candidate recent enough to compile, else the first that opens (its version
  // still keys the cache and names bundles; compile() refuses it).
  DynamicLibrary lib;
  std::string tried;
  for (const auto& candidate : candidates) {
    auto opened = DynamicLibrary::open_first({candidate});
    if (!opened.is_open()) {
      tried += opened.error();
      continue;
    }
    int major = 0, minor = 0;
    auto version = reinterpret_cast<decltype(&::nvrtcVersion)>(opened.symbol("nvrtcVersion"));
    const bool usable = version && version(&major, &minor) == NVRTC_SUCCESS && recent_enough(major, minor);
    if (!lib.is_open() || usable) lib = opened;
    if (usable) break;
    tried += fmt::format("  {}: NVRTC {}.{}, older than {}.{}\n", candidate, major, minor, kOldestMajor, kOldestMinor);
  }
  if (!lib.is_open())
    throw Error(ErrorKind::compile_failed, "cannot load NVRTC; set BANDJIT_NVRTC_LIBRARY to libnvrtc.so",
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
  int major = 0, minor = 0;
  api.Version(&major, &minor);
  api.version = fmt::format("{}.{}", major, minor);
  api.compiles_kernels = recent_enough(major, minor);
  return api;
}

}  // namespace

void require_compiler(const NvrtcApi& api) {
  if (!api.compiles_kernels)
    throw Error(ErrorKind::compile_failed,
                fmt::format("NVRTC {} is too old to compile bandjit's kernels: they need {}.{} or later (PTX ISA 8.1); "
                            "set BANDJIT_NVRTC_LIBRARY to a newer libnvrtc.so",
                            api.version, kOldestMajor, kOldestMinor),
                {{"library", api.library_path},
                 {"version", api.version},
                 {"allowed", fmt::format("{}.{} or later", kOldestMajor, kOldestMinor)}});
}

const NvrtcApi& nvrtc() {
  static const NvrtcApi api = load();  // a throw leaves it unset; the next call retries
  return api;
}

}  // namespace bandjit
