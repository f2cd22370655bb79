#include "check/check_layer_norm.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>
#include <set>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <fmt/format.h>

#include "check/check_support.hpp"
#include "check/device_buffer.hpp"
#include "generator/family_registry.hpp"
#include "reference/layer_norm_reference.hpp"

namespace bandjit {
namespace {

using nlohmann::json;

constexpr std::int64_t kFullElements = std::int64_t(1) << 20;

// Stores v in dtype d at dst and returns the stored value.
double encode(DType d, double v, char* dst) {
  if (d == DType::float32) *reinterpret_cast<float*>(dst) = static_cast<float>(v);
  if (d == DType::float16) *reinterpret_cast<__half*>(dst) = __float2half_rn(static_cast<float>(v));
  if (d == DType::bfloat16) *reinterpret_cast<__nv_bfloat16*>(dst) = __float2bfloat16_rn(static_cast<float>(v));
  return element_value(d, dst);
}

// x = a·u_row + 0.5·u: rows with a mean far from their spread (σ ≈ 0.29), so a one-pass
// E[x²] − E[x]² would lose digits. float32: a = 8, mean/σ up to ~28: a one-pass variance
// errs by ~6e-8·28² ≈ 5e-5 there (caught by the 1e-5 tolerance), two passes by ~2e-6.
// 16-bit inputs: a = 2, so the stored spread keeps its digits.
HostTensor offset_rows(DType d, std::int64_t rows, int hidden, std::uint64_t seed) {
  HostTensor t;
  const std::size_t es = element_size(d), n = static_cast<std::size_t>(rows) * hidden;
  t.bytes.resize(n * es);
  t.values.resize(n);
  parallel_for(static_cast<std::size_t>(rows), [&](std::size_t r) {
    const double offset = (d == DType::float32 ? 8 : 2) * uniform(seed ^ 0x0ff5e7, r);
    for (std::size_t i = r * hidden; i < (r + 1) * hidden; ++i)
      t.values[i] = encode(d, offset + 0.5 * uniform(seed, i), &t.bytes[i * es]);
  });
  return t;
}

std::vector<float> floats(std::size_t n, double lo, double hi, std::uint64_t seed) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<float>(lo + (hi - lo) * 0.5 * (uniform(seed, i) + 1));
  return v;
}

// Every row up to kFullElements, else the first and last 8 and random ones up to that many elements.
std::vector<std::int64_t> rows_to_check(std::int64_t rows, int hidden, std::uint64_t seed) {
  std::vector<std::int64_t> out;
  if (rows * hidden <= kFullElements) {
    for (std::int64_t r = 0; r < rows; ++r) out.push_back(r);
    return out;
  }
  std::set<std::int64_t> chosen;
  for (std::int64_t r = 0; r < std::min<std::int64_t>(rows, 8); ++r) chosen.insert({r, rows - 1 - r});
  std::mt19937_64 rng(seed);
  const std::int64_t want = std::max<std::int64_t>(24, kFullElements / hidden);
  while (static_cast<std::int64_t>(chosen.size()) < std::min(rows, want))
    chosen.insert(static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(rows)));
  out.assign(chosen.begin(), chosen.end());
  return out;
}

// The sampled rows of a [rows, hidden] device tensor as doubles, row after row.
std::vector<double> download_rows(const DeviceBuffer& buf, DType d, const std::vector<std::int64_t>& rows,
                                  std::int64_t total_rows, int hidden, const Options& options) {
  const std::size_t es = element_size(d);
  if (static_cast<std::int64_t>(rows.size()) == total_rows) {
    std::string bytes(static_cast<std::size_t>(total_rows) * hidden * es, '\0');
    buf.download(bytes.data(), bytes.size());
    std::vector<double> v(bytes.size() / es);
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = element_value(d, &bytes[i * es]);
    return v;
  }
  std::vector<std::int64_t> index;
  for (auto r : rows)
    for (int c = 0; c < hidden; ++c) index.push_back(r * hidden + c);
  return gather(buf, d, index, options);
}

struct Output {
  const char* name;
  ErrorSum error;
  double tolerance;
};

OpCheck report(const char* family, const Kernel& kernel, double get_ms, std::vector<Output> outputs,
               NonFinite nonfinite, std::size_t rows_checked, const std::function<void()>& run,
               const CheckOptions& options) {
  OpCheck c;
  c.family = family;
  c.origin = kernel.info().origin;
  c.get_kernel_ms = get_ms;
  c.rows_checked = rows_checked;
  c.nan_count = nonfinite.nan;
  c.inf_count = nonfinite.inf;
  c.passed = nonfinite.nan == 0 && nonfinite.inf == 0;
  double worst = -1;
  for (const auto& o : outputs) {
    const double rel = o.error.rel();
    c.note += fmt::format("{}{} {:.2e} (tol {:.0e})", c.note.empty() ? "" : ", ", o.name, rel, o.tolerance);
    c.structure_mismatches += o.error.structure;  // non-finite outputs
    c.passed = c.passed && rel <= o.tolerance && o.error.structure == 0;
    if (rel / o.tolerance > worst) worst = rel / o.tolerance, c.rel_error = rel, c.tolerance = o.tolerance;
  }
  c.median_us = median_time_us(run, options.warmup, options.timing_runs);
  return c;
}

}  // namespace

