// Every environment override bandjit reads, in one place (docs/configuration.md).
#pragma once

#include <array>

#include <cstdint>
#include <initializer_list>
#include <string>

namespace bandjit::config {

/// BANDJIT_CACHE_DIR, else $XDG_CACHE_HOME/bandjit, else $HOME/.cache/bandjit.
std::string cache_dir();
/// BANDJIT_CACHE_MAX_SIZE ("2G", "500M", "64K" or bytes); default 2 GiB.
std::uint64_t cache_max_bytes();
/// BANDJIT_CUDA_INCLUDE, else the CUDA include directory found at build time.
std::string cuda_include_dir();
/// BANDJIT_NVRTC_LIBRARY: a path to libnvrtc.so; empty = search (soname, then build-time dir).
std::string nvrtc_library();
/// Directory of libnvrtc found at build time (fallback of the search).
std::string nvrtc_default_dir();
/// BANDJIT_LOG_LEVEL: trace, debug, info, warn (default), error, off.
std::string log_level();
/// BANDJIT_TILE_ROWS: rows per block of band_qk/band_pv (32 or 64), a tuning knob
/// for measurements; 0 when unset (the generator's choice). It changes the generated
/// source, hence the cache key.
int tile_rows_override();
/// BANDJIT_TILE_DIAGONALS: most diagonals per chunk of band_qk/band_pv (16 … 1024), a
/// tuning knob; 0 when unset.
int tile_diagonals_override();
/// Row-family tuning from the environment (BANDJIT_ROW_PIECES, BANDJIT_ROW_REGISTERS,
/// BANDJIT_ROW_BLOCK_THREADS): 0 when unset; Error(usage) for a value outside `allowed`.
int row_tuning(const char* name, std::initializer_list<int> allowed);
/// As row_tuning, for a knob that may be set to 0: the value plus one, 0 when unset.
int row_count(const char* name, std::initializer_list<int> allowed);
/// BANDJIT_TPV_TILING = "TM,KS,STAGES": band_tpv's output rows per block (32, 64, 128), band
/// rows per slab (32, 64) and slabs in flight (2, 3, 4); zeros when unset; else Error(usage).
std::array<int, 3> tpv_tiling_override();
/// BANDJIT_PV_WGMMA_TILING = "KS,STAGES": band_pv's Hopper kernel's keys per slab (32, 64, 128) and
/// slabs in flight (2, 3, 4); zeros when unset; else Error(usage).
std::array<int, 2> pv_wgmma_tiling_override();
/// An on/off measurement switch: 0 unset, 1 for "0" (off), 2 for "1" (on); else Error(usage).
int row_switch(const char* name);
/// BANDJIT_REDIS_URL: redis://[[user]:password@]host[:port][/db] of the shared tier;
/// empty = no Redis tier.
std::string redis_url();
/// BANDJIT_REDIS_TIMEOUT_MS: limit of a connect and of each Redis command (1 … 60000,
/// default 500); past it the tier counts as down.
int redis_timeout_ms();
/// Parses "2G", "500M", "64K", "123"; throws Error(usage) on anything else.
std::uint64_t parse_size(const std::string& text, const char* what);

}  // namespace bandjit::config
