// layer_norm's template run on the CPU by the SIMT emulator against the float64 reference,
// with the Cfg the generator's tiling picks: vector widths 1–16 bytes, thread groups of a
// few lanes up to 1024 threads (cross-warp reductions), pieces past the row's end, rows past
// the last one, rows walked in chunks or split over the blocks of a cluster, several row
// groups per block taken in turn, and the backward's column sums (shared memory or per-row
// adds) added onto non-zero dweight/dbias.
#define BANDJIT_USE_FP16 1
#include <cmath>
#include <mutex>

#include "bandjit/common.cuh"
struct float4 {
  float x, y, z, w;
};
inline float rsqrtf(float x) { return 1.0f / std::sqrt(x); }
inline std::mutex atomic_mutex;
inline float atomicAdd(float* p, float v) {
  std::lock_guard<std::mutex> lock(atomic_mutex);
  const float old = *p;
  *p = old + v;
  return old;
}
#include "bandjit/layer_norm.cuh"
#include "bandjit/layer_norm_overlapped.cuh"

#include <random>
#include <type_traits>
#include <vector>

#include "generator/layer_norm.hpp"
#include "reference/layer_norm_reference.hpp"
#include "support/catch.hpp"

using namespace bandjit;

namespace {

template <class T_, int H, bool W, bool B, long long ROWS, int V, int R, int NV, int CH, int RPB, int THREADS, int ITER,
          int CB = 1, bool PF = false, bool RS = false, int BUNDLE = 1, bool HW = false, int SET = 1>
struct LnCfg {
  using T = T_;
  static constexpr i64 kRows = ROWS;
  static constexpr int kHidden = H;
  static constexpr bool kWeight = W, kBias = B;
  static constexpr float kEpsilon = 1e-5f;
  static constexpr int kVec = V, kRowThreads = R, kPiecesPerThread = NV, kChunks = CH;
  static constexpr int kRowsPerBlock = RPB, kThreads = THREADS, kRowIterations = ITER, kClusterBlocks = CB;
  static constexpr bool kPrefetch = PF, kRegisterSums = RS;
  static constexpr int kRowBundle = BUNDLE;
  static constexpr bool kHoldWeights = HW;
  static constexpr int kRowSet = SET;
};

// Cfg with its first KA pieces' weight and bias loaded ahead (the generator emits the member
// only when it is set).
template <class Cfg, int KA>
struct Ahead : Cfg {
  static constexpr int kWeightAhead = KA;
};

// Cfg with KR pieces of weight and bias in its shared-memory ring (emitted only when set).
template <class Cfg, int KR>
struct Ring : Cfg {
  static constexpr int kWeightRing = KR;
};

// The generator's tiling for Cfg's problem under `tuning`, checked against Cfg; with
// `generated` false (row iterations and grid the generator would only pick for far more rows
// than the emulator runs quickly) Cfg's own layout and the grid it implies.
template <class Cfg>
LayerNormTiling expect_tiling(bool backward, bool generated, const Tuning& tuning) {
  constexpr DType dt = std::is_same_v<typename Cfg::T, float> ? DType::float32 : DType::float16;
  if (!generated) {
    using S = ln::Shape<Cfg>;
    LayerNormTiling t;
    t.threads = Cfg::kThreads;
    const i64 groups = (S::kUnits + Cfg::kRowsPerBlock * Cfg::kRowSet - 1) / (Cfg::kRowsPerBlock * Cfg::kRowSet);
    t.blocks = (groups + Cfg::kRowIterations - 1) / Cfg::kRowIterations * Cfg::kClusterBlocks;
    const int sums = backward ? int(Cfg::kWeight) + int(Cfg::kBias) : 0;
    t.shared_bytes = 4 * (S::kScratch + (Cfg::kChunks == 1 ? Cfg::kRowsPerBlock * S::HS * sums : 0));
    return t;
  }
  const LayerNormTiling t = layer_norm_tiling(Cfg::kRows, Cfg::kHidden, dt, backward, Cfg::kWeight, Cfg::kBias, tuning);
  REQUIRE(t.vec == Cfg::kVec);
  REQUIRE(t.row_threads == Cfg::kRowThreads);
  REQUIRE(t.pieces_per_thread == Cfg::kPiecesPerThread);
  REQUIRE(t.chunks == Cfg::kChunks);
  REQUIRE(t.rows_per_block == Cfg::kRowsPerBlock);
  REQUIRE(t.threads == Cfg::kThreads);
  REQUIRE(t.row_iterations == Cfg::kRowIterations);
  REQUIRE(t.cluster_blocks == Cfg::kClusterBlocks);
  REQUIRE(t.prefetch == Cfg::kPrefetch);
  REQUIRE(t.register_sums == Cfg::kRegisterSums);
  REQUIRE(t.row_bundle == Cfg::kRowBundle);
  REQUIRE(t.hold_weights == Cfg::kHoldWeights);
  REQUIRE(t.row_set == Cfg::kRowSet);
  REQUIRE(t.weight_ahead == WeightAheadOf<Cfg>::pieces);
  REQUIRE(t.weight_ring == WeightRingOf<Cfg>::pieces);
  return t;
}

struct Rel {
  double d2 = 0, r2 = 0;
  void add(double out, double ref) { d2 += (out - ref) * (out - ref), r2 += ref * ref; }
  double rel() const { return std::sqrt(d2 / r2); }
};

// x with a per-row offset, rounded to T: the kernel's input and its exact values.
template <class T>
void make_x(std::size_t rows, std::size_t H, std::vector<T>& x, std::vector<double>& xv, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  x.resize(rows * H);
  xv.resize(rows * H);
  for (std::size_t r = 0; r < rows; ++r) {
    const double offset = 2 * u(rng);
    for (std::size_t c = 0; c < H; ++c) {
      x[r * H + c] = from_float<T>(static_cast<float>(offset + 0.5 * u(rng)));
      xv[r * H + c] = to_float(x[r * H + c]);
    }
  }
}

std::vector<float> params(std::size_t H, double lo, double hi, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(lo, hi);
  std::vector<float> v(H);
  for (auto& e : v) e = static_cast<float>(u(rng));
  return v;
}

template <class Cfg>
void run_forward(bool generated = true, const Tuning& tuning = {}) {
  using T = typename Cfg::T;
  const LayerNormTiling t = expect_tiling<Cfg>(false, generated, tuning);
  const std::size_t rows = Cfg::kRows, H = Cfg::kHidden;
  INFO("forward rows " << rows << " hidden " << H);
  std::vector<T> x, y(rows * H, from_float<T>(NAN));
  std::vector<double> xv;
  make_x(rows, H, x, xv, 3);
  const auto w = params(H, 0.5, 1.5, 4), b = params(H, -0.5, 0.5, 5);
  std::vector<float> mean(rows, NAN), rstd(rows, NAN);
  std::vector<float4> smem(t.shared_bytes / 16 + 1);
  sim::launch({static_cast<unsigned>(t.blocks), 1, 1}, t.threads, [&] {
    layer_norm_forward<Cfg>(x.data(), Cfg::kWeight ? w.data() : nullptr, Cfg::kBias ? b.data() : nullptr, y.data(),
                            mean.data(), rstd.data(), reinterpret_cast<float*>(smem.data()));
  });
  const std::vector<double> wd(w.begin(), w.end()), bd(b.begin(), b.end());
  Rel ey, em, er;
  std::vector<double> ref(H);
  for (std::size_t r = 0; r < rows; ++r) {
    const auto s = reference::layer_norm_row(&xv[r * H], Cfg::kWeight ? wd.data() : nullptr,
                                             Cfg::kBias ? bd.data() : nullptr, static_cast<int>(H), 1e-5f, ref.data());
    for (std::size_t c = 0; c < H; ++c) ey.add(to_float(y[r * H + c]), ref[c]);
    em.add(mean[r], s.mean);
    er.add(rstd[r], s.rstd);
  }
  INFO("y " << ey.rel() << ", mean " << em.rel() << ", rstd " << er.rel());
  CHECK(ey.rel() <= (std::is_same_v<T, float> ? 1e-6 : 1e-3));
  CHECK(em.rel() <= 1e-6);
  CHECK(er.rel() <= 1e-6);
}

// A backward problem: fresh inputs, float32 statistics from the float64 reference, non-zero
// dweight/dbias to add onto, and the check of a kernel's outputs against float64.
template <class T>
struct BackwardCase {
  std::size_t rows, H;
  std::vector<T> x, dy, dx;
  std::vector<double> xv, dyv;
  std::vector<float> w, mean, rstd, dw0, db0, dw, db;
  std::vector<reference::RowStats> stats;

