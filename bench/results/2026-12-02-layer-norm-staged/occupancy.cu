// How many clusters of 1, 2, 4 and 8 blocks of 512 threads with the staged backward's shared
// memory (196784 bytes: 16-bit slices of 16384 columns, three stages) the GPU holds at once
// (cudaOccupancyMaxActiveClusters). Built and run on the GPU machine by command-3.sh.
#include <cstdio>
#include <cuda_runtime.h>

__global__ void probe(float* out) {
  extern __shared__ float smem[];
  smem[threadIdx.x] = threadIdx.x;
  __syncthreads();
  if (out) out[blockIdx.x] = smem[0];
}

int main() {
  const int smem = 196784;
  cudaFuncSetAttribute(probe, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
  cudaFuncSetAttribute(probe, cudaFuncAttributeNonPortableClusterSizeAllowed, 1);
  for (int cluster : {1, 2, 4, 8, 16}) {
    cudaLaunchConfig_t config = {};
    config.gridDim = dim3(cluster * 64);
    config.blockDim = dim3(512);
    config.dynamicSmemBytes = smem;
    cudaLaunchAttribute attr;
    attr.id = cudaLaunchAttributeClusterDimension;
    attr.val.clusterDim.x = cluster, attr.val.clusterDim.y = 1, attr.val.clusterDim.z = 1;
    config.attrs = &attr;
    config.numAttrs = 1;
    int clusters = -1;
    const cudaError_t e = cudaOccupancyMaxActiveClusters(&clusters, probe, &config);
    std::printf("cluster %2d: %d clusters at once (%s)\n", cluster, clusters, cudaGetErrorString(e));
  }
  return 0;
}
