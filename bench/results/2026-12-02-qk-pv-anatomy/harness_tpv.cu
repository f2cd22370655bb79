// Micro-benchmark of one generated band_tpv kernel (KERNEL_SRC) on the seed problem, plus a
// pure streaming kernel moving the same bytes. Not part of the project: experiments only.
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <algorithm>
#include <cmath>
#include <string>
#include <cuda_runtime.h>
#include KERNEL_SRC

#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e)); exit(1);} } while (0)

__global__ void fill(__half* p, size_t n, unsigned seed) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    unsigned h = (unsigned)i * 2654435761u ^ seed; h ^= h >> 13; h *= 0x5bd1e995u; h ^= h >> 15;
    p[i] = __float2half(((h & 0xffff) / 65536.f - 0.5f) * 0.1f);
  }
}
// Reads x and y once, writes z once (the kernel's compulsory traffic), 16-byte vectors.
__global__ void stream(const uint4* __restrict__ x, size_t nx, const uint4* __restrict__ y, size_t ny, uint4* __restrict__ z, size_t nz) {
  unsigned acc = 0;
  const size_t stride = size_t(gridDim.x) * blockDim.x, t = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
#pragma unroll 4
  for (size_t i = t; i < nx; i += stride) { uint4 v = x[i]; acc ^= v.x ^ v.y ^ v.z ^ v.w; }
  for (size_t i = t; i < ny; i += stride) { uint4 v = y[i]; acc ^= v.x ^ v.y ^ v.z ^ v.w; }
  for (size_t i = t; i < nz; i += stride) z[i] = make_uint4(acc, acc, acc, acc);
}

