// Does the ragged-end handling set band_qk's write floor? S = [1, 4096, 12, 513] f16 (50.4 MB).
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <algorithm>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e)); exit(1);} } while (0)
constexpr int H = 12, N = 4096, C = 513;
constexpr size_t kElems = size_t(N) * H * C;

__global__ void flat(uint4* s, size_t n16) {
  const uint4 v = make_uint4(0x3c003c00u, 0x3c003c00u, 0x3c003c00u, 0x3c003c00u);
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n16; i += size_t(gridDim.x) * blockDim.x) s[i] = v;
}
// Elements [lo, hi) of the aligned 8-element piece at p, in at most three aligned stores.
__device__ __forceinline__ void store_range(__half* p, int lo, int hi) {
  int o = lo;
  if ((o & 1) && o < hi) { p[o] = __float2half(1.f); ++o; }
  if ((o & 2) && o + 2 <= hi) { *reinterpret_cast<unsigned*>(p + o) = 0x3c003c00u; o += 2; }
  if (o + 4 <= hi) { *reinterpret_cast<uint2*>(p + o) = make_uint2(0x3c003c00u, 0x3c003c00u); o += 4; }
  if (o + 2 <= hi) { *reinterpret_cast<unsigned*>(p + o) = 0x3c003c00u; o += 2; }
  if (o < hi) { p[o] = __float2half(1.f); }
}
// MODE 0: element-by-element ends (HEAD); 1: ends in <= 3 aligned stores; 2: no ends (floor);
// 3: whole 16-byte end pieces (overwrites the neighbour rows' elements: timing only).
template <int ROWS, int MODE, bool kTileMajor>
__global__ void rows(__half* s) {
  const int h = kTileMajor ? blockIdx.x % H : blockIdx.x / (N / ROWS);
  const int t0 = kTileMajor ? blockIdx.x / H * ROWS : (blockIdx.x % (N / ROWS)) * ROWS;
  const uint4 v = make_uint4(0x3c003c00u, 0x3c003c00u, 0x3c003c00u, 0x3c003c00u);
  constexpr int P = (C + 7) / 8 + 1;
  for (int idx = threadIdx.x; idx < ROWS * P; idx += blockDim.x) {
    const int r = idx / P, p = idx % P;
    const long long st = (long long)((t0 + r) * H + h) * C;
    const int mis = st & 7;
    const long long at = st - mis + 8 * p;
    const int j = 8 * p - mis;
    if (j >= C) continue;
    if (j >= 0 && j + 8 <= C) { *reinterpret_cast<uint4*>(s + at) = v; continue; }
    if (MODE == 0) { for (int c = 0; c < 8; ++c) if (j + c >= 0 && j + c < C) s[at + c] = __float2half(1.f); }
    if (MODE == 1) store_range(s + at, max(0, -j), min(8, C - j));
    if (MODE == 3) *reinterpret_cast<uint4*>(s + at) = v;
  }
}
// All heads of a row group per block: rows (n, 0..H-1) are one contiguous span (the layout's order).
template <int NROWS>
__global__ void rowgroups(__half* s) {
  const long long st = (long long)blockIdx.x * NROWS * H * C;
  const uint4 v = make_uint4(0x3c003c00u, 0x3c003c00u, 0x3c003c00u, 0x3c003c00u);
  const int mis = st & 7;
  constexpr int count = NROWS * H * C;
  for (int p = threadIdx.x; p * 8 - mis < count; p += blockDim.x) {
    const int j = 8 * p - mis;
    if (j >= 0 && j + 8 <= count) *reinterpret_cast<uint4*>(s + st - mis + 8 * p) = v;
    else store_range(s + st - mis + 8 * p, max(0, -j), min(8, count - j));
  }
}

int main() {
  const int SETS = 4, runs = 50;
  std::vector<__half*> S(SETS);
  for (auto& p : S) CK(cudaMalloc(&p, kElems * 2 + 64));
  auto time = [&](const char* name, auto launch) {
    for (int r = 0; r < 400; ++r) launch(r % SETS);
    CK(cudaDeviceSynchronize());
    std::vector<cudaEvent_t> ev(2 * runs); for (auto& e : ev) cudaEventCreate(&e);
    for (int r = 0; r < runs; ++r) { cudaEventRecord(ev[2 * r]); launch(r % SETS); cudaEventRecord(ev[2 * r + 1]); }
    CK(cudaEventSynchronize(ev.back())); CK(cudaGetLastError());
    std::vector<float> t; for (int r = 0; r < runs; ++r) { float ms; cudaEventElapsedTime(&ms, ev[2 * r], ev[2 * r + 1]); t.push_back(ms * 1e3f); }
    std::sort(t.begin(), t.end());
    printf("%-48s %8.2f us  %7.0f GB/s written\n", name, t[runs / 2], kElems * 2.0 / t[runs / 2] / 1e3);
  };
  // correctness of MODE 1 and rowgroups: every element written exactly (poison, then count ones)
  {
    std::vector<__half> hbuf(kElems);
    auto verify = [&](const char* nm, auto launch) {
      CK(cudaMemset(S[0], 0xff, kElems * 2 + 64)); launch(0); CK(cudaDeviceSynchronize());
      CK(cudaMemcpy(hbuf.data(), S[0], kElems * 2, cudaMemcpyDeviceToHost));
      size_t bad = 0; for (size_t i = 0; i < kElems; ++i) bad += __half2float(hbuf[i]) != 1.f;
      unsigned short tail[32]; CK(cudaMemcpy(tail, S[0] + kElems, 64, cudaMemcpyDeviceToHost));
      for (int i = 0; i < 32; ++i) bad += tail[i] != 0xffff;
      printf("verify %-40s %zu wrong\n", nm, bad);
    };
    verify("rows MODE 1", [&](int s) { rows<64, 1, true><<<H * N / 64, 128>>>(S[s]); });
    verify("rows MODE 0", [&](int s) { rows<64, 0, true><<<H * N / 64, 128>>>(S[s]); });
    verify("rowgroups 4", [&](int s) { rowgroups<4><<<N / 4, 256>>>(S[s]); });
  }
  for (int rep = 0; rep < 2; ++rep) {
    time("cudaMemsetAsync", [&](int s) { cudaMemsetAsync(S[s], 0, kElems * 2); });
    time("flat 16-byte stores, 2112 x 512", [&](int s) { flat<<<2112, 512>>>((uint4*)S[s], kElems * 2 / 16); });
    time("rows 64, tile-major, ends by element (HEAD)", [&](int s) { rows<64, 0, true><<<H * N / 64, 128>>>(S[s]); });
    time("rows 64, tile-major, ends in <=3 stores", [&](int s) { rows<64, 1, true><<<H * N / 64, 128>>>(S[s]); });
    time("rows 64, tile-major, no ends (floor)", [&](int s) { rows<64, 2, true><<<H * N / 64, 128>>>(S[s]); });
    time("rows 64, tile-major, whole end pieces", [&](int s) { rows<64, 3, true><<<H * N / 64, 128>>>(S[s]); });
    time("rows 64, head-major, ends in <=3 stores", [&](int s) { rows<64, 1, false><<<H * N / 64, 128>>>(S[s]); });
    time("rows 64, head-major, whole end pieces", [&](int s) { rows<64, 3, false><<<H * N / 64, 128>>>(S[s]); });
    time("rowgroups of 4 rows x 12 heads", [&](int s) { rowgroups<4><<<N / 4, 256>>>(S[s]); });
    time("rowgroups of 16 rows x 12 heads", [&](int s) { rowgroups<16><<<N / 16, 512>>>(S[s]); });
  }
  return 0;
}
