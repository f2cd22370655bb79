// bandjit/bandjit.hpp — the C++ entry points: get_kernel, Kernel::launch, pregenerate.
//
//   bandjit::Problem p;  p.heads = 12; p.seq_len = 4096; ...
//   auto kernel = bandjit::get_kernel("band_qk", p);   // memory → disk → NVRTC
//   kernel.launch(stream, {q, k, s});                  // device pointers
//
//   // Any family by name, its parameters as JSON (`bandjit families` lists them):
//   auto ln = bandjit::get_kernel("layer_norm", R"({"rows": 8192, "hidden": 1024, "dtype": "float16"})");
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "bandjit/errors.hpp"
#include "bandjit/family.hpp"
#include "bandjit/problem.hpp"

struct CUstream_st;  // the driver's stream type, as cuda.h declares it

namespace bandjit {

/// The caller's stream: the same type as CUstream and cudaStream_t (nullptr = default).
using Stream = ::CUstream_st*;

/// A device address, from cudaMalloc (void*) or cuMemAlloc (CUdeviceptr).
struct DevicePtr {
  std::uint64_t address = 0;
  DevicePtr() = default;  ///< null
  DevicePtr(const void* p) : address(reinterpret_cast<std::uintptr_t>(p)) {}  // NOLINT
  DevicePtr(unsigned long long a) : address(a) {}                             // NOLINT
};

/// Where get_kernel found the kernel: remote = the Redis tier (BANDJIT_REDIS_URL).
enum class Origin { memory, disk, remote, compiled };

/// What a kernel is and how it launches; also stored in the cache entry's manifest.
struct KernelInfo {
  std::string family;       ///< e.g. "band_qk"
  std::string kernel_name;  ///< the extern "C" symbol in the cubin
  std::string key_hash;     ///< SHA-256 of the cache key document (hex)
  std::string arch;         ///< e.g. "sm_90"
  std::uint32_t grid[3] = {1, 1, 1};
  std::uint32_t block[3] = {1, 1, 1};
  std::uint32_t shared_bytes = 0;  ///< dynamic shared memory per block
  int registers = -1;              ///< per thread, from ptxas (-1 if unknown)
  /// Names of the pointer arguments of launch(), in order (e.g. {"q", "k", "s"}).
  std::vector<std::string> arguments;
  /// Byte alignment launch() requires of each argument (16 unless the family says less).
  std::vector<std::uint32_t> argument_alignment;
  /// The canonical parameters the kernel was generated for, as JSON (for band families
  /// the problem's to_json).
  std::string parameters;
  Origin origin = Origin::compiled;
  double seconds = 0;  ///< time get_kernel spent (compile or load)
};

class LoadedModule;

/// A kernel loaded into the current CUDA context, ready to launch. Cheap to copy.
class Kernel {
 public:
  Kernel(std::shared_ptr<const LoadedModule> module, KernelInfo info, Problem problem);
  /// A kernel of a family that does not take a band Problem (its parameters are in info()).
  Kernel(std::shared_ptr<const LoadedModule> module, KernelInfo info);

  const KernelInfo& info() const { return info_; }
  /// The band problem; a default Problem for families of other parameter sets.
  const Problem& problem() const { return problem_; }

  /// Launches on `stream` in the context the kernel was loaded in: it must be current, or
  /// no context may be current on this thread (then the kernel's is made current). `args` are the device
  /// pointers named by info().arguments, each 16-byte aligned, holding tensors of the shapes
  /// in docs/kernels.md. Throws Error(usage) on a wrong count or misaligned pointer,
  /// Error(driver_failed) naming cuLaunchKernel and the CUDA error string.
  void launch(Stream stream, std::initializer_list<DevicePtr> args) const;
  void launch(Stream stream, const std::vector<DevicePtr>& args) const;
  /// As above for `batch` sequences (tensors sized for that batch). A kernel generated with
  /// problem().runtime_batch takes any batch in 1 … Limits::max_batch with batch × heads ×
  /// seq_len ≤ Limits::max_rows; any other kernel only its own problem().batch. Throws
  /// Error(usage) naming the batch and the allowed range otherwise.
  /// Only band families take a batch.
  void launch(Stream stream, const std::vector<DevicePtr>& args, std::int64_t batch) const;

