// Stage 2: Source → Cubin, with NVRTC for one target architecture.
#pragma once

#include <string>
#include <vector>

#include "generator/source.hpp"

namespace bandjit {

struct Cubin {
  std::string image;  ///< the cubin bytes
  std::string log;    ///< NVRTC + ptxas log (resource usage)
  int registers = -1;
  double compile_ms = 0;
};

/// Options that change the generated code; they go into the cache key.
/// `arch_specific`: the source uses instructions of the arch-specific target (wgmma): sm_90
/// compiles as sm_90a (runs on every sm_90 GPU); other archs are unchanged.
std::vector<std::string> compile_options(const std::string& arch, bool arch_specific = false);

/// Checks "sm_XY" / "sm_XYa" (XY ≥ 80); throws Error(invalid_problem) naming --arch.
void validate_arch(const std::string& arch);

/// Compiles with NVRTC straight to cubin. Throws Error(compile_failed) carrying the log,
/// the options and the generated file name.
Cubin compile(const Source& source, const std::string& arch);

/// "Used 96 registers" in a ptxas log → 96; -1 when absent.
int registers_from_log(const std::string& log);

}  // namespace bandjit
