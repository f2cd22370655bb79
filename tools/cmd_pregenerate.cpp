// bandjit pregenerate --shapes FILE... [--arch sm_90] [-j N]: fill the disk cache, no GPU needed.
#include <atomic>
#include <filesystem>
#include <chrono>
#include <iostream>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#include "bandjit/errors.hpp"
#include "bandjit/cache.hpp"
#include "cache/atomic_file.hpp"
#include "cache/disk_cache.hpp"
#include "runtime/compiler.hpp"
#include "runtime/driver_api.hpp"
#include "tools/cli_common.hpp"

namespace bandjit::cli {
namespace {

struct PregenerateArgs {
  std::vector<std::string> shapes;
  std::vector<std::string> ops;
  std::string arch;
  std::string cache_dir;
  std::string json;
  int jobs = 0;
};

int run_pregenerate(const PregenerateArgs& args) {
  const auto jobs = jobs_from_shape_files(args.shapes, args.ops);
  // Fail once, before any work, on what would make every kernel fail.
  if (args.arch.empty() && !gpu_available())
    throw Error(ErrorKind::usage, "no GPU found to take the target from; pass the target (--arch sm_90)");
  if (!args.arch.empty()) validate_arch(args.arch);
  check_output_file(args.json);
  check_configuration();
  ensure_writable_directory(cache_directory(args.cache_dir));
  Options options;
  options.arch = args.arch;
  options.cache_dir = args.cache_dir;
  const unsigned workers = args.jobs > 0 ? static_cast<unsigned>(args.jobs) : std::max(1u, std::thread::hardware_concurrency());

  std::mutex print;
  std::atomic<std::size_t> next{0};
  std::atomic<int> compiled{0}, cached{0}, from_redis{0}, failed{0};
  // A write that failed (full disk, unwritable cache) fails every later kernel too: stop.
  std::atomic<bool> io_failed{false};
  std::string io_error;
  reset_stats();
  nlohmann::json rows = nlohmann::json::array();
  std::vector<nlohmann::json> results(jobs.size());
  const auto started = std::chrono::steady_clock::now();
  auto work = [&] {
    for (std::size_t idx = next++; idx < jobs.size() && !io_failed; idx = next++) {
      const Job& job = jobs[idx];
      nlohmann::json row = {{"family", job.family}, {"problem", job.slug}, {"file", job.file}};
      std::string line;
      try {
        const auto r = pregenerate(job.family, job.parameters, options);
        (r.origin == Origin::compiled ? compiled : cached)++;
        from_redis += r.origin == Origin::remote;
        const char* outcome = r.origin == Origin::compiled ? "compiled" : r.origin == Origin::remote ? "redis" : "cached";
        row["outcome"] = outcome;
        row["seconds"] = r.seconds;
        row["key_hash"] = r.key_hash;
        line = fmt::format("{:<8} {:<21} {}  {:.3f} s", outcome, job.family, job.slug, r.seconds);
      } catch (const Error& e) {
        failed++;
        if (e.kind() == ErrorKind::io && !io_failed.exchange(true)) {
          std::lock_guard<std::mutex> lock(print);
          io_error = e.what();
        }
        row["outcome"] = "failed";
        row["error"] = e.what();
        line = fmt::format("{:<8} {:<21} {}\n{}", "FAILED", job.family, job.slug, e.what());
      }
      std::lock_guard<std::mutex> lock(print);
      results[idx] = row;
      std::cout << fmt::format("[{:>4}/{}] {}\n", idx + 1, jobs.size(), line) << std::flush;
    }
  };
  std::vector<std::thread> pool;
  for (unsigned w = 0; w < std::min<std::size_t>(workers, jobs.size()); ++w) pool.emplace_back(work);
  for (auto& t : pool) t.join();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  // A size cap smaller than the list evicts what was just made: the job did not succeed.
  const DiskCache cache(cache_directory(args.cache_dir), 0);
  int evicted = 0;
  for (const auto& r : results)
    if (r.contains("key_hash") && !std::filesystem::exists(cache.path_of(r["key_hash"].get<std::string>()))) ++evicted;
  std::cout << fmt::format("pregenerate: {} kernels: {} compiled, {} loaded from cache, {} failed in {:.1f} s for {}{}\n",
                           jobs.size(), compiled.load(), cached.load(), failed.load(), seconds,
                           args.arch.empty() ? "this GPU" : args.arch,
                           from_redis ? fmt::format(" ({} of the loaded came from Redis)", from_redis.load()) : "");
  std::cout << fmt::format("pregenerate: cache directory {}\n", cache.dir());
  if (evicted)
    std::cout << fmt::format("pregenerate: the cache's size cap ({} bytes) already evicted {} of these kernels; "
                             "raise BANDJIT_CACHE_MAX_SIZE\n", cache_max_bytes(), evicted);
  if (!args.json.empty()) {
    for (auto& r : results) rows.push_back(r);
    write_json(args.json, {{"command", "pregenerate"},
                           {"environment", run_environment()},
                           {"arch", args.arch.empty() ? "current device" : args.arch},
                           {"workers", workers},
                           {"seconds", seconds},
                           {"compiled", compiled.load()},
                           {"cached", cached.load()},
                           {"from_redis", from_redis.load()},
                           {"nvrtc_compiles", stats().compiles},
                           {"redis_failures", stats().remote_failures},
                           {"failed", failed.load()},
                           {"evicted", evicted},
                           {"kernels", rows}});
  }
  if (io_failed)
    throw Error(ErrorKind::io, fmt::format("stopped: the cache could not be written, so the other kernels were "
                                           "not built; the entries already published are whole\n{}",
                                           io_error));
  return failed > 0 || evicted > 0 ? kFailed : kOk;
}

}  // namespace

void add_pregenerate(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<PregenerateArgs>();
  auto* cmd = app.add_subcommand("pregenerate", "Compile the kernels of shape files into the disk cache (no GPU needed)");
  cmd->add_option("--shapes", args->shapes, "Shape files (SPEC §6)")->required()->check(CLI::ExistingFile);
  cmd->add_option("--ops", args->ops, kOpsHelp);
  cmd->add_option("--arch", args->arch, "Target, e.g. sm_90 (default: the current GPU's)");
  cmd->add_option("-j,--jobs", args->jobs, "Parallel compiles (default: CPU count)")->check(CLI::Range(1, 256));
  cmd->add_option("--cache-dir", args->cache_dir, "Cache directory (default: $BANDJIT_CACHE_DIR, ~/.cache/bandjit)");
  cmd->add_option("--json", args->json, "Also write the results as JSON to this file");
  cmd->callback([args, &exit_code] { exit_code = run_pregenerate(*args); });
}

}  // namespace bandjit::cli
