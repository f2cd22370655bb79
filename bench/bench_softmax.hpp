// `bandjit bench` for the "scale_mask_softmax" and "softmax" sets (bench/bench_softmax.cpp).
#pragma once

#include "bench/set_bench.hpp"

namespace bandjit {

std::vector<BenchRow> bench_scale_mask_softmax_set(const std::vector<std::string>& ops, const nlohmann::json& params,
                                                   const BenchOptions& options);
std::vector<BenchRow> bench_softmax_set(const std::vector<std::string>& ops, const nlohmann::json& params,
                                        const BenchOptions& options);

}  // namespace bandjit