  BackwardCase(std::size_t rows_, std::size_t H_) : rows(rows_), H(H_), dy(rows * H), dx(rows * H, from_float<T>(NAN)) {
    make_x(rows, H, x, xv, 6);
    std::mt19937 rng(7);
    std::uniform_real_distribution<double> u(-1, 1);
    dyv.resize(rows * H);
    for (std::size_t i = 0; i < dy.size(); ++i) dy[i] = from_float<T>(static_cast<float>(u(rng))), dyv[i] = to_float(dy[i]);
    w = params(H, 0.5, 1.5, 8);
    mean.resize(rows), rstd.resize(rows), stats.resize(rows);
    std::vector<double> scratch(H);
    for (std::size_t r = 0; r < rows; ++r) {
      const auto s = reference::layer_norm_row(&xv[r * H], nullptr, nullptr, static_cast<int>(H), 1e-5, scratch.data());
      mean[r] = static_cast<float>(s.mean), rstd[r] = static_cast<float>(s.rstd);
      stats[r] = {mean[r], rstd[r]};
    }
    dw0 = params(H, -1, 1, 9), db0 = params(H, -1, 1, 10);
    dw = dw0, db = db0;
  }

  void check(bool weight, bool bias) const {
    const std::vector<double> wd(w.begin(), w.end());
    std::vector<double> ref(H), rw(H), rb(H);
    Rel edx, ew, eb;
    for (std::size_t r = 0; r < rows; ++r) {
      reference::layer_norm_backward_row(&dyv[r * H], &xv[r * H], stats[r], weight ? wd.data() : nullptr,
                                         static_cast<int>(H), ref.data(), rw.data(), rb.data());
      for (std::size_t c = 0; c < H; ++c) edx.add(to_float(dx[r * H + c]), ref[c]);
    }
    for (std::size_t c = 0; c < H; ++c) {
      ew.add(double(dw[c]) - dw0[c], weight ? rw[c] : 0.0);
      eb.add(double(db[c]) - db0[c], bias ? rb[c] : 0.0);
    }
    INFO("dx " << edx.rel() << ", dweight " << ew.rel() << ", dbias " << eb.rel());
    CHECK(edx.rel() <= (std::is_same_v<T, float> ? 1e-6 : 1e-3));
    if (weight) CHECK(ew.rel() <= 1e-5);
    if (!weight) CHECK(ew.d2 == 0);  // untouched
    if (bias) CHECK(eb.rel() <= 1e-5);
    if (!bias) CHECK(eb.d2 == 0);
  }
};

template <class Cfg>
void run_backward(bool generated = true, const Tuning& tuning = {}) {
  using T = typename Cfg::T;
  const LayerNormTiling t = expect_tiling<Cfg>(true, generated, tuning);
  BackwardCase<T> c(Cfg::kRows, Cfg::kHidden);
  INFO("backward rows " << c.rows << " hidden " << c.H << " blocks " << t.blocks);
  std::vector<float4> smem(t.shared_bytes / 16 + 1);
  sim::launch({static_cast<unsigned>(t.blocks), 1, 1}, t.threads, [&] {
    layer_norm_backward<Cfg>(c.dy.data(), c.x.data(), c.mean.data(), c.rstd.data(), Cfg::kWeight ? c.w.data() : nullptr,
                             c.dx.data(), Cfg::kWeight ? c.dw.data() : nullptr, Cfg::kBias ? c.db.data() : nullptr,
                             reinterpret_cast<float*>(smem.data()));
  });
  c.check(Cfg::kWeight, Cfg::kBias);
}

// The staged backward's Cfg; kSharedBytes is StagedShape's own (the tiling test pins the
// generator's to it).
template <class T_, int H, bool W, bool B, long long ROWS, int TH, int NV, int CB, int ST, int ITER, bool OV = false>
struct StagedBase {
  using T = T_;
  static constexpr i64 kRows = ROWS;
  static constexpr int kHidden = H;
  static constexpr bool kWeight = W, kBias = B;
  static constexpr int kVec = 16 / static_cast<int>(sizeof(T)), kThreads = TH, kPiecesPerThread = NV;
  static constexpr int kClusterBlocks = CB, kStages = ST, kRowIterations = ITER;
  static constexpr bool kOverlap = OV;
};
template <class Base>
struct StagedCfg : Base {
  static constexpr unsigned kSharedBytes = ln::StagedShape<Base>::kSharedBytes;
};

// With `tuning` set, the generator's staged tiling of the problem must be Cfg's.
template <class Cfg>
void run_backward_staged(const Tuning* tuning) {
  using T = typename Cfg::T;
  using S = ln::StagedShape<Cfg>;
  const std::int64_t clusters = (Cfg::kRows + Cfg::kRowIterations - 1) / Cfg::kRowIterations;
  if (tuning) {
    constexpr DType dt = std::is_same_v<T, float> ? DType::float32 : DType::float16;
    const auto t = layer_norm_staged_tiling(Cfg::kRows, Cfg::kHidden, dt, *tuning);
    REQUIRE(t.staged);
    CHECK(t.vec == Cfg::kVec);
    CHECK(t.threads == Cfg::kThreads);
    CHECK(t.pieces_per_thread == Cfg::kPiecesPerThread);
    CHECK(t.cluster_blocks == Cfg::kClusterBlocks);
    CHECK(t.stages == Cfg::kStages);
    CHECK(t.overlap == Cfg::kOverlap);
    CHECK(t.row_iterations == Cfg::kRowIterations);
    CHECK(t.shared_bytes == Cfg::kSharedBytes);
    CHECK(t.blocks == clusters * Cfg::kClusterBlocks);
  }
  BackwardCase<T> c(Cfg::kRows, Cfg::kHidden);
  INFO("staged backward rows " << c.rows << " hidden " << c.H << " clusters " << clusters);
  sim::global_ranges = {{c.x.data(), c.x.size() * sizeof(T)}, {c.dy.data(), c.dy.size() * sizeof(T)}};
  sim::failures.clear();
  barrier_gave_up() = false;
  std::vector<float4> smem(S::kSharedBytes / 16 + 1, float4{NAN, NAN, NAN, NAN});
  sim::launch({static_cast<unsigned>(clusters * Cfg::kClusterBlocks), 1, 1}, Cfg::kThreads, [&] {
    float* dw = Cfg::kWeight ? c.dw.data() : nullptr;
    float* db = Cfg::kBias ? c.db.data() : nullptr;
    const float* w = Cfg::kWeight ? c.w.data() : nullptr;
    float* sm = reinterpret_cast<float*>(smem.data());
    if constexpr (Cfg::kOverlap)
      layer_norm_backward_overlapped<Cfg>(c.dy.data(), c.x.data(), c.mean.data(), c.rstd.data(), w, c.dx.data(), dw, db, sm);
    else
      layer_norm_backward_staged<Cfg>(c.dy.data(), c.x.data(), c.mean.data(), c.rstd.data(), w, c.dx.data(), dw, db, sm);
  });
  for (const auto& f : sim::failures) UNSCOPED_INFO(f);
  CHECK(sim::failures.empty());
  c.check(Cfg::kWeight, Cfg::kBias);
}

}  // namespace

