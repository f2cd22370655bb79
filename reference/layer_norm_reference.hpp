// Float64 reference of layer_norm and layer_norm_backward (docs/layer_norm.md), one row at
// a time, written from the formulas and independent of templates/layer_norm.cuh.
#pragma once

namespace bandjit::reference {

struct RowStats {
  double mean = 0;
  double rstd = 0;  ///< 1 / sqrt(biased variance + epsilon)
};

/// One row of the forward: y[0, H) = (x − mean)·rstd·w + b, with w = 1 when weight is
/// null and b = 0 when bias is null. Returns the row's mean and rstd.
RowStats layer_norm_row(const double* x, const double* weight, const double* bias, int hidden, double epsilon,
                        double* y);

/// One row of the backward with the mean and rstd the kernel was given: writes dx[0, H)
/// and adds dy·x̂ to dweight and dy to dbias (each skipped when null).
void layer_norm_backward_row(const double* dy, const double* x, RowStats stats, const double* weight, int hidden,
                             double* dx, double* dweight, double* dbias);

}  // namespace bandjit::reference
