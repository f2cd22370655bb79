#include "generator/source.hpp"

#include <set>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace bandjit {

namespace {
void inline_includes(const std::string& text, const std::vector<TemplateFile>& headers, std::set<std::string>& done,
                     std::string& out) {
  std::istringstream lines(text);
  std::string line;
  const std::string marker = "#include \"bandjit/";
  while (std::getline(lines, line)) {
    if (line.rfind(marker, 0) == 0) {
      const std::string name = line.substr(10, line.find('"', 10) - 10);
      if (done.insert(name).second)
        for (const auto& h : headers)
          if (h.name == name) {
            out += "// ---- " + name + "\n";
            inline_includes(h.text, headers, done, out);
          }
      continue;
    }
    if (line == "#pragma once") continue;
    out += line + "\n";
  }
}
}  // namespace

std::string arch_specific_target(const std::string& arch) { return arch == "sm_90" ? "sm_90a" : ""; }

LaunchShape launch_for(const Source& source, const std::string& arch) {
  LaunchShape launch = source.launch;
  if (!source.arch_specific || arch_specific_target(arch).empty()) return launch;
  // A build with its own grid takes its shared bytes as given, 0 included.
  if (source.arch_specific_shared_bytes || source.arch_specific_grid_xy[0])
    launch.shared_bytes = source.arch_specific_shared_bytes;
  if (source.arch_specific_grid_xy[0]) {
    launch.grid[0] = source.arch_specific_grid_xy[0];
    launch.grid[1] = source.arch_specific_grid_xy[1];
  }
  if (source.arch_specific_threads) launch.block[0] = source.arch_specific_threads;
  return launch;
}

std::string standalone_text(const Source& source) {
  std::set<std::string> done;
  std::string out;
  inline_includes(source.text, *source.headers, done, out);
  return out;
}

const char* cuda_type(DType d) {
  switch (d) {
    case DType::float32: return "float";
    case DType::float16: return "__half";
    case DType::bfloat16: return "__nv_bfloat16";
  }
  return "float";
}

const char* cuda_type_macro(DType d) {
  switch (d) {
    case DType::float16: return "#define BANDJIT_USE_FP16 1\n";
    case DType::bfloat16: return "#define BANDJIT_USE_BF16 1\n";
    default: return "";
  }
}

std::string float_literal(double value) { return fmt::format("{:a}f", static_cast<float>(value)); }

std::string band_constant_tables(const Problem& p, const std::vector<int>* head_tile_start) {
  if (p.uniform_dilation()) return {};
  std::string text = fmt::format("__constant__ int bj_dilation[{}] = {{{}}};\n", p.heads, fmt::join(p.dilation, ", "));
  if (head_tile_start)
    text += fmt::format("__constant__ int bj_head_tile_start[{}] = {{{}}};\n", head_tile_start->size(),
                        fmt::join(*head_tile_start, ", "));
  return text;
}

std::string band_cfg_common(const Problem& p) {
  std::string text = fmt::format(
      "  using T = {};\n"
      "  static constexpr int kBatch = {};\n"
      "  static constexpr int kHeads = {};\n"
      "  static constexpr int kSeqLen = {};\n"
      "  static constexpr int kHeadDim = {};\n"
      "  static constexpr int kWindowLeft = {};\n"
      "  static constexpr int kWindowRight = {};\n"
      "  static constexpr int kDiagonals = {};\n"
      "  static constexpr int kLayout = {};\n",
      cuda_type(p.dtype), p.runtime_batch ? 0 : p.batch, p.heads, p.seq_len, p.head_dim, p.window_left, p.window_right,
      p.diagonals(), p.layout == Layout::bnhd ? "bandjit::kLayoutBNHD" : "bandjit::kLayoutBHND");
  if (p.uniform_dilation()) {
    text += fmt::format(
        "  static constexpr bool kUniformDilation = true;\n"
        "  static constexpr int kDilation = {};\n"
        "  __device__ static int dilation(int) {{ return kDilation; }}\n",
        p.dilation.front());
  } else {
    text +=
        "  static constexpr bool kUniformDilation = false;\n"
        "  static constexpr int kDilation = 0;\n"
        "  __device__ static int dilation(int h) { return bj_dilation[h]; }\n";
  }
  return text;
}

nlohmann::json band_key_fields(const Problem& p) {
  nlohmann::json doc = {
      {"batch", p.runtime_batch ? nlohmann::json("runtime") : nlohmann::json(p.batch)},
      {"heads", p.heads},
      {"seq_len", p.seq_len},
      {"window_left", p.window_left},
      {"window_right", p.window_right},
      {"dtype", std::string(to_string(p.dtype))},
      {"layout", std::string(to_string(p.layout))},
  };
  if (p.uniform_dilation())
    doc["dilation"] = p.dilation.front();
  else
    doc["dilation"] = p.dilation;
  return doc;
}

void set_band_tile_launch(Source& s, const Problem& p, int tiles_per_batch, int threads, std::uint32_t shared_bytes) {
  s.launch.grid[0] = static_cast<std::uint32_t>(tiles_per_batch);
  s.launch.grid[2] = static_cast<std::uint32_t>(p.batch);
  s.launch.block[0] = static_cast<std::uint32_t>(threads);
  s.launch.shared_bytes = shared_bytes;
  s.key_fields = band_key_fields(p);
  s.key_fields["head_dim"] = p.head_dim;
}

std::string head_tile_start_member(const Problem& p) {
  return p.uniform_dilation() ? "" : "  __device__ static int head_tile_start(int h) { return bj_head_tile_start[h]; }\n";
}

}  // namespace bandjit