 private:
  void check_arguments(const std::vector<DevicePtr>& args) const;
  /// check_arguments, then cuLaunchKernel; grid_z > 0 replaces the grid's z (the batch).
  void launch_checked(Stream stream, const std::vector<DevicePtr>& args, std::uint32_t grid_z) const;

  std::shared_ptr<const LoadedModule> module_;
  KernelInfo info_;
  Problem problem_;
  bool band_ = true;
};

/// Per-call overrides; empty fields use the environment (docs/configuration.md).
struct Options {
  std::string arch;       ///< target, e.g. "sm_90"; default: the current device's
  std::string cache_dir;  ///< default: $BANDJIT_CACHE_DIR, $XDG_CACHE_HOME/bandjit, ~/.cache/bandjit
  bool disk_cache = true;
};

/// The families get_kernel knows, by name: the band families ("band_qk", "band_softmax",
/// "band_pv", "band_tpv", "band_softmax_backward", "sliding_window_attention") and those of other parameter sets
/// (family_infos() in <bandjit/family.hpp> gives their parameters). The composed backward
/// is in <bandjit/backward.hpp>.
std::vector<std::string> families();

/// Returns the kernel of `family` for `problem` on the current device: from memory, else
/// from the disk cache, else generated and compiled with NVRTC (then stored). Concurrent
/// calls for one key compile once. Retains the primary context of device 0 when no
/// context is current. Throws Error: invalid_problem, compile_failed, driver_failed, io.
Kernel get_kernel(std::string_view family, const Problem& problem, const Options& options = {});

/// get_kernel for any family, by name, with its parameters as a JSON object (the band
/// families take the fields of SPEC §2). Unknown parameters, wrong types and out-of-range
/// values throw Error(invalid_problem) naming the family, the field and the allowed range;
/// so do a key repeated in one object and nesting more than 64 levels deep.
Kernel get_kernel(std::string_view family, std::string_view parameters_json, const Options& options = {});

/// Outcome of filling the disk cache for one kernel (no GPU needed).
struct PregenerateResult {
  Origin origin = Origin::compiled;  ///< disk = already cached, compiled = new entry
  std::string key_hash;
  double seconds = 0;
};

/// Makes sure the disk cache holds the kernel of `family` for `problem` and options.arch
/// (required when no GPU is present). Throws like get_kernel.
PregenerateResult pregenerate(std::string_view family, const Problem& problem,
                              const Options& options = {});
/// pregenerate for any family, parameters as for get_kernel(family, parameters_json).
PregenerateResult pregenerate(std::string_view family, std::string_view parameters_json,
                              const Options& options = {});

/// The generated CUDA source of one kernel (what `bandjit emit` prints). With
/// `standalone`, the templates it includes are inlined so it compiles on its own.
std::string emit_source(std::string_view family, const Problem& problem, bool standalone = false);
std::string emit_source(std::string_view family, std::string_view parameters_json, bool standalone = false);

/// Process-wide counters, for tests and `--verbose` summaries.
struct Stats {
  std::uint64_t memory_hits = 0;
  std::uint64_t disk_hits = 0;
  std::uint64_t compiles = 0;
  std::uint64_t corrupt_entries = 0;  ///< found on disk or in Redis, removed and rebuilt
  std::uint64_t disk_write_failures = 0;
  std::uint64_t untrusted_entries = 0;  ///< not read: another user could have written them
  std::uint64_t remote_hits = 0;        ///< entries that came from Redis
  std::uint64_t remote_failures = 0;    ///< Redis calls that failed or timed out (a miss each)
};
Stats stats();
void reset_stats();

}  // namespace bandjit
