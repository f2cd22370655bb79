// The softmax sets on the GPU against reference/softmax_reference: fresh random x (and mask,
// with fully masked rows), NaN-poisoned outputs, the forward checked, then the backward on
// the GPU's y with a fresh random dy; each also run in place (y over x, dx over dy), which
// must give the same bits.
#include "check/check_softmax.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <fmt/format.h>

#include "check/check_support.hpp"
#include "generator/family_registry.hpp"
#include "reference/softmax_reference.hpp"
#include "runtime/driver_api.hpp"

namespace bandjit {
namespace {

using nlohmann::json;

struct SoftmaxCase {
  std::string forward, backward;  // family names
  json params;                    // the entry's parameters, as get_kernel takes them
  std::int64_t batch = 1, heads = 1, queries = 1, L = 1;
  DType dtype = DType::float32;
  double scale = 1.0;
  std::string mask = "none";
  bool causal = false;
  std::int64_t rows() const { return batch * heads * queries; }
};

// Values as the dtype stores them: bytes for the GPU, exact doubles for the reference.
void store(DType d, double value, char* dst) {
  const float x = static_cast<float>(value);
  if (d == DType::float32) *reinterpret_cast<float*>(dst) = x;
  if (d == DType::float16) *reinterpret_cast<__half*>(dst) = __float2half_rn(x);
  if (d == DType::bfloat16) *reinterpret_cast<__nv_bfloat16*>(dst) = __float2bfloat16_rn(x);
}

// Mask rows [batch, 1, queries, L]: ~25 % of keys removed, and every 7th mask row (and the
// last) removed entirely, so fully masked rows always occur. Additive values are in [-2, 2).
struct HostMask {
  std::vector<unsigned char> removed;  // boolean
  std::vector<double> additive;        // additive, −inf where removed
  std::string bytes;
};
HostMask random_row_mask(const SoftmaxCase& c, std::uint64_t seed) {
  HostMask m;
  const std::size_t mask_rows = static_cast<std::size_t>(c.batch * c.queries), L = static_cast<std::size_t>(c.L);
  const std::size_t n = mask_rows * L, es = element_size(c.dtype);
  if (c.mask == "boolean") m.removed.resize(n);
  if (c.mask == "additive") m.additive.resize(n);
  m.bytes.resize(c.mask == "boolean" ? n : n * es);
  parallel_for((n + 65535) / 65536, [&](std::size_t blk) {
    for (std::size_t k = blk * 65536; k < std::min(n, (blk + 1) * 65536); ++k) {
      const std::size_t row = k / L;
      const bool removed = uniform(seed, k) < -0.5 || row % 7 == 3 || row + 1 == mask_rows;
      if (c.mask == "boolean") {
        m.removed[k] = removed;
        m.bytes[k] = static_cast<char>(removed);
      } else {
        store(c.dtype, removed ? -INFINITY : 2 * uniform(seed ^ 0x77, k), &m.bytes[k * es]);
        m.additive[k] = element_value(c.dtype, &m.bytes[k * es]);
      }
    }
  });
  return m;
}

// Every row when the problem is small, else the first and last, a row of each fully masked
// kind, and random rows.
std::vector<std::int64_t> rows_to_compare(const SoftmaxCase& c, std::uint64_t seed) {
  const std::int64_t rows = c.rows();
  std::vector<std::int64_t> out;
  if (rows * c.L <= (std::int64_t{1} << 22)) {
    for (std::int64_t r = 0; r < rows; ++r) out.push_back(r);
    return out;
  }
  std::mt19937_64 rng(seed);
  out = {0, rows - 1, std::min<std::int64_t>(rows - 1, 3), rows - 1 - (rows - 1) % c.queries};
  const std::int64_t budget = std::max<std::int64_t>(64, (std::int64_t{1} << 22) / c.L);
  for (std::int64_t k = 0; k < budget; ++k) out.push_back(static_cast<std::int64_t>(rng() % rows));
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::vector<double> download_rows(const DeviceBuffer& buf, const SoftmaxCase& c, const std::vector<std::int64_t>& rows) {
  const std::size_t es = element_size(c.dtype), L = static_cast<std::size_t>(c.L);
  std::string bytes(rows.size() * L * es, '\0');
  if (rows.size() == static_cast<std::size_t>(c.rows())) {
    buf.download(bytes.data(), bytes.size());
  } else {
    for (std::size_t r = 0; r < rows.size(); ++r)
      buf.download(&bytes[r * L * es], L * es, static_cast<std::size_t>(rows[r]) * L * es);
  }
  std::vector<double> values(rows.size() * L);
  for (std::size_t k = 0; k < values.size(); ++k) values[k] = element_value(c.dtype, &bytes[k * es]);
  return values;
}

std::uint64_t bitwise_differences(const std::vector<double>& a, const std::vector<double>& b) {
  std::uint64_t n = 0;
  for (std::size_t k = 0; k < a.size(); ++k) n += !(a[k] == b[k] || (std::isnan(a[k]) && std::isnan(b[k])));
  return n;
}

double ms_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
}

std::vector<OpCheck> check_case(const SoftmaxCase& c, const std::vector<std::string>& ops, const CheckOptions& options,
                                std::uint64_t* seed_used) {
  const std::uint64_t seed = options.seed ? options.seed : std::random_device{}() * 0x100000001ull + std::random_device{}();
  if (seed_used) *seed_used = seed;
  const Options& kopt = options.kernel_options;
  const auto wants = [&](const std::string& f) { return std::find(ops.begin(), ops.end(), f) != ops.end(); };
  const DType dt = c.dtype;
  const std::size_t es = element_size(dt), n = static_cast<std::size_t>(c.rows() * c.L), L = static_cast<std::size_t>(c.L);
  const double tol = dt == DType::float32 ? 1e-5 : 1e-2;
  const std::string params = c.params.dump();

  auto t0 = std::chrono::steady_clock::now();
  const Kernel fwd = get_kernel(c.forward, params, kopt);
  const double fwd_ms = ms_since(t0);

  // x in [-4, 4): with the scale, rows span a few e-folds, so the exponentials matter.
  HostTensor x;
  x.bytes.resize(n * es);
  x.values.resize(n);
  parallel_for((n + 65535) / 65536, [&](std::size_t blk) {
    for (std::size_t k = blk * 65536; k < std::min(n, (blk + 1) * 65536); ++k) {
      store(dt, 4 * uniform(seed, k), &x.bytes[k * es]);
      x.values[k] = element_value(dt, &x.bytes[k * es]);
    }
  });
  const HostMask mask = c.mask == "none" ? HostMask{} : random_row_mask(c, seed ^ 0x4444);
  DeviceBuffer dx_in(n * es), dy_out(n * es), dinplace(n * es), dmask(std::max<std::size_t>(mask.bytes.size(), 16));
  dx_in.upload(x.bytes.data(), x.bytes.size());
  if (!mask.bytes.empty()) dmask.upload(mask.bytes.data(), mask.bytes.size());
  poison(dy_out, dt);
  auto run_forward = [&](CUdeviceptr in, CUdeviceptr out) {
    if (c.mask == "none")
      fwd.launch(nullptr, {in, out});
    else
      fwd.launch(nullptr, {in, out, dmask.ptr()});
  };
  run_forward(dx_in.ptr(), dy_out.ptr());
  dinplace.upload(x.bytes.data(), x.bytes.size());
  run_forward(dinplace.ptr(), dinplace.ptr());
  check_cuda(driver().cuCtxSynchronize(), "cuCtxSynchronize (after the forward)");
  const NonFinite y_nf = count_nonfinite(dy_out, dt, n, kopt);

  const auto rows = rows_to_compare(c, seed);
  const std::vector<double> y = download_rows(dy_out, c, rows), y_in_place = download_rows(dinplace, c, rows);
  // floor: the error of the float64 answer rounded to the output dtype, which no kernel can
  // beat (float16 outputs deep in the subnormal range: long rows, small scales).
  std::vector<ErrorSum> err(rows.size()), floor_err(rows.size());
  parallel_for(rows.size(), [&](std::size_t k) {
    const std::int64_t r = rows[k], q = r % c.queries, mask_row = (r / (c.heads * c.queries)) * c.queries + q;
    reference::RowMask m;
    if (c.mask == "boolean") m.boolean = &mask.removed[mask_row * L];
    if (c.mask == "additive") m.additive = &mask.additive[mask_row * L];
    if (c.causal) m.last_key = reference::causal_last_key(q, c.queries, c.L);
    std::vector<double> ref(L);
    reference::softmax_row(&x.values[r * L], c.L, c.scale, m, ref.data());
    // A removed key (or a fully masked row) must be exactly 0.
    for (std::size_t j = 0; j < L; ++j) {
      err[k].add(y[k * L + j], ref[j], reference::key_removed(m, j) || ref[j] == 0.0);
      floor_err[k].add(round_to(c.dtype, ref[j]), ref[j], false);
    }
  });
  const bool masked_rows = c.mask != "none" || c.causal;

  std::vector<OpCheck> out;
  auto report = [&](const std::string& family, const Kernel& k, double get_ms, const ErrorSum& e, double floor_rel,
                    std::uint64_t aliasing, const NonFinite& nf, const std::function<void()>& run, std::string note) {
    OpCheck r;
    r.family = family;
    r.origin = k.info().origin;
    r.get_kernel_ms = get_ms;
    r.rel_error = e.rel();
    // SPEC §7's tolerance, unless rounding the exact answer to the dtype alone costs more
    // than half of it: then twice that rounding error.
    r.tolerance = std::max(tol, 2 * floor_rel);
    note += fmt::format("; rounding the float64 answer to {} alone: {:.1e}", to_string(c.dtype), floor_rel);
    r.rows_checked = rows.size();
    r.structure_mismatches = e.structure + aliasing;
    r.nan_count = nf.nan;
    r.inf_count = nf.inf;
    r.median_us = median_time_us(run, options.warmup, options.timing_runs);
    r.note = note;
    r.passed = r.rel_error <= r.tolerance && r.structure_mismatches == 0 && r.nan_count == 0 && r.inf_count == 0;
    out.push_back(r);
  };
  const std::uint64_t fwd_alias = bitwise_differences(y, y_in_place);
  if (wants(c.forward))
    report(c.forward, fwd, fwd_ms, total(err), total(floor_err).rel(), fwd_alias, y_nf, [&] { run_forward(dx_in.ptr(), dy_out.ptr()); },
           fmt::format("in place differs at {} elements{}", fwd_alias,
                       masked_rows ? "; removed keys and fully masked rows compared exactly" : ""));
  if (!wants(c.backward)) return out;

  // Backward on the GPU's y (exact zeros at removed keys) and a fresh dy in [-1, 1).
  t0 = std::chrono::steady_clock::now();
  const Kernel bwd = get_kernel(c.backward, params, kopt);
  const double bwd_ms = ms_since(t0);
  const HostTensor dy = random_tensor(dt, n, seed ^ 0x5555);
  DeviceBuffer ddy(n * es), ddx(n * es);
  ddy.upload(dy.bytes.data(), dy.bytes.size());
  poison(ddx, dt);
  bwd.launch(nullptr, {dy_out.ptr(), ddy.ptr(), ddx.ptr()});
  dinplace.upload(dy.bytes.data(), dy.bytes.size());
  bwd.launch(nullptr, {dy_out.ptr(), dinplace.ptr(), dinplace.ptr()});
  check_cuda(driver().cuCtxSynchronize(), "cuCtxSynchronize (after the backward)");
  const NonFinite dx_nf = count_nonfinite(ddx, dt, n, kopt);
  const std::vector<double> dx = download_rows(ddx, c, rows), dx_in_place = download_rows(dinplace, c, rows);
  std::vector<ErrorSum> gerr(rows.size()), gfloor(rows.size());
  parallel_for(rows.size(), [&](std::size_t k) {
    const std::int64_t r = rows[k];
    std::vector<double> ref(L);
    reference::softmax_backward_row(&y[k * L], &dy.values[r * L], c.L, c.scale, ref.data());
    for (std::size_t j = 0; j < L; ++j) {
      gerr[k].add(dx[k * L + j], ref[j], y[k * L + j] == 0.0);
      gfloor[k].add(round_to(c.dtype, ref[j]), ref[j], false);
    }
  });
  const std::uint64_t bwd_alias = bitwise_differences(dx, dx_in_place);
  report(c.backward, bwd, bwd_ms, total(gerr), total(gfloor).rel(), bwd_alias, dx_nf,
         [&] { bwd.launch(nullptr, {dy_out.ptr(), ddy.ptr(), ddx.ptr()}); },
         fmt::format("reference on the GPU's y; in place differs at {} elements", bwd_alias));
  return out;
}

}  // namespace

std::vector<OpCheck> check_scale_mask_softmax_set(const std::vector<std::string>& ops, const json& params,
                                                  const CheckOptions& options, std::uint64_t* seed_used) {
  SoftmaxCase c;
  c.forward = "scale_mask_softmax";
  c.backward = "scale_mask_softmax_backward";
  const json canonical = find_family(c.forward).canonical(params);
  c.params = canonical;
  c.batch = canonical.at("batch").get<std::int64_t>();
  c.heads = canonical.at("heads").get<std::int64_t>();
  c.queries = canonical.at("queries").get<std::int64_t>();
  c.L = canonical.at("row_length").get<std::int64_t>();
  c.dtype = dtype_of(canonical);
  c.scale = canonical.at("scale").get<double>();
  c.mask = canonical.at("mask").get<std::string>();
  c.causal = canonical.at("causal").get<bool>();
  return check_case(c, ops, options, seed_used);
}

std::vector<OpCheck> check_softmax_set(const std::vector<std::string>& ops, const json& params,
                                       const CheckOptions& options, std::uint64_t* seed_used) {
  SoftmaxCase c;
  c.forward = "softmax";
  c.backward = "softmax_backward";
  const json canonical = find_family(c.forward).canonical(params);
  c.params = canonical;
  c.queries = canonical.at("rows").get<std::int64_t>();
  c.L = canonical.at("row_length").get<std::int64_t>();
  c.dtype = dtype_of(canonical);
  return check_case(c, ops, options, seed_used);
}

}  // namespace bandjit
