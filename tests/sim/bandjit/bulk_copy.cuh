// Host shim of templates/bulk_copy.cuh for the SIMT emulator: a bulk copy lands when it is
// issued (memcpy after the alignment, size and source-range checks), and an mbarrier is
// modelled by its phase state, packed in the barrier's 8 bytes. A wait whose phase never completes (a kernel that would hang) is reported as a
// failure after a few seconds instead of hanging the test.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <thread>

#include "bandjit/common.cuh"

namespace bandjit {

inline std::mutex& barrier_mutex() {
  static std::mutex m;
  return m;
}

// The barrier's 8 bytes: bits 0–15 arrivals pending this phase, 16–31 arrivals a phase,
// 32–52 bytes still to land (tx-count), 63 the parity of the phases completed. A phase
// completes when no arrival and no byte is pending (PTX ISA, mbarrier phase completion).
struct BarrierState {
  unsigned long long pending, per_phase, tx, parity;
  explicit BarrierState(unsigned long long b)
      : pending(b & 0xffff), per_phase((b >> 16) & 0xffff), tx((b >> 32) & 0x1fffff), parity(b >> 63) {}
  unsigned long long packed() const { return pending | per_phase << 16 | tx << 32 | parity << 63; }
  void complete_if_done() {
    if (pending == 0 && tx == 0) pending = per_phase, parity ^= 1;
  }
};

inline void barrier_init(unsigned long long* bar, unsigned arrivals) {
  std::lock_guard<std::mutex> lock(barrier_mutex());
  *bar = (static_cast<unsigned long long>(arrivals) << 16) | arrivals;
}

// expect_tx(bytes) then arrive, as mbarrier.arrive.expect_tx does.
inline void barrier_arrive_with(unsigned long long* bar, unsigned bytes) {
  std::lock_guard<std::mutex> lock(barrier_mutex());
  BarrierState b(*bar);
  if (b.pending == 0) ::bandjit::sim::fail("mbarrier: arrival on a barrier with none pending");
  if (bytes >= (1u << 20)) ::bandjit::sim::fail("mbarrier: expect_tx count out of range");
  b.tx += bytes;
  --b.pending;
  b.complete_if_done();
  *bar = b.packed();
}

inline void barrier_expect_bytes(unsigned long long* bar, unsigned bytes) { barrier_arrive_with(bar, bytes); }

inline void fence_proxy_async() {}

// After one wait has given up, every later one fails at once: a hanging kernel then ends in
// seconds, not in 10 s a wait.
inline std::atomic<bool>& barrier_gave_up() {
  static std::atomic<bool> gave_up{false};
  return gave_up;
}

inline void barrier_wait(unsigned long long* bar, unsigned parity) {
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  for (;;) {
    {
      std::lock_guard<std::mutex> lock(barrier_mutex());
      if (BarrierState(*bar).parity != (parity & 1)) return;  // the phase of that parity completed
    }
    if (barrier_gave_up() || std::chrono::steady_clock::now() > give_up) {
      barrier_gave_up() = true;
      ::bandjit::sim::fail("mbarrier: a wait whose phase never completes");
      return;
    }
    std::this_thread::yield();
  }
}

// The copy lands, then its bytes count down the barrier's tx-count (complete_tx).
inline void bulk_load(void* dst, const void* src, unsigned bytes, unsigned long long* bar) {
  if (reinterpret_cast<std::uintptr_t>(dst) % 16 || reinterpret_cast<std::uintptr_t>(src) % 16 || bytes % 16 ||
      bytes == 0 || bytes >= (1u << 20))
    ::bandjit::sim::fail("bulk_load: misaligned address or bad size");
  ::bandjit::sim::check_global_read(src, bytes);
  std::memcpy(dst, src, bytes);
  std::lock_guard<std::mutex> lock(barrier_mutex());
  BarrierState b(*bar);
  if (b.tx < bytes) ::bandjit::sim::fail("mbarrier: more bytes landed than expected");
  b.tx -= bytes;
  b.complete_if_done();
  *bar = b.packed();
}

}  // namespace bandjit
