#include "reference/band_reference.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace bandjit::reference {

std::size_t qkv_index(const Problem& p, std::int64_t b, std::int64_t h, std::int64_t i, std::int64_t k) {
  const auto row = p.layout == Layout::bnhd ? (b * p.seq_len + i) * p.heads + h : (b * p.heads + h) * p.seq_len + i;
  return static_cast<std::size_t>(row * p.head_dim + k);
}

std::size_t band_index(const Problem& p, std::int64_t b, std::int64_t h, std::int64_t i, std::int64_t j) {
  const auto row = p.layout == Layout::bnhd ? (b * p.seq_len + i) * p.heads + h : (b * p.heads + h) * p.seq_len + i;
  return static_cast<std::size_t>(row * p.diagonals() + j);
}

std::int64_t key_of(const Problem& p, std::int64_t h, std::int64_t i, std::int64_t j) {
  const auto key = i + p.dilation_of(h) * (j - p.window_left);
  return (key >= 0 && key < p.seq_len) ? key : -1;
}

bool key_kept(const Problem& p, const double* mask, std::int64_t b, std::int64_t key) {
  if (p.key_mask == KeyMask::none) return true;
  const double m = mask[b * p.seq_len + key];
  return p.key_mask == KeyMask::boolean ? m != 0.0 : !(m < 0.0);
}

void band_qk_row(const Problem& p, const double* q, const double* k, std::int64_t b, std::int64_t h, std::int64_t i,
                 double* s_row) {
  // The kernel multiplies by the scale rounded to float; so does the reference.
  const double scale = static_cast<float>(p.scale);
  for (std::int64_t j = 0; j < p.diagonals(); ++j) {
    const auto key = key_of(p, h, i, j);
    if (key < 0) {
      s_row[j] = -std::numeric_limits<double>::infinity();
      continue;
    }
    double dot = 0;
    for (std::int64_t d = 0; d < p.head_dim; ++d) dot += q[qkv_index(p, b, h, i, d)] * k[qkv_index(p, b, h, key, d)];
    s_row[j] = scale * dot;
  }
}

void band_softmax_row(const Problem& p, const double* s_row, const double* mask, std::int64_t b, std::int64_t h,
                      std::int64_t i, double* p_row) {
  const double scale = static_cast<float>(p.scale);
  const auto C = p.diagonals();
  double mx = -std::numeric_limits<double>::infinity();
  for (std::int64_t j = 0; j < C; ++j) {
    const auto key = key_of(p, h, i, j);
    double x = -std::numeric_limits<double>::infinity();
    if (key >= 0 && key_kept(p, mask, b, key)) {
      x = scale * s_row[j];
      if (p.key_mask == KeyMask::additive) x += mask[b * p.seq_len + key];
    }
    p_row[j] = x;
    mx = std::max(mx, x);
  }
  if (std::isinf(mx) && mx < 0) {
    for (std::int64_t j = 0; j < C; ++j) p_row[j] = 0;
    return;
  }
  double sum = 0;
  for (std::int64_t j = 0; j < C; ++j) {
    p_row[j] = std::isinf(p_row[j]) && p_row[j] < 0 ? 0.0 : std::exp(p_row[j] - mx);
    sum += p_row[j];
  }
  for (std::int64_t j = 0; j < C; ++j) p_row[j] /= sum;
}

void band_pv_row(const Problem& p, const double* p_row, const double* v, std::int64_t b, std::int64_t h,
                 std::int64_t i, double* o_row) {
  for (std::int64_t d = 0; d < p.head_dim; ++d) o_row[d] = 0;
  for (std::int64_t j = 0; j < p.diagonals(); ++j) {
    const auto key = key_of(p, h, i, j);
    if (key < 0) continue;
    for (std::int64_t d = 0; d < p.head_dim; ++d) o_row[d] += p_row[j] * v[qkv_index(p, b, h, key, d)];
  }
}

std::int64_t transposed_query_of(const Problem& p, std::int64_t h, std::int64_t i, std::int64_t j) {
  const auto s = i + p.dilation_of(h) * (j - p.window_right);
  return (s >= 0 && s < p.seq_len) ? s : -1;
}

void band_tpv_row(const Problem& p, const double* x, const double* y, std::int64_t b, std::int64_t h, std::int64_t i,
                  double* z_row) {
  const auto C = p.diagonals();
  for (std::int64_t d = 0; d < p.head_dim; ++d) z_row[d] = 0;
  for (std::int64_t j = 0; j < C; ++j) {
    const auto s = transposed_query_of(p, h, i, j);
    if (s < 0) continue;
    const double xv = x[band_index(p, b, h, s, C - 1 - j)];
    for (std::int64_t d = 0; d < p.head_dim; ++d) z_row[d] += xv * y[qkv_index(p, b, h, s, d)];
  }
}

