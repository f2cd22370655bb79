// bandjit/backward.hpp — the backward pass of the unfused banded attention in one call.
//
// Forward (what the gradients are of), on the band of SPEC §3, per batch b and head h:
//   S = band_qk(Q, K) at scale 1,  P = band_softmax(S) at problem.scale (+ key-padding mask),
//   O = band_pv(P, V);  i.e. O = softmax(scale·Q·Kᵀ + M)·V on the band.
// (A forward that ran band_qk at `scale` and band_softmax at 1 has the same logits, P and
// gradients.) Given Q, K, V, the saved P and dO = ∂L/∂O, attention_backward writes
//   dP = band_qk(dO, V) (scale 1)             into the workspace,
//   dS = band_softmax_backward(P, dP)          = scale · P ⊙ (dP − rowsum(dP ⊙ P)), in place,
//   dQ = band_pv(dS, K),  dK = band_tpv(dS, Q),  dV = band_tpv(P, dO)     (SPEC §3.4).
// Slots whose key is outside the sequence or removed by the mask carry no gradient.
//
//   bandjit::AttentionBackward backward(problem);          // fetches its four kernels
//   void* ws;  cudaMalloc(&ws, backward.workspace_bytes());
//   backward.launch(stream, {q, k, v, p, d_o, dq, dk, dv, ws});
#pragma once

#include <cstddef>
#include <vector>

#include "bandjit/bandjit.hpp"

namespace bandjit {

/// Device tensors of one backward call, all in the problem's dtype and layout (docs/kernels.md):
/// q, k, v, d_o, dq, dk, dv are [B, N, H, Dh] (bnhd) or [B, H, N, Dh] (bhnd); p is the band
/// tensor [B, N, H, C] or [B, H, N, C] that the forward's band_softmax wrote. Every pointer
/// 16-byte aligned. Outputs must not overlap inputs or each other.
struct BackwardTensors {
  DevicePtr q, k, v;  ///< the forward's inputs
  DevicePtr p;        ///< the forward's softmax output (read only)
  DevicePtr d_o;      ///< ∂L/∂O
  DevicePtr dq, dk, dv;  ///< outputs, fully overwritten
  /// workspace_bytes(problem) bytes of scratch for dP and dS (one band tensor); its contents
  /// on return are dS = ∂L/∂S.
  DevicePtr workspace;
  /// The forward's key-padding mask ([B, N]: uint8 for bool, float32 for additive; 4-byte
  /// aligned), required exactly when problem.key_mask is not none.
  DevicePtr mask;
};

/// The backward of one problem with its kernels fetched once (memory → disk cache → NVRTC, as
/// get_kernel): construct it once, launch it every step. Cheap to copy.
class AttentionBackward {
 public:
  /// Validates the problem and fetches band_qk (scale 1), band_softmax_backward, band_pv and
  /// band_tpv. Throws Error like get_kernel (invalid_problem, compile_failed, driver_failed, io).
  explicit AttentionBackward(const Problem& problem, const Options& options = {});

  /// Bytes of the workspace: one band tensor, B·H·N·C elements of the dtype.
  static std::size_t workspace_bytes(const Problem& problem);
  std::size_t workspace_bytes() const { return workspace_bytes(problem_); }

  /// Enqueues the five launches on `stream` (dV first, then dP, dS, dQ, dK); returns at once.
  /// Throws Error(usage) on a null or misaligned pointer, a mask given or missing against
  /// problem.key_mask; Error(driver_failed) naming the failing launch.
  void launch(Stream stream, const BackwardTensors& tensors) const;

  const Problem& problem() const { return problem_; }
  /// The kernels in the order of attention_backward_kernels: band_qk, band_softmax_backward,
  /// band_pv, band_tpv.
  const std::vector<Kernel>& kernels() const { return kernels_; }

 private:
  Problem problem_;
  std::vector<Kernel> kernels_;
};

/// One call: AttentionBackward(problem, options).launch(stream, tensors). The kernels come
/// from the in-process cache after the first call, so this costs microseconds of host time.
void attention_backward(const Problem& problem, Stream stream, const BackwardTensors& tensors,
                        const Options& options = {});

}  // namespace bandjit
