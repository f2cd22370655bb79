#include "check/device_buffer.hpp"

#include <algorithm>
#include <utility>
#include <vector>

namespace bandjit {

DeviceBuffer::DeviceBuffer(std::size_t bytes) : bytes_(bytes) {
  ensure_context();  // a check may allocate before any kernel has been loaded (layer_norm's does)
  check_cuda(driver().cuMemAlloc(&ptr_, std::max<std::size_t>(bytes, 16)), "cuMemAlloc");
}

DeviceBuffer::~DeviceBuffer() {
  if (ptr_) driver().cuMemFree(ptr_);
}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& o) noexcept : ptr_(std::exchange(o.ptr_, 0)), bytes_(o.bytes_) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& o) noexcept {
  if (this != &o) {
    if (ptr_) driver().cuMemFree(ptr_);
    ptr_ = std::exchange(o.ptr_, 0);
    bytes_ = o.bytes_;
  }
  return *this;
}

void DeviceBuffer::upload(const void* host, std::size_t bytes, std::size_t offset) {
  check_cuda(driver().cuMemcpyHtoD(ptr_ + offset, host, bytes), "cuMemcpyHtoD");
}

void DeviceBuffer::download(void* host, std::size_t bytes, std::size_t offset) const {
  check_cuda(driver().cuMemcpyDtoH(host, ptr_ + offset, bytes), "cuMemcpyDtoH");
}

void DeviceBuffer::fill16(std::uint16_t pattern) {
  check_cuda(driver().cuMemsetD16(ptr_, pattern, bytes_ / 2), "cuMemsetD16");
}

void DeviceBuffer::fill32(std::uint32_t pattern) {
  check_cuda(driver().cuMemsetD32(ptr_, pattern, bytes_ / 4), "cuMemsetD32");
}

double median_time_us(const std::function<void()>& work, int warmup, int runs) {
  const auto& cu = driver();
  for (int i = 0; i < warmup; ++i) work();
  CUevent start = nullptr, stop = nullptr;
  check_cuda(cu.cuEventCreate(&start, CU_EVENT_DEFAULT), "cuEventCreate");
  check_cuda(cu.cuEventCreate(&stop, CU_EVENT_DEFAULT), "cuEventCreate");
  std::vector<double> times;
  for (int i = 0; i < runs; ++i) {
    check_cuda(cu.cuEventRecord(start, nullptr), "cuEventRecord");
    work();
    check_cuda(cu.cuEventRecord(stop, nullptr), "cuEventRecord");
    check_cuda(cu.cuEventSynchronize(stop), "cuEventSynchronize");
    float ms = 0;
    check_cuda(cu.cuEventElapsedTime(&ms, start, stop), "cuEventElapsedTime");
    times.push_back(ms * 1000.0);
  }
  cu.cuEventDestroy(start);
  cu.cuEventDestroy(stop);
  std::sort(times.begin(), times.end());
  return times.empty() ? 0 : times[times.size() / 2];
}

}  // namespace bandjit
