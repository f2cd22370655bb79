// bandjit/softmax.cuh — y = softmax(scale · x + mask) over rows of kRowLength elements
// (Megatron's FusedScaleMaskSoftmax, torch.softmax(x * scale + mask, -1)), x and y
// [batch, heads, queries, L]. The optional mask is [batch, 1, queries, L] (broadcast over
// heads): boolean (uint8, non-zero removes the key) or additive (x's dtype, added after
// scaling; −inf removes the key); causal removes key j > q + (L − queries). A removed key
// gives exactly 0 and a row with every key removed gives zeros. y may alias x.
//
// kRowThreads threads hold a row in registers (piece p of kVec elements belongs to thread
// p mod kRowThreads), so x is read once and y written once. Each thread keeps its values
// v = scale·x + mask with its own maximum m and sum s of e^(v − m) (ex2 of (v − m)·log2 e);
// the row's (M, S) is one
// reduction of those pairs (shuffles, then shared memory across warps, then — for rows
// longer than a block holds — distributed shared memory across a cluster of kCluster
// blocks on sm_90; elsewhere one block of the cluster walks the row twice).
#pragma once

#include "bandjit/cluster.cuh"
#include "bandjit/common.cuh"
#include "bandjit/opaque.cuh"

namespace bandjit {

// The register type of one vector load or store of BYTES bytes.
template <int BYTES> struct RawPiece;
template <> struct RawPiece<16> { typedef uint4 type; };
template <> struct RawPiece<8> { typedef unsigned long long type; };
template <> struct RawPiece<4> { typedef unsigned type; };
template <> struct RawPiece<2> { typedef unsigned short type; };
template <> struct RawPiece<1> { typedef unsigned char type; };

// V consecutive elements of type E at g (aligned to their size) as one load / store.
template <class E, int V>
__device__ __forceinline__ typename RawPiece<sizeof(E) * V>::type load_piece(const E* g) {
  return *reinterpret_cast<const typename RawPiece<sizeof(E) * V>::type*>(g);
}
template <class E, int V>
__device__ __forceinline__ void store_piece(E* g, const typename RawPiece<sizeof(E) * V>::type& raw) {
  *reinterpret_cast<typename RawPiece<sizeof(E) * V>::type*>(g) = raw;
}

// log2 e: values stay in natural units (scale·x + mask) up to the subtraction of the
// maximum, so that finite scores and masks (HF's finfo(float32).min) stay finite, as in
// torch; only the difference is multiplied by it, which no finite row can overflow wrongly.
constexpr float kLog2e = 1.4426950408889634f;

// Running maximum m and sum s of e^(v − m) over some of a row's values (m = −inf, s = 0: none).
struct RowStats {
  float m, s;
};
// a's sum rescaled to a maximum m ≥ a.m: s · e^(a.m − m). A side without values has
// m = −inf, s = 0 and contributes 0 (never 0 · 2^(−inf + inf)).
__device__ __forceinline__ float rescaled_sum(RowStats a, float m) {
  return a.m == neg_inf() ? 0.f : a.s * exp2_approx((a.m - m) * kLog2e);
}
__device__ __forceinline__ RowStats combine(RowStats a, RowStats b) {
  const float m = fmaxf(a.m, b.m);
  if (m == neg_inf()) return {m, 0.f};
  return {m, rescaled_sum(a, m) + rescaled_sum(b, m)};
}
struct SumOp {
  __device__ __forceinline__ float operator()(float a, float b) const { return a + b; }
};
struct StatsOp {
  __device__ __forceinline__ RowStats operator()(RowStats a, RowStats b) const { return combine(a, b); }
};
__device__ __forceinline__ float shfl_xor(float v, int o) { return __shfl_xor_sync(0xffffffffu, v, o); }
__device__ __forceinline__ RowStats shfl_xor(RowStats v, int o) { return {shfl_xor(v.m, o), shfl_xor(v.s, o)}; }

// Reduces v over the R consecutive threads of this thread's row within the block (R a power
// of two ≤ 32, or a multiple of 32); every thread of the row gets the result. scratch holds
// one value per warp of the block; the caller syncs before reusing it.
template <int R, class Val, class Op>
__device__ __forceinline__ Val block_row_reduce(Val v, Op op, Val* scratch) {
#pragma unroll
  for (int o = (R < 32 ? R : 32) / 2; o > 0; o >>= 1) v = op(v, shfl_xor(v, o));
  if constexpr (R > 32) {
    const int warp = threadIdx.x >> 5, first = warp - warp % (R / 32);
    if ((threadIdx.x & 31) == 0) scratch[warp] = v;
    __syncthreads();
    v = scratch[first];
#pragma unroll
    for (int w = 1; w < R / 32; ++w) v = op(v, scratch[first + w]);
  }
  return v;
}

// The row's (M, S) from its R threads' (m, s) (R as block_row_reduce), without a chain of
// combine()s (each two dependent exp2): the maximum by shuffles, then each sum rescaled to
// it (one exp2) and added by shuffles; across warps, lane w of each warp takes warp w's pair
// from `scratch` and the same two steps follow over the whole warp (the butterflies give
// every lane, and so every thread of the row, the same bits).
// A side with no key (m = −inf) adds 0. The caller syncs before reusing scratch.
template <int W>
__device__ __forceinline__ RowStats lanes_stats(RowStats v) {
  float m = v.m;
#pragma unroll
  for (int o = W / 2; o > 0; o >>= 1) m = fmaxf(m, shfl_xor(m, o));
  float s = rescaled_sum(v, m);
#pragma unroll
  for (int o = W / 2; o > 0; o >>= 1) s += shfl_xor(s, o);
  return {m, s};
}
template <int R>
__device__ __forceinline__ RowStats block_row_stats(RowStats v, RowStats* scratch) {
  v = lanes_stats<(R < 32 ? R : 32)>(v);
  if constexpr (R > 32) {
    const int warp = threadIdx.x >> 5, first = warp - warp % (R / 32), lane = threadIdx.x & 31;
    if (lane == 0) scratch[warp] = v;
    __syncthreads();
    v = lanes_stats<32>(lane < R / 32 ? scratch[first + lane] : RowStats{neg_inf(), 0.f});
  }
  return v;
}

#if defined(BANDJIT_CLUSTERS)
// The block's reduced value combined over the CL blocks of the cluster, in rank order (every
// block gets the same bits). Leaves the cluster barrier armed: the caller must call
// cluster_wait() before exiting, so no block leaves while a peer still reads its slot. The
// first arrive orders only the slot write (a full release is MEMBAR.ALL.GPU); the second
// keeps its release, which also waits for this block's reads of the peers' slots.
template <int CL, class Op>
__device__ __forceinline__ float cluster_reduce(float v, Op op, float* slot) {
  if (threadIdx.x == 0) *slot = v;
  cluster_arrive_shared_release();
  cluster_wait();
  float r = cluster_load(slot, 0);
#pragma unroll
  for (int k = 1; k < CL; ++k) r = op(r, cluster_load(slot, k));
  cluster_arrive();
  return r;
}
// The CL blocks' (maximum, sum) pairs combined in rank order, so every block gets the same
// bits: the maximum, then the sums rescaled to it (independent exp2s, not a chain of
// combine()s). m_of(k) and s_of(k) read rank k's pair; each is read where needed rather than
// held (CL pairs in registers spill the long-row kernels), and a sum only where its
// maximum says the block has keys.
template <int CL, class M, class S>
__device__ __forceinline__ RowStats combine_ranks(M m_of, S s_of) {
  float m = neg_inf();
#pragma unroll
  for (int k = 0; k < CL; ++k) m = fmaxf(m, m_of(k));
  float s = 0.f;
#pragma unroll
  for (int k = 0; k < CL; ++k) {
    const float mk = m_of(k);
    s += mk == neg_inf() ? 0.f : s_of(k) * exp2_approx((mk - m) * kLog2e);
  }
  return {m, s};
}
// Through a cluster barrier and reads of the peers' slots. Leaves the barrier armed: the
// caller must call cluster_wait() before exiting (as the float overload above).
template <int CL>
__device__ __forceinline__ RowStats cluster_reduce(RowStats v, RowStats* slot) {
  if (threadIdx.x == 0) *slot = v;
  cluster_arrive_shared_release();
  cluster_wait();
  const RowStats r = combine_ranks<CL>([&](int k) { return cluster_load(&slot->m, k); },
                                       [&](int k) { return cluster_load(&slot->s, k); });
  cluster_arrive();
  return r;
}
// Through the mailbox (cluster.cuh: st.async, no cluster barrier, and the caller needs none
// before exiting). One row a block: round 0.
template <int CL>
__device__ __forceinline__ RowStats cluster_reduce(RowStats v, ClusterMailbox<CL>* box) {
  const float2* slots = mailbox_exchange<CL>(box, make_float2(v.m, v.s), 0);
  return combine_ranks<CL>([&](int k) { return slots[k].x; }, [&](int k) { return slots[k].y; });
}
#endif

// Where this thread works: row, and its lane among the row's kRowThreads threads (rank
// `rank` of a cluster row covers lanes rank · kThreads …).
template <class Cfg>
struct RowLane {
  i64 row;
  int lane;
  bool active;  // inactive threads (past the last row) still join the block's reductions
  __device__ __forceinline__ RowLane(int rank) {
    if constexpr (Cfg::kCluster == 1) {
      constexpr int R = Cfg::kRowThreads;
      row = i64(blockIdx.x) * Cfg::kRowsPerBlock + threadIdx.x / R;
      lane = threadIdx.x % R;
      active = row < Cfg::kRows;
    } else {
      row = blockIdx.x / Cfg::kCluster;
      lane = rank * Cfg::kThreads + threadIdx.x;
      active = true;
    }
  }
};

// Loads this lane's pieces of row `row` as v = (scale · x + mask) · log2(e), −inf at removed
// keys and past the row; returns the lane's (max, Σ e^(v − max)) and leaves v = e^(v − max),
// for v = scale·x + mask.
template <class Cfg>
__device__ __forceinline__ RowStats load_row_exp(const typename Cfg::T* x, const void* mask, i64 row, int lane,
                                                 bool active, float (&v)[Cfg::kPiecesPerThread][Cfg::kVec]) {
  using T = typename Cfg::T;
  constexpr int V = Cfg::kVec, NV = Cfg::kPiecesPerThread, L = Cfg::kRowLength, Q = Cfg::kQueries;
  typedef typename RawPiece<sizeof(T) * V>::type Raw;
  const int q = int(row % Q);
  const i64 mask_row = (row / (i64(Cfg::kHeads) * Q)) * Q + q;  // [batch, 1, queries, L]
  const int last_key = q + (L - Q);                              // causal: keys after it are removed
  float m = neg_inf();
#pragma unroll
  for (int e = 0; e < NV; ++e) {
    const int piece = lane + e * Cfg::kRowThreads;
    const int j0 = piece * V;
    const bool in_row = active && (NV * Cfg::kRowThreads == Cfg::kPieces || piece < Cfg::kPieces);
    // A piece wholly past the causal limit is not read: it becomes zeros whatever x holds.
    const bool needed = in_row && !(Cfg::kCausal && j0 > last_key);
    const Raw raw = needed ? load_piece<T, V>(x + row * L + j0) : Raw{};
    const T* in = reinterpret_cast<const T*>(&raw);
    if constexpr (Cfg::kMask == kMaskBool) {
      typedef typename RawPiece<V>::type MaskRaw;
      const MaskRaw mraw =
          needed ? load_piece<unsigned char, V>(static_cast<const unsigned char*>(mask) + mask_row * L + j0) : MaskRaw{};
      const unsigned char* removed = reinterpret_cast<const unsigned char*>(&mraw);
#pragma unroll
      for (int c = 0; c < V; ++c) v[e][c] = removed[c] ? neg_inf() : to_float(in[c]) * Cfg::kScale;
    } else if constexpr (Cfg::kMask == kMaskAdditive) {
      const Raw araw = needed ? load_piece<T, V>(static_cast<const T*>(mask) + mask_row * L + j0) : Raw{};
      const T* add = reinterpret_cast<const T*>(&araw);
#pragma unroll
      for (int c = 0; c < V; ++c) v[e][c] = fmaf(to_float(in[c]), Cfg::kScale, to_float(add[c]));
    } else {
      // Unmasked rows read bfloat16 by words; masked ones element by element (boolean masks
      // measured up to 1.5 % slower by words, additive ones unmeasured: bench/results/2026-12-03-bfloat16-words).
      const auto words = elements<T>(raw);
#pragma unroll
      for (int c = 0; c < V; ++c) v[e][c] = words[c] * Cfg::kScale;
    }
#pragma unroll
    for (int c = 0; c < V; ++c) {
      if (!in_row || (Cfg::kCausal && j0 + c > last_key)) v[e][c] = neg_inf();
      m = fmaxf(m, v[e][c]);
    }
  }
  // A lane whose keys are all removed has m = −inf: subtracting 0 keeps every value at 2^−inf = 0.
  const float shift = m == neg_inf() ? 0.f : m;
  float s = 0.f;
#pragma unroll
  for (int e = 0; e < NV; ++e)
#pragma unroll
    for (int c = 0; c < V; ++c) {
      v[e][c] = exp2_approx((v[e][c] - shift) * kLog2e);
      s += v[e][c];
    }
  return {m, s};
}

// y = v · factor for this lane's pieces of the row.
template <class Cfg>
__device__ __forceinline__ void store_row(typename Cfg::T* y, i64 row, int lane, bool active,
                                          const float (&v)[Cfg::kPiecesPerThread][Cfg::kVec], float factor) {
  using T = typename Cfg::T;
  constexpr int V = Cfg::kVec;
#pragma unroll
  for (int e = 0; e < Cfg::kPiecesPerThread; ++e) {
    const int piece = lane + e * Cfg::kRowThreads;
    if (!active || !(Cfg::kPiecesPerThread * Cfg::kRowThreads == Cfg::kPieces || piece < Cfg::kPieces)) continue;
    typename RawPiece<sizeof(T) * V>::type raw;
    T* out = reinterpret_cast<T*>(&raw);
#pragma unroll
    for (int c = 0; c < V; ++c) out[c] = from_float<T>(v[e][c] * factor);
    store_piece<T, V>(y + row * Cfg::kRowLength + piece * V, raw);
  }
}

// What this lane multiplies its e^(v − m) by: e^(m − M) / S, 0 when the lane (or the whole
// row) has no key left.
__device__ __forceinline__ float lane_factor(RowStats lane, RowStats row) {
  return lane.m == neg_inf() ? 0.f : exp2_approx((lane.m - row.m) * kLog2e) / row.s;
}

// log2 of lane_factor, for a factor folded into the exponent: (m − M)·log2 e − log2 S;
// −inf when the lane has no key (a lane with a key has S > 0: its maximum's own term).
__device__ __forceinline__ float lane_log2_factor(RowStats lane, RowStats row) {
  return lane.m == neg_inf() ? neg_inf() : (lane.m - row.m) * kLog2e - log2_approx(row.s);
}

// Whether piece `piece` of a row holds elements of it (the last thread may hold fewer).
template <class Cfg>
__device__ __forceinline__ bool piece_in_row(int piece) {
  return Cfg::kPiecesPerThread * Cfg::kRowThreads == Cfg::kPieces || piece < Cfg::kPieces;
}

// Staged rows (kStaged, long 16-bit rows): a thread copies its pieces of x (and of an
// additive mask) into its own slots of the block's dynamic shared memory with cp.async, so
// the bytes in flight are bounded by shared memory (up to 227 KiB an SM) rather than by
// registers (a 16-bit row held as float32 takes twice its size in registers); then it reads
// its own slots back — no barrier — once for (max, Σ e^(v − max)), taking each piece as soon
// as it lands, and once to write y. A boolean mask comes as bits in registers instead (staged
// too where a thread holds more than 64 keys).
template <class E>
__device__ __forceinline__ void copy_async(E* smem, const E* gmem) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  if constexpr (sizeof(E) == 16)
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s), "l"(gmem));
  else
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2;\n" ::"r"(s), "l"(gmem), "n"(int(sizeof(E))));
#else
  *smem = *gmem;
