// bandjit/band_tpv.cuh — Z[i, k] = Σ_j X[s, C − 1 − j] · Y[s, k], s = i + D·(j − w_r), over
// valid s (SPEC §3.4, the transposed band): row i gathers from every query s whose band
// holds key i. Slots of X whose key is outside the sequence never reach a stored row of Z
// (they may be staged, as parts of 16-byte pieces, and feed only rows past the sequence).
//
// In one residue sub-sequence (rows i = r + D·t) the sum runs over the rows u = t + j − w_r
// and reads X[u][w_l + t − u]. So a block owning the output rows t0 … t0 + TM − 1 computes
// Z_tile = A·Y with A[t][u] = X[u][w_l + t − u], u over [t0 − w_r, t0 + TM − 1 + w_l]: for
// each row u, the elements it contributes form one contiguous segment of X's row u (the
// diagonals w_l + t − u of the tile's rows t). Slabs of KS rows u stream through shared
// memory, Cfg::kStages in flight (cp.async): each row's X segment, kept at its global 16-byte
// phase, and the row of Y. A[t][u] is element t − t0 of segment u, so A's fragments are read
// straight from the staged segments and Z += A·Y runs on the tensor cores (m16n8k16 for
// 16-bit types, 3xTF32 m16n8k8 for float32) with no transposed copy. Entries off the band
// or off the sequence read as 0; only the k-steps at the band's edges pay for that mask.
//
// Warps: kTileRows / (16·kRowTilesPerWarp) row groups × kColumnParts column parts; each warp
// accumulates its 16·kRowTilesPerWarp rows × Dh / kColumnParts columns in registers for the
// whole band.
//
// Per-piece index arithmetic once dominated this kernel's instructions, so everything per
// lane that does not change from slab to slab is computed once: slabs start KS rows apart
// and KS is a multiple of the 16-byte piece, so a segment's phase, a lane's staged pieces and
// its A-fragment addresses are the same in every slab. Slabs wholly inside the band (all but
// the first and last (TM + KS − 1) / KS or so) stage with one cp.async per piece and
// multiply with no checks; the others stage the same way, skipping the pieces and rows
// outside the band, and mask the k-steps a warp's band edge crosses (load_masked). What
// limits it now is latency (shared-memory loads of the A fragments, tensor-core
// dependencies, the barrier per slab): docs/performance.md.
#pragma once

#include "bandjit/band_tiles.cuh"
#include "bandjit/mma.cuh"
#include "bandjit/vector_io.cuh"
#include "bandjit/wgmma.cuh"

