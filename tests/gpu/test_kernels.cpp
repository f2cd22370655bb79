// Every family × dtype × layout and the SPEC §7 edge cases against the float64 reference,
// through the same harness as `bandjit check` (fresh random inputs, NaN-poisoned outputs).
#include <cmath>
#include <limits>
#include <random>

#include "reference/band_reference.hpp"
#include "support/catch.hpp"
#include "support/device_tensors.hpp"
#include "support/problems.hpp"

using namespace bandjit;

namespace {
Problem small(DType d, Layout l) { return test::band_problem(2, 3, 150, 32, 20, 9, d, {1, 2, 3}, l); }
}  // namespace

using test::download;
using test::tolerance;
using test::upload;

TEST_CASE("band_qk: every dtype, layout and edge case matches float64", "[band_qk]") {
  test::check_edge_cases("band_qk");
}
TEST_CASE("band_softmax: every dtype, layout, mask and edge case matches float64", "[band_softmax]") {
  test::check_edge_cases("band_softmax");
}
TEST_CASE("band_pv: every dtype, layout and edge case matches float64", "[band_pv]") { test::check_edge_cases("band_pv"); }

TEST_CASE("band_pv: whatever P holds at out-of-range slots contributes nothing", "[band_pv]") {
  std::mt19937 rng(std::random_device{}());
  std::uniform_real_distribution<double> u(0, 1);
  for (DType d : {DType::float32, DType::float16, DType::bfloat16})
    for (Layout l : {Layout::bnhd, Layout::bhnd}) {
      const Problem p = small(d, l);
      const auto C = p.diagonals();
      std::vector<double> prob(static_cast<std::size_t>(p.batch * p.heads * p.seq_len * C));
      std::vector<double> v(static_cast<std::size_t>(p.batch * p.heads * p.seq_len * p.head_dim));
      for (auto& x : v) x = 2 * u(rng) - 1;
      for (std::int64_t b = 0; b < p.batch; ++b)
        for (std::int64_t h = 0; h < p.heads; ++h)
          for (std::int64_t i = 0; i < p.seq_len; ++i)
            for (std::int64_t j = 0; j < C; ++j)
              prob[reference::band_index(p, b, h, i, j)] =
                  reference::key_of(p, h, i, j) < 0 ? std::numeric_limits<double>::quiet_NaN() : u(rng);
      DeviceBuffer dp = upload(d, prob), dv = upload(d, v), dout(v.size() * element_size(d));
      dout.fill32(0x7fc07fc0u);
      get_kernel("band_pv", p).launch(nullptr, {dp.ptr(), dv.ptr(), dout.ptr()});
      const auto out = download(d, dout, v.size());
      double diff2 = 0, ref2 = 0;
      std::vector<double> ref(p.head_dim);
      for (std::int64_t b = 0; b < p.batch; ++b)
        for (std::int64_t h = 0; h < p.heads; ++h)
          for (std::int64_t i = 0; i < p.seq_len; ++i) {
            reference::band_pv_row(p, &prob[reference::band_index(p, b, h, i, 0)], v.data(), b, h, i, ref.data());
            for (std::int64_t k = 0; k < p.head_dim; ++k) {
              const double o = out[reference::qkv_index(p, b, h, i, k)];
              REQUIRE(std::isfinite(o));
              diff2 += (o - ref[k]) * (o - ref[k]);
              ref2 += ref[k] * ref[k];
            }
          }
      INFO(slug(p));
      CHECK(std::sqrt(diff2 / ref2) <= tolerance(d));
    }
}

TEST_CASE("band_softmax: in place (P aliasing S) gives the out-of-place result", "[band_softmax]") {
  for (DType d : {DType::float32, DType::float16, DType::bfloat16}) {
    Problem p = small(d, Layout::bnhd);
    p.window_left = 300;  // C = 310: several warps per row
    p.seq_len = 400;
    p.dilation = {1};
    std::mt19937 rng(std::random_device{}());
    std::normal_distribution<double> n01(0, 3);
    std::vector<double> s(static_cast<std::size_t>(p.batch * p.heads * p.seq_len * p.diagonals()));
    for (auto& x : s) x = n01(rng);
    DeviceBuffer a = upload(d, s), b = upload(d, s), out(s.size() * element_size(d));
    const Kernel k = get_kernel("band_softmax", p);
    k.launch(nullptr, {a.ptr(), out.ptr()});
    k.launch(nullptr, {b.ptr(), b.ptr()});
    const auto separate = download(d, out, s.size()), in_place = download(d, b, s.size());
    INFO(to_string(d));
    CHECK(separate == in_place);
  }
}

TEST_CASE("band_softmax: scores near the float16 limit with masked keys stay finite", "[band_softmax]") {
  // HF masks float16 scores with the dtype's minimum and can overflow to −inf − (−inf) = NaN.
  for (DType d : {DType::float16, DType::bfloat16}) {
    Problem p = small(d, Layout::bhnd);
    p.dilation = {1};
    p.key_mask = KeyMask::additive;
    const auto C = p.diagonals();
    std::vector<double> s(static_cast<std::size_t>(p.batch * p.heads * p.seq_len * C));
    std::mt19937 rng(std::random_device{}());
    std::uniform_real_distribution<double> u(-60000, 60000);
    for (auto& x : s) x = u(rng);
    std::vector<double> mask(static_cast<std::size_t>(p.batch * p.seq_len));
    for (std::size_t i = 0; i < mask.size(); ++i) mask[i] = (i % 3 == 0) ? -65504.0 : 0.0;
    std::vector<float> mask_f(mask.begin(), mask.end());
    DeviceBuffer ds = upload(d, s), dp(s.size() * element_size(d)), dm(mask_f.size() * 4);
    dm.upload(mask_f.data(), mask_f.size() * 4);
    get_kernel("band_softmax", p).launch(nullptr, {ds.ptr(), dp.ptr(), dm.ptr()});
    const auto out = download(d, dp, s.size());
    std::vector<double> ref(C);
    double diff2 = 0, ref2 = 0;
    for (std::int64_t b = 0; b < p.batch; ++b)
      for (std::int64_t h = 0; h < p.heads; ++h)
        for (std::int64_t i = 0; i < p.seq_len; ++i) {
          reference::band_softmax_row(p, &s[reference::band_index(p, b, h, i, 0)], mask.data(), b, h, i, ref.data());
          for (std::int64_t j = 0; j < C; ++j) {
            const double o = out[reference::band_index(p, b, h, i, j)];
            REQUIRE(std::isfinite(o));
            diff2 += (o - ref[j]) * (o - ref[j]);
            ref2 += ref[j] * ref[j];
          }
        }
    CHECK(std::sqrt(diff2 / ref2) <= tolerance(d));
  }
}
