// Bundles: export (entries of a list of kernels → one file), import (file → disk cache) and
// load (file → this process's memory tier).
#include "runtime/bundles.hpp"

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <exception>
#include <mutex>
#include <set>
#include <thread>

#include <fmt/format.h>

#include "bandjit/bundle.hpp"
#include "bandjit/cache.hpp"
#include "cache/atomic_file.hpp"
#include "cache/disk_cache.hpp"
#include "cache/sha256.hpp"
#include "cache/trust.hpp"
#include "generator/family_registry.hpp"
#include "runtime/compiler.hpp"
#include "runtime/driver_api.hpp"
#include "runtime/kernel_cache.hpp"
#include "runtime/nvrtc_api.hpp"

namespace bandjit {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// A bundle is code that will run: the same trust rule as a cache entry.
void require_trusted_bundle(const std::string& path) {
  if (const std::string why = untrusted_path_reason(path); !why.empty())
    throw Error(ErrorKind::io,
                fmt::format("refusing bundle {}: it is {}, so another user could have replaced its kernels", path, why),
                {{"path", path}, {"reason", why}});
}

nlohmann::json parameters_of(const BundleKernel& k) {
  if (k.parameters.empty()) validate(k.problem);
  return find_family(k.family).canonical(k.parameters.empty() ? nlohmann::json::parse(to_json(k.problem))
                                                               : nlohmann::json::parse(k.parameters));
}

}  // namespace

Bundle read_bundle(const std::string& path, std::string* sha256, std::uint64_t* bytes) {
  require_trusted_bundle(path);
  std::string data;
  if (!read_file(path, data))
    throw Error(ErrorKind::io, fmt::format("cannot read bundle {}: {}", path, std::strerror(errno)), {{"path", path}});
  if (sha256) *sha256 = sha256_hex(data);
  if (bytes) *bytes = data.size();
  return parse_bundle(data, path);
}

std::vector<MatchedKernel> match_bundle(const Bundle& bundle, const std::string& path, const std::string& arch) {
  std::vector<MatchedKernel> matched;
  for (std::size_t i = 0; i < bundle.kernels.size(); ++i) {
    const auto& k = bundle.kernels[i];
    const Family& family = find_family(k.family);
    MatchedKernel m{family.generate(k.problem, current_tuning()), {}, &k.entry};
    m.key = cache_key_of(m.source, arch);
    if (m.key.hash != k.key_hash)
      throw Error(ErrorKind::invalid_problem,
                  fmt::format("bundle {}: kernel {} ({} {}) was made by a bandjit build whose generator, templates or "
                              "tuning (BANDJIT_TILE_*, BANDJIT_ROW_*, BANDJIT_TPV_*) differ from this one's (key {} there, {} here); export the "
                              "bundle again with this build",
                              path, i, k.family, family.slug(family.canonical(k.problem)), k.key_hash.substr(0, 16), m.key.hash.substr(0, 16)),
                  {{"path", path}, {"kernel", std::to_string(i)}});
    matched.push_back(std::move(m));
  }
  return matched;
}

BundleReport export_bundle(const std::string& path, const std::vector<BundleKernel>& kernels, const Options& options,
                           unsigned workers) {
  const auto started = Clock::now();
  const std::string arch = resolve_arch(options);
  if (options.disk_cache) ensure_writable_directory(cache_directory(options.cache_dir));  // refuse it before work
  struct Job {
    Source source;
    CacheKey key;
    const BundleKernel* kernel;
  };
  std::vector<Job> jobs;
  std::set<std::string> seen;
  for (const auto& k : kernels) {
    Source source = find_family(k.family).generate(parameters_of(k), current_tuning());
    CacheKey key = cache_key_of(source, arch);
    if (seen.insert(key.hash).second) jobs.push_back({std::move(source), std::move(key), &k});
  }
  std::vector<ObtainedEntry> obtained(jobs.size());
  std::atomic<std::size_t> next{0};
  std::mutex failure_mutex;
  std::exception_ptr failure;
  auto work = [&] {
    for (std::size_t i = next++; i < jobs.size(); i = next++) {
      try {
        obtained[i] = obtain_entry(jobs[i].source, jobs[i].key, arch, options, false);
      } catch (...) {
        std::lock_guard<std::mutex> lock(failure_mutex);
        if (!failure) failure = std::current_exception();
        next = jobs.size();  // one failure fails the bundle: stop early
      }
    }
  };
  std::vector<std::thread> pool;
  for (unsigned w = 0; w < std::max(1u, std::min<unsigned>(workers, jobs.size())); ++w) pool.emplace_back(work);
  for (auto& t : pool) t.join();
  if (failure) std::rethrow_exception(failure);

  Bundle bundle;
  bundle.arch = arch;
  bundle.nvrtc = nvrtc().version;
  bundle.generator = kGeneratorVersion;
  bundle.bandjit_version = BANDJIT_VERSION;
  bundle.created = static_cast<std::int64_t>(std::time(nullptr));
  BundleReport report;
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    report.compiled += obtained[i].origin == Origin::compiled;
    bundle.kernels.push_back({jobs[i].kernel->family, parameters_of(*jobs[i].kernel),
                              jobs[i].key.hash, std::move(obtained[i].entry)});
  }
  const std::string bytes = serialize_bundle(bundle);
  write_file_atomically(path, bytes);
  report.path = path;
  report.arch = bundle.arch;
  report.nvrtc = bundle.nvrtc;
  report.sha256 = sha256_hex(bytes);
  report.kernels = bundle.kernels.size();
  report.bytes = bytes.size();
  report.seconds = seconds_since(started);
  return report;
}

BundleReport import_bundle(const std::string& path, const std::string& cache_dir, const std::string& arch) {
  const auto started = Clock::now();
  BundleReport report;
  report.path = path;
  const Bundle bundle = read_bundle(path, &report.sha256, &report.bytes);
  std::string target = arch;
  if (!target.empty()) {
    validate_arch(target);
  } else if (gpu_available()) {
    ensure_context();
    target = current_arch();
  }
  check_bundle_target(bundle, path, target, nvrtc().version);
  const std::string dir = cache_directory(cache_dir);
  ensure_writable_directory(dir);
  const DiskCache disk(dir, cache_max_bytes());
  for (const auto& k : bundle.kernels) {
    const CacheKey key{k.entry.manifest["key"], k.key_hash};
    if (disk.get(key)) {
      ++report.present;
    } else {
      disk.put(key, k.entry);
      ++report.written;
    }
  }
  report.arch = bundle.arch;
  report.nvrtc = bundle.nvrtc;
  report.kernels = bundle.kernels.size();
  report.seconds = seconds_since(started);
  return report;
}

BundleReport load_bundle(const std::string& path) {
  const auto started = Clock::now();
  if (!gpu_available())
    throw Error(ErrorKind::driver_failed, fmt::format("loading bundle {} needs a GPU: no CUDA driver or device found", path));
  CUcontext ctx = ensure_context();
  const std::string arch = current_arch();
  BundleReport report;
  report.path = path;
  const Bundle bundle = read_bundle(path, &report.sha256, &report.bytes);
  check_bundle_target(bundle, path, arch, nvrtc().version);
  for (const auto& m : match_bundle(bundle, path, arch))
    module_cache().get_or_create(module_cache_key(m.key.hash, ctx), [&] {
      return load_module(m.entry->cubin, m.source.kernel_name, launch_for(m.source, arch));
    });
  report.arch = bundle.arch;
  report.nvrtc = bundle.nvrtc;
  report.kernels = bundle.kernels.size();
  report.seconds = seconds_since(started);
  return report;
}

}  // namespace bandjit
