// Host shim of templates/wgmma.cuh for the SIMT emulator, written from the PTX ISA
// ("Asynchronous Warpgroup Level Matrix Shared Memory Layout", "Matrix Descriptor Format",
// "Register Fragments" of wgmma.mma_async.m64nNk16), not from the template: a descriptor is
// decoded into start address, LBO, SBO and swizzle mode; an operand element's address is the
// canonical layout's, then the 128-byte swizzle (address bits 4–6 ^= bits 7–9) is applied, as
// the hardware does. wgmma is a warpgroup collective; the block is one warpgroup, so the block
// barrier separates depositing register A fragments from reading them. Products are float64
// sums (exact up to the output's rounding), computed when issued. A real wgmma reads shared
// memory until its group is awaited, so each thread remembers the operand bytes of its groups
// and wgmma_wait checks they are unchanged: a buffer refilled before the wait fails the test.
// Fences are no-ops.
#pragma once

#include <cstring>
#include <utility>
#include <vector>

#include "bandjit/mma.cuh"
#include "bandjit/wgmma_layout.cuh"

namespace bandjit {

extern unsigned char smem[];  // the block's dynamic shared memory (the including test defines it)

// The shared window: offsets into the emulated block's shared memory.
inline u32 smem_addr(const void* p) { return static_cast<u32>(static_cast<const unsigned char*>(p) - smem); }

namespace sim_wgmma {
// This thread's shared-memory operand bytes (address, 16-bit value) per wgmma group: the open
// group, then committed ones, oldest first.
struct PendingReads {
  std::vector<std::vector<std::pair<u32, unsigned short>>> committed;
  std::vector<std::pair<u32, unsigned short>> open;
};
inline thread_local PendingReads pending;
inline void remember(u32 addr) {
  unsigned short v;
  std::memcpy(&v, smem + addr, 2);
  pending.open.emplace_back(addr, v);
}
}  // namespace sim_wgmma

inline void wgmma_fence() {}
inline void wgmma_commit() {
  sim_wgmma::pending.committed.push_back(std::move(sim_wgmma::pending.open));
  sim_wgmma::pending.open.clear();
}
// Waits until at most N committed groups are pending: the older ones' operands must still hold
// what they held at issue.
template <int N>
inline void wgmma_wait() {
  auto& groups = sim_wgmma::pending.committed;
  while (groups.size() > static_cast<std::size_t>(N)) {
    for (const auto& [addr, v] : groups.front()) {
      unsigned short now;
      std::memcpy(&now, smem + addr, 2);
      if (now != v) {
        ::bandjit::sim::fail("a wgmma operand in shared memory changed before its group was awaited");
        break;
      }
    }
    groups.erase(groups.begin());
  }
}
inline void fence_proxy_async() {}
template <int N>
inline void wgmma_fence_operands(float*) {}

namespace sim_wgmma {

struct Desc {
  u32 start, lbo, sbo;
};

inline Desc decode(u64 d) {
  if ((d >> 62) != 1) ::bandjit::sim::fail("wgmma descriptor: not the 128-byte swizzle mode");
  if (((d >> 49) & 7) != 0) ::bandjit::sim::fail("wgmma descriptor: base offset not 0");
  Desc r{static_cast<u32>((d & 0x3FFF) << 4), static_cast<u32>(((d >> 16) & 0x3FFF) << 4),
         static_cast<u32>(((d >> 32) & 0x3FFF) << 4)};
  // With base offset 0 the pattern repeats from 1024-byte boundaries: an operand starts in
  // row 0 of an atom (a k-step may move it along the row, never down).
  if ((r.start >> 7) & 7) ::bandjit::sim::fail("wgmma descriptor: start not in row 0 of a swizzle atom");
  return r;
}

inline u32 swizzle128(u32 a) { return a ^ (((a >> 7) & 7) << 4); }

template <class T>
inline float element(u32 addr) {
  if (addr % 2 || addr + 2 > 256 * 1024) ::bandjit::sim::fail("wgmma operand outside shared memory");
  T x;
  std::memcpy(&x, smem + addr, 2);
  remember(addr);
  return to_float(x);
}

// K-major operand (rows = M or N, 16 columns of K): element (mn, k).
template <class T>
inline float k_major(const Desc& d, int mn, int k) {
  return element<T>(swizzle128(d.start + (mn / 8) * d.sbo + (mn % 8) * 128 + k * 2));
}
// MN-major operand (16 rows of K, N columns in blocks of 64 at LBO): element (k, mn).
template <class T>
inline float mn_major(const Desc& d, int k, int mn) {
  return element<T>(swizzle128(d.start + (k / 8) * d.sbo + (k % 8) * 128 + (mn / 64) * d.lbo + (mn % 64) * 2));
}

// This thread's accumulator element i of m64nN: row, column.
inline int d_row(int i) { return 16 * ((threadIdx.x >> 5) & 3) + ((threadIdx.x & 31) >> 2) + 8 * ((i >> 1) & 1); }
inline int d_col(int i) { return 8 * (i >> 2) + 2 * (threadIdx.x & 3) + (i & 1); }

}  // namespace sim_wgmma

template <class T>
inline void wgmma_ss(float* d, u64 da, u64 db, bool accumulate) {
  using namespace sim_wgmma;
  const Desc a = decode(da), b = decode(db);
  for (int i = 0; i < 32; ++i) {
    double sum = accumulate ? d[i] : 0.0;
    for (int k = 0; k < 16; ++k)
      sum += static_cast<double>(k_major<T>(a, d_row(i), k)) * k_major<T>(b, d_col(i), k);
    d[i] = static_cast<float>(sum);
  }
}

// A (64 × 16) from the warpgroup's registers: thread 32w + 4g + t4 holds, for rows 16w + g and
// 16w + g + 8, columns 2t4, 2t4 + 1 (registers 0, 1) and 2t4 + 8, 2t4 + 9 (registers 2, 3).
template <class T>
inline void wgmma_rs(float* d, const u32 (&a)[4], u64 db) {
  using namespace sim_wgmma;
  using namespace ::bandjit::sim;
  const Desc b = decode(db);
  // A thread's products read only its own warp's rows of A, so a warp barrier suffices. A block
  // barrier here would also hide a missing __syncthreads of the kernel's stage pipeline.
  std::memcpy(lane_slot(static_cast<int>(threadIdx.x)), a, sizeof a);
  warp_sync();
  const int group = static_cast<int>(threadIdx.x) & ~127;  // the warpgroup's first thread
  auto a_element = [group](int row, int k) {
    const int owner = group + 32 * (row / 16) + 4 * (row % 8) + (k % 8) / 2;
    const int reg = (row % 16) / 8 + 2 * (k / 8);
    u32 w;
    std::memcpy(&w, lane_slot(owner) + 4 * reg, 4);
    const unsigned short bits = static_cast<unsigned short>(k % 2 ? w >> 16 : w & 0xffff);
    T x;
    std::memcpy(&x, &bits, 2);
    return to_float(x);
  };
  for (int i = 0; i < 32; ++i) {
    double sum = d[i];
    for (int k = 0; k < 16; ++k) sum += static_cast<double>(a_element(d_row(i), k)) * mn_major<T>(b, k, d_col(i));
    d[i] = static_cast<float>(sum);
  }
  warp_sync();  // the warp has read the fragments before they are deposited again
}

}  // namespace bandjit