int main(int argc, char** argv) {
  const int runs = argc > 1 ? atoi(argv[1]) : 50;
  const int grid = argc > 2 ? atoi(argv[2]) : 384;
  const unsigned smem = argc > 3 ? atoi(argv[3]) : Cfg::kWgmmaSharedBytes + 0;
  const size_t rows = size_t(Cfg::kBatch) * Cfg::kSeqLen * Cfg::kHeads;
  const size_t nx = rows * Cfg::kDiagonals, ny = rows * Cfg::kHeadDim;
  const int SETS = 4;
  std::vector<__half*> X(SETS), Y(SETS), Z(SETS);
  for (int s = 0; s < SETS; ++s) {
    CK(cudaMalloc(&X[s], nx * 2 + 64)); CK(cudaMalloc(&Y[s], ny * 2)); CK(cudaMalloc(&Z[s], ny * 2));
    fill<<<1024, 256>>>(X[s], nx, 17 + s); fill<<<1024, 256>>>(Y[s], ny, 91 + s);
  }
  CK(cudaFuncSetAttribute(bandjit_band_tpv, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
  auto time = [&](auto launch) {
    std::vector<float> t;
    for (int r = 0; r < 400; ++r) launch(r % SETS);
    CK(cudaDeviceSynchronize());
    std::vector<cudaEvent_t> ev(2 * runs); for (auto& e : ev) cudaEventCreate(&e);
    for (int r = 0; r < runs; ++r) { cudaEventRecord(ev[2 * r]); launch(r % SETS); cudaEventRecord(ev[2 * r + 1]); }
    CK(cudaEventSynchronize(ev.back()));
    for (int r = 0; r < runs; ++r) { float ms; cudaEventElapsedTime(&ms, ev[2 * r], ev[2 * r + 1]); t.push_back(ms * 1e3f); }
    CK(cudaGetLastError());
    std::sort(t.begin(), t.end()); return t[t.size() / 2];
  };
  const double bytes = (nx + 2 * ny) * 2.0;
  float tk = time([&](int s) { bandjit_band_tpv<<<dim3(grid, 1, Cfg::kBatch), Cfg::kThreads, smem>>>(X[s], Y[s], Z[s]); });
  printf("%-28s %8.2f us  %7.0f GB/s\n", VARIANT, tk, bytes / tk / 1e3);
  // checksum of z to compare variants' results
  std::vector<__half> hz(ny); CK(cudaMemcpy(hz.data(), Z[0], ny * 2, cudaMemcpyDeviceToHost));
  double cs = 0; for (size_t i = 0; i < ny; i += 7) cs += __half2float(hz[i]) * ((i % 13) - 6);
  printf("%-28s checksum %.6f\n", VARIANT, cs);
  {
    std::vector<__half> hx(nx), hy(ny); CK(cudaMemcpy(hx.data(), X[0], nx * 2, cudaMemcpyDeviceToHost)); CK(cudaMemcpy(hy.data(), Y[0], ny * 2, cudaMemcpyDeviceToHost));
    const int H = Cfg::kHeads, C = Cfg::kDiagonals, D = Cfg::kHeadDim, N = Cfg::kSeqLen, WL = Cfg::kWindowLeft, WR = Cfg::kWindowRight;
    double worst = 0;
    for (int i : {0, 5, 300, 1000, 2047, 4000, 4095}) for (int h : {0, 7, 11}) for (int k = 0; k < D; ++k) {
      double ref = 0;
      for (int j = 0; j < C; ++j) { int s2 = i + (j - WR); if (s2 < 0 || s2 >= N) continue;
        ref += (double)__half2float(hx[(size_t(s2) * H + h) * C + (C - 1 - j)]) * __half2float(hy[(size_t(s2) * H + h) * D + k]); }
      double got = __half2float(hz[(size_t(i) * H + h) * D + k]);
      worst = std::max(worst, std::abs(got - ref) / (std::abs(ref) + 1e-2));
    }
    printf("%-28s worst rel err %.3g\n", VARIANT, worst);
  }
#if 0
  {
    std::vector<unsigned long long> tr(4096 * 32);
    bandjit_band_tpv<<<dim3(grid, 1, Cfg::kBatch), Cfg::kThreads, smem>>>(X[1], Y[1], Z[1]);
    CK(cudaDeviceSynchronize());
    CK(cudaMemcpyFromSymbol(tr.data(), tpvx_trace, tr.size() * 8));
    unsigned long long t0 = ~0ull; for (int b = 0; b < grid; ++b) t0 = std::min(t0, tr[b * 32]);
    std::string fn = std::string(getenv("OUT") ? getenv("OUT") : ".") + "/trace-" + VARIANT + ".txt"; FILE* f = fopen(fn.c_str(), "w");
    for (int b = 0; b < grid; ++b) { fprintf(f, "%d %llu", b, tr[b * 32 + 31]); for (int k = 0; k < 31; ++k) fprintf(f, " %lld", tr[b*32+k] ? (long long)(tr[b * 32 + k] - t0) : -1ll); fprintf(f, "\n"); }
    fclose(f);
  }
#endif
  if (argc > 4) {
    for (int g : {132 * 4, 132 * 8, 132 * 16}) {
      float ts = time([&](int s) { stream<<<g, 512>>>((const uint4*)X[s], nx * 2 / 16, (const uint4*)Y[s], ny * 2 / 16, (uint4*)Z[s], ny * 2 / 16); });
      printf("stream grid %-16d %8.2f us  %7.0f GB/s\n", g, ts, bytes / ts / 1e3);
    }
    float tc = time([&](int s) { cudaMemcpyAsync(X[(s + 1) % SETS], X[s], (nx + 2 * ny) / 2 * 2, cudaMemcpyDeviceToDevice); });
    printf("memcpy same bytes            %8.2f us  %7.0f GB/s\n", tc, bytes / tc / 1e3);
    size_t big = size_t(1) << 29; void *p, *q; CK(cudaMalloc(&p, big)); CK(cudaMalloc(&q, big));
    float tb = time([&](int) { cudaMemcpyAsync(q, p, big, cudaMemcpyDeviceToDevice); });
    printf("memcpy 512 MiB               %8.2f us  %7.0f GB/s\n", tb, 2.0 * big / tb / 1e3);
  }
  return 0;
}
