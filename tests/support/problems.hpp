// Test problems in one line: the band's shape first, the rest as Problem's defaults.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "bandjit/problem.hpp"

namespace bandjit::test {

inline Problem band_problem(std::int64_t batch, std::int64_t heads, std::int64_t seq_len, std::int64_t head_dim,
                            std::int64_t window_left, std::int64_t window_right, DType dtype = DType::float32,
                            std::vector<std::int64_t> dilation = {1}, Layout layout = Layout::bnhd) {
  Problem p;
  p.batch = batch;
  p.heads = heads;
  p.seq_len = seq_len;
  p.head_dim = head_dim;
  p.window_left = window_left;
  p.window_right = window_right;
  p.dtype = dtype;
  p.dilation = std::move(dilation);
  p.layout = layout;
  return p;
}

}  // namespace bandjit::test
