#include "generator/softmax_rows.hpp"

#include <fmt/format.h>

namespace bandjit {

void set_softmax_rows_launch(Source& s, const Problem& p, const SoftmaxTiling& t) {
  if (p.key_mask != KeyMask::none) s.arguments.push_back("mask");
  s.launch.grid[0] = static_cast<std::uint32_t>(t.blocks);
  s.launch.grid[2] = static_cast<std::uint32_t>(p.batch);
  s.launch.block[0] = static_cast<std::uint32_t>(t.threads);
  s.key_fields = band_key_fields(p);
  s.key_fields["head_dim"] = p.head_dim;
  s.key_fields["scale"] = p.scale;
  s.key_fields["key_mask"] = std::string(to_string(p.key_mask));
}

std::string softmax_rows_cfg(const Problem& p, const SoftmaxTiling& t) {
  const char* mask = p.key_mask == KeyMask::none      ? "bandjit::kMaskNone"
                     : p.key_mask == KeyMask::boolean ? "bandjit::kMaskBool"
                                                      : "bandjit::kMaskAdditive";
  return fmt::format(
      "  static constexpr float kScale = {};\n"
      "  static constexpr int kKeyMask = {};\n"
      "  static constexpr int kRowThreads = {};\n"
      "  static constexpr int kPiecesPerThread = {};\n"
      "  static constexpr int kRowsPerBlock = {};\n"
      "  static constexpr int kThreads = {};\n"
      "  static constexpr int kRowGroup = {};\n",
      float_literal(p.scale), mask, t.row_threads, t.pieces_per_thread, t.rows_per_block, t.threads, t.row_group);
}

std::string mask_parameter(const Problem& p) {
  if (p.key_mask == KeyMask::none) return "";
  return fmt::format(", const {}* __restrict__ mask", p.key_mask == KeyMask::boolean ? "unsigned char" : "float");
}

const char* mask_argument(const Problem& p) { return p.key_mask == KeyMask::none ? "nullptr" : "mask"; }

}  // namespace bandjit
