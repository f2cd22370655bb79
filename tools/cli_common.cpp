#include "tools/cli_common.hpp"

#include <unistd.h>

#include <algorithm>
#include <ctime>
#include <fstream>
#include <iostream>
#include <set>

#include <fmt/format.h>

#include "bandjit/errors.hpp"
#include "generator/family_registry.hpp"
#include "generator/problem_json.hpp"
#include "runtime/config.hpp"
#include "runtime/driver_api.hpp"
#include "runtime/kernel_cache.hpp"
#include "runtime/nvrtc_api.hpp"

namespace bandjit::cli {

const char* const kOpsHelp =
    "Operations for every problem, replacing the shape files' \"ops\": families of the problem's parameter set, "
    "attention_backward, or the shorthands forward, backward, training";

std::vector<FileEntry> entries_from_shape_files(const std::vector<std::string>& files,
                                                const std::vector<std::string>& ops) {
  std::vector<FileEntry> entries;
  for (const auto& path : files) {
    ShapeFile file = load_shape_file(path);
    for (std::size_t i = 0; i < file.entries.size(); ++i) {
      auto& entry = file.entries[i];
      if (!ops.empty()) {
        // --ops names operations of each entry's own parameter set (shorthands resolve there).
        entry.ops.clear();
        const auto where = fmt::format("--ops for {} problems[{}]", path, i);
        for (const auto& op : ops)
          for (const auto& name : expand_ops(op, entry.parameter_set, where))
            if (std::find(entry.ops.begin(), entry.ops.end(), name) == entry.ops.end()) entry.ops.push_back(name);
        for (const auto& op : entry.ops)
          if (op != kAttentionBackward) find_family(op).canonical(nlohmann::json::parse(entry.parameters), where);
      }
      entries.push_back({std::move(entry), file.name});
    }
  }
  return entries;
}

std::vector<Job> jobs_from_shape_files(const std::vector<std::string>& files, const std::vector<std::string>& ops) {
  std::vector<Job> jobs;
  std::set<std::string> seen;
  auto add = [&](const std::string& family, const nlohmann::json& params, const std::string& file) {
    const Family& f = find_family(family);
    const nlohmann::json canonical = f.canonical(params);
    if (seen.insert(family + canonical.dump()).second) jobs.push_back({family, canonical.dump(), f.slug(canonical), file});
  };
  for (const auto& [entry, file] : entries_from_shape_files(files, ops))
    for (const auto& op : entry.ops) {
      if (entry.parameter_set != kBandSet) {
        add(op, nlohmann::json::parse(entry.parameters), file);
        continue;
      }
      for (const auto& k : kernels_of_op(op, entry.problem)) add(k.family, problem_to_json(k.problem), file);
    }
  return jobs;
}

std::string entry_slug(const ShapeEntry& entry) {
  if (entry.parameter_set == kBandSet) return slug(entry.problem);
  return params_slug(nlohmann::json::parse(entry.parameters));
}

std::string origin_name(Origin origin) {
  switch (origin) {
    case Origin::memory: return "memory";
    case Origin::disk: return "cache";
    case Origin::remote: return "redis";
    case Origin::compiled: return "compiled";
  }
  return "?";
}

void write_json(const std::string& path, const nlohmann::json& doc) {
  if (path == "-") {
    std::cout << doc.dump(1) << "\n";
    return;
  }
  std::ofstream out(path);
  if (!out) throw Error(ErrorKind::io, fmt::format("cannot write {}", path), {{"path", path}});
  out << doc.dump(1) << "\n";
}

void check_output_file(const std::string& path) {
  if (path.empty() || path == "-") return;
  std::ofstream out(path, std::ios::app);
  if (!out) throw Error(ErrorKind::io, fmt::format("cannot write {}", path), {{"path", path}});
}

void require_gpu(const char* command) {
  if (!gpu_available())
    throw Error(ErrorKind::driver_failed, fmt::format("{} needs a GPU: no CUDA driver or device found", command));
}

void check_configuration() {
  config::log_level();
  redis_tier();
}

nlohmann::json run_environment() {
  char host[256] = {0};
  ::gethostname(host, sizeof(host) - 1);
  char when[64];
  const std::time_t now = std::time(nullptr);
  std::strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  nlohmann::json env = {{"time_utc", when}, {"host", host}, {"bandjit", BANDJIT_VERSION}};
  try {
    env["nvrtc"] = nvrtc().version;
  } catch (const Error&) {
    env["nvrtc"] = nullptr;
  }
  if (gpu_available()) {
    char name[256] = {0};
    CUdevice dev = 0;
    driver().cuDeviceGet(&dev, 0);
    driver().cuDeviceGetName(name, sizeof(name) - 1, dev);
    int version = 0;
    driver().cuDriverGetVersion(&version);
    env["gpu"] = name;
    env["driver_cuda_version"] = version;
  } else {
    env["gpu"] = nullptr;
  }
  return env;
}

}  // namespace bandjit::cli
