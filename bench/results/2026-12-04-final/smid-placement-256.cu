// Where the H200 puts the blocks of clusters of 4 in the 16-bit layer_norm forward's layout at
// H = 65536: 256 threads a block, four blocks an SM (here held to four by shared memory).
// Prints, for each SM, how many blocks of each rank it ran, and how many SMs ran 0, 1, 2, 3
// or 4 distinct ranks.
#include <cstdio>
#include <vector>
__global__ void __cluster_dims__(4, 1, 1) __launch_bounds__(256, 4) where(unsigned* out) {
  extern __shared__ float pad[];
  unsigned smid;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
  if (threadIdx.x == 0) out[blockIdx.x] = smid;
  float v = threadIdx.x;
  for (int i = 0; i < 20000; ++i) v = v * 0.999f + 1.f;
  if (v == 12345.f) pad[0] = v;
}
int main() {
  const int clusters = 1024, blocks = clusters * 4, smem = 50 * 1024;
  unsigned* d;
  cudaMalloc(&d, blocks * 4);
  cudaFuncSetAttribute(where, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
  where<<<blocks, 256, smem>>>(d);
  std::vector<unsigned> h(blocks);
  cudaMemcpy(h.data(), d, blocks * 4, cudaMemcpyDeviceToHost);
  printf("clusters of 4 x 256 threads: %s\n", cudaGetErrorString(cudaGetLastError()));
  std::vector<int> ranks(256 * 4, 0), by_distinct(5, 0);
  for (int b = 0; b < blocks; ++b) ranks[h[b] * 4 + b % 4]++;
  for (int s = 0; s < 132; ++s) {
    int n = 0;
    for (int r = 0; r < 4; ++r) n += ranks[4 * s + r] > 0;
    by_distinct[n]++;
    printf("sm %d ranks %d %d %d %d\n", s, ranks[4 * s], ranks[4 * s + 1], ranks[4 * s + 2], ranks[4 * s + 3]);
  }
  for (int n = 0; n <= 4; ++n) printf("SMs with %d distinct ranks: %d\n", n, by_distinct[n]);
  for (int c = 0; c < 16; ++c) printf("cluster %d: %u %u %u %u\n", c, h[4 * c], h[4 * c + 1], h[4 * c + 2], h[4 * c + 3]);
  return 0;
}
