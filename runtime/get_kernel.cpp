// get_kernel, pregenerate and Kernel::launch: the pipeline Problem → Source → Cubin →
// Module → Kernel, with the tiers of runtime/kernel_cache.hpp between the stages.
#include <chrono>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "bandjit/bandjit.hpp"
#include "bandjit/cache.hpp"
#include "generator/family_registry.hpp"
#include "generator/json_input.hpp"
#include "generator/problem_json.hpp"
#include "runtime/config.hpp"
#include "runtime/kernel_cache.hpp"
#include "runtime/stats.hpp"

namespace bandjit {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

}  // namespace

std::string cache_directory(const std::string& override_dir) {
  return override_dir.empty() ? config::cache_dir() : override_dir;
}

std::uint64_t cache_max_bytes() { return config::cache_max_bytes(); }

std::shared_ptr<const LoadedModule> obtain_module(const Source& source, const Options& options, KernelInfo* info) {
  const auto started = Clock::now();
  CUcontext ctx = ensure_context();
  const std::string arch = options.arch.empty() ? current_arch() : options.arch;
  // The memory key needs the disk key; computing it costs a SHA-256 of the source (µs).
  const CacheKey key = cache_key_of(source, arch);
  const LaunchShape launch = launch_for(source, arch);  // the arch-specific build may differ
  Origin origin = Origin::memory;
  auto result = module_cache().get_or_create(module_cache_key(key.hash, ctx), [&] {
    auto obtained = obtain_entry(source, key, arch, options, false);
    origin = obtained.origin;
    return load_module(obtained.entry.cubin, source.kernel_name, launch);
  });
  if (result.hit) counters().memory_hits++;
  if (info) {
    info->family = source.family;
    info->kernel_name = source.kernel_name;
    info->key_hash = key.hash;
    info->arch = arch;
    for (int d = 0; d < 3; ++d) {
      info->grid[d] = launch.grid[d];
      info->block[d] = launch.block[d];
    }
    info->shared_bytes = launch.shared_bytes;
    int regs = -1;
    if (driver().cuFuncGetAttribute(&regs, CU_FUNC_ATTRIBUTE_NUM_REGS, result.value->function()) == CUDA_SUCCESS)
      info->registers = regs;
    info->arguments = source.arguments;
    info->argument_alignment = source.argument_alignment;
    if (info->argument_alignment.size() != source.arguments.size()) {
      info->argument_alignment.clear();
      for (const auto& a : source.arguments) info->argument_alignment.push_back(a == "mask" ? 4 : 16);
    }
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
  const Source source = find_family(family).generate(problem, current_tuning());
  KernelInfo info;
  info.parameters = to_json(problem);
  auto module = obtain_module(source, options, &info);
  return Kernel(std::move(module), std::move(info), problem);
}

namespace {

nlohmann::json parse_parameters(std::string_view family, std::string_view text) {
  return parse_input_json(text, fmt::format("{} parameters", family), {{"family", std::string(family)}});
}

}  // namespace

Kernel get_kernel(std::string_view family, std::string_view parameters_json, const Options& options) {
  const Family& f = find_family(family);
  const nlohmann::json canonical = f.canonical(parse_parameters(family, parameters_json));
  if (f.is_band()) return get_kernel(family, problem_from_json(canonical, ""), options);
  const Source source = f.generate(canonical, current_tuning());
  KernelInfo info;
  info.parameters = canonical.dump();
  auto module = obtain_module(source, options, &info);
  return Kernel(std::move(module), std::move(info));
}

PregenerateResult pregenerate(std::string_view family, const Problem& problem, const Options& options) {
  validate(problem);  // before to_json, which folds a uniform dilation list into one value
  return pregenerate(family, to_json(problem), options);
}

PregenerateResult pregenerate(std::string_view family, std::string_view parameters_json, const Options& options) {
  const auto started = Clock::now();
  const Source source = find_family(family).generate(parse_parameters(family, parameters_json), current_tuning());
  const std::string arch = resolve_arch(options);
  Options opts = options;
  opts.disk_cache = true;
  const auto obtained = obtain_entry(source, cache_key_of(source, arch), arch, opts, true);
  return {obtained.origin, obtained.key_hash, seconds_since(started)};
}

std::string emit_source(std::string_view family, const Problem& problem, bool standalone) {
  validate(problem);
  return emit_source(family, to_json(problem), standalone);
}

std::string emit_source(std::string_view family, std::string_view parameters_json, bool standalone) {
  const Source source = find_family(family).generate(parse_parameters(family, parameters_json), current_tuning());
  return standalone ? standalone_text(source) : source.text;
}

Kernel::Kernel(std::shared_ptr<const LoadedModule> module, KernelInfo info, Problem problem)
    : module_(std::move(module)), info_(std::move(info)), problem_(std::move(problem)) {}

Kernel::Kernel(std::shared_ptr<const LoadedModule> module, KernelInfo info)
    : module_(std::move(module)), info_(std::move(info)), band_(false) {}

void Kernel::launch(Stream stream, std::initializer_list<DevicePtr> args) const {
  launch(stream, std::vector<DevicePtr>(args));
}

void Kernel::launch(Stream stream, const std::vector<DevicePtr>& args) const {
  if (band_) return launch(stream, args, problem_.batch);
  launch_checked(stream, args, 0);
}

void Kernel::launch_checked(Stream stream, const std::vector<DevicePtr>& args, std::uint32_t grid_z) const {
  check_arguments(args);
  std::vector<CUdeviceptr> values(args.size());
  std::vector<void*> params(args.size());
  for (std::size_t a = 0; a < args.size(); ++a) {
    values[a] = static_cast<CUdeviceptr>(args[a].address);
    params[a] = &values[a];
  }
  module_->launch(reinterpret_cast<CUstream>(stream), params.data(), grid_z);
}

void Kernel::check_arguments(const std::vector<DevicePtr>& args) const {
  if (args.size() != info_.arguments.size())
    throw Error(ErrorKind::usage,
                fmt::format("{} takes {} device pointers ({}), got {}", info_.family, info_.arguments.size(),
                            fmt::join(info_.arguments, ", "), args.size()));
  for (std::size_t a = 0; a < args.size(); ++a) {
    const std::uint64_t align = a < info_.argument_alignment.size() ? info_.argument_alignment[a] : 16;
    if (args[a].address == 0 || args[a].address % align != 0)
      throw Error(ErrorKind::usage, fmt::format("{}: argument {} ({}) must be a non-null device pointer aligned to {} bytes",
                                                info_.family, a, info_.arguments[a], align));
  }
  CUcontext current = nullptr;
  check_cuda(driver().cuCtxGetCurrent(&current), "cuCtxGetCurrent");
  // A thread with no context yet (a worker thread: PyTorch's autograd, a pool) gets the
  // kernel's, as the CUDA runtime makes the primary context current on first use.
  if (current == nullptr) {
    check_cuda(driver().cuCtxSetCurrent(module_->context()), "cuCtxSetCurrent");
    current = module_->context();
  }
  if (current != module_->context())
    throw Error(ErrorKind::usage, "the kernel was loaded in another CUDA context; call get_kernel in this one");
}

void Kernel::launch(Stream stream, const std::vector<DevicePtr>& args, std::int64_t batch) const {
  if (!band_)
    throw Error(ErrorKind::usage, fmt::format("{} takes no batch: its sizes are in its parameters", info_.family));
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
  launch_checked(stream, args, static_cast<std::uint32_t>(batch));
}

}  // namespace bandjit
