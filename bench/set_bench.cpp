#include "bench/set_bench.hpp"

#include <utility>

#include <fmt/format.h>

#include "bandjit/errors.hpp"
#include "bench/bench_layer_norm.hpp"
#include "bench/bench_softmax.hpp"

namespace bandjit {
namespace {

// One line per parameter set; each set's bench lives in its own file.
const std::vector<std::pair<std::string, SetBench>>& set_benches() {
  static const std::vector<std::pair<std::string, SetBench>> benches = {
      {"scale_mask_softmax", &bench_scale_mask_softmax_set},
      {"softmax", &bench_softmax_set},
      {"layer_norm", &bench_layer_norm},
  };
  return benches;
}

}  // namespace

std::vector<BenchRow> bench_entry(const ShapeEntry& entry, const BenchOptions& options) {
  if (entry.parameter_set == "band") return bench_problem(entry.problem, options);
  for (const auto& [name, fn] : set_benches())
    if (name == entry.parameter_set) return fn(entry.ops, nlohmann::json::parse(entry.parameters), options);
  throw Error(ErrorKind::usage, fmt::format("bench has no timing for the \"{}\" families", entry.parameter_set));
}

}  // namespace bandjit
