// Validation of a Problem: every rejection names the field, its value and the allowed range.
#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "bandjit/errors.hpp"
#include "bandjit/problem.hpp"

namespace bandjit {
namespace {

[[noreturn]] void reject(const std::string& field, const std::string& value, const std::string& allowed) {
  throw Error(ErrorKind::invalid_problem,
              fmt::format("{} = {} is out of range; allowed: {}", field, value, allowed),
              {{"field", field}, {"value", value}, {"allowed", allowed}});
}

void check_range(const char* field, std::int64_t value, std::int64_t lo, std::int64_t hi,
                 const std::string& why = "") {
  if (value < lo || value > hi)
    reject(field, std::to_string(value),
           fmt::format("{} … {}{}", lo, hi, why.empty() ? "" : fmt::format(" ({})", why)));
}

}  // namespace

std::int64_t Problem::dilation_of(std::int64_t head) const {
  return dilation.size() == 1 ? dilation[0] : dilation.at(static_cast<std::size_t>(head));
}

bool Problem::uniform_dilation() const {
  for (auto d : dilation)
    if (d != dilation.front()) return false;
  return true;
}

void validate(const Problem& p) {
  check_range("batch", p.batch, 1, Limits::max_batch);
  check_range("heads", p.heads, 1, Limits::max_heads);
  check_range("seq_len", p.seq_len, 1, Limits::max_seq_len);
  if (p.head_dim < Limits::min_head_dim || p.head_dim > Limits::max_head_dim ||
      p.head_dim % Limits::head_dim_multiple != 0)
    reject("head_dim", std::to_string(p.head_dim),
           fmt::format("a multiple of {} from {} to {}", Limits::head_dim_multiple,
                       Limits::min_head_dim, Limits::max_head_dim));
  check_range("window_left", p.window_left, 0, p.seq_len - 1, "window must be < seq_len");
  check_range("window_right", p.window_right, 0, p.seq_len - 1, "window must be < seq_len");
  if (p.batch * p.heads * p.seq_len > Limits::max_rows)
    reject("batch × heads × seq_len", std::to_string(p.batch * p.heads * p.seq_len),
           fmt::format("1 … {} rows", Limits::max_rows));
  if (p.diagonals() > Limits::max_diagonals)
    reject("window_left + window_right + 1", std::to_string(p.diagonals()),
           fmt::format("1 … {} diagonals", Limits::max_diagonals));
  if (p.dilation.empty())
    reject("dilation", "[]", fmt::format("one int, or a list of heads = {} ints", p.heads));
  if (p.dilation.size() != 1 && static_cast<std::int64_t>(p.dilation.size()) != p.heads)
    reject("dilation", fmt::format("a list of {} values", p.dilation.size()),
           fmt::format("one int, or a list of heads = {} ints", p.heads));
  for (std::size_t h = 0; h < p.dilation.size(); ++h) {
    const auto field = p.dilation.size() == 1 ? std::string("dilation") : fmt::format("dilation[{}]", h);
    if (p.dilation[h] < 1 || p.dilation[h] > p.seq_len)
      reject(field, std::to_string(p.dilation[h]), fmt::format("1 … seq_len = {}", p.seq_len));
  }
  // The kernels use scale and scale·log2(e) as float32 constants.
  if (!std::isfinite(p.scale) || !std::isfinite(static_cast<float>(p.scale * 1.4426950408889634)))
    reject("scale", fmt::format("{}", p.scale), "a finite number of magnitude below 2.3e38 (float32)");
}

std::string_view to_string(DType d) {
  switch (d) {
    case DType::float32: return "float32";
    case DType::float16: return "float16";
    case DType::bfloat16: return "bfloat16";
  }
  return "?";
}

std::string_view to_string(Layout l) { return l == Layout::bnhd ? "bnhd" : "bhnd"; }

std::string_view to_string(KeyMask m) {
  switch (m) {
    case KeyMask::none: return "none";
    case KeyMask::boolean: return "bool";
    case KeyMask::additive: return "additive";
  }
  return "?";
}

std::size_t element_size(DType d) { return d == DType::float32 ? 4 : 2; }

std::string slug(const Problem& p) {
  std::string dil;
  if (p.uniform_dilation()) {
    dil = std::to_string(p.dilation.front());
  } else {
    dil = fmt::format("{}", fmt::join(p.dilation, "-"));
  }
  const char* dt = p.dtype == DType::float32 ? "f32" : p.dtype == DType::float16 ? "f16" : "bf16";
  const std::string batch = p.runtime_batch ? "any" : std::to_string(p.batch);
  std::string s = fmt::format("b{}_h{}_n{}_d{}_wl{}_wr{}_dil{}_{}_{}", batch, p.heads, p.seq_len,
                              p.head_dim, p.window_left, p.window_right, dil, dt, to_string(p.layout));
  if (p.scale != 1.0) s += fmt::format("_s{:.6g}", p.scale);
  if (p.key_mask != KeyMask::none) s += fmt::format("_mask{}", to_string(p.key_mask));
  return s;
}

}  // namespace bandjit
