// bandjit/layer_norm.cuh — LayerNorm over rows of H = Cfg::kHidden elements (Ba et al. 2016),
// with Apex MixedFusedLayerNorm's mixed precision: x, y, dy, dx of type T; weight, bias,
// dweight, dbias, mean, rstd float32; all math in float32 (docs/layer_norm.md).
//
//   forward:  mean = Σx/H, rstd = 1/sqrt(Σ(x − mean)²/H + ε), y = (x − mean)·rstd·w + b
//   backward: x̂ = (x − mean)·rstd, g = dy·w,
//             dx = rstd·(g − Σg/H − x̂·Σ(g·x̂)/H), dweight += Σ_rows dy·x̂, dbias += Σ_rows dy
//
// kRowThreads (R) threads share a row; thread lr holds the pieces lr, lr + R, … of V
// elements (one vector access each; V divides H, so every piece is aligned). With
// kRowBundle = 2 a group takes two consecutive rows as one unit of 2H elements: 16-bit rows
// of H ≡ 4 (mod 8) elements (H = 100) are 8 bytes short of a 16-byte multiple, but two of
// them are not, so the unit moves in 16-byte pieces where a row alone would take 8-byte ones.
// Each unit position then belongs to the first row (i < H) or the second, whose sums are
// kept apart; H is a multiple of 4, so a quad of weights never straddles the two rows. With
// kChunks = 1 the row stays in registers: read once, reduced twice (mean, then the squared
// deviations: no E[x²] − E[x]² cancellation), written once. With kChunks > 1 (rows too long
// for registers) the row is walked chunk by chunk and re-read, which mostly hits the L2.
// The caller passes the block's dynamic shared memory; there is no static __shared__.
#pragma once

#include "bandjit/cluster.cuh"
#include "bandjit/common.cuh"
#include "bandjit/opaque.cuh"

