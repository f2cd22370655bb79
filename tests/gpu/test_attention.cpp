// The fused sliding_window_attention on the GPU against the float64 composition of SPEC
// §3.1–3.3: every edge case through the check harness (fresh random inputs, NaN-poisoned O
// and LSE) — with the Hopper (wgmma) kernel where the generator takes it, and with the
// portable one there too — and at the other tiles the tuning knobs allow.
#include <cstdlib>

#include "bandjit/errors.hpp"
#include "generator/tile_config.hpp"
#include "support/catch.hpp"
#include "support/device_tensors.hpp"
#include "support/problems.hpp"

using namespace bandjit;

TEST_CASE("sliding_window_attention: O and LSE of every edge case match float64", "[sliding_window_attention]") {
  test::check_edge_cases("sliding_window_attention", 2);
}

TEST_CASE("sliding_window_attention: the portable kernel where the Hopper one would run", "[sliding_window_attention]") {
  // BANDJIT_ATTENTION_WGMMA=0: the mma.sync kernel for float16/bfloat16 with head_dim 64/128 too.
  ::setenv("BANDJIT_ATTENTION_WGMMA", "0", 1);
  test::check_edge_cases("sliding_window_attention", 2);
  ::unsetenv("BANDJIT_ATTENTION_WGMMA");
}

TEST_CASE("sliding_window_attention: other tiles (BANDJIT_ATTENTION_*) give the same results",
          "[sliding_window_attention]") {
  for (const char* rows : {"64", "128"})
    for (const char* keys : {"32", "128"}) {
      ::setenv("BANDJIT_ATTENTION_TILE_ROWS", rows, 1);
      ::setenv("BANDJIT_ATTENTION_KEY_TILE", keys, 1);
      for (DType d : {DType::float16, DType::float32}) {
        Problem p = test::band_problem(2, 3, 700, 64, 200, 90, d, {1, 2, 4}, Layout::bnhd);  // 128 keys: wgmma too
        p.key_mask = KeyMask::boolean;
        p.scale = 0.125;
        try {  // an override larger than an SM (float32, 128 × 128) is refused, naming the knobs
          sliding_window_attention_tiling(p, std::atoi(rows), std::atoi(keys));
        } catch (const Error& e) {
          CHECK(std::string(e.what()).find("BANDJIT_ATTENTION_KEY_TILE") != std::string::npos);
          continue;
        }
        std::uint64_t seed = 0;
        for (const OpCheck& c : check_problem(p, {"sliding_window_attention"}, CheckOptions{0, 0, 1, {}}, &seed)) {
          INFO(c.family << " " << slug(p) << " tiles " << rows << "x" << keys << " seed " << seed << ": rel_error "
                        << c.rel_error << " nan " << c.nan_count << " inf " << c.inf_count << "/" << c.inf_expected
                        << " structure " << c.structure_mismatches);
          CHECK(c.passed);
        }
      }
    }
  ::unsetenv("BANDJIT_ATTENTION_TILE_ROWS");
  ::unsetenv("BANDJIT_ATTENTION_KEY_TILE");
}