namespace bandjit {

// Where the staged X segments of one slab live: row ul of the slab (band row u = u0 + ul)
// holds element tl of the tile at seg + ul·LD + phase(u) + tl, phase(u) = (m0 + u·step) mod V.
struct TpvSlab {
  int u0;     // sub-sequence index of the slab's first row
  int u_end;  // rows u ≥ u_end were not staged
  int m0;     // phase of row u = 0 (the tile's element 0 in X's row 0 of this residue)
  int step;   // phase advance per row: (row stride of X in elements − 1) mod V
};

// Per-lane element offsets, from a slab buffer, of the A entries a k-step at kk = 0 reads
// with no checks (see load_inner): they hold for every slab and every kk, which step in
// multiples of the piece (so every segment's phase repeats).
template <class Cfg, class T>
struct TpvLaneA {
  int off[2];
  __device__ __forceinline__ TpvLaneA(const TpvSlab& sl, int u_begin, int tl0) {
    constexpr int LD = Cfg::kStageLD, V = Vec<T>::kElems;
    const int g = lane_id() >> 2, t4 = lane_id() & 3;
    // 16-bit: u = 2t4 + p (k pairs); float32: u = t4 (one k per register).
    constexpr int kPair = sizeof(T) == 2 ? 2 : 1;
#pragma unroll
    for (int p = 0; p < 2; ++p) {
      const int kl = kPair * t4 + (kPair == 2 ? p : 0);
      off[p] = kl * LD + ((sl.m0 + (u_begin + kl) * sl.step) & (V - 1)) + tl0 + g;
    }
  }
};

#if defined(BANDJIT_USE_FP16) || defined(BANDJIT_USE_BF16)
// A fragment of a k-step wholly inside the band: entries at the lane's fixed offsets.
template <class Cfg, class T>
__device__ __forceinline__ void load_inner(typename MmaOps<T>::AFrag& a, const T* seg, const TpvLaneA<Cfg, T>& la,
                                           int kk, int rows = 0) {
  constexpr int LD = Cfg::kStageLD;
  const T* p0 = seg + kk * LD + la.off[0] + rows;  // rows: the m-tile's offset in the warp
  const T* p1 = seg + kk * LD + la.off[1] + rows;
  a.r[0] = pack_pair(p0[0], p1[0]);                    // row g,     u = 2t4, 2t4 + 1
  a.r[1] = pack_pair(p0[8], p1[8]);                    // row g + 8
  a.r[2] = pack_pair(p0[8 * LD], p1[8 * LD]);          // row g,     u + 8
  a.r[3] = pack_pair(p0[8 * LD + 8], p1[8 * LD + 8]);  // row g + 8, u + 8
}

// A fragment of a k-step at the band's edge (first row u = uk; the m-tile's first row is tm of
// the sub-sequence): load_inner's entries, zero where the diagonal d = w_l + t − u leaves
// [0, C) or row u was not staged (u ≥ u_end). Edge slabs stage only the band's pieces, so
// those slots hold stale shared memory: the zeros are selected, never multiplied in.
template <class Cfg, class T>
__device__ __forceinline__ void load_masked(typename MmaOps<T>::AFrag& a, const T* seg, const TpvLaneA<Cfg, T>& la,
                                            int kk, int rows, int uk, int tm, int u_end) {
  constexpr int LD = Cfg::kStageLD, WL = Cfg::kWindowLeft, C = Cfg::kDiagonals;
  const int g = lane_id() >> 2, t4 = lane_id() & 3;
  const T* p[2] = {seg + kk * LD + la.off[0] + rows, seg + kk * LD + la.off[1] + rows};
  const int u_lane = uk + 2 * t4;           // entry q's row: u_lane + du, du = (q & 1) + 8 (q >> 1)
  const int d_lane = WL + tm + g - u_lane;  // its diagonal for tile row g + 8h: d_lane + 8h − du
  const T zero = from_float<T>(0.f);
  T v[4][2];
#pragma unroll
  for (int q = 0; q < 4; ++q) {
    const int du = (q & 1) + 8 * (q >> 1);
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const T x = p[q & 1][8 * (q >> 1) * LD + 8 * h];
      const int d = d_lane + 8 * h - du;
      v[q][h] = u_lane + du < u_end && static_cast<unsigned>(d) < static_cast<unsigned>(C) ? x : zero;
    }
  }
  a.r[0] = pack_pair(v[0][0], v[1][0]);
  a.r[1] = pack_pair(v[0][1], v[1][1]);
  a.r[2] = pack_pair(v[2][0], v[3][0]);
  a.r[3] = pack_pair(v[2][1], v[3][1]);
}
#endif

template <class Cfg>
__device__ __forceinline__ void load_inner(MmaOps<float>::AFrag& a, const float* seg, const TpvLaneA<Cfg, float>& la,
                                           int kk, int rows = 0) {
  constexpr int LD = Cfg::kStageLD;
  const float* p = seg + kk * LD + la.off[0] + rows;
#pragma unroll
  for (int q = 0; q < 2; ++q)    // k = t4, t4 + 4
#pragma unroll
    for (int h = 0; h < 2; ++h)  // rows g, g + 8
      MmaOps<float>::split(p[4 * q * LD + 8 * h], a.big[2 * q + h], a.small[2 * q + h]);
}

template <class Cfg>
__device__ __forceinline__ void load_masked(MmaOps<float>::AFrag& a, const float* seg, const TpvLaneA<Cfg, float>& la,
                                            int kk, int rows, int uk, int tm, int u_end) {
  constexpr int LD = Cfg::kStageLD, WL = Cfg::kWindowLeft, C = Cfg::kDiagonals;
  const int g = lane_id() >> 2, t4 = lane_id() & 3;
  const float* p = seg + kk * LD + la.off[0] + rows;
  const int u_lane = uk + t4, d_lane = WL + tm + g - u_lane;
#pragma unroll
  for (int q = 0; q < 2; ++q)    // k = t4, t4 + 4
#pragma unroll
    for (int h = 0; h < 2; ++h) {  // rows g, g + 8
      const int d = d_lane + 8 * h - 4 * q;
      const float x = p[4 * q * LD + 8 * h];
      const bool valid = u_lane + 4 * q < u_end && static_cast<unsigned>(d) < static_cast<unsigned>(C);
      MmaOps<float>::split(valid ? x : 0.f, a.big[2 * q + h], a.small[2 * q + h]);
    }
}

