// Prototype: the 16-bit layer_norm forward at H = 65536 (1024 rows, float32 weight and bias)
// with the row split over the whole GPU: G = 128 persistent blocks (one an SM), block g owns
// columns [512 g, 512 g + 512) of every row, so its weight and bias stay in registers and are
// read once. Rows go in batches of R: each block publishes its slice's (mean, M2) for the
// batch, all blocks meet at a grid-wide counter, and each combines the G partials of its
// rows (Chan et al.) before normalising. x comes in by bulk copies into S shared stages so
// the next batches load while a batch waits at the counter. Timed as bandjit bench.
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <vector>
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e)); return 1; } } while (0)
constexpr int kRows = 1024, kH = 65536, kG = 128, kSlice = kH / kG;
constexpr float kEps = 1e-5f;

__device__ __forceinline__ unsigned saddr(const void* p) { return static_cast<unsigned>(__cvta_generic_to_shared(p)); }
__device__ __forceinline__ void bar_init(unsigned long long* b, unsigned n) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(saddr(b)), "r"(n) : "memory");
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}
__device__ __forceinline__ void bar_expect(unsigned long long* b, unsigned bytes) {
  asm volatile("{\n .reg .b64 st;\n mbarrier.arrive.expect_tx.shared::cta.b64 st, [%0], %1;\n}\n" ::"r"(saddr(b)), "r"(bytes) : "memory");
}
__device__ __forceinline__ void bar_wait(unsigned long long* b, unsigned parity) {
  asm volatile("{\n .reg .pred d;\nw_%=:\n mbarrier.try_wait.parity.shared::cta.b64 d, [%0], %1;\n @!d bra w_%=;\n}\n" ::"r"(saddr(b)), "r"(parity) : "memory");
}
__device__ __forceinline__ void bulk(void* dst, const void* src, unsigned bytes, unsigned long long* b) {
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(saddr(dst)), "l"(src), "r"(bytes), "r"(saddr(b)) : "memory");
}
__device__ __forceinline__ unsigned long long ld_acquire(const unsigned long long* p) {
  unsigned long long v;
  asm volatile("ld.acquire.gpu.global.u64 %0, [%1];\n" : "=l"(v) : "l"(p) : "memory");
  return v;
}
__device__ __forceinline__ void red_release(unsigned long long* p, unsigned long long v) {
  asm volatile("red.release.gpu.global.add.u64 [%0], %1;\n" ::"l"(p), "l"(v) : "memory");
}
__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}
__device__ __forceinline__ void unpack(uint4 u, float* f) {
  const __half2* h = reinterpret_cast<const __half2*>(&u);
#pragma unroll
  for (int k = 0; k < 4; ++k) { float2 t = __half22float2(h[k]); f[2 * k] = t.x; f[2 * k + 1] = t.y; }
}
__device__ __forceinline__ uint4 pack(const float* f) {
  uint4 u; __half2* h = reinterpret_cast<__half2*>(&u);
#pragma unroll
  for (int k = 0; k < 4; ++k) h[k] = __floats2half2_rn(f[2 * k], f[2 * k + 1]);
  return u;
}

