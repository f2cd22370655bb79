// The softmax sets timed over rotating buffer sets (≥ min_working_set bytes, so DRAM and not
// the L2 is measured). Must-move bytes: forward reads x (and the mask) and writes y;
// backward reads y and dy and writes dx.
#include "bench/bench_softmax.hpp"

#include <algorithm>
#include <cmath>

#include "bench/bench_support.hpp"
#include "generator/family_registry.hpp"
#include "runtime/driver_api.hpp"

namespace bandjit {
namespace {

using nlohmann::json;

struct Sizes {
  std::string forward, backward;
  std::size_t elements = 0, mask_bytes = 0;
  /// Share of x and mask the forward must read: a causal row skips the keys past its limit.
  double read_fraction = 1;
};

std::vector<BenchRow> bench_rows(const Sizes& z, const std::vector<std::string>& ops, const json& params,
                                 const BenchOptions& options) {
  const DType dt = dtype_of(params);
  const std::size_t es = element_size(dt), bytes = z.elements * es;
  const double set_bytes = double(4 * bytes + z.mask_bytes);  // x, y, dy, dx, mask
  const int sets = std::max(1, std::min(8, static_cast<int>(std::ceil(options.min_working_set / set_bytes))));
  const std::string text = params.dump();
  const Kernel fwd = get_kernel(z.forward, text, options.kernel_options);
  const Kernel bwd = get_kernel(z.backward, text, options.kernel_options);

  struct Set {
    DeviceBuffer x, y, dy, dx, mask;
  };
  std::vector<Set> bufs;
  const auto& cu = driver();
  for (int i = 0; i < sets; ++i) {
    Set s{DeviceBuffer(bytes), DeviceBuffer(bytes), DeviceBuffer(bytes), DeviceBuffer(bytes),
          DeviceBuffer(std::max<std::size_t>(16, (z.mask_bytes + 3) / 4 * 4))};  // whole words for fill32
    if (i == 0) {
      fill_random(s.x, dt, 11);
      fill_random(s.dy, dt, 22);
    } else {  // copies of the first set: filling on the host is the slow part
      check_cuda(cu.cuMemcpyDtoD(s.x.ptr(), bufs[0].x.ptr(), bytes), "cuMemcpyDtoD");
      check_cuda(cu.cuMemcpyDtoD(s.dy.ptr(), bufs[0].dy.ptr(), bytes), "cuMemcpyDtoD");
    }
    s.mask.fill32(0);  // boolean: keep every key; additive: add 0
    bufs.push_back(std::move(s));
  }
  auto run_fwd = [&](int i) {
    if (z.mask_bytes == 0)
      fwd.launch(nullptr, {bufs[i].x.ptr(), bufs[i].y.ptr()});
    else
      fwd.launch(nullptr, {bufs[i].x.ptr(), bufs[i].y.ptr(), bufs[i].mask.ptr()});
  };
  auto run_bwd = [&](int i) { bwd.launch(nullptr, {bufs[i].y.ptr(), bufs[i].dy.ptr(), bufs[i].dx.ptr()}); };
  for (int i = 0; i < sets; ++i) run_fwd(i);  // realistic y for the backward
  check_cuda(cu.cuCtxSynchronize(), "cuCtxSynchronize");

  std::vector<BenchRow> rows;
  const auto wants = [&](const std::string& f) { return std::find(ops.begin(), ops.end(), f) != ops.end(); };
  if (wants(z.forward)) {
    const Sample s = time_rotating(run_fwd, sets, options.warmup, options.runs);
    rows.push_back({z.forward, s.median_us, s.min_us, double(bytes) * (1 + z.read_fraction) +
                                                        double(z.mask_bytes) * z.read_fraction, 0, sets});
  }
  if (wants(z.backward)) {
    const Sample s = time_rotating(run_bwd, sets, options.warmup, options.runs);
    rows.push_back({z.backward, s.median_us, s.min_us, double(3 * bytes), 0, sets});
  }
  return rows;
}

}  // namespace

std::vector<BenchRow> bench_scale_mask_softmax_set(const std::vector<std::string>& ops, const json& params,
                                                   const BenchOptions& options) {
  const json c = find_family("scale_mask_softmax").canonical(params);
  Sizes z{"scale_mask_softmax", "scale_mask_softmax_backward"};
  const auto L = c.at("row_length").get<std::size_t>(), b = c.at("batch").get<std::size_t>();
  const auto q = c.at("queries").get<std::size_t>();
  z.elements = b * c.at("heads").get<std::size_t>() * q * L;
  const std::string mask = c.at("mask").get<std::string>();
  if (mask != "none") z.mask_bytes = b * q * L * (mask == "boolean" ? 1 : element_size(dtype_of(c)));
  if (c.at("causal").get<bool>()) {  // query i keeps keys j ≤ i + (L − queries)
    double kept = 0;
    for (std::size_t i = 0; i < q; ++i)
      kept += double(std::min<std::int64_t>(L, std::max<std::int64_t>(0, std::int64_t(i + L) - std::int64_t(q) + 1)));
    z.read_fraction = kept / (double(q) * double(L));
  }
  return bench_rows(z, ops, c, options);
}

std::vector<BenchRow> bench_softmax_set(const std::vector<std::string>& ops, const json& params,
                                        const BenchOptions& options) {
  const json c = find_family("softmax").canonical(params);
  Sizes z{"softmax", "softmax_backward"};
  z.elements = c.at("rows").get<std::size_t>() * c.at("row_length").get<std::size_t>();
  return bench_rows(z, ops, c, options);
}

}  // namespace bandjit
