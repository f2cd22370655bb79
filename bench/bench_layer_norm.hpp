// `bandjit bench` for the layer_norm parameter set: each family's CUDA-event median over
// rotating buffer sets (working set ≥ BenchOptions::min_working_set) and its must-move bytes.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/band_bench.hpp"

namespace bandjit {

/// Must-move bytes (docs/layer_norm.md): forward reads x (+ weight, bias) and writes y,
/// mean, rstd; backward reads dy, x, mean, rstd (+ weight) and writes dx (+ dweight, dbias).
double layer_norm_bytes(const std::string& family, const nlohmann::json& canonical);

std::vector<BenchRow> bench_layer_norm(const std::vector<std::string>& ops, const nlohmann::json& params,
                                       const BenchOptions& options);

}  // namespace bandjit
