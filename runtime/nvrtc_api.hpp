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
};

/// Loads NVRTC once: $BANDJIT_NVRTC_LIBRARY, else libnvrtc.so.<major>, else the build-time
/// toolkit directory, the first of version 12.1 or later (the kernels need PTX ISA 8.1).
/// Throws Error(compile_failed) listing what was tried, older versions by number.
const NvrtcApi& nvrtc();

}  // namespace bandjit
