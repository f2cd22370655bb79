#include "check/check_attention.hpp"

#include <chrono>
#include <cmath>

#include "bandjit/errors.hpp"
#include "check/device_buffer.hpp"
#include "reference/band_reference.hpp"
#include "runtime/kernel_cache.hpp"

namespace bandjit {

std::uint64_t rows_without_keys(const Problem& p, const double* mask) {
  if (p.key_mask == KeyMask::none) return 0;  // slot w_l holds the row's own key
  std::uint64_t empty = 0;
  for (std::int64_t b = 0; b < p.batch; ++b)
    for (std::int64_t h = 0; h < p.heads; ++h) {
      const auto D = p.dilation_of(h), N = p.seq_len;
      // kept[i + 1] − kept[lo] counts kept keys lo, lo + D, … ≤ i of i's residue.
      std::vector<std::int64_t> kept(static_cast<std::size_t>(N + 1), 0);
      for (std::int64_t i = 0; i < N; ++i)
        kept[i + 1] = (i >= D ? kept[i + 1 - D] : 0) + (reference::key_kept(p, mask, b, i) ? 1 : 0);
      auto upto = [&](std::int64_t key) { return key < 0 ? 0 : kept[key + 1]; };  // kept keys ≤ key, same residue
      for (std::int64_t i = 0; i < N; ++i) {
        const std::int64_t r = i % D;
        std::int64_t lo = i - D * p.window_left, hi = i + D * p.window_right;
        if (lo < r) lo = r;
        if (hi > N - 1) hi = r + (N - 1 - r) / D * D;
        if (upto(hi) - upto(lo - D) == 0) ++empty;
      }
    }
  return empty;
}

std::vector<OpCheck> check_attention(const ForwardState& f, const CheckOptions& options) {
  const Problem& p = f.problem;
  const Options& kopt = options.kernel_options;
  const DType dt = p.dtype;
  const std::size_t es = element_size(dt);
  const std::size_t n_qkv = static_cast<std::size_t>(p.batch * p.heads * p.seq_len * p.head_dim);
  const std::size_t n_rows = static_cast<std::size_t>(p.batch * p.heads * p.seq_len);

  const auto t0 = std::chrono::steady_clock::now();
  const Kernel kernel = get_kernel("sliding_window_attention", p, kopt);
  const double fetch_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();

  DeviceBuffer out(n_qkv * es), lse(n_rows * 4);
  poison(out, dt);
  poison(lse, DType::float32);
  auto run = [&] {
    std::vector<DevicePtr> args = {f.q_dev.ptr(), f.k_dev.ptr(), f.v_dev.ptr(), out.ptr(), lse.ptr()};
    if (p.key_mask != KeyMask::none) args.push_back(f.mask.ptr());
    kernel.launch(nullptr, args);
  };
  run();
  check_cuda(driver().cuCtxSynchronize(), "cuCtxSynchronize (after sliding_window_attention)");
  const NonFinite o_nf = count_nonfinite(out, dt, n_qkv, kopt);
  const NonFinite lse_nf = count_nonfinite(lse, DType::float32, n_rows, kopt);
  const double* mask = f.mask_values.empty() ? nullptr : f.mask_values.data();

  const auto& rows = f.rows;
  std::vector<ErrorSum> err_o(rows.size()), err_lse(rows.size());
  std::vector<char> o_gpu(rows.size() * p.head_dim * es);
  std::vector<float> lse_gpu(rows.size());
  for (std::size_t r = 0; r < rows.size(); ++r) {
    const auto [b, h, i] = rows[r];
    out.download(&o_gpu[r * p.head_dim * es], p.head_dim * es, reference::qkv_index(p, b, h, i, 0) * es);
    lse.download(&lse_gpu[r], 4, static_cast<std::size_t>((b * p.heads + h) * p.seq_len + i) * 4);
  }
  parallel_for(rows.size(), [&](std::size_t r) {
    const auto [b, h, i] = rows[r];
    std::vector<double> o_ref(static_cast<std::size_t>(p.head_dim));
    const double lse_ref =
        reference::sliding_window_attention_row(p, f.q.values.data(), f.k.values.data(), f.v.values.data(), mask, b,
                                                h, i, o_ref.data());
    for (std::int64_t d = 0; d < p.head_dim; ++d)
      err_o[r].add(element_value(dt, &o_gpu[(r * p.head_dim + d) * es]), o_ref[d], false);
    err_lse[r].add(lse_gpu[r], lse_ref, std::isinf(lse_ref));
  });

  const double tol = dt == DType::float32 ? 1e-5 : 1e-2;
  const double us = median_time_us(run, options.warmup, options.timing_runs);
  const std::uint64_t empty_rows = rows_without_keys(p, mask);
  auto make = [&](const char* name, const ErrorSum& e, const NonFinite& nf, std::uint64_t inf_expected) {
    return make_op_check(name, kernel.info().origin, fetch_ms, e, tol, rows.size(), nf, inf_expected, us);
  };
  OpCheck o = make("sliding_window_attention", total(err_o), o_nf, 0);
  OpCheck l = make("sliding_window_attention (lse)", total(err_lse), lse_nf, empty_rows);
  l.note = "LSE [B, H, N] float32; -inf at the rows with no allowed key";
  return {o, l};
}

}  // namespace bandjit
