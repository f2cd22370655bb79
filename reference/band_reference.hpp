// Float64 reference of SPEC §3.1–3.3, one output row at a time, written from the formulas
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

}  // namespace bandjit::reference
