// `bandjit check` for the layer_norm parameter set (layer_norm, layer_norm_backward):
// random inputs with a per-row offset (so the two-pass variance matters), NaN-poisoned
// outputs, and every output compared with reference/layer_norm_reference (float64).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "check/check_problem.hpp"

namespace bandjit {

/// One OpCheck per family in `ops`. rel_error and tolerance are those of the output worst
/// off against its own tolerance; `note` lists every output's. float32 outputs (mean,
/// rstd, dweight, dbias, and y/dx for dtype float32) have tolerance 1e-5, y/dx in float16 or
/// bfloat16 1e-2. dweight and dbias start from random values (the kernel adds to them) and
/// are compared whole as out − start; y and dx on every row up to 2^20 elements, else on
/// sampled rows (first, last, random). Needs a GPU.
std::vector<OpCheck> check_layer_norm(const std::vector<std::string>& ops, const nlohmann::json& params,
                                      const CheckOptions& options, std::uint64_t* seed_used);

}  // namespace bandjit
