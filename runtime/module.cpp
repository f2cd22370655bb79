#include "runtime/module.hpp"

#include "bandjit/errors.hpp"

namespace bandjit {

void LoadedModule::launch(CUstream stream, void** params, std::uint32_t grid_z) const {
  check_cuda(driver().cuLaunchKernel(function_, shape_.grid[0], shape_.grid[1], grid_z ? grid_z : shape_.grid[2], shape_.block[0],
                                     shape_.block[1], shape_.block[2], shape_.shared_bytes, stream, params, nullptr),
             "cuLaunchKernel");
}

std::shared_ptr<const LoadedModule> load_module(const std::string& cubin, const std::string& kernel_name,
                                                const LaunchShape& shape) {
  const auto& cu = driver();
  CUcontext ctx = ensure_context();
  CUmodule module = nullptr;
  check_cuda(cu.cuModuleLoadData(&module, cubin.data()), "cuModuleLoadData");
  CUfunction function = nullptr;
  try {
    check_cuda(cu.cuModuleGetFunction(&function, module, kernel_name.c_str()), "cuModuleGetFunction");
    // Always: the 48 KiB default limit counts static shared memory too, so a kernel with
    // exactly 48 KiB of dynamic memory and a static array would not launch.
    if (shape.shared_bytes > 0)
      check_cuda(cu.cuFuncSetAttribute(function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                       static_cast<int>(shape.shared_bytes)),
                 "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)");
  } catch (...) {
    cu.cuModuleUnload(module);
    throw;
  }
  return std::make_shared<LoadedModule>(ctx, module, function, shape);
}

}  // namespace bandjit
