#include "generator/softmax_tiling.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "bandjit/errors.hpp"
#include "generator/tile_config.hpp"

namespace bandjit {
namespace {
// Registers of row data a thread holds: ≤ 32 keeps it near 60 registers, 2 blocks of 512 per SM.
constexpr int kDefaultDataRegisters = 32;
constexpr int kDefaultBlockThreads = 512;
constexpr int kMaxCluster = 8;       // the portable cluster size
std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

// Staged rows: 8 pieces a thread, in blocks of up to 512 threads where their slots fit (a
// row needing more than 256 threads: fewer blocks a cluster, measured on the H200,
// bench/results/2026-12-03-softmax-long-rows: L = 65536 float16 73 → 79 %, masked 64 → 70 %).
constexpr int kStagedPieces = 8;
int staged_block_threads(int slot_bytes) {
  return 512u * kStagedPieces * slot_bytes <= kPortableSharedBytes ? 512 : 256;
}

// Held rows (the staged passes over pieces held as loaded in registers): 4 pieces a thread in
// 256-thread blocks (H200, bench/results/2026-12-04-held-rows: at L = 65536 float16 85 %
// against 80 % with 8 pieces in 4 × 256, 73 % in 2 × 512, 82 % with 4 in 4 × 512).
constexpr int kHeldPieces = 4, kHeldBlockThreads = 256;

// A staged row: `pieces` a thread (one row slice a block), whole warps, a cluster beyond one
// block of `block_threads` (more pieces a thread past 8 blocks); each thread's pieces and
// mask pieces take `slot_bytes` of shared memory each. Tuning::row_pieces and
// row_block_threads replace `pieces` and `block_threads`.
SoftmaxRowTiling staged_tiling(SoftmaxRowTiling t, std::int64_t rows, int slot_bytes, const Tuning& tuning,
                               int pieces = kStagedPieces, int block_threads = 0) {
  const int kPieces = tuning.row_pieces ? tuning.row_pieces : pieces;
  const int kBlockThreads = tuning.row_block_threads ? tuning.row_block_threads
                            : block_threads           ? block_threads
                                                      : staged_block_threads(slot_bytes);
  const std::int64_t warps = ceil_div(t.pieces, 32 * kPieces);
  t.cluster = static_cast<int>(std::min<std::int64_t>(kMaxCluster, ceil_div(warps * 32, kBlockThreads)));
  const std::int64_t block_warps = std::min<std::int64_t>(kBlockThreads / 32, ceil_div(warps, t.cluster));
  t.row_threads = static_cast<int>(32 * block_warps * t.cluster);
  t.pieces_per_thread = static_cast<int>(ceil_div(t.pieces, t.row_threads));
  t.rows_per_block = 1;
  t.threads = t.row_threads / t.cluster;
  t.blocks = rows * t.cluster;
  t.stage_bytes = static_cast<std::uint32_t>(t.threads) * t.pieces_per_thread * slot_bytes;
  // The defaults stay within every sm_80+ card's 99 KiB; the knobs can ask for more than any holds.
  if (t.stage_bytes > kMaxSharedBytes)
    throw Error(ErrorKind::invalid_problem,
                fmt::format("a staged row of {} pieces needs {} bytes of shared memory a block with {} pieces a "
                            "thread in blocks of {} threads (BANDJIT_ROW_PIECES, BANDJIT_ROW_BLOCK_THREADS); at most "
                            "{} fit an SM: use fewer",
                            t.pieces, t.stage_bytes, t.pieces_per_thread, t.threads, kMaxSharedBytes),
                {{"field", "BANDJIT_ROW_BLOCK_THREADS"}, {"value", std::to_string(t.threads)}});
  return t;
}
}  // namespace

SoftmaxRowTiling softmax_row_tiling(std::int64_t rows, std::int64_t L, DType dtype, bool backward,
                                    const Tuning& tuning, int mask_bytes) {
  const int kDataRegisters = tuning.row_registers ? tuning.row_registers : kDefaultDataRegisters;
  if (L < 1 || L > kMaxSoftmaxRow)
    throw Error(ErrorKind::invalid_problem, fmt::format("row_length = {} is not supported; allowed: 1 … {}", L, kMaxSoftmaxRow),
                {{"field", "row_length"}, {"value", std::to_string(L)}, {"allowed", fmt::format("1 … {}", kMaxSoftmaxRow)}});
  SoftmaxRowTiling t;
  t.vec = 16 / static_cast<int>(element_size(dtype));
  while (L % t.vec != 0) t.vec /= 2;
  t.pieces = static_cast<int>(L / t.vec);
  // Measured on the H200 (bench/results/2026-11-30-issue-7/sweep): threads that hold at most
  // 32 bytes of a short row (so a warp's loads cover whole sectors), and blocks of 256
  // threads with one multi-warp row each unless the row needs 257 … 512 threads (a cluster
  // of two would cost more) — 49 % → 96 % of the copy bandwidth at L = 5120 float32.
  const int piece_bytes = t.vec * static_cast<int>(element_size(dtype));
  const int mask_piece_bytes = t.vec * mask_bytes;
  // Staged (the forward's pieces through shared memory, templates/softmax.cuh): long 16-bit
  // rows, where holding the row as float32 registers leaves too few bytes in flight (H200,
  // bench/results/2026-12-01-issue-7/staged: L = 65536 58 → 70 %). Since the shuffle
  // reduction, registers win at 2048 pieces (L = 16384: 90–91 % against 88 % staged, masked
  // 88 against 74–77 %) and staging at 8192 (L = 65536 in 512-thread blocks: 77–79 against
  // 65–67 %, masked 68–70 against 63–64 %; bench/results/2026-12-03-softmax-long-rows).
  // At 4096 pieces (L = 32768) staging wins too: 89 against 69 %, masked 75–78 against 67 %
  // (bench/results/2026-12-03-softmax-16384-registers). So: from 4096 pieces, unmasked or
  // with a boolean mask (measured; additive masks were not, and keep registers). cp.async
  // moves 4, 8 or 16 bytes.
  const bool stageable = !backward && piece_bytes >= 4 && (mask_bytes == 0 || mask_piece_bytes >= 4);
  // Held (templates/softmax.cuh: the staged passes over pieces kept as loaded in registers,
  // half the registers of their float32 values, the cluster's exchange through the mailbox):
  // unmasked 16-bit rows of 16-byte pieces where the alternative is a register row (one
  // 512-thread block at 2048 pieces, a cluster up to 4095) or a staged cluster (4097 … 8192);
  // generator/softmax.cpp gives them to the sm_90a build alone. Measured on the H200 over
  // three interleaved rounds (bench/results/2026-12-04-held-rows): L = 16384 90.6 → 92.1 %,
  // 65536 83 → 84.8 % (bfloat16 alike). Where one staged block holds the row (L = 32768) staging
  // stays ahead (90.2 against 87.6 %), and every boolean-masked row lost (77 → 76 % at
  // L = 65536). Knobs may hold any stageable row with no mask or a boolean one (as bits).
  const bool held_default = element_size(dtype) == 2 && mask_bytes == 0 && piece_bytes == 16 &&
                            ((t.pieces >= 2048 && t.pieces < 4096) || (t.pieces > 4096 && t.pieces <= 8192));
  if (stageable && mask_bytes <= 1 && (tuning.row_held ? tuning.row_held == 2 : tuning.row_staged == 0 && held_default)) {
    SoftmaxRowTiling h = staged_tiling(t, rows, 0, tuning, kHeldPieces, kHeldBlockThreads);
    h.stage_bytes = 0;
    h.held = mask_bytes == 0 || h.pieces_per_thread * h.vec <= 64;
    if (h.held) return h;
  }
  const bool staged_default = element_size(dtype) == 2 && t.pieces >= 4096 && mask_bytes <= 1;
  t.staged = stageable && (tuning.row_staged ? tuning.row_staged == 2 : staged_default);
  // Slots hold x's pieces and an additive mask's; a boolean mask's bits stay in registers
  // where a thread's keys fit 64 bits (every default layout; knob layouts may stage it too).
  if (t.staged) {
    const SoftmaxRowTiling bits = staged_tiling(t, rows, piece_bytes + (mask_bytes == 1 ? 0 : mask_piece_bytes), tuning);
    if (mask_bytes != 1 || bits.pieces_per_thread * bits.vec <= 64) return bits;
    return staged_tiling(t, rows, piece_bytes + mask_piece_bytes, tuning);
  }
  const int kWarpPieces = tuning.row_pieces ? tuning.row_pieces : std::max(1, 32 / piece_bytes);
  // The forward holds a float32 register per value, the backward the raw pieces of y and
  // dy (a piece narrower than 4 bytes still takes a register).
  const int piece_registers = backward ? 2 * std::max<int>(1, t.vec * static_cast<int>(element_size(dtype)) / 4) : t.vec;
  const int max_pieces = std::max(1, kDataRegisters / piece_registers);  // per thread
  if (t.pieces <= 32 * max_pieces) {
    // Within a warp: the fewest threads (a power of two) that keep ≤ 4 pieces (or the
    // register budget) each, so short rows take a few lanes and reduce with few shuffles.
    const int per_thread = std::min(max_pieces, kWarpPieces);
    t.row_threads = 1;
    while (t.row_threads < 32 && ceil_div(t.pieces, t.row_threads) > per_thread) t.row_threads *= 2;
  } else {
    // Whole warps; beyond one block's worth, a cluster of blocks with whole warps each.
    const std::int64_t warps = ceil_div(t.pieces, 32 * max_pieces);
    const int kMaxBlockThreads = tuning.row_block_threads ? tuning.row_block_threads
                                 : warps * 32 > 256 && warps * 32 <= kDefaultBlockThreads ? kDefaultBlockThreads
                                                                                       : 256;
    // Where the limit would need more than 8 blocks: 512-thread blocks for the forward
    // (its 32 float32 values a thread allow two such blocks an SM), 1024 for the backward
    // (measured: 4 × 1024 beats 8 × 512 at L = 65536 float32).
    int block_limit = kMaxBlockThreads;
    if (ceil_div(warps * 32, block_limit) > kMaxCluster) block_limit = backward ? 1024 : kDefaultBlockThreads;
    if (ceil_div(warps * 32, block_limit) > kMaxCluster) block_limit = 1024;
    t.cluster = static_cast<int>(ceil_div(warps * 32, block_limit));
    const std::int64_t block_warps = ceil_div(warps, t.cluster);
    const int per_thread = static_cast<int>(ceil_div(t.pieces, t.cluster * block_warps * 32));
    // Fewest warps that still cover the row at that many pieces each (less idle lanes).
    t.row_threads = static_cast<int>(32 * t.cluster * ceil_div(ceil_div(t.pieces, per_thread), 32 * t.cluster));
  }
  t.pieces_per_thread = static_cast<int>(ceil_div(t.pieces, t.row_threads));
  if (t.cluster > kMaxCluster)  // unreachable below kMaxSoftmaxRow; kept as the invariant
    throw Error(ErrorKind::invalid_problem, fmt::format("row_length = {} needs a cluster of {} blocks", L, t.cluster));
  const int block_row_threads = t.row_threads / t.cluster;
  if (t.cluster > 1) {
    t.rows_per_block = 1;
  } else if (t.row_threads <= 32) {
    // Rows within a warp: forward blocks of 128 threads (H200, issue 7's rows of L ≤ 1024:
    // 0–2 points above 256-thread blocks, e.g. L = 32 float32 95 → 97 %;
    // bench/results/2026-12-03-softmax-768-masked, call 2); the backward was not measured so.
    const int warp_rows_block = backward ? 256 : 128;
    t.rows_per_block = std::max(
        1, (tuning.row_block_threads ? std::min(256, tuning.row_block_threads) : warp_rows_block) / t.row_threads);
  } else {
    t.rows_per_block = std::max(1, (tuning.row_block_threads ? tuning.row_block_threads : 256) / t.row_threads);
  }
  // Few rows: smaller blocks, so that the grid still spreads over the SMs.
  while (t.rows_per_block > 1 && ceil_div(rows, t.rows_per_block) < 264 && t.rows_per_block * block_row_threads > 64)
    t.rows_per_block /= 2;
  t.threads = t.rows_per_block * block_row_threads;
  t.blocks = t.cluster > 1 ? rows * t.cluster : ceil_div(rows, t.rows_per_block);
  return t;
}

}  // namespace bandjit