// A lane's share of a slab: the block's threads split into KS row groups of TPR lanes; lane
// `sub` of row ul copies the row's pieces sub, sub + TPR, … of X's segment and of Y's row.
// In an interior slab (every row u staged whole, all inside the band) every piece but the
// row's last is a whole 16 bytes of the segment, the last holds its `mis` final elements;
// edge slabs take only the band's pieces (copy_edge). Blocks of fewer than KS threads, or
// not a multiple of it, use stage_tpv_slab instead (kUsable).
// kSwizzledY (the Hopper path): Y rows go to the 128-byte-swizzled layout of wgmma_layout.cuh
// (head_dim 64: one 128-byte row per u), not to padded rows.
template <class Cfg, class T, bool kSwizzledY = false>
struct TpvLaneStage {
  static constexpr int KS = Cfg::kSlabRows, THREADS = Cfg::kThreads, V = Vec<T>::kElems, TM = Cfg::kTileRows;
  // TPR ≥ 1 keeps the type well-formed when kUsable is false (it is then never used).
  static constexpr int TPR = THREADS >= KS ? THREADS / KS : 1, PIECES = Cfg::kStageLD / V, YV = Cfg::kHeadDim / V;
  static constexpr int XK = ceil_div(PIECES, TPR), YK = ceil_div(YV, TPR);
  static constexpr bool kUsable = THREADS % KS == 0 && Cfg::kStageLD == TM + V;
  const T* xs;       // the lane's first X piece in the next slab to stage
  const T* ys;       // … and Y piece
  int x_dst, y_dst;  // elements from the slab buffers
  int last_bytes;    // bytes of the lane's piece in round XK − 1 (0: none)
  int mis;           // the phase of the lane's row (the same in every slab)
  int u_row;         // the lane's row u in the next slab to stage
  __device__ __forceinline__ TpvLaneStage(const T* x, const T* y, const TpvSlab& sl, int u_begin, i64 x_origin,
                                          i64 y_origin, i64 x_row_step, i64 y_row_step) {
    const int ul = threadIdx.x / TPR, sub = threadIdx.x % TPR;
    u_row = u_begin + ul;
    mis = (sl.m0 + u_row * sl.step) & (V - 1);
    xs = x + (x_origin + u_row * x_row_step - mis + sub * V);
    ys = y + (y_origin + u_row * y_row_step + sub * V);
    x_dst = ul * Cfg::kStageLD + sub * V;
    y_dst = kSwizzledY ? ul : ul * Cfg::kValueLD + sub * V;  // swizzled: the row (see y_at)
    const int piece = sub + (XK - 1) * TPR;  // elements mis … mis + TM − 1 are the segment
    last_bytes = piece < PIECES ? max(0, min(V, mis + TM - piece * V)) * static_cast<int>(sizeof(T)) : 0;
  }
  // Slabs are staged in order: after each, step to the next (x_slab, y_slab: elements between
  // slabs). Running pointers, not s · x_slab: the 64-bit products cost instructions per slab.
  __device__ __forceinline__ void next(i64 x_slab, i64 y_slab) {
    xs += x_slab;
    ys += y_slab;
    u_row += KS;
  }
  // Element offset of the lane's Y piece of round k in a slab's Y buffer.
  __device__ __forceinline__ int y_at(int k) const {
    if constexpr (kSwizzledY) {
      const int chunk = static_cast<int>(threadIdx.x % TPR) + k * TPR;
      return (y_dst * 128 + ((chunk ^ (y_dst & 7)) << 4)) / static_cast<int>(sizeof(T));
    } else {
      return y_dst + k * TPR * V;
    }
  }
  // The next slab into the given buffers. The caller commits.
  __device__ __forceinline__ void copy(T* seg, T* ysm) const {
#pragma unroll
    for (int k = 0; k + 1 < XK; ++k) cp_async_16_full(seg + x_dst + k * TPR * V, xs + k * TPR * V);
    if (last_bytes > 0) cp_async_16(seg + x_dst + (XK - 1) * TPR * V, xs + (XK - 1) * TPR * V, last_bytes);
#pragma unroll
    for (int k = 0; k < YK; ++k) {
      if (YV % TPR == 0 || static_cast<int>(threadIdx.x % TPR) + k * TPR < YV)
        cp_async_16_full(ysm + y_at(k), ys + k * TPR * V);
    }
  }
  // The next slab, where it meets the band's edges or the sequence's end. The lane's row
  // u_row is staged only below u_end, and only the pieces holding one of its diagonals in
  // [0, C) (tile rows lo … hi: elements mis + lo … mis + hi of the staged row), the part past
  // the band's end zero-filled (it may lie past X's end; a piece's start never lies before
  // X's). Other slots keep stale data, which load_masked never lets through. Y rows at or
  // past u_end become zeros: stale or never-written shared memory may hold NaN, and
  // 0 · NaN is NaN.
  __device__ __forceinline__ void copy_edge(T* seg, T* ysm, int u_end, int t0, const T* y_any) const {
    const int sub = threadIdx.x % TPR;
    const bool row_in = u_row < u_end;
    if (row_in) {
      const int rel = u_row - Cfg::kWindowLeft - t0;  // the tile row whose diagonal is 0
      const int first = mis + max(0, rel), last = mis + min(TM - 1, rel + Cfg::kDiagonals - 1);
#pragma unroll
      for (int k = 0; k < XK; ++k) {
        const int e = (sub + k * TPR) * V;  // the piece's first element
        if ((k + 1 < XK || sub + k * TPR < PIECES) && e <= last && e + V > first)
          cp_async_16(seg + x_dst + k * TPR * V, xs + k * TPR * V, min(V, last + 1 - e) * static_cast<int>(sizeof(T)));
      }
    }
#pragma unroll
    for (int k = 0; k < YK; ++k) {
      if (YV % TPR == 0 || sub + k * TPR < YV)
        cp_async_16(ysm + y_at(k), row_in ? ys + k * TPR * V : y_any, row_in ? 16 : 0);
    }
  }
};

