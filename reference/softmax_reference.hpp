// Float64 reference of the softmax families (docs/softmax.md): one row at a time, the
// formulas as written, for `check` and the CPU tests.
#pragma once

#include <cstdint>
#include <limits>

namespace bandjit::reference {

/// What removes or shifts the keys of one row of length L.
struct RowMask {
  const double* additive = nullptr;        ///< L values added after scaling; −inf removes the key
  const unsigned char* boolean = nullptr;  ///< L bytes; non-zero removes the key (Megatron)
  std::int64_t last_key = std::numeric_limits<std::int64_t>::max();  ///< keys after it are removed
};

/// Megatron's causal mask for query q of `queries` against L keys: the last key kept,
/// q + (L − queries) (the diagonal when queries = L; < 0 removes every key).
std::int64_t causal_last_key(std::int64_t q, std::int64_t queries, std::int64_t L);

/// Whether key j is removed (boolean mask, causal limit, or an additive −inf).
bool key_removed(const RowMask& mask, std::int64_t j);

/// y = softmax(scale · x + additive) over the keys left; removed keys and every key of a
/// row with none left get exactly 0.
void softmax_row(const double* x, std::int64_t L, double scale, const RowMask& mask, double* y);

/// dx = scale · y ⊙ (dy − Σ_j dy_j · y_j).
void softmax_backward_row(const double* y, const double* dy, std::int64_t L, double scale, double* dx);

}  // namespace bandjit::reference