std::vector<OpCheck> check_layer_norm(const std::vector<std::string>& ops, const json& params,
                                      const CheckOptions& options, std::uint64_t* seed_used) {
  const json p = find_family("layer_norm").canonical(params);
  const std::uint64_t seed = options.seed ? options.seed : std::random_device{}() * 0x100000001ull + std::random_device{}();
  if (seed_used) *seed_used = seed;
  const std::int64_t rows = p.at("rows");
  const int hidden = p.at("hidden");
  const DType dt = dtype_of(p);
  const bool has_w = p.at("weight"), has_b = p.at("bias");
  const double eps = static_cast<float>(p.at("epsilon").get<double>());  // the kernel adds it as float32
  const std::size_t n = static_cast<std::size_t>(rows) * hidden, es = element_size(dt), H = hidden;
  const Options& kopt = options.kernel_options;
  const double tol_t = dt == DType::float32 ? 1e-5 : 1e-2, tol_f32 = 1e-5;

  const HostTensor x = offset_rows(dt, rows, hidden, seed ^ 0x1111);
  const std::vector<float> w = floats(H, 0.5, 1.5, seed ^ 0x2222), b = floats(H, -0.5, 0.5, seed ^ 0x3333);
  const std::vector<double> wd(w.begin(), w.end()), bd(b.begin(), b.end());
  DeviceBuffer xbuf(n * es), wbuf(H * 4), bbuf(H * 4);
  xbuf.upload(x.bytes.data(), x.bytes.size());
  wbuf.upload(w.data(), H * 4);
  bbuf.upload(b.data(), H * 4);
  const auto checked = rows_to_check(rows, hidden, seed);
  // Reference statistics of every row (the backward's inputs).
  std::vector<reference::RowStats> stats(static_cast<std::size_t>(rows));
  parallel_for(stats.size(), [&](std::size_t r) {
    std::vector<double> y(H);
    stats[r] = reference::layer_norm_row(&x.values[r * H], nullptr, nullptr, hidden, eps, y.data());
  });

  std::vector<OpCheck> out;
  auto fetch = [&](const char* family, double& ms) {
    const auto t0 = std::chrono::steady_clock::now();
    Kernel k = get_kernel(family, p.dump(), kopt);
    ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    return k;
  };
  const auto wants = [&](const char* f) { return std::find(ops.begin(), ops.end(), f) != ops.end(); };

  if (wants("layer_norm")) {
    double ms = 0;
    const Kernel k = fetch("layer_norm", ms);
    DeviceBuffer y(n * es), mean(rows * 4), rstd(rows * 4);
    poison(y, dt);
    poison(mean, DType::float32);
    poison(rstd, DType::float32);
    std::vector<DevicePtr> args = {xbuf.ptr()};
    if (has_w) args.push_back(wbuf.ptr());
    if (has_b) args.push_back(bbuf.ptr());
    for (auto* buf : {&y, &mean, &rstd}) args.push_back(buf->ptr());
    auto run = [&] { k.launch(nullptr, args); };
    run();
    check_cuda(driver().cuCtxSynchronize(), "cuCtxSynchronize (after layer_norm)");
    NonFinite nf = count_nonfinite(y, dt, n, kopt);
    for (auto* buf : {&mean, &rstd}) {
      const NonFinite s = count_nonfinite(*buf, DType::float32, rows, kopt);
      nf.nan += s.nan, nf.inf += s.inf;
    }
    const auto y_gpu = download_rows(y, dt, checked, rows, hidden, kopt);
    std::vector<float> mean_gpu(rows), rstd_gpu(rows);
    mean.download(mean_gpu.data(), rows * 4);
    rstd.download(rstd_gpu.data(), rows * 4);
    std::vector<ErrorSum> ey(checked.size()), em(checked.size()), er(checked.size());
    parallel_for(checked.size(), [&](std::size_t k) {
      const std::int64_t r = checked[k];
      std::vector<double> ref(H);
      const auto s = reference::layer_norm_row(&x.values[r * H], has_w ? wd.data() : nullptr,
                                               has_b ? bd.data() : nullptr, hidden, eps, ref.data());
      for (std::size_t c = 0; c < H; ++c) ey[k].add(y_gpu[k * H + c], ref[c], false);
      em[k].add(mean_gpu[r], s.mean, false);
      er[k].add(rstd_gpu[r], s.rstd, false);
    });
    out.push_back(report("layer_norm", k, ms,
                         {{"y", total(ey), tol_t}, {"mean", total(em), tol_f32}, {"rstd", total(er), tol_f32}}, nf,
                         checked.size(), run, options));
  }

  if (wants("layer_norm_backward")) {
    double ms = 0;
    const Kernel k = fetch("layer_norm_backward", ms);
    const HostTensor dy = random_tensor(dt, n, seed ^ 0x4444);
    std::vector<float> mean_f(rows), rstd_f(rows);
    for (std::size_t r = 0; r < stats.size(); ++r) {
      mean_f[r] = static_cast<float>(stats[r].mean);
      rstd_f[r] = static_cast<float>(stats[r].rstd);
      stats[r] = {mean_f[r], rstd_f[r]};  // the reference takes what the kernel gets
    }
    const std::vector<float> dw0 = floats(H, -1, 1, seed ^ 0x5555), db0 = floats(H, -1, 1, seed ^ 0x6666);
    DeviceBuffer ddy(n * es), dmean(rows * 4), drstd(rows * 4), ddx(n * es), ddw(H * 4), ddb(H * 4);
    ddy.upload(dy.bytes.data(), dy.bytes.size());
    dmean.upload(mean_f.data(), rows * 4);
    drstd.upload(rstd_f.data(), rows * 4);
    ddw.upload(dw0.data(), H * 4);
    ddb.upload(db0.data(), H * 4);
    poison(ddx, dt);
    std::vector<DevicePtr> args = {ddy.ptr(), xbuf.ptr(), dmean.ptr(), drstd.ptr()};
    if (has_w) args.push_back(wbuf.ptr());
    args.push_back(ddx.ptr());
    if (has_w) args.push_back(ddw.ptr());
    if (has_b) args.push_back(ddb.ptr());
    auto run = [&] { k.launch(nullptr, args); };
    run();
    check_cuda(driver().cuCtxSynchronize(), "cuCtxSynchronize (after layer_norm_backward)");
    NonFinite nf = count_nonfinite(ddx, dt, n, kopt);
    for (auto* buf : {&ddw, &ddb}) {
      const NonFinite s = count_nonfinite(*buf, DType::float32, H, kopt);
      nf.nan += s.nan, nf.inf += s.inf;
    }
    const auto dx_gpu = download_rows(ddx, dt, checked, rows, hidden, kopt);
    std::vector<float> dw_gpu(H), db_gpu(H);
    ddw.download(dw_gpu.data(), H * 4);
    ddb.download(db_gpu.data(), H * 4);
    // dx on the checked rows; dweight and dbias over every row, summed in fixed slices.
    std::vector<ErrorSum> edx(checked.size());
    parallel_for(checked.size(), [&](std::size_t k) {
      const std::int64_t r = checked[k];
      std::vector<double> ref(H);
      reference::layer_norm_backward_row(&dy.values[r * H], &x.values[r * H], stats[r], has_w ? wd.data() : nullptr,
                                         hidden, ref.data(), nullptr, nullptr);
      for (std::size_t c = 0; c < H; ++c) edx[k].add(dx_gpu[k * H + c], ref[c], false);
    });
    const std::size_t slices = std::min<std::size_t>(64, static_cast<std::size_t>(rows));
    std::vector<std::vector<double>> sw(slices, std::vector<double>(H)), sb(slices, std::vector<double>(H));
    parallel_for(slices, [&](std::size_t s) {
      std::vector<double> dx_ref(H);
      for (std::size_t r = s; r < static_cast<std::size_t>(rows); r += slices)
        reference::layer_norm_backward_row(&dy.values[r * H], &x.values[r * H], stats[r],
                                           has_w ? wd.data() : nullptr, hidden, dx_ref.data(), sw[s].data(),
                                           sb[s].data());
    });
    ErrorSum ew, eb;
    for (std::size_t c = 0; c < H; ++c) {
      double rw = 0, rb = 0;
      for (std::size_t s = 0; s < slices; ++s) rw += sw[s][c], rb += sb[s][c];
      ew.add(double(dw_gpu[c]) - dw0[c], rw, false);
      eb.add(double(db_gpu[c]) - db0[c], rb, false);
    }
    std::vector<Output> outputs = {{"dx", total(edx), tol_t}};
    if (has_w) outputs.push_back({"wbuf", ew, tol_f32});
    if (has_b) outputs.push_back({"bbuf", eb, tol_f32});
    out.push_back(report("layer_norm_backward", k, ms, outputs, nf, checked.size(), run, options));
  }
  return out;
}

}  // namespace bandjit
