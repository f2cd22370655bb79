#include "runtime/compiler.hpp"

#include <algorithm>
#include <chrono>
#include <regex>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "bandjit/errors.hpp"
#include "runtime/config.hpp"
#include "runtime/nvrtc_api.hpp"
#include "runtime/stats.hpp"

namespace bandjit {

void validate_arch(const std::string& arch) {
  // No kernel uses wgmma/setmaxnreg yet, so no "a" target: get_kernel would never ask for it.
  static const std::regex pattern("sm_([0-9]{2,3})");
  std::smatch m;
  if (!std::regex_match(arch, m, pattern) || std::stoi(m[1]) < 80)
    throw Error(ErrorKind::invalid_problem,
                fmt::format("arch = \"{}\" is not supported; allowed: sm_XY with XY >= 80, e.g. sm_90", arch),
                {{"field", "arch"}, {"value", arch}, {"allowed", "sm_XY with XY >= 80"}});
  // The loaded NVRTC knows which targets it can build; ask it before any compile.
  const NvrtcApi* api = nullptr;
  try {
    api = &nvrtc();
  } catch (const Error&) {
    return;  // reported by the compile that needs it
  }
  const int number = std::stoi(m[1]);
  const auto& known = api->supported_archs;
  if (!known.empty() && std::find(known.begin(), known.end(), number) == known.end()) {
    std::string list;
    for (int a : known)
      if (a >= 80) list += fmt::format("{}sm_{}", list.empty() ? "" : ", ", a);
    throw Error(ErrorKind::invalid_problem,
                fmt::format("arch = \"{}\" is not a target of NVRTC {}; allowed: {}", arch, api->version, list),
                {{"field", "arch"}, {"value", arch}, {"allowed", list}});
  }
}

std::vector<std::string> compile_options(const std::string& arch, bool arch_specific) {
  const std::string special = arch_specific ? arch_specific_target(arch) : "";
  const std::string target = special.empty() ? arch : special;
  return {"--gpu-architecture=" + target, "--std=c++17", "--generate-line-info", "--ptxas-options=-v"};
}

int registers_from_log(const std::string& log) {
  static const std::regex used("Used ([0-9]+) registers");
  std::smatch m;
  return std::regex_search(log, m, used) ? std::stoi(m[1]) : -1;
}

Cubin compile(const Source& source, const std::string& arch) {
  validate_arch(arch);
  const auto& api = nvrtc();
  const auto started = std::chrono::steady_clock::now();

  std::vector<const char*> header_texts, header_names;
  for (const auto& h : *source.headers) {
    header_texts.push_back(h.text.c_str());
    header_names.push_back(h.name.c_str());
  }
  auto options = compile_options(arch, source.arch_specific);
  options.push_back("-I" + config::cuda_include_dir());  // a path: kept out of the key
  std::vector<const char*> option_ptrs;
  for (const auto& o : options) option_ptrs.push_back(o.c_str());

  nvrtcProgram program = nullptr;
  nvrtcResult rc = api.CreateProgram(&program, source.text.c_str(), source.name.c_str(),
                                     static_cast<int>(header_texts.size()), header_texts.data(), header_names.data());
  if (rc != NVRTC_SUCCESS)
    throw Error(ErrorKind::compile_failed, fmt::format("nvrtcCreateProgram failed: {}", api.GetErrorString(rc)),
                {{"source", source.name}});
  struct Guard {
    const NvrtcApi& api;
    nvrtcProgram& p;
    ~Guard() { api.DestroyProgram(&p); }
  } guard{api, program};

  rc = api.CompileProgram(program, static_cast<int>(option_ptrs.size()), option_ptrs.data());
  std::size_t log_size = 0;
  api.GetProgramLogSize(program, &log_size);
  std::string log(log_size, '\0');
  if (log_size > 0) api.GetProgramLog(program, log.data());
  while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();

  if (rc != NVRTC_SUCCESS)
    throw Error(ErrorKind::compile_failed,
                fmt::format("NVRTC could not compile {} ({}) for {}: {}", source.family, source.name, arch,
                            api.GetErrorString(rc)),
                {{"source", source.name},
                 {"family", source.family},
                 {"options", fmt::format("{}", fmt::join(options, " "))},
                 {"nvrtc", api.version},
                 {"log", log}});

  Cubin cubin;
  std::size_t size = 0;
  api.GetCUBINSize(program, &size);
  cubin.image.resize(size);
  api.GetCUBIN(program, cubin.image.data());
  cubin.log = std::move(log);
  cubin.registers = registers_from_log(cubin.log);
  cubin.compile_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
  counters().compiles++;
  return cubin;
}

}  // namespace bandjit