TEST_CASE("sim: layer_norm forward, groups of 1 to 128 threads", "[sim]") {
  run_forward<LnCfg<float, 100, true, true, 7, 4, 8, 4, 1, 32, 256, 1>>();
  run_forward<LnCfg<__half, 32, false, false, 37, 8, 1, 4, 1, 256, 256, 1>>();
  run_forward<LnCfg<__half, 768, true, false, 5, 8, 32, 3, 1, 8, 256, 1>>();
  run_forward<LnCfg<__half, 4096, true, true, 3, 8, 128, 4, 1, 2, 256, 1>>();
  run_forward<LnCfg<__half, 33, false, true, 9, 1, 16, 3, 1, 16, 256, 1>>();  // odd H: 2-byte pieces
}

TEST_CASE("sim: layer_norm, two 16-bit rows of H ≡ 4 (mod 8) as one unit of 16-byte pieces", "[sim]") {
  // H = 100: the unit's piece 12 holds the first row's last quad and the second row's first;
  // 33 units, so the second block has one. H = 12: one thread a unit, three pieces.
  run_forward<LnCfg<__half, 100, true, true, 66, 8, 8, 4, 1, 32, 256, 1, 1, false, false, 2>>();
  run_forward<LnCfg<__half, 12, true, true, 10, 8, 1, 3, 1, 256, 256, 1, 1, false, false, 2>>();
  // An odd number of rows keeps one row a unit (8-byte pieces).
  run_forward<LnCfg<__half, 100, true, true, 9, 4, 8, 4, 1, 32, 256, 1>>();
  // Backward (units only with BANDJIT_ROW_BUNDLE=1): shared column sums of both rows folded
  // per column; with prefetch and register sums (weight only); units in turn past the last one.
  Tuning units;
  units.row_bundle = 2;
  run_backward<LnCfg<__half, 100, true, true, 90, 8, 16, 2, 1, 16, 256, 1, 1, false, false, 2>>(true, units);
  Tuning on = units;
  on.row_prefetch = 2, on.row_register_sums = 2;
  run_backward<LnCfg<__half, 100, true, false, 90, 8, 16, 2, 1, 16, 256, 1, 1, true, true, 2>>(true, on);
  run_backward<LnCfg<__half, 100, false, true, 302, 8, 16, 2, 1, 16, 256, 4, 1, true, false, 2>>(false);
  run_backward<LnCfg<__half, 12, true, true, 42, 8, 1, 3, 1, 256, 256, 1, 1, false, false, 2>>(false);
  // H = 516: units of two warps (the second row's sums cross warps too), without weight and
  // bias in the forward; the forward with prefetch, units in turn past the last one.
  run_backward<LnCfg<__half, 516, true, true, 16, 8, 64, 3, 1, 4, 256, 1, 1, false, false, 2>>(false);
  run_forward<LnCfg<__half, 516, false, false, 16, 8, 64, 3, 1, 4, 256, 1, 1, false, false, 2>>(false);
  run_forward<LnCfg<__half, 100, true, false, 302, 8, 8, 4, 1, 32, 256, 4, 1, true, false, 2>>(false);
  // Units with every piece's weights ahead: piece 12 of H = 100 straddles the two rows, so the
  // ahead loads take each quad's row start as the output loop does (KA 8 clamps to NV = 4);
  // bias only, with prefetch, units in turn.
  run_forward<Ahead<LnCfg<__half, 100, true, true, 66, 8, 8, 4, 1, 32, 256, 1, 1, false, false, 2>, 8>>(false);
  run_forward<Ahead<LnCfg<__half, 100, false, true, 302, 8, 8, 4, 1, 32, 256, 4, 1, true, false, 2>, 4>>(false);
}

