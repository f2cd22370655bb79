// get_kernel, pregenerate and Kernel::launch: the pipeline Problem → Source → Cubin →
// Module → Kernel, with the memory and disk tiers between the stages.
#include <chrono>
#include <ctime>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include "bandjit/bandjit.hpp"
#include "bandjit/cache.hpp"
#include "cache/disk_cache.hpp"
#include "cache/memory_cache.hpp"
#include "generator/family_registry.hpp"
#include "runtime/compiler.hpp"
#include "runtime/config.hpp"
#include "runtime/kernel_cache.hpp"
#include "runtime/nvrtc_api.hpp"
#include "runtime/stats.hpp"

namespace bandjit {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

void init_logging() {
  static const bool done = [] {
    spdlog::set_level(spdlog::level::from_str(config::log_level()));
    return true;
  }();
  (void)done;
}

nlohmann::json make_manifest(const Source& source, const CacheKey& key, const std::string& arch, const Cubin& cubin) {
  return {
      {"key", key.document},
      {"key_hash", key.hash},
      {"family", source.family},
      {"kernel_name", source.kernel_name},
      {"problem", source.name.substr(0, source.name.rfind('.'))},
      {"arch", arch},
      {"registers", cubin.registers},
      {"shared_bytes", source.launch.shared_bytes},
      {"threads", source.launch.block[0] * source.launch.block[1] * source.launch.block[2]},
      {"grid", {source.launch.grid[0], source.launch.grid[1], source.launch.grid[2]}},
      {"nvrtc_log", cubin.log},
      {"compile_ms", cubin.compile_ms},
      {"created", static_cast<std::int64_t>(std::time(nullptr))},
  };
}

Tuning tuning() {
  Tuning t;
  t.tile_rows = config::tile_rows_override();
  t.tile_diagonals = config::tile_diagonals_override();
  return t;
}

MemoryCache<std::shared_ptr<const LoadedModule>>& modules() {
  static MemoryCache<std::shared_ptr<const LoadedModule>> cache;
  return cache;
}

}  // namespace

std::string cache_directory(const std::string& override_dir) {
  return override_dir.empty() ? config::cache_dir() : override_dir;
}

std::uint64_t cache_max_bytes() { return config::cache_max_bytes(); }

CacheKey cache_key_of(const Source& source, const std::string& arch) {
  validate_arch(arch);
  return make_cache_key(source, arch, compile_options(arch), nvrtc().version);
}

ObtainedEntry obtain_entry(const Source& source, const CacheKey& key, const std::string& arch,
                           const Options& options, bool store_must_succeed) {
  init_logging();
  DiskCache disk(cache_directory(options.cache_dir), config::cache_max_bytes());
  if (options.disk_cache) {
    if (auto entry = disk.get(key)) {
      counters().disk_hits++;
      return {std::move(*entry), key.hash, Origin::disk};
    }
  }
  const Cubin cubin = compile(source, arch);
  ObtainedEntry out{{make_manifest(source, key, arch, cubin), cubin.image}, key.hash, Origin::compiled};
  if (options.disk_cache) {
    try {
      disk.put(key, out.entry);
    } catch (const Error& e) {
      counters().disk_write_failures++;
      if (store_must_succeed) throw;
      spdlog::warn("bandjit: kernel compiled but not cached: {}", e.message());
    }
  }
  return out;
}

std::shared_ptr<const LoadedModule> obtain_module(const Source& source, const Options& options, KernelInfo* info) {
  const auto started = Clock::now();
  CUcontext ctx = ensure_context();
  const std::string arch = options.arch.empty() ? current_arch() : options.arch;
  // The memory key needs the disk key; computing it costs a SHA-256 of the source (µs).
  const CacheKey key = cache_key_of(source, arch);
  Origin origin = Origin::memory;
  auto result = modules().get_or_create(fmt::format("{}@{}", key.hash, static_cast<const void*>(ctx)), [&] {
    auto obtained = obtain_entry(source, key, arch, options, false);
    origin = obtained.origin;
    return load_module(obtained.entry.cubin, source.kernel_name, source.launch);
  });
  if (result.hit) counters().memory_hits++;
  if (info) {
    info->family = source.family;
    info->kernel_name = source.kernel_name;
    info->key_hash = key.hash;
    info->arch = arch;
    for (int d = 0; d < 3; ++d) {
      info->grid[d] = source.launch.grid[d];
      info->block[d] = source.launch.block[d];
    }
    info->shared_bytes = source.launch.shared_bytes;
    int regs = -1;
    if (driver().cuFuncGetAttribute(&regs, CU_FUNC_ATTRIBUTE_NUM_REGS, result.value->function()) == CUDA_SUCCESS)
      info->registers = regs;
    info->arguments = source.arguments;
    info->origin = result.hit ? Origin::memory : origin;
    info->seconds = seconds_since(started);
  }
  return result.value;
}

