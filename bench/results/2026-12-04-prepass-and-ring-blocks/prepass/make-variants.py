"""Writes k16o.cu (the emitted kernel + a launch wrapper) and k16b.cu (the same kernel reading
the mask as 64 bits a thread, after griddepcontrol.wait, + the packing kernel and wrappers)
from DIR/k16.cu. Timing prototype only: nothing of it is in the library."""
import sys

w = sys.argv[1]
src = open(f"{w}/k16.cu").read()
old = """    if constexpr (kMaskBits) {
      MaskRaw mraw[NV];"""
assert src.count(old) == 1
new = """    if constexpr (kMaskBits) {
#ifdef BITS
      asm volatile("griddepcontrol.wait;" ::: "memory");
      // An asm load: the compiler hoisted a plain (const __restrict__, .nc) load above the wait.
      removed_bits = 0ull;
      if (active)
        asm volatile("ld.global.u64 %0, [%1];" : "=l"(removed_bits)
                     : "l"(reinterpret_cast<const unsigned long long*>(mask) + mask_row * Cfg::kRowThreads + lane) : "memory");
      if (true) return;
#endif
      MaskRaw mraw[NV];"""
b = src.replace(old, new).replace("bandjit_scale_mask_softmax(", "bandjit_scale_mask_softmax_bits(")
b += r'''
// bits[mask_row][lane]: bit e·V + c set where key (lane + e·kRowThreads)·V + c is removed.
extern "C" __global__ void __launch_bounds__(256) bandjit_mask_bits(const unsigned char* __restrict__ mask,
                                                                  unsigned long long* __restrict__ bits) {
  asm volatile("griddepcontrol.launch_dependents;");
  constexpr int RT = Cfg::kRowThreads, NV = Cfg::kPiecesPerThread, V = Cfg::kVec, L = Cfg::kRowLength;
  const long long t = blockIdx.x * 256ll + threadIdx.x;
  constexpr long long kMaskRows = Cfg::kRows / Cfg::kHeads;
  if (t >= kMaskRows * RT) return;
  const long long mr = t / RT;
  const int lane = int(t % RT);
  uint2 w[NV];
#pragma unroll
  for (int e = 0; e < NV; ++e)
    w[e] = bandjit::piece_in_row<Cfg>(lane + e * RT) ? *reinterpret_cast<const uint2*>(mask + mr * L + (lane + e * RT) * V) : uint2{0, 0};
  unsigned long long b = 0;
#pragma unroll
  for (int e = 0; e < NV; ++e) {
    const unsigned char* by = reinterpret_cast<const unsigned char*>(&w[e]);
#pragma unroll
    for (int c = 0; c < V; ++c) if (by[c]) b |= 1ull << (e * V + c);
  }
  bits[t] = b;
}
void launch_pack(const unsigned char* mask, unsigned long long* bits, cudaStream_t s) {
  constexpr long long n = Cfg::kRows / Cfg::kHeads * Cfg::kRowThreads;
  bandjit_mask_bits<<<unsigned((n + 255) / 256), 256, 0, s>>>(mask, bits);
}
void launch_bits(const __half* x, __half* y, const unsigned long long* bits, bool pdl, cudaStream_t s) {
  static bool once = [] { cudaFuncSetAttribute(bandjit_scale_mask_softmax_bits, cudaFuncAttributeMaxDynamicSharedMemorySize, 65536); return true; }();
  (void)once;
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(2048); cfg.blockDim = dim3(512); cfg.dynamicSmemBytes = 65536; cfg.stream = s;
  cudaLaunchAttribute at[1];
  at[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  at[0].val.programmaticStreamSerializationAllowed = 1;
  cfg.attrs = at; cfg.numAttrs = pdl ? 1 : 0;
  cudaLaunchKernelEx(&cfg, bandjit_scale_mask_softmax_bits, x, y, reinterpret_cast<const unsigned char*>(bits));
}
'''
open(f"{w}/k16b.cu", "w").write(b)
open(f"{w}/k16o.cu", "w").write(src + r'''
void launch_orig(const __half* x, __half* y, const unsigned char* mask, cudaStream_t s) {
  static bool once = [] { cudaFuncSetAttribute(bandjit_scale_mask_softmax, cudaFuncAttributeMaxDynamicSharedMemorySize, 65536); return true; }();
  (void)once;
  bandjit_scale_mask_softmax<<<2048, 512, 65536, s>>>(x, y, mask);
}
''')
