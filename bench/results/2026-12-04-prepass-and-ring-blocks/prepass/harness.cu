// Prototype timing: the masked 16-bit softmax forward (L = 65536, 1024 rows, 16 heads) as
// generated (orig) against mask bits packed by a first kernel (pack + bits), with and
// without programmatic dependent launch. Timed as bandjit bench: rotating sets, each launch
// between its own events, median of 50 after warm-up.
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <algorithm>
#include <cstdio>
#include <functional>
#include <vector>
void launch_orig(const __half* x, __half* y, const unsigned char* mask, cudaStream_t s);
void launch_pack(const unsigned char* mask, unsigned long long* bits, cudaStream_t s);
void launch_bits(const __half* x, __half* y, const unsigned long long* bits, bool pdl, cudaStream_t s);
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e)); return 1; } } while (0)
constexpr size_t kElems = 1024ull * 65536, kMask = 64ull * 65536, kBits = 64ull * 1024 * 8;
__global__ void init(__half* x, unsigned char* m, unsigned seed, int mask_mode) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < kElems; i += size_t(gridDim.x) * blockDim.x) {
    unsigned h = unsigned(i) * 2654435761u ^ seed; h ^= h >> 15; h *= 2246822519u; h ^= h >> 13;
    x[i] = __float2half((h & 0xffff) / 65536.f * 8.f - 4.f);
    if (i < kMask) m[i] = mask_mode == 0 ? 0 : ((h >> 20) % 10 == 0) || (i / 65536) % 17 == 3;
  }
}
__global__ void diff(const __half* a, const __half* b, unsigned long long* n) {
  unsigned long long c = 0;
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < kElems; i += size_t(gridDim.x) * blockDim.x)
    c += __half_as_ushort(a[i]) != __half_as_ushort(b[i]);
  atomicAdd(n, c);
}
double timed(const std::function<void(int)>& work, int sets) {
  for (int i = 0; i < 10; ++i) work(i % sets);
  std::vector<cudaEvent_t> ev(100);
  for (auto& e : ev) cudaEventCreate(&e);
  for (int i = 0; i < 50; ++i) { cudaEventRecord(ev[2 * i], 0); work(i % sets); cudaEventRecord(ev[2 * i + 1], 0); }
  cudaEventSynchronize(ev.back());
  std::vector<double> us(50);
  for (int i = 0; i < 50; ++i) { float ms; cudaEventElapsedTime(&ms, ev[2 * i], ev[2 * i + 1]); us[i] = ms * 1e3; }
  for (auto& e : ev) cudaEventDestroy(e);
  std::sort(us.begin(), us.end());
  return us[25];
}
int main() {
  const int sets = 2;
  __half *x[sets], *y[sets], *y2;
  unsigned char* m[sets];
  unsigned long long *bits[sets], *cnt;
  for (int i = 0; i < sets; ++i) {
    CK(cudaMalloc(&x[i], kElems * 2)); CK(cudaMalloc(&y[i], kElems * 2)); CK(cudaMalloc(&m[i], kMask)); CK(cudaMalloc(&bits[i], kBits));
  }
  CK(cudaMalloc(&y2, kElems * 2)); CK(cudaMalloc(&cnt, 8));
  // Correctness: random mask (10 % removed, every 17th query row fully masked), both paths, bitwise.
  for (int pdl = 0; pdl < 2; ++pdl) {
    init<<<1024, 256>>>(x[0], m[0], 1234 + pdl, 1);
    cudaMemset(y[0], 0xff, kElems * 2); cudaMemset(y2, 0xff, kElems * 2);
    launch_orig(x[0], y[0], m[0], 0);
    launch_pack(m[0], bits[0], 0);
    launch_bits(x[0], y2, bits[0], pdl, 0);
    cudaMemset(cnt, 0, 8);
    diff<<<1024, 256>>>(y[0], y2, cnt);
    unsigned long long n = 0;
    CK(cudaMemcpy(&n, cnt, 8, cudaMemcpyDeviceToHost));
    // in place too
    launch_pack(m[0], bits[0], 0);
    cudaMemcpy(y2, x[0], kElems * 2, cudaMemcpyDeviceToDevice);
    launch_bits(y2, y2, bits[0], pdl, 0);
    cudaMemset(cnt, 0, 8);
    diff<<<1024, 256>>>(y[0], y2, cnt);
    unsigned long long n2 = 0;
    CK(cudaMemcpy(&n2, cnt, 8, cudaMemcpyDeviceToHost));
    printf("check pdl=%d: %llu elements differ (out of place), %llu (in place)\n", pdl, n, n2);
  }
  for (int i = 0; i < sets; ++i) init<<<1024, 256>>>(x[i], m[i], 99 + i, 0);  // the bench's mask: all zeros
  for (int i = 0; i < sets; ++i) launch_pack(m[i], bits[i], 0);
  CK(cudaDeviceSynchronize());
  // Copy bandwidth as bench: 1 GiB device to device.
  void *a, *b;
  CK(cudaMalloc(&a, 1ull << 30)); CK(cudaMalloc(&b, 1ull << 30));
  const double copy_us = timed([&](int) { cudaMemcpyAsync(b, a, 1ull << 30, cudaMemcpyDeviceToDevice, 0); }, 1);
  const double copy_gbps = 2.0 * (1ull << 30) / (copy_us * 1e3);
  const double bytes = 4.0 * kElems + kMask;  // as bench: x, y and the mask once
  printf("copy %.1f GB/s\n", copy_gbps);
  for (int round = 0; round < 3; ++round) {
    struct V { const char* name; std::function<void(int)> f; } vs[] = {
      {"orig (mask bytes)", [&](int i) { launch_orig(x[i], y[i], m[i], 0); }},
      {"bits only (bits precomputed)", [&](int i) { launch_bits(x[i], y[i], bits[i], false, 0); }},
      {"pack + bits", [&](int i) { launch_pack(m[i], bits[i], 0); launch_bits(x[i], y[i], bits[i], false, 0); }},
      {"pack + bits, PDL", [&](int i) { launch_pack(m[i], bits[i], 0); launch_bits(x[i], y[i], bits[i], true, 0); }},
      {"pack alone", [&](int i) { launch_pack(m[i], bits[i], 0); }},
    };
    for (auto& v : vs) {
      const double us = timed(v.f, sets);
      printf("round %d  %-30s %8.2f us  %5.1f %%\n", round, v.name, us, 100.0 * bytes / (us * 1e3) / copy_gbps);
    }
  }
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  return 0;
}