// R rows a batch, S stages, W warps a block. Lane l holds columns 8l..8l+7 and 256+8l.. of its slice.
// kSkew: batch b+1's partials are published before waiting for batch b's (two counters, by
// parity), so the grid-wide wait overlaps a batch's work. kMode (diagnostics, wrong results):
// bit 0 skips the wait, bit 1 reading the other blocks' partials, bit 2 the arrival,
// bit 3 makes the arrival relaxed (no fence), bit 4 skips the stores of y.
// kLoad: 0 one thread issues the batch's bulk copies, 1 every thread copies 16 bytes by
// cp.async, 2 thread r issues row r's bulk copy.
// P blocks share a slice, taking its batches in turn (block p of slice g: batches p, p + P, …),
// so P chains of a batch's waits run at once on an SM.
template <int R, int S, int W, bool kStoreCS, bool kReread, bool kSkew = false, int kMode = 0, int kLoad = 0, int P = 1>
__global__ void __launch_bounds__(W * 32, P)
grid_ln(const __half* __restrict__ x, const float* __restrict__ w, const float* __restrict__ bias, __half* __restrict__ y,
        float* __restrict__ mean_out, float* __restrict__ rstd_out, float2* __restrict__ ws, unsigned long long* counter) {
  constexpr int NB = kRows / R / P, RPW = R / W;  // NB: this block's batches
  static_assert(R % W == 0 && kRows % (R * P) == 0 && NB % 2 == 0 && (!kSkew || S >= 2), "");
  constexpr unsigned long long kPerLaunch = (unsigned long long)kG * NB / 2;  // each counter's growth a launch
  extern __shared__ __align__(128) unsigned char smem[];
  __half* stage = reinterpret_cast<__half*>(smem);
  unsigned long long* full = reinterpret_cast<unsigned long long*>(smem + size_t(S) * R * kSlice * 2);
  __shared__ unsigned long long base_s[2];
  const int g = blockIdx.x % kG, part = blockIdx.x / kG, lane = threadIdx.x & 31, warp = threadIdx.x >> 5, col0 = g * kSlice;
  auto issue = [&](int batch, int s) {  // kLoad 0: thread 0 only; 1 and 2: every thread
    if (kLoad == 0) {
      bar_expect(&full[s], R * kSlice * 2);
      for (int r = 0; r < R; ++r)
        bulk(stage + (size_t(s) * R + r) * kSlice, x + (size_t(part + P * batch) * R + r) * kH + col0, kSlice * 2, &full[s]);
    } else if (kLoad == 2) {
      if (threadIdx.x == 0) bar_expect(&full[s], R * kSlice * 2);
      for (int r = threadIdx.x; r < R; r += W * 32)
        bulk(stage + (size_t(s) * R + r) * kSlice, x + (size_t(part + P * batch) * R + r) * kH + col0, kSlice * 2, &full[s]);
    } else {
      if (batch < NB)
        for (int k = threadIdx.x; k < R * kSlice / 8; k += W * 32) {
          const int r = k / (kSlice / 8), c = k % (kSlice / 8) * 8;
          asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(saddr(stage + (size_t(s) * R + r) * kSlice + c)),
                       "l"(x + (size_t(part + P * batch) * R + r) * kH + col0 + c) : "memory");
        }
      asm volatile("cp.async.commit_group;\n" ::: "memory");
    }
  };
  if (threadIdx.x == 0) {
    for (int s = 0; s < S; ++s) bar_init(&full[s], 1);
    // Each counter only grows, kPerLaunch a launch: this launch's base is the multiple at or below it.
    for (int k = 0; k < 2; ++k) {
      const unsigned long long c0 = ld_acquire(counter + 16 * (part + P * k));
      base_s[k] = c0 - c0 % kPerLaunch;
    }
  }
  __syncthreads();
  if (threadIdx.x == 0 || kLoad != 0)
    for (int s = 0; s < S; ++s) issue(s, s);
  float wr[16], br[16];
#pragma unroll
  for (int h = 0; h < 2; ++h)
