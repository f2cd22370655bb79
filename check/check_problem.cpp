#include "check/check_problem.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <random>
#include <set>
#include <thread>

#include "bandjit/errors.hpp"
#include "check/check_attention.hpp"
#include "check/check_backward.hpp"
#include "check/check_support.hpp"
#include "check/device_buffer.hpp"
#include "generator/family_registry.hpp"
#include "reference/band_reference.hpp"
#include "runtime/kernel_cache.hpp"

namespace bandjit {

std::vector<RowRef> rows_to_check(const Problem& p, std::uint64_t seed, double full_cost) {
  std::vector<RowRef> rows;
  const double cost = double(p.batch) * p.heads * p.seq_len * p.diagonals() * p.head_dim;
  if (cost <= full_cost) {
    for (std::int64_t b = 0; b < p.batch; ++b)
      for (std::int64_t h = 0; h < p.heads; ++h)
        for (std::int64_t i = 0; i < p.seq_len; ++i) rows.push_back({b, h, i});
    return rows;
  }
  std::mt19937_64 rng(seed);
  auto pick = [&](std::int64_t lo, std::int64_t hi) {  // [lo, hi)
    return hi <= lo ? lo : lo + static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(hi - lo));
  };
  std::set<RowRef> chosen;
  std::vector<std::int64_t> batches = {0, p.batch - 1};
  for (std::int64_t b : batches)
    for (std::int64_t h = 0; h < p.heads; ++h) {
      const auto D = p.dilation_of(h), N = p.seq_len;
      for (std::int64_t i = 0; i < std::min<std::int64_t>(N, 8); ++i) {
        chosen.insert({b, h, i});
        chosen.insert({b, h, N - 1 - i});
      }
      for (int r = 0; r < 12; ++r) {
        chosen.insert({b, h, pick(0, std::min(N, p.window_left * D + 1))});
        chosen.insert({b, h, pick(std::max<std::int64_t>(0, N - p.window_right * D - 1), N)});
        chosen.insert({b, h, pick(0, N)});
      }
    }
  rows.assign(chosen.begin(), chosen.end());
  return rows;
}

std::uint64_t expected_out_of_range_slots(const Problem& p) {
  std::uint64_t total = 0;
  for (std::int64_t h = 0; h < p.heads; ++h) {
    const auto D = p.dilation_of(h);
    std::uint64_t per_batch = 0;
    for (std::int64_t i = 0; i < p.seq_len; ++i) {
      const auto left = std::max<std::int64_t>(0, p.window_left - i / D);
      const auto right = std::max<std::int64_t>(0, p.window_right - (p.seq_len - 1 - i) / D);
      per_batch += static_cast<std::uint64_t>(std::min(p.diagonals(), left + right));
    }
    total += per_batch * static_cast<std::uint64_t>(p.batch);
  }
  return total;
}

