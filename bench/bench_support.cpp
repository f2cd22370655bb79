#include "bench/bench_support.hpp"

#include <algorithm>
#include <vector>

#include "runtime/driver_api.hpp"

namespace bandjit {

// Times `work(set)` on rotating sets: each launch between its own pair of events.
Sample time_rotating(const std::function<void(int)>& work, int sets, int warmup, int runs) {
  const auto& cu = driver();
  for (int i = 0; i < warmup; ++i) work(i % sets);
  std::vector<CUevent> ev(2 * runs);
  for (auto& e : ev) check_cuda(cu.cuEventCreate(&e, CU_EVENT_DEFAULT), "cuEventCreate");
  for (int i = 0; i < runs; ++i) {
    check_cuda(cu.cuEventRecord(ev[2 * i], nullptr), "cuEventRecord");
    work(i % sets);
    check_cuda(cu.cuEventRecord(ev[2 * i + 1], nullptr), "cuEventRecord");
  }
  check_cuda(cu.cuEventSynchronize(ev.back()), "cuEventSynchronize");
  std::vector<double> us(runs);
  for (int i = 0; i < runs; ++i) {
    float ms = 0;
    check_cuda(cu.cuEventElapsedTime(&ms, ev[2 * i], ev[2 * i + 1]), "cuEventElapsedTime");
    us[i] = ms * 1000.0;
  }
  for (auto& e : ev) cu.cuEventDestroy(e);
  std::sort(us.begin(), us.end());
  return {us[us.size() / 2], us.front()};
}

void fill_random(DeviceBuffer& buf, DType d, std::uint64_t seed) {
  const std::size_t n = buf.bytes() / element_size(d);
  std::vector<std::uint16_t> half(d == DType::float32 ? 0 : n);
  std::vector<float> single(d == DType::float32 ? n : 0);
  std::uint64_t x = seed | 1;
  for (std::size_t i = 0; i < n; ++i) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    const float v = static_cast<float>(static_cast<double>(x >> 11) * 0x1.0p-53 * 2 - 1);
    if (d == DType::float32) {
      single[i] = v;
    } else if (d == DType::float16) {
      // Exponent/mantissa of a value in [0.5, 1) with a random sign: enough for timing.
      half[i] = static_cast<std::uint16_t>(0x3800 | (x & 0x3ff) | ((x >> 20) & 1) << 15);
    } else {
      half[i] = static_cast<std::uint16_t>(0x3f00 | (x & 0x7f) | ((x >> 20) & 1) << 15);
    }
  }
  if (d == DType::float32)
    buf.upload(single.data(), n * 4);
  else
    buf.upload(half.data(), n * 2);
}

}  // namespace bandjit
