#include "check/check_backward.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "bandjit/backward.hpp"
#include "generator/family_registry.hpp"
#include "reference/band_reference.hpp"
#include "runtime/driver_api.hpp"

namespace bandjit {
namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

// Rows (b, h, i) of a tensor with `width` elements per row, as doubles: the whole tensor
// when `all`, else one download per row. Row r of the result starts at r·width (the whole
// tensor: at the row's own offset).
struct Rows {
  std::vector<double> values;
  bool all = false, band = false;
  std::size_t width = 0;
  const Problem* p = nullptr;
  double at(const RowRef& row, std::size_t r, std::size_t e) const {
    const auto base = !all ? r * width
                      : band ? reference::band_index(*p, row.b, row.h, row.i, 0)
                             : reference::qkv_index(*p, row.b, row.h, row.i, 0);
    return values[base + e];
  }
};

Rows read_rows(const DeviceBuffer& buf, const Problem& p, const std::vector<RowRef>& rows, bool band) {
  Rows out;
  out.p = &p;
  out.band = band;
  out.width = static_cast<std::size_t>(band ? p.diagonals() : p.head_dim);
  out.all = rows.size() == static_cast<std::size_t>(p.batch * p.heads * p.seq_len);
  const std::size_t es = element_size(p.dtype);
  std::string bytes;
  if (out.all) {
    bytes.resize(rows.size() * out.width * es);
    buf.download(bytes.data(), bytes.size());
  } else {
    bytes.resize(rows.size() * out.width * es);
    for (std::size_t r = 0; r < rows.size(); ++r) {
      const auto& [b, h, i] = rows[r];
      const auto first = band ? reference::band_index(p, b, h, i, 0) : reference::qkv_index(p, b, h, i, 0);
      buf.download(&bytes[r * out.width * es], out.width * es, first * es);
    }
  }
  out.values.resize(bytes.size() / es);
  parallel_for((out.values.size() + 65535) / 65536, [&](std::size_t blk) {
    for (std::size_t e = blk * 65536; e < std::min(out.values.size(), (blk + 1) * 65536); ++e)
      out.values[e] = element_value(p.dtype, &bytes[e * es]);
  });
  return out;
}

}  // namespace

std::vector<std::int64_t> backward_reference_rows(const Problem& p, std::int64_t h, const std::vector<std::int64_t>& rows) {
  std::vector<char> need(static_cast<std::size_t>(p.seq_len), 0);
  for (const auto t : rows) {
    need[static_cast<std::size_t>(t)] = 1;
    for (std::int64_t j = 0; j < p.diagonals(); ++j)
      if (const auto s = reference::transposed_query_of(p, h, t, j); s >= 0) need[static_cast<std::size_t>(s)] = 1;
  }
  std::vector<std::int64_t> needed;
  for (std::int64_t s = 0; s < p.seq_len; ++s)
    if (need[static_cast<std::size_t>(s)]) needed.push_back(s);
  return needed;
}