namespace bandjit {
namespace ln {

template <int BYTES> struct RawOf;
template <> struct RawOf<16> { typedef uint4 type; };
template <> struct RawOf<8> { typedef unsigned long long type; };
template <> struct RawOf<4> { typedef unsigned type; };
template <> struct RawOf<2> { typedef unsigned short type; };

// A block covers a slice of HS = H / CB columns of its rows: the whole row, or with
// kClusterBlocks = CB > 1 one of the CB slices the blocks of a cluster share.
// A unit is kRowBundle rows of W = H · kRowBundle elements; rows, blocks and groups below
// count units.
template <class Cfg>
struct Shape {
  using T = typename Cfg::T;
  static constexpr int B = Cfg::kRowBundle, H = Cfg::kHidden, W = H * B;
  static constexpr int CB = Cfg::kClusterBlocks, HS = W / CB, V = Cfg::kVec, P = HS / V;
  static constexpr int R = Cfg::kRowThreads, NV = Cfg::kPiecesPerThread, CH = Cfg::kChunks;
  static constexpr int RPB = Cfg::kRowsPerBlock;
  static constexpr i64 kUnits = Cfg::kRows / B;
  static_assert(B == 1 || (B == 2 && CB == 1 && CH == 1 && H % 4 == 0 && V % 4 == 0 && Cfg::kRows % 2 == 0),
                "two-row units: one block a unit, in registers, no quad across the rows, whole units");
  // Whether unit position i belongs to the unit's second row; the sums of the two rows are
  // the .x and .y of a float2 (.y unused with one row a unit).
  static __device__ __forceinline__ bool second(int i) { return B == 2 && i >= H; }
  static __device__ __forceinline__ void add(float2& acc, int i, float v) {
    if (second(i)) acc.y += v;
    else acc.x += v;
  }
  static __device__ __forceinline__ float pick(float2 a, int i) { return second(i) ? a.y : a.x; }
  // How far position i's column lies before it: H in the unit's second row, else 0.
  static __device__ __forceinline__ int row_start(int i) { return second(i) ? H : 0; }
  using Raw = typename RawOf<V * static_cast<int>(sizeof(T))>::type;
  // Dynamic shared memory starts with the reduction scratch (2 floats a warp), then 4 floats
  // of cluster slots, then with CB > 1 the forward's mailbox (cluster.cuh); each a multiple
  // of 4 floats, so what follows stays 16-byte aligned (the mailbox's barriers 8-byte).
  static constexpr int kSlots = (2 * (Cfg::kThreads / 32) + 3) / 4 * 4;
  static constexpr int kMailbox = kSlots + 4;
  static constexpr int kScratch = kMailbox + (CB > 1 ? 4 + 4 * CB : 0);
  static_assert(sizeof(ClusterMailbox<CB>) == (4 + 4 * CB) * 4, "the generator's layer_norm_scratch_bytes");
  // Shared slot of columns [p·V + q, p·V + q + 4) of a column-sum slice (q a multiple of 4):
  // quad q of every piece side by side, so a warp's 16-byte accesses to its consecutive
  // pieces are conflict-free. Without quads (V < 4, H odd or 2 mod 4) the slot is the column.
  static __device__ __forceinline__ int slot(int p, int q) { return V % 4 == 0 ? (q / 4) * (P * 4) + p * 4 : p * V + q; }
  // Piece e of chunk k of row-thread lr: consecutive lanes take consecutive pieces.
  static __device__ __forceinline__ int piece(int k, int e, int lr) { return (k * NV + e) * R + lr; }
};

template <int V, class T, class Raw>
__device__ __forceinline__ void unpack(const Raw& raw, float* out) {
  const auto e = elements<T>(raw);
#pragma unroll
  for (int c = 0; c < V; ++c) out[c] = e[c];
}

// Elements of weight/bias loaded at once: 4 (one 16-byte load) when V allows.
template <int V>
constexpr int kQuad = V % 4 == 0 ? 4 : V;

// V consecutive float32 at p (aligned to the piece: 4·V bytes, 16 at most).
template <int V>
__device__ __forceinline__ void load_floats(const float* p, float* out) {
  if constexpr (V % 4 == 0) {
#pragma unroll
    for (int k = 0; k < V / 4; ++k) {
      const float4 f = reinterpret_cast<const float4*>(p)[k];
      out[4 * k] = f.x, out[4 * k + 1] = f.y, out[4 * k + 2] = f.z, out[4 * k + 3] = f.w;
    }
  } else if constexpr (V == 2) {
    const float2 f = *reinterpret_cast<const float2*>(p);
    out[0] = f.x, out[1] = f.y;
  } else {
    out[0] = p[0];
  }
}

// dst[0, Q) += v[0, Q) in shared memory, 16 bytes at once when Q == 4 (dst aligned).
template <int Q>
__device__ __forceinline__ void shared_add(float* dst, const float* v) {
  if constexpr (Q == 4) {
    float4 t = *reinterpret_cast<float4*>(dst);
    t.x += v[0], t.y += v[1], t.z += v[2], t.w += v[3];
    *reinterpret_cast<float4*>(dst) = t;
  } else {
#pragma unroll
    for (int c = 0; c < Q; ++c) dst[c] += v[c];
  }
}

// dst[0, V) += v[0, V) in global memory; 16-byte reductions on sm_90 (aligned: V % 4 == 0).
template <int V>
__device__ __forceinline__ void red_add(float* dst, const float* v) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  if constexpr (V % 4 == 0) {
#pragma unroll
    for (int k = 0; k < V / 4; ++k)
      atomicAdd(reinterpret_cast<float4*>(dst) + k, make_float4(v[4 * k], v[4 * k + 1], v[4 * k + 2], v[4 * k + 3]));
  } else
#endif
  {
#pragma unroll
    for (int c = 0; c < V; ++c) atomicAdd(dst + c, v[c]);
  }
}

// Sum of (x, y) over the R threads of a row (R a power of two; R > 32: whole warps, through
// scratch[2 · warps]). Every thread of the block calls it the same number of times.
template <int R>
__device__ __forceinline__ float2 group_sum(float2 v, float* scratch) {
#pragma unroll
  for (int o = (R < 32 ? R : 32) / 2; o > 0; o >>= 1) {
    v.x += __shfl_xor_sync(0xffffffffu, v.x, o);
    v.y += __shfl_xor_sync(0xffffffffu, v.y, o);
  }
  if constexpr (R > 32) {
    const int warp = threadIdx.x >> 5, first = warp - warp % (R / 32);
    if ((threadIdx.x & 31) == 0) scratch[2 * warp] = v.x, scratch[2 * warp + 1] = v.y;
    __syncthreads();
    v = make_float2(0.f, 0.f);
#pragma unroll
    for (int w = 0; w < R / 32; ++w) v.x += scratch[2 * (first + w)], v.y += scratch[2 * (first + w) + 1];
    __syncthreads();
  }
  return v;
}

// The row's sums over the CB blocks of its cluster: each block's sum goes to its own
// shared slots, alternating between two (by `parity`) so that one cluster barrier per
// reduction suffices: a block writes a slot again only after the next barrier, which every
// block reaches only after reading this round's slots. Without clusters (sm_80, the
// emulator) the caller has summed the whole row itself and v is returned unchanged.
// The barrier's arrive releases only the block's own shared-memory accesses (the slot
// write) for its peers: a release of everything compiles to MEMBAR.ALL.GPU, which cost up to
// 12 points at H = 65536. That a warp's reads of the peers' slots are done before any later
// arrive (a peer reuses its slot two reductions later, or exits) comes instead from the
// warp storing their sum to its `scratch` word: that store cannot be performed before the
// loads it is computed from have returned, and every later arrive follows a release fence
// that orders the store before it. (This rests on that causality, not on a PTX rule for
// .shared::cluster reads; bench/results/2026-12-03-layer-norm-row-pairs, call 6.)
template <int CB>
__device__ __forceinline__ float2 cluster_sum(float2 v, float* scratch, float* slots, int parity) {
#if defined(BANDJIT_CLUSTERS)
  if constexpr (CB > 1) {
    float* mine = slots + 2 * parity;
    if (threadIdx.x == 0) mine[0] = v.x, mine[1] = v.y;
    cluster_arrive_shared_release();
    cluster_wait();
    v = make_float2(0.f, 0.f);
#pragma unroll
    for (int r = 0; r < CB; ++r) v.x += cluster_load(mine, r), v.y += cluster_load(mine + 1, r);
    if ((threadIdx.x & 31) == 0) scratch[2 * (threadIdx.x >> 5)] = v.x + v.y;
  }
#else
  (void)scratch;
#endif
  return v;
}

// A row's (mean, M2 = Σ(x − mean)²) from the CB blocks of its cluster, each holding its
// slice's (mean_r, M2_r) over HS columns, M2_r taken about mean_r: one exchange through the
// mailbox (cluster.cuh: st.async, no cluster barrier, no exit barrier) where two sums (Σx,
// then the deviations from the row's mean) take two. Chan, Golub and LeVeque (1979), equal
// counts: mean = Σ_r mean_r / CB, M2 = Σ_r M2_r + HS · Σ_r (mean_r − mean)², in rank order,
// so every block gets the same bits. With a cluster barrier and reads of the peers' slots
// instead, H = 65536 ran 2–3 points slower (bench/results/2026-12-04-mailbox).
template <int CB, int HS>
__device__ __forceinline__ float2 mailbox_moments(float2 v, ClusterMailbox<CB>* box, int round) {
#if defined(BANDJIT_CLUSTERS)
  const float2* slots = mailbox_exchange<CB>(box, v, round);
  float m2 = 0.f, mean = 0.f;
#pragma unroll
  for (int r = 0; r < CB; ++r) mean += slots[r].x, m2 += slots[r].y;
  mean /= float(CB);
#pragma unroll
  for (int r = 0; r < CB; ++r) {
    const float d = slots[r].x - mean;
    m2 += float(HS) * d * d;
  }
  return make_float2(mean, m2);
#else
  (void)box, (void)round;
  return v;
#endif
}

// No block of a cluster may exit while another can still read its slots: a peer's reads of
// ours have returned before it arrives (cluster_sum's scratch store, ordered before the
// arrive by the fence), and nothing else need be visible to the peers.
template <int CB>
__device__ __forceinline__ void cluster_finish() {
#if defined(BANDJIT_CLUSTERS)
  if constexpr (CB > 1) cluster_arrive_shared_release(), cluster_wait();
#endif
}

// Σg and Σg·x̂ of one piece (g = dy·w; i0: the piece's first unit position, w_at: weight + i0,
// so a second-row quad reads H before it; .y of the float2s: the unit's second row).
// kHeld: w_at is the thread's own register copy of the piece's weights (read element by
// element, so it stays in registers).
template <class Cfg, bool kHeld = false, class Raw>
__device__ __forceinline__ void add_piece_sums(const Raw& raw_dy, const Raw& raw_x, const float* w_at, int i0,
                                               float2 mean2, float2 rstd2, float2& sg, float2& sgx) {
  using T = typename Cfg::T;
  using S = Shape<Cfg>;
  constexpr int V = Cfg::kVec, Q = kQuad<V>;
  // Element by element (not elements<T>): bfloat16 by words spilled on sm_80 (H = 12288) and
  // measured 1.7–3.9 % slower on the H200 (bench/results/2026-12-03-bfloat16-words).
  const T* in_dy = reinterpret_cast<const T*>(&raw_dy);
  const T* in_x = reinterpret_cast<const T*>(&raw_x);
#pragma unroll
  for (int q = 0; q < V; q += Q) {
    const bool second = S::second(i0 + q);  // the quad's row of the unit (H % 4 == 0)
    const float mean = S::pick(mean2, i0 + q), rstd = S::pick(rstd2, i0 + q);
    float w[Q];
    if constexpr (Cfg::kWeight && kHeld) {
#pragma unroll
      for (int c = 0; c < Q; ++c) w[c] = w_at[q + c];
    } else if constexpr (Cfg::kWeight) {
      load_floats<Q>(w_at + q - S::row_start(i0 + q), w);
    }
    float a = 0.f, ax = 0.f;
#pragma unroll
    for (int c = 0; c < Q; ++c) {
      const float xh = (to_float(in_x[q + c]) - mean) * rstd;
      const float g = Cfg::kWeight ? to_float(in_dy[q + c]) * w[c] : to_float(in_dy[q + c]);
      if constexpr (S::B == 1) {
        sg.x += g, sgx.x += g * xh;
      } else {
        a += g, ax += g * xh;
      }
    }
    if constexpr (S::B == 2) {
      if (second) sg.y += a, sgx.y += ax;
      else sg.x += a, sgx.x += ax;
    }
  }
}

// The piece loop of both directions: for each chunk k of the row (loaded first when the
// row takes several, CH > 1), f(e, p) for each of the thread's pieces p < P. It inlines to the
// instructions of the three loops it replaced (bench/results/2026-12-01-layer-norm-sass-parity).
template <class S, int CH, int NV, int P, class Load, class F>
__device__ __forceinline__ void for_each_piece(int lr, Load& load, F&& f) {
#pragma unroll 1
  for (int k = 0; k < CH; ++k) {
    if (CH > 1) load(k);
#pragma unroll
    for (int e = 0; e < NV; ++e) {
      const int p = S::piece(k, e, lr);
      if (p >= P) continue;
      f(e, p);
    }
  }
}

// 16 bytes into the ring through the L1 (cp.async.ca: an SM's blocks share the weights they
// find there; cp.async.cg read twice the L2 sectors, bench/results/2026-12-04-weight-ring).
__device__ __forceinline__ void ring_copy(float* smem, const float* gmem) {
#if defined(__CUDA_ARCH__)
  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.ca.shared.global [%0], [%1], 16;\n" ::"r"(s), "l"(gmem));
#else
  cp_async_16_full(smem, gmem);
#endif
}

}  // namespace ln

