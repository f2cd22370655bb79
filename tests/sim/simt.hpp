// A small SIMT emulator that runs the real kernel templates on the CPU, so that their index
// arithmetic is tested where there is no GPU. Each block runs as kThreads std::threads;
// __syncthreads is a block barrier; warp collectives (mma.sync, shuffles) exchange values
// through per-warp slots between two warp barriers. Blocks run one after another, so block
// shared memory is plain process memory. The CUDA-specific pieces the templates use come from
// the shims tests/sim/bandjit/common.cuh and mma.cuh, written from the CUDA/PTX documentation.
#pragma once

#include <condition_variable>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace bandjit::sim {

struct Dim3 {
  unsigned x = 0, y = 0, z = 0;
};

class Barrier {
 public:
  explicit Barrier(int count) : count_(count) {}
  void wait() {
    std::unique_lock<std::mutex> lock(mutex_);
    const unsigned long long gen = generation_;
    if (++arrived_ == count_) {
      arrived_ = 0;
      ++generation_;
      cv_.notify_all();
    } else {
      cv_.wait(lock, [&] { return generation_ != gen; });
    }
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  int count_, arrived_ = 0;
  unsigned long long generation_ = 0;
};

// The running block: its barrier, one barrier and one exchange area per warp.
struct Block {
  explicit Block(int threads) : sync(threads) {
    for (int w = 0; w < (threads + 31) / 32; ++w) warps.emplace_back(new Barrier(32));
    exchange.resize(static_cast<std::size_t>((threads + 31) / 32) * 32 * kSlotBytes);
  }
  static constexpr int kSlotBytes = 128;  // per lane: enough for an A, a B and a C fragment
  Barrier sync;
  std::vector<std::unique_ptr<Barrier>> warps;
  std::vector<unsigned char> exchange;
};

// This thread's cp.async copies (the shim in bandjit/common.cuh): the destination reads as NaN
// bytes (0xff) from the issue until a cp.async.wait_group releases the copy's group, so a
// template that reads a slot before waiting for it, waits for too few groups, or refills a
// buffer others still read, reads NaN and fails its test.
struct AsyncCopies {
  struct Copy {
    void* dst;
    unsigned char bytes[16];
  };
  std::vector<Copy> copies;       // issued, not landed
  std::vector<std::size_t> ends;  // committed groups, oldest first: their end in `copies`
};
inline thread_local AsyncCopies async_copies;

inline thread_local Dim3 thread_idx;
inline thread_local Dim3 block_idx;
inline thread_local Dim3 grid_dim;
inline thread_local Block* current = nullptr;

// Tensors the kernel may read: a cp.async outside them is reported as a failure.
struct Range {
  const void* begin;
  std::size_t bytes;
};
inline std::vector<Range> global_ranges;
inline std::mutex failure_mutex;
inline std::vector<std::string> failures;  // recorded by any emulated thread, checked by the test

inline void fail(const std::string& what) {
  std::lock_guard<std::mutex> lock(failure_mutex);
  if (failures.size() < 20) failures.push_back(what);
}

inline void check_global_read(const void* p, std::size_t bytes) {
  const auto* c = static_cast<const unsigned char*>(p);
  for (const auto& r : global_ranges) {
    const auto* b = static_cast<const unsigned char*>(r.begin);
    if (c >= b && c + bytes <= b + r.bytes) return;
  }
  fail("a cp.async reads outside every tensor");
}

inline unsigned char* lane_slot(int thread) {
  return current->exchange.data() + static_cast<std::size_t>(thread) * Block::kSlotBytes;
}
inline void warp_sync() { current->warps[thread_idx.x / 32]->wait(); }

// Runs kernel() for every block of the grid, one block at a time, each with `threads`
// emulated threads (one std::thread per emulated thread, reused from block to block).
inline void launch(Dim3 grid, int threads, const std::function<void()>& kernel) {
  Block block(threads);
  Barrier next_block(threads);
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      thread_idx = {static_cast<unsigned>(t), 0, 0};
      grid_dim = grid;
      current = &block;
      for (unsigned z = 0; z < grid.z; ++z)
        for (unsigned y = 0; y < grid.y; ++y)
          for (unsigned x = 0; x < grid.x; ++x) {
            block_idx = {x, y, z};
            async_copies = {};
            kernel();
            // No copy may outlive its block (the templates wait for every one they issue).
            if (!async_copies.copies.empty()) fail("cp.async copies issued but never waited for");
            next_block.wait();  // the block is done with its shared memory
          }
    });
  for (auto& th : pool) th.join();
}

}  // namespace bandjit::sim
