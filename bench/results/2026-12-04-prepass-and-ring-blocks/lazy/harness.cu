// Timing of variants of the masked float16 L = 65536 softmax forward (1024 rows, 16 heads)
// against the kernel as emitted: each checked bit for bit against it (random mask, out of
// place and in place), then timed as bandjit bench (rotating sets, each launch between its
// own events, median of 50 after 10 warm-up launches), three rounds.
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <algorithm>
#include <cstdio>
#include <functional>
#include <vector>
#define VARIANTS(X) X(o) X(l1) X(l2) X(l2u) X(ou) X(lb)
#define DECLARE(v) void launch_##v(const __half* x, __half* y, const unsigned char* mask, cudaStream_t s);
VARIANTS(DECLARE)
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e)); return 1; } } while (0)
constexpr size_t kElems = 1024ull * 65536, kMask = 64ull * 65536;
__global__ void init(__half* x, unsigned char* m, unsigned seed, int mask_mode) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < kElems; i += size_t(gridDim.x) * blockDim.x) {
    unsigned h = unsigned(i) * 2654435761u ^ seed; h ^= h >> 15; h *= 2246822519u; h ^= h >> 13;
    x[i] = __float2half((h & 0xffff) / 65536.f * 8.f - 4.f);
    if (i < kMask) m[i] = mask_mode == 0 ? 0 : (((h >> 20) % 10 == 0) || (i / 65536) % 17 == 3) * (1 + (h >> 24) % 255);
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
struct Variant { const char* name; void (*launch)(const __half*, __half*, const unsigned char*, cudaStream_t); };
int main() {
  const int sets = 2;
  __half *x[sets], *y[sets], *y2;
  unsigned char* m[sets];
  unsigned long long* cnt;
  for (int i = 0; i < sets; ++i) { CK(cudaMalloc(&x[i], kElems * 2)); CK(cudaMalloc(&y[i], kElems * 2)); CK(cudaMalloc(&m[i], kMask)); }
  CK(cudaMalloc(&y2, kElems * 2)); CK(cudaMalloc(&cnt, 8));
#define ENTRY(v) {#v, launch_##v},
  const Variant vs[] = {VARIANTS(ENTRY)};
  auto count = [&](const __half* a, const __half* b) {
    cudaMemset(cnt, 0, 8);
    diff<<<1024, 256>>>(a, b, cnt);
    unsigned long long n = ~0ull;
    cudaMemcpy(&n, cnt, 8, cudaMemcpyDeviceToHost);
    return n;
  };
  init<<<1024, 256>>>(x[0], m[0], 1234, 1);
  cudaMemset(y[0], 0xff, kElems * 2);
  launch_o(x[0], y[0], m[0], 0);
  for (const auto& v : vs) {
    cudaMemset(y2, 0xff, kElems * 2);
    v.launch(x[0], y2, m[0], 0);
    const unsigned long long out = count(y[0], y2);
    cudaMemcpy(y2, x[0], kElems * 2, cudaMemcpyDeviceToDevice);
    v.launch(y2, y2, m[0], 0);
    printf("check %-4s: %llu elements differ from o (out of place), %llu (in place)\n", v.name, out, count(y[0], y2));
  }
  CK(cudaDeviceSynchronize());
  for (int i = 0; i < sets; ++i) init<<<1024, 256>>>(x[i], m[i], 99 + i, 0);  // the bench's mask: all zeros
  void *a, *b;
  CK(cudaMalloc(&a, 1ull << 30)); CK(cudaMalloc(&b, 1ull << 30));
  const double copy_us = timed([&](int) { cudaMemcpyAsync(b, a, 1ull << 30, cudaMemcpyDeviceToDevice, 0); }, 1);
  const double copy_gbps = 2.0 * (1ull << 30) / (copy_us * 1e3);
  const double bytes = 4.0 * kElems + kMask;  // as bench: x, y and the mask once
  printf("copy %.1f GB/s\n", copy_gbps);
  for (int round = 0; round < 3; ++round)
    for (const auto& v : vs) {
      const double us = timed([&](int i) { v.launch(x[i], y[i], m[i], 0); }, sets);
      printf("round %d  %-4s %8.2f us  %5.1f %%\n", round, v.name, us, 100.0 * bytes / (us * 1e3) / copy_gbps);
    }
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  return 0;
}