// Cfg::kWeightAhead where the generator emitted it (pieces whose weight and bias a thread
// loads with the row, before its statistics are known), else 0.
template <class C, class = void>
struct WeightAheadOf {
  static constexpr int pieces = 0;
};
template <class C>
struct WeightAheadOf<C, decltype(void(C::kWeightAhead))> {
  static constexpr int pieces = C::kWeightAhead;
};

// Cfg::kWeightRing where the generator emitted it (pieces of weight and bias a thread keeps in
// flight into its own shared-memory slots by cp.async), else 0.
template <class C, class = void>
struct WeightRingOf {
  static constexpr int pieces = 0;
};
template <class C>
struct WeightRingOf<C, decltype(void(C::kWeightRing))> {
  static constexpr int pieces = C::kWeightRing;
};

// Each block (cluster) takes kRowIterations row groups of kRowsPerBlock row sets in a row: set =
// (blockIdx.x / CB · kRowIterations + it) · kRowsPerBlock + group; with clusters each block
// holds one slice of the row (as in the backward). A set is kRowSet = M consecutive units
// (M = 2: one row a unit, in registers): a thread holds the same columns of both rows, sums
// them in the .x and .y of one reduction, and reads each weight and bias once for both
// (16-bit rows of H = 1024 … 16384: +1 … +4 points; docs/layer_norm.md). With kPrefetch
// (kChunks = 1, M = 1) a thread loads its pieces of the next row before reducing this one,
// so the SM's loads stay in flight across the reductions' barriers (the grid is then a few
// waves of resident blocks).
// With kWeightRing = KR (one chunk, one row a unit and a set, no prefetch) a thread copies
// the weight and bias of its pieces into KR shared-memory slots of its own by cp.async: the
// first KR with the row, each next one as a slot is used. They need no registers while in
// flight (weights ahead in registers stop at one piece at 64 registers), and no barrier:
// only the thread that copied a slot reads it.
template <class Cfg>
__device__ __forceinline__ void layer_norm_forward(const typename Cfg::T* __restrict__ x,
                                                   const float* __restrict__ weight, const float* __restrict__ bias,
                                                   typename Cfg::T* __restrict__ y, float* __restrict__ mean_out,
                                                   float* __restrict__ rstd_out, float* smem) {
  using S = ln::Shape<Cfg>;
  using T = typename S::T;
  using Raw = typename S::Raw;
  constexpr int H = S::H, HS = S::HS, CB = S::CB, V = S::V, P = S::P, R = S::R, NV = S::NV, CH = S::CH;
  constexpr int M = Cfg::kRowSet;
  constexpr bool PF = Cfg::kPrefetch && CH == 1;
  static_assert(M == 1 || (M == 2 && S::B == 1 && CH == 1 && !PF), "row pairs: one row a unit, in registers");
  const int lr = threadIdx.x % R, group = threadIdx.x / R;
  const int rank = row_block_rank<CB>();
  const i64 block_group = blockIdx.x / CB;
  auto set_of = [&](int it) { return (block_group * Cfg::kRowIterations + it) * S::RPB + group; };
  Raw raw[M][NV], next[PF ? NV : 1];
  // In a cluster (one row a set and a unit) a row's statistics take one exchange of the
  // blocks' moments (mailbox_moments). Elsewhere the row's sum is reduced first, then the
  // deviations from its mean (the emulator and sm_80 sum whole rows).
  constexpr bool kMoments = kClusters && CB > 1 && M == 1 && S::B == 1;
  auto* mailbox = reinterpret_cast<ClusterMailbox<CB>*>(smem + S::kMailbox);
  (void)mailbox;
#if defined(BANDJIT_CLUSTERS)
  if constexpr (kMoments) mailbox_open<CB>(mailbox);
#endif
  // Chunk k of this thread's pieces of `row` (zero bits past the row and past the last row).
  auto load_into = [&](Raw* dst, i64 row, int k) {
    const bool active = row < S::kUnits;
    const i64 at0 = row * S::W + rank * HS;
#pragma unroll
    for (int e = 0; e < NV; ++e) {
      const int p = S::piece(k, e, lr);
      dst[e] = active && p < P ? *reinterpret_cast<const Raw*>(x + at0 + p * V) : Raw{};
    }
  };
  if (PF) load_into(raw[0], set_of(0), 0);

#pragma unroll 1
  for (int it = 0; it < Cfg::kRowIterations; ++it) {
    i64 unit[M];  // one row, or a two-row bundle; with M = 2 the set's two rows
    bool live[M];
#pragma unroll
    for (int m = 0; m < M; ++m) unit[m] = set_of(it) * M + m, live[m] = unit[m] < S::kUnits;
    // With whole sets every member of a live set is live: no predicate on the second row's
    // stores (predicated, they cost 35 spilled registers at 16-bit H = 65536, cluster of 4).
    const bool whole_sets = S::kUnits % M == 0;
    const bool active = live[0];  // the set's first unit: a later one is live only if it is
    auto load = [&](int k) {
#pragma unroll
      for (int m = 0; m < M; ++m) load_into(raw[m], unit[m], k);
    };
    // Which sum of a float2 a value at unit position i of set member m adds to: .y for the
    // second row of a set (M = 2) or of a unit (B = 2).
    auto second = [&](int m, int i) { return M == 2 ? m == 1 : S::second(i); };
    auto add = [&](float2& acc, int m, int i, float v) {
      if (second(m, i)) acc.y += v;
      else acc.x += v;
    };
    auto pick = [&](float2 a, int m, int i) { return second(m, i) ? a.y : a.x; };
    // Without clusters: adds the other slices of a cluster row (read from global memory) to
    // acc, as values or as squared deviations from `center`.
    auto other_slices = [&](float& acc, i64 row, bool squares, float center) {
#if !defined(BANDJIT_CLUSTERS)
      if constexpr (CB > 1) {
        if (row >= S::kUnits) return;
        for (int r2 = 0; r2 < CB; ++r2) {
          if (r2 == rank) continue;
          for (int k = 0; k < CH; ++k)
#pragma unroll
            for (int e = 0; e < NV; ++e) {
              const int p = S::piece(k, e, lr);
              if (p >= P) continue;
              float v[V];
              ln::unpack<V, T>(*reinterpret_cast<const Raw*>(x + row * S::W + r2 * HS + p * V), v);
#pragma unroll
              for (int c = 0; c < V; ++c) acc += squares ? (v[c] - center) * (v[c] - center) : v[c];
            }
        }
      }
#endif
    };
    if (CH == 1 && !PF) load(0);
    // Column of weight and bias for quad q of piece p (H % 4 == 0: a quad lies in one row of the unit).
    auto weight_column = [&](int p, int q) { return rank * HS + p * V + q - S::row_start(p * V + q); };
    // The ring: slot e % KR holds piece e's V weights, then its V biases, at
    // smem + kScratch + ((slot · 2 + array) · kThreads + thread) · V floats.
    constexpr int KR = CH == 1 && M == 1 && S::B == 1 && !PF ? (WeightRingOf<Cfg>::pieces < NV ? WeightRingOf<Cfg>::pieces : NV) : 0;
    static_assert(KR == 0 || V % 4 == 0, "the ring copies 16-byte quads");
    auto ring_at = [&](int e, int array) { return smem + S::kScratch + (((e % (KR ? KR : 1)) * 2 + array) * Cfg::kThreads + threadIdx.x) * V; };
    // Piece e's copies (none past the thread's pieces or the last row) as one commit group.
    auto ring_issue = [&](int e) {
      const int p = S::piece(0, e, lr);
      if (active && e < NV && p < P) {
        asm volatile("" ::: "memory");  // the slot's earlier reads stay before its refill
#pragma unroll
        for (int q = 0; q < V; q += 4) {
          if constexpr (Cfg::kWeight) ln::ring_copy(ring_at(e, 0) + q, weight + weight_column(p, q));
          if constexpr (Cfg::kBias) ln::ring_copy(ring_at(e, 1) + q, bias + weight_column(p, q));
        }
      }
      cp_async_commit();
    };
#pragma unroll
    for (int e = 0; e < KR; ++e) ring_issue(e);
    // Weight and bias of the first KA pieces into registers ahead of the output loop, so that
    // their L2 latency overlaps the reductions instead of following them.
    constexpr int KA = CH == 1 && !KR ? (WeightAheadOf<Cfg>::pieces < NV ? WeightAheadOf<Cfg>::pieces : NV) : 0;
    float wa[KA ? KA : 1][V], ba[KA ? KA : 1][V];
#pragma unroll
    for (int e = 0; e < KA; ++e) {
      const int p = S::piece(0, e, lr);
      if (p >= P) continue;
#pragma unroll
      for (int q = 0; q < V; q += ln::kQuad<V>) {  // by quads, as the output loop: a unit's piece may span its rows
        const int wc = weight_column(p, q);
        if constexpr (Cfg::kWeight) ln::load_floats<ln::kQuad<V>>(weight + wc, wa[e] + q);
        if constexpr (Cfg::kBias) ln::load_floats<ln::kQuad<V>>(bias + wc, ba[e] + q);
      }
    }
    if constexpr (PF) {
      if (it + 1 < Cfg::kRowIterations) load_into(next, set_of(it + 1), 0);
    }

    float2 sum = make_float2(0.f, 0.f);  // absent pieces are zero bits: they add 0
#pragma unroll 1
    for (int k = 0; k < CH; ++k) {
      if (CH > 1) load(k);
#pragma unroll
      for (int m = 0; m < M; ++m)
#pragma unroll
        for (int e = 0; e < NV; ++e) {
          float v[V];
          ln::unpack<V, T>(raw[m][e], v);
          const int i0 = S::piece(k, e, lr) * V;
#pragma unroll
          for (int c = 0; c < V; ++c) add(sum, m, i0 + c, v[c]);
        }
    }
    other_slices(sum.x, unit[0], false, 0.f);
    if constexpr (M == 2) other_slices(sum.y, unit[M - 1], false, 0.f);
    if constexpr (CH == 1) {  // convert again after the reduction: no floats live across it
#pragma unroll
      for (int m = 0; m < M; ++m)
#pragma unroll
        for (int e = 0; e < NV; ++e) opaque(raw[m][e]);
    }
    // kMoments: each block's squared deviations are taken about its slice's own mean.
    const float2 total = kMoments ? ln::group_sum<R>(sum, smem)
                                  : ln::cluster_sum<CB>(ln::group_sum<R>(sum, smem), smem, smem + S::kSlots, 0);
    float2 mean = make_float2(total.x / float(kMoments ? HS : H), total.y / float(H));

    float2 sq = make_float2(0.f, 0.f);
#pragma unroll 1
    for (int k = 0; k < CH; ++k) {
      if (CH > 1) load(k);
#pragma unroll
      for (int m = 0; m < M; ++m)
#pragma unroll
        for (int e = 0; e < NV; ++e) {
          const int p = S::piece(k, e, lr);
          if (p >= P) continue;
          float v[V];
          ln::unpack<V, T>(raw[m][e], v);
#pragma unroll
          for (int c = 0; c < V; ++c) {
            const float d = v[c] - pick(mean, m, p * V + c);
            add(sq, m, p * V + c, d * d);
          }
        }
    }
    other_slices(sq.x, unit[0], true, mean.x);
    if constexpr (M == 2) other_slices(sq.y, unit[M - 1], true, mean.y);
    if constexpr (CH == 1) {
#pragma unroll
      for (int m = 0; m < M; ++m)
#pragma unroll
        for (int e = 0; e < NV; ++e) opaque(raw[m][e]);
    }
    float2 var;
    if constexpr (kMoments) {
      var = ln::mailbox_moments<CB, HS>(make_float2(mean.x, ln::group_sum<R>(sq, smem).x), mailbox, it);
      mean = make_float2(var.x, 0.f), var = make_float2(var.y, 0.f);
    } else {
      var = ln::cluster_sum<CB>(ln::group_sum<R>(sq, smem), smem, smem + S::kSlots, 1);
    }
    const float2 rstd = make_float2(rsqrtf(var.x / float(H) + Cfg::kEpsilon),
                                    S::B == 2 || M == 2 ? rsqrtf(var.y / float(H) + Cfg::kEpsilon) : 0.f);

    if (active) {  // every thread took part in the reductions
      ln::for_each_piece<S, CH, NV, P>(lr, load, [&](int e, int p) {
        // Pieces come in order and stop at the first p ≥ P, so piece e finds KR + e groups
        // committed: at most KR − 1 pending means its own has landed.
        if constexpr (KR > 0) cp_async_wait<KR - 1>();
#pragma unroll
        for (int q = 0; q < V; q += ln::kQuad<V>) {  // weight and bias a quad at a time: fewer live registers
          constexpr int Q = ln::kQuad<V>;
          const int i = p * V + q;  // the quad's unit position
          const int wc = weight_column(p, q);
          float w[Q], b[Q];
          if constexpr (KR > 0) {
            if constexpr (Cfg::kWeight) ln::load_floats<Q>(ring_at(e, 0) + q, w);
            if constexpr (Cfg::kBias) ln::load_floats<Q>(ring_at(e, 1) + q, b);
          } else if (e < KA) {
#pragma unroll
            for (int c = 0; c < Q; ++c) {
              if constexpr (Cfg::kWeight) w[c] = wa[e < KA ? e : 0][q + c];
              if constexpr (Cfg::kBias) b[c] = ba[e < KA ? e : 0][q + c];
            }
          } else {
            if constexpr (Cfg::kWeight) ln::load_floats<Q>(weight + wc, w);
            if constexpr (Cfg::kBias) ln::load_floats<Q>(bias + wc, b);
          }
#pragma unroll
          for (int m = 0; m < M; ++m) {
            // y overwrites x in raw[m][e], element by element: no second set of registers.
            const auto in = elements<T>(raw[m][e]);
            T* out = reinterpret_cast<T*>(&raw[m][e]);
            const float mu = pick(mean, m, i), rs = pick(rstd, m, i);
            float xq[Q];  // the quad read before any of it is overwritten
#pragma unroll
            for (int c = 0; c < Q; ++c) xq[c] = in[q + c];
#pragma unroll
            for (int c = 0; c < Q; ++c) {
              float v = (xq[c] - mu) * rs;
              if constexpr (Cfg::kWeight) v *= w[c];
              if constexpr (Cfg::kBias) v += b[c];
              out[q + c] = from_float<T>(v);
            }
          }
        }
#pragma unroll
        for (int m = 0; m < M; ++m)
          if (whole_sets || live[m]) *reinterpret_cast<Raw*>(y + unit[m] * S::W + rank * HS + p * V) = raw[m][e];
        if constexpr (KR > 0) ring_issue(e + KR);
      });
      if (lr == 0 && rank == 0) {
        mean_out[S::B * unit[0]] = mean.x, rstd_out[S::B * unit[0]] = rstd.x;
        if constexpr (S::B == 2) mean_out[2 * unit[0] + 1] = mean.y, rstd_out[2 * unit[0] + 1] = rstd.y;
        if constexpr (M == 2)
          if (whole_sets || live[1]) mean_out[unit[1]] = mean.y, rstd_out[unit[1]] = rstd.y;
      }
    }
    if constexpr (PF) {
#pragma unroll
      for (int e = 0; e < NV; ++e) raw[0][e] = next[e];
    }
  }
  if constexpr (!kMoments) ln::cluster_finish<CB>();  // the mailbox needs no exit barrier
}