TEST_CASE("sim: layer_norm forward, a row split over the blocks of a cluster", "[sim]") {
  // float32 H = 65536: four slices of 16384; the emulator runs the path without clusters.
  run_forward<LnCfg<float, 65536, true, true, 3, 4, 512, 8, 1, 1, 512, 1, 4>>();
}

TEST_CASE("sim: layer_norm forward, two rows a thread group at once (row pairs)", "[sim]") {
  // The generator's layouts with BANDJIT_ROW_PAIRS=1 (half the registers a row): an odd row
  // count leaves the last pair's second row absent (an even one stores it unguarded); 16-bit H = 4096 in 256-thread groups; a
  // float32 H = 65536 row over a cluster of 8 (the emulator's path without clusters).
  Tuning pairs;
  pairs.row_pairs = 2;
  run_forward<LnCfg<float, 100, true, true, 7, 4, 8, 4, 1, 32, 256, 1, 1, false, false, 1, false, 2>>(true, pairs);
  run_forward<LnCfg<float, 100, true, true, 130, 4, 8, 4, 1, 32, 256, 1, 1, false, false, 1, false, 2>>(true, pairs);
  run_forward<LnCfg<__half, 4096, true, true, 5, 8, 256, 2, 1, 1, 256, 1, 1, false, false, 1, false, 2>>(true, pairs);
  run_forward<LnCfg<__half, 24, false, true, 9, 8, 1, 3, 1, 256, 256, 1, 1, false, false, 1, false, 2>>(false);
  run_forward<LnCfg<float, 65536, true, true, 3, 4, 512, 4, 1, 1, 512, 1, 8, false, false, 1, false, 2>>(true, pairs);
  // H = 100 16-bit with an even row count takes two-row units, not pairs.
  run_forward<LnCfg<__half, 100, true, true, 66, 8, 8, 4, 1, 32, 256, 1, 1, false, false, 2>>(true, pairs);
}

