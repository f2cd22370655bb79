// The in-memory tier: a thread-safe map from key to a value built once. Concurrent
// requests for one key wait for the first; no lock is held while the value is built
// (NVRTC may take a second). A failed build is forgotten, so a later request retries.
#pragma once

#include <functional>
#include <future>
#include <map>
#include <mutex>
#include <string>

namespace bandjit {

template <class Value>
class MemoryCache {
 public:
  struct Result {
    Value value;
    bool hit;  ///< true when built earlier or by another thread
  };

  Result get_or_create(const std::string& key, const std::function<Value()>& make) {
    std::promise<Value> promise;
    std::shared_future<Value> future;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto it = map_.find(key);
      if (it != map_.end()) {
        future = it->second;
      } else {
        map_.emplace(key, promise.get_future().share());
      }
    }
    if (future.valid()) return {future.get(), true};
    try {
      Value value = make();
      promise.set_value(value);
      return {value, false};
    } catch (...) {
      {
        std::lock_guard<std::mutex> lock(mutex_);
        map_.erase(key);
      }
      promise.set_exception(std::current_exception());
      throw;
    }
  }

  std::size_t size() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return map_.size();
  }

 private:
  mutable std::mutex mutex_;
  std::map<std::string, std::shared_future<Value>> map_;
};

}  // namespace bandjit
