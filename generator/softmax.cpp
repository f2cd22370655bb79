// The softmax families: "scale_mask_softmax" (Megatron's FusedScaleMaskSoftmax) and its
// backward, and the plain "softmax" set (rows × L, no mask, scale 1) on the same templates
// (templates/softmax.cuh, softmax_backward.cuh).
#include "generator/softmax.hpp"

#include <algorithm>
#include <cmath>
#include <optional>

#include <fmt/format.h>

#include "generator/softmax_tiling.hpp"
#include "generator/tile_config.hpp"

namespace bandjit {
namespace {

using nlohmann::json;
using Type = ParamSpec::Type;

constexpr double kMaxRows = 2147483647.0;      // grid.x (× the cluster size, checked below)
constexpr double kMaxElements = 68719476736.0;  // rows × L ≤ 2^36: 64-bit offsets, far above any GPU's memory

const std::vector<ParamSpec>& scale_mask_specs() {
  static const std::vector<ParamSpec> specs = {
      {"batch", Type::integer, 1, 1048576, {}, json(), "b: x, y are [batch, heads, queries, row_length]"},
      {"heads", Type::integer, 1, 65536, {}, json(), "np: attention heads (the mask is broadcast over them)"},
      {"queries", Type::integer, 1, 1048576, {}, json(), "sq: rows per (batch, head)"},
      {"row_length", Type::integer, 1, double(kMaxSoftmaxRow), {}, json(), "sk = L: keys per row, the softmax axis"},
      dtype_param("element type of x, y, dy, dx (and of an additive mask); float32 math"),
      {"scale", Type::number, -1e30, 1e30, {}, 1.0, "multiplies x before the mask is added"},
      {"mask", Type::choice, 0, 0, {"none", "boolean", "additive"}, "none",
       "[batch, 1, queries, L]: boolean uint8 (non-zero removes the key) or additive in x's dtype (-inf removes)"},
      {"causal", Type::boolean, 0, 0, {}, false, "remove key j > q + (L - queries) (upper-triangular when queries = L)"},
  };
  return specs;
}

const std::vector<ParamSpec>& softmax_specs() {
  static const std::vector<ParamSpec> specs = {
      {"rows", Type::integer, 1, kMaxRows, {}, json(), "rows of x, y: [rows, row_length]"},
      {"row_length", Type::integer, 1, double(kMaxSoftmaxRow), {}, json(), "L: elements per row, the softmax axis"},
      dtype_param("element type of x, y, dy, dx; float32 math"),
  };
  return specs;
}

// The problem of either set as the templates see it.
struct RowProblem {
  std::int64_t rows = 1, heads = 1, queries = 1, L = 1;
  DType dtype = DType::float32;
  double scale = 1.0;
  std::string mask = "none";
  bool causal = false;
  bool per_query() const { return mask != "none" || causal; }  // the code indexes (batch, query)
  int mask_bytes() const { return mask == "boolean" ? 1 : mask == "additive" ? int(element_size(dtype)) : 0; }
};

RowProblem row_problem(const json& c) {
  RowProblem p;
  p.dtype = dtype_of(c);
  p.L = c.at("row_length").get<std::int64_t>();
  if (c.contains("rows")) {
    p.rows = c.at("rows").get<std::int64_t>();
    return p;
  }
  p.heads = c.at("heads").get<std::int64_t>();
  p.queries = c.at("queries").get<std::int64_t>();
  p.rows = c.at("batch").get<std::int64_t>() * p.heads * p.queries;
  p.scale = c.at("scale").get<double>();
  p.mask = c.at("mask").get<std::string>();
  p.causal = c.at("causal").get<bool>();
  return p;
}

void check_rows(const json& c, const std::string& family, const std::string& where) {
  const RowProblem p = row_problem(c);
  const std::string what = c.contains("rows") ? "rows × row_length" : "batch × heads × queries × row_length";
  if (double(p.rows) > kMaxRows)
    bad_params(family, where, "batch × heads × queries", std::to_string(p.rows), fmt::format("1 … {:.0f}", kMaxRows));
  if (double(p.rows) * double(p.L) > kMaxElements)
    bad_params(family, where, what, fmt::format("{:.0f}", double(p.rows) * double(p.L)), "1 … 2^36");
  const SoftmaxRowTiling f = softmax_row_tiling(p.rows, p.L, p.dtype, false, {}, p.mask_bytes());
  const SoftmaxRowTiling t = softmax_row_tiling(p.rows, p.L, p.dtype, true);
  if (double(std::max(f.blocks, t.blocks)) > kMaxRows)
    bad_params(family, where, "rows", std::to_string(p.rows),
               fmt::format("at most {:.0f} for row_length {} ({} blocks per row)", kMaxRows / t.cluster, p.L, t.cluster));
}
void check_scale_mask(const json& c, const std::string& where) { check_rows(c, "scale_mask_softmax", where); }
void check_softmax(const json& c, const std::string& where) { check_rows(c, "softmax", where); }

// What the code depends on (the cache key's view): the backward ignores the mask.
json key_fields(const RowProblem& p, bool backward) {
  json k = {{"rows", p.rows}, {"row_length", p.L}, {"dtype", std::string(to_string(p.dtype))}, {"scale", p.scale}};
  if (backward) return k;
  k["mask"] = p.mask;
  k["causal"] = p.causal;
  if (p.per_query()) {
    k["heads"] = p.heads;
    k["queries"] = p.queries;
  }
  return k;
}

std::string cfg_text(const RowProblem& p, const SoftmaxRowTiling& t, bool backward) {
  const bool per_query = !backward && p.per_query();
  const char* mask = p.mask == "boolean" ? "bandjit::kMaskBool" : p.mask == "additive" ? "bandjit::kMaskAdditive" : "bandjit::kMaskNone";
  return fmt::format(
      "struct Cfg {{\n"
      "  using T = {type};\n"
      "  static constexpr long long kRows = {rows};\n"
      "  static constexpr int kRowLength = {L};\n"
      "  static constexpr int kHeads = {heads}, kQueries = {queries};\n"
      "  static constexpr float kScale = {scale};\n"
      "  static constexpr float kScaleLog2e = {scale_log2e};  // scale · log2(e), folded into ex2\n"
      "  static constexpr int kMask = {mask};\n"
      "  static constexpr bool kCausal = {causal};\n"
      "  static constexpr int kVec = {vec}, kPieces = {pieces};\n"
      "  static constexpr int kRowThreads = {row_threads}, kPiecesPerThread = {per_thread};\n"
      "  static constexpr int kCluster = {cluster}, kRowsPerBlock = {rpb}, kThreads = {threads};\n"
      "  static constexpr bool kStaged = {staged}, kHeld = {held};\n"
      "}};\n",
      fmt::arg("type", cuda_type(p.dtype)), fmt::arg("rows", p.rows), fmt::arg("L", p.L),
      fmt::arg("heads", per_query ? p.heads : 1), fmt::arg("queries", per_query ? p.queries : 1),
      fmt::arg("scale", float_literal(p.scale)), fmt::arg("scale_log2e", float_literal(p.scale * M_LOG2E)),
      fmt::arg("mask", backward ? "bandjit::kMaskNone" : mask), fmt::arg("causal", !backward && p.causal),
      fmt::arg("vec", t.vec), fmt::arg("pieces", t.pieces), fmt::arg("row_threads", t.row_threads),
      fmt::arg("per_thread", t.pieces_per_thread), fmt::arg("cluster", t.cluster), fmt::arg("rpb", t.rows_per_block),
      fmt::arg("threads", t.threads), fmt::arg("staged", t.staged),
      fmt::arg("held", t.held));
}

// The kernel's compile-time layout: Cfg, cluster size, launch bounds (BANDJIT_THREADS).
std::string layout_text(const RowProblem& p, const SoftmaxRowTiling& t, bool backward) {
  // ≤ 64 registers: 1024 threads per SM. Staged rows: as many blocks as their slots let an
  // SM hold, up to 1536 threads (three 512-thread blocks of 64 KiB: ≤ 40 registers, where the
  // unrolled statistics pass would take 53).
  const int staged_blocks =
      t.staged ? std::min<int>(1536 / t.threads, static_cast<int>(kMaxSharedBytes / (t.stage_bytes + 1024))) : 0;
  const int min_blocks = std::min(32, std::max({1, 1024 / t.threads, staged_blocks}));
  const std::string cluster =
      t.cluster == 1
          ? fmt::format("#define BANDJIT_CLUSTER_DIMS\n#define BANDJIT_MIN_BLOCKS {}\n", min_blocks)
          : fmt::format(
                "// A row spans a cluster of {0} blocks on sm_90; elsewhere one block of each {0} walks it twice\n"
                "// (the others exit at once), with the registers of one block per SM.\n"
                "#if defined(BANDJIT_CLUSTERS)\n#define BANDJIT_CLUSTER_DIMS __cluster_dims__({0}, 1, 1)\n"
                "#define BANDJIT_MIN_BLOCKS {1}\n#else\n#define BANDJIT_CLUSTER_DIMS\n#define BANDJIT_MIN_BLOCKS 1\n#endif\n",
                t.cluster, min_blocks);
  return fmt::format("{}\n{}#define BANDJIT_THREADS {}\n", cfg_text(p, t, backward), cluster, t.threads);
}

Source generate(const std::string& family, const json& canonical, bool backward, const Tuning& tuning) {
  const RowProblem p = row_problem(canonical);
  SoftmaxRowTiling t = softmax_row_tiling(p.rows, p.L, p.dtype, backward, tuning, backward ? 0 : p.mask_bytes());
  // Held rows by default (not by BANDJIT_ROW_HELD) are the sm_90a build's alone: they were
  // measured on the H200 only, and are clusters, which targets before sm_90 walk in one block
  // (about 1.5× the traffic where the generic layout is one block: L = 16384). The generic
  // build keeps the register or staged layout; the sm_90a build takes the held one with its
  // own launch.
  std::optional<SoftmaxRowTiling> held;
  if (!backward && t.held && tuning.row_held == 0) {
    Tuning generic = tuning;
    generic.row_held = 1;
    held = t;
    t = softmax_row_tiling(p.rows, p.L, p.dtype, backward, generic, p.mask_bytes());
  }
  const std::uint32_t piece_bytes = static_cast<std::uint32_t>(t.vec * element_size(p.dtype));
  Source s;
  s.family = family;
  s.kernel_name = "bandjit_" + family;
  s.key_fields = key_fields(p, backward);
  s.name = family + "_" + params_slug(s.key_fields) + ".cu";
  s.launch.grid[0] = static_cast<std::uint32_t>(t.blocks);
  s.launch.block[0] = static_cast<std::uint32_t>(t.threads);
  std::string params, call;
  if (backward) {
    s.arguments = {"y", "dy", "dx"};
    s.argument_alignment = {piece_bytes, piece_bytes, piece_bytes};
    params = "const Cfg::T* y, const Cfg::T* dy, Cfg::T* dx";
    call = "bandjit::softmax_backward<Cfg>(y, dy, dx)";
  } else {
    s.arguments = {"x", "y"};
    s.argument_alignment = {piece_bytes, piece_bytes};
    params = "const Cfg::T* x, Cfg::T* y";
    call = "bandjit::softmax_forward<Cfg>(x, y, nullptr)";
    if (p.mask != "none") {
      s.arguments.push_back("mask");
      s.argument_alignment.push_back(p.mask == "boolean" ? static_cast<std::uint32_t>(t.vec) : piece_bytes);
      params += p.mask == "boolean" ? ", const unsigned char* __restrict__ mask" : ", const Cfg::T* __restrict__ mask";
      call = "bandjit::softmax_forward<Cfg>(x, y, mask)";
    }
    if (t.staged) {  // the pieces' slots: the block's dynamic shared memory
      call = "extern __shared__ uint4 bandjit_stage[];\n  " + call.substr(0, call.size() - 1) + ", bandjit_stage)";
      s.launch.shared_bytes = t.stage_bytes;
    }
  }
  std::string layout = layout_text(p, t, backward);
  if (held) {
    s.arch_specific = true;
    s.arch_specific_grid_xy[0] = static_cast<std::uint32_t>(held->blocks);
    s.arch_specific_grid_xy[1] = 1;
    s.arch_specific_threads = static_cast<std::uint32_t>(held->threads);
    s.arch_specific_shared_bytes = 0;  // registers only (an own grid takes its shared bytes as given)
    layout = fmt::format(
        "// The sm_90a build holds the row in registers (held rows); others use the layout below it.\n"
        "// The launch for sm_90 is the sm_90a build's, so a plain sm_90 build would be launched wrongly.\n"
        "#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ == 900 && !defined(__CUDA_ARCH_FEAT_SM90_ALL)\n"
        "#error \"compile this kernel for sm_90a: its sm_90 launch is the held kernel's\"\n#endif\n"
        "#if defined(__CUDA_ARCH_FEAT_SM90_ALL)\n{}#else\n{}#endif\n",
        layout_text(p, *held, backward), layout);
  }
  s.text = fmt::format(
      "// Generated by bandjit: {family} for {fields}\n"
      "{macro}"
      "#include \"bandjit/{header}\"\n\n"
      "{layout}"
      "// {alias} may alias (in place), so neither is __restrict__.\n"
      "extern \"C\" __global__ void BANDJIT_CLUSTER_DIMS __launch_bounds__(BANDJIT_THREADS, BANDJIT_MIN_BLOCKS)\n"
      "{name}({params}) {{\n"
      "  {call};\n"
      "}}\n",
      fmt::arg("family", family), fmt::arg("fields", s.key_fields.dump()), fmt::arg("macro", cuda_type_macro(p.dtype)),
      fmt::arg("header", backward ? "softmax_backward.cuh" : "softmax.cuh"), fmt::arg("layout", layout),
      fmt::arg("alias", backward ? "dy and dx" : "x and y"), fmt::arg("name", s.kernel_name),
      fmt::arg("params", params), fmt::arg("call", call));
  return s;
}

Source generate_scale_mask_softmax(const json& c, const Tuning& t) { return generate("scale_mask_softmax", c, false, t); }
Source generate_scale_mask_softmax_backward(const json& c, const Tuning& t) {
  return generate("scale_mask_softmax_backward", c, true, t);
}
Source generate_softmax(const json& c, const Tuning& t) { return generate("softmax", c, false, t); }
Source generate_softmax_backward(const json& c, const Tuning& t) { return generate("softmax_backward", c, true, t); }

const char* const kReference = "reference/softmax_reference.cpp (float64)";

}  // namespace

void append_softmax_families(std::vector<Family>& all) {
  const auto family = [](const char* name, const char* set, const char* summary, std::vector<std::string> args,
                         const std::vector<ParamSpec>& (*specs)(), void (*check)(const json&, const std::string&),
                         Source (*gen)(const json&, const Tuning&)) {
    Family f;
    f.name = name;
    f.parameter_set = set;
    f.summary = summary;
    f.reference = kReference;
    f.arguments = std::move(args);
    f.param_specs = specs;
    f.check_params = check;
    f.params_generator = gen;
    return f;
  };
  all.push_back(family("scale_mask_softmax", "scale_mask_softmax",
                       "y = softmax(scale*x + mask) over the last axis, removed keys 0, fully masked rows 0 "
                       "(Megatron FusedScaleMaskSoftmax; torch.softmax(x*scale + mask, -1))",
                       {"x", "y", "[mask: mask]"}, &scale_mask_specs, &check_scale_mask, &generate_scale_mask_softmax));
  all.push_back(family("scale_mask_softmax_backward", "scale_mask_softmax",
                       "dx = scale * y (dy - rowsum(dy y)) (Megatron FusedScaleMaskSoftmax backward)",
                       {"y", "dy", "dx"}, &scale_mask_specs, &check_scale_mask, &generate_scale_mask_softmax_backward));
  all.push_back(family("softmax", "softmax", "y = softmax(x) over rows of L (torch.softmax(x, -1))", {"x", "y"},
                       &softmax_specs, &check_softmax, &generate_softmax));
  all.push_back(family("softmax_backward", "softmax",
                       "dx = y (dy - rowsum(dy y)) (torch._softmax_backward_data)", {"y", "dy", "dx"}, &softmax_specs,
                       &check_softmax, &generate_softmax_backward));
}

}  // namespace bandjit