TEST_CASE("sim: layer_norm forward, 16-bit rows in 8-byte pieces, the first pieces' weights ahead", "[sim]") {
  // The generator's float16 defaults for H ≥ 1024 (forward_defaults): 8-byte pieces, row pairs
  // up to 2048 16-byte pieces, and from H = 16384 the first piece's weight and bias loaded
  // with the row. H = 4104 (3 rows: the last pair half empty) covers its 1026 pieces unevenly
  // (512 threads × 3); H = 65536 is four cluster slices (the emulator's path without clusters).
  Tuning t;
  t.row_vec_bytes = 8, t.row_pairs = 2;
  run_forward<LnCfg<__half, 1024, true, true, 6, 4, 64, 4, 1, 4, 256, 1, 1, false, false, 1, false, 2>>(true, t);
  run_forward<LnCfg<__half, 4104, true, true, 3, 4, 512, 3, 1, 1, 512, 1, 1, false, false, 1, false, 2>>(true, t);
  t.row_weight_ahead = 1 + 2;  // two pieces ahead (the knob's value plus one)
  run_forward<Ahead<LnCfg<__half, 4104, true, true, 3, 4, 512, 3, 1, 1, 512, 1, 1, false, false, 1, false, 2>, 2>>(true, t);
  run_forward<Ahead<LnCfg<__half, 4104, true, false, 3, 4, 512, 3, 1, 1, 512, 1, 1, false, false, 1, false, 2>, 2>>(true, t);
  t.row_weight_ahead = 1 + 1, t.row_registers = 32, t.row_block_threads = 512;
  run_forward<Ahead<LnCfg<__half, 16384, true, true, 2, 4, 512, 8, 1, 1, 512, 1, 1, false, false, 1, false, 2>, 1>>(true, t);
  t.row_pairs = 0, t.row_block_threads = 256;
  run_forward<Ahead<LnCfg<__half, 65536, true, true, 3, 4, 256, 16, 1, 1, 256, 1, 4>, 1>>(true, t);
}

