// bandjit/problem.hpp — the concrete problem a kernel is generated for (SPEC §2).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace bandjit {

/// Element type of the inputs and outputs. Accumulation is always float32.
enum class DType { float32, float16, bfloat16 };

/// Memory order of Q/K/V/O. `bnhd` = [B, N, H, Dh] (HF Longformer, i.e. [B, N, hidden]);
/// `bhnd` = [B, H, N, Dh]. Band tensors (S, P) follow the same order with C in place of Dh:
/// [B, N, H, C] or [B, H, N, C].
enum class Layout { bnhd, bhnd };

/// Optional key-padding mask of band_softmax, one value per key: [B, N], row-major.
/// `boolean`: uint8, non-zero = the key takes part, 0 = removed.
/// `additive`: float32; a negative value removes the key (HF Longformer marks padding
/// with -10000), any other value is added to the score.
enum class KeyMask { none, boolean, additive };

/// One band problem (SPEC §2). Windows are one-sided: query i attends to keys
/// i + D·(j − window_left) for j = 0 … window_left + window_right (C = diagonals()).
struct Problem {
  std::int64_t batch = 1;         ///< B, sequences per call
  std::int64_t heads = 1;         ///< H
  std::int64_t seq_len = 1;       ///< N, tokens per sequence
  std::int64_t head_dim = 64;     ///< Dh, features per head
  std::int64_t window_left = 0;   ///< w_l, keys to the left
  std::int64_t window_right = 0;  ///< w_r, keys to the right (0 = causal)
  /// Stride between attended keys (1 = contiguous): one value for all heads, or one per head.
  std::vector<std::int64_t> dilation{1};
  DType dtype = DType::float32;
  Layout layout = Layout::bnhd;
  /// band_qk multiplies S by it; band_softmax computes softmax(scale·S + M);
  /// sliding_window_attention's logits are scale·Q·Kᵀ + M. Default 1 for every family (pass
  /// 1/√head_dim for the usual attention scaling).
  double scale = 1.0;
  KeyMask key_mask = KeyMask::none;  ///< band_softmax, band_softmax_backward, sliding_window_attention
  /// When true, `batch` is not baked into the kernels: one kernel serves every batch size,
  /// chosen per launch (Kernel::launch with a batch). `batch` is then only the default.
  bool runtime_batch = false;

  /// C = window_left + window_right + 1, the number of diagonals in the band.
  std::int64_t diagonals() const { return window_left + window_right + 1; }
  /// Dilation of one head (0 ≤ head < heads).
  std::int64_t dilation_of(std::int64_t head) const;
  /// True when every head has the same dilation.
  bool uniform_dilation() const;
};

/// Allowed ranges, in one place so that errors, docs and tests agree.
struct Limits {
  static constexpr std::int64_t max_batch = 65535;
  static constexpr std::int64_t max_heads = 1024;
  static constexpr std::int64_t max_seq_len = 1 << 20;
  static constexpr std::int64_t min_head_dim = 16;
  static constexpr std::int64_t max_head_dim = 256;
  static constexpr std::int64_t head_dim_multiple = 16;
  static constexpr std::int64_t max_diagonals = 32768;
  /// batch × heads × seq_len: rows of the band tensors, one launch's grid must cover them.
  static constexpr std::int64_t max_rows = (std::int64_t{1} << 31) - 1;
};

/// Throws bandjit::Error (ErrorKind::invalid_problem) naming the first offending field,
/// its value and the allowed range. Never clamps.
void validate(const Problem& problem);

std::string_view to_string(DType dtype);
std::string_view to_string(Layout layout);
std::string_view to_string(KeyMask mask);
/// Bytes per element of a dtype.
std::size_t element_size(DType dtype);

/// Canonical JSON of the problem (sorted keys; dilation as one int when uniform).
std::string to_json(const Problem& problem);
/// Parses and validates a problem in the shape-file form of SPEC §6.
/// Throws Error(invalid_problem) on unknown fields, wrong types or out-of-range values, and
/// on JSON that repeats a key in one object or nests more than 64 levels deep.
Problem problem_from_json(std::string_view json_text);

/// Short, file- and symbol-safe name: b1_h12_n4096_d64_wl256_wr256_dil1_f16_bnhd[...].
std::string slug(const Problem& problem);

/// One entry of a shape file: the problem and the operations to build for it.
struct ShapeEntry {
  /// The family set the entry's parameters belong to (FamilyInfo::parameter_set): "band"
  /// (the default) or e.g. "layer_norm", from the entry's "parameter_set" field.
  std::string parameter_set = "band";
  /// The band problem (parameter_set "band" only).
  Problem problem;
  /// The entry's canonical parameters as JSON (every set; for "band" the problem's to_json).
  std::string parameters;
  /// Kernel families and composed operations (attention_backward), shorthands expanded,
  /// without repeats. Default: band_qk, band_softmax, band_pv; for another set all its families.
  std::vector<std::string> ops;
};

/// A shape file of SPEC §6: {"name": ..., "problems": [...]}. An entry with a
/// "parameter_set" field other than "band" holds that set's parameters (`bandjit families`).
struct ShapeFile {
  std::string name;
  std::string path;
  std::vector<ShapeEntry> entries;
};

/// Reads a shape file as it is. Throws Error(invalid_problem) naming the file, the index
/// of the problem and the field; Error(io) when the file cannot be read.
ShapeFile load_shape_file(const std::string& path);

}  // namespace bandjit
