// The band part of a generated `struct Cfg` (generator/source.cpp, band_cfg_common and the
// per-head tables) for the sim tests: sizes from template arguments, the per-head dilation
// and tile-start tables filled from the problem and the generator's tiling before a launch.
#pragma once

#include <cstdint>
#include <vector>

#include "bandjit/problem.hpp"

namespace bandjit::sim {

// DIL > 0: one dilation for every head; 0: per head (set_tables).
template <class T_, int B, int H, int N, int DH, int WL, int WR, int LAYOUT, int DIL>
struct BandCfg {
  using T = T_;
  static constexpr int kBatch = B, kHeads = H, kSeqLen = N, kHeadDim = DH, kWindowLeft = WL, kWindowRight = WR;
  static constexpr int kDiagonals = WL + WR + 1, kLayout = LAYOUT;
  static constexpr bool kUniformDilation = DIL > 0;
  static constexpr int kDilation = DIL > 0 ? DIL : 0;
  static inline std::vector<int> per_head_dilation, tile_start;
  static int dilation(int h) { return DIL > 0 ? DIL : per_head_dilation[h]; }
  static int head_tile_start(int h) { return tile_start[h]; }
  // The tables of `problem` under a tiling whose head_tile_start is `starts`.
  static void set_tables(const Problem& problem, const std::vector<int>& starts) {
    tile_start = starts;
    per_head_dilation.clear();
    for (std::int64_t h = 0; h < problem.heads; ++h)
      per_head_dilation.push_back(static_cast<int>(problem.dilation_of(h)));
  }
};

}  // namespace bandjit::sim
