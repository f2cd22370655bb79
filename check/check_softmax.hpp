// `bandjit check` for the "scale_mask_softmax" and "softmax" sets (check/check_softmax.cpp).
#pragma once

#include "check/set_checks.hpp"

namespace bandjit {

std::vector<OpCheck> check_scale_mask_softmax_set(const std::vector<std::string>& ops, const nlohmann::json& params,
                                                  const CheckOptions& options, std::uint64_t* seed_used);
std::vector<OpCheck> check_softmax_set(const std::vector<std::string>& ops, const nlohmann::json& params,
                                       const CheckOptions& options, std::uint64_t* seed_used);

}  // namespace bandjit
