// Prototype timing: the float16 layer_norm forward at H = 65536 (1024 rows, float32 weight
// and bias) as generated (orig: one cluster barrier a row and one at exit) against the row's
// moments passed to the peers by st.async on an mbarrier (async). Bitwise check against orig,
// outputs NaN-poisoned first; timed as bandjit bench: rotating sets, each launch between its
// own events, median of 50 after warm-up.
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <functional>
#include <vector>
void launch_orig(const __half* x, const float* w, const float* b, __half* y, float* m, float* r, cudaStream_t s);
void launch_async(const __half* x, const float* w, const float* b, __half* y, float* m, float* r, cudaStream_t s);
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e)); return 1; } } while (0)
constexpr int kRows = 1024, kH = 65536;
constexpr size_t kElems = size_t(kRows) * kH;
__global__ void init(__half* x, float* w, float* b, unsigned seed) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < kElems; i += size_t(gridDim.x) * blockDim.x) {
    unsigned h = unsigned(i) * 2654435761u ^ seed; h ^= h >> 15; h *= 2246822519u; h ^= h >> 13;
    x[i] = __float2half((h & 0xffff) / 65536.f * 4.f - 2.f + float((i / kH) % 7) - 3.f);
    if (i < kH) w[i] = 0.5f + ((h >> 16) & 0xff) / 256.f, b[i] = ((h >> 8) & 0xff) / 256.f - 0.5f;
  }
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
  setvbuf(stdout, nullptr, _IONBF, 0);
  const int sets = 3;
  __half *x[sets], *y[sets], *y2;
  float *w[sets], *b[sets], *m[sets], *r[sets], *m2, *r2;
  for (int i = 0; i < sets; ++i) {
    CK(cudaMalloc(&x[i], kElems * 2)); CK(cudaMalloc(&y[i], kElems * 2)); CK(cudaMalloc(&w[i], kH * 4));
    CK(cudaMalloc(&b[i], kH * 4)); CK(cudaMalloc(&m[i], kRows * 4)); CK(cudaMalloc(&r[i], kRows * 4));
    init<<<1024, 256>>>(x[i], w[i], b[i], 17 + i);
  }
  CK(cudaMalloc(&y2, kElems * 2)); CK(cudaMalloc(&m2, kRows * 4)); CK(cudaMalloc(&r2, kRows * 4));
  for (int rep = 0; rep < 3; ++rep) {
    init<<<1024, 256>>>(x[0], w[0], b[0], 1000 + rep);
    CK(cudaMemset(y[0], 0xff, kElems * 2)); CK(cudaMemset(y2, 0xff, kElems * 2));
    CK(cudaMemset(m[0], 0xff, kRows * 4)); CK(cudaMemset(m2, 0xff, kRows * 4));
    CK(cudaMemset(r[0], 0xff, kRows * 4)); CK(cudaMemset(r2, 0xff, kRows * 4));
    launch_orig(x[0], w[0], b[0], y[0], m[0], r[0], 0);
    launch_async(x[0], w[0], b[0], y2, m2, r2, 0);
    CK(cudaGetLastError()); CK(cudaDeviceSynchronize());
    std::vector<unsigned short> a(kElems), c(kElems);
    std::vector<float> ma(kRows), mc(kRows), ra(kRows), rc(kRows);
    CK(cudaMemcpy(a.data(), y[0], kElems * 2, cudaMemcpyDeviceToHost)); CK(cudaMemcpy(c.data(), y2, kElems * 2, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(ma.data(), m[0], kRows * 4, cudaMemcpyDeviceToHost)); CK(cudaMemcpy(mc.data(), m2, kRows * 4, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(ra.data(), r[0], kRows * 4, cudaMemcpyDeviceToHost)); CK(cudaMemcpy(rc.data(), r2, kRows * 4, cudaMemcpyDeviceToHost));
    size_t dy = 0, nan = 0;
    for (size_t i = 0; i < kElems; ++i) dy += a[i] != c[i], nan += (c[i] & 0x7c00) == 0x7c00;
    const int dm = std::memcmp(ma.data(), mc.data(), kRows * 4), dr = std::memcmp(ra.data(), rc.data(), kRows * 4);
    printf("check %d: y differs in %zu of %zu elements (%zu non-finite in async), mean %s, rstd %s\n", rep, dy, kElems, nan,
           dm ? "differs" : "equal", dr ? "differs" : "equal");
  }
  for (int i = 0; i < sets; ++i) init<<<1024, 256>>>(x[i], w[i], b[i], 17 + i);
  void *a, *c;
  CK(cudaMalloc(&a, 1ull << 30)); CK(cudaMalloc(&c, 1ull << 30));
  const double copy_us = timed([&](int) { cudaMemcpyAsync(c, a, 1ull << 30, cudaMemcpyDeviceToDevice, 0); }, 1);
  const double copy_gbps = 2.0 * (1ull << 30) / (copy_us * 1e3);
  const double bytes = 4.0 * kElems + 8.0 * kH + 8.0 * kRows;
  printf("copy %.1f GB/s\n", copy_gbps);
  for (int round = 0; round < 4; ++round) {
    struct V { const char* name; std::function<void(int)> f; } vs[] = {
        {"orig (cluster barriers)", [&](int i) { launch_orig(x[i], w[i], b[i], y[i], m[i], r[i], 0); }},
        {"async (st.async moments)", [&](int i) { launch_async(x[i], w[i], b[i], y[i], m[i], r[i], 0); }},
    };
    for (int k = 0; k < 2; ++k) {
      auto& v = vs[(k + round) % 2];
      const double us = timed(v.f, sets);
      printf("round %d  %-26s %8.2f us  %5.1f %%\n", round, v.name, us, 100.0 * bytes / (us * 1e3) / copy_gbps);
    }
  }
  CK(cudaGetLastError()); CK(cudaDeviceSynchronize());
  return 0;
}
