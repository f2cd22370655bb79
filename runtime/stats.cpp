#include "runtime/stats.hpp"

#include "bandjit/bandjit.hpp"

namespace bandjit {

Counters& counters() {
  static Counters c;
  return c;
}

Stats stats() {
  const auto& c = counters();
  Stats s;
  s.memory_hits = c.memory_hits;
  s.disk_hits = c.disk_hits;
  s.compiles = c.compiles;
  s.corrupt_entries = c.corrupt_entries;
  s.disk_write_failures = c.disk_write_failures;
  s.untrusted_entries = c.untrusted_entries;
  s.remote_hits = c.remote_hits;
  s.remote_failures = c.remote_failures;
  return s;
}

void reset_stats() {
  auto& c = counters();
  c.memory_hits = 0;
  c.disk_hits = 0;
  c.compiles = 0;
  c.corrupt_entries = 0;
  c.disk_write_failures = 0;
  c.untrusted_entries = 0;
  c.remote_hits = 0;
  c.remote_failures = 0;
}

}  // namespace bandjit
