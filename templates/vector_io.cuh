// bandjit/vector_io.cuh — moving band rows (C elements, any alignment) between global and
// shared memory in 16-byte pieces.
//
// A band row starts wherever row·C puts it (C is odd for symmetric windows), so its
// 16-byte boundaries differ from row to row. Each row is kept in shared memory at a
// shift congruent to its global address modulo 16 bytes; then the aligned middle of the
// row moves with 16-byte loads/stores and only the ragged ends go element by element.
// Tensors must start 16-byte aligned (Kernel::launch checks it).
#pragma once

#include "bandjit/common.cuh"

namespace bandjit {

template <class T> struct Vec {
  static constexpr int kElems = 16 / sizeof(T);
};

// Two 16-bit values in one 32-bit register (lo in the low half), as the MMA fragments and
// paired stores want them.
template <class T>
__device__ __forceinline__ unsigned pack_pair(T lo, T hi) {
  return static_cast<unsigned>(*reinterpret_cast<unsigned short*>(&lo)) |
         (static_cast<unsigned>(*reinterpret_cast<unsigned short*>(&hi)) << 16);
}

// Elements by which global element `index` lies past a 16-byte boundary.
template <class T>
__device__ __forceinline__ int misalignment(i64 index) {
  return static_cast<int>(index & (Vec<T>::kElems - 1));
}

// A tile of ROWS band rows, each `count` elements starting at global element start[r]
// (start[r] < 0: the row is skipped), staged with row r at tile + r·LD and its first
// element at index misalignment(start[r]). Piece p of row r is the 16-byte piece of global
// memory at (start[r] − misalignment) + p·V: the pieces of all rows are shared out over
// the block's threads as one flat range, so a short row costs no more than its pieces.
// fn(r, piece, j, global) gets the row element j of the piece's first lane (may be < 0)
// and the piece's global element index.
template <class T, int ROWS, int PIECES, int THREADS, class Fn>
__device__ __forceinline__ void for_each_piece(const i64* start, int count, Fn fn) {
  constexpr int V = Vec<T>::kElems;
  for (int idx = threadIdx.x; idx < ROWS * PIECES; idx += THREADS) {
    const int r = idx / PIECES, piece = idx - r * PIECES;
    const i64 st = start[r];
    if (st < 0) continue;
    const int mis = misalignment<T>(st);
    const int j = piece * V - mis;
    if (j < count) fn(r, piece, j, st - mis + piece * V);
  }
}

// Staged tile → global, 16-byte stores inside rows, element stores at their ragged ends.
template <class T, int ROWS, int LD, int PIECES, int THREADS>
__device__ __forceinline__ void copy_tile_to_global(T* __restrict__ g, const T* tile, const i64* start, int count) {
  constexpr int V = Vec<T>::kElems;
  for_each_piece<T, ROWS, PIECES, THREADS>(start, count, [&](int r, int piece, int j, i64 at) {
    const T* src = tile + r * LD + piece * V;
    if (j >= 0 && j + V <= count) {
      *reinterpret_cast<uint4*>(g + at) = *reinterpret_cast<const uint4*>(src);
    } else {
#pragma unroll
      for (int c = 0; c < V; ++c)
        if (j + c >= 0 && j + c < count) g[at + c] = src[c];
    }
  });
}

// Global → staged tile with cp.async: the first piece may carry elements before the row
// (inside the tensor), the last is clipped at the row's end. The caller commits.
template <class T, int ROWS, int LD, int PIECES, int THREADS>
__device__ __forceinline__ void stage_tile_async(T* tile, const T* __restrict__ g, const i64* start, int count) {
  constexpr int V = Vec<T>::kElems;
  for_each_piece<T, ROWS, PIECES, THREADS>(start, count, [&](int r, int piece, int j, i64 at) {
    cp_async_16(tile + r * LD + piece * V, g + at, min(16, (count - j) * static_cast<int>(sizeof(T))));
  });
}

// Writes the staged rows to S. Row r's diagonal jl sits at tile[r·LDS + mis(r) + jl].
// sm_90: the 16-byte-aligned middle of each row leaves as one bulk asynchronous copy (the
// copy engine; measured faster than 16-byte stores through the threads), the ragged ends
// (< 8 elements each) as element stores; earlier archs: 16-byte stores.
template <class T, int TM, int LDS, int TJ, int THREADS>
__device__ __forceinline__ void write_band_rows(T* __restrict__ g, const T* tile, const i64* start, int count) {
  constexpr int V = Vec<T>::kElems;
#if __CUDA_ARCH__ >= 900
  // THREADS / TM threads per row: the first issues the bulk copy, all share the ragged ends.
  constexpr int TPR = THREADS / TM;
  static_assert(THREADS % TM == 0, "whole thread groups per row");
  const int r = threadIdx.x / TPR, sub = threadIdx.x % TPR;
  const i64 st = start[r];
  if (st >= 0) {
    const int mis = misalignment<T>(st);
    const int a = min(count, (V - mis) % V);  // first aligned element
    const int e = a + (count - a) / V * V;    // end of the aligned middle
    const T* src = tile + r * LDS + mis;
    if (sub == 0 && e > a) {
      const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(src + a));
      asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;\n" ::"l"(g + st + a), "r"(s),
                   "r"((e - a) * static_cast<int>(sizeof(T)))
                   : "memory");
    }
    for (int x = sub; x < a + count - e; x += TPR) {
      const int j = x < a ? x : e + (x - a);
      g[st + j] = src[j];
    }
  }
  asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
  asm volatile("cp.async.bulk.wait_group.read 0;\n" ::: "memory");  // the tile is free again
#else
  copy_tile_to_global<T, TM, LDS, ceil_div(TJ + V - 1, V), THREADS>(g, tile, start, count);
#endif
}

}  // namespace bandjit
