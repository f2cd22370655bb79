// The backward families and the composed attention_backward on the GPU against the float64
// reference: every edge case through the check harness (fresh random inputs, NaN-poisoned
// outputs), plus the cases the harness cannot build.
#include <cmath>
#include <limits>
#include <random>

#include "bandjit/backward.hpp"
#include "reference/band_reference.hpp"
#include "support/catch.hpp"
#include "support/device_tensors.hpp"
#include "support/problems.hpp"

using namespace bandjit;
using test::download;
using test::tolerance;
using test::upload;

namespace {

std::size_t qkv_size(const Problem& p) { return static_cast<std::size_t>(p.batch * p.heads * p.seq_len * p.head_dim); }
std::size_t band_size(const Problem& p) {
  return static_cast<std::size_t>(p.batch * p.heads * p.seq_len * p.diagonals());
}

std::vector<double> random_values(std::size_t n, std::mt19937& rng, double lo = -1, double hi = 1) {
  std::uniform_real_distribution<double> u(lo, hi);
  std::vector<double> v(n);
  for (auto& x : v) x = u(rng);
  return v;
}

double rel_error(const std::vector<double>& out, const std::vector<double>& ref, std::size_t* nonfinite) {
  double d2 = 0, r2 = 0;
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (!std::isfinite(out[i])) {
      ++*nonfinite;
      continue;
    }
    d2 += (out[i] - ref[i]) * (out[i] - ref[i]);
    r2 += ref[i] * ref[i];
  }
  return std::sqrt(d2 / r2);
}

}  // namespace

TEST_CASE("band_tpv: every dtype, layout and edge case matches float64", "[band_tpv]") {
  test::check_edge_cases("band_tpv");
}

TEST_CASE("band_softmax_backward: every dtype, layout, mask and edge case matches float64", "[band_softmax_backward]") {
  test::check_edge_cases("band_softmax_backward");
}

TEST_CASE("attention_backward: dQ, dK, dV of every edge case match the float64 gradient", "[attention_backward]") {
  test::check_edge_cases("attention_backward", 3);
}

TEST_CASE("band_tpv: whatever X holds at out-of-range slots contributes nothing", "[band_tpv]") {
  std::mt19937 rng(std::random_device{}());
  for (DType d : {DType::float32, DType::float16, DType::bfloat16})
    for (Layout l : {Layout::bnhd, Layout::bhnd}) {
      const Problem p = test::band_problem(2, 3, 150, 32, 20, 9, d, {1, 2, 3}, l);
      const auto C = p.diagonals();
      std::vector<double> x(band_size(p)), y = random_values(qkv_size(p), rng);
      for (std::int64_t b = 0; b < p.batch; ++b)
        for (std::int64_t h = 0; h < p.heads; ++h)
          for (std::int64_t i = 0; i < p.seq_len; ++i)
            for (std::int64_t j = 0; j < C; ++j)
              x[reference::band_index(p, b, h, i, j)] = reference::key_of(p, h, i, j) < 0
                                                            ? std::numeric_limits<double>::quiet_NaN()
                                                            : 2 * std::uniform_real_distribution<double>(0, 1)(rng) - 1;
      DeviceBuffer dx = upload(d, x), dy = upload(d, y), dz(y.size() * element_size(d));
      dz.fill32(0x7fc07fc0u);
      get_kernel("band_tpv", p).launch(nullptr, {dx.ptr(), dy.ptr(), dz.ptr()});
      const auto out = download(d, dz, y.size());
      std::vector<double> ref(y.size());
      for (std::int64_t b = 0; b < p.batch; ++b)
        for (std::int64_t h = 0; h < p.heads; ++h)
          for (std::int64_t i = 0; i < p.seq_len; ++i)
            reference::band_tpv_row(p, x.data(), y.data(), b, h, i, &ref[reference::qkv_index(p, b, h, i, 0)]);
      std::size_t nonfinite = 0;
      const double rel = rel_error(out, ref, &nonfinite);
      INFO(slug(p) << ": relative error " << rel);
      CHECK(nonfinite == 0);
      CHECK(rel <= tolerance(d));
    }
}

TEST_CASE("band_softmax_backward: in place (dS aliasing dP) gives the out-of-place result", "[band_softmax_backward]") {
  for (DType d : {DType::float32, DType::float16, DType::bfloat16}) {
    Problem p = test::band_problem(2, 3, 400, 32, 300, 9, d);  // C = 310: several warps per row
    p.key_mask = KeyMask::boolean;
    p.scale = 0.25;
    std::mt19937 rng(std::random_device{}());
    auto prob = random_values(band_size(p), rng, 0, 0.01), dp = random_values(band_size(p), rng, -4, 4);
    std::vector<unsigned char> mask(static_cast<std::size_t>(p.batch * p.seq_len));
    for (std::size_t i = 0; i < mask.size(); ++i) mask[i] = (i % 5) != 0;
    DeviceBuffer dprob = upload(d, prob), a = upload(d, dp), b = upload(d, dp), out(dp.size() * element_size(d));
    DeviceBuffer dmask(mask.size());
    dmask.upload(mask.data(), mask.size());
    const Kernel k = get_kernel("band_softmax_backward", p);
    k.launch(nullptr, {dprob.ptr(), a.ptr(), out.ptr(), dmask.ptr()});
    k.launch(nullptr, {dprob.ptr(), b.ptr(), b.ptr(), dmask.ptr()});
    const auto separate = download(d, out, dp.size()), in_place = download(d, b, dp.size());
    INFO(to_string(d));
    CHECK(separate == in_place);
  }
}

