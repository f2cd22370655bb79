#include "bench/band_bench.hpp"
#include "bench/bench_support.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "bandjit/backward.hpp"
#include "check/device_buffer.hpp"
#include "runtime/driver_api.hpp"

namespace bandjit {
double family_bytes(const std::string& family, const Problem& p) {
  const double es = static_cast<double>(element_size(p.dtype));
  const double qkv = double(p.batch) * p.heads * p.seq_len * p.head_dim * es;
  const double band = double(p.batch) * p.heads * p.seq_len * p.diagonals() * es;
  const double mask = p.key_mask == KeyMask::none ? 0 : double(p.batch) * p.seq_len * (p.key_mask == KeyMask::boolean ? 1 : 4);
  if (family == "band_qk") return 2 * qkv + band;
  if (family == "band_softmax") return 2 * band + mask;
  if (family == "band_pv") return band + 2 * qkv;
  if (family == "band_tpv") return band + 2 * qkv;  // read X, Y; write Z
  if (family == "band_softmax_backward") return 3 * band + mask;  // read P, dP; write dS
  if (family == "sliding_window_attention")  // read Q, K, V; write O and the float32 LSE
    return 4 * qkv + double(p.batch) * p.heads * p.seq_len * 4 + mask;
  if (family == "forward")  // the three unfused kernels: S and P each written once and read once
    return family_bytes("band_qk", p) + family_bytes("band_softmax", p) + family_bytes("band_pv", p);
  if (family == "backward")  // attention_backward's five launches: dP and dS each written once, read once or twice
    return family_bytes("band_qk", p) + family_bytes("band_softmax_backward", p) + family_bytes("band_pv", p) +
           2 * family_bytes("band_tpv", p);
  return 0;
}

double family_flops(const std::string& family, const Problem& p) {
  const double band_macs = double(p.batch) * p.heads * p.seq_len * p.diagonals() * p.head_dim;
  if (family == "band_qk" || family == "band_pv" || family == "band_tpv") return 2 * band_macs;
  if (family == "forward" || family == "sliding_window_attention") return 4 * band_macs;
  if (family == "backward") return 8 * band_macs;  // dP, dQ, dK, dV: four band products
  return 0;
}

std::vector<BenchRow> bench_problem(const Problem& p, const BenchOptions& options) {
  validate(p);
  const std::size_t es = element_size(p.dtype);
  const std::size_t n_qkv = static_cast<std::size_t>(p.batch * p.heads * p.seq_len * p.head_dim);
  const std::size_t n_band = static_cast<std::size_t>(p.batch * p.heads * p.seq_len * p.diagonals());
  // Forward: Q, K, V, O, S, P; backward: dO, dQ, dK, dV, dP, workspace.
  // Fused forward: its own O and LSE.
  const std::size_t n_rows = static_cast<std::size_t>(p.batch * p.heads * p.seq_len);
  const double set_bytes = double(9 * n_qkv + 4 * n_band) * es + double(n_rows) * 4;
  const int sets = std::max(1, std::min(8, static_cast<int>(std::ceil(options.min_working_set / set_bytes))));

  const Kernel qk = get_kernel("band_qk", p, options.kernel_options);
  const Kernel sm = get_kernel("band_softmax", p, options.kernel_options);
  const Kernel pv = get_kernel("band_pv", p, options.kernel_options);
  const Kernel tpv = get_kernel("band_tpv", p, options.kernel_options);
  const Kernel smb = get_kernel("band_softmax_backward", p, options.kernel_options);
  const Kernel fused = get_kernel("sliding_window_attention", p, options.kernel_options);
  const AttentionBackward backward(p, options.kernel_options);
  DeviceBuffer mask(std::max<std::size_t>(16, static_cast<std::size_t>(p.batch * p.seq_len) * 4));
  mask.fill32(p.key_mask == KeyMask::boolean ? 0x01010101u : 0u);  // keep every key

  struct Set {
    DeviceBuffer q, k, v, s, p, o, d_o, dq, dk, dv, dp, ws, fused_o, lse;
  };
  std::vector<Set> bufs;
  for (int i = 0; i < sets; ++i) {
    Set set{DeviceBuffer(n_qkv * es), DeviceBuffer(n_qkv * es), DeviceBuffer(n_qkv * es),
            DeviceBuffer(n_band * es), DeviceBuffer(n_band * es), DeviceBuffer(n_qkv * es),
            DeviceBuffer(n_qkv * es), DeviceBuffer(n_qkv * es), DeviceBuffer(n_qkv * es),
            DeviceBuffer(n_qkv * es), DeviceBuffer(n_band * es), DeviceBuffer(n_band * es),
            DeviceBuffer(n_qkv * es), DeviceBuffer(n_rows * 4)};
    fill_random(set.q, p.dtype, 11 + i);
    fill_random(set.k, p.dtype, 22 + i);
    fill_random(set.v, p.dtype, 33 + i);
    fill_random(set.d_o, p.dtype, 44 + i);
    bufs.push_back(std::move(set));
  }
  auto run_qk = [&](int i) { qk.launch(nullptr, {bufs[i].q.ptr(), bufs[i].k.ptr(), bufs[i].s.ptr()}); };
  auto run_sm = [&](int i) {
    if (p.key_mask == KeyMask::none)
      sm.launch(nullptr, {bufs[i].s.ptr(), bufs[i].p.ptr()});
    else
      sm.launch(nullptr, {bufs[i].s.ptr(), bufs[i].p.ptr(), mask.ptr()});
  };
  auto run_pv = [&](int i) { pv.launch(nullptr, {bufs[i].p.ptr(), bufs[i].v.ptr(), bufs[i].o.ptr()}); };
  auto run_fused = [&](int i) {
    std::vector<DevicePtr> args = {bufs[i].q.ptr(), bufs[i].k.ptr(), bufs[i].v.ptr(), bufs[i].fused_o.ptr(),
                               bufs[i].lse.ptr()};
    if (p.key_mask != KeyMask::none) args.push_back(mask.ptr());
    fused.launch(nullptr, args);
  };
  // band_tpv as the backward uses it most: dV = band_tpv(P, dO).
  auto run_tpv = [&](int i) { tpv.launch(nullptr, {bufs[i].p.ptr(), bufs[i].d_o.ptr(), bufs[i].dv.ptr()}); };
  auto run_smb = [&](int i) {
    if (p.key_mask == KeyMask::none)
      smb.launch(nullptr, {bufs[i].p.ptr(), bufs[i].dp.ptr(), bufs[i].ws.ptr()});
    else
      smb.launch(nullptr, {bufs[i].p.ptr(), bufs[i].dp.ptr(), bufs[i].ws.ptr(), mask.ptr()});
  };
  auto run_backward = [&](int i) {
    BackwardTensors t;
    t.q = bufs[i].q.ptr();
    t.k = bufs[i].k.ptr();
    t.v = bufs[i].v.ptr();
    t.p = bufs[i].p.ptr();
    t.d_o = bufs[i].d_o.ptr();
    t.dq = bufs[i].dq.ptr();
    t.dk = bufs[i].dk.ptr();
    t.dv = bufs[i].dv.ptr();
    t.workspace = bufs[i].ws.ptr();
    if (p.key_mask != KeyMask::none) t.mask = mask.ptr();
    backward.launch(nullptr, t);
  };
  // Realistic inputs: S from band_qk, P from band_softmax, dP = band_qk(dO, V) at scale 1.
  for (int i = 0; i < sets; ++i) {
    run_qk(i);
    run_sm(i);
    backward.kernels()[0].launch(nullptr, {bufs[i].d_o.ptr(), bufs[i].v.ptr(), bufs[i].dp.ptr()});
  }
  check_cuda(driver().cuCtxSynchronize(), "cuCtxSynchronize");

  std::vector<BenchRow> rows;
  auto add = [&](const std::string& family, const std::function<void(int)>& work) {
    const Sample s = time_rotating(work, sets, options.warmup, options.runs);
    rows.push_back({family, s.median_us, s.min_us, family_bytes(family, p), family_flops(family, p), sets});
  };
  add("band_qk", run_qk);
  add("band_softmax", run_sm);
  add("band_pv", run_pv);
  add("forward", [&](int i) {
    run_qk(i);
    run_sm(i);
    run_pv(i);
  });
  add("sliding_window_attention", run_fused);
  add("band_tpv", run_tpv);
  add("band_softmax_backward", run_smb);
  add("backward", run_backward);
  return rows;
}

double copy_bandwidth_gbps(std::size_t bytes, int runs) {
  DeviceBuffer a(bytes), b(bytes);
  a.fill32(0x3c003c00u);
  const auto& cu = driver();
  const Sample s = time_rotating(
      [&](int) { check_cuda(cu.cuMemcpyDtoD(b.ptr(), a.ptr(), bytes), "cuMemcpyDtoD"); }, 1, 3, runs);
  return 2.0 * double(bytes) / (s.median_us * 1e3);
}

}  // namespace bandjit