TEST_CASE("sim: layer_norm forward, weight and bias through each thread's shared-memory ring", "[sim]") {
  // BANDJIT_ROW_WEIGHT_RING: 16-bit H = 65536 over four cluster slices (16 pieces, 6 slots:
  // each slot refilled twice), with weight and bias or one of them; float32 rows whose 4 pieces
  // cap the ring at 4, 16 rows a block of which the last 7 are past the last row; float32
  // H = 65536 as the generator's default (4 slots, 8 pieces, clusters of 4); 16-bit H = 4104
  // (1026 pieces over 512 threads × 3: all but two threads' third pieces are past the row).
  Tuning t;
  t.row_weight_ring = 1 + 6;  // the knob's value plus one
  run_forward<Ring<LnCfg<float, 4096, false, true, 5, 4, 256, 4, 1, 1, 256, 1>, 4>>(true, t);
  run_forward<Ring<LnCfg<float, 256, true, true, 9, 4, 16, 4, 1, 16, 256, 1>, 4>>(true, t);
  t.row_weight_ring = 1 + 4;
  run_forward<Ring<LnCfg<float, 65536, true, true, 3, 4, 512, 8, 1, 1, 512, 1, 4>, 4>>(true, t);
  t.row_weight_ring = 1 + 6;
  // The generator's 16-bit defaults (forward_defaults): 8-byte pieces from H = 1024, 32
  // registers of row data in 256-thread blocks from 640 pieces.
  t.row_vec_bytes = 8, t.row_registers = 32, t.row_block_threads = 256;
  run_forward<Ring<LnCfg<__half, 65536, true, true, 3, 4, 256, 16, 1, 1, 256, 1, 4>, 6>>(true, t);
  run_forward<Ring<LnCfg<__half, 65536, true, false, 3, 4, 256, 16, 1, 1, 256, 1, 4>, 6>>(true, t);
  // No ring where the template would not take it: row pairs (on here, as the generator's
  // 16-bit default up to H = 4096).
  t.row_pairs = 2, t.row_registers = 0, t.row_block_threads = 0;
  run_forward<LnCfg<__half, 1024, true, true, 7, 4, 64, 4, 1, 4, 256, 1, 1, false, false, 1, false, 2>>(true, t);
  t.row_weight_ring = 1 + 2, t.row_pairs = 1;
  run_forward<Ring<LnCfg<__half, 4104, true, true, 3, 4, 512, 3, 1, 1, 512, 1>, 2>>(true, t);
}