bool slot_allowed(const Problem& p, const double* mask, std::int64_t b, std::int64_t h, std::int64_t i, std::int64_t j) {
  const auto key = key_of(p, h, i, j);
  return key >= 0 && key_kept(p, mask, b, key);
}

void band_softmax_backward_row(const Problem& p, const double* p_row, const double* dp_row, const double* mask,
                               std::int64_t b, std::int64_t h, std::int64_t i, double* ds_row) {
  // The kernel multiplies by the scale rounded to float; so does the reference.
  const double scale = static_cast<float>(p.scale);
  const auto C = p.diagonals();
  double dot = 0;
  for (std::int64_t j = 0; j < C; ++j)
    if (slot_allowed(p, mask, b, h, i, j)) dot += p_row[j] * dp_row[j];
  for (std::int64_t j = 0; j < C; ++j)
    ds_row[j] = slot_allowed(p, mask, b, h, i, j) ? scale * p_row[j] * (dp_row[j] - dot) : 0.0;
}

namespace {
template <class Fn>
void for_each_row(const Problem& p, Fn fn) {
  for (std::int64_t b = 0; b < p.batch; ++b)
    for (std::int64_t h = 0; h < p.heads; ++h)
      for (std::int64_t i = 0; i < p.seq_len; ++i) fn(b, h, i);
}
}  // namespace

void attention_forward(const Problem& p, const double* q, const double* k, const double* v, const double* mask,
                       double* prob, double* o) {
  Problem unscaled = p;
  unscaled.scale = 1.0;
  std::vector<double> s_row(static_cast<std::size_t>(p.diagonals()));
  for_each_row(p, [&](std::int64_t b, std::int64_t h, std::int64_t i) {
    band_qk_row(unscaled, q, k, b, h, i, s_row.data());
    double* p_row = prob + band_index(p, b, h, i, 0);
    band_softmax_row(p, s_row.data(), mask, b, h, i, p_row);
    band_pv_row(p, p_row, v, b, h, i, o + qkv_index(p, b, h, i, 0));
  });
}

double sliding_window_attention_row(const Problem& p, const double* q, const double* k, const double* v,
                                    const double* mask, std::int64_t b, std::int64_t h, std::int64_t i,
                                    double* o_row) {
  Problem unscaled = p;
  unscaled.scale = 1.0;
  const auto C = p.diagonals();
  std::vector<double> s_row(static_cast<std::size_t>(C)), p_row(static_cast<std::size_t>(C));
  band_qk_row(unscaled, q, k, b, h, i, s_row.data());
  band_softmax_row(p, s_row.data(), mask, b, h, i, p_row.data());
  band_pv_row(p, p_row.data(), v, b, h, i, o_row);
  // The logits band_softmax_row normalises, again: z = scale·S + M on the allowed slots.
  const double scale = static_cast<float>(p.scale);
  std::vector<double> z;
  for (std::int64_t j = 0; j < C; ++j) {
    const auto key = key_of(p, h, i, j);
    if (key < 0 || !key_kept(p, mask, b, key)) continue;
    z.push_back(scale * s_row[static_cast<std::size_t>(j)] +
                (p.key_mask == KeyMask::additive ? mask[b * p.seq_len + key] : 0.0));
  }
  if (z.empty()) return -std::numeric_limits<double>::infinity();
  const double mx = *std::max_element(z.begin(), z.end());
  double sum = 0;
  for (double x : z) sum += std::exp(x - mx);
  return mx + std::log(sum);
}

void attention_backward(const Problem& p, const double* q, const double* k, const double* v, const double* prob,
                        const double* d_o, const double* mask, double* dq, double* dk, double* dv) {
  Problem unscaled = p;
  unscaled.scale = 1.0;
  const auto C = p.diagonals();
  std::vector<double> ds(static_cast<std::size_t>(p.batch * p.heads * p.seq_len * C));
  std::vector<double> dp_row(static_cast<std::size_t>(C));
  for_each_row(p, [&](std::int64_t b, std::int64_t h, std::int64_t i) {
    band_qk_row(unscaled, d_o, v, b, h, i, dp_row.data());  // dP = dO·Vᵀ on the band, −inf off it
    const auto at = band_index(p, b, h, i, 0);
    band_softmax_backward_row(p, prob + at, dp_row.data(), mask, b, h, i, ds.data() + at);
  });
  for_each_row(p, [&](std::int64_t b, std::int64_t h, std::int64_t i) {
    const auto at = qkv_index(p, b, h, i, 0);
    band_pv_row(p, ds.data() + band_index(p, b, h, i, 0), k, b, h, i, dq + at);
    band_tpv_row(p, ds.data(), q, b, h, i, dk + at);
    band_tpv_row(p, prob, d_o, b, h, i, dv + at);
  });
}

}  // namespace bandjit::reference