// Stages slab rows u0 … u0 + KS − 1 (those < u_end): each row's X segment — the tile's
// elements tl with diagonal d = w_l + t0 + tl − u in [0, C) — in 16-byte pieces at the
// segment's phase, and the row of Y (zeros off the sequence). The caller commits.
template <class Cfg, class T>
__device__ __forceinline__ void stage_tpv_slab(T* seg, T* ys, const T* __restrict__ x, const T* __restrict__ y, int b,
                                               const BandTile& tc, const TpvSlab& sl) {
  constexpr int TM = Cfg::kTileRows, KS = Cfg::kSlabRows, LD = Cfg::kStageLD, V = Vec<T>::kElems;
  constexpr int C = Cfg::kDiagonals, WL = Cfg::kWindowLeft;
  constexpr int PIECES = LD / V;
  const int t0 = tc.t0;
  for (int idx = threadIdx.x; idx < KS * PIECES; idx += Cfg::kThreads) {
    const int ul = idx / PIECES, piece = idx - ul * PIECES;
    const int u = sl.u0 + ul;
    if (u >= sl.u_end) continue;
    const int lo = max(0, u - WL - t0), hi = min(TM - 1, u - WL - t0 + C - 1);  // tile rows of the segment
    const int mis = (sl.m0 + u * sl.step) & (V - 1);
    if (piece < (mis + lo) / V || piece > (mis + hi) / V) continue;
    // Element tl = 0 of the segment sits at X's element `origin` (it may lie before the row;
    // the pieces read start at or after element (row, max(0, d)) ≥ 0, inside the tensor).
    const i64 origin = row_offset<Cfg>(b, tc.h, tc.r + tc.D * u, C) + WL + t0 - u;
    const int count = min(V, mis + hi + 1 - piece * V);  // elements up to the segment's end
    cp_async_16(seg + ul * LD + piece * V, x + (origin - mis + piece * V), count * static_cast<int>(sizeof(T)));
  }
  stage_rows_async<Cfg, KS, Cfg::kValueLD>(ys, y, b, tc, sl.u0);
}

// Two adjacent output elements in one store (4 bytes for 16-bit types, 8 for float32).
__device__ __forceinline__ void store_pair(float* dst, float a, float b) { *reinterpret_cast<float2*>(dst) = make_float2(a, b); }
#if defined(BANDJIT_USE_FP16) || defined(BANDJIT_USE_BF16)
template <class T>
__device__ __forceinline__ void store_pair(T* dst, float a, float b) {
  *reinterpret_cast<u32*>(dst) = pack_pair(from_float<T>(a), from_float<T>(b));
}
#endif

