// Host shim of templates/common.cuh for the SIMT emulator (tests/sim/simt.hpp): the same
// names, with CUDA built-ins replaced by their documented behaviour. The addressing
// (row_offset) restates docs/kernels.md. The including test defines __shared__ (empty for
// `extern __shared__` arrays, `static` for fixed ones) before including a template.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "sim/simt.hpp"

#define __device__
#define __host__
#define __forceinline__ inline
#define __align__(n) __attribute__((aligned(n)))
#define threadIdx (::bandjit::sim::thread_idx)
#define blockIdx (::bandjit::sim::block_idx)
#define gridDim (::bandjit::sim::grid_dim)

struct uint4 {
  unsigned x, y, z, w;
};
inline uint4 make_uint4(unsigned x, unsigned y, unsigned z, unsigned w) { return {x, y, z, w}; }
struct float2 {
  float x, y;
};
inline float2 make_float2(float x, float y) { return {x, y}; }
inline int min(int a, int b) { return a < b ? a : b; }
inline int max(int a, int b) { return a > b ? a : b; }
inline void __syncthreads() { ::bandjit::sim::current->sync.wait(); }
inline void __syncwarp() { ::bandjit::sim::warp_sync(); }

// Every lane of the warp deposits v, then reads the value of lane `from(lane)`.
template <class From>
inline float warp_exchange(float v, From from) {
  using namespace ::bandjit::sim;
  const int t = static_cast<int>(thread_idx.x);
  std::memcpy(lane_slot(t), &v, sizeof v);
  warp_sync();
  float other;
  std::memcpy(&other, lane_slot((t & ~31) | (from(t & 31) & 31)), sizeof other);
  warp_sync();
  return other;
}
// __shfl_xor_sync and __shfl_sync over the full warp.
inline float __shfl_xor_sync(unsigned, float v, int lane_mask) {
  return warp_exchange(v, [&](int lane) { return lane ^ lane_mask; });
}
inline float __shfl_sync(unsigned, float v, int src_lane) {
  return warp_exchange(v, [&](int) { return src_lane; });
}

// __any_sync over the full warp: every lane deposits its predicate, then reads all 32.
inline bool __any_sync(unsigned, bool p) {
  using namespace ::bandjit::sim;
  const int t = static_cast<int>(thread_idx.x);
  const int v = p ? 1 : 0;
  std::memcpy(lane_slot(t), &v, sizeof v);
  warp_sync();
  bool any = false;
  for (int lane = 0; lane < 32; ++lane) {
    int other;
    std::memcpy(&other, lane_slot((t & ~31) | lane), sizeof other);
    any = any || other != 0;
  }
  warp_sync();
  return any;
}

#if defined(BANDJIT_USE_FP16)
struct __half {
  unsigned short bits;
};
inline float __half2float(__half h) {
  _Float16 f;
  std::memcpy(&f, &h.bits, 2);
  return static_cast<float>(f);
}
inline __half __float2half_rn(float x) {
  const _Float16 f = static_cast<_Float16>(x);  // round to nearest even
  __half h;
  std::memcpy(&h.bits, &f, 2);
  return h;
}
#endif

namespace bandjit {

enum : int { kLayoutBNHD = 0, kLayoutBHND = 1 };
enum : int { kMaskNone = 0, kMaskBool = 1, kMaskAdditive = 2 };

typedef long long i64;

inline float neg_inf() { return -std::numeric_limits<float>::infinity(); }

inline float to_float(float x) { return x; }
template <class T> T from_float(float x);
template <> inline float from_float<float>(float x) { return x; }
#if defined(BANDJIT_USE_FP16)
inline float to_float(__half x) { return __half2float(x); }
template <> inline __half from_float<__half>(float x) { return __float2half_rn(x); }
#endif

// elements<T>(raw)[c]: element c of the vector of T in `raw`, as float. The device version
// reads bfloat16, and float16 in 8-byte pieces, by 32-bit words: that path runs only on the
// GPU (GPU tests, `check`); the emulator has no bfloat16.
template <class T, class Raw>
struct Elements {
  const Raw& raw;
  float operator[](int c) const {
    T e;
    std::memcpy(&e, reinterpret_cast<const unsigned char*>(&raw) + c * sizeof(T), sizeof(T));
    return to_float(e);
  }
};
template <class T, class Raw>
inline Elements<T, Raw> elements(const Raw& raw) { return Elements<T, Raw>{raw}; }

// ex2.approx / lg2.approx, here exact: the templates' results differ only by their rounding.
inline float exp2_approx(float x) { return std::exp2(x); }
inline float log2_approx(float x) { return std::log2(x); }

constexpr int ceil_div(int a, int b) { return (a + b - 1) / b; }

template <class Cfg>
inline i64 row_offset(int b, int h, int i, int width) {
  if (Cfg::kLayout == kLayoutBNHD) return ((i64(b) * Cfg::kSeqLen + i) * Cfg::kHeads + h) * width;
  return ((i64(b) * Cfg::kHeads + h) * Cfg::kSeqLen + i) * width;
}

// cp.async.cg 16 bytes: copies src_bytes and fills the rest with zeros. Both addresses must be
// 16-byte aligned; the shim checks that and that src_bytes is in range.
// The source bytes must lie inside a tensor the test registered (sim::global_ranges).
// The bytes are read at issue; the destination holds NaN bytes until cp_async_wait releases
// the copy's commit group (sim::AsyncCopies).
inline void cp_async_16(void* smem, const void* gmem, int src_bytes) {
  if (reinterpret_cast<std::uintptr_t>(smem) % 16 || reinterpret_cast<std::uintptr_t>(gmem) % 16 || src_bytes < 0 ||
      src_bytes > 16)
    ::bandjit::sim::fail("cp_async_16: misaligned address or bad size");
  if (src_bytes > 0) ::bandjit::sim::check_global_read(gmem, static_cast<std::size_t>(src_bytes));
  ::bandjit::sim::AsyncCopies::Copy c{smem, {}};
  std::memcpy(c.bytes, gmem, static_cast<std::size_t>(src_bytes));  // the rest stays zero
  ::bandjit::sim::async_copies.copies.push_back(c);
  std::memset(smem, 0xff, 16);  // in flight: NaN until waited for
}
inline void cp_async_16_full(void* smem, const void* gmem) { cp_async_16(smem, gmem, 16); }
inline void cp_async_commit() {
  auto& a = ::bandjit::sim::async_copies;
  a.ends.push_back(a.copies.size());
}
// Lands every committed group but the newest N (copies issued after the last commit stay out).
template <int N>
inline void cp_async_wait() {
  auto& a = ::bandjit::sim::async_copies;
  if (a.ends.size() <= static_cast<std::size_t>(N)) return;
  const std::size_t groups = a.ends.size() - N, landed = a.ends[groups - 1];
  for (std::size_t i = 0; i < landed; ++i) std::memcpy(a.copies[i].dst, a.copies[i].bytes, 16);
  a.copies.erase(a.copies.begin(), a.copies.begin() + static_cast<std::ptrdiff_t>(landed));
  a.ends.erase(a.ends.begin(), a.ends.begin() + static_cast<std::ptrdiff_t>(groups));
  for (auto& e : a.ends) e -= landed;
}

}  // namespace bandjit
