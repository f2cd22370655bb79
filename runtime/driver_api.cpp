#include "runtime/driver_api.hpp"

#include <fmt/format.h>

#include "bandjit/errors.hpp"
#include "runtime/dynamic_library.hpp"

namespace bandjit {
namespace {

#define BANDJIT_STR(x) #x
#define BANDJIT_XSTR(x) BANDJIT_STR(x)

DriverApi load() {
  auto lib = DynamicLibrary::open_first({"libcuda.so.1"});
  if (!lib.is_open())
    throw Error(ErrorKind::driver_failed, "no CUDA driver: cannot load libcuda.so.1", {{"tried", lib.error()}});
  DriverApi api;
  api.library_path = lib.path();
#define BANDJIT_BIND(name)                                                                          \
  api.name = reinterpret_cast<decltype(api.name)>(lib.symbol(BANDJIT_XSTR(name)));                 \
  if (!api.name)                                                                                    \
    throw Error(ErrorKind::driver_failed, "the CUDA driver lacks " BANDJIT_XSTR(name) "; update it", \
                {{"library", lib.path()}});
  BANDJIT_DRIVER_FUNCTIONS(BANDJIT_BIND)
#undef BANDJIT_BIND
  const CUresult init = api.cuInit(0);
  if (init != CUDA_SUCCESS) {
    const char* name = nullptr;
    api.cuGetErrorName(init, &name);
    throw Error(ErrorKind::driver_failed, "cuInit failed: no usable GPU",
                {{"call", "cuInit"}, {"cuda_error", name ? name : std::to_string(init)}});
  }
  return api;
}

}  // namespace

const DriverApi& driver() {
  static const DriverApi api = load();
  return api;
}

bool gpu_available() {
  try {
    int count = 0;
    return driver().cuDeviceGetCount(&count) == CUDA_SUCCESS && count > 0;
  } catch (const Error&) {
    return false;
  }
}

void check_cuda(CUresult result, const char* call) {
  if (result == CUDA_SUCCESS) return;
  const char* name = nullptr;
  const char* text = nullptr;
  driver().cuGetErrorName(result, &name);
  driver().cuGetErrorString(result, &text);
  throw Error(ErrorKind::driver_failed,
              fmt::format("{} failed: {} ({})", call, name ? name : "?", text ? text : "no description"),
              {{"call", call}, {"cuda_error", name ? name : std::to_string(result)}});
}

CUcontext ensure_context() {
  const auto& cu = driver();
  CUcontext ctx = nullptr;
  check_cuda(cu.cuCtxGetCurrent(&ctx), "cuCtxGetCurrent");
  if (ctx) return ctx;
  CUdevice dev = 0;
  check_cuda(cu.cuDeviceGet(&dev, 0), "cuDeviceGet");
  check_cuda(cu.cuDevicePrimaryCtxRetain(&ctx, dev), "cuDevicePrimaryCtxRetain");
  check_cuda(cu.cuCtxSetCurrent(ctx), "cuCtxSetCurrent");
  return ctx;
}

std::string current_arch() {
  const auto& cu = driver();
  CUdevice dev = 0;
  check_cuda(cu.cuCtxGetDevice(&dev), "cuCtxGetDevice");
  int major = 0, minor = 0;
  check_cuda(cu.cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev), "cuDeviceGetAttribute");
  check_cuda(cu.cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev), "cuDeviceGetAttribute");
  return fmt::format("sm_{}{}", major, minor);
}

}  // namespace bandjit
