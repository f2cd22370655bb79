// Stage 3: Cubin → a module loaded in one CUDA context, with its entry point resolved.
#pragma once

#include <memory>
#include <string>

#include "generator/source.hpp"
#include "runtime/driver_api.hpp"

namespace bandjit {

class LoadedModule {
 public:
  LoadedModule(CUcontext context, CUmodule module, CUfunction function, LaunchShape shape)
      : context_(context), module_(module), function_(function), shape_(shape) {}
  LoadedModule(const LoadedModule&) = delete;
  LoadedModule& operator=(const LoadedModule&) = delete;

  CUcontext context() const { return context_; }
  CUfunction function() const { return function_; }
  const LaunchShape& shape() const { return shape_; }

  /// cuLaunchKernel with the generated grid, block and shared memory; `params` as the
  /// Driver API takes them (an array of pointers to each argument).
  /// grid_z overrides the stored grid.z (the batch) when > 0.
  void launch(CUstream stream, void** params, std::uint32_t grid_z = 0) const;

 private:
  CUcontext context_;
  CUmodule module_;  // kept loaded for the life of the process
  CUfunction function_;
  LaunchShape shape_;
};

/// cuModuleLoadData + cuModuleGetFunction in the current context; raises the function's
/// dynamic shared-memory limit to what the kernel uses.
std::shared_ptr<const LoadedModule> load_module(const std::string& cubin, const std::string& kernel_name,
                                                const LaunchShape& shape);

}  // namespace bandjit
