// Owning device allocation and CUDA-event timing for check and bench (Driver API).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

#include "runtime/driver_api.hpp"

namespace bandjit {

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  CUdeviceptr ptr() const { return ptr_; }
  std::size_t bytes() const { return bytes_; }
  void upload(const void* host, std::size_t bytes, std::size_t offset = 0);
  void download(void* host, std::size_t bytes, std::size_t offset = 0) const;
  /// Fills with a 16- or 32-bit pattern (NaN poison before a launch).
  void fill16(std::uint16_t pattern);
  void fill32(std::uint32_t pattern);

 private:
  CUdeviceptr ptr_ = 0;
  std::size_t bytes_ = 0;
};

/// Median time in microseconds of `runs` launches of `work` on the default stream, each
/// between two CUDA events, after `warmup` untimed launches.
double median_time_us(const std::function<void()>& work, int warmup, int runs);

}  // namespace bandjit
