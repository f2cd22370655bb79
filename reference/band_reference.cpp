#include "reference/band_reference.hpp"

#include <cmath>
#include <limits>

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

}  // namespace bandjit::reference
