// The composed backward of include/bandjit/backward.hpp: its kernels, in the order
// generator/family_registry's attention_backward_kernels lists them, launched on one stream.
#include <utility>

#include <fmt/format.h>

#include "bandjit/backward.hpp"
#include "bandjit/errors.hpp"
#include "generator/family_registry.hpp"

namespace bandjit {

AttentionBackward::AttentionBackward(const Problem& problem, const Options& options) : problem_(problem) {
  validate(problem_);
  for (const auto& k : attention_backward_kernels(problem_)) kernels_.push_back(get_kernel(k.family, k.problem, options));
}

std::size_t AttentionBackward::workspace_bytes(const Problem& p) {
  validate(p);
  return static_cast<std::size_t>(p.batch * p.heads * p.seq_len * p.diagonals()) * element_size(p.dtype);
}

void AttentionBackward::launch(Stream stream, const BackwardTensors& t) const {
  const bool masked = problem_.key_mask != KeyMask::none;
  if (masked && t.mask.address == 0)
    throw Error(ErrorKind::usage, fmt::format("attention_backward: problem {} has key_mask = {}; pass the forward's mask",
                                              slug(problem_), to_string(problem_.key_mask)));
  if (!masked && t.mask.address != 0)
    throw Error(ErrorKind::usage,
                fmt::format("attention_backward: a mask was given but problem {} has key_mask = none", slug(problem_)));
  // Every pointer checked before the first launch, so a bad call launches nothing.
  const std::pair<const char*, DevicePtr> pointers[] = {{"q", t.q},   {"k", t.k},   {"v", t.v},
                                                        {"p", t.p},   {"d_o", t.d_o}, {"dq", t.dq},
                                                        {"dk", t.dk}, {"dv", t.dv}, {"workspace", t.workspace}};
  for (const auto& [name, ptr] : pointers)
    if (ptr.address == 0 || ptr.address % 16 != 0)
      throw Error(ErrorKind::usage,
                  fmt::format("attention_backward: {} must be a non-null device pointer aligned to 16 bytes", name));
  if (masked && t.mask.address % 4 != 0)
    throw Error(ErrorKind::usage, "attention_backward: mask must be aligned to 4 bytes");
  const Kernel& qk = kernels_[0];
  const Kernel& softmax_backward = kernels_[1];
  const Kernel& pv = kernels_[2];
  const Kernel& tpv = kernels_[3];
  tpv.launch(stream, {t.p, t.d_o, t.dv});              // dV = band_tpv(P, dO)
  qk.launch(stream, {t.d_o, t.v, t.workspace});        // dP = band_qk(dO, V), scale 1
  if (masked)                                          // dS = scale·P ⊙ (dP − rowsum(dP ⊙ P)), in place
    softmax_backward.launch(stream, {t.p, t.workspace, t.workspace, t.mask});
  else
    softmax_backward.launch(stream, {t.p, t.workspace, t.workspace});
  pv.launch(stream, {t.workspace, t.k, t.dq});         // dQ = band_pv(dS, K)
  tpv.launch(stream, {t.workspace, t.q, t.dk});        // dK = band_tpv(dS, Q)
}

void attention_backward(const Problem& problem, Stream stream, const BackwardTensors& tensors, const Options& options) {
  AttentionBackward(problem, options).launch(stream, tensors);
}

}  // namespace bandjit
