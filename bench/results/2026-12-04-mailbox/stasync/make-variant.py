#!/usr/bin/env python3
"""Writes kasync.cu from k.cu (bandjit emit --standalone of the 16-bit layer_norm forward at
H = 65536): the row's moments pass to the peers by st.async on an mbarrier instead of a
cluster barrier, and the exit barrier goes (nothing reads a block's shared memory after its
mbarrier wait). One row a block only (kRowIterations = 1)."""
import sys
w = sys.argv[1]
s = open(f"{w}/k.cu").read()
helpers = r'''
namespace bandjit { namespace ln {
// This block's slots: one (mean_r, M2_r) per rank, written by the peers' st.async; the
// mbarrier completes when the CB - 1 peers' 8 bytes have landed and thread 0 has arrived.
__shared__ unsigned long long am_bar;
__shared__ float2 am_slots[8];
__device__ __forceinline__ unsigned am_addr(const void* p) { return static_cast<unsigned>(__cvta_generic_to_shared(p)); }
__device__ __forceinline__ void async_moments_init() {
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;\n" ::"r"(am_addr(&am_bar)) : "memory");
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
  asm volatile("barrier.cluster.arrive.relaxed.aligned;\n" ::: "memory");
}
template <int CB, int HS>
__device__ __forceinline__ float2 async_moments(float2 v) {
  asm volatile("barrier.cluster.wait.aligned;\n" ::: "memory");  // the peers' mbarriers exist
  if (threadIdx.x == 0) {
    unsigned rank;
    asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(rank));
#pragma unroll
    for (int r = 0; r < CB; ++r) {
      if (r == int(rank)) continue;
      unsigned slot, bar;
      asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(slot) : "r"(am_addr(&am_slots[rank])), "r"(r));
      asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(bar) : "r"(am_addr(&am_bar)), "r"(r));
      asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.v2.b32 [%0], {%1, %2}, [%3];\n" ::"r"(slot),
                   "r"(__float_as_uint(v.x)), "r"(__float_as_uint(v.y)), "r"(bar) : "memory");
    }
    am_slots[rank] = v;
    asm volatile("{\n .reg .b64 st;\n mbarrier.arrive.expect_tx.shared::cta.b64 st, [%0], %1;\n}\n" ::"r"(am_addr(&am_bar)),
                 "r"((CB - 1) * 8) : "memory");
  }
  asm volatile("{\n .reg .pred d;\nw_%=:\n mbarrier.try_wait.parity.shared::cta.b64 d, [%0], 0;\n @!d bra w_%=;\n}\n" ::"r"(
                   am_addr(&am_bar)) : "memory");
  float mean = 0.f, m2 = 0.f;
#pragma unroll
  for (int r = 0; r < CB; ++r) mean += am_slots[r].x, m2 += am_slots[r].y;
  mean /= float(CB);
#pragma unroll
  for (int r = 0; r < CB; ++r) {
    const float d = am_slots[r].x - mean;
    m2 += float(HS) * d * d;
  }
  return make_float2(mean, m2);
}
}}  // namespace bandjit::ln
'''
anchor = "template <class Cfg>\n__device__ __forceinline__ void layer_norm_forward("
assert s.count(anchor) == 1
s = s.replace(anchor, "}  // namespace bandjit\n" + helpers + "namespace bandjit {\n" + anchor)
a = "  auto set_of = [&](int it) { return (block_group * Cfg::kRowIterations + it) * S::RPB + group; };\n  Raw raw[M][NV], next[PF ? NV : 1];"
assert s.count(a) == 1
s = s.replace(a, a + "\n  static_assert(Cfg::kRowIterations == 1, \"one row a block\");\n  ln::async_moments_init();")
c = "var = ln::cluster_moments<CB, HS>(make_float2(mean.x, ln::group_sum<R>(sq, smem).x), smem, smem + S::kSlots,\n                                        it & 1);"
assert s.count(c) == 1, s.count(c)
s = s.replace(c, "var = ln::async_moments<CB, HS>(make_float2(mean.x, ln::group_sum<R>(sq, smem).x));")
f = "  ln::cluster_finish<CB>();\n}\n\n// Each block (each cluster of kClusterBlocks blocks) takes"
assert s.count(f) == 1
s = s.replace(f, "}\n\n// Each block (each cluster of kClusterBlocks blocks) takes")
s = s.replace("bandjit_layer_norm(", "bandjit_layer_norm_async(")
open(f"{w}/kasync.cu", "w").write(s)
