// Where the H200 puts the blocks of clusters of 4 (512 threads, two blocks an SM) and of 16
// (128 threads, eight blocks an SM): per block its %smid, by cluster and rank. For clusters
// of 4 it prints how often a cluster's four blocks have distinct smid mod 4 and
// (smid / 2) mod 4; for both, how many distinct ranks each SM hosted.
#include <cstdio>
#include <vector>
__global__ void __cluster_dims__(4, 1, 1) __launch_bounds__(512, 2) where(unsigned* out) {
  extern __shared__ float pad[];
  unsigned smid;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
  if (threadIdx.x == 0) out[blockIdx.x] = smid;
  // Some work so blocks overlap as the real kernel's do.
  float v = threadIdx.x;
  for (int i = 0; i < 20000; ++i) v = v * 0.999f + 1.f;
  if (v == 12345.f) pad[0] = v;
}
__global__ void __cluster_dims__(16, 1, 1) __launch_bounds__(128, 8) where16(unsigned* out) {
  extern __shared__ float pad[];
  unsigned smid;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
  if (threadIdx.x == 0) out[blockIdx.x] = smid;
  float v = threadIdx.x;
  for (int i = 0; i < 20000; ++i) v = v * 0.999f + 1.f;
  if (v == 12345.f) pad[0] = v;
}
void sixteen() {
  const int clusters = 512, blocks = clusters * 16;
  unsigned* d;
  cudaMalloc(&d, blocks * 4);
  cudaFuncSetAttribute(where16, cudaFuncAttributeNonPortableClusterSizeAllowed, 1);
  cudaFuncSetAttribute(where16, cudaFuncAttributeMaxDynamicSharedMemorySize, 27 * 1024);
  where16<<<blocks, 128, 27 * 1024>>>(d);
  std::vector<unsigned> h(blocks);
  cudaMemcpy(h.data(), d, blocks * 4, cudaMemcpyDeviceToHost);
  printf("clusters of 16: %s\n", cudaGetErrorString(cudaGetLastError()));
  std::vector<int> ranks(256 * 16, 0);
  for (int b = 0; b < blocks; ++b) ranks[h[b] * 16 + b % 16]++;
  for (int c = 0; c < 8; ++c) {
    printf("cluster %d:", c);
    for (int r = 0; r < 16; ++r) printf(" %u", h[16 * c + r]);
    printf("\n");
  }
  for (int s = 0; s < 132; ++s) {
    int n = 0, total = 0;
    for (int r = 0; r < 16; ++r) n += ranks[16 * s + r] > 0, total += ranks[16 * s + r];
    printf("sm %d (16): %d blocks, %d distinct ranks\n", s, total, n);
  }
}
int main() {
  sixteen();
  const int clusters = 1024, blocks = clusters * 4;
  unsigned* d;
  cudaMalloc(&d, blocks * 4);
  cudaFuncSetAttribute(where, cudaFuncAttributeMaxDynamicSharedMemorySize, 100 * 1024);
  where<<<blocks, 512, 100 * 1024>>>(d);
  std::vector<unsigned> h(blocks);
  cudaMemcpy(h.data(), d, blocks * 4, cudaMemcpyDeviceToHost);
  if (cudaGetLastError() != cudaSuccess) { printf("error\n"); return 1; }
  int distinct1 = 0, distinct2 = 0;
  std::vector<int> rank_on_sm(256 * 4, 0);
  for (int c = 0; c < clusters; ++c) {
    unsigned m1 = 0, m2 = 0;
    for (int r = 0; r < 4; ++r) {
      m1 |= 1u << (h[4 * c + r] % 4), m2 |= 1u << ((h[4 * c + r] / 2) % 4);
      rank_on_sm[h[4 * c + r] * 4 + r]++;
    }
    distinct1 += m1 == 15, distinct2 += m2 == 15;
  }
  printf("clusters %d: smid mod 4 distinct in %d, (smid/2) mod 4 distinct in %d\n", clusters, distinct1, distinct2);
  for (int c = 0; c < 24; ++c) printf("cluster %d: %u %u %u %u\n", c, h[4 * c], h[4 * c + 1], h[4 * c + 2], h[4 * c + 3]);
  for (int s = 0; s < 132; ++s) printf("sm %d ranks %d %d %d %d\n", s, rank_on_sm[4 * s], rank_on_sm[4 * s + 1], rank_on_sm[4 * s + 2], rank_on_sm[4 * s + 3]);
  return 0;
}