BackwardRowsReference backward_reference(const Problem& p, const std::vector<double>& q, const std::vector<double>& k,
                                         const std::vector<double>& v, const std::vector<double>& d_o,
                                         const double* mask, std::int64_t b, std::int64_t h,
                                         const std::vector<std::int64_t>& rows, const ReadRows& read_p_rows) {
  const auto C = p.diagonals(), N = p.seq_len, Dh = p.head_dim;
  std::vector<int> pos(static_cast<std::size_t>(N), -1);
  for (std::size_t r = 0; r < rows.size(); ++r) pos[static_cast<std::size_t>(rows[r])] = static_cast<int>(r);
  const std::size_t R = rows.size(), W = static_cast<std::size_t>(C);
  // dS of each checked row (for dQ); dS and P at slot C − 1 − j of query s(t, j) (for dK, dV).
  std::vector<double> ds_row(R * W, 0.0), ds_col(R * W, 0.0), p_col(R * W, 0.0);

  const auto needed = backward_reference_rows(p, h, rows);
  const std::size_t chunk = std::max<std::size_t>(1, (std::size_t{1} << 24) / W);
  std::vector<double> prob_rows;
  for (std::size_t c0 = 0; c0 < needed.size(); c0 += chunk) {
    const std::vector<std::int64_t> part(needed.begin() + static_cast<std::ptrdiff_t>(c0),
                                         needed.begin() + static_cast<std::ptrdiff_t>(std::min(needed.size(), c0 + chunk)));
    prob_rows.assign(part.size() * W, 0.0);
    read_p_rows(part, prob_rows);
    parallel_for(part.size(), [&](std::size_t k_row) {
      const std::int64_t s = part[k_row];
      const double* prob = &prob_rows[k_row * W];
      std::vector<double> dp(W, 0.0), ds(W);
      for (std::int64_t j = 0; j < C; ++j) {  // dP = dO·Vᵀ on the allowed slots (band_qk at scale 1)
        if (!reference::slot_allowed(p, mask, b, h, s, j)) continue;
        const auto key = reference::key_of(p, h, s, j);
        double dot = 0;
        for (std::int64_t d = 0; d < Dh; ++d)
          dot += d_o[reference::qkv_index(p, b, h, s, d)] * v[reference::qkv_index(p, b, h, key, d)];
        dp[j] = dot;
      }
      reference::band_softmax_backward_row(p, prob, dp.data(), mask, b, h, s, ds.data());
      if (pos[s] >= 0) std::copy(ds.begin(), ds.end(), ds_row.begin() + static_cast<std::ptrdiff_t>(pos[s] * W));
      for (std::int64_t j = 0; j < C; ++j) {  // slot j of query s holds key t: slot C − 1 − j of t's transposed band
        const auto t = reference::key_of(p, h, s, j);
        if (t < 0 || pos[t] < 0) continue;
        ds_col[pos[t] * W + (W - 1 - j)] = ds[j];
        p_col[pos[t] * W + (W - 1 - j)] = prob[j];
      }
    });
  }
  BackwardRowsReference out;
  out.dq.assign(R * Dh, 0.0);
  out.dk.assign(R * Dh, 0.0);
  out.dv.assign(R * Dh, 0.0);
  parallel_for(R, [&](std::size_t r) {
    const std::int64_t t = rows[r];
    for (std::int64_t j = 0; j < C; ++j) {
      const auto key = reference::key_of(p, h, t, j);  // dQ = band_pv(dS, K)
      if (key >= 0)
        for (std::int64_t d = 0; d < Dh; ++d)
          out.dq[r * Dh + d] += ds_row[r * W + j] * k[reference::qkv_index(p, b, h, key, d)];
      const auto s = reference::transposed_query_of(p, h, t, j);  // dK = band_tpv(dS, Q), dV = band_tpv(P, dO)
      if (s >= 0)
        for (std::int64_t d = 0; d < Dh; ++d) {
          out.dk[r * Dh + d] += ds_col[r * W + j] * q[reference::qkv_index(p, b, h, s, d)];
          out.dv[r * Dh + d] += p_col[r * W + j] * d_o[reference::qkv_index(p, b, h, s, d)];
        }
    }
  });
  return out;
}

