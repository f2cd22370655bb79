// Stage 1 of the pipeline: Problem → Source (generated CUDA C++ with every size baked in).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bandjit/problem.hpp"
#include "generator/embedded_templates.hpp"

namespace bandjit {

struct LaunchShape {
  std::uint32_t grid[3] = {1, 1, 1};
  std::uint32_t block[3] = {1, 1, 1};
  std::uint32_t shared_bytes = 0;  ///< dynamic shared memory
};

/// Tuning knobs that override the generator's own choices (measurements, searches).
/// Zero means "the generator decides". They change the source, hence the cache key.
struct Tuning {
  int tile_rows = 0;       ///< rows per block of band_qk / band_pv: 32 or 64
  int tile_diagonals = 0;  ///< most diagonals per chunk of band_qk / band_pv (16 … 1024)
  /// Row families (softmax and layer_norm sets): most pieces a thread holds when a warp holds
  /// whole rows (1, 2, 4, 8), registers of row data per thread (16, 32, 64), threads per
  /// block (128 … 1024).
  int row_pieces = 0;
  int row_registers = 0;
  int row_block_threads = 0;
  /// layer_norm_backward (and a prefetching forward): waves of resident blocks (clusters)
  /// in its grid (1, 2, 4, 8, 16); band_softmax with rows in turn: rows a thread group takes.
  int row_waves = 0;
  /// Switches (0: the generator decides, 1: off, 2: on). layer_norm and band_softmax: load the
  /// next row while this one is reduced; layer_norm_backward: column sums in registers;
  /// softmax forward: rows through shared memory (cp.async); layer_norm: two 16-bit rows of
  /// H ≡ 4 (mod 8) as one unit of 16-byte pieces where the row count is even (default: the
  /// forward only).
  int row_prefetch = 0;
  int row_register_sums = 0;
  int row_staged = 0;
  /// softmax forward: long rows held as loaded (packed) in registers, passed over twice like
  /// staged rows (switch).
  int row_held = 0;
  int row_bundle = 0;
  /// layer_norm backward (register kernel, one row a unit, no cluster): each thread's weights
  /// held in registers for all its rows.
  int row_hold_weights = 0;
  /// layer_norm forward (register kernel, one row a unit, no chunks, no prefetch): each thread
  /// takes two rows at once, reading each weight and bias once for both.
  int row_pairs = 0;
  /// layer_norm forward, one chunk: pieces whose weight and bias a thread loads into
  /// registers with the row, before its statistics, plus one (0: the generator decides).
  int row_weight_ahead = 0;
  /// layer_norm forward, one chunk, one row a unit, no prefetch: pieces of weight and bias a
  /// thread keeps in flight into shared memory by cp.async, plus one (1: none; 0: the
  /// generator decides).
  int row_weight_ring = 0;
  /// layer_norm forward: widest piece in bytes (4, 8, 16; 0: the generator decides).
  int row_vec_bytes = 0;
  /// layer_norm_backward's staged kernel (sm_90): rows overlapped, the next row's first pass
  /// before this row's cluster sum (switch); rows staged at once (2 … 8; 0: as many as fit, up to 4).
  int row_overlap = 0;
  int row_stages = 0;
  /// band_tpv: output rows per block (32, 64, 128), band rows per slab (32, 64) and slabs in
  /// flight (2 … 4); 0: the generator decides.
  int tpv_tile_rows = 0;
  int tpv_slab_rows = 0;
  int tpv_stages = 0;
  int tpv_row_tiles = 0;  ///< band_tpv: 16-row m-tiles per warp (1, 2)
  int tpv_wgmma = 0;      ///< switch: band_tpv's Hopper (wgmma) path where it applies
  int pv_wgmma = 0;       ///< switch: band_pv's Hopper (wgmma) path where it applies
  int qk_wgmma = 0;       ///< switch: band_qk's Hopper (wgmma) kernel where it applies
  /// band_pv's Hopper kernel: keys per slab (32, 64, 128) and slabs in flight (2 … 4); 0: default.
  int pv_wgmma_slab_keys = 0;
  int pv_wgmma_stages = 0;
  int pv_whole_rows = 0;  ///< switch: band_pv's Hopper kernel stages whole P rows (default: bands of 41 to 129 diagonals)
  /// sliding_window_attention: query rows per block (64, 128) and keys per tile (32, 64, 128).
  int attention_tile_rows = 0;
  int attention_key_tile = 0;
  int attention_wgmma = 0;  ///< switch: the Hopper (wgmma) kernel where it applies
};

/// Generated translation unit of one kernel, with what it takes to compile and launch it.
struct Source {
  std::string family;
  std::string kernel_name;  ///< the extern "C" entry point
  std::string name;         ///< file name shown by NVRTC in its log
  std::string text;
  const std::vector<TemplateFile>* headers = &embedded_templates();
  LaunchShape launch;
  std::vector<std::string> arguments;  ///< pointer arguments of the entry point, in order
  /// Byte alignment each argument needs; empty = 16 for every argument but "mask" (4).
  std::vector<std::uint32_t> argument_alignment;
  /// Has a build for the arch-specific target (sm_90 compiles as sm_90a): wgmma kernels, and
  /// kernels whose sm_90a build differs (__CUDA_ARCH_FEAT_SM90_ALL) with its own launch below.
  bool arch_specific = false;
  /// Dynamic shared memory of the arch-specific build (its kernel's layout); 0 = launch's,
  /// unless the build has its own grid (arch_specific_grid_xy), which takes it as given.
  std::uint32_t arch_specific_shared_bytes = 0;
  /// The arch-specific build's own grid and block (its kernel tiles the problem its own way;
  /// grid.z, the batch, stays the launch's); zeros = the launch's.
  std::uint32_t arch_specific_grid_xy[2] = {0, 0};
  std::uint32_t arch_specific_threads = 0;
  /// The family's view of the problem: only the fields that change its code (cache key).
  nlohmann::json key_fields;
};

/// The arch-specific target an arch has ("sm_90" → "sm_90a"), or "" when none is used.
std::string arch_specific_target(const std::string& arch);

/// The launch of `source` built for `arch`: its arch-specific build (source.arch_specific on
/// an arch that has such a target) takes arch_specific_shared_bytes, _grid_xy and _threads
/// where set (with its own grid, its shared bytes even when 0).
LaunchShape launch_for(const Source& source, const std::string& arch);

/// The source with every `#include "bandjit/…"` replaced by the template's text (each
/// once), so that it compiles on its own with nvcc or NVRTC and the CUDA headers.
std::string standalone_text(const Source& source);

/// C++ spelling of an element type in the templates, and the macro that includes its header.
const char* cuda_type(DType dtype);
const char* cuda_type_macro(DType dtype);

/// Exact float literal (hex float), so the baked-in constant is the problem's value.
std::string float_literal(double value);

/// The lines of a generated `struct Cfg` common to the band families: sizes, layout,
/// dilation (constant when uniform, else a __constant__ table).
std::string band_cfg_common(const Problem& problem);

/// `__constant__` tables emitted before `struct Cfg` (per-head dilation, tile starts).
std::string band_constant_tables(const Problem& problem, const std::vector<int>* head_tile_start);

/// Problem fields that every band family's code depends on.
nlohmann::json band_key_fields(const Problem& problem);

/// Launch of a tiled band family (band_qk, band_pv, band_tpv): grid (tiles per batch, 1,
/// batch), `threads` per block, `shared_bytes` of dynamic shared memory; key fields are the
/// band's and head_dim.
void set_band_tile_launch(Source& source, const Problem& problem, int tiles_per_batch, int threads,
                          std::uint32_t shared_bytes);

/// The Cfg member that reads the per-head tile table; "" for a uniform dilation.
std::string head_tile_start_member(const Problem& problem);

}  // namespace bandjit
