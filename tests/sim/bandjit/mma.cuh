// Host shim of templates/mma.cuh for the SIMT emulator: the same operand types and calls,
// written from the PTX ISA's fragment layouts ("Matrix fragments for mma.m16n8k16 /
// m16n8k8"), not from the template. mma() is a warp collective: each lane deposits its
// fragments, then computes its own part of D = A·B + C from everyone's (float64 sums, so
// the emulated products are exact up to the output's rounding).
#pragma once

#include <cstring>

#include "bandjit/common.cuh"

namespace bandjit {

typedef unsigned u32;

inline int lane_id() { return threadIdx.x & 31; }

template <class T> struct MmaOps;

namespace sim_detail {

// Decodes the warp's fragments (row-major A[16][K], B[K][8]) and returns this lane's four
// elements of D = A·B + C: c0 = (g, 2t4), c1 = (g, 2t4 + 1), c2 = (g + 8, 2t4), c3 = (g + 8, 2t4 + 1).
template <int K, class DecodeA, class DecodeB>
inline void warp_mma(float c[4], DecodeA decode_a, DecodeB decode_b) {
  float A[16][K], B[K][8];
  for (int lane = 0; lane < 32; ++lane) {
    decode_a(lane, A);
    decode_b(lane, B);
  }
  const int g = lane_id() >> 2, t4 = lane_id() & 3;
  for (int e = 0; e < 4; ++e) {
    const int row = g + 8 * (e >> 1), col = 2 * t4 + (e & 1);
    double sum = c[e];
    for (int k = 0; k < K; ++k) sum += static_cast<double>(A[row][k]) * B[k][col];
    c[e] = static_cast<float>(sum);
  }
}

}  // namespace sim_detail

#if defined(BANDJIT_USE_FP16)
template <class T> struct Mma16Base {
  static constexpr int kK = 16;
  struct AFrag { u32 r[4]; };
  struct BFrag { u32 r[2]; };
  static float lo(u32 w) { T x; std::memcpy(&x, &w, 2); return to_float(x); }
  static float hi(u32 w) { w >>= 16; T x; std::memcpy(&x, &w, 2); return to_float(x); }
  static u32 pack(T l, T h) {
    unsigned short a, b;
    std::memcpy(&a, &l, 2);
    std::memcpy(&b, &h, 2);
    return static_cast<u32>(a) | (static_cast<u32>(b) << 16);
  }
  // A (16 x 16) of a row-major tile at rows row0.., columns k0..: lane (g, t4) holds
  // A[g][2t4..+1], A[g+8][2t4..+1], A[g][2t4+8..+9], A[g+8][2t4+8..+9].
  static void load_a(AFrag& a, const T* s, int ld, int row0, int k0) {
    const int g = lane_id() >> 2, t4 = lane_id() & 3;
    for (int r = 0; r < 4; ++r) {
      const T* p = s + (row0 + g + 8 * (r & 1)) * ld + k0 + 2 * t4 + 8 * (r >> 1);
      a.r[r] = pack(p[0], p[1]);
    }
  }
  // B (16 x 8) of a tile that stores B transposed (row n holds B[:, n]): lane (g, t4) holds
  // B[2t4..+1][g] and B[2t4+8..+9][g].
  static void load_b_nk(BFrag& b, const T* s, int ld, int n0, int k0) {
    const int g = lane_id() >> 2, t4 = lane_id() & 3;
    for (int r = 0; r < 2; ++r) {
      const T* p = s + (n0 + g) * ld + k0 + 2 * t4 + 8 * r;
      b.r[r] = pack(p[0], p[1]);
    }
  }
  // ldmatrix.x4 (not transposed): the fragments of k-steps k0 and k0 + 16; each lane's row
  // address (row n0 + lane mod 8, column k0 + 8·(lane / 8)) must be 16-byte aligned.
  static void load_b_nk_x2(BFrag& b0, BFrag& b1, const T* s, int ld, int n0, int k0) {
    if (reinterpret_cast<std::uintptr_t>(s + (n0 + (lane_id() & 7)) * ld + k0 + 8 * (lane_id() >> 3)) % 16)
      ::bandjit::sim::fail("ldmatrix: row address not 16-byte aligned");
    load_b_nk(b0, s, ld, n0, k0);
    load_b_nk(b1, s, ld, n0, k0 + 16);
  }
  // ldmatrix.x2.trans of a row-major [k][n] tile: lane (g, t4) receives
  // r0 = (B[k0 + 2t4][n0 + g], B[k0 + 2t4 + 1][n0 + g]), r1 = the same 8 rows further.
  static void load_b_kn(BFrag& b, const T* s, int ld, int k0, int n0) {
    const int g = lane_id() >> 2, t4 = lane_id() & 3;
    for (int r = 0; r < 2; ++r) {
      const int k = k0 + 2 * t4 + 8 * r;
      if (reinterpret_cast<std::uintptr_t>(s + (k0 + (lane_id() & 15)) * ld + n0) % 16)
        ::bandjit::sim::fail("ldmatrix: row address not 16-byte aligned");
      b.r[r] = pack(s[k * ld + n0 + g], s[(k + 1) * ld + n0 + g]);
    }
  }
  // ldmatrix.x4.trans: the fragments of n-tiles n0 and n0 + 8.
  static void load_b_kn_x2(BFrag& b0, BFrag& b1, const T* s, int ld, int k0, int n0) {
    load_b_kn(b0, s, ld, k0, n0);
    load_b_kn(b1, s, ld, k0, n0 + 8);
  }
  // m16n8k16, row.col: lane (g, t4) holds A[g][2t4..+1], A[g+8][2t4..+1], A[g][2t4+8..+9],
  // A[g+8][2t4+8..+9] and B[2t4..+1][g], B[2t4+8..+9][g].
  static void mma(float c[4], const AFrag& a, const BFrag& b) {
    using namespace ::bandjit::sim;
    const int t = static_cast<int>(threadIdx.x);
    std::memcpy(lane_slot(t), &a, sizeof a);
    std::memcpy(lane_slot(t) + 32, &b, sizeof b);
    warp_sync();
    const int base = t & ~31;
    sim_detail::warp_mma<16>(
        c,
        [&](int lane, float (&A)[16][16]) {
          AFrag f;
          std::memcpy(&f, lane_slot(base + lane), sizeof f);
          const int g = lane >> 2, t4 = lane & 3;
          for (int r = 0; r < 4; ++r) {
            const int row = g + 8 * (r & 1), col = 2 * t4 + 8 * (r >> 1);
            A[row][col] = lo(f.r[r]);
            A[row][col + 1] = hi(f.r[r]);
          }
        },
        [&](int lane, float (&B)[16][8]) {
          BFrag f;
          std::memcpy(&f, lane_slot(base + lane) + 32, sizeof f);
          const int g = lane >> 2, t4 = lane & 3;
          for (int r = 0; r < 2; ++r) {
            B[2 * t4 + 8 * r][g] = lo(f.r[r]);
            B[2 * t4 + 8 * r + 1][g] = hi(f.r[r]);
          }
        });
    warp_sync();
  }
};
template <> struct MmaOps<__half> : Mma16Base<__half> {};
#endif

// float32: the 3xTF32 interface. split() keeps the value whole in `big` (small = 0), so the
// emulated product is the exact float one; the fragment layout is m16n8k8's:
// A: a0 (g, t4), a1 (g + 8, t4), a2 (g, t4 + 4), a3 (g + 8, t4 + 4); B: b0 (t4, g), b1 (t4 + 4, g).
template <> struct MmaOps<float> {
  static constexpr int kK = 8;
  struct AFrag { u32 big[4], small[4]; };
  struct BFrag { u32 big[2], small[2]; };
  static void split(float x, u32& big, u32& small) {
    std::memcpy(&big, &x, 4);
    small = 0;
  }
  static float value(u32 w) { float x; std::memcpy(&x, &w, 4); return x; }
  static void load_a(AFrag& a, const float* s, int ld, int row0, int k0) {
    const int g = lane_id() >> 2, t4 = lane_id() & 3;
    for (int r = 0; r < 4; ++r) split(s[(row0 + g + 8 * (r & 1)) * ld + k0 + t4 + 4 * (r >> 1)], a.big[r], a.small[r]);
  }
  static void load_b_nk(BFrag& b, const float* s, int ld, int n0, int k0) {  // tile row n holds B[:, n]
    const int g = lane_id() >> 2, t4 = lane_id() & 3;
    for (int r = 0; r < 2; ++r) split(s[(n0 + g) * ld + k0 + t4 + 4 * r], b.big[r], b.small[r]);
  }
  static void load_b_kn(BFrag& b, const float* s, int ld, int k0, int n0) {
    const int g = lane_id() >> 2, t4 = lane_id() & 3;
    const float* p = s + (k0 + t4) * ld + n0 + g;
    split(p[0], b.big[0], b.small[0]);
    split(p[4 * ld], b.big[1], b.small[1]);
  }
  static void mma(float c[4], const AFrag& a, const BFrag& b) {
    using namespace ::bandjit::sim;
    const int t = static_cast<int>(threadIdx.x);
    std::memcpy(lane_slot(t), &a, sizeof a);
    std::memcpy(lane_slot(t) + 32, &b, sizeof b);
    warp_sync();
    const int base = t & ~31;
    sim_detail::warp_mma<8>(
        c,
        [&](int lane, float (&A)[16][8]) {
          AFrag f;
          std::memcpy(&f, lane_slot(base + lane), sizeof f);
          const int g = lane >> 2, t4 = lane & 3;
          for (int r = 0; r < 4; ++r) A[g + 8 * (r & 1)][t4 + 4 * (r >> 1)] = value(f.big[r]) + value(f.small[r]);
        },
        [&](int lane, float (&B)[8][8]) {
          BFrag f;
          std::memcpy(&f, lane_slot(base + lane) + 32, sizeof f);
          const int g = lane >> 2, t4 = lane & 3;
          for (int r = 0; r < 2; ++r) B[t4 + 4 * r][g] = value(f.big[r]) + value(f.small[r]);
        });
    warp_sync();
  }
};

}  // namespace bandjit
