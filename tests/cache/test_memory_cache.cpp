#include <atomic>
#include <chrono>
#include <future>
#include <thread>

#include "cache/memory_cache.hpp"
#include "support/catch.hpp"

using namespace bandjit;
using namespace std::chrono_literals;

TEST_CASE("memory_cache: concurrent requests for one key build it once", "[memory_cache]") {
  MemoryCache<int> cache;
  std::atomic<int> builds{0};
  std::vector<std::thread> threads;
  std::vector<int> values(8, 0);
  std::atomic<int> hits{0};
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      auto r = cache.get_or_create("k", [&] {
        ++builds;
        std::this_thread::sleep_for(50ms);
        return 42;
      });
      values[t] = r.value;
      hits += r.hit;
    });
  for (auto& t : threads) t.join();
  CHECK(builds == 1);
  CHECK(hits == 7);
  for (int v : values) CHECK(v == 42);
}

TEST_CASE("memory_cache: no lock is held while a value is built", "[memory_cache]") {
  MemoryCache<int> cache;
  std::promise<void> b_started;
  auto b_started_future = b_started.get_future();
  // Building "a" waits until "b" has started building: with a lock held during builds
  // this would time out.
  auto a = std::async(std::launch::async, [&] {
    return cache.get_or_create("a", [&] { return b_started_future.wait_for(5s) == std::future_status::ready ? 1 : -1; });
  });
  std::this_thread::sleep_for(20ms);
  auto b = cache.get_or_create("b", [&] {
    b_started.set_value();
    return 2;
  });
  CHECK(a.get().value == 1);
  CHECK(b.value == 2);
}

TEST_CASE("memory_cache: a failed build is reported to every waiter and retried later", "[memory_cache]") {
  MemoryCache<int> cache;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      try {
        cache.get_or_create("k", [&]() -> int {
          std::this_thread::sleep_for(30ms);
          throw std::runtime_error("nvrtc said no");
        });
      } catch (const std::runtime_error&) {
        ++failures;
      }
    });
  for (auto& t : threads) t.join();
  CHECK(failures >= 1);
  CHECK(cache.size() == 0);
  auto r = cache.get_or_create("k", [] { return 7; });
  CHECK(r.value == 7);
  CHECK_FALSE(r.hit);
}
