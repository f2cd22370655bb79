// NVRTC, loaded with dlopen at first use.
#pragma once

#include <string>
#include <vector>

#include <nvrtc.h>

namespace bandjit {

struct NvrtcApi {
  decltype(&::nvrtcVersion) Version = nullptr;
  decltype(&::nvrtcCreateProgram) CreateProgram = nullptr;
  decltype(&::nvrtcDestroyProgram) DestroyProgram = nullptr;
  decltype(&::nvrtcCompileProgram) CompileProgram = nullptr;
  decltype(&::nvrtcGetProgramLogSize) GetProgramLogSize = nullptr;
  decltype(&::nvrtcGetProgramLog) GetProgramLog = nullptr;
  decltype(&::nvrtcGetCUBINSize) GetCUBINSize = nullptr;
  decltype(&::nvrtcGetCUBIN) GetCUBIN = nullptr;
  decltype(&::nvrtcGetErrorString) GetErrorString = nullptr;
  std::string library_path;
  std::string version;               ///< "13.0"
  std::vector<int> supported_archs;  ///< e.g. {75, 80, …, 90, …}: what -arch=sm_XY accepts
  bool compiles_kernels = false;     ///< 12.1 or later: PTX ISA 8.1, which the kernels need
};

/// Loads NVRTC once: $BANDJIT_NVRTC_LIBRARY, else libnvrtc.so.<major>, else the build-time
/// toolkit directory; of the last two the first of version 12.1 or later, else the first
/// that opens (an older one still gives its version, for cache keys and bundles). Throws
/// Error(compile_failed) listing what was tried.
const NvrtcApi& nvrtc();

/// Throws Error(compile_failed) naming the library and version unless `api` can compile
/// bandjit's kernels (NVRTC 12.1 or later).
void require_compiler(const NvrtcApi& api);

}  // namespace bandjit
