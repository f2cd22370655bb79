// The backward part of `bandjit check` (check_problem runs it after the forward, on the
// forward's inputs and outputs): band_tpv, band_softmax_backward and the composed
// attention_backward against the float64 reference, with fresh random dO and NaN-poisoned
// outputs. Internal to check/.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "check/check_problem.hpp"
#include "check/check_support.hpp"

namespace bandjit {

/// What the forward check leaves behind: its inputs (host values and device copies), the
/// GPU's S and P, the key-padding mask and the sampled rows.
struct ForwardState {
  const Problem& problem;
  std::uint64_t seed;
  const HostTensor &q, &k, &v;
  const std::vector<double>& mask_values;  ///< empty when problem.key_mask is none
  const DeviceBuffer& mask;
  const DeviceBuffer &q_dev, &k_dev, &v_dev;
  const DeviceBuffer& s_dev;  ///< band_qk's S: −inf where the key is outside the sequence
  const DeviceBuffer& p_dev;  ///< band_softmax's P
  const std::vector<RowRef>& rows;
};

/// Multiply-adds the end-to-end reference of attention_backward may spend (dP rows of every
/// query whose band touches a checked key row); heads beyond it are left out and the report
/// says how many were checked.
constexpr double kBackwardReferenceBudget = 8e9;

/// The rows s of head h whose dS the reference of dK at `rows` needs: the rows themselves and
/// every query whose band holds one of them (sorted).
std::vector<std::int64_t> backward_reference_rows(const Problem& p, std::int64_t h, const std::vector<std::int64_t>& rows);

/// Fills values[r·C + j] with P[b, h, s_r, j] for the rows s_r given (from the GPU, or a
/// host tensor in tests).
using ReadRows = std::function<void(const std::vector<std::int64_t>& rows, std::vector<double>& values)>;

/// dQ, dK, dV ([rows][Dh]) of attention_backward at the given rows of (b, h), end to end
/// from Q, K, V, dO (whole host tensors), the mask and P (read through `read_p_rows`) by the
/// identities of SPEC §3.4: dS is recomputed at every row backward_reference_rows lists.
struct BackwardRowsReference {
  std::vector<double> dq, dk, dv;
};
BackwardRowsReference backward_reference(const Problem& p, const std::vector<double>& q, const std::vector<double>& k,
                                         const std::vector<double>& v, const std::vector<double>& d_o,
                                         const double* mask, std::int64_t b, std::int64_t h,
                                         const std::vector<std::int64_t>& rows, const ReadRows& read_p_rows);

/// Checks the backward operations listed in `ops` (band_tpv, band_softmax_backward,
/// attention_backward); the composed one reports dq, dk and dv as three rows.
std::vector<OpCheck> check_backward(const ForwardState& forward, const std::vector<std::string>& ops,
                                    const CheckOptions& options);

}  // namespace bandjit
