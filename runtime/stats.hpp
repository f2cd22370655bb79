// Process-wide counters behind bandjit::stats().
#pragma once

#include <atomic>
#include <cstdint>

namespace bandjit {

struct Counters {
  std::atomic<std::uint64_t> memory_hits{0};
  std::atomic<std::uint64_t> disk_hits{0};
  std::atomic<std::uint64_t> compiles{0};
  std::atomic<std::uint64_t> corrupt_entries{0};
  std::atomic<std::uint64_t> disk_write_failures{0};
  std::atomic<std::uint64_t> untrusted_entries{0};
  std::atomic<std::uint64_t> remote_hits{0};
  std::atomic<std::uint64_t> remote_failures{0};
};

Counters& counters();

}  // namespace bandjit
