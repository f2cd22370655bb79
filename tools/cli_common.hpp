// Shared pieces of the `bandjit` subcommands.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "bandjit/bandjit.hpp"

namespace bandjit::cli {

/// Exit codes (docs/cli.md). Errors map through their ErrorKind.
enum ExitCode : int {
  kOk = 0,
  kFailed = 1,  ///< some kernel failed, mismatched the reference, or the cache holds bad entries
  kUsage = 2,
};

/// One (family, problem) of the shape files, de-duplicated, in file order. Composed
/// operations (attention_backward) contribute each kernel they launch, with its problem.
struct Job {
  std::string family;
  std::string parameters;  ///< canonical JSON (band: the problem's to_json)
  std::string slug;        ///< short name of the parameters, for output
  std::string file;
};
/// `ops`, when not empty, replaces every problem's "ops" (names and shorthands as there).
std::vector<Job> jobs_from_shape_files(const std::vector<std::string>& files, const std::vector<std::string>& ops = {});

/// The problems of shape files with their operations and the name of their file, in file
/// order; `ops` as for jobs_from_shape_files.
struct FileEntry {
  ShapeEntry entry;
  std::string file;
};
std::vector<FileEntry> entries_from_shape_files(const std::vector<std::string>& files,
                                                const std::vector<std::string>& ops = {});

/// Short name of an entry's parameters (the band problem's slug, else the set's).
std::string entry_slug(const ShapeEntry& entry);

/// The help text of the --ops option shared by pregenerate, warmup and check.
extern const char* const kOpsHelp;

std::string origin_name(Origin origin);

/// Writes `doc` to `path` (pretty JSON); "-" means stdout.
void write_json(const std::string& path, const nlohmann::json& doc);

/// Fails early (Error io) when an output file given with --json cannot be created, rather
/// than after minutes of work.
void check_output_file(const std::string& path);

/// Fails early (Error driver_failed) for commands that need a GPU, naming the command.
void require_gpu(const char* command);

/// Fails early (Error usage) on a malformed BANDJIT_REDIS_URL or BANDJIT_REDIS_TIMEOUT_MS,
/// rather than once per kernel.
void check_configuration();

/// Environment facts recorded next to results: time, host, GPU (if any), NVRTC, bandjit.
nlohmann::json run_environment();

void add_pregenerate(CLI::App& app, int& exit_code);
void add_warmup(CLI::App& app, int& exit_code);
void add_cache(CLI::App& app, int& exit_code);
/// `cache export` and `cache import`; `dir` is the `cache --cache-dir` option.
void add_cache_bundle(CLI::App& cache, const std::shared_ptr<std::string>& dir, int& exit_code);
void add_emit(CLI::App& app, int& exit_code);
void add_check(CLI::App& app, int& exit_code);
void add_families(CLI::App& app, int& exit_code);
void add_info(CLI::App& app, int& exit_code);
void add_bench(CLI::App& app, int& exit_code);

}  // namespace bandjit::cli