// Each block (each cluster of kClusterBlocks blocks) takes kRowIterations row groups of
// kRowsPerBlock rows in a row. dweight and dbias are ADDED to (red.global.add): with
// kChunks = 1 each thread group first sums its columns over its rows — in registers
// (kRegisterSums: a thread's columns are the same in every row) or in shared memory — and
// the block adds once at the end; with kChunks > 1 every row adds (slow; docs/layer_norm.md).
// With kPrefetch (kChunks = 1) the next row's dy, x, mean and rstd are loaded before this
// row's reduction, so loads stay in flight across its barriers.
// With clusters each block holds one slice of the row; the row sums meet in distributed
// shared memory (sm_90), or, where there are no clusters, every block also reads the other
// slices to sum the whole row itself (correct, slower).
template <class Cfg>
__device__ __forceinline__ void layer_norm_backward(const typename Cfg::T* __restrict__ dy,
                                                    const typename Cfg::T* __restrict__ x,
                                                    const float* __restrict__ mean_in,
                                                    const float* __restrict__ rstd_in,
                                                    const float* __restrict__ weight, typename Cfg::T* __restrict__ dx,
                                                    float* __restrict__ dweight, float* __restrict__ dbias,
                                                    float* smem) {
  using S = ln::Shape<Cfg>;
  using T = typename S::T;
  using Raw = typename S::Raw;
  constexpr int H = S::H, HS = S::HS, CB = S::CB, V = S::V, P = S::P, R = S::R, NV = S::NV, CH = S::CH;
  constexpr int RPB = S::RPB, Q = ln::kQuad<V>, SUMS = int(Cfg::kWeight) + int(Cfg::kBias);
  constexpr bool kSharedAcc = CH == 1 && SUMS > 0;
  constexpr bool RS = kSharedAcc && Cfg::kRegisterSums, PF = Cfg::kPrefetch && CH == 1;
  const int lr = threadIdx.x % R, group = threadIdx.x / R;
  const int rank = row_block_rank<CB>();
  const int col0 = rank * HS;  // the block's first column
  const i64 block_group = blockIdx.x / CB;
  // Column sums of this group: [dweight | dbias] slices of HS floats each, as configured.
  float* acc_w = smem + S::kScratch + group * HS * SUMS;
  float* acc_b = acc_w + (Cfg::kWeight ? HS : 0);
  if constexpr (kSharedAcc && !RS) {
#pragma unroll
    for (int e = 0; e < NV; ++e) {
      const int p = S::piece(0, e, lr);
      if (p >= P) continue;
#pragma unroll
      for (int c = 0; c < V; ++c) {
        if constexpr (Cfg::kWeight) acc_w[S::slot(p, c / 4 * 4) + c % 4] = 0.f;
        if constexpr (Cfg::kBias) acc_b[S::slot(p, c / 4 * 4) + c % 4] = 0.f;
      }
    }
  }
  // kHoldWeights: the thread's columns are the same in every row it takes, so their weights
  // are read once into registers instead of twice a row from the L1.
  constexpr bool HW = Cfg::kHoldWeights && Cfg::kWeight;
  static_assert(!HW || (S::B == 1 && CH == 1), "held weights: one row a unit, in registers");
  float held_w[HW ? NV : 1][V];
  if constexpr (HW) {
#pragma unroll
    for (int e = 0; e < NV; ++e) {
      const int p = S::piece(0, e, lr);
      if (p < P) ln::load_floats<V>(weight + col0 + p * V, held_w[e]);
    }
  }
  // Register column sums (RS): [piece][element] of this thread's columns.
  float reg_w[RS && Cfg::kWeight ? NV : 1][V], reg_b[RS && Cfg::kBias ? NV : 1][V];
  if constexpr (RS) {
#pragma unroll
    for (int e = 0; e < NV; ++e)
#pragma unroll
      for (int c = 0; c < V; ++c) {
        if constexpr (Cfg::kWeight) reg_w[e][c] = 0.f;
        if constexpr (Cfg::kBias) reg_b[e][c] = 0.f;
      }
  }

  auto row_of = [&](int it) { return (block_group * Cfg::kRowIterations + it) * RPB + group; };
  // Chunk k of this thread's pieces of dy and x in `row` (zero bits where absent).
  auto load_into = [&](Raw* to_dy, Raw* to_x, i64 row, int k) {
    const bool active = row < S::kUnits;
    const i64 at0 = row * S::W + col0;
#pragma unroll
    for (int e = 0; e < NV; ++e) {
      const int p = S::piece(k, e, lr);
      const bool in = active && p < P;
      to_dy[e] = in ? *reinterpret_cast<const Raw*>(dy + at0 + p * V) : Raw{};
      to_x[e] = in ? *reinterpret_cast<const Raw*>(x + at0 + p * V) : Raw{};
    }
  };
  auto stats_of = [&](i64 row, float2& mean, float2& rstd) {
    const bool active = row < S::kUnits;
    mean.x = active ? mean_in[S::B * row] : 0.f, rstd.x = active ? rstd_in[S::B * row] : 0.f;
    mean.y = S::B == 2 && active ? mean_in[2 * row + 1] : 0.f, rstd.y = S::B == 2 && active ? rstd_in[2 * row + 1] : 0.f;
  };
  // With prefetch the next row's pieces wait here (row 0's before the loop).
  Raw ndy[PF ? NV : 1], nx[PF ? NV : 1];
  float2 next_mean = make_float2(0.f, 0.f), next_rstd = make_float2(0.f, 0.f);
  if (PF) load_into(ndy, nx, row_of(0), 0), stats_of(row_of(0), next_mean, next_rstd);

#pragma unroll 1
  for (int it = 0; it < Cfg::kRowIterations; ++it) {
    const i64 row = row_of(it);  // a unit (one row, or a two-row bundle)
    const bool active = row < S::kUnits;
    const i64 at0 = row * S::W + col0;  // the block's slice of the row
    Raw rdy[NV], rx[NV];
    float2 mean, rstd;
    auto load = [&](int k) { load_into(rdy, rx, row, k); };
    if constexpr (PF) {
#pragma unroll
      for (int e = 0; e < NV; ++e) rdy[e] = ndy[e], rx[e] = nx[e];
      mean = next_mean, rstd = next_rstd;
      if (it + 1 < Cfg::kRowIterations)
        load_into(ndy, nx, row_of(it + 1), 0), stats_of(row_of(it + 1), next_mean, next_rstd);
    } else {
      stats_of(row, mean, rstd);
      if (CH == 1) load(0);
    }

    float2 sg = make_float2(0.f, 0.f), sgx = make_float2(0.f, 0.f);
    ln::for_each_piece<S, CH, NV, P>(lr, load, [&](int e, int p) {
      if constexpr (HW) ln::add_piece_sums<Cfg, true>(rdy[e], rx[e], held_w[e], p * V, mean, rstd, sg, sgx);
      else ln::add_piece_sums<Cfg>(rdy[e], rx[e], weight + col0 + p * V, p * V, mean, rstd, sg, sgx);
    });
#if !defined(BANDJIT_CLUSTERS)
    if constexpr (CB > 1) {  // no clusters: the other slices, read from global memory
      for (int r2 = 0; r2 < CB; ++r2) {
        if (r2 == rank || !active) continue;
        for (int k = 0; k < CH; ++k)
#pragma unroll
          for (int e = 0; e < NV; ++e) {
            const int p = S::piece(k, e, lr);
            if (p >= P) continue;
            const i64 at = row * S::W + r2 * HS + p * V;
            ln::add_piece_sums<Cfg>(*reinterpret_cast<const Raw*>(dy + at), *reinterpret_cast<const Raw*>(x + at),
                                    weight + r2 * HS + p * V, p * V, mean, rstd, sg, sgx);
          }
      }
    }
#endif
    if constexpr (PF) {  // convert again after the reduction: with the next row's pieces held too,
                         // no floats may stay live across it (without prefetch ptxas does better alone)
#pragma unroll
      for (int e = 0; e < NV; ++e) opaque(rdy[e]), opaque(rx[e]);
    }
    const float2 s =
        ln::cluster_sum<CB>(ln::group_sum<R>(make_float2(sg.x, sgx.x), smem), smem, smem + S::kSlots, it & 1);
    // The second row's sums (two-row units: no cluster); .x of the pairs below is the first row.
    const float2 s2 = S::B == 2 ? ln::group_sum<R>(make_float2(sg.y, sgx.y), smem) : make_float2(0.f, 0.f);
    const float2 mean_g = make_float2(s.x / float(H), s2.x / float(H));
    const float2 mean_gx = make_float2(s.y / float(H), s2.y / float(H));

    if (!active) continue;  // the whole group (cluster): its reductions are done for this row
    {
      // With prefetch, reloaded (L1) rather than kept since the sums; without, ptxas's choice.
      const float* w_again = PF ? opaque_pointer(weight) : weight;
      ln::for_each_piece<S, CH, NV, P>(lr, load, [&](int e, int p) {
        const T* in_dy = reinterpret_cast<const T*>(&rdy[e]);  // element by element, as add_piece_sums
        const T* in_x = reinterpret_cast<const T*>(&rx[e]);
        T* out = reinterpret_cast<T*>(&rx[e]);  // dx overwrites x element by element
#pragma unroll
        for (int q = 0; q < V; q += Q) {  // a quad at a time: fewer live registers
          const int i = p * V + q;  // the quad's unit position (H % 4 == 0: one row of the unit)
          const float mu = S::pick(mean, i), rs = S::pick(rstd, i);
          const float mg = S::pick(mean_g, i), mgx = S::pick(mean_gx, i);
          float w[Q], dxh[Q], d[Q];
          if constexpr (HW) {
#pragma unroll
            for (int c = 0; c < Q; ++c) w[c] = held_w[e][q + c];
          } else if constexpr (Cfg::kWeight) {
            ln::load_floats<Q>(w_again + col0 + p * V + q - S::row_start(i), w);
          }
#pragma unroll
          for (int c = 0; c < Q; ++c) {
            d[c] = to_float(in_dy[q + c]);
            const float xh = (to_float(in_x[q + c]) - mu) * rs;
            const float g = Cfg::kWeight ? d[c] * w[c] : d[c];
            out[q + c] = from_float<T>(rs * (g - mg - xh * mgx));
            dxh[c] = d[c] * xh;
          }
          if constexpr (RS) {
#pragma unroll
            for (int c = 0; c < Q; ++c) {
              if constexpr (Cfg::kWeight) reg_w[e][q + c] += dxh[c];
              if constexpr (Cfg::kBias) reg_b[e][q + c] += d[c];
            }
          } else if constexpr (kSharedAcc) {
            if constexpr (Cfg::kWeight) ln::shared_add<Q>(acc_w + S::slot(p, q), dxh);
            if constexpr (Cfg::kBias) ln::shared_add<Q>(acc_b + S::slot(p, q), d);
          } else {
            if constexpr (Cfg::kWeight) ln::red_add<Q>(dweight + col0 + p * V + q, dxh);
            if constexpr (Cfg::kBias) ln::red_add<Q>(dbias + col0 + p * V + q, d);
          }
        }
        *reinterpret_cast<Raw*>(dx + at0 + p * V) = rx[e];
      });
    }
  }

  if constexpr (RS) {  // each slot of the group's columns belongs to one thread
#pragma unroll
    for (int e = 0; e < NV; ++e) {
      const int p = S::piece(0, e, lr);
      if (p >= P) continue;
#pragma unroll
      for (int c = 0; c < V; ++c) {
        if constexpr (Cfg::kWeight) acc_w[S::slot(p, c / 4 * 4) + c % 4] = reg_w[e][c];
        if constexpr (Cfg::kBias) acc_b[S::slot(p, c / 4 * 4) + c % 4] = reg_b[e][c];
      }
    }
  }
  if constexpr (kSharedAcc) {  // the block's column sums over its groups (and a unit's rows), added once
    __syncthreads();
    constexpr int RV = V % 4 == 0 ? 4 : 1;
    const float* acc0 = smem + S::kScratch;
    for (int col = threadIdx.x * RV; col < HS / S::B; col += Cfg::kThreads * RV) {
      int at[S::B];  // the column's slot in each row of the unit (H % 4 == 0 keeps quads whole)
#pragma unroll
      for (int u = 0; u < S::B; ++u) at[u] = S::slot((col + u * H) / V, (col + u * H) % V);
      float w[RV], b[RV];
#pragma unroll
      for (int c = 0; c < RV; ++c) w[c] = 0.f, b[c] = 0.f;
      for (int gr = 0; gr < RPB; ++gr)
#pragma unroll
        for (int u = 0; u < S::B; ++u)
#pragma unroll
          for (int c = 0; c < RV; ++c) {
            if constexpr (Cfg::kWeight) w[c] += acc0[gr * HS * SUMS + at[u] + c];
            if constexpr (Cfg::kBias) b[c] += acc0[gr * HS * SUMS + (Cfg::kWeight ? HS : 0) + at[u] + c];
          }
      if constexpr (Cfg::kWeight) ln::red_add<RV>(dweight + col0 + col, w);
      if constexpr (Cfg::kBias) ln::red_add<RV>(dbias + col0 + col, b);
    }
  }
  ln::cluster_finish<CB>();
}

}  // namespace bandjit
