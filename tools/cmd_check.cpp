// bandjit check --shapes FILE... [--ops OPS]: run every kernel (and the composed backward)
// on random inputs and compare with the float64 reference (SPEC §7). Needs a GPU; exit 1 on
// any mismatch.
#include <iostream>

#include <fmt/format.h>

#include "bandjit/errors.hpp"
#include "check/set_checks.hpp"
#include "runtime/driver_api.hpp"
#include "tools/cli_common.hpp"

namespace bandjit::cli {
namespace {

struct CheckArgs {
  std::vector<std::string> shapes;
  std::vector<std::string> ops;
  std::string cache_dir;
  std::string json;
  std::uint64_t seed = 0;
  int timing_runs = 10;
};

int run_check(const CheckArgs& args) {
  check_output_file(args.json);
  std::vector<std::string> files;
  for (const auto& path : args.shapes) files.push_back(load_shape_file(path).name);
  const auto entries = entries_from_shape_files(args.shapes, args.ops);
  require_gpu("check");  // after the input is checked: a machine without a GPU still reports bad shapes
  CheckOptions options;
  options.seed = args.seed;
  options.timing_runs = args.timing_runs;
  options.kernel_options.cache_dir = args.cache_dir;

  std::cout << fmt::format("{:<52} {:<22} {:>10} {:>8} {:>7} {:>10} {:>8}  {}\n", "problem", "family", "rel_err",
                           "tol", "rows", "time_us", "origin", "result");
  int failures = 0;
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& [entry, file] : entries) {
    std::uint64_t seed = 0;
    std::vector<OpCheck> results;
    const std::string name = entry_slug(entry);
    try {
      results = check_entry(entry, options, &seed);
    } catch (const Error& e) {
      ++failures;
      std::cout << fmt::format("{:<52} FAILED: {}\n", name, e.what());
      rows.push_back({{"problem", name}, {"error", e.what()}, {"passed", false}});
      continue;
    }
    for (const auto& c : results) {
      failures += !c.passed;
      std::string why;
      if (c.nan_count) why += fmt::format(" nan={}", c.nan_count);
      if (c.inf_count != c.inf_expected) why += fmt::format(" inf={} (expected {})", c.inf_count, c.inf_expected);
      if (c.structure_mismatches) why += fmt::format(" structure={}", c.structure_mismatches);
      if (c.rows_checked == 0) why += " no rows checked";
      std::cout << fmt::format("{:<52} {:<22} {:>10.2e} {:>8.0e} {:>7} {:>10.1f} {:>8}  {}{}\n", name,
                               c.family, c.rel_error, c.tolerance, c.rows_checked, c.median_us,
                               origin_name(c.origin), c.passed ? "PASS" : "FAIL", why);
      rows.push_back({{"problem", name},
                      {"parameter_set", entry.parameter_set},
                      {"problem_json", nlohmann::json::parse(entry.parameters)},
                      {"family", c.family},
                      {"rel_error", c.rel_error},
                      {"tolerance", c.tolerance},
                      {"rows_checked", c.rows_checked},
                      {"structure_mismatches", c.structure_mismatches},
                      {"nan_count", c.nan_count},
                      {"inf_count", c.inf_count},
                      {"inf_expected", c.inf_expected},
                      {"median_us", c.median_us},
                      {"origin", origin_name(c.origin)},
                      {"get_kernel_ms", c.get_kernel_ms},
                      {"note", c.note},
                      {"seed", seed},
                      {"passed", c.passed}});
    }
  }
  std::cout << fmt::format("check: {} kernels, {} failed\n", rows.size(), failures);
  if (!args.json.empty())
    write_json(args.json, {{"command", "check"},
                           {"shape_files", files},
                           {"environment", run_environment()},
                           {"failed", failures},
                           {"kernels", rows}});
  return failures ? kFailed : kOk;
}

}  // namespace

void add_check(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<CheckArgs>();
  auto* cmd = app.add_subcommand("check", "Run the kernels of shape files on the GPU against the float64 reference");
  cmd->add_option("--shapes", args->shapes, "Shape files (SPEC §6)")->required()->check(CLI::ExistingFile);
  cmd->add_option("--ops", args->ops, kOpsHelp);
  cmd->add_option("--cache-dir", args->cache_dir, "Cache directory");
  cmd->add_option("--json", args->json, "Also write the results as JSON to this file");
  cmd->add_option("--seed", args->seed, "Random seed (default: fresh each run)");
  cmd->add_option("--timing-runs", args->timing_runs, "Timed launches per kernel (median reported)")
      ->check(CLI::Range(1, 10000));
  cmd->callback([args, &exit_code] { exit_code = run_check(*args); });
}

}  // namespace bandjit::cli