// Shared memory of the Hopper path: 1024 bytes of slack to align the swizzle atoms, the Y
// slabs (KS rows of 128 bytes each), then the X segments.
template <class Cfg>
struct TpvWgmmaSmem {
  static constexpr int kYSlabBytes = Cfg::kSlabRows * 128;
  static constexpr unsigned kBytes = 1024 + Cfg::kStages * (kYSlabBytes + Cfg::kSlabRows * Cfg::kStageLD * 2);
};

template <class Cfg>
__device__ __forceinline__ void band_tpv(const typename Cfg::T* __restrict__ x, const typename Cfg::T* __restrict__ y,
                                         typename Cfg::T* __restrict__ z) {
  using T = typename Cfg::T;
  using Ops = MmaOps<T>;
  // The Hopper path (Cfg::kWgmma, built for sm_90a): a warpgroup's four warps own 64 rows, and
  // per k-step Z += A·Y is one wgmma with A from the warps' registers (the same fragments as
  // mma.sync's) and the slab's Y rows as a swizzled MN-major operand: one instruction in place
  // of each warp's ldmatrix and eight mma.sync.
  constexpr bool kWgmma = takes_wgmma_kernel<Cfg>();
  using Stage = TpvLaneStage<Cfg, T, kWgmma>;
  constexpr int TM = Cfg::kTileRows, KS = Cfg::kSlabRows, LD = Cfg::kStageLD, LDY = Cfg::kValueLD;
  constexpr int STAGES = Cfg::kStages, DH = Cfg::kHeadDim, WL = Cfg::kWindowLeft, WR = Cfg::kWindowRight;
  // MW m-tiles (16 rows each) per warp: each B fragment feeds MW products, and MW·NDW
  // independent accumulators hide the tensor cores' latency.
  constexpr int MW = Cfg::kRowTilesPerWarp, RW = 16 * MW;
  constexpr int V = Vec<T>::kElems, MT = TM / RW, PARTS = Cfg::kColumnParts;
  constexpr int ND = DH / 8, NDW = ceil_div(ND, PARTS);
  constexpr bool kWholeParts = ND % PARTS == 0;  // every part has NDW n-tiles: no bounds checks
  // float32 sums each slab's tensor-core partial in ordinary float adds (as band_pv): the
  // tensor cores' accumulation would lose float32's 1e-5 over thousands of diagonals.
  constexpr bool kSlabPartials = sizeof(T) == 4;
  static_assert(TM % RW == 0 && Cfg::kThreads == 32 * MT * PARTS, "one warp per row group and column part");
  static_assert(KS % Ops::kK == 0 && KS % 16 == 0, "slabs hold whole k-steps");
  static_assert(KS % V == 0 && Ops::kK % V == 0, "slabs and k-steps keep every segment's phase");
  static_assert(LD % V == 0 && LD >= TM + V - 1, "staged segments hold any phase");
  static_assert((LDY * sizeof(T)) % 16 == 0, "staged Y rows stay 16-byte aligned");
  static_assert(STAGES >= 2, "at least double buffering");

  static_assert(!kWgmma || (sizeof(T) == 2 && DH == 64 && MW == 1 && PARTS == 1 && TM % 64 == 0 && KS % 16 == 0 &&
                             Stage::kUsable && TpvWgmmaSmem<Cfg>::kBytes <= Cfg::kWgmmaSharedBytes),
                "the Hopper path: 16-bit types, head_dim 64, one m-tile and column part per warp, per-lane staging");

  extern __shared__ __align__(16) unsigned char smem[];
  T* sSeg = reinterpret_cast<T*>(smem);   // STAGES × KS × LD
  T* sY = sSeg + STAGES * KS * LD;        // STAGES × KS × LDY
  unsigned char* sYw = nullptr;           // Hopper: STAGES swizzled Y slabs, 1024-byte aligned
  if constexpr (kWgmma) {
    const u32 base = smem_addr(smem);
    sYw = smem + (((base + 1023) & ~1023u) - base);
    sSeg = reinterpret_cast<T*>(sYw + STAGES * TpvWgmmaSmem<Cfg>::kYSlabBytes);
  }

  const BandTile tc = decode_band_tile<Cfg>(blockIdx.x);
  if (tc.t0 >= tc.len) return;
  const int b = blockIdx.z;
  const int warp = threadIdx.x >> 5, mt = warp % MT, part = warp / MT;
  const int g = lane_id() >> 2, t4 = lane_id() & 3;

  // Rows u that meet the tile's valid rows: [t0 − w_r, t_end − 1 + w_l] ∩ [0, len).
  const int t_end = min(tc.t0 + TM, tc.len);
  TpvSlab sl;
  const int u_begin = max(0, tc.t0 - WR);
  sl.u_end = min(tc.len, t_end + WL);
  const int slabs = ceil_div(sl.u_end - u_begin, KS);
  // Phase of segment u: X's element of (row u, diagonal w_l + t0 − u) modulo V. Rows of one
  // residue are D·H (bnhd) or D (bhnd) band rows apart, and the diagonal drops by one per row.
  const i64 row_stride = Cfg::kLayout == kLayoutBNHD ? i64(tc.D) * Cfg::kHeads : i64(tc.D);
  const i64 x_row_step = row_stride * Cfg::kDiagonals - 1, y_row_step = row_stride * DH;
  sl.step = static_cast<int>(x_row_step & (V - 1));
  const i64 x_origin = row_offset<Cfg>(b, tc.h, tc.r, Cfg::kDiagonals) + WL + tc.t0;  // segment of row u = 0
  const i64 y_origin = row_offset<Cfg>(b, tc.h, tc.r, DH);
  sl.m0 = static_cast<int>(x_origin & (V - 1));
  Stage lane_stage(x, y, sl, u_begin, x_origin, y_origin, x_row_step, y_row_step);

  const int tl0 = RW * mt;       // the warp's first tile row
  const int tg = tc.t0 + tl0;    // … as a sub-sequence index
  const bool has_rows = tg < tc.len;
  const TpvLaneA<Cfg, T> lane_a(sl, u_begin, tl0);

  // Slab s covers rows u0 = u_begin + s·KS …; it is interior when every row is staged whole
  // and lies inside the band of every tile row: u0 ≥ t0 + TM − 1 − w_r, u0 + KS − 1 ≤ t0 + w_l.
  // Interior slabs are the contiguous range [s_lo, s_hi).
  const int s_lo = max(0, ceil_div(max(0, tc.t0 + TM - 1 - WR - u_begin), KS));
  const int last_start = min(sl.u_end - KS, tc.t0 + WL - KS + 1) - u_begin;  // of the last interior slab
  const int s_hi = last_start < 0 ? 0 : min(slabs, last_start / KS + 1);
  const i64 x_slab = KS * x_row_step, y_slab = KS * y_row_step;
  // A band narrower than TM + KS − 1 diagonals has no interior slab: leave the unchecked
  // paths out of the kernel (their registers made the narrow bands' kernels spill).
  constexpr bool kInterior = Stage::kUsable && WL + WR >= TM + KS - 2;
  auto stage = [&](int s_index) {
    const int buf = s_index % STAGES;
    T* seg = sSeg + buf * KS * LD;
    T* ysm = kWgmma ? reinterpret_cast<T*>(sYw + buf * TpvWgmmaSmem<Cfg>::kYSlabBytes) : sY + buf * KS * LDY;
    if (kInterior && s_index >= s_lo && s_index < s_hi) {
      lane_stage.copy(seg, ysm);
    } else if constexpr (Stage::kUsable) {
      lane_stage.copy_edge(seg, ysm, sl.u_end, tc.t0, y);
    } else {
      TpvSlab at = sl;
      at.u0 = u_begin + s_index * KS;
      stage_tpv_slab<Cfg>(seg, ysm, x, y, b, tc, at);
    }
    lane_stage.next(x_slab, y_slab);
  };

  float acc[MW][NDW][4];
#pragma unroll
  for (int m = 0; m < MW; ++m)
#pragma unroll
    for (int n = 0; n < NDW; ++n) acc[m][n][0] = acc[m][n][1] = acc[m][n][2] = acc[m][n][3] = 0.f;
  // Pins the zeros before the loop: otherwise ptxas may copy them onto a path that bypasses
  // the loop, and wgmma whose accumulators other instructions define are serialised (C7515;
  // seen for bhnd problems with C ≡ 1 mod 8).
  if constexpr (kWgmma) wgmma_fence_operands<NDW * 4>(&acc[0][0][0]);

#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) {
    if (s < slabs) stage(s);
    cp_async_commit();
  }

