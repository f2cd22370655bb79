// bandjit cache list|stats|verify|prune|clear (export and import: cmd_cache_bundle.cpp)
#include <ctime>
#include <iostream>

#include <fmt/format.h>

#include "bandjit/cache.hpp"
#include "bandjit/errors.hpp"
#include "runtime/config.hpp"
#include "tools/cli_common.hpp"

namespace bandjit::cli {
namespace {

std::string when(std::int64_t unix_seconds) {
  char text[32];
  const std::time_t t = static_cast<std::time_t>(unix_seconds);
  std::strftime(text, sizeof(text), "%Y-%m-%d %H:%M:%S", std::localtime(&t));
  return text;
}

std::string human(std::uint64_t bytes) {
  if (bytes >= (1ull << 30)) return fmt::format("{:.1f} GiB", bytes / double(1ull << 30));
  if (bytes >= (1ull << 20)) return fmt::format("{:.1f} MiB", bytes / double(1ull << 20));
  if (bytes >= (1ull << 10)) return fmt::format("{:.1f} KiB", bytes / double(1ull << 10));
  return fmt::format("{} B", bytes);
}

}  // namespace

void add_cache(CLI::App& app, int& exit_code) {
  auto dir = std::make_shared<std::string>();
  auto* cache = app.add_subcommand("cache", "Inspect and maintain the disk cache");
  cache->require_subcommand(1);
  cache->fallthrough();  // `cache list --cache-dir D` as well as `cache --cache-dir D list`
  cache->add_option("--cache-dir", *dir, "Cache directory (default: $BANDJIT_CACHE_DIR, ~/.cache/bandjit)");

  auto* list = cache->add_subcommand("list", "One line per entry, most recently used first");
  list->callback([dir, &exit_code] {
    const auto entries = list_cache(cache_directory(*dir));
    for (const auto& e : entries)
      std::cout << fmt::format("{}  {:<12} {:<6} {:>9}  {}  {}{}\n", e.key_hash.substr(0, 16), e.family, e.arch,
                               human(e.bytes), when(e.last_used), e.valid ? e.problem : "",
                               e.valid ? "" : "INVALID: " + e.defect);
    std::cout << fmt::format("{} entries in {}\n", entries.size(), cache_directory(*dir));
    exit_code = kOk;
  });

  auto* stats = cache->add_subcommand("stats", "Entries, bytes, cap, invalid entries, unfinished writes");
  stats->callback([dir, &exit_code] {
    const auto s = summarize_cache(cache_directory(*dir));
    std::cout << fmt::format("directory    {}\nentries      {}\nsize         {} ({} bytes)\ncap          {}\n"
                             "invalid      {}\ntemp files   {}\n",
                             s.dir, s.entries, human(s.bytes), s.bytes, human(s.max_bytes), s.invalid, s.temp_files);
    exit_code = kOk;
  });

  auto remove = std::make_shared<bool>(false);
  auto* verify = cache->add_subcommand(
      "verify", "Check every entry (exit 1 while invalid entries remain; 6 if --remove could not delete a file)");
  verify->add_flag("--remove", *remove, "Delete invalid entries, stale temp files and unheld stale locks");
  verify->callback([dir, remove, &exit_code] {
    const auto r = verify_cache(cache_directory(*dir), *remove);
    std::uint64_t remaining = 0;
    for (const auto& e : r.invalid) {
      remaining += !e.removed;
      std::cout << fmt::format("invalid {}: {}{}\n", e.path, e.defect,
                               !*remove ? "" : e.removed ? " (removed)" : " (NOT removed)");
    }
    for (const auto& f : r.failures) std::cerr << "bandjit: could not remove " << f << "\n";
    std::cout << fmt::format("verify: {} valid, {} invalid{}\n", r.valid, r.invalid.size(),
                             *remove ? fmt::format(", {} stale temp files removed", r.stale_temp_removed) : "");
    exit_code = !r.failures.empty() ? static_cast<int>(ErrorKind::io) : remaining ? kFailed : kOk;
  });

  auto max_size = std::make_shared<std::string>();
  auto* prune = cache->add_subcommand("prune", "Evict least-recently-used entries down to a size");
  prune->add_option("--max-size", *max_size, "Target size, e.g. 500M (default: $BANDJIT_CACHE_MAX_SIZE or 2G)");
  prune->callback([dir, max_size, &exit_code] {
    const auto cap = max_size->empty() ? cache_max_bytes() : config::parse_size(*max_size, "--max-size");
    const auto r = prune_cache(cache_directory(*dir), cap);
    std::cout << fmt::format("prune: removed {} entries, {} → {}\n", r.removed, human(r.bytes_before),
                             human(r.bytes_after));
    for (const auto& f : r.failures) std::cerr << "bandjit: could not remove " << f << "\n";
    exit_code = r.failures.empty() ? kOk : static_cast<int>(ErrorKind::io);
  });

  auto* clear = cache->add_subcommand("clear", "Remove every entry");
  clear->callback([dir, &exit_code] {
    std::cout << fmt::format("clear: removed {} files\n", clear_cache(cache_directory(*dir)));
    exit_code = kOk;
  });

  add_cache_bundle(*cache, dir, exit_code);
}

}  // namespace bandjit::cli
