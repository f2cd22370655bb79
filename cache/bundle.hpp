// A bundle: the cache entries of a deployment in one file, for one arch and NVRTC.
// Grammar (all integers little-endian):
//
//   bundle       := magic version index_size index index_sha256 entry*
//   magic        := "BJKBUNDL"                       8 bytes
//   version      := u32                              kBundleFormatVersion
//   index_size   := u64
//   index        := UTF-8 JSON object: arch, nvrtc, generator, entry_format, bandjit,
//                   created (unix seconds), kernels: [{family, problem (the problem's
//                   canonical JSON), key_hash, offset, size, sha256}]
//   index_sha256 := SHA-256 of every byte before it (32 bytes)
//   entry        := one cache entry file exactly as on disk (cache/entry_format.hpp);
//                   kernel i's entry is `size` bytes at `offset` (counted from the end of
//                   index_sha256) with SHA-256 `sha256`; entries are back to back and end
//                   the file
//
// A bundle is checked as a whole before any of it is used: one flipped bit anywhere
// rejects it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "cache/entry_format.hpp"

namespace bandjit {

inline constexpr std::uint32_t kBundleFormatVersion = 1;

struct BundledKernel {
  std::string family;
  nlohmann::json problem;  ///< canonical parameters (band families: the Problem's to_json)
  std::string key_hash;
  CacheEntry entry;
};

struct Bundle {
  std::string arch;
  std::string nvrtc;
  int generator = 0;
  std::string bandjit_version;
  std::int64_t created = 0;
  std::vector<BundledKernel> kernels;
};

std::string serialize_bundle(const Bundle& bundle);

/// The bundle in `bytes`, every checksum verified, each entry's key document hashing to
/// its key_hash and made for the bundle's arch and NVRTC. Throws Error(io) naming `path`
/// and the defect ("index checksum mismatch", "kernel 3 (band_qk …): checksum mismatch").
Bundle parse_bundle(std::string_view bytes, const std::string& path);

/// Throws Error(invalid_problem) naming the bundle's target and this one's when they
/// differ. An empty `arch` accepts any arch.
void check_bundle_target(const Bundle& bundle, const std::string& path, const std::string& arch,
                         const std::string& nvrtc);

}  // namespace bandjit
