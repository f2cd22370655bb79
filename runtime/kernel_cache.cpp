// The tiers between Source and Cubin: disk, Redis, NVRTC, and who builds a missing key.
#include "runtime/kernel_cache.hpp"

#include <ctime>
#include <mutex>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "bandjit/cache.hpp"
#include "cache/disk_cache.hpp"
#include "cache/redis_tier.hpp"
#include "runtime/compiler.hpp"
#include "runtime/config.hpp"
#include "runtime/driver_api.hpp"
#include "runtime/nvrtc_api.hpp"
#include "runtime/stats.hpp"

namespace bandjit {
namespace {

// How long a process waits for another one of its host that builds the same key; NVRTC
// takes seconds, and a dead holder frees the lock at once.
constexpr auto kLockPatience = std::chrono::minutes(5);

void init_logging() {
  static const bool done = [] {
    spdlog::set_level(spdlog::level::from_str(config::log_level()));
    return true;
  }();
  (void)done;
}

nlohmann::json make_manifest(const Source& source, const CacheKey& key, const std::string& arch, const Cubin& cubin) {
  const LaunchShape launch = launch_for(source, arch);  // the arch-specific build's, where it has one
  return {
      {"key", key.document},
      {"key_hash", key.hash},
      {"family", source.family},
      {"kernel_name", source.kernel_name},
      {"problem", source.name.substr(0, source.name.rfind('.'))},
      {"arch", arch},
      {"registers", cubin.registers},
      {"shared_bytes", launch.shared_bytes},
      {"threads", launch.block[0] * launch.block[1] * launch.block[2]},
      {"grid", {launch.grid[0], launch.grid[1], launch.grid[2]}},
      {"nvrtc_log", cubin.log},
      {"compile_ms", cubin.compile_ms},
      {"created", static_cast<std::int64_t>(std::time(nullptr))},
  };
}

}  // namespace

Tuning current_tuning() {
  Tuning t;
  t.tile_rows = config::tile_rows_override();
  t.tile_diagonals = config::tile_diagonals_override();
  t.row_pieces = config::row_tuning("BANDJIT_ROW_PIECES", {1, 2, 4, 8});
  t.row_registers = config::row_tuning("BANDJIT_ROW_REGISTERS", {16, 32, 64});
  t.row_block_threads = config::row_tuning("BANDJIT_ROW_BLOCK_THREADS", {128, 256, 512, 1024});
  t.row_waves = config::row_tuning("BANDJIT_ROW_WAVES", {1, 2, 4, 8, 16});
  t.row_prefetch = config::row_switch("BANDJIT_ROW_PREFETCH");
  t.row_register_sums = config::row_switch("BANDJIT_ROW_REGISTER_SUMS");
  t.row_staged = config::row_switch("BANDJIT_ROW_STAGED");
  t.row_held = config::row_switch("BANDJIT_ROW_HELD");
  t.row_bundle = config::row_switch("BANDJIT_ROW_BUNDLE");
  t.row_hold_weights = config::row_switch("BANDJIT_ROW_HOLD_WEIGHTS");
  t.row_pairs = config::row_switch("BANDJIT_ROW_PAIRS");
  t.row_weight_ahead = config::row_count("BANDJIT_ROW_WEIGHT_AHEAD", {0, 1, 2, 4, 8});
  t.row_vec_bytes = config::row_tuning("BANDJIT_ROW_VEC_BYTES", {4, 8, 16});
  t.row_weight_ring = config::row_count("BANDJIT_ROW_WEIGHT_RING", {0, 2, 3, 4, 5, 6, 7, 8});
  t.row_overlap = config::row_switch("BANDJIT_ROW_OVERLAP");
  t.row_stages = config::row_tuning("BANDJIT_ROW_STAGES", {2, 3, 4, 5, 6, 7, 8});
  const auto tpv = config::tpv_tiling_override();
  t.tpv_tile_rows = tpv[0];
  t.tpv_slab_rows = tpv[1];
  t.tpv_stages = tpv[2];
  t.tpv_row_tiles = config::row_tuning("BANDJIT_TPV_ROW_TILES", {1, 2});
  t.tpv_wgmma = config::row_switch("BANDJIT_TPV_WGMMA");
  t.pv_wgmma = config::row_switch("BANDJIT_PV_WGMMA");
  t.qk_wgmma = config::row_switch("BANDJIT_QK_WGMMA");
  const auto pv = config::pv_wgmma_tiling_override();
  t.pv_wgmma_slab_keys = pv[0];
  t.pv_wgmma_stages = pv[1];
  t.pv_whole_rows = config::row_switch("BANDJIT_PV_WHOLE_ROWS");
  t.attention_tile_rows = config::row_tuning("BANDJIT_ATTENTION_TILE_ROWS", {64, 128});
  t.attention_key_tile = config::row_tuning("BANDJIT_ATTENTION_KEY_TILE", {32, 64, 128});
  t.attention_wgmma = config::row_switch("BANDJIT_ATTENTION_WGMMA");
  return t;
}

std::string resolve_arch(const Options& options) {
  if (!options.arch.empty()) return options.arch;
  if (!gpu_available())
    throw Error(ErrorKind::usage, "no GPU found to take the target from; pass the target (--arch sm_90)");
  ensure_context();
  return current_arch();
}

CacheKey cache_key_of(const Source& source, const std::string& arch) {
  validate_arch(arch);
  return make_cache_key(source, arch, compile_options(arch, source.arch_specific), nvrtc().version);
}

std::shared_ptr<RedisTier> redis_tier() {
  static std::mutex mutex;
  static std::string url_of_tier;
  static std::shared_ptr<RedisTier> tier;
  const std::string url = config::redis_url();
  std::lock_guard<std::mutex> lock(mutex);
  if (url != url_of_tier || (!tier && !url.empty())) {  // tests change the environment
    tier = url.empty() ? nullptr
                       : std::make_shared<RedisTier>(parse_redis_url(url),
                                                     std::chrono::milliseconds(config::redis_timeout_ms()));
    url_of_tier = url;
  }
  return tier;
}

ObtainedEntry obtain_entry(const Source& source, const CacheKey& key, const std::string& arch,
                           const Options& options, bool store_must_succeed) {
  init_logging();
  const DiskCache disk(cache_directory(options.cache_dir), config::cache_max_bytes());
  auto from_disk = [&]() -> std::optional<ObtainedEntry> {
    if (!options.disk_cache) return std::nullopt;
    auto entry = disk.get(key);
    if (!entry) return std::nullopt;
    counters().disk_hits++;
    return ObtainedEntry{std::move(*entry), key.hash, Origin::disk};
  };
  auto store_on_disk = [&](const CacheEntry& entry) {
    if (!options.disk_cache) return;
    try {
      disk.put(key, entry);
    } catch (const Error& e) {
      counters().disk_write_failures++;
      if (store_must_succeed) throw;
      spdlog::warn("bandjit: kernel obtained but not cached on disk: {}", e.message());
    }
  };
  auto from_remote = [&](CacheEntry entry) {
    store_on_disk(entry);
    return ObtainedEntry{std::move(entry), key.hash, Origin::remote};
  };

  if (auto hit = from_disk()) return std::move(*hit);
  const auto remote = redis_tier();
  if (remote) {
    if (auto entry = remote->get(key)) return from_remote(std::move(*entry));
  }
  // A miss everywhere: one builder per host (file lock), then one per fleet (Redis lock);
  // the others pick up its entry.
  const FileLock local = options.disk_cache ? disk.lock(key.hash, kLockPatience) : FileLock();
  if (auto hit = from_disk()) return std::move(*hit);
  RedisTier::Claim claim;
  if (remote) {
    claim = remote->claim(key);
    if (claim.entry) return from_remote(std::move(*claim.entry));
  }
  struct Release {
    RedisTier* tier;
    const CacheKey& key;
    const RedisTier::Claim& claim;
    ~Release() {
      if (tier && claim.mine) tier->release(key, claim.token);
    }
  } release{remote.get(), key, claim};
  const Cubin cubin = compile(source, arch);
  ObtainedEntry out{{make_manifest(source, key, arch, cubin), cubin.image}, key.hash, Origin::compiled};
  if (remote) remote->put(key, out.entry);
  store_on_disk(out.entry);
  return out;
}

MemoryCache<std::shared_ptr<const LoadedModule>>& module_cache() {
  static MemoryCache<std::shared_ptr<const LoadedModule>> cache;
  return cache;
}

std::string module_cache_key(const std::string& key_hash, const void* context) {
  return fmt::format("{}@{}", key_hash, context);
}

}  // namespace bandjit