#pragma unroll
    for (int k = 0; k < 2; ++k) {
      const float4 a = *reinterpret_cast<const float4*>(w + col0 + 256 * h + 8 * lane + 4 * k);
      const float4 c = *reinterpret_cast<const float4*>(bias + col0 + 256 * h + 8 * lane + 4 * k);
      wr[8 * h + 4 * k] = a.x, wr[8 * h + 4 * k + 1] = a.y, wr[8 * h + 4 * k + 2] = a.z, wr[8 * h + 4 * k + 3] = a.w;
      br[8 * h + 4 * k] = c.x, br[8 * h + 4 * k + 1] = c.y, br[8 * h + 4 * k + 2] = c.z, br[8 * h + 4 * k + 3] = c.w;
    }
  auto row_ptr = [&](int b, int ri) { return stage + (size_t(b % S) * R + ri) * kSlice; };
  auto publish = [&](int b) {  // this slice's (mean, M2) of batch b's rows, then one arrival
    if (kLoad == 1) {
      if (kSkew) asm volatile("cp.async.wait_group %0;\n" ::"n"(S - 2) : "memory");
      else asm volatile("cp.async.wait_group %0;\n" ::"n"(S - 1) : "memory");
      __syncthreads();
    } else {
      bar_wait(&full[b % S], (b / S) & 1);
    }
#pragma unroll
    for (int i = 0; i < RPW; ++i) {
      const int ri = warp + i * W;
      float f[16];
      unpack(*reinterpret_cast<const uint4*>(row_ptr(b, ri) + 8 * lane), f);
      unpack(*reinterpret_cast<const uint4*>(row_ptr(b, ri) + 256 + 8 * lane), f + 8);
      float sum = 0.f;
#pragma unroll
      for (int k = 0; k < 16; ++k) sum += f[k];
      const float m = warp_sum(sum) * (1.f / kSlice);
      float q = 0.f;
#pragma unroll
      for (int k = 0; k < 16; ++k) q += (f[k] - m) * (f[k] - m);
      q = warp_sum(q);
      if (lane == 0) __stcg(&ws[(size_t(part + P * b) * R + ri) * kG + g], make_float2(m, q));
    }
    __syncthreads();
    if (threadIdx.x == 0 && !(kMode & 4)) {
      if (kMode & 8) asm volatile("red.relaxed.gpu.global.add.u64 [%0], 1;\n" ::"l"(counter + 16 * (part + P * (b & 1))) : "memory");
      else red_release(counter + 16 * (part + P * (b & 1)), 1);
    }
  };
  auto finish = [&](int b) {  // wait for every block's batch-b partials, normalise, store
    if (threadIdx.x == 0 && !(kMode & 1)) {
      const unsigned long long target = base_s[b & 1] + (unsigned long long)kG * (b / 2 + 1);
      while (ld_acquire(counter + 16 * (part + P * (b & 1))) < target) {}
    }
    __syncthreads();
    float4 p[RPW][2];
#pragma unroll
    for (int i = 0; i < RPW; ++i) {
      const int ri = warp + i * W;
      const float4* src = reinterpret_cast<const float4*>(ws + (size_t(part + P * b) * R + ri) * kG + (kMode & 2 ? 4 * g : 4 * lane));
      p[i][0] = __ldcg(src), p[i][1] = __ldcg(src + 1);
    }
#pragma unroll
    for (int i = 0; i < RPW; ++i) {
      const int ri = warp + i * W;
      const float4 p0 = p[i][0], p1 = p[i][1];
      const float mean = warp_sum(p0.x + p0.z + p1.x + p1.z) * (1.f / kG);
      const float d0 = p0.x - mean, d1 = p0.z - mean, d2 = p1.x - mean, d3 = p1.z - mean;
      const float m2 = warp_sum(p0.y + p0.w + p1.y + p1.w + float(kSlice) * (d0 * d0 + d1 * d1 + d2 * d2 + d3 * d3));
      const float rstd = rsqrtf(m2 * (1.f / kH) + kEps);
      const size_t row = size_t(part + P * b) * R + ri;
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        float f[8];
        unpack(*reinterpret_cast<const uint4*>(row_ptr(b, ri) + 256 * h + 8 * lane), f);
#pragma unroll
        for (int k = 0; k < 8; ++k) f[k] = (f[k] - mean) * rstd * wr[8 * h + k] + br[8 * h + k];
        uint4* dst = reinterpret_cast<uint4*>(y + row * kH + col0 + 256 * h + 8 * lane);
        if (kMode & 16) { if (f[0] == 12345.f) *dst = pack(f); } else if (kStoreCS) __stcs(dst, pack(f)); else *dst = pack(f);
      }
      if (g == 0 && lane == 0) mean_out[row] = mean, rstd_out[row] = rstd;
    }
    __syncthreads();
    if (kLoad == 1) {
      issue(b + S, b % S);  // an empty group past the last batch keeps the counts uniform
    } else if ((threadIdx.x == 0 || kLoad == 2) && b + S < NB) {
      asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
      issue(b + S, b % S);
    }
  };
  if (kSkew) {
    publish(0);
    for (int b = 0; b < NB; ++b) {
      if (b + 1 < NB) publish(b + 1);
      finish(b);
    }
  } else {
    for (int b = 0; b < NB; ++b) publish(b), finish(b);
  }
}

