// The README's example: the unfused banded attention forward of longformer-base-4096,
// O = band_pv(band_softmax(band_qk(Q, K)), V), on the caller's CUDA stream.
#include <cmath>
#include <cstdio>
#include <vector>

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <bandjit/bandjit.hpp>

int main() {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::puts("quickstart: no GPU here, nothing to run");
    return 77;  // ctest: skipped
  }
  bandjit::Problem p;  // layout bnhd: Q, K, V, O are [B, N, H, Dh]; S and P are [B, N, H, C]
  p.batch = 1;
  p.heads = 12;
  p.seq_len = 4096;
  p.head_dim = 64;
  p.window_left = 256;  // one-sided: 256 keys each side, C = 513 diagonals
  p.window_right = 256;
  p.dtype = bandjit::DType::float16;

  const size_t rows = p.batch * p.seq_len * p.heads;
  void *q, *k, *v, *s, *o;
  cudaMalloc(&q, rows * p.head_dim * sizeof(__half));
  cudaMalloc(&k, rows * p.head_dim * sizeof(__half));
  cudaMalloc(&v, rows * p.head_dim * sizeof(__half));
  cudaMalloc(&s, rows * p.diagonals() * sizeof(__half));
  cudaMalloc(&o, rows * p.head_dim * sizeof(__half));
  cudaMemset(q, 0x30, rows * p.head_dim * sizeof(__half));  // every element 0x3030 ≈ 0.1309
  cudaMemset(k, 0x31, rows * p.head_dim * sizeof(__half));
  cudaMemset(v, 0x3c, rows * p.head_dim * sizeof(__half));  // every element 0x3c3c = 1.0586

  cudaStream_t stream;
  cudaStreamCreate(&stream);
  const bandjit::Kernel qk = bandjit::get_kernel("band_qk", p);  // memory → disk cache → NVRTC
  const bandjit::Kernel softmax = bandjit::get_kernel("band_softmax", p);
  const bandjit::Kernel pv = bandjit::get_kernel("band_pv", p);
  qk.launch(stream, {q, k, s});       // S = Q·Kᵀ on the band
  softmax.launch(stream, {s, s});     // P = softmax(S), in place
  pv.launch(stream, {s, v, o});       // O = P·V
  cudaStreamSynchronize(stream);

  // Each row of P sums to 1 and V is constant, so every element of O equals V's value
  // (up to the float16 rounding of P).
  std::vector<__half> out(rows * p.head_dim);
  cudaMemcpy(out.data(), o, out.size() * sizeof(__half), cudaMemcpyDeviceToHost);
  const float expected = __half2float(__ushort_as_half(0x3c3c));
  int wrong = 0;
  for (const __half& x : out) wrong += !(std::fabs(__half2float(x) - expected) <= 2e-3f * expected);
  std::printf("band_qk: %d registers, %u bytes shared, from %s; O has %d wrong elements\n", qk.info().registers,
              qk.info().shared_bytes, qk.info().origin == bandjit::Origin::compiled ? "NVRTC" : "the cache", wrong);
  return wrong == 0 ? 0 : 1;
}