std::vector<std::string> families() {
  std::vector<std::string> names;
  for (const auto& f : all_families()) names.push_back(f.name);
  return names;
}

Kernel get_kernel(std::string_view family, const Problem& problem, const Options& options) {
  const Source source = find_family(family).generate(problem, tuning());
  KernelInfo info;
  auto module = obtain_module(source, options, &info);
  return Kernel(std::move(module), std::move(info), problem);
}

PregenerateResult pregenerate(std::string_view family, const Problem& problem, const Options& options) {
  const auto started = Clock::now();
  const Source source = find_family(family).generate(problem, tuning());
  std::string arch = options.arch;
  if (arch.empty()) {
    if (!gpu_available())
      throw Error(ErrorKind::usage, "no GPU found to take the target from; pass the target (--arch sm_90)");
    ensure_context();
    arch = current_arch();
  }
  Options opts = options;
  opts.disk_cache = true;
  const auto obtained = obtain_entry(source, cache_key_of(source, arch), arch, opts, true);
  return {obtained.origin, obtained.key_hash, seconds_since(started)};
}

std::string emit_source(std::string_view family, const Problem& problem, bool standalone) {
  const Source source = find_family(family).generate(problem, tuning());
  return standalone ? standalone_text(source) : source.text;
}

Kernel::Kernel(std::shared_ptr<const LoadedModule> module, KernelInfo info, Problem problem)
    : module_(std::move(module)), info_(std::move(info)), problem_(std::move(problem)) {}

void Kernel::launch(Stream stream, std::initializer_list<DevicePtr> args) const {
  launch(stream, std::vector<DevicePtr>(args));
}

void Kernel::launch(Stream stream, const std::vector<DevicePtr>& args) const {
  launch(stream, args, problem_.batch);
}

void Kernel::launch(Stream stream, const std::vector<DevicePtr>& args, std::int64_t batch) const {
  if (!problem_.runtime_batch && batch != problem_.batch)
    throw Error(ErrorKind::usage, fmt::format("{}: batch {} was baked into this kernel; it launches only batch {} "
                                              "(generate the problem with runtime_batch for any batch)",
                                              info_.family, batch, problem_.batch));
  const std::int64_t max_batch =
      std::min<std::int64_t>(Limits::max_batch, Limits::max_rows / (problem_.heads * problem_.seq_len));
  if (batch < 1 || batch > max_batch)
    throw Error(ErrorKind::usage, fmt::format("{}: batch {} is out of range: 1 … {} (Limits::max_batch and "
                                              "batch × heads × seq_len ≤ Limits::max_rows)",
                                              info_.family, batch, max_batch));
  if (args.size() != info_.arguments.size())
    throw Error(ErrorKind::usage,
                fmt::format("{} takes {} device pointers ({}), got {}", info_.family, info_.arguments.size(),
                            fmt::join(info_.arguments, ", "), args.size()));
  for (std::size_t a = 0; a < args.size(); ++a) {
    const std::uint64_t align = info_.arguments[a] == "mask" ? 4 : 16;
    if (args[a].address == 0 || args[a].address % align != 0)
      throw Error(ErrorKind::usage, fmt::format("{}: argument {} ({}) must be a non-null device pointer aligned to {} bytes",
                                                info_.family, a, info_.arguments[a], align));
  }
  CUcontext current = nullptr;
  check_cuda(driver().cuCtxGetCurrent(&current), "cuCtxGetCurrent");
  if (current != module_->context())
    throw Error(ErrorKind::usage, "the kernel was loaded in another CUDA context; call get_kernel in this one");
  std::vector<CUdeviceptr> values(args.size());
  std::vector<void*> params(args.size());
  for (std::size_t a = 0; a < args.size(); ++a) {
    values[a] = static_cast<CUdeviceptr>(args[a].address);
    params[a] = &values[a];
  }
  module_->launch(reinterpret_cast<CUstream>(stream), params.data(), static_cast<std::uint32_t>(batch));
}

}  // namespace bandjit