#pragma unroll 1
  for (int it = 0; it < slabs; ++it) {
    cp_async_wait<STAGES - 2>();
    if constexpr (kWgmma) {
      // The previous slab's products ran while this slab's copies were awaited; they must be
      // done before the barrier, after which its buffer refills.
      wgmma_wait<0>();
      wgmma_fence_operands<NDW * 4>(&acc[0][0][0]);
      fence_proxy_async();  // the Y rows → the tensor cores' view
    }
    __syncthreads();  // slab `it` landed everywhere; the buffer of slab it − 1 is free
    if (it + STAGES - 1 < slabs) stage(it + STAGES - 1);
    cp_async_commit();
    if constexpr (kWgmma) {
      // Every warp takes part in every wgmma of every slab, with no branch around them: ptxas
      // serialises wgmma it finds on a possibly divergent path. So k-steps off a warp's band
      // (and warpgroups past the sequence's end) multiply zeros or rows never stored.
      const int buf = it % STAGES;
      const T* seg = sSeg + buf * KS * LD;
      const u64 dy = wgmma_desc(smem_addr(sYw + buf * TpvWgmmaSmem<Cfg>::kYSlabBytes), KS * 128, 1024);
      const int u0 = u_begin + it * KS;
      const bool interior = kInterior && it >= s_lo && it < s_hi;
      typename Ops::AFrag a[KS / 16];
#pragma unroll
      for (int q = 0; q < KS / 16; ++q) {
        const int uk = u0 + 16 * q;
        // The warp's rows tg … tg + 15 see u in [tg − w_r, tg + 15 + w_l].
        if (!interior && (uk + 15 < tg - WR || uk > tg + 15 + WL)) {
          a[q].r[0] = a[q].r[1] = a[q].r[2] = a[q].r[3] = 0u;
        } else if (interior || (uk >= tg + 15 - WR && uk + 15 <= tg + WL && uk + 16 <= sl.u_end)) {
          load_inner<Cfg>(a[q], seg, lane_a, 16 * q);
        } else {
          load_masked<Cfg>(a[q], seg, lane_a, 16 * q, 0, uk, tg, sl.u_end);
        }
      }
      wgmma_fence_operands<NDW * 4>(&acc[0][0][0]);
      wgmma_fence();
#pragma unroll
      for (int q = 0; q < KS / 16; ++q) wgmma_rs<T>(&acc[0][0][0], a[q].r, dy + wgmma_desc_offset(16 * q * 128));
      wgmma_commit();  // awaited at the next slab (or after the loop)
      continue;
    }
    if (!has_rows) continue;
    const int buf = it % STAGES;
    const T* seg = sSeg + buf * KS * LD;
    const T* ys = sY + buf * KS * LDY;
    const int u0 = u_begin + it * KS;  // the slab's first row

    // sum[m] += A[m] · (rows kk … kk + kK − 1 of the staged Y, the warp's columns).
    auto mul_b_row = [&](float(&sum)[MW][NDW][4], const typename Ops::AFrag(&a)[MW], const T* ys_, int kk) {
      constexpr bool kPairs = sizeof(T) == 2;
#pragma unroll
      for (int n = 0; n < NDW; n += kPairs ? 2 : 1) {
        const int nd = part * NDW + n;
        if constexpr (kPairs) {
          if (n + 1 < NDW && (kWholeParts || nd + 1 < ND)) {
            typename Ops::BFrag b0, b1;
            Ops::load_b_kn_x2(b0, b1, ys_, LDY, kk, 8 * nd);
#pragma unroll
            for (int m = 0; m < MW; ++m) {
              Ops::mma(sum[m][n], a[m], b0);
              Ops::mma(sum[m][n + 1], a[m], b1);
            }
            continue;
          }
        }
        if (kWholeParts || nd < ND) {
          typename Ops::BFrag bf;
          Ops::load_b_kn(bf, ys_, LDY, kk, 8 * nd);
#pragma unroll
          for (int m = 0; m < MW; ++m) Ops::mma(sum[m][n], a[m], bf);
        }
      }
    };
    // Z += A·Y over the slab's k-steps that meet the warp's band, into `sum`.
    auto slab_product = [&](float(&sum)[MW][NDW][4]) {
#pragma unroll
      for (int kk = 0; kk < KS; kk += Ops::kK) {
        const int uk = u0 + kk;
        // The band of rows tg … tg + RW − 1 spans u in [tg − w_r, tg + RW − 1 + w_l].
        if (uk + Ops::kK - 1 < tg - WR || uk > tg + RW - 1 + WL) continue;
        typename Ops::AFrag a[MW];
#pragma unroll
        for (int m = 0; m < MW; ++m) {
          const int tm = tg + 16 * m;
          // Inside the band for all 16 rows of m-tile m and all kK rows u, every row u staged.
          const bool inner = uk >= tm + 15 - WR && uk + Ops::kK - 1 <= tm + WL && uk + Ops::kK <= sl.u_end;
          if (inner)
            load_inner<Cfg>(a[m], seg, lane_a, kk, 16 * m);
          else
            load_masked<Cfg>(a[m], seg, lane_a, kk, 16 * m, uk, tm, sl.u_end);
        }
        mul_b_row(sum, a, ys, kk);
      }
    };
    if (kInterior && !kSlabPartials && it >= s_lo && it < s_hi) {
      // Interior: every k-step is inside the band for every row of the tile.
#pragma unroll
      for (int kk = 0; kk < KS; kk += Ops::kK) {
        typename Ops::AFrag a[MW];
#pragma unroll
        for (int m = 0; m < MW; ++m) load_inner<Cfg>(a[m], seg, lane_a, kk, 16 * m);
        mul_b_row(acc, a, ys, kk);
      }
    } else if constexpr (kSlabPartials) {
      float part_acc[MW][NDW][4];
#pragma unroll
      for (int m = 0; m < MW; ++m)
#pragma unroll
        for (int n = 0; n < NDW; ++n)
          part_acc[m][n][0] = part_acc[m][n][1] = part_acc[m][n][2] = part_acc[m][n][3] = 0.f;
      slab_product(part_acc);
#pragma unroll
      for (int m = 0; m < MW; ++m)
#pragma unroll
        for (int n = 0; n < NDW; ++n)
#pragma unroll
          for (int e = 0; e < 4; ++e) acc[m][n][e] += part_acc[m][n][e];
    } else {
      slab_product(acc);
    }
  }
  cp_async_wait<0>();  // no copy may outlive the block
  if constexpr (kWgmma) {
    wgmma_wait<0>();
    wgmma_fence_operands<NDW * 4>(&acc[0][0][0]);
  }

  // Z leaves through shared memory (the slab buffers, free once every warp's last products
  // are done) as 16-byte row pieces; where the tile does not fit there, from the fragments.
  // Rows 16-byte aligned and 4 banks apart: the 16-bit types' 4-byte stores meet no conflict
  // (float32's 8-byte stores meet two-way ones, once per tile).
  constexpr int LDZ = DH + 16 / static_cast<int>(sizeof(T));
  constexpr unsigned kPipelineBytes = kWgmma ? TpvWgmmaSmem<Cfg>::kBytes - 1024u
                                             : unsigned(STAGES * KS * (LD + LDY) * sizeof(T));
  constexpr bool kStagedZ = TM * LDZ * sizeof(T) <= kPipelineBytes;
  T* sZ = kWgmma ? reinterpret_cast<T*>(sYw) : sSeg;
  if constexpr (kStagedZ) __syncthreads();
#pragma unroll
  for (int m = 0; m < MW; ++m)
#pragma unroll
    for (int n = 0; n < NDW; ++n) {
      const int nd = part * NDW + n;
      if (!kWholeParts && nd >= ND) continue;
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int tl = tl0 + 16 * m + g + 8 * h, t = tc.t0 + tl;
        if (kStagedZ) {
          store_pair(sZ + tl * LDZ + 8 * nd + 2 * t4, acc[m][n][2 * h], acc[m][n][2 * h + 1]);
        } else if (t < tc.len) {
          T* dst = z + row_offset<Cfg>(b, tc.h, tc.r + tc.D * t, DH) + 8 * nd + 2 * t4;
          store_pair(dst, acc[m][n][2 * h], acc[m][n][2 * h + 1]);
        }
      }
    }
  if constexpr (kStagedZ) {
    __syncthreads();
    write_row_range<Cfg, TM, LDZ, Cfg::kThreads>(z, sZ, b, tc, tc.t0);
  }
}

}  // namespace bandjit
