// Write floor of band_qk's output on the seed problem: S = [1, 4096, 12, 513] float16 (50.4 MB).
// Each kernel only writes (constant data); timed like bandjit bench (queued, median of 50).
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <algorithm>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e)); exit(1);} } while (0)
constexpr int H = 12, N = 4096, C = 513;
constexpr size_t kElems = size_t(N) * H * C;

// Flat: the whole tensor as 16-byte stores, grid-stride.
__global__ void flat(uint4* s, size_t n16) {
  const uint4 v = make_uint4(0x3c003c00u, 0x3c003c00u, 0x3c003c00u, 0x3c003c00u);
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n16; i += size_t(gridDim.x) * blockDim.x) s[i] = v;
}
// Rows as band_qk's blocks own them: block = (head, 64-row tile); the 64 rows of one head are
// H·C elements apart. 16-byte stores of each row's aligned middle, element stores at its ends.
template <int ROWS, bool kTileMajor = false>
__global__ void rows(__half* s) {
  const int h = kTileMajor ? blockIdx.x % H : blockIdx.x / (N / ROWS);
  const int t0 = kTileMajor ? blockIdx.x / H * ROWS : (blockIdx.x % (N / ROWS)) * ROWS;
  const uint4 v = make_uint4(0x3c003c00u, 0x3c003c00u, 0x3c003c00u, 0x3c003c00u);
  constexpr int P = (C + 7) / 8 + 1;  // pieces covering a row at any phase
  for (int idx = threadIdx.x; idx < ROWS * P; idx += blockDim.x) {
    const int r = idx / P, p = idx % P;
    const long long st = (long long)((t0 + r) * H + h) * C;
    const int mis = st & 7;
    const long long at = st - mis + 8 * p;
    const int j = 8 * p - mis;
    if (j >= 0 && j + 8 <= C) *reinterpret_cast<uint4*>(s + at) = v;
    else for (int c = 0; c < 8; ++c) if (j + c >= 0 && j + c < C) s[at + c] = __float2half(1.f);
  }
}
// Reads the same rows (16-byte loads, a checksum kept live): the read side of band_pv's P.
template <bool kTileMajor>
__global__ void rows_read(const __half* s, unsigned* sink) {
  const int h = kTileMajor ? blockIdx.x % H : blockIdx.x / (N / 64);
  const int t0 = kTileMajor ? blockIdx.x / H * 64 : (blockIdx.x % (N / 64)) * 64;
  constexpr int P = (C + 7) / 8 + 1;
  unsigned acc = 0;
  for (int idx = threadIdx.x; idx < 64 * P; idx += blockDim.x) {
    const int r = idx / P, p = idx % P;
    const long long st = (long long)((t0 + r) * H + h) * C;
    const long long at = st - (st & 7) + 8 * p;
    if (at + 8 <= (long long)kElems) { const uint4 v = *reinterpret_cast<const uint4*>(s + at); acc ^= v.x ^ v.y ^ v.z ^ v.w; }
  }
  if (acc == 0x12345678u) sink[0] = acc;
}
// The same rows from shared memory through one bulk copy per row (band_qk's write_band_rows).
template <bool kTileMajor = false>
__global__ void rows_bulk(__half* s) {
  extern __shared__ __align__(16) __half tile[];  // 64 × 520
  const int h = kTileMajor ? blockIdx.x % H : blockIdx.x / (N / 64);
  const int t0 = kTileMajor ? blockIdx.x / H * 64 : (blockIdx.x % (N / 64)) * 64;
  for (int i = threadIdx.x; i < 64 * 520 / 8; i += blockDim.x) reinterpret_cast<uint4*>(tile)[i] = make_uint4(0x3c003c00u, 0x3c003c00u, 0x3c003c00u, 0x3c003c00u);
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
  __syncthreads();
  const int r = threadIdx.x / 2, sub = threadIdx.x % 2;
  const long long st = (long long)((t0 + r) * H + h) * C;
  const int mis = st & 7, a = (8 - mis) % 8, e = a + (C - a) / 8 * 8;
  const __half* src = tile + r * 520 + mis;
  if (sub == 0) {
    const unsigned sa = static_cast<unsigned>(__cvta_generic_to_shared(src + a));
    asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;\n" ::"l"(s + st + a), "r"(sa), "r"((e - a) * 2) : "memory");
  }
  for (int x = sub; x < a + C - e; x += 2) { const int j = x < a ? x : e + (x - a); s[st + j] = src[j]; }
  asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
  asm volatile("cp.async.bulk.wait_group.read 0;\n" ::: "memory");
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
    printf("%-36s %8.2f us  %7.0f GB/s written\n", name, t[runs / 2], kElems * 2.0 / t[runs / 2] / 1e3);
  };
  time("cudaMemsetAsync 50.4 MB", [&](int s) { cudaMemsetAsync(S[s], 0, kElems * 2); });
  for (int g : {132 * 4, 132 * 8, 132 * 16}) {
    char nm[64]; snprintf(nm, 64, "flat 16-byte stores, %d x 512", g);
    time(nm, [&](int s) { flat<<<g, 512>>>((uint4*)S[s], kElems * 2 / 16); });
  }
  time("rows 64/block, 128 threads", [&](int s) { rows<64><<<H * N / 64, 128>>>(S[s]); });
  time("rows 64/block, 128 threads, tile-major", [&](int s) { rows<64, true><<<H * N / 64, 128>>>(S[s]); });
  time("rows 128/block, 512 thr, tile-major", [&](int s) { rows<128, true><<<H * N / 128, 512>>>(S[s]); });
  unsigned* sink; CK(cudaMalloc(&sink, 4));
  time("READ rows 64/block, head-major", [&](int s) { rows_read<false><<<H * N / 64, 256>>>(S[s], sink); });
  time("READ rows 64/block, tile-major", [&](int s) { rows_read<true><<<H * N / 64, 256>>>(S[s], sink); });
  time("rows 64/block, 256 threads", [&](int s) { rows<64><<<H * N / 64, 256>>>(S[s]); });
  time("rows 16/block, 128 threads", [&](int s) { rows<16><<<H * N / 16, 128>>>(S[s]); });
  time("rows 128/block, 512 threads", [&](int s) { rows<128><<<H * N / 128, 512>>>(S[s]); });
  CK(cudaFuncSetAttribute(rows_bulk<false>, cudaFuncAttributeMaxDynamicSharedMemorySize, 64 * 520 * 2));
  time("rows 64/block, bulk copy per row", [&](int s) { rows_bulk<false><<<H * N / 64, 128, 64 * 520 * 2>>>(S[s]); });
  CK(cudaFuncSetAttribute(rows_bulk<false>, cudaFuncAttributeMaxDynamicSharedMemorySize, 109056));
  CK(cudaFuncSetAttribute(rows_bulk<true>, cudaFuncAttributeMaxDynamicSharedMemorySize, 109056));
  time("... with band_qk's 109 KB (2/SM)", [&](int s) { rows_bulk<false><<<H * N / 64, 128, 109056>>>(S[s]); });
  time("... 109 KB, tile-major", [&](int s) { rows_bulk<true><<<H * N / 64, 128, 109056>>>(S[s]); });
  return 0;
}
