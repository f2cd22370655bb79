// bandjit warmup [--bundle B] [--shapes FILE...]: load kernels into this process (needs a
// GPU) — a bundle's all at once, then each kernel of the shape files — and report where
// each came from and how long it took: a deployment's start-up cost.
#include <chrono>
#include <iostream>

#include <fmt/format.h>

#include "bandjit/bundle.hpp"
#include "bandjit/errors.hpp"
#include "runtime/driver_api.hpp"
#include "runtime/nvrtc_api.hpp"
#include "tools/cli_common.hpp"

namespace bandjit::cli {
namespace {

struct WarmupArgs {
  std::string bundle;
  std::vector<std::string> shapes;
  std::vector<std::string> ops;
  std::string cache_dir;
  std::string json;
};

int run_warmup(const WarmupArgs& args) {
  require_gpu("warmup");
  check_output_file(args.json);
  check_configuration();
  const auto jobs = jobs_from_shape_files(args.shapes, args.ops);
  Options options;
  options.cache_dir = args.cache_dir;
  // Start-up (dlopen of libcuda and NVRTC, cuInit, context) is paid once per process;
  // report it apart from the per-kernel cost.
  const auto t0 = std::chrono::steady_clock::now();
  ensure_context();
  nvrtc();
  const double startup_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  reset_stats();
  nlohmann::json bundle_doc;
  if (!args.bundle.empty()) {
    const BundleReport b = load_bundle(args.bundle);
    std::cout << fmt::format("bundle: {} kernels for {} with NVRTC {} from {} loaded in {:.1f} ms\n", b.kernels, b.arch,
                             b.nvrtc, b.path, b.seconds * 1000);
    bundle_doc = {{"path", b.path}, {"sha256", b.sha256}, {"kernels", b.kernels}, {"bytes", b.bytes},
                  {"arch", b.arch}, {"nvrtc", b.nvrtc}, {"ms", b.seconds * 1000}};
  }
  int failed = 0, compiled = 0;
  nlohmann::json rows = nlohmann::json::array();
  double total_ms = 0;
  for (std::size_t idx = 0; idx < jobs.size(); ++idx) {
    const Job& job = jobs[idx];
    try {
      const Kernel k = get_kernel(job.family, job.parameters, options);
      const double ms = k.info().seconds * 1000;
      total_ms += ms;
      compiled += k.info().origin == Origin::compiled;
      std::cout << fmt::format("[{:>4}/{}] {:<8} {:<21} {}  {:.2f} ms\n", idx + 1, jobs.size(),
                               origin_name(k.info().origin), job.family, job.slug, ms);
      rows.push_back({{"family", job.family}, {"problem", job.slug}, {"origin", origin_name(k.info().origin)},
                      {"ms", ms}, {"registers", k.info().registers}});
    } catch (const Error& e) {
      ++failed;
      std::cout << fmt::format("[{:>4}/{}] FAILED   {:<21} {}\n{}\n", idx + 1, jobs.size(), job.family,
                               job.slug, e.what());
    }
  }
  std::cout << fmt::format(
      "warmup: {} kernels in {:.1f} ms ({:.2f} ms per kernel; {} compiled, {} failed); process start-up (driver, NVRTC) {:.1f} ms\n",
      jobs.size(), total_ms, jobs.empty() ? 0.0 : total_ms / jobs.size(), compiled, failed, startup_ms);
  if (!args.json.empty())
    write_json(args.json, {{"command", "warmup"},
                           {"environment", run_environment()},
                           {"process_startup_ms", startup_ms},
                           {"total_ms", total_ms},
                           {"ms_per_kernel", jobs.empty() ? 0.0 : total_ms / jobs.size()},
                           {"compiled", compiled},
                           {"nvrtc_compiles", stats().compiles},
                           {"failed", failed},
                           {"bundle", bundle_doc},
                           {"kernels", rows}});
  return failed ? kFailed : kOk;
}

}  // namespace

void add_warmup(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<WarmupArgs>();
  auto* cmd = app.add_subcommand("warmup", "Load the kernels of shape files into this process (needs a GPU)");
  cmd->add_option("--bundle", args->bundle, "Load this bundle (from `cache export`) first, without compiling")
      ->check(CLI::ExistingFile);
  cmd->add_option("--shapes", args->shapes, "Shape files (SPEC §6)")->check(CLI::ExistingFile);
  cmd->add_option("--ops", args->ops, kOpsHelp);
  cmd->add_option("--cache-dir", args->cache_dir, "Cache directory");
  cmd->add_option("--json", args->json, "Also write the results as JSON to this file");
  cmd->callback([args, &exit_code] {
    if (args->shapes.empty() && args->bundle.empty())
      throw Error(ErrorKind::usage, "warmup needs --shapes FILE or --bundle FILE");
    exit_code = run_warmup(*args);
  });
}

}  // namespace bandjit::cli
