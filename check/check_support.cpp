#include "check/check_support.hpp"

#include <cmath>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "generator/util_kernels.hpp"
#include "runtime/kernel_cache.hpp"

namespace bandjit {

double uniform(std::uint64_t seed, std::uint64_t index) {
  std::uint64_t z = seed + 0x9e3779b97f4a7c15ull * (index + 1);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z ^= z >> 31;
  return static_cast<double>(z >> 11) * 0x1.0p-52 - 1.0;
}

double element_value(DType d, const char* p) {
  switch (d) {
    case DType::float32: return *reinterpret_cast<const float*>(p);
    case DType::float16: return __half2float(*reinterpret_cast<const __half*>(p));
    case DType::bfloat16: return __bfloat162float(*reinterpret_cast<const __nv_bfloat16*>(p));
  }
  return 0;
}

double round_to(DType d, double v) {
  const float f = static_cast<float>(v);
  switch (d) {
    case DType::float32: return f;
    case DType::float16: return __half2float(__float2half_rn(f));
    case DType::bfloat16: return __bfloat162float(__float2bfloat16_rn(f));
  }
  return f;
}

HostTensor random_tensor(DType d, std::size_t n, std::uint64_t seed) {
  HostTensor t;
  const std::size_t es = element_size(d);
  t.bytes.resize(n * es);
  t.values.resize(n);
  const std::size_t blocks = (n + 65535) / 65536;
  parallel_for(blocks, [&](std::size_t blk) {
    for (std::size_t i = blk * 65536; i < std::min(n, (blk + 1) * 65536); ++i) {
      const float x = static_cast<float>(uniform(seed, i));
      char* dst = &t.bytes[i * es];
      if (d == DType::float32) *reinterpret_cast<float*>(dst) = x;
      if (d == DType::float16) *reinterpret_cast<__half*>(dst) = __float2half_rn(x);
      if (d == DType::bfloat16) *reinterpret_cast<__nv_bfloat16*>(dst) = __float2bfloat16_rn(x);
      t.values[i] = element_value(d, dst);
    }
  });
  return t;
}

void random_mask(const Problem& p, std::uint64_t seed, std::vector<double>& values, std::string& bytes) {
  const std::size_t n = static_cast<std::size_t>(p.batch * p.seq_len);
  values.resize(n);
  for (std::size_t idx = 0; idx < n; ++idx) {
    const bool removed = uniform(seed, idx) < -0.6 || (idx < static_cast<std::size_t>(p.seq_len) / 2);
    if (p.key_mask == KeyMask::boolean)
      values[idx] = removed ? 0.0 : 1.0;
    else
      values[idx] = removed ? -10000.0 : static_cast<float>(0.5 * (uniform(seed ^ 0x55, idx) + 1.0));
  }
  if (p.key_mask == KeyMask::boolean) {
    bytes.resize(n);
    for (std::size_t i = 0; i < n; ++i) bytes[i] = values[i] != 0.0 ? 1 : 0;
  } else {
    bytes.resize(n * 4);
    for (std::size_t i = 0; i < n; ++i) reinterpret_cast<float*>(bytes.data())[i] = static_cast<float>(values[i]);
  }
}

void poison(DeviceBuffer& buf, DType d) {
  if (d == DType::float32) buf.fill32(0x7fc00000u);
  if (d == DType::float16) buf.fill16(0x7e00u);
  if (d == DType::bfloat16) buf.fill16(0x7fc0u);
}

NonFinite count_nonfinite(const DeviceBuffer& buf, DType d, std::size_t n, const Options& options) {
  static thread_local DeviceBuffer counts(16);
  const Source src = generate_count_nonfinite(d);
  auto module = obtain_module(src, options, nullptr);
  const std::uint64_t zero[2] = {0, 0};
  counts.upload(zero, sizeof(zero));
  CUdeviceptr x = buf.ptr(), c = counts.ptr();
  long long count = static_cast<long long>(n);
  void* params[] = {&x, &count, &c};
  module->launch(nullptr, params);
  std::uint64_t out[2];
  counts.download(out, sizeof(out));
  return {out[0], out[1]};
}

std::vector<double> gather(const DeviceBuffer& buf, DType d, const std::vector<std::int64_t>& index,
                           const Options& options) {
  std::vector<double> values(index.size());
  if (index.empty()) return values;
  const std::size_t es = element_size(d);
  DeviceBuffer dindex(index.size() * sizeof(std::int64_t)), dout(index.size() * es);
  dindex.upload(index.data(), index.size() * sizeof(std::int64_t));
  const Source src = generate_gather(d);
  auto module = obtain_module(src, options, nullptr);
  CUdeviceptr x = buf.ptr(), i = dindex.ptr(), o = dout.ptr();
  long long count = static_cast<long long>(index.size());
  void* params[] = {&x, &i, &count, &o};
  module->launch(nullptr, params);
  std::string bytes(index.size() * es, '\0');
  dout.download(bytes.data(), bytes.size());
  for (std::size_t k = 0; k < index.size(); ++k) values[k] = element_value(d, &bytes[k * es]);
  return values;
}

void ErrorSum::add(double out, double ref, bool exact_slot) {
  if (exact_slot) {  // −inf in S, or an exact zero of a masked slot in P or dS
    if (out != ref) ++structure;
    return;
  }
  if (!std::isfinite(out)) {
    ++structure;
    return;
  }
  diff2 += (out - ref) * (out - ref);
  ref2 += ref * ref;
}

double ErrorSum::rel() const { return ref2 > 0 ? std::sqrt(diff2 / ref2) : (diff2 > 0 ? INFINITY : 0.0); }

ErrorSum total(const std::vector<ErrorSum>& parts) {
  ErrorSum t;
  for (const auto& e : parts) t.merge(e);
  return t;
}

OpCheck make_op_check(const std::string& family, Origin origin, double get_kernel_ms, const ErrorSum& error,
                      double tolerance, std::uint64_t rows, const NonFinite& nonfinite, std::uint64_t inf_expected,
                      double median_us) {
  OpCheck c;
  c.family = family;
  c.origin = origin;
  c.get_kernel_ms = get_kernel_ms;
  c.rel_error = error.rel();
  c.tolerance = tolerance;
  c.rows_checked = rows;
  c.structure_mismatches = error.structure;
  c.nan_count = nonfinite.nan;
  c.inf_count = nonfinite.inf;
  c.inf_expected = inf_expected;
  c.median_us = median_us;
  c.passed = rows > 0 && c.rel_error <= tolerance && c.structure_mismatches == 0 && c.nan_count == 0 &&
             c.inf_count == inf_expected;
  return c;
}

}  // namespace bandjit
