// bandjit cache export --shapes FILE... [--arch sm_90] -o BUNDLE | cache import BUNDLE:
// the kernels of a deployment in one file (docs/deployment.md).
#include <iostream>
#include <thread>

#include <fmt/format.h>

#include "bandjit/bundle.hpp"
#include "bandjit/cache.hpp"
#include "tools/cli_common.hpp"

namespace bandjit::cli {
namespace {

std::string mib(std::uint64_t bytes) { return fmt::format("{:.1f} MiB", bytes / double(1ull << 20)); }

nlohmann::json to_json(const BundleReport& r, const char* command) {
  return {{"command", command}, {"environment", run_environment()}, {"path", r.path}, {"arch", r.arch},
          {"nvrtc", r.nvrtc}, {"sha256", r.sha256}, {"kernels", r.kernels}, {"bytes", r.bytes},
          {"compiled", r.compiled}, {"written", r.written}, {"present", r.present}, {"seconds", r.seconds}};
}

}  // namespace

void add_cache_bundle(CLI::App& cache, const std::shared_ptr<std::string>& dir, int& exit_code) {
  struct ExportArgs {
    std::vector<std::string> shapes, ops;
    std::string arch, output, json;
    int jobs = 0;
  };
  auto ex = std::make_shared<ExportArgs>();
  auto* exp = cache.add_subcommand("export", "Write the kernels of shape files into one bundle file (no GPU needed)");
  exp->add_option("--shapes", ex->shapes, "Shape files (SPEC §6)")->required()->check(CLI::ExistingFile);
  exp->add_option("--ops", ex->ops, kOpsHelp);
  exp->add_option("--arch", ex->arch, "Target, e.g. sm_90 (default: the current GPU's)");
  exp->add_option("-o,--output", ex->output, "Bundle file to write")->required();
  exp->add_option("-j,--jobs", ex->jobs, "Parallel compiles of missing kernels (default: CPU count)")
      ->check(CLI::Range(1, 256));
  exp->add_option("--json", ex->json, "Also write the report as JSON to this file");
  exp->callback([dir, ex, &exit_code] {
    check_output_file(ex->json);
    check_configuration();
    std::vector<BundleKernel> kernels;
    for (const auto& job : jobs_from_shape_files(ex->shapes, ex->ops)) {
      BundleKernel k;
      k.family = job.family;
      k.parameters = job.parameters;
      kernels.push_back(std::move(k));
    }
    Options options;
    options.arch = ex->arch;
    options.cache_dir = *dir;
    const unsigned workers = ex->jobs > 0 ? static_cast<unsigned>(ex->jobs) : std::max(1u, std::thread::hardware_concurrency());
    const auto r = export_bundle(ex->output, kernels, options, workers);
    std::cout << fmt::format("export: {} kernels ({} compiled, {} from the caches) for {} with NVRTC {} → {} ({}, "
                             "sha256 {}) in {:.2f} s\n",
                             r.kernels, r.compiled, r.kernels - r.compiled, r.arch, r.nvrtc, r.path, mib(r.bytes),
                             r.sha256, r.seconds);
    if (!ex->json.empty()) write_json(ex->json, to_json(r, "cache export"));
    exit_code = kOk;
  });

  struct ImportArgs {
    std::string bundle, arch, json;
  };
  auto im = std::make_shared<ImportArgs>();
  auto* imp = cache.add_subcommand("import", "Check a bundle and write its kernels into the disk cache");
  imp->add_option("bundle", im->bundle, "Bundle file made by `cache export`")->required()->check(CLI::ExistingFile);
  imp->add_option("--arch", im->arch, "Refuse a bundle for another target (default: the current GPU's, if any)");
  imp->add_option("--json", im->json, "Also write the report as JSON to this file");
  imp->callback([dir, im, &exit_code] {
    check_output_file(im->json);
    const auto r = import_bundle(im->bundle, *dir, im->arch);
    std::cout << fmt::format("import: {} kernels for {} with NVRTC {} from {}: {} written, {} already cached, into {} "
                             "in {:.2f} s\n",
                             r.kernels, r.arch, r.nvrtc, r.path, r.written, r.present, cache_directory(*dir), r.seconds);
    if (!im->json.empty()) write_json(im->json, to_json(r, "cache import"));
    exit_code = kOk;
  });
}

}  // namespace bandjit::cli
