#include "tools/cli_common.hpp"

#include <unistd.h>

#include <ctime>
#include <fstream>
#include <iostream>
#include <set>

#include <fmt/format.h>

#include "bandjit/errors.hpp"
#include "runtime/driver_api.hpp"
#include "runtime/kernel_cache.hpp"
#include "runtime/nvrtc_api.hpp"

namespace bandjit::cli {

std::vector<Job> jobs_from_shape_files(const std::vector<std::string>& files) {
  std::vector<Job> jobs;
  std::set<std::string> seen;
  for (const auto& path : files) {
    const ShapeFile file = load_shape_file(path);
    for (const auto& entry : file.entries)
      for (const auto& op : entry.ops)
        if (seen.insert(op + to_json(entry.problem)).second) jobs.push_back({op, entry.problem, file.name});
  }
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

void check_configuration() { redis_tier(); }

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
