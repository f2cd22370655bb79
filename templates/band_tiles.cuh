// bandjit/band_tiles.cuh — band arithmetic shared by band_qk and band_pv.
//
// Dilation by index remapping (SPEC §3.5): queries and keys with the same residue
// r = i mod D form a contiguous sub-sequence i = r + D·t, t = 0 … len−1, in which the band
// is the dilation-1 band: slot j of query t reads key u = t + j − w_l of the same residue.
// So a dilated problem costs no extra traffic: a block stages TM consecutive rows t of one
// residue and the key rows they need.
//
// Grid: x = (head, residue, tile of TM rows) (or tile-major, see decode_band_tile), y = chunk
// of diagonals, z = batch.
// Cfg supplies every size as a constant (see the generated source).
#pragma once

#include "bandjit/common.cuh"

namespace bandjit {

struct BandTile {
  int h;    // head
  int r;    // residue: rows i = r + D·t
  int D;    // dilation of the head
  int t0;   // first row (in the sub-sequence) of the tile
  int len;  // rows in the sub-sequence: ceil((N − r) / D)
};

// ROWS: query rows per block (band_qk: a run of tiles). kTileMajor (one dilation for all
// heads): x runs over the heads first, then the residues, then the tiles, so the blocks that run
// together cover every head of the same rows, which in bnhd lie side by side rather than
// H·width apart (band_qk's Hopper kernel: 3 % faster on the seed problem, 7 % at B = 12,
// bench/results/2026-12-02-qk-pv-anatomy/tile-major). Either order is the same set of tiles.
template <class Cfg, int ROWS = Cfg::kTileRows, bool kTileMajor = false>
__device__ __forceinline__ BandTile decode_band_tile(int x) {
  static_assert(!kTileMajor || Cfg::kUniformDilation, "tile-major order needs one dilation for all heads");
  constexpr int N = Cfg::kSeqLen, TM = ROWS;
  BandTile tc;
  if constexpr (Cfg::kUniformDilation) {
    constexpr int D = Cfg::kDilation;
    constexpr int per_residue = ceil_div(ceil_div(N, D), TM);
    tc.D = D;
    if constexpr (kTileMajor) {
      tc.h = x % Cfg::kHeads;
      const int y = x / Cfg::kHeads;
      tc.r = y % D;
      tc.t0 = y / D * TM;
    } else {
      tc.h = x / (D * per_residue);
      x -= tc.h * (D * per_residue);
      tc.r = x / per_residue;
      tc.t0 = (x - tc.r * per_residue) * TM;
    }
  } else {
    int h = 0;
    while (x >= Cfg::head_tile_start(h + 1)) ++h;
    x -= Cfg::head_tile_start(h);
    const int D = Cfg::dilation(h);
    const int per_residue = ceil_div(ceil_div(N, D), TM);
    tc.h = h;
    tc.D = D;
    tc.r = x / per_residue;
    tc.t0 = (x - tc.r * per_residue) * TM;
  }
  tc.len = (N - tc.r + tc.D - 1) / tc.D;
  return tc;
}

// Element offset of sub-sequence row u of the tile's head and residue in a [.., width]
// tensor: base + u · step (see row_offset). u may be out of range; the caller checks.
template <class Cfg>
struct SubsequenceRows {
  i64 base, step;
  __device__ __forceinline__ SubsequenceRows(int b, const BandTile& tc, int width)
      : base(row_offset<Cfg>(b, tc.h, tc.r, width)),
        step(i64(tc.D) * (Cfg::kLayout == kLayoutBNHD ? Cfg::kHeads : 1) * width) {}
  __device__ __forceinline__ i64 at(int u) const { return base + u * step; }
};

// Writes shared rows 0 … ROWS − 1 (row stride LD elements, 16-byte aligned) to rows t0 + r of
// the tile's sub-sequence of a [.., Dh] tensor, those below len, as 16-byte stores. From the
// MMA accumulators' own layout, 16-bit outputs leave 4 bytes per lane, half a sector per row
// and instruction: on the seed problem that cost band_tpv 1.6 µs and band_pv 1.5 µs.
template <class Cfg, int ROWS, int LD, int THREADS, class T>
__device__ __forceinline__ void write_row_range(T* __restrict__ g, const T* smem, int b, const BandTile& tc, int t0) {
  constexpr int V = 16 / sizeof(T), PIECES = Cfg::kHeadDim / V;
  static_assert(Cfg::kHeadDim % V == 0 && (LD * sizeof(T)) % 16 == 0, "rows of whole 16-byte pieces");
  const SubsequenceRows<Cfg> rows(b, tc, Cfg::kHeadDim);
  for (int idx = threadIdx.x; idx < ROWS * PIECES; idx += THREADS) {
    const int r = idx / PIECES, p = idx - r * PIECES;
    if (t0 + r < tc.len)
      *reinterpret_cast<uint4*>(g + rows.at(t0 + r) + p * V) = *reinterpret_cast<const uint4*>(smem + r * LD + p * V);
  }
}

// Stages rows u0 + first … u0 + end − 1 of the tile's sub-sequence of a [.., Dh] tensor into
// shared rows first … end − 1 (row stride LD elements) with 16-byte asynchronous copies;
// rows outside the sequence become zeros. The caller commits and waits.
template <class Cfg, int LD, class T>
__device__ __forceinline__ void stage_row_range_async(T* smem, const T* __restrict__ g, int b, const BandTile& tc,
                                                      int u0, int first, int end) {
  constexpr int kVecElems = 16 / sizeof(T);
  constexpr int kVecs = Cfg::kHeadDim / kVecElems;
  static_assert(Cfg::kHeadDim % kVecElems == 0, "rows are copied in 16-byte pieces");
  static_assert((LD * sizeof(T)) % 16 == 0, "shared rows must stay 16-byte aligned");
  const SubsequenceRows<Cfg> rows(b, tc, Cfg::kHeadDim);
  for (int idx = first * kVecs + threadIdx.x; idx < end * kVecs; idx += Cfg::kThreads) {
    const int row = idx / kVecs, vec = idx % kVecs;  // a constant divisor: no division instruction
    const int u = u0 + row;
    const bool inside = static_cast<unsigned>(u) < static_cast<unsigned>(tc.len);
    const T* src = inside ? g + rows.at(u) + vec * kVecElems : g;
    cp_async_16(smem + row * LD + vec * kVecElems, src, inside ? 16 : 0);
  }
}

// As stage_row_range_async for rows u0 … u0 + count − 1 into a ring of RING shared rows:
// row u0 + x goes to ring row (ring0 + x) mod RING.
template <class Cfg, int LD, int RING, class T>
__device__ __forceinline__ void stage_ring_rows_async(T* ring, const T* __restrict__ g, int b, const BandTile& tc,
                                                      int u0, int ring0, int count) {
  constexpr int kVecElems = 16 / sizeof(T);
  constexpr int kVecs = Cfg::kHeadDim / kVecElems;
  const SubsequenceRows<Cfg> rows(b, tc, Cfg::kHeadDim);
  for (int idx = threadIdx.x; idx < count * kVecs; idx += Cfg::kThreads) {
    const int x = idx / kVecs, vec = idx % kVecs;
    const int u = u0 + x;
    int slot = ring0 + x;
    if (slot >= RING) slot -= RING;
    const bool inside = static_cast<unsigned>(u) < static_cast<unsigned>(tc.len);
    const T* src = inside ? g + rows.at(u) + vec * kVecElems : g;
    cp_async_16(ring + slot * LD + vec * kVecElems, src, inside ? 16 : 0);
  }
}

template <class Cfg, int ROWS, int LD, class T>
__device__ __forceinline__ void stage_rows_async(T* smem, const T* __restrict__ g, int b, const BandTile& tc,
                                                 int u0) {
  stage_row_range_async<Cfg, LD>(smem, g, b, tc, u0, 0, ROWS);
}

}  // namespace bandjit