#endif
}
// Closes this thread's copies issued since the last commit into a group.
__device__ __forceinline__ void copy_async_commit() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
}
// Waits until at most `pending` (≥ 0) of this thread's newest groups are still in flight
// (more than 7: 7, which waits longer than asked, never shorter).
__device__ __forceinline__ void copy_async_wait(int pending) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
#define BANDJIT_WAIT_GROUP(n) asm volatile("cp.async.wait_group " #n ";\n" ::: "memory")
  switch (pending) {
    case 0: BANDJIT_WAIT_GROUP(0); break;
    case 1: BANDJIT_WAIT_GROUP(1); break;
    case 2: BANDJIT_WAIT_GROUP(2); break;
    case 3: BANDJIT_WAIT_GROUP(3); break;
    case 4: BANDJIT_WAIT_GROUP(4); break;
    case 5: BANDJIT_WAIT_GROUP(5); break;
    case 6: BANDJIT_WAIT_GROUP(6); break;
    default: BANDJIT_WAIT_GROUP(7); break;
  }
#undef BANDJIT_WAIT_GROUP
#else
  (void)pending;
#endif
}

// kHeld rows: the same passes over the pieces held as loaded in registers instead of shared
// memory (a 16-bit piece in half the registers of its float32 values).
template <class Cfg>
struct StagedRow {
  using T = typename Cfg::T;
  static constexpr int V = Cfg::kVec, NV = Cfg::kPiecesPerThread, L = Cfg::kRowLength, Q = Cfg::kQueries;
  typedef typename RawPiece<sizeof(T) * V>::type Raw;
  // An additive mask is staged (its pieces after x's); a boolean mask row is read from global
  // memory (the L2: the heads share it) while the copies are in flight, as one bit a key —
  // unless a thread holds more than 64 keys (knob layouts only): then it is staged too.
  static constexpr bool kHeld = Cfg::kHeld;
  static constexpr bool kMaskBits = Cfg::kMask == kMaskBool && NV * V <= 64;
  static constexpr bool kStagedMask = Cfg::kMask != kMaskNone && !kMaskBits;
  static_assert(!(kHeld && kStagedMask), "held rows keep no mask in shared memory (the tiling refuses them)");
  typedef typename RawPiece<(Cfg::kMask == kMaskBool ? 1 : sizeof(T)) * V>::type MaskRaw;
  Raw* xs;      // [NV][kThreads] pieces of x
  MaskRaw* ms;  // [NV][kThreads] pieces of a staged mask, after them
  i64 row, mask_row;
  int lane, last_key;
  bool active;
  unsigned long long removed_bits = 0;  // boolean mask: bit e·V + c of key c of piece e
  Raw held[kHeld ? NV : 1];             // kHeld: the pieces of x
  __device__ __forceinline__ StagedRow(void* stage, i64 row_, int lane_, bool active_)
      : xs(static_cast<Raw*>(stage)), ms(reinterpret_cast<MaskRaw*>(xs + NV * Cfg::kThreads)), row(row_), lane(lane_),
        active(active_) {
    const int q = int(row % Q);
    mask_row = (row / (i64(Cfg::kHeads) * Q)) * Q + q;  // [batch, 1, queries, L]
    last_key = q + (L - Q);
  }
  __device__ __forceinline__ int slot(int e) const { return e * Cfg::kThreads + int(threadIdx.x); }
  __device__ __forceinline__ int j0(int e) const { return (lane + e * Cfg::kRowThreads) * V; }
  __device__ __forceinline__ bool in_row(int e) const { return active && piece_in_row<Cfg>(lane + e * Cfg::kRowThreads); }
  __device__ __forceinline__ bool needed(int e) const { return in_row(e) && !(Cfg::kCausal && j0(e) > last_key); }
  // Piece e of this row's mask (a byte or a T a key).
  __device__ __forceinline__ const MaskRaw* mask_piece(const void* mask, int e) const {
    const i64 at = mask_row * L + j0(e);
    if constexpr (Cfg::kMask == kMaskBool)
      return reinterpret_cast<const MaskRaw*>(static_cast<const unsigned char*>(mask) + at);
    else
      return reinterpret_cast<const MaskRaw*>(static_cast<const T*>(mask) + at);
  }
  // Starts the copies, one group a piece (so stats() takes each as it lands); reads the
  // boolean mask's bits meanwhile.
  __device__ __forceinline__ void copy_issue(const T* x, const void* mask) {
#pragma unroll
    for (int e = 0; e < NV; ++e) {
      if constexpr (kHeld) {
        held[e] = needed(e) ? load_piece<T, V>(x + row * L + j0(e)) : Raw{};
        continue;
      }
      if (needed(e)) {
        copy_async(xs + slot(e), reinterpret_cast<const Raw*>(x + row * L + j0(e)));
        if constexpr (kStagedMask) copy_async(ms + slot(e), mask_piece(mask, e));
      }
      copy_async_commit();
    }
    if constexpr (kMaskBits) {
      MaskRaw mraw[NV];
#pragma unroll
      for (int e = 0; e < NV; ++e)
        mraw[e] = needed(e) ? *mask_piece(mask, e) : MaskRaw{};
#pragma unroll
      for (int e = 0; e < NV; ++e) {
        const unsigned char* removed = reinterpret_cast<const unsigned char*>(&mraw[e]);
#pragma unroll
        for (int c = 0; c < V; ++c)
          if (removed[c]) removed_bits |= 1ull << (e * V + c);
      }
    }
  }
  __device__ __forceinline__ void copy_in(const T* x, const void* mask) {
    copy_issue(x, mask);
    copy_async_wait(0);
  }
  // v = u · kPost: the scale is applied after the maximum (x·s is monotone in x for s > 0,
  // so max(u)·s is max(v) bit for bit) and inside the exponent's FMA, one multiply an
  // element fewer; additive masks (and a scale ≤ 0) take it in u.
  static constexpr float kPost = Cfg::kMask != kMaskAdditive && Cfg::kScale > 0.f ? Cfg::kScale : 1.f;
  // u of piece e, −inf where removed or absent (v as load_row_exp).
  __device__ __forceinline__ Raw piece(int e) const {
    if constexpr (kHeld) return held[e];
    else return xs[slot(e)];
  }
  __device__ __forceinline__ void values(int e, const Raw& raw, float (&u)[V]) const {
    if (!needed(e)) {
#pragma unroll
      for (int c = 0; c < V; ++c) u[c] = neg_inf();
      return;
    }
    const T* in = reinterpret_cast<const T*>(&raw);
    constexpr float kPre = kPost == 1.f ? Cfg::kScale : 1.f;
    if constexpr (kMaskBits) {
      const unsigned bits = unsigned(removed_bits >> (e * V));
#pragma unroll
      for (int c = 0; c < V; ++c) u[c] = (bits >> c) & 1u ? neg_inf() : to_float(in[c]) * kPre;
    } else if constexpr (Cfg::kMask == kMaskBool) {
      const MaskRaw mraw = ms[slot(e)];
      const unsigned char* removed = reinterpret_cast<const unsigned char*>(&mraw);
#pragma unroll
      for (int c = 0; c < V; ++c) u[c] = removed[c] ? neg_inf() : to_float(in[c]) * kPre;
    } else if constexpr (Cfg::kMask == kMaskAdditive) {
      const MaskRaw araw = ms[slot(e)];
      const T* add = reinterpret_cast<const T*>(&araw);
#pragma unroll
      for (int c = 0; c < V; ++c) u[c] = fmaf(to_float(in[c]), Cfg::kScale, to_float(add[c]));
    } else {
      const auto words = elements<T>(raw);  // as load_row_exp (with a boolean mask, words measured 1.5 % slower here)
#pragma unroll
      for (int c = 0; c < V; ++c) u[c] = words[c] * kPre;
    }
    if constexpr (Cfg::kCausal) {
#pragma unroll
      for (int c = 0; c < V; ++c)
        if (j0(e) + c > last_key) u[c] = neg_inf();
    }
  }
  // (v − shift)·log2 e for v = u·kPost: one FMA and a multiply.
  static __device__ __forceinline__ float exponent(float u, float shift) { return fmaf(u, kPost, -shift) * kLog2e; }
  // Piece e into the lane's running (m, s), once its copy has landed: the piece's maximum
  // first, the sum so far rescaled where it raises m (rarely after the first pieces), then
  // the piece's terms. While m = −inf the sum is 0 — or NaN after a NaN key, which it keeps.
  __device__ __forceinline__ void add_piece(int e, float& m, float& s) const {
    if constexpr (!kHeld) copy_async_wait(NV - 1 - e);
    float u[V];
    values(e, piece(e), u);
    float pu = u[0];
#pragma unroll
    for (int c = 1; c < V; ++c) pu = fmaxf(pu, u[c]);
    const float pm = pu * kPost;
    if (pm > m) {
      s = m == neg_inf() ? s : s * exp2_approx((m - pm) * kLog2e);
      m = pm;
    }
    const float shift = m == neg_inf() ? 0.f : m;
#pragma unroll
    for (int c = 0; c < V; ++c) s += exp2_approx(exponent(u[c], shift));
  }
  // The lane's (max m, Σ e^(v − m)) in one pass over its slots, each piece as soon as its
  // copy lands. A lane with no key keeps m = −inf, s = 0.
  __device__ __forceinline__ RowStats stats() const {
    float m = neg_inf(), s = 0.f;
    if constexpr (Cfg::kMask == kMaskNone || kHeld) {  // held pieces: registers need constant indices
      // Unrolled, so each wait's count is a constant (a runtime one costs an indirect branch
      // a piece): H200, L = 65536 float16 79 → 82 %, bfloat16 77 → 81 % of the copy bandwidth
      // (bench/results/2026-12-03-softmax-final). Masked rows measured 3 points slower so.
#pragma unroll
      for (int e = 0; e < NV; ++e) add_piece(e, m, s);
    } else {
#pragma unroll 1  // a piece at a time from shared memory: few registers
      for (int e = 0; e < NV; ++e) add_piece(e, m, s);
    }
    return {m, s};
  }
  // y = e^(v − m) · factor = 2^((v − m)·log2 e + log2 factor): the factor rides in the
  // exponent's second FMA, one multiply an element fewer. ex2.approx.ftz flushes results
  // below 2^−126 to 0 (float16 rounds them to 0 anyway; bfloat16 loses its subnormals).
  __device__ __forceinline__ void store(T* y, float m, float log2_factor) const {
    const float shift = m == neg_inf() ? 0.f : m;
    auto out_piece = [&](int e) {
      if (!in_row(e)) return;
      float u[V];
      Raw raw = piece(e);
      // Held rows of 8 pieces a thread (knob layouts) spill unmasked (48 bytes at L = 65536
      // float16) unless the pieces are converted in turn; masked ones spill more so (8 → 184
      // bytes) and are left free. The default 4 pieces compile to the same SASS either way.
      if constexpr (kHeld && Cfg::kMask == kMaskNone) opaque_after_stores(raw);
      values(e, raw, u);
      Raw res;
      T* out = reinterpret_cast<T*>(&res);
#pragma unroll
      for (int c = 0; c < V; ++c) out[c] = from_float<T>(exp2_approx(fmaf(fmaf(u[c], kPost, -shift), kLog2e, log2_factor)));
      store_piece<T, V>(y + row * L + j0(e), res);
    };
    if constexpr (kHeld) {
#pragma unroll
      for (int e = 0; e < NV; ++e) out_piece(e);
    } else {
#pragma unroll 1  // a piece at a time from shared memory: few registers
      for (int e = 0; e < NV; ++e) out_piece(e);
    }
  }
  // Before the second pass over held pieces (see opaque()).
  __device__ __forceinline__ void reload() {
    if constexpr (kHeld) {
#pragma unroll
      for (int e = 0; e < NV; ++e) opaque(held[e]);
    }
  }
};