TEST_CASE("sim: layer_norm forward, a 512-thread row walked in chunks", "[sim]") {
  // 65535 = 3·5·17·257 cannot be split: 1-element pieces, 128 a thread in 32 chunks of 4.
  run_forward<LnCfg<float, 65535, false, true, 2, 1, 512, 4, 32, 1, 512, 1>>();
}

TEST_CASE("sim: layer_norm backward, column sums in registers or shared memory", "[sim]") {
  run_backward<LnCfg<float, 100, true, true, 45, 4, 16, 2, 1, 16, 256, 1, 1, false, true>>();
  run_backward<LnCfg<__half, 768, false, false, 9, 8, 64, 2, 1, 4, 256, 1>>();
  run_backward<LnCfg<float, 5120, true, false, 3, 4, 1024, 2, 1, 1, 1024, 1>>();
  // 1100 rows over 367 blocks of 3 rows each (one wave of 132 × 4 blocks assumed); then the
  // same with the next row prefetched and column sums in registers.
  run_backward<LnCfg<__half, 4096, false, true, 1100, 8, 256, 2, 1, 1, 256, 3>>();
  Tuning prefetch;
  prefetch.row_prefetch = 2, prefetch.row_register_sums = 2;
  run_backward<LnCfg<__half, 4096, false, true, 1100, 8, 256, 2, 1, 1, 256, 3, 1, true, true>>(true, prefetch);
}

TEST_CASE("sim: layer_norm backward without prefetch, column sums in shared memory", "[sim]") {
  Tuning off;
  off.row_prefetch = 1, off.row_register_sums = 1;
  run_backward<LnCfg<float, 100, true, true, 45, 4, 16, 2, 1, 16, 256, 1>>(true, off);
  run_backward<LnCfg<__half, 4096, true, true, 1100, 8, 256, 2, 1, 1, 256, 3>>(true, off);
  // Shared sums with prefetch, and register sums without it, over row groups taken in turn.
  run_backward<LnCfg<__half, 1024, true, true, 301, 8, 64, 2, 1, 4, 256, 5, 1, true, false>>(false);
  run_backward<LnCfg<float, 96, true, false, 301, 4, 8, 3, 1, 32, 256, 4, 1, false, true>>(false);
  run_backward<LnCfg<__half, 1024, true, true, 301, 8, 64, 2, 1, 4, 256, 5, 1, false, true>>(false);
}

TEST_CASE("sim: layer_norm backward with each thread's weights held in registers", "[sim]") {
  // 25 pieces over 8 threads of 4 (the last slots past the row), rows in turn with prefetch
  // and shared column sums; float32 with register sums and a weight only.
  run_backward<LnCfg<__half, 100, true, true, 302, 4, 8, 4, 1, 32, 256, 4, 1, true, false, 1, true>>(false);
  run_backward<LnCfg<float, 96, true, false, 301, 4, 8, 3, 1, 32, 256, 4, 1, false, true, 1, true>>(false);
  Tuning hold;
  hold.row_hold_weights = 2;
  run_backward<LnCfg<float, 768, true, true, 9, 4, 128, 2, 1, 2, 256, 1, 1, false, true, 1, true>>(true, hold);
}

TEST_CASE("sim: layer_norm forward with prefetch, row groups taken in turn", "[sim]") {
  Tuning on;
  on.row_prefetch = 2;
  run_forward<LnCfg<float, 100, true, true, 7, 4, 8, 4, 1, 32, 256, 1, 1, true>>(true, on);
  // Rows in turn (the generator picks them only for > 2112 row groups): the last iterations
  // of the last block run past the last row.
  run_forward<LnCfg<__half, 768, true, false, 37, 8, 32, 3, 1, 8, 256, 3, 1, true>>(false);
  run_forward<LnCfg<float, 100, false, true, 301, 4, 8, 4, 1, 32, 256, 4, 1, true>>(false);
  run_forward<LnCfg<float, 100, true, true, 301, 4, 8, 4, 1, 32, 256, 4, 1, false>>(false);
  // A cluster row (the emulator's path without clusters) in turn.
  run_forward<LnCfg<float, 65536, true, true, 5, 4, 512, 8, 1, 1, 512, 2, 4, true>>(false);
}

TEST_CASE("sim: layer_norm backward, a row split over the blocks of a cluster", "[sim]") {
  // Four slices of 16384 columns; the emulator has no clusters, so each block also reads the
  // other slices for the row sums (the sm_80 path); slices, column sums and grid are the same.
  run_backward<LnCfg<__half, 65536, true, true, 3, 8, 1024, 2, 1, 1, 1024, 1, 4>>();
}

