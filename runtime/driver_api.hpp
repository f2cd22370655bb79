// The CUDA Driver API, loaded with dlopen("libcuda.so.1") at first use.
#pragma once

#include <string>

#include <cuda.h>

namespace bandjit {

// Symbols are looked up under the names cuda.h maps them to (cuMemAlloc → cuMemAlloc_v2).
#define BANDJIT_DRIVER_FUNCTIONS(X)                                                                   \
  X(cuInit) X(cuDriverGetVersion) X(cuGetErrorName) X(cuGetErrorString) X(cuDeviceGet)               \
  X(cuDeviceGetCount) X(cuDeviceGetAttribute) X(cuDeviceGetName) X(cuDevicePrimaryCtxRetain)          \
  X(cuCtxGetCurrent) X(cuCtxSetCurrent) X(cuCtxGetDevice) X(cuCtxSynchronize) X(cuModuleLoadData)   \
  X(cuModuleGetFunction) X(cuModuleUnload) X(cuFuncGetAttribute) X(cuFuncSetAttribute)               \
  X(cuLaunchKernel) X(cuMemAlloc) X(cuMemFree) X(cuMemcpyHtoD) X(cuMemcpyDtoH) X(cuMemcpyDtoD)        \
  X(cuMemsetD8) X(cuMemsetD16) X(cuMemsetD32) X(cuMemGetInfo) X(cuStreamSynchronize)                 \
  X(cuEventCreate) X(cuEventRecord) X(cuEventSynchronize) X(cuEventElapsedTime) X(cuEventDestroy)

struct DriverApi {
#define BANDJIT_DECLARE(name) decltype(&::name) name = nullptr;
  BANDJIT_DRIVER_FUNCTIONS(BANDJIT_DECLARE)
#undef BANDJIT_DECLARE
  std::string library_path;
};

/// Loads libcuda.so.1 and calls cuInit once. Throws Error(driver_failed) when there is no
/// driver or no device.
const DriverApi& driver();

/// True when a driver with at least one device is present (never throws).
bool gpu_available();

/// Throws Error(driver_failed) naming the call and the CUDA error name and string.
void check_cuda(CUresult result, const char* call);

/// Makes a context current (the caller's, else device 0's primary context) and returns it.
CUcontext ensure_context();

/// "sm_90" for the device of the current context.
std::string current_arch();

}  // namespace bandjit
