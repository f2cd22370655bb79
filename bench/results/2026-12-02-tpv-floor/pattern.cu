// Read-bandwidth of access patterns over X of the seed problem (bnhd f16, C = 513): is the
// band window pattern (272-byte windows of 640 rows per block) slower than full rows?
#include <cstdio>
#include <vector>
#include <algorithm>
#include <cuda_runtime.h>
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e)); return 1;} } while (0)
constexpr int H = 12, N = 4096, C = 513, ROWB = C * 2;  // bytes per (u, h) row
constexpr long long RSTRIDE = (long long)H * ROWB;      // bytes between rows u of one head
// Block (h, tile): rows u in [t0 - 256, t0 + 384), window of 17 pieces starting at the 16-byte
// piece holding element 256 + t0 - u of row u (the band window).
template <int UNROLL>
__global__ void band_pattern(const char* __restrict__ x, unsigned* out, int rows_per_block, int pieces) {
  const int h = blockIdx.x / 32, tile = blockIdx.x % 32, t0 = tile * 128;
  const int u0 = max(0, t0 - 256), u1 = min(N, t0 + 384);
  unsigned acc = 0;
  const int total = (u1 - u0) * pieces;
  for (int base = threadIdx.x; base < total; base += blockDim.x * UNROLL) {
    uint4 v[UNROLL];
#pragma unroll
    for (int k = 0; k < UNROLL; ++k) {
      int idx = base + k * blockDim.x;
      if (idx < total) {
        int u = u0 + idx / pieces, p = idx % pieces;
        long long e = (long long)u * RSTRIDE + h * ROWB + 2 * max(0, min(C - 1, 256 + t0 - u));
        e = (e & ~15ll) + 16 * p;
        v[k] = __ldcg(reinterpret_cast<const uint4*>(x + e));
      } else v[k] = make_uint4(0, 0, 0, 0);
    }
#pragma unroll
    for (int k = 0; k < UNROLL; ++k) acc ^= v[k].x ^ v[k].y ^ v[k].z ^ v[k].w;
  }
  if (acc == 0x12345678) out[0] = acc;
}
// Same byte count, 384 blocks, each reading 1/4 of its rows whole (all 1026 bytes).
template <int UNROLL>
__global__ void row_pattern(const char* __restrict__ x, unsigned* out) {
  const int h = blockIdx.x / 32, tile = blockIdx.x % 32;
  const int u0 = tile * 128, u1 = u0 + 128;  // 128 rows × 65 pieces ≈ 640 × 17 × 0.76
  unsigned acc = 0;
  constexpr int pieces = 64;
  const int total = (u1 - u0) * pieces;
  for (int base = threadIdx.x; base < total; base += blockDim.x * UNROLL) {
    uint4 v[UNROLL];
#pragma unroll
    for (int k = 0; k < UNROLL; ++k) {
      int idx = base + k * blockDim.x;
      int u = u0 + idx / pieces, p = idx % pieces;
      long long e = (((long long)u * RSTRIDE + h * ROWB) & ~15ll) + 16 * p;
      v[k] = idx < total ? __ldcg(reinterpret_cast<const uint4*>(x + e)) : make_uint4(0, 0, 0, 0);
    }
#pragma unroll
    for (int k = 0; k < UNROLL; ++k) acc ^= v[k].x ^ v[k].y ^ v[k].z ^ v[k].w;
  }
  if (acc == 0x12345678) out[0] = acc;
}

