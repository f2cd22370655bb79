#include "runtime/nvrtc_api.hpp"

#include <fmt/format.h>

#include "bandjit/errors.hpp"
#include "runtime/config.hpp"
#include "runtime/dynamic_library.hpp"

namespace bandjit {
namespace {

NvrtcApi load() {
  const std::string soname = fmt::format("libnvrtc.so.{}", BANDJIT_NVRTC_MAJOR);
  std::vector<std::string> candidates;
  if (auto path = config::nvrtc_library(); !path.empty()) {
    candidates = {path};
  } else {
    candidates = {soname, config::nvrtc_default_dir() + "/" + soname};
  }
  auto lib = DynamicLibrary::open_first(candidates);
  if (!lib.is_open())
    throw Error(ErrorKind::compile_failed, "cannot load NVRTC; set BANDJIT_NVRTC_LIBRARY to libnvrtc.so",
                {{"tried", lib.error()}});
  NvrtcApi api;
  api.library_path = lib.path();
  auto bind = [&](auto& fn, const char* name) {
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(lib.symbol(name));
    if (!fn)
      throw Error(ErrorKind::compile_failed, fmt::format("NVRTC library lacks {}", name), {{"library", lib.path()}});
  };
  bind(api.Version, "nvrtcVersion");
  // The cluster rows' mailbox (st.async) and the backward's vector reductions need PTX ISA
  // 8.1, which NVRTC 12.0 does not accept: refuse it here rather than fail kernel by kernel.
  int major = 0, minor = 0;
  api.Version(&major, &minor);
  api.version = fmt::format("{}.{}", major, minor);
  if (major < 12 || (major == 12 && minor < 1))
    throw Error(ErrorKind::compile_failed,
                fmt::format("NVRTC {} is too old: bandjit's kernels need NVRTC 12.1 or later (PTX ISA 8.1)", api.version),
                {{"library", lib.path()}, {"version", api.version}, {"allowed", "12.1 or later"}});
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
  return api;
}

}  // namespace

const NvrtcApi& nvrtc() {
  static const NvrtcApi api = load();  // a throw leaves it unset; the next call retries
  return api;
}

}  // namespace bandjit
