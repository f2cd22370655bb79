// bandjit/row_ring.cuh — whole rows through a ring of shared-memory chunks (sm_90 bulk
// copies, templates/bulk_copy.cuh), for kernels that read a row twice (statistics, then the
// output) and keep one block an SM busy over many rows in turn.
//
// A block owns `rows` consecutive rows, each kChunks chunks of kThreads 16-byte pieces
// (thread t reads piece t of every chunk). Chunk g of the block (row g / kChunks) lives in
// slot g % kSlots. A slot's `full` barrier completes when its chunk has landed; its `empty`
// barrier when every warp has read the chunk for the last time. Thread 0 issues the copies:
// the first kSlots at once, then chunk j once chunk j − kSlots is released. With kSlots >
// kChunks the next row's first chunks are in flight while this row is reduced and written,
// so the SM's loads do not stop at the row's block-wide reduction.
#pragma once

#include "bandjit/bulk_copy.cuh"

namespace bandjit {

// Layout of the block's dynamic shared memory: `scratch_bytes` for the caller (reduction
// slots), the barriers, then the slots (16-byte aligned).
template <int THREADS, int CHUNKS, int SLOTS, unsigned SCRATCH_BYTES>
struct RingLayout {
  static_assert(THREADS % 32 == 0, "whole warps");
  static_assert(SLOTS > CHUNKS, "a slot beyond one row: the next row's loads start before this row is written");
  static constexpr unsigned kChunkBytes = THREADS * 16u;
  static_assert(kChunkBytes < (1u << 20), "an mbarrier phase counts fewer than 2^20 bytes");
  static constexpr unsigned kBarrierOffset = (SCRATCH_BYTES + 7) / 8 * 8;
  static constexpr unsigned kSlotOffset = (kBarrierOffset + 16u * SLOTS + 15) / 16 * 16;
  static constexpr unsigned kSharedBytes = kSlotOffset + SLOTS * kChunkBytes;
};

template <int THREADS, int CHUNKS, int SLOTS, unsigned SCRATCH_BYTES>
struct RowRing {
  using Layout = RingLayout<THREADS, CHUNKS, SLOTS, SCRATCH_BYTES>;
  unsigned char* base;
  unsigned long long *full, *empty;
  const unsigned char* src;  // the block's first row in global memory; rows are row_bytes apart
  long long row_bytes;
  int total;   // chunks this block moves
  int issued;  // thread 0: chunks issued so far

  __device__ __forceinline__ RowRing(void* smem, const void* first_row, long long row_bytes_, int rows)
      : base(static_cast<unsigned char*>(smem)),
        full(reinterpret_cast<unsigned long long*>(base + Layout::kBarrierOffset)),
        empty(full + SLOTS),
        src(static_cast<const unsigned char*>(first_row)),
        row_bytes(row_bytes_),
        total(rows * CHUNKS),
        issued(0) {}

  // Thread 0 initialises the barriers and issues the first kSlots chunks; every thread must
  // pass a block barrier (the caller's __syncthreads) between init() and its first wait.
  __device__ __forceinline__ void init() {
    if (threadIdx.x != 0) return;
#pragma unroll 1
    for (int s = 0; s < SLOTS; ++s) {
      barrier_init(&full[s], 1);
      barrier_init(&empty[s], THREADS / 32);
    }
  }
  __device__ __forceinline__ void start() {
    if (threadIdx.x != 0) return;
#pragma unroll 1
    for (; issued < total && issued < SLOTS; ++issued) issue(issued);
  }
  __device__ __forceinline__ void issue(int g) {
    const int s = g % SLOTS;
    barrier_expect_bytes(&full[s], Layout::kChunkBytes);
    bulk_load(base + Layout::kSlotOffset + s * Layout::kChunkBytes,
              src + (g / CHUNKS) * row_bytes + (g % CHUNKS) * Layout::kChunkBytes, Layout::kChunkBytes, &full[s]);
  }
  // Thread 0: issues every chunk j with j − kSlots < `released`, waiting for each slot's
  // release; every warp must have read chunks < `released` for the last time or be about to.
  __device__ __forceinline__ void top_up(int released) {
#pragma unroll 1
    for (; issued < total && issued - SLOTS < released; ++issued) {
      barrier_wait(&empty[issued % SLOTS], ((issued - SLOTS) / SLOTS) & 1);
      issue(issued);
    }
  }
  // Thread 0: issues chunks up to g (waiting for their slots' releases) if it has not yet.
  __device__ __forceinline__ void issue_through(int g) {
    if (threadIdx.x == 0) top_up(g - SLOTS + 1);
  }
  // Waits until chunk g has landed; issue_through(g) must have come first.
  __device__ __forceinline__ void wait(int g) { barrier_wait(&full[g % SLOTS], (g / SLOTS) & 1); }
  // This thread's 16-byte piece of chunk g (landed).
  __device__ __forceinline__ uint4 piece(int g) const {
    return reinterpret_cast<const uint4*>(base + Layout::kSlotOffset + (g % SLOTS) * Layout::kChunkBytes)[threadIdx.x];
  }
  // The warp has read chunks g … g + count − 1 for the last time: their slots may be refilled.
  // Every lane's reads come before the warp's arrivals (__syncwarp orders them).
  __device__ __forceinline__ void release(int g, int count = 1) {
    __syncwarp();
    if ((threadIdx.x & 31) == 0)
#pragma unroll 1
      for (int k = 0; k < count; ++k) barrier_arrive(&empty[(g + k) % SLOTS]);
  }
};

}  // namespace bandjit
