// What the sim tests hand an emulated kernel: tensors in 16-byte aligned storage of the
// element type (filled from float64 values, which are then replaced by what the element type
// holds, so the reference reads exactly the kernel's inputs; outputs poisoned with NaN), and a
// launch in which every block's shared memory starts as NaN (all-ones bits in every dtype), so
// a slot a kernel reads without having staged it shows up in the results.
// Include after the kernel template (it uses the template's from_float / to_float).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <random>
#include <vector>

#include "reference/band_reference.hpp"
#include "sim/simt.hpp"
#include "support/catch.hpp"

namespace bandjit::sim {

// A band tensor ([.., C] in the problem's layout) of uniform values in [−1, 1), NaN at the slots
// whose key lies outside the sequence: the kernels must never let those in (the float64
// reference reads only valid slots).
template <class Rng>
std::vector<double> random_band_nan_off_sequence(const Problem& p, Rng& rng) {
  const auto C = p.diagonals();
  std::vector<double> x(static_cast<std::size_t>(p.batch * p.heads * p.seq_len * C));
  std::uniform_real_distribution<double> u(-1, 1);
  for (std::int64_t b = 0; b < p.batch; ++b)
    for (std::int64_t h = 0; h < p.heads; ++h)
      for (std::int64_t i = 0; i < p.seq_len; ++i)
        for (std::int64_t j = 0; j < C; ++j)
          x[reference::band_index(p, b, h, i, j)] = reference::key_of(p, h, i, j) < 0 ? std::nan("") : u(rng);
  return x;
}

template <class T>
class DeviceTensor {
 public:
  explicit DeviceTensor(std::size_t n) : store_(n + 16 / sizeof(T)), n_(n) {
    const auto addr = reinterpret_cast<std::uintptr_t>(store_.data());
    data_ = reinterpret_cast<T*>((addr + 15) / 16 * 16);
  }
  // Stores each value rounded to T and writes the rounded value back into `values`.
  void upload(std::vector<double>& values) {
    for (std::size_t i = 0; i < n_; ++i) {
      data_[i] = from_float<T>(static_cast<float>(values[i]));
      values[i] = to_float(data_[i]);
    }
  }
  void poison() {
    for (std::size_t i = 0; i < n_; ++i) data_[i] = from_float<T>(std::nanf(""));
  }
  T* data() const { return data_; }
  std::size_t bytes() const { return n_ * sizeof(T); }
  double at(std::size_t i) const { return to_float(data_[i]); }

 private:
  std::vector<T> store_;
  T* data_;
  std::size_t n_;
};

// sim::launch with each block's shared memory (`smem`, `bytes`) set to NaN first.
inline void launch_on_nan_shared(Dim3 grid, int threads, unsigned char* smem, std::size_t bytes,
                                 const std::function<void()>& kernel) {
  launch(grid, threads, [&] {
    if (threadIdx.x == 0) std::memset(smem, 0xff, bytes);
    __syncthreads();
    kernel();
  });
}

// launch_on_nan_shared, then a test failure naming each error the emulator recorded (an
// access outside global_ranges, a race, a wgmma operand changed before its wait).
inline void launch_checked(Dim3 grid, int threads, unsigned char* smem, std::size_t bytes,
                           const std::function<void()>& kernel) {
  failures.clear();
  launch_on_nan_shared(grid, threads, smem, bytes, kernel);
  for (const auto& f : failures) UNSCOPED_INFO(f);
  CHECK(failures.empty());
}

}  // namespace bandjit::sim
