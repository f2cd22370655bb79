#include "bench/bench_layer_norm.hpp"

#include <algorithm>
#include <cmath>

#include "bench/bench_support.hpp"
#include "generator/family_registry.hpp"

namespace bandjit {

double layer_norm_bytes(const std::string& family, const nlohmann::json& p) {
  const double rows = p.at("rows").get<double>(), hidden = p.at("hidden").get<double>();
  const double es = static_cast<double>(element_size(dtype_of(p)));
  const double params = hidden * 4 * (int(p.at("weight").get<bool>()) + int(p.at("bias").get<bool>()));
  if (family == "layer_norm") return 2 * rows * hidden * es + params + 8 * rows;
  const double weight = p.at("weight").get<bool>() ? hidden * 4 : 0;
  return 3 * rows * hidden * es + 8 * rows + weight + params;  // dy, x, dx; mean, rstd; w; dw, db
}

std::vector<BenchRow> bench_layer_norm(const std::vector<std::string>& ops, const nlohmann::json& params,
                                       const BenchOptions& options) {
  const nlohmann::json p = find_family("layer_norm").canonical(params);
  const DType dt = dtype_of(p);
  const std::size_t rows = p.at("rows"), hidden = p.at("hidden"), es = element_size(dt);
  const std::size_t n = rows * hidden;
  const bool has_w = p.at("weight"), has_b = p.at("bias");
  // One set: x, y, dy, dx and the row statistics.
  const double set_bytes = double(4 * n * es + 8 * rows);
  const int sets = std::max(1, std::min(8, static_cast<int>(std::ceil(options.min_working_set / set_bytes))));
  struct Set {
    DeviceBuffer x, y, dy, dx, mean, rstd;
  };
  std::vector<Set> bufs;
  for (int i = 0; i < sets; ++i) {
    Set s{DeviceBuffer(n * es), DeviceBuffer(n * es), DeviceBuffer(n * es), DeviceBuffer(n * es),
          DeviceBuffer(rows * 4), DeviceBuffer(rows * 4)};
    fill_random(s.x, dt, 11 + i);
    fill_random(s.dy, dt, 22 + i);
    bufs.push_back(std::move(s));
  }
  DeviceBuffer weight(hidden * 4), bias(hidden * 4), dweight(hidden * 4), dbias(hidden * 4);
  fill_random(weight, DType::float32, 33);
  fill_random(bias, DType::float32, 44);
  dweight.fill32(0);
  dbias.fill32(0);

  std::vector<BenchRow> out;
  const Kernel fwd = get_kernel("layer_norm", p.dump(), options.kernel_options);
  auto run_fwd = [&](int i) {
    std::vector<DevicePtr> a = {bufs[i].x.ptr()};
    if (has_w) a.push_back(weight.ptr());
    if (has_b) a.push_back(bias.ptr());
    for (auto* b : {&bufs[i].y, &bufs[i].mean, &bufs[i].rstd}) a.push_back(b->ptr());
    fwd.launch(nullptr, a);
  };
  for (int i = 0; i < sets; ++i) run_fwd(i);  // the backward's mean and rstd
  auto add = [&](const std::string& family, const std::function<void(int)>& work) {
    const Sample s = time_rotating(work, sets, options.warmup, options.runs);
    out.push_back({family, s.median_us, s.min_us, layer_norm_bytes(family, p), 0, sets});
  };
  if (std::find(ops.begin(), ops.end(), "layer_norm") != ops.end()) add("layer_norm", run_fwd);
  if (std::find(ops.begin(), ops.end(), "layer_norm_backward") != ops.end()) {
    const Kernel bwd = get_kernel("layer_norm_backward", p.dump(), options.kernel_options);
    add("layer_norm_backward", [&](int i) {
      std::vector<DevicePtr> a = {bufs[i].dy.ptr(), bufs[i].x.ptr(), bufs[i].mean.ptr(), bufs[i].rstd.ptr()};
      if (has_w) a.push_back(weight.ptr());
      a.push_back(bufs[i].dx.ptr());
      if (has_w) a.push_back(dweight.ptr());
      if (has_b) a.push_back(dbias.ptr());
      bwd.launch(nullptr, a);
    });
  }
  return out;
}

}  // namespace bandjit
