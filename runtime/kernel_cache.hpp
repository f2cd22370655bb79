// The lookup order memory → disk → NVRTC, shared by get_kernel, pregenerate and the
// helper kernels of `check`.
#pragma once

#include <memory>
#include <string>

#include "bandjit/bandjit.hpp"
#include "cache/entry_format.hpp"
#include "cache/key.hpp"
#include "generator/source.hpp"
#include "runtime/module.hpp"

namespace bandjit {

struct ObtainedEntry {
  CacheEntry entry;
  std::string key_hash;
  Origin origin = Origin::compiled;
};

/// The cache key of `source` for `arch` (validates the arch).
CacheKey cache_key_of(const Source& source, const std::string& arch);

/// The cache entry of `source` under `key`: from disk, else compiled for `arch` and stored
/// (no GPU needed). A failed store throws when `store_must_succeed`, else warns.
ObtainedEntry obtain_entry(const Source& source, const CacheKey& key, const std::string& arch,
                           const Options& options, bool store_must_succeed);

/// The module of `source` in the current context: memory → disk → NVRTC.
std::shared_ptr<const LoadedModule> obtain_module(const Source& source, const Options& options, KernelInfo* info);

}  // namespace bandjit
