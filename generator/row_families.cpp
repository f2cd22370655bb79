// The families whose parameters are not a band Problem (Megatron/Apex-style row kernels).
// Each family's file defines its Family entries; this list puts them in the registry.
#include "generator/family_registry.hpp"
#include "generator/layer_norm.hpp"
#include "generator/softmax.hpp"

namespace bandjit {

const std::vector<Family>& row_families() {
  static const std::vector<Family> families = [] {
    std::vector<Family> all;
    append_softmax_families(all);
    append_layer_norm_families(all);
    return all;
  }();
  return families;
}

}  // namespace bandjit
