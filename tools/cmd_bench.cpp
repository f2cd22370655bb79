// bandjit bench --shapes FILE...: median CUDA-event time per family, must-move bytes and
// FLOPs, achieved GB/s and TFLOP/s, and the fraction of the copy bandwidth measured in
// the same run. Table on stdout, JSON with --json.
#include <iostream>

#include <fmt/format.h>

#include "bandjit/errors.hpp"
#include "bench/set_bench.hpp"
#include "runtime/driver_api.hpp"
#include "tools/cli_common.hpp"

namespace bandjit::cli {
namespace {

struct BenchArgs {
  std::vector<std::string> shapes;
  std::vector<std::string> problems;  // inline JSON problems
  std::string cache_dir;
  std::string json;
  int runs = 50;
  double matrix_tflops = 740;  // bf16 dense rate of the H200 (ANCHORS.md), for the compute floor
};

int run_bench(const BenchArgs& args) {
  check_output_file(args.json);
  std::vector<ShapeEntry> entries;
  for (const auto& path : args.shapes)
    for (auto& e : load_shape_file(path).entries) entries.push_back(std::move(e));
  for (const auto& text : args.problems) {
    ShapeEntry e;
    e.problem = problem_from_json(text);
    e.parameters = to_json(e.problem);
    entries.push_back(std::move(e));
  }
  require_gpu("bench");  // after the input is checked: a machine without a GPU still reports bad shapes
  ensure_context();
  const double copy_gbps = copy_bandwidth_gbps(std::size_t(1) << 30, 20);
  std::cout << fmt::format("device-to-device copy: {:.0f} GB/s (read + written)\n", copy_gbps);
  std::cout << fmt::format("{:<50} {:<22} {:>10} {:>9} {:>7} {:>8} {:>9}\n", "problem", "family", "median_us",
                           "GB/s", "%copy", "TFLOP/s", "floor_us");
  BenchOptions options;
  options.runs = args.runs;
  options.kernel_options.cache_dir = args.cache_dir;
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& entry : entries) {
    const std::string name = entry_slug(entry);
    for (const auto& r : bench_entry(entry, options)) {
      const double gbps = r.bytes / (r.median_us * 1e3);
      const double floor_us = std::max(r.bytes / (copy_gbps * 1e3), r.flops / (args.matrix_tflops * 1e6));
      std::cout << fmt::format("{:<50} {:<22} {:>10.1f} {:>9.0f} {:>6.1f}% {:>8.1f} {:>9.1f}\n", name, r.family,
                               r.median_us, gbps, 100 * gbps / copy_gbps, r.flops / (r.median_us * 1e6), floor_us);
      rows.push_back({{"problem", name},
                      {"parameter_set", entry.parameter_set},
                      {"problem_json", nlohmann::json::parse(entry.parameters)},
                      {"family", r.family},
                      {"median_us", r.median_us},
                      {"min_us", r.min_us},
                      {"bytes", r.bytes},
                      {"flops", r.flops},
                      {"gbps", gbps},
                      {"fraction_of_copy", gbps / copy_gbps},
                      {"tflops", r.flops / (r.median_us * 1e6)},
                      {"floor_us", floor_us},
                      {"buffer_sets", r.buffer_sets}});
    }
  }
  if (!args.json.empty())
    write_json(args.json, {{"command", "bench"},
                           {"environment", run_environment()},
                           {"copy_gbps", copy_gbps},
                           {"matrix_tflops_assumed", args.matrix_tflops},
                           {"runs", args.runs},
                           {"rows", rows}});
  return kOk;
}

}  // namespace

void add_bench(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<BenchArgs>();
  auto* cmd = app.add_subcommand("bench", "Time each family on the GPU against the roofline (needs a GPU)");
  cmd->add_option("--shapes", args->shapes, "Shape files (SPEC §6)")->check(CLI::ExistingFile);
  cmd->add_option("--problem", args->problems, "A problem as JSON (repeatable)");
  cmd->add_option("--cache-dir", args->cache_dir, "Cache directory");
  cmd->add_option("--json", args->json, "Also write the results as JSON to this file");
  cmd->add_option("--runs", args->runs, "Timed launches per kernel (median reported)")->check(CLI::Range(1, 100000));
  cmd->callback([args, &exit_code] {
    if (args->shapes.empty() && args->problems.empty())
      throw Error(ErrorKind::usage, "bench needs --shapes FILE or --problem JSON");
    exit_code = run_bench(*args);
  });
}

}  // namespace bandjit::cli
