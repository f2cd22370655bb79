// Float64 reference of SPEC §3.1–3.4, one output row at a time, written from the formulas
// and independent of the kernel templates. Tensors are host arrays of double in the
// problem's layout (Q/K/V/O: [B, N, H, Dh] or [B, H, N, Dh]; S/P: [B, N, H, C] or [B, H, N, C]).
#pragma once

#include <cstddef>
#include <cstdint>

#include "bandjit/problem.hpp"

namespace bandjit::reference {

/// Element index of Q/K/V/O[b, h, i, k] and of S/P[b, h, i, j] in the problem's layout.
std::size_t qkv_index(const Problem& p, std::int64_t b, std::int64_t h, std::int64_t i, std::int64_t k);
std::size_t band_index(const Problem& p, std::int64_t b, std::int64_t h, std::int64_t i, std::int64_t j);

/// key(i, j) = i + D_h·(j − w_l), or −1 when it falls outside [0, N).
std::int64_t key_of(const Problem& p, std::int64_t h, std::int64_t i, std::int64_t j);

/// Whether key `key` of batch b takes part under the key-padding mask ([B, N] as doubles:
/// boolean → 0/1, additive → the float values).
bool key_kept(const Problem& p, const double* mask, std::int64_t b, std::int64_t key);

/// S[b, h, i, :] = scale · Q[i]·K[key(i, j)], −inf off the sequence.
void band_qk_row(const Problem& p, const double* q, const double* k, std::int64_t b, std::int64_t h, std::int64_t i,
                 double* s_row);

/// P[b, h, i, :] = softmax(scale · S + M), zeros for a row with no allowed key.
/// `mask` may be null when p.key_mask is none.
void band_softmax_row(const Problem& p, const double* s_row, const double* mask, std::int64_t b, std::int64_t h,
                      std::int64_t i, double* p_row);

/// O[b, h, i, :] = Σ_j P[i, j] · V[key(i, j)] over valid slots.
void band_pv_row(const Problem& p, const double* p_row, const double* v, std::int64_t b, std::int64_t h,
                 std::int64_t i, double* o_row);

/// s(i, j) = i + D_h·(j − w_r): the query whose slot C − 1 − j holds key i (SPEC §3.4), or
/// −1 when it falls outside [0, N). key_of(p, h, s, C − 1 − j) == i whenever s ≥ 0.
std::int64_t transposed_query_of(const Problem& p, std::int64_t h, std::int64_t i, std::int64_t j);

/// Z[b, h, i, :] = Σ_j X[s, C − 1 − j] · Y[s, :] over valid s = i + D·(j − w_r) (band_tpv,
/// SPEC §3.4). `x` is a whole band tensor, `y` a whole Q/K/V-shaped tensor.
void band_tpv_row(const Problem& p, const double* x, const double* y, std::int64_t b, std::int64_t h, std::int64_t i,
                  double* z_row);

/// Whether slot j of query i takes part in the softmax: its key is inside the sequence and
/// kept by the key-padding mask (`mask` may be null when p.key_mask is none).
bool slot_allowed(const Problem& p, const double* mask, std::int64_t b, std::int64_t h, std::int64_t i, std::int64_t j);

/// dS[b, h, i, :] = scale · P ⊙ (dP − Σ_j dP ⊙ P) over the allowed slots, 0 elsewhere
/// (band_softmax_backward): the gradient with respect to the S of band_softmax.
void band_softmax_backward_row(const Problem& p, const double* p_row, const double* dp_row, const double* mask,
                               std::int64_t b, std::int64_t h, std::int64_t i, double* ds_row);

/// The gradients of the unfused attention O = band_pv(P, V), P = band_softmax(band_qk(Q, K))
/// with band_qk at scale 1 and band_softmax at p.scale (logits scale·Q·Kᵀ + M), for the
/// whole problem, from the identities of SPEC §3.4:
///   dP = band_qk(dO, V) (scale 1), dS = band_softmax_backward(P, dP),
///   dQ = band_pv(dS, K), dK = band_tpv(dS, Q), dV = band_tpv(P, dO).
/// Tensors are whole host arrays in the problem's layout; dq, dk, dv are overwritten.
void attention_backward(const Problem& p, const double* q, const double* k, const double* v, const double* prob,
                        const double* d_o, const double* mask, double* dq, double* dk, double* dv);

/// The forward whose gradient attention_backward is: O = band_pv(band_softmax(band_qk(Q, K)), V)
/// with band_qk at scale 1 and band_softmax at p.scale. Writes P (band) and O (whole tensors).
void attention_forward(const Problem& p, const double* q, const double* k, const double* v, const double* mask,
                       double* prob, double* o);

/// One row of the fused sliding_window_attention (SPEC §3.5), as the composition it fuses:
/// S = band_qk(Q, K) at scale 1, P = band_softmax(S) at p.scale (logits scale·S + M),
/// O[b, h, i, :] = band_pv(P, V) into o_row (head_dim values). Returns the row's
/// log-sum-exp ln Σ_j exp(scale·S[i, j] + M[i, j]) over its allowed slots, −inf when none is
/// allowed (o_row is then zero). `mask` may be null when p.key_mask is none.
double sliding_window_attention_row(const Problem& p, const double* q, const double* k, const double* v,
                                    const double* mask, std::int64_t b, std::int64_t h, std::int64_t i,
                                    double* o_row);

}  // namespace bandjit::reference