__global__ void init(__half* x, float* w, float* bias, unsigned seed) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < size_t(kRows) * kH; i += size_t(gridDim.x) * blockDim.x) {
    unsigned h = unsigned(i) * 2654435761u ^ seed; h ^= h >> 15; h *= 2246822519u; h ^= h >> 13;
    const float off = float((i / kH) % 7) - 3.f;  // rows with different means
    x[i] = __float2half((h & 0xffff) / 65536.f * 4.f - 2.f + off);
    if (i < kH) w[i] = 0.5f + ((h >> 16) & 0xff) / 256.f, bias[i] = ((h >> 8) & 0xff) / 256.f - 0.5f;
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

struct Variant { const char* name; void (*k)(const __half*, const float*, const float*, __half*, float*, float*, float2*, unsigned long long*); int parts; int threads; size_t smem; };
template <int R, int S, int W, bool SK = false, int M = 0, int L = 0, int P = 1> Variant make(const char* name) {
  return {name, grid_ln<R, S, W, false, true, SK, M, L, P>, P, W * 32, size_t(S) * R * kSlice * 2 + S * 8};
}

int main() {
  setvbuf(stdout, nullptr, _IONBF, 0);
  const int sets = 3;
  const size_t n = size_t(kRows) * kH;
  __half *x[sets], *y[sets];
  float *w[sets], *b[sets], *mean[sets], *rstd[sets];
  float2* ws; unsigned long long* counter;
  for (int i = 0; i < sets; ++i) {
    CK(cudaMalloc(&x[i], n * 2)); CK(cudaMalloc(&y[i], n * 2)); CK(cudaMalloc(&w[i], kH * 4)); CK(cudaMalloc(&b[i], kH * 4));
    CK(cudaMalloc(&mean[i], kRows * 4)); CK(cudaMalloc(&rstd[i], kRows * 4));
    init<<<1024, 256>>>(x[i], w[i], b[i], 77 + i);
  }
  CK(cudaMalloc(&ws, size_t(kRows) * kG * 8)); CK(cudaMalloc(&counter, 4096)); CK(cudaMemset(counter, 0, 4096));
  Variant vs[] = {
      make<64, 3, 16, true>("R64 S3 W16 skew"),
      make<32, 3, 8, true, 0, 0, 2>("R32 S3 W8 skew P2"), make<32, 3, 16, true, 0, 0, 2>("R32 S3 W16 skew P2"),
      make<16, 6, 8, true, 0, 0, 2>("R16 S6 W8 skew P2"), make<32, 2, 8, true, 0, 0, 2>("R32 S2 W8 skew P2"),
      make<32, 3, 4, true, 0, 0, 2>("R32 S3 W4 skew P2"), make<8, 6, 4, true, 0, 0, 4>("R8 S6 W4 skew P4"),
      make<16, 3, 8, true, 0, 0, 4>("R16 S3 W8 skew P4"), make<16, 3, 4, true, 0, 0, 4>("R16 S3 W4 skew P4"),
      make<8, 6, 8, true, 0, 0, 4>("R8 S6 W8 skew P4"),
      make<32, 3, 8, true, 0, 1, 2>("R32 S3 W8 skew P2 cp.async"), make<16, 3, 8, true, 0, 1, 4>("R16 S3 W8 skew P4 cp.async"),
  };
  for (auto& v : vs) CK(cudaFuncSetAttribute(v.k, cudaFuncAttributeMaxDynamicSharedMemorySize, int(v.smem)));
  for (auto& v : vs) { int n = 0; CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, v.k, v.threads, v.smem)); if (n * 132 < kG * v.parts) { printf("%s: only %d blocks an SM\n", v.name, n); return 1; } }
  int sms = 0; CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  printf("SMs %d\n", sms);
  // Correctness: each variant against a float64 reference on 64 sampled rows, y NaN-poisoned first.
  std::vector<__half> hx(n), hy(n); std::vector<float> hw(kH), hb(kH), hm(kRows), hr(kRows);
  CK(cudaMemcpy(hx.data(), x[0], n * 2, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(hw.data(), w[0], kH * 4, cudaMemcpyDeviceToHost)); CK(cudaMemcpy(hb.data(), b[0], kH * 4, cudaMemcpyDeviceToHost));
  for (auto& v : vs) {
    CK(cudaMemset(counter, 0, 4096));  // a variant's counters grow by its own step a launch
    for (int rep = 0; rep < 2; ++rep) {  // twice: the second launch starts from a counter the first left
      CK(cudaMemset(y[0], 0xff, n * 2)); CK(cudaMemset(mean[0], 0xff, kRows * 4)); CK(cudaMemset(rstd[0], 0xff, kRows * 4));
      v.k<<<kG * v.parts, v.threads, v.smem>>>(x[0], w[0], b[0], y[0], mean[0], rstd[0], ws, counter);
      CK(cudaGetLastError()); CK(cudaDeviceSynchronize());
    }
    CK(cudaMemcpy(hy.data(), y[0], n * 2, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(hm.data(), mean[0], kRows * 4, cudaMemcpyDeviceToHost)); CK(cudaMemcpy(hr.data(), rstd[0], kRows * 4, cudaMemcpyDeviceToHost));
    double worst_y = 0, worst_m = 0, worst_r = 0; size_t nan = 0;
    for (size_t i = 0; i < n; ++i) nan += !std::isfinite(__half2float(hy[i]));
    for (int r = 0; r < kRows; r += 16) {
      double s = 0, q = 0;
      for (int c = 0; c < kH; ++c) s += __half2float(hx[size_t(r) * kH + c]);
      const double mu = s / kH;
      for (int c = 0; c < kH; ++c) { const double d = __half2float(hx[size_t(r) * kH + c]) - mu; q += d * d; }
      const double rs = 1.0 / std::sqrt(q / kH + double(kEps));
      worst_m = std::max(worst_m, std::fabs(hm[r] - mu)); worst_r = std::max(worst_r, std::fabs(hr[r] - rs) / rs);
      for (int c = 0; c < kH; ++c) {
        const double ref = (__half2float(hx[size_t(r) * kH + c]) - mu) * rs * hw[c] + hb[c];
        worst_y = std::max(worst_y, std::fabs(__half2float(hy[size_t(r) * kH + c]) - ref) / (1.0 + std::fabs(ref)));
      }
    }
    printf("check %-36s non-finite y %zu, worst |mean err| %.3g, rstd rel %.3g, y err/(1+|y|) %.3g\n", v.name, nan, worst_m, worst_r, worst_y);
  }
  void *a, *c;
  CK(cudaMalloc(&a, 1ull << 30)); CK(cudaMalloc(&c, 1ull << 30));
  const double copy_us = timed([&](int) { cudaMemcpyAsync(c, a, 1ull << 30, cudaMemcpyDeviceToDevice, 0); }, 1);
  const double copy_gbps = 2.0 * (1ull << 30) / (copy_us * 1e3);
  const double bytes = 4.0 * n + 8.0 * kH + 8.0 * kRows;  // x, y, weight, bias, mean, rstd once
  printf("copy %.1f GB/s\n", copy_gbps);
  for (int round = 0; round < 3; ++round)
    for (auto& v : vs) {
      CK(cudaMemset(counter, 0, 4096));
      const double us = timed([&](int i) { v.k<<<kG * v.parts, v.threads, v.smem>>>(x[i], w[i], b[i], y[i], mean[i], rstd[i], ws, counter); }, sets);
      printf("round %d  %-36s %8.2f us  %5.1f %%\n", round, v.name, us, 100.0 * bytes / (us * 1e3) / copy_gbps);
    }
  CK(cudaGetLastError()); CK(cudaDeviceSynchronize());
  return 0;
}
