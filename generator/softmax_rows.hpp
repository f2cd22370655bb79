// What band_softmax and band_softmax_backward generate alike: both work row by row with the
// same SoftmaxTiling, the same key-mask argument and the same Cfg row constants.
#pragma once

#include <string>

#include "generator/source.hpp"
#include "generator/tile_config.hpp"

namespace bandjit {

/// Launch shape (grid.z = batch) and key fields of a row-wise family.
void set_softmax_rows_launch(Source& s, const Problem& p, const SoftmaxTiling& t);

/// The Cfg lines kScale, kKeyMask, kRowThreads, kPiecesPerThread, kRowsPerBlock, kThreads.
std::string softmax_rows_cfg(const Problem& p, const SoftmaxTiling& t);

/// ", const unsigned char* __restrict__ mask" / float for an additive mask; "" without one.
std::string mask_parameter(const Problem& p);

/// The kernel's mask argument: "mask", or "nullptr" without one.
const char* mask_argument(const Problem& p);

}  // namespace bandjit