std::vector<OpCheck> check_problem(const Problem& p, const std::vector<std::string>& ops,
                                   const CheckOptions& options, std::uint64_t* seed_used) {
  validate(p);
  const std::uint64_t seed = options.seed ? options.seed : std::random_device{}() * 0x100000001ull + std::random_device{}();
  if (seed_used) *seed_used = seed;
  const auto wants = [&](const char* f) { return std::find(ops.begin(), ops.end(), f) != ops.end(); };
  const Options& kopt = options.kernel_options;

  // Fetch kernels first (the timing of get_kernel is part of the report).
  struct Fetched {
    Kernel kernel;
    double ms;
  };
  auto fetch = [&](const char* family) {
    const auto t0 = std::chrono::steady_clock::now();
    Kernel k = get_kernel(family, p, kopt);
    return Fetched{k, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count()};
  };
  Fetched qk = fetch("band_qk");
  Fetched sm = fetch("band_softmax");
  Fetched pv = fetch("band_pv");

  const DType dt = p.dtype;
  const std::size_t es = element_size(dt);
  const std::size_t n_qkv = static_cast<std::size_t>(p.batch * p.heads * p.seq_len * p.head_dim);
  const std::size_t n_band = static_cast<std::size_t>(p.batch * p.heads * p.seq_len * p.diagonals());
  const HostTensor q = random_tensor(dt, n_qkv, seed ^ 0x1111);
  const HostTensor k = random_tensor(dt, n_qkv, seed ^ 0x2222);
  const HostTensor v = random_tensor(dt, n_qkv, seed ^ 0x3333);
  std::vector<double> mask_values;
  std::string mask_bytes;
  if (p.key_mask != KeyMask::none) random_mask(p, seed ^ 0x4444, mask_values, mask_bytes);

  DeviceBuffer dq(n_qkv * es), dk(n_qkv * es), dv(n_qkv * es), ds(n_band * es), dp(n_band * es), dout(n_qkv * es);
  dq.upload(q.bytes.data(), q.bytes.size());
  dk.upload(k.bytes.data(), k.bytes.size());
  dv.upload(v.bytes.data(), v.bytes.size());
  DeviceBuffer dmask(std::max<std::size_t>(mask_bytes.size(), 16));
  if (!mask_bytes.empty()) dmask.upload(mask_bytes.data(), mask_bytes.size());
  poison(ds, dt);
  poison(dp, dt);
  poison(dout, dt);

  auto run_qk = [&] { qk.kernel.launch(nullptr, {dq.ptr(), dk.ptr(), ds.ptr()}); };
  auto run_sm = [&] {
    if (p.key_mask == KeyMask::none)
      sm.kernel.launch(nullptr, {ds.ptr(), dp.ptr()});
    else
      sm.kernel.launch(nullptr, {ds.ptr(), dp.ptr(), dmask.ptr()});
  };
  auto run_pv = [&] { pv.kernel.launch(nullptr, {dp.ptr(), dv.ptr(), dout.ptr()}); };

  // One untimed pass checks what the poisoned buffers received; timing comes after.
  run_qk();
  run_sm();
  run_pv();
  check_cuda(driver().cuCtxSynchronize(), "cuCtxSynchronize (after the kernels)");
  const NonFinite s_nf = count_nonfinite(ds, dt, n_band, kopt);
  const NonFinite p_nf = count_nonfinite(dp, dt, n_band, kopt);
  const NonFinite o_nf = count_nonfinite(dout, dt, n_qkv, kopt);

  // Reference rows, compared in parallel.
  const auto rows = rows_to_check(p, seed);
  const auto C = p.diagonals();
  // Whole tensors when every row is checked, else one download per sampled row.
  const bool all_rows = rows.size() == static_cast<std::size_t>(p.batch * p.heads * p.seq_len);
  std::vector<char> s_gpu, p_gpu, o_gpu;
  if (all_rows) {
    s_gpu.resize(n_band * es);
    p_gpu.resize(n_band * es);
    o_gpu.resize(n_qkv * es);
    ds.download(s_gpu.data(), s_gpu.size());
    dp.download(p_gpu.data(), p_gpu.size());
    dout.download(o_gpu.data(), o_gpu.size());
  } else {
    s_gpu.resize(rows.size() * C * es);
    p_gpu.resize(rows.size() * C * es);
    o_gpu.resize(rows.size() * p.head_dim * es);
    for (std::size_t r = 0; r < rows.size(); ++r) {
      const auto [b, h, i] = rows[r];
      ds.download(&s_gpu[r * C * es], C * es, reference::band_index(p, b, h, i, 0) * es);
      dp.download(&p_gpu[r * C * es], C * es, reference::band_index(p, b, h, i, 0) * es);
      dout.download(&o_gpu[r * p.head_dim * es], p.head_dim * es, reference::qkv_index(p, b, h, i, 0) * es);
    }
  }
  // Element offsets (in elements) of row r's S/P and O data in the downloaded arrays.
  auto band_row = [&](std::size_t r) {
    return all_rows ? reference::band_index(p, rows[r].b, rows[r].h, rows[r].i, 0) : r * C;
  };
  auto out_row = [&](std::size_t r) {
    return all_rows ? reference::qkv_index(p, rows[r].b, rows[r].h, rows[r].i, 0) : r * p.head_dim;
  };
  std::vector<ErrorSum> err_qk(rows.size()), err_sm(rows.size()), err_pv(rows.size());
  const double* mask_ptr = mask_values.empty() ? nullptr : mask_values.data();
  parallel_for(rows.size(), [&](std::size_t r) {
    const auto [b, h, i] = rows[r];
    std::vector<double> s_row(C), s_in(C), p_ref(C), p_in(C), o_ref(p.head_dim);
    for (std::int64_t j = 0; j < C; ++j) {
      s_in[j] = element_value(dt, &s_gpu[(band_row(r) + j) * es]);
      p_in[j] = element_value(dt, &p_gpu[(band_row(r) + j) * es]);
    }
    reference::band_qk_row(p, q.values.data(), k.values.data(), b, h, i, s_row.data());
    for (std::int64_t j = 0; j < C; ++j) err_qk[r].add(s_in[j], s_row[j], std::isinf(s_row[j]));
    reference::band_softmax_row(p, s_in.data(), mask_ptr, b, h, i, p_ref.data());
    for (std::int64_t j = 0; j < C; ++j) {
      const auto key = reference::key_of(p, h, i, j);
      const bool masked = key < 0 || !reference::key_kept(p, mask_ptr, b, key);
      err_sm[r].add(p_in[j], p_ref[j], masked);
    }
    reference::band_pv_row(p, p_in.data(), v.values.data(), b, h, i, o_ref.data());
    for (std::int64_t d = 0; d < p.head_dim; ++d)
      err_pv[r].add(element_value(dt, &o_gpu[(out_row(r) + d) * es]), o_ref[d], false);
  });

  const double tol = dt == DType::float32 ? 1e-5 : 1e-2;
  std::vector<OpCheck> out;
  auto report = [&](const char* family, const Fetched& f, const ErrorSum& e, const NonFinite& nf,
                    std::uint64_t inf_expected, const std::function<void()>& run) {
    out.push_back(make_op_check(family, f.kernel.info().origin, f.ms, e, tol, rows.size(), nf, inf_expected,
                                median_time_us(run, options.warmup, options.timing_runs)));
  };
  if (wants("band_qk")) report("band_qk", qk, total(err_qk), s_nf, expected_out_of_range_slots(p), run_qk);
  if (wants("band_softmax")) report("band_softmax", sm, total(err_sm), p_nf, 0, run_sm);
  if (wants("band_pv")) report("band_pv", pv, total(err_pv), o_nf, 0, run_pv);
  const ForwardState forward{p, seed, q, k, v, mask_values, dmask, dq, dk, dv, ds, dp, rows};
  if (wants("sliding_window_attention"))
    for (auto& c : check_attention(forward, options)) out.push_back(std::move(c));
  if (wants("band_tpv") || wants("band_softmax_backward") || wants(kAttentionBackward))
    for (auto& c : check_backward(forward, ops, options)) out.push_back(std::move(c));
  return out;
}

}  // namespace bandjit
