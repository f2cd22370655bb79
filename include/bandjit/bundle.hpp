// bandjit/bundle.hpp — the kernels of a deployment in one file (docs/deployment.md): made
// once on a build machine (no GPU needed), copied to every node, loaded at start-up
// without compiling.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "bandjit/bandjit.hpp"

namespace bandjit {

/// One kernel of a bundle: a band family and its problem, or any family with its
/// parameters as JSON (`parameters`, used when not empty).
struct BundleKernel {
  std::string family;
  Problem problem;
  std::string parameters;
};

struct BundleReport {
  std::string path;
  std::string arch;
  std::string nvrtc;
  std::string sha256;          ///< of the whole bundle file
  std::uint64_t kernels = 0;
  std::uint64_t bytes = 0;     ///< size of the bundle file
  std::uint64_t compiled = 0;  ///< export: kernels NVRTC compiled for it (not found in a cache)
  std::uint64_t written = 0;   ///< import: entries written to the disk cache
  std::uint64_t present = 0;   ///< import: entries the disk cache already held
  double seconds = 0;
};

/// Writes a bundle of `kernels` for options.arch (default: the current GPU's), taking each
/// entry from the disk cache, Redis or NVRTC (then cached), with up to `workers` compiles
/// at once. The file is published atomically. Throws like pregenerate; Error(io) when the
/// bundle cannot be written.
BundleReport export_bundle(const std::string& path, const std::vector<BundleKernel>& kernels,
                           const Options& options = {}, unsigned workers = 1);

/// Checks the whole bundle (every checksum), then writes its entries to the disk cache of
/// `cache_dir` (default: the configured one). Refuses (Error invalid_problem, naming both)
/// a bundle made with another NVRTC than the loaded one, or for another arch than `arch`
/// (default: the current GPU's; any without a GPU). Error(io) for a damaged bundle.
BundleReport import_bundle(const std::string& path, const std::string& cache_dir = "", const std::string& arch = "");

/// Loads every kernel of the bundle into the current device's memory tier, so get_kernel
/// finds them there: no compile, no disk cache. Refuses a bundle for another arch or
/// NVRTC, or whose keys this build would not compute (another generator or tuning), with
/// Error(invalid_problem); Error(io) for a damaged bundle; needs a GPU.
BundleReport load_bundle(const std::string& path);

}  // namespace bandjit