template <class Cfg>
__device__ __forceinline__ void softmax_forward(const typename Cfg::T* x, typename Cfg::T* y, const void* mask,
                                                void* stage = nullptr) {
  constexpr int NV = Cfg::kPiecesPerThread, V = Cfg::kVec, CL = Cfg::kCluster;
  constexpr int RB = Cfg::kRowThreads / CL;  // threads of a row inside one block
  static_assert(CL == 1 || Cfg::kRowsPerBlock == 1, "a cluster row fills its blocks");
  __shared__ RowStats scratch[Cfg::kThreads / 32 > 0 ? Cfg::kThreads / 32 : 1];
  float v[NV][V];
  if constexpr (Cfg::kHeld && (CL == 1 || kClusters)) {
    // Held rows: the staged passes over registers; the cluster exchange through the mailbox
    // (its statistics are those of a register row).
    const RowLane<Cfg> at(row_block_rank<CL>());
#if defined(BANDJIT_CLUSTERS)
    __shared__ ClusterMailbox<CL> box;
    if constexpr (CL > 1) mailbox_open<CL>(&box);
#endif
    StagedRow<Cfg> r(stage, at.row, at.lane, at.active);
    r.copy_issue(x, mask);
    const RowStats mine = r.stats();
    RowStats row = block_row_stats<RB>(mine, scratch);
#if defined(BANDJIT_CLUSTERS)
    if constexpr (CL > 1) row = cluster_reduce<CL>(row, &box);
#endif
    r.reload();
    r.store(y, mine.m, lane_log2_factor(mine, row));
  } else if constexpr (Cfg::kStaged && (CL == 1 || kClusters)) {
    const RowLane<Cfg> at(row_block_rank<CL>());
    StagedRow<Cfg> r(stage, at.row, at.lane, at.active);
    r.copy_issue(x, mask);
    const RowStats mine = r.stats();
    RowStats row = block_row_stats<RB>(mine, scratch);
#if defined(BANDJIT_CLUSTERS)
    // The staged row keeps the cluster barrier: through the mailbox its unmasked 16-bit
    // L = 65536 rows ran 2–3 points slower (bench/results/2026-12-04-mailbox, calls 1 and 2).
    __shared__ RowStats staged_slot;
    if constexpr (CL > 1) row = cluster_reduce<CL>(row, &staged_slot);
#endif
    r.store(y, mine.m, lane_log2_factor(mine, row));
#if defined(BANDJIT_CLUSTERS)
    if constexpr (CL > 1) cluster_wait();  // peers are done reading this block's slot
#endif
  } else if constexpr (Cfg::kStaged || Cfg::kHeld) {
    // No clusters (before sm_90): the cluster's first block walks the row twice through its
    // own shared memory (or registers), a block's share at a time (the others exit at once).
    if (blockIdx.x % CL != 0) return;
    RowStats mine = {neg_inf(), 0.f};
#pragma unroll 1
    for (int rank = 0; rank < CL; ++rank) {
      const RowLane<Cfg> at(rank);
      StagedRow<Cfg> r(stage, at.row, at.lane, at.active);
      r.copy_in(x, mask);
      mine = combine(mine, r.stats());
    }
    const RowStats row = block_row_stats<RB>(mine, scratch);
#pragma unroll 1
    for (int rank = 0; rank < CL; ++rank) {
      const RowLane<Cfg> at(rank);
      StagedRow<Cfg> r(stage, at.row, at.lane, at.active);
      r.copy_in(x, mask);
      const RowStats part = r.stats();
      r.reload();
      r.store(y, part.m, lane_log2_factor(part, row));
    }
  } else if constexpr (CL == 1 || kClusters) {
    const RowLane<Cfg> at(row_block_rank<CL>());
#if defined(BANDJIT_CLUSTERS)
    __shared__ ClusterMailbox<CL> box;
    if constexpr (CL > 1) mailbox_open<CL>(&box);
#endif
    const RowStats mine = load_row_exp<Cfg>(x, mask, at.row, at.lane, at.active, v);
    // With 32 or more pieces a thread held across the reduction (odd L: one value each,
    // each with its own bounds), the shuffle form's wider live range spills (L = 100003
    // causal: 60 bytes on sm_90); the chain does not.
    constexpr bool kChain = NV >= 32;
    RowStats row = kChain ? block_row_reduce<RB>(mine, StatsOp{}, scratch) : block_row_stats<RB>(mine, scratch);
#if defined(BANDJIT_CLUSTERS)
    if constexpr (CL > 1) row = cluster_reduce<CL>(row, &box);
#endif
    store_row<Cfg>(y, at.row, at.lane, at.active, v, lane_factor(mine, row));
  } else {
    // No clusters (before sm_90): the cluster's first block walks the row twice, lanes of
    // rank 0 … CL − 1 in turn: once for (M, S), once to write y. The other blocks idle.
    if (blockIdx.x % CL != 0) return;
    RowStats mine = {neg_inf(), 0.f};
#pragma unroll 1
    for (int rank = 0; rank < CL; ++rank) {
      const RowLane<Cfg> at(rank);
      mine = combine(mine, load_row_exp<Cfg>(x, mask, at.row, at.lane, at.active, v));
    }
    const RowStats row = block_row_stats<RB>(mine, scratch);
#pragma unroll 1
    for (int rank = 0; rank < CL; ++rank) {
      const RowLane<Cfg> at(rank);
      const RowStats part = load_row_exp<Cfg>(x, mask, at.row, at.lane, at.active, v);
      store_row<Cfg>(y, at.row, at.lane, at.active, v, lane_factor(part, row));
    }
  }
}

}  // namespace bandjit
