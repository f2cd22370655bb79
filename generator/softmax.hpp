// The softmax families' registry entries (generator/softmax.cpp; docs/softmax.md).
#pragma once

#include <vector>

#include "generator/family_registry.hpp"

namespace bandjit {

/// Appends scale_mask_softmax, scale_mask_softmax_backward (set "scale_mask_softmax"),
/// softmax and softmax_backward (set "softmax").
void append_softmax_families(std::vector<Family>& all);

}  // namespace bandjit