TEST_CASE("attention_backward: one call gives the float64 gradient of the forward, on every row", "[attention_backward]") {
  // P from the float64 forward (rounded to the dtype as the GPU would store it), the rest
  // random; the reference is the backward of tests/reference/test_gradient.cpp.
  std::mt19937 rng(std::random_device{}());
  for (DType d : {DType::float32, DType::float16, DType::bfloat16})
    for (KeyMask m : {KeyMask::none, KeyMask::additive}) {
      Problem p = test::band_problem(2, 4, 130, 64, 17, 0, d, {1, 2, 1, 3}, m == KeyMask::none ? Layout::bnhd : Layout::bhnd);
      p.key_mask = m;
      p.scale = 0.125;
      auto q = random_values(qkv_size(p), rng), k = random_values(qkv_size(p), rng), v = random_values(qkv_size(p), rng);
      auto d_o = random_values(qkv_size(p), rng);
      std::vector<double> mask(static_cast<std::size_t>(p.batch * p.seq_len));
      for (std::size_t i = 0; i < mask.size(); ++i) mask[i] = (i % 7 == 3 || i >= 180) ? -10000.0 : 0.25;
      const double* mp = m == KeyMask::none ? nullptr : mask.data();
      DeviceBuffer dq_in = upload(d, q), dk_in = upload(d, k), dv_in = upload(d, v), ddo = upload(d, d_o);
      std::vector<double> prob(band_size(p)), o(qkv_size(p));
      reference::attention_forward(p, q.data(), k.data(), v.data(), mp, prob.data(), o.data());
      DeviceBuffer dprob = upload(d, prob);
      std::vector<float> mask_f(mask.begin(), mask.end());
      DeviceBuffer dmask(mask_f.size() * 4);
      dmask.upload(mask_f.data(), mask_f.size() * 4);
      DeviceBuffer gq(qkv_size(p) * element_size(d)), gk(gq.bytes()), gv(gq.bytes());
      DeviceBuffer ws(AttentionBackward::workspace_bytes(p));
      for (DeviceBuffer* b : {&gq, &gk, &gv, &ws}) b->fill32(0x7fc07fc0u);
      BackwardTensors t;
      t.q = dq_in.ptr();
      t.k = dk_in.ptr();
      t.v = dv_in.ptr();
      t.p = dprob.ptr();
      t.d_o = ddo.ptr();
      t.dq = gq.ptr();
      t.dk = gk.ptr();
      t.dv = gv.ptr();
      t.workspace = ws.ptr();
      if (m != KeyMask::none) t.mask = dmask.ptr();
      attention_backward(p, nullptr, t);
      std::vector<double> rq(qkv_size(p)), rk(rq.size()), rv(rq.size());
      reference::attention_backward(p, q.data(), k.data(), v.data(), prob.data(), d_o.data(), mp, rq.data(), rk.data(),
                                    rv.data());
      std::size_t nonfinite = 0;
      const double eq = rel_error(download(d, gq, rq.size()), rq, &nonfinite);
      const double ek = rel_error(download(d, gk, rk.size()), rk, &nonfinite);
      const double ev = rel_error(download(d, gv, rv.size()), rv, &nonfinite);
      INFO(slug(p) << ": dq " << eq << " dk " << ek << " dv " << ev);
      CHECK(nonfinite == 0);
      CHECK(eq <= tolerance(d));
      CHECK(ek <= tolerance(d));
      CHECK(ev <= tolerance(d));
    }
}

TEST_CASE("attention_backward: a mask given or missing against the problem is a usage error", "[attention_backward]") {
  Problem p = test::band_problem(1, 2, 64, 32, 4, 4, DType::float16);
  DeviceBuffer a(qkv_size(p) * 2), band(AttentionBackward::workspace_bytes(p)), mask(64);
  BackwardTensors t;
  t.q = t.k = t.v = t.d_o = t.dq = t.dk = t.dv = a.ptr();
  t.p = t.workspace = band.ptr();
  t.mask = mask.ptr();
  const AttentionBackward unmasked(p);
  CHECK(unmasked.workspace_bytes() == static_cast<std::size_t>(64 * 2 * 9 * 2));
  CHECK(unmasked.kernels().size() == 4);
  try {
    unmasked.launch(nullptr, t);
    FAIL("accepted a mask for key_mask = none");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::usage);
  }
  p.key_mask = KeyMask::boolean;
  t.mask = DevicePtr();
  try {
    attention_backward(p, nullptr, t);
    FAIL("accepted a missing mask");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::usage);
    CHECK(std::string(e.what()).find("mask") != std::string::npos);
  }
  t.mask = mask.ptr();
  t.dq = DevicePtr(static_cast<unsigned long long>(a.ptr() + 2));  // misaligned
  CHECK_THROWS_AS(attention_backward(p, nullptr, t), Error);
}
