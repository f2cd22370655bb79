// The lookup order memory → disk → Redis → NVRTC, shared by get_kernel, pregenerate, the
// bundles and the helper kernels of `check`.
#pragma once

#include <memory>
#include <string>

#include "bandjit/bandjit.hpp"
#include "cache/entry_format.hpp"
#include "cache/key.hpp"
#include "cache/memory_cache.hpp"
#include "generator/source.hpp"
#include "runtime/module.hpp"

namespace bandjit {

class RedisTier;

struct ObtainedEntry {
  CacheEntry entry;
  std::string key_hash;
  Origin origin = Origin::compiled;
};

/// The generator's tuning knobs from the environment (BANDJIT_TILE_ROWS, BANDJIT_TILE_DIAGONALS).
Tuning current_tuning();

/// The target of `options`, else the current GPU's; Error(usage) without either.
std::string resolve_arch(const Options& options);

/// The cache key of `source` for `arch` (validates the arch).
CacheKey cache_key_of(const Source& source, const std::string& arch);

/// The Redis tier of BANDJIT_REDIS_URL, or nullptr when it is unset. Throws Error(usage)
/// on a malformed URL or timeout.
std::shared_ptr<RedisTier> redis_tier();

/// The cache entry of `source` under `key`: from disk, else from Redis (then written to
/// disk), else compiled for `arch` (no GPU needed) and written to Redis and disk. Builds of
/// one key are serialized across the processes of a host (a file lock) and of a fleet (a
/// Redis lock). A failed disk store throws when `store_must_succeed`, else warns.
ObtainedEntry obtain_entry(const Source& source, const CacheKey& key, const std::string& arch,
                           const Options& options, bool store_must_succeed);

/// The memory tier: modules by "<key hash>@<context>".
MemoryCache<std::shared_ptr<const LoadedModule>>& module_cache();

/// The memory-tier name of a key in a context.
std::string module_cache_key(const std::string& key_hash, const void* context);

/// The module of `source` in the current context: memory → disk → Redis → NVRTC.
std::shared_ptr<const LoadedModule> obtain_module(const Source& source, const Options& options, KernelInfo* info);

}  // namespace bandjit
