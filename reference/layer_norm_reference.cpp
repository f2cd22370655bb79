#include "reference/layer_norm_reference.hpp"

#include <cmath>
#include <vector>

namespace bandjit::reference {

RowStats layer_norm_row(const double* x, const double* weight, const double* bias, int hidden, double epsilon,
                        double* y) {
  double sum = 0;
  for (int c = 0; c < hidden; ++c) sum += x[c];
  const double mean = sum / hidden;
  double sq = 0;
  for (int c = 0; c < hidden; ++c) sq += (x[c] - mean) * (x[c] - mean);
  const double rstd = 1.0 / std::sqrt(sq / hidden + epsilon);
  for (int c = 0; c < hidden; ++c)
    y[c] = (x[c] - mean) * rstd * (weight ? weight[c] : 1.0) + (bias ? bias[c] : 0.0);
  return {mean, rstd};
}

void layer_norm_backward_row(const double* dy, const double* x, RowStats stats, const double* weight, int hidden,
                             double* dx, double* dweight, double* dbias) {
  std::vector<double> xhat(hidden), g(hidden);
  double mean_g = 0, mean_gx = 0;
  for (int c = 0; c < hidden; ++c) {
    xhat[c] = (x[c] - stats.mean) * stats.rstd;
    g[c] = dy[c] * (weight ? weight[c] : 1.0);
    mean_g += g[c];
    mean_gx += g[c] * xhat[c];
  }
  mean_g /= hidden;
  mean_gx /= hidden;
  for (int c = 0; c < hidden; ++c) {
    dx[c] = stats.rstd * (g[c] - mean_g - xhat[c] * mean_gx);
    if (dweight) dweight[c] += dy[c] * xhat[c];
    if (dbias) dbias[c] += dy[c];
  }
}

}  // namespace bandjit::reference
