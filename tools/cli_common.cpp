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
#include "runtime/config.hpp"
#include "runtime/driver_api.hpp"
#include "runtime/kernel_cache.hpp"
#include "runtime/nvrtc_api.hpp"

namespace bandjit::cli {

const char* const kOpsHelp =
    "Operations for every problem, replacing the shape files' \"ops\": families, attention_backward, or the "
    "shorthands forward, backward, training";

std::vector<FileEntry> entries_from_shape_files(const std::vector<std::string>& files,
                                                const std::vector<std::string>& ops) {
  std::vector<std::string> override_ops;
  for (const auto& op : ops)
    for (const auto& name : expand_family_names(op, "--ops"))
      if (std::find(override_ops.begin(), override_ops.end(), name) == override_ops.end()) override_ops.push_back(name);
  std::vector<FileEntry> entries;
  for (const auto& path : files) {
    ShapeFile file = load_shape_file(path);
    for (auto& entry : file.entries) {
      if (!override_ops.empty()) entry.ops = override_ops;
      entries.push_back({std::move(entry), file.name});
    }
  }
  return entries;
}

std::vector<Job> jobs_from_shape_files(const std::vector<std::string>& files, const std::vector<std::string>& ops) {
  std::vector<Job> jobs;
  std::set<std::string> seen;
  for (const auto& [entry, file] : entries_from_shape_files(files, ops))
    for (const auto& op : entry.ops)
      for (const auto& k : kernels_of_op(op, entry.problem))
        if (seen.insert(k.family + to_json(k.problem)).second) jobs.push_back({k.family, k.problem, file});
  return jobs;
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
