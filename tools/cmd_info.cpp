// bandjit info [--arch]: versions, cache directory and the GPU; `--arch` prints only the
// current GPU's target (exit 5 without a GPU), for scripts.
#include <iostream>

#include <fmt/format.h>

#include "bandjit/cache.hpp"
#include "bandjit/errors.hpp"
#include "runtime/config.hpp"
#include "runtime/driver_api.hpp"
#include "runtime/nvrtc_api.hpp"
#include "tools/cli_common.hpp"

namespace bandjit::cli {

void add_info(CLI::App& app, int& exit_code) {
  auto arch_only = std::make_shared<bool>(false);
  auto* cmd = app.add_subcommand("info", "Versions, cache directory, CUDA include directory and the GPU");
  cmd->add_flag("--arch", *arch_only, "Print only the current GPU's target (exit 5 without a GPU)");
  cmd->callback([arch_only, &exit_code] {
    const bool gpu = gpu_available();
    std::string arch;
    if (gpu) {
      ensure_context();
      arch = current_arch();
    }
    if (*arch_only) {
      if (!gpu) throw Error(ErrorKind::driver_failed, "no GPU: no CUDA driver or device found");
      std::cout << arch << "\n";
      exit_code = kOk;
      return;
    }
    const auto env = run_environment();
    std::string nvrtc_line;
    try {
      nvrtc_line = fmt::format("{} ({})", nvrtc().version, nvrtc().library_path);
    } catch (const Error& e) {
      nvrtc_line = "not found: " + e.message();
    }
    std::cout << fmt::format("bandjit        {}\nnvrtc          {}\ncuda include   {}\ncache          {} (cap {} bytes)\n",
                             BANDJIT_VERSION, nvrtc_line, config::cuda_include_dir(), cache_directory(),
                             cache_max_bytes());
    std::cout << fmt::format("gpu            {}\n", gpu ? fmt::format("{} ({})", env["gpu"].get<std::string>(), arch)
                                                      : std::string("none"));
    exit_code = kOk;
  });
}

}  // namespace bandjit::cli