__device__ __forceinline__ unsigned smem_u32(const void* p) { return static_cast<unsigned>(__cvta_generic_to_shared(p)); }
__device__ __forceinline__ void mbar_init(unsigned long long* b, int n) { asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" :: "r"(smem_u32(b)), "r"(n)); }
__device__ __forceinline__ void mbar_expect_arrive(unsigned long long* b, int bytes) { asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"(smem_u32(b)), "r"(bytes) : "memory"); }
__device__ __forceinline__ void mbar_arrive(unsigned long long* b) { asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" :: "r"(smem_u32(b)) : "memory"); }
__device__ __forceinline__ void mbar_wait(unsigned long long* b, int parity) {
  asm volatile("{\n.reg .pred p;\nW: mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n@!p bra W;\n}" :: "r"(smem_u32(b)), "r"(parity) : "memory");
}
__device__ __forceinline__ void bulk_copy(void* dst, const void* src, int bytes, unsigned long long* b) {
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
               :: "r"(smem_u32(dst)), "l"(src), "r"(bytes), "r"(smem_u32(b)) : "memory");
}
// Warp 0 produces: per stage 32 rows of the band, one bulk copy (272 B) per lane; the other
// warps wait for the stage, read a word each, and free it.
template <int STAGES>
__global__ void band_bulk(const char* __restrict__ x, unsigned* out) {
  extern __shared__ __align__(128) unsigned char sm[];
  unsigned long long* full = reinterpret_cast<unsigned long long*>(sm);
  unsigned long long* empty = full + STAGES;
  unsigned char* buf = sm + 1024;
  const int h = blockIdx.x / 32, tile = blockIdx.x % 32, t0 = tile * 128;
  const int u0 = max(0, t0 - 256), u1 = min(N, t0 + 384), slabs = (u1 - u0) / 32;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, consumers = blockDim.x / 32 - 1;
  if (threadIdx.x == 0) for (int s = 0; s < STAGES; ++s) { mbar_init(&full[s], 1); mbar_init(&empty[s], consumers); }
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  __syncthreads();
  unsigned acc = 0;
  if (warp == 0) {
    for (int it = 0; it < slabs; ++it) {
      const int st = it % STAGES;
      if (it >= STAGES) mbar_wait(&empty[st], ((it / STAGES) - 1) & 1);
      const int u = u0 + it * 32 + lane;
      long long e = (long long)u * RSTRIDE + h * ROWB + 2 * max(0, min(C - 1, 256 + t0 - u));
      e &= ~15ll;
      bulk_copy(buf + st * 32 * 272 + lane * 272, x + e, 272, &full[st]);
      __syncwarp();
      if (lane == 0) mbar_expect_arrive(&full[st], 32 * 272);
    }
  } else {
    for (int it = 0; it < slabs; ++it) {
      const int st = it % STAGES;
      mbar_wait(&full[st], (it / STAGES) & 1);
      acc ^= reinterpret_cast<const unsigned*>(buf + st * 32 * 272)[threadIdx.x];
      __syncwarp();
      if (lane == 0) mbar_arrive(&empty[st]);
    }
  }
  if (acc == 0x12345678) out[0] = acc;
}
// cp.async (16 B per thread) version of the band loader: a ring of per-thread groups, no barrier.
template <int AHEAD>
__global__ void band_cpasync(const char* __restrict__ x, unsigned* out) {
  extern __shared__ __align__(128) unsigned char sm[];
  const int h = blockIdx.x / 32, tile = blockIdx.x % 32, t0 = tile * 128;
  const int u0 = max(0, t0 - 256), u1 = min(N, t0 + 384);
  const int total = (u1 - u0) * 17;
  unsigned acc = 0;
  int k = 0;
  for (int idx = threadIdx.x; idx < total; idx += blockDim.x, ++k) {
    int u = u0 + idx / 17, p = idx % 17;
    long long e = (long long)u * RSTRIDE + h * ROWB + 2 * max(0, min(C - 1, 256 + t0 - u));
    e = (e & ~15ll) + 16 * p;
    unsigned dst = smem_u32(sm + ((k % (AHEAD + 1)) * blockDim.x + threadIdx.x) * 16);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\ncp.async.commit_group;" :: "r"(dst), "l"(x + e) : "memory");
    asm volatile("cp.async.wait_group %0;" :: "n"(AHEAD) : "memory");
    acc ^= reinterpret_cast<const unsigned*>(sm)[((k + 1) % (AHEAD + 1)) * blockDim.x + threadIdx.x];
  }
  asm volatile("cp.async.wait_all;" ::: "memory");
  if (acc == 0x12345678) out[0] = acc;
}

// The kernel's slab structure with nothing else: per slab of 32 rows, each thread copies its
// pieces (row = tid / 8, pieces tid % 8 + 8 k, like TpvLaneStage) in one cp.async group,
// waits for slab it (wait_group STAGES - 2), optionally a block barrier, then issues slab
// it + STAGES - 1. FLAT: pieces as idx = tid + 256 k over the slab's 544 (row, piece) pairs.
template <int STAGES, bool BAR, bool FLAT>
__global__ void band_slabs(const char* __restrict__ x, unsigned* out) {
  extern __shared__ __align__(128) unsigned char sm[];
  const int h = blockIdx.x / 32, tile = blockIdx.x % 32, t0 = tile * 128;
  const int u0 = max(0, t0 - 256), u1 = min(N, t0 + 384), slabs = (u1 - u0) / 32;
  unsigned acc = 0;
  auto issue = [&](int s) {
    if (s < slabs) {
      unsigned char* dst = sm + (s % STAGES) * 32 * 272;
#pragma unroll
      for (int k = 0; k < 3; ++k) {
        int r, p;
        if (FLAT) { const int idx = threadIdx.x + 256 * k; r = idx / 17; p = idx % 17; if (idx >= 544) break; }
        else { r = threadIdx.x / 8; p = threadIdx.x % 8 + 8 * k; if (p >= 17) break; }
        const int u = u0 + s * 32 + r;
        long long e = (long long)u * RSTRIDE + h * ROWB + 2 * max(0, min(C - 1, 256 + t0 - u));
        e = (e & ~15ll) + 16 * p;
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" :: "r"(smem_u32(dst + r * 272 + p * 16)), "l"(x + e) : "memory");
      }
    }
    asm volatile("cp.async.commit_group;" ::: "memory");
  };
  for (int s = 0; s < STAGES - 1; ++s) issue(s);
  for (int it = 0; it < slabs; ++it) {
    asm volatile("cp.async.wait_group %0;" :: "n"(STAGES - 2) : "memory");
    if (BAR) __syncthreads();
    issue(it + STAGES - 1);
    acc ^= reinterpret_cast<const unsigned*>(sm + (it % STAGES) * 32 * 272)[threadIdx.x];
  }
  asm volatile("cp.async.wait_all;" ::: "memory");
  if (acc == 0x12345678) out[0] = acc;
}
int main() {
  const size_t bytes = (size_t)N * RSTRIDE + 4096;
  const int SETS = 4;
  std::vector<char*> X(SETS);
  for (auto& p : X) { CK(cudaMalloc(&p, bytes)); cudaMemset(p, 1, bytes); }
  unsigned* out; CK(cudaMalloc(&out, 16));
  cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
  auto time = [&](auto launch) {
    for (int r = 0; r < 400; ++r) launch(r % SETS);
    cudaDeviceSynchronize();
    std::vector<float> t; std::vector<cudaEvent_t> ev(100); for (auto& e : ev) cudaEventCreate(&e);
    for (int r = 0; r < 50; ++r) { cudaEventRecord(ev[2 * r]); launch(r % SETS); cudaEventRecord(ev[2 * r + 1]); }
    cudaEventSynchronize(ev.back());
    for (int r = 0; r < 50; ++r) { float ms; cudaEventElapsedTime(&ms, ev[2 * r], ev[2 * r + 1]); t.push_back(ms * 1e3f); }
    std::sort(t.begin(), t.end()); return t[t.size() / 2];
  };
  const double band_bytes = 12.0 * 4096 * 128 * 17 * 16 / 16 * 16 / 16;  // approx: 384 blocks × ~616 rows × 272
  printf("band 272B windows, 256 thr, unroll 4: %.2f us\n", time([&](int s) { band_pattern<4><<<384, 256>>>(X[s], out, 0, 17); }));
  printf("band 272B windows, 256 thr, unroll 8: %.2f us\n", time([&](int s) { band_pattern<8><<<384, 256>>>(X[s], out, 0, 17); }));
  printf("band 272B windows, 512 thr, unroll 8: %.2f us\n", time([&](int s) { band_pattern<8><<<384, 512>>>(X[s], out, 0, 17); }));
  printf("rows 1024B,        256 thr, unroll 4: %.2f us\n", time([&](int s) { row_pattern<4><<<384, 256>>>(X[s], out); }));
  printf("rows 1024B,        256 thr, unroll 8: %.2f us\n", time([&](int s) { row_pattern<8><<<384, 256>>>(X[s], out); }));
  printf("rows 1024B,        512 thr, unroll 8: %.2f us\n", time([&](int s) { row_pattern<8><<<384, 512>>>(X[s], out); }));
  cudaFuncSetAttribute(band_bulk<6>, cudaFuncAttributeMaxDynamicSharedMemorySize, 1024 + 6 * 8704);
  cudaFuncSetAttribute(band_bulk<12>, cudaFuncAttributeMaxDynamicSharedMemorySize, 1024 + 12 * 8704);
  cudaFuncSetAttribute(band_cpasync<7>, cudaFuncAttributeMaxDynamicSharedMemorySize, 8 * 256 * 16);
  printf("bulk 6 stages, 1+7 warps:           %.2f us\n", time([&](int s) { band_bulk<6><<<384, 256, 1024 + 6 * 8704>>>(X[s], out); }));
  printf("bulk 12 stages, 1+3 warps:          %.2f us\n", time([&](int s) { band_bulk<12><<<384, 128, 1024 + 12 * 8704>>>(X[s], out); }));
  printf("cp.async 16B, 7 ahead, 256 thr:     %.2f us\n", time([&](int s) { band_cpasync<7><<<384, 256, 8 * 256 * 16>>>(X[s], out); }));
  printf("cp.async 16B, 3 ahead, 256 thr:     %.2f us\n", time([&](int s) { band_cpasync<3><<<384, 256, 8 * 256 * 16>>>(X[s], out); }));
  {
    auto run = [&](const char* name, auto kern, int stages) {
      cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, stages * 8704);
      printf("%-40s %.2f us\n", name, time([&](int s) { kern<<<384, 256, stages * 8704>>>(X[s], out); }));
    };
    run("slabs 3 stages, barrier", band_slabs<3, true, false>, 3);
    run("slabs 3 stages, no barrier", band_slabs<3, false, false>, 3);
    run("slabs 3 stages, barrier, flat", band_slabs<3, true, true>, 3);
    run("slabs 4 stages, barrier", band_slabs<4, true, false>, 4);
    run("slabs 6 stages, barrier", band_slabs<6, true, false>, 6);
    run("slabs 6 stages, no barrier", band_slabs<6, false, false>, 6);
    run("slabs 2 stages, barrier", band_slabs<2, true, false>, 2);
  }
  printf("empty kernel: %.2f us\n", time([&](int s) { band_pattern<1><<<384, 256>>>(X[s], out, 0, 0); }));
  return 0;
}