std::vector<OpCheck> check_backward(const ForwardState& f, const std::vector<std::string>& ops,
                                    const CheckOptions& options) {
  const Problem& p = f.problem;
  const auto wants = [&](const char* name) { return std::find(ops.begin(), ops.end(), name) != ops.end(); };
  const Options& kopt = options.kernel_options;
  const DType dt = p.dtype;
  const std::size_t es = element_size(dt);
  const auto C = p.diagonals();
  const std::size_t n_qkv = static_cast<std::size_t>(p.batch * p.heads * p.seq_len * p.head_dim);
  const std::size_t n_band = static_cast<std::size_t>(p.batch * p.heads * p.seq_len * C);
  const bool masked = p.key_mask != KeyMask::none;
  const double tol = dt == DType::float32 ? 1e-5 : 1e-2;
  const double* mask = f.mask_values.empty() ? nullptr : f.mask_values.data();

  auto t0 = Clock::now();
  const Kernel tpv = get_kernel("band_tpv", p, kopt);
  const double tpv_ms = ms_since(t0);
  t0 = Clock::now();
  const Kernel smb = get_kernel("band_softmax_backward", p, kopt);
  const double smb_ms = ms_since(t0);
  t0 = Clock::now();
  const AttentionBackward backward(p, kopt);
  const double backward_ms = ms_since(t0);

  const HostTensor d_o = random_tensor(dt, n_qkv, f.seed ^ 0x5555);
  DeviceBuffer do_dev(n_qkv * es), z(n_qkv * es), dp(n_band * es), ws(n_band * es);
  DeviceBuffer gq(n_qkv * es), gk(n_qkv * es), gv(n_qkv * es);
  do_dev.upload(d_o.bytes.data(), d_o.bytes.size());
  for (DeviceBuffer* b : {&z, &dp, &ws, &gq, &gk, &gv}) poison(*b, dt);

  // band_tpv on its own: X = the GPU's S, −inf wherever the key is outside the sequence, so
  // any read of those slots shows; Y = dO.
  auto run_tpv = [&] { tpv.launch(nullptr, {f.s_dev.ptr(), do_dev.ptr(), z.ptr()}); };
  // band_softmax_backward on its own: P from the forward, dP = band_qk(dO, V) at scale 1
  // (−inf off the sequence), dS into the workspace buffer.
  auto run_smb = [&] {
    if (masked)
      smb.launch(nullptr, {f.p_dev.ptr(), dp.ptr(), ws.ptr(), f.mask.ptr()});
    else
      smb.launch(nullptr, {f.p_dev.ptr(), dp.ptr(), ws.ptr()});
  };
  BackwardTensors tensors;
  tensors.q = f.q_dev.ptr();
  tensors.k = f.k_dev.ptr();
  tensors.v = f.v_dev.ptr();
  tensors.p = f.p_dev.ptr();
  tensors.d_o = do_dev.ptr();
  tensors.dq = gq.ptr();
  tensors.dk = gk.ptr();
  tensors.dv = gv.ptr();
  tensors.workspace = ws.ptr();
  if (masked) tensors.mask = f.mask.ptr();
  auto run_backward = [&] { backward.launch(nullptr, tensors); };

  std::vector<OpCheck> out;
  auto report = [&](const std::string& family, Origin origin, double get_ms, const ErrorSum& e, std::size_t rows,
                    const NonFinite& nf, double median_us, const std::string& note) {
    OpCheck c = make_op_check(family, origin, get_ms, e, tol, rows, nf, 0, median_us);
    c.note = note;
    out.push_back(c);
  };
  const auto& rows = f.rows;

  if (wants("band_tpv")) {
    run_tpv();
    check_cuda(driver().cuCtxSynchronize(), "cuCtxSynchronize (after band_tpv)");
    const NonFinite nf = count_nonfinite(z, dt, n_qkv, kopt);
    // X[s(t, j), C − 1 − j] for every checked row t, gathered on the GPU.
    std::vector<std::int64_t> index;
    index.reserve(rows.size() * static_cast<std::size_t>(C));
    for (const auto& [b, h, t] : rows)
      for (std::int64_t j = 0; j < C; ++j) {
        const auto s = reference::transposed_query_of(p, h, t, j);
        index.push_back(s < 0 ? 0 : static_cast<std::int64_t>(reference::band_index(p, b, h, s, C - 1 - j)));
      }
    const std::vector<double> x = gather(f.s_dev, dt, index, kopt);
    const Rows zr = read_rows(z, p, rows, false);
    std::vector<ErrorSum> err(rows.size());
    parallel_for(rows.size(), [&](std::size_t r) {
      const auto& [b, h, t] = rows[r];
      std::vector<double> ref(static_cast<std::size_t>(p.head_dim), 0.0);
      for (std::int64_t j = 0; j < C; ++j) {
        const auto s = reference::transposed_query_of(p, h, t, j);
        if (s < 0) continue;
        const double xv = x[r * C + j];
        for (std::int64_t d = 0; d < p.head_dim; ++d) ref[d] += xv * d_o.values[reference::qkv_index(p, b, h, s, d)];
      }
      for (std::int64_t d = 0; d < p.head_dim; ++d) err[r].add(zr.at(rows[r], r, d), ref[d], false);
    });
    report("band_tpv", tpv.info().origin, tpv_ms, total(err), rows.size(), nf, median_time_us(run_tpv, options.warmup, options.timing_runs),
           "X = the GPU's S (-inf off the sequence), Y = random dO");
  }

  if (wants("band_softmax_backward")) {
    backward.kernels()[0].launch(nullptr, {do_dev.ptr(), f.v_dev.ptr(), dp.ptr()});
    run_smb();
    check_cuda(driver().cuCtxSynchronize(), "cuCtxSynchronize (after band_softmax_backward)");
    const NonFinite nf = count_nonfinite(ws, dt, n_band, kopt);
    const Rows pr = read_rows(f.p_dev, p, rows, true), dpr = read_rows(dp, p, rows, true),
               dsr = read_rows(ws, p, rows, true);
    std::vector<ErrorSum> err(rows.size());
    parallel_for(rows.size(), [&](std::size_t r) {
      const auto& [b, h, i] = rows[r];
      std::vector<double> prow(C), dprow(C), ref(C);
      for (std::int64_t j = 0; j < C; ++j) {
        prow[j] = pr.at(rows[r], r, j);
        dprow[j] = dpr.at(rows[r], r, j);
      }
      reference::band_softmax_backward_row(p, prow.data(), dprow.data(), mask, b, h, i, ref.data());
      for (std::int64_t j = 0; j < C; ++j)
        err[r].add(dsr.at(rows[r], r, j), ref[j], !reference::slot_allowed(p, mask, b, h, i, j));
    });
    report("band_softmax_backward", smb.info().origin, smb_ms, total(err), rows.size(), nf,
           median_time_us(run_smb, options.warmup, options.timing_runs),
           "P = the GPU's P, dP = the GPU's band_qk(dO, V) (-inf off the sequence)");
  }

  if (wants(kAttentionBackward)) {
    poison(ws, dt);
    run_backward();
    check_cuda(driver().cuCtxSynchronize(), "cuCtxSynchronize (after attention_backward)");
    const NonFinite nq = count_nonfinite(gq, dt, n_qkv, kopt), nk = count_nonfinite(gk, dt, n_qkv, kopt),
                    nv = count_nonfinite(gv, dt, n_qkv, kopt), ns = count_nonfinite(ws, dt, n_band, kopt);
    // The checked rows by (b, h); whole heads within the reference's budget, the first and
    // last (b, h) first.
    std::map<std::pair<std::int64_t, std::int64_t>, std::vector<std::int64_t>> groups;
    for (const auto& [b, h, i] : rows) groups[{b, h}].push_back(i);
    std::vector<std::pair<std::int64_t, std::int64_t>> order;
    for (const auto& [key, unused] : groups) order.push_back(key);
    if (order.size() > 1) std::swap(order[1], order.back());
    double spent = 0;
    std::size_t rows_checked = 0, heads_checked = 0;
    ErrorSum eq, ek, ev;
    for (const auto& key : order) {
      const auto& [b, h] = key;
      const auto& group = groups[key];
      const double cost = double(backward_reference_rows(p, h, group).size()) * C * p.head_dim;
      if (heads_checked > 0 && spent + cost > kBackwardReferenceBudget) continue;
      spent += cost;
      ++heads_checked;
      rows_checked += group.size();
      const auto read_p_rows = [&](const std::vector<std::int64_t>& part, std::vector<double>& values) {
        std::string bytes(part.size() * C * es, '\0');
        for (std::size_t r = 0; r < part.size(); ++r)
          f.p_dev.download(&bytes[r * C * es], C * es, reference::band_index(p, b, h, part[r], 0) * es);
        for (std::size_t e = 0; e < values.size(); ++e) values[e] = element_value(dt, &bytes[e * es]);
      };
      const BackwardRowsReference ref =
          backward_reference(p, f.q.values, f.k.values, f.v.values, d_o.values, mask, b, h, group, read_p_rows);
      std::vector<RowRef> refs;
      for (const auto t : group) refs.push_back({b, h, t});
      const Rows rq = read_rows(gq, p, refs, false), rk = read_rows(gk, p, refs, false), rv = read_rows(gv, p, refs, false);
      for (std::size_t r = 0; r < group.size(); ++r)
        for (std::int64_t d = 0; d < p.head_dim; ++d) {
          eq.add(rq.at(refs[r], r, d), ref.dq[r * p.head_dim + d], false);
          ek.add(rk.at(refs[r], r, d), ref.dk[r * p.head_dim + d], false);
          ev.add(rv.at(refs[r], r, d), ref.dv[r * p.head_dim + d], false);
        }
    }
    const double us = median_time_us(run_backward, options.warmup, options.timing_runs);
    const std::string note = fmt::format(
        "end to end from Q, K, V, P, dO{}: {} of {} (batch, head) pairs sampled; workspace dS: {} NaN, {} inf",
        masked ? " and the mask" : "", heads_checked, groups.size(), ns.nan, ns.inf);
    // The composed call's origin: compiled if any of its kernels was, else disk if any was.
    Origin origin = Origin::memory;
    for (const auto& k : backward.kernels())
      if (k.info().origin == Origin::compiled || (k.info().origin == Origin::disk && origin == Origin::memory))
        origin = k.info().origin;
    // dS in the workspace must be finite too: it counts against each gradient.
    auto with_ws = [&](const NonFinite& nf) { return NonFinite{nf.nan + ns.nan, nf.inf + ns.inf}; };
    report("attention_backward:dq", origin, backward_ms, eq, rows_checked, with_ws(nq), us, note);
    report("attention_backward:dk", origin, backward_ms, ek, rows_checked, with_ws(nk), us, note);
    report("attention_backward:dv", origin, backward_ms, ev, rows_checked, with_ws(nv), us, note);
  }
  return out;
}

}  // namespace bandjit
