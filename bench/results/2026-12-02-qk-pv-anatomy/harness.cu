// Micro-benchmark of one generated band_qk or band_pv kernel (KERNEL_SRC, FAMILY_QK or FAMILY_PV)
// on the seed problem, timed as `bandjit bench` times (queued launches between events, median),
// four input sets rotated; checks 7 rows x 3 heads against a float64 reference.
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <algorithm>
#include <cmath>
#include <string>
#include <cuda_runtime.h>
#include KERNEL_SRC

#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e)); exit(1);} } while (0)

__global__ void fill(__half* p, size_t n, unsigned seed, float amp) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    unsigned h = (unsigned)i * 2654435761u ^ seed; h ^= h >> 13; h *= 0x5bd1e995u; h ^= h >> 15;
    p[i] = __float2half(((h & 0xffff) / 65536.f - 0.5f) * amp);
  }
}

#ifdef FAMILY_QK
#define KERNEL bandjit_band_qk
#define TRACE bandjit::qkx_trace
#else
#define KERNEL bandjit_band_pv
#define TRACE bandjit::pvx_trace
#endif

int main(int argc, char** argv) {
  const int runs = argc > 1 ? atoi(argv[1]) : 50;
  constexpr int H = Cfg::kHeads, C = Cfg::kDiagonals, DH = Cfg::kHeadDim, N = Cfg::kSeqLen, WL = Cfg::kWindowLeft;
  const size_t rows = size_t(Cfg::kBatch) * N * H;
  const size_t nb = rows * C, nd = rows * DH;
  const int SETS = 4;
  // qk: a = Q, b = K (nd each), out = S (nb). pv: a = P (nb), b = V (nd), out = O (nd).
#ifdef FAMILY_QK
  const size_t na = nd, nbb = nd, no = nb;
#ifdef QKX_DIRECT
  const int grid = H * ((N + 127) / 128), threads = 256;
#else
  const int grid = H * ((N + 63) / 64), threads = 128;
#endif
#if defined(QKX_DIRECT)
  const unsigned smem = Cfg::kWgmmaSharedBytes;
#elif defined(QKX_SLOTS)
  const unsigned smem = bandjit::QkSlotsSmem<Cfg>::kBytes;
#else
  const unsigned smem = Cfg::kWgmmaSharedBytes;
#endif
#else
  const size_t na = nb, nbb = nd, no = nd;
  const int grid = H * ((N + 63) / 64), threads = 128;
  const unsigned smem = Cfg::kWgmmaSharedBytes;
#endif
  std::vector<__half*> A(SETS), B(SETS), O(SETS);
  for (int s = 0; s < SETS; ++s) {
    CK(cudaMalloc(&A[s], na * 2 + 64)); CK(cudaMalloc(&B[s], nbb * 2 + 64)); CK(cudaMalloc(&O[s], no * 2 + 64));
    fill<<<1024, 256>>>(A[s], na, 17 + s, 1.f); fill<<<1024, 256>>>(B[s], nbb, 91 + s, 1.f);
    CK(cudaMemset(O[s], 0xff, no * 2));  // NaN poison
  }
  CK(cudaFuncSetAttribute(KERNEL, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
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
  const double bytes = (na + nbb + no) * 2.0;
  const float tk = time([&](int s) { KERNEL<<<dim3(grid, 1, Cfg::kBatch), threads, smem>>>(A[s], B[s], O[s]); });
  printf("%-28s %8.2f us  %7.0f GB/s  %5.1f %% of 4229\n", VARIANT, tk, bytes / tk / 1e3, 100.0 * bytes / tk / 1e3 / 4229);
  {
    CK(cudaMemset(O[0], 0xff, no * 2));
    KERNEL<<<dim3(grid, 1, Cfg::kBatch), threads, smem>>>(A[0], B[0], O[0]);
    CK(cudaDeviceSynchronize());
    std::vector<__half> ha(na), hb(nbb), ho(no);
    CK(cudaMemcpy(ha.data(), A[0], na * 2, cudaMemcpyDeviceToHost)); CK(cudaMemcpy(hb.data(), B[0], nbb * 2, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(ho.data(), O[0], no * 2, cudaMemcpyDeviceToHost));
    double worst = 0; long bad = 0;
    for (int i : {0, 5, 63, 64, 300, 1000, 2047, 4000, 4095}) for (int h : {0, 7, 11}) {
#ifdef FAMILY_QK
      for (int j = 0; j < C; ++j) {
        const int u = i + j - WL;
        const double got = __half2float(ho[(size_t(i) * H + h) * C + j]);
        if (u < 0 || u >= N) { if (!(std::isinf(got) && got < 0)) ++bad; continue; }
        double ref = 0;
        for (int k = 0; k < DH; ++k) ref += (double)__half2float(ha[(size_t(i) * H + h) * DH + k]) * __half2float(hb[(size_t(u) * H + h) * DH + k]);
        const double e = std::abs(got - ref) / (std::abs(ref) + 1.0);
        if (!(e <= 1e-2)) ++bad;
        worst = std::max(worst, std::isnan(e) ? 1e9 : e);
      }
#else
      for (int k = 0; k < DH; ++k) {
        double ref = 0;
        for (int j = 0; j < C; ++j) { const int u = i + j - WL; if (u < 0 || u >= N) continue;
          ref += (double)__half2float(ha[(size_t(i) * H + h) * C + j]) * __half2float(hb[(size_t(u) * H + h) * DH + k]); }
        const double got = __half2float(ho[(size_t(i) * H + h) * DH + k]);
        const double e = std::abs(got - ref) / (std::abs(ref) + 1.0);
        if (!(e <= 1e-2)) ++bad;
        worst = std::max(worst, std::isnan(e) ? 1e9 : e);
      }
#endif
    }
    long nan_count = 0;
    for (size_t x = 0; x < no; ++x) nan_count += std::isnan(__half2float(ho[x]));
    printf("%-28s worst rel err %.3g  bad %ld  NaN left %ld of %zu\n", VARIANT, worst, bad, nan_count, no);
  }
#if defined(QKX_TRACE) || defined(PVX_TRACE)
  {
    std::vector<unsigned long long> tr(8192 * 4);
    KERNEL<<<dim3(grid, 1, Cfg::kBatch), threads, smem>>>(A[1], B[1], O[1]);
    CK(cudaDeviceSynchronize());
    CK(cudaMemcpyFromSymbol(tr.data(), TRACE, tr.size() * 8));
    unsigned long long t0 = ~0ull; for (int b = 0; b < grid; ++b) t0 = std::min(t0, tr[b * 4]);
    std::string fn = std::string(getenv("OUT") ? getenv("OUT") : ".") + "/trace-" + VARIANT + ".txt"; FILE* f = fopen(fn.c_str(), "w");
    for (int b = 0; b < grid; ++b) fprintf(f, "%d %lld %lld %lld\n", b, (long long)(tr[b * 4] - t0), (long long)(tr[b * 4 + 1] - t0), (long long)(tr[b * 4 + 2] - t0));
    fclose(f);
  }
#endif
  return 0;
}
