#include "reference/softmax_reference.hpp"

#include <cmath>

namespace bandjit::reference {

std::int64_t causal_last_key(std::int64_t q, std::int64_t queries, std::int64_t L) { return q + (L - queries); }

bool key_removed(const RowMask& mask, std::int64_t j) {
  return j > mask.last_key || (mask.boolean && mask.boolean[j] != 0) ||
         (mask.additive && mask.additive[j] == -INFINITY);
}

void softmax_row(const double* x, std::int64_t L, double scale, const RowMask& mask, double* y) {
  double top = -INFINITY;
  for (std::int64_t j = 0; j < L; ++j) {
    y[j] = key_removed(mask, j) ? -INFINITY : scale * x[j] + (mask.additive ? mask.additive[j] : 0.0);
    top = std::fmax(top, y[j]);
  }
  if (top == -INFINITY) {  // no key left
    for (std::int64_t j = 0; j < L; ++j) y[j] = 0.0;
    return;
  }
  double sum = 0;
  for (std::int64_t j = 0; j < L; ++j) sum += y[j] = std::exp(y[j] - top);
  for (std::int64_t j = 0; j < L; ++j) y[j] /= sum;
}

void softmax_backward_row(const double* y, const double* dy, std::int64_t L, double scale, double* dx) {
  double dot = 0;
  for (std::int64_t j = 0; j < L; ++j) dot += dy[j] * y[j];
  for (std::int64_t j = 0; j < L; ++j) dx[j] = scale * y[j] * (dy[j] - dot);
}

}  // namespace bandjit::reference
