// bandjit/wgmma_layout.cuh — where bandjit puts wgmma operands in shared memory, and their
// descriptors (PTX ISA "Asynchronous Warpgroup Level Matrix Shared Memory Layout", "Matrix
// Descriptor Format"); and which build takes a family's Hopper (wgmma) kernel.
//
// One layout, the 128-byte swizzle: a tile of R rows × 64 16-bit columns (128 bytes a row)
// in groups of 8 rows (1024-byte atoms, 1024-byte aligned); the 16-byte chunk c of row r sits
// at chunk c ^ (r mod 8) of its row. Wider rows (head_dim 128) are column blocks of 64, one
// R-row tile after the other. The same bytes serve as a K-major operand (row = M or N index,
// column = K: Q and K of Q·Kᵀ) and as an MN-major one (row = K index, column = N: V of P·V,
// "transposed B").
#pragma once

#include "bandjit/common.cuh"

namespace bandjit {

typedef unsigned long long u64;

// Whether this build runs the family's Hopper kernel: the generator asked for it (Cfg::kWgmma,
// then the source compiles for sm_90a on sm_90) and the target has wgmma; the SIMT emulator
// (tests/sim) runs it too. Other targets compile the mma.sync kernel from the same source.
template <class Cfg>
__device__ __forceinline__ constexpr bool takes_wgmma_kernel() {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL) || defined(BANDJIT_SIM_WGMMA)
  return Cfg::kWgmma;
#else
  return false;
#endif
}

// Byte offset of 16-byte chunk c (of head_dim / 8) of row r in a swizzled tile of R rows.
template <int R>
__device__ __forceinline__ int swizzled_offset(int r, int c) {
  return (c >> 3) * (R * 128) + r * 128 + (((c & 7) ^ (r & 7)) << 4);
}

// Descriptor of a 128-byte-swizzled operand at shared address `addr`: leading and stride
// byte offsets (LBO: between column blocks of an MN-major operand; SBO: between 8-row
// atoms), each stored >> 4; bits 62–63 = 1: 128-byte swizzle.
__device__ __forceinline__ u64 wgmma_desc(unsigned addr, unsigned lbo, unsigned sbo) {
  return static_cast<u64>((addr & 0x3FFFF) >> 4) | (static_cast<u64>((lbo >> 4) & 0x3FFF) << 16) |
         (static_cast<u64>((sbo >> 4) & 0x3FFF) << 32) | (1ull << 62);
}

// What `bytes` further on adds to a descriptor: the address field (bits 0–13, address >> 4)
// holds any shared address, so the sum never carries into the other fields.
__device__ __forceinline__ constexpr u64 wgmma_desc_offset(unsigned bytes) { return bytes >> 4; }

}  // namespace bandjit
