#include "runtime/config.hpp"

#include <charconv>
#include <cctype>
#include <cstdint>
#include <cstdlib>

#include <fmt/format.h>

#include "bandjit/errors.hpp"

namespace bandjit::config {
namespace {
std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}
}  // namespace

std::string cache_dir() {
  if (auto dir = env("BANDJIT_CACHE_DIR"); !dir.empty()) return dir;
  if (auto xdg = env("XDG_CACHE_HOME"); !xdg.empty()) return xdg + "/bandjit";
  if (auto home = env("HOME"); !home.empty()) return home + "/.cache/bandjit";
  return ".bandjit-cache";
}

std::uint64_t parse_size(const std::string& text, const char* what) {
  auto bad = [&]() -> std::uint64_t {
    throw Error(ErrorKind::usage, fmt::format("{} = \"{}\" is not a size; use bytes or a K/M/G/T suffix, "
                                              "at most 16 EiB", what, text));
  };
  std::size_t digits = 0;
  while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits]))) ++digits;
  if (digits == 0 || digits > 19 || text.size() > digits + 1) return bad();
  std::uint64_t unit = 1;
  if (text.size() == digits + 1) {
    switch (std::toupper(static_cast<unsigned char>(text[digits]))) {
      case 'K': unit = 1ull << 10; break;
      case 'M': unit = 1ull << 20; break;
      case 'G': unit = 1ull << 30; break;
      case 'T': unit = 1ull << 40; break;
      default: return bad();
    }
  }
  const std::uint64_t value = std::stoull(text.substr(0, digits));
  if (value > UINT64_MAX / unit) return bad();  // would wrap around
  return value * unit;
}

std::uint64_t cache_max_bytes() {
  const auto v = env("BANDJIT_CACHE_MAX_SIZE");
  return v.empty() ? (2ull << 30) : parse_size(v, "BANDJIT_CACHE_MAX_SIZE");
}

std::string cuda_include_dir() {
  if (auto dir = env("BANDJIT_CUDA_INCLUDE"); !dir.empty()) return dir;
  return BANDJIT_DEFAULT_CUDA_INCLUDE;
}

std::string nvrtc_library() { return env("BANDJIT_NVRTC_LIBRARY"); }
std::string nvrtc_default_dir() { return BANDJIT_DEFAULT_NVRTC_DIR; }

int tile_rows_override() {
  const auto v = env("BANDJIT_TILE_ROWS");
  if (v.empty()) return 0;
  // 128 rows failed the GPU tests (2026-11-29); 16 is untested: only measured values are allowed.
  if (v != "32" && v != "64")
    throw Error(ErrorKind::usage, fmt::format("BANDJIT_TILE_ROWS = \"{}\"; allowed: 32, 64", v));
  return std::stoi(v);
}

int tile_diagonals_override() {
  const auto v = env("BANDJIT_TILE_DIAGONALS");
  if (v.empty()) return 0;
  int n = 0;
  const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
  if (ec != std::errc() || end != v.data() + v.size() || n < 16 || n > 1024)
    throw Error(ErrorKind::usage, fmt::format("BANDJIT_TILE_DIAGONALS = \"{}\"; allowed: an integer from 16 to 1024", v));
  return n;
}

int row_count(const char* name, std::initializer_list<int> allowed) {
  const auto v = env(name);
  if (v.empty()) return 0;
  std::string list;
  for (int a : allowed) {
    if (v == std::to_string(a)) return a + 1;
    list += (list.empty() ? "" : ", ") + std::to_string(a);
  }
  throw Error(ErrorKind::usage, fmt::format("{} = \"{}\"; allowed: {}", name, v, list));
}

int row_tuning(const char* name, std::initializer_list<int> allowed) {
  const int n = row_count(name, allowed);  // the allowed values exclude 0: 0 stays "unset"
  return n ? n - 1 : 0;
}

std::array<int, 3> tpv_tiling_override() {
  const auto v = env("BANDJIT_TPV_TILING");
  if (v.empty()) return {0, 0, 0};
  std::array<int, 3> t{};
  const char* p = v.data();
  const char* const end = v.data() + v.size();
  bool parsed = true;
  for (int i = 0; i < 3 && parsed; ++i) {  // three integers, separated by commas, nothing else
    const auto [next, ec] = std::from_chars(p, end, t[i]);
    parsed = ec == std::errc() && (i < 2 ? next < end && *next == ',' : next == end);
    p = next + 1;
  }
  const bool ok = parsed && (t[0] == 32 || t[0] == 64 || t[0] == 128) && (t[1] == 32 || t[1] == 64) && t[2] >= 2 && t[2] <= 4;
  if (!ok)
    throw Error(ErrorKind::usage,
                fmt::format("BANDJIT_TPV_TILING = \"{}\"; allowed: TM,KS,STAGES with TM 32, 64 or 128, KS 32 or 64, "
                            "STAGES 2 to 4",
                            v));
  return t;
}

std::array<int, 2> pv_wgmma_tiling_override() {
  const auto v = env("BANDJIT_PV_WGMMA_TILING");
  if (v.empty()) return {0, 0};
  std::array<int, 2> t{};
  const char* const end = v.data() + v.size();
  const auto [mid, ec] = std::from_chars(v.data(), end, t[0]);
  bool ok = ec == std::errc() && mid < end && *mid == ',';
  if (ok) {
    const auto [last, ec2] = std::from_chars(mid + 1, end, t[1]);
    ok = ec2 == std::errc() && last == end;
  }
  if (!ok || (t[0] != 32 && t[0] != 64 && t[0] != 128) || t[1] < 2 || t[1] > 4)
    throw Error(ErrorKind::usage,
                fmt::format("BANDJIT_PV_WGMMA_TILING = \"{}\"; allowed: KS,STAGES with KS 32, 64 or 128, STAGES 2 to 4", v));
  return t;
}

int row_switch(const char* name) {
  const auto v = env(name);
  if (v.empty()) return 0;
  if (v == "0" || v == "1") return v == "1" ? 2 : 1;
  throw Error(ErrorKind::usage, fmt::format("{} = \"{}\"; allowed: 0 (off), 1 (on)", name, v));
}

std::string redis_url() { return env("BANDJIT_REDIS_URL"); }

int redis_timeout_ms() {
  const auto v = env("BANDJIT_REDIS_TIMEOUT_MS");
  if (v.empty()) return 500;
  const bool digits = v.size() <= 5 && v.find_first_not_of("0123456789") == std::string::npos;
  const int ms = digits ? std::stoi(v) : 0;
  if (ms < 1 || ms > 60000)
    throw Error(ErrorKind::usage,
                fmt::format("BANDJIT_REDIS_TIMEOUT_MS = \"{}\"; allowed: milliseconds from 1 to 60000", v));
  return ms;
}

std::string log_level() {
  const auto v = env("BANDJIT_LOG_LEVEL");
  if (v.empty()) return "warn";
  // spdlog reads an unknown name as "off": refuse it instead of silencing the log.
  for (const char* known : {"trace", "debug", "info", "warn", "error", "critical", "off"})
    if (v == known) return v;
  throw Error(ErrorKind::usage,
              fmt::format("BANDJIT_LOG_LEVEL = \"{}\"; allowed: trace, debug, info, warn, error, critical, off", v));
}

}  // namespace bandjit::config
