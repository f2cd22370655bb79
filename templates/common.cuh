// bandjit/common.cuh — element types, conversions and addressing shared by every family.
// Real CUDA C++: the generator prepends a `struct Cfg` with every size as a constant and
// instantiates the family's template from an extern "C" entry point.
#pragma once

#if defined(BANDJIT_USE_FP16)
#include <cuda_fp16.h>
#endif
#if defined(BANDJIT_USE_BF16)
#include <cuda_bf16.h>
#endif

namespace bandjit {

enum : int { kLayoutBNHD = 0, kLayoutBHND = 1 };
enum : int { kMaskNone = 0, kMaskBool = 1, kMaskAdditive = 2 };

typedef long long i64;

__device__ __forceinline__ float neg_inf() { return __int_as_float(0xff800000); }

__device__ __forceinline__ float to_float(float x) { return x; }
template <class T> __device__ __forceinline__ T from_float(float x);
template <> __device__ __forceinline__ float from_float<float>(float x) { return x; }
#if defined(BANDJIT_USE_FP16)
__device__ __forceinline__ float to_float(__half x) { return __half2float(x); }
template <> __device__ __forceinline__ __half from_float<__half>(float x) { return __float2half_rn(x); }
#endif
#if defined(BANDJIT_USE_BF16)
__device__ __forceinline__ float to_float(__nv_bfloat16 x) { return __bfloat162float(x); }
template <> __device__ __forceinline__ __nv_bfloat16 from_float<__nv_bfloat16>(float x) {
  return __float2bfloat16_rn(x);
}
#endif

// The elements of a vector of T held in one register value (a uint4 piece and the like), read
// as floats: `elements<T>(raw)[c]`. bfloat16 reads the 32-bit words, the low element as the
// word << 16 and the high one as the word with its low half cleared: one instruction each,
// where converting element by element extracts the high half first and then shifts (the
// bfloat16 H = 65536 layer_norm forward carried ~100 instructions more than float16's).
template <class T> struct IsBfloat16 { static constexpr bool value = false; };
#if defined(BANDJIT_USE_BF16)
template <> struct IsBfloat16<__nv_bfloat16> { static constexpr bool value = true; };
#endif
// float16 in an 8-byte piece goes by words too: element by element, ptxas split the 64-bit
// value into 16-bit registers (and spilled them, layer_norm H = 65536 in 8-byte pieces).
template <class T> struct IsHalf { static constexpr bool value = false; };
#if defined(BANDJIT_USE_FP16)
template <> struct IsHalf<__half> { static constexpr bool value = true; };
#endif
template <class T, class Raw>
struct Elements {
  const Raw& raw;
  __device__ __forceinline__ float operator[](int c) const {
    if constexpr (IsBfloat16<T>::value && sizeof(Raw) % 4 == 0) {
      const unsigned w = reinterpret_cast<const unsigned*>(&raw)[c >> 1];
      return __uint_as_float(c & 1 ? w & 0xffff0000u : w << 16);
#if defined(BANDJIT_USE_FP16)
    } else if constexpr (IsHalf<T>::value && sizeof(Raw) == 8) {
      const unsigned w = unsigned(static_cast<unsigned long long>(raw) >> (32 * (c >> 1)));
      const __half2 h = *reinterpret_cast<const __half2*>(&w);
      return c & 1 ? __high2float(h) : __low2float(h);
#endif
    } else {
      return to_float(reinterpret_cast<const T*>(&raw)[c]);
    }
  }
};
template <class T, class Raw>
__device__ __forceinline__ Elements<T, Raw> elements(const Raw& raw) { return Elements<T, Raw>{raw}; }

// ex2.approx / lg2.approx: relative error < 2^-22; 2^-inf = 0, log2(0) = -inf. The host
// fallbacks serve code that includes a template outside device compilation.
__device__ __forceinline__ float exp2_approx(float x) {
#if defined(__CUDA_ARCH__)
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
  return y;
#else
  return exp2f(x);
#endif
}
__device__ __forceinline__ float log2_approx(float x) {
#if defined(__CUDA_ARCH__)
  float y;
  asm("lg2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
  return y;
#else
  return log2f(x);
#endif
}

__host__ __device__ constexpr int ceil_div(int a, int b) { return (a + b - 1) / b; }

// Element offset of row (b, h, i) of a tensor with `width` elements per row, in the
// problem's layout: bnhd = [B, N, H, width], bhnd = [B, H, N, width].
template <class Cfg>
__device__ __forceinline__ i64 row_offset(int b, int h, int i, int width) {
  if (Cfg::kLayout == kLayoutBNHD)
    return ((i64(b) * Cfg::kSeqLen + i) * Cfg::kHeads + h) * width;
  return ((i64(b) * Cfg::kHeads + h) * Cfg::kSeqLen + i) * width;
}

// 16-byte asynchronous copy global → shared; src_bytes = 0 fills the 16 bytes with zeros.
__device__ __forceinline__ void cp_async_16(void* smem, const void* gmem, int src_bytes) {
  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(s), "l"(gmem), "r"(src_bytes));
}
// The same with all 16 bytes read (no zero fill: no src-size operand to compute).
__device__ __forceinline__ void cp_async_16_full(void* smem, const void* gmem) {
  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s), "l"(gmem));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
// Waits until at most N of this thread's committed groups are still in flight.
template <int N>
__device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory"); }

}  // namespace bandjit
