// `bandjit bench` for every parameter set: the band families through bench_problem, the
// others through the function their set registers here.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/band_bench.hpp"

namespace bandjit {

using SetBench = std::vector<BenchRow> (*)(const std::vector<std::string>& ops, const nlohmann::json& params,
                                           const BenchOptions& options);

/// Times one shape-file entry's ops (the band: its forward, backward and each family, as
/// bench_problem does). Error(usage) for a set without a bench.
std::vector<BenchRow> bench_entry(const ShapeEntry& entry, const BenchOptions& options);

}  // namespace bandjit