TEST_CASE("sim: layer_norm backward, a row walked in chunks adds every row", "[sim]") {
  // 65535 = 3·5·17·257: no cluster split; 1-element pieces, 64 per thread in 32 chunks.
  run_backward<LnCfg<float, 65535, true, true, 2, 1, 1024, 2, 32, 1, 1024, 1>>();
}

TEST_CASE("sim: layer_norm backward staged through shared memory by bulk copies", "[sim]") {
  Tuning on;
  on.row_staged = 2, on.row_overlap = 1;
  // The generator's layouts: H = 768 float16 (96 threads, one piece each, four stages, 301
  // rows over 101 blocks: 99 take three, two take two); H = 1024 float32 with only a bias
  // (256 threads, two rows a block).
  run_backward_staged<StagedCfg<StagedBase<__half, 768, true, true, 301, 96, 1, 1, 4, 3>>>(&on);
  run_backward_staged<StagedCfg<StagedBase<float, 1024, false, true, 140, 256, 1, 1, 4, 2>>>(&on);
  run_backward_staged<StagedCfg<StagedBase<__half, 256, true, true, 300, 32, 1, 1, 4, 3>>>(&on);  // one warp
  // Hand-made: two stages refilled many times (17 rows a block), several pieces a thread,
  // weight without bias; clusters of 2 and 4 whose rows split unevenly (the emulator has no
  // clusters: each block also reads the other slices from global memory).
  run_backward_staged<StagedCfg<StagedBase<__half, 512, true, false, 34, 32, 2, 1, 2, 17>>>(nullptr);
  run_backward_staged<StagedCfg<StagedBase<float, 256, false, false, 9, 32, 1, 2, 3, 4>>>(nullptr);
  run_backward_staged<StagedCfg<StagedBase<__half, 1024, true, true, 7, 32, 1, 4, 2, 3>>>(nullptr);
  // More than 32 rows a block: the rows' mean and rstd come in batches of 32 over the lanes.
  run_backward_staged<StagedCfg<StagedBase<__half, 256, true, true, 145, 32, 1, 1, 3, 75>>>(nullptr);
  run_backward_staged<StagedCfg<StagedBase<__half, 512, true, true, 130, 64, 1, 1, 3, 64>>>(nullptr);  // two warps, 2 × 32 rows
}

TEST_CASE("sim: layer_norm backward overlapped (the next row's first pass before this row's cluster sum)", "[sim]") {
  // The emulator performs a bulk copy when it is issued: a stage refilled before every thread
  // had read it would hand some threads the next row's pieces.
  Tuning on;
  on.row_staged = 2, on.row_overlap = 2;
  // The generator's layouts: H = 768 float16 (96 threads, four stages, 301 rows three a
  // block), float32 H = 1024 with a bias only (256 threads).
  run_backward_staged<StagedCfg<StagedBase<__half, 768, true, true, 301, 96, 1, 1, 4, 3, true>>>(&on);
  run_backward_staged<StagedCfg<StagedBase<float, 1024, false, true, 140, 256, 1, 1, 4, 2, true>>>(&on);
  on.row_stages = 2;
  run_backward_staged<StagedCfg<StagedBase<__half, 768, true, true, 301, 96, 1, 1, 2, 3, true>>>(&on);
  // Hand-made: one warp over up to 17 rows, two stages; clusters of 2 and 8 whose rows split
  // unevenly; one row a block; more than 32 rows a block (statistics from lanes).
  run_backward_staged<StagedCfg<StagedBase<__half, 256, true, true, 300, 32, 1, 1, 2, 17, true>>>(nullptr);
  run_backward_staged<StagedCfg<StagedBase<float, 256, false, false, 9, 32, 1, 2, 3, 4, true>>>(nullptr);
  run_backward_staged<StagedCfg<StagedBase<__half, 2048, true, true, 13, 32, 1, 8, 3, 3, true>>>(nullptr);
  run_backward_staged<StagedCfg<StagedBase<__half, 512, true, true, 5, 64, 1, 1, 2, 1, true>>>(nullptr);
  run_backward_staged<StagedCfg<StagedBase<__half, 1024, true, false, 75, 32, 2, 2, 4, 40, true>>>(nullptr);
}
