// The shared tier (BANDJIT_REDIS_URL): the same entry bytes as a disk file, under
// "bandjit:<format>:<key hash>", checked exactly like a disk entry (checksum, key document)
// before use. Every connect and command has a timeout; a failure makes the tier a miss for
// the next 30 s and is reported once per process, so a down or slow Redis costs at most
// one timeout per 30 s and never an error. Build coordination across hosts: a lock key
// (SET NX PX) lets one process compile a key while the others wait for its entry.
#pragma once

#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "cache/entry_format.hpp"
#include "cache/key.hpp"

struct redisContext;

namespace bandjit {

struct RedisAddress {
  std::string host;
  int port = 6379;
  int db = 0;
  std::string user;      ///< for Redis 6 ACLs; empty = the default user
  std::string password;  ///< empty = no AUTH
  std::string shown;     ///< the URL without the password, for messages
};

/// Parses redis://[[user]:password@]host[:port][/db] (host may be [IPv6]); throws
/// Error(usage) naming BANDJIT_REDIS_URL, the value and the expected form.
RedisAddress parse_redis_url(const std::string& url);

class RedisTier {
 public:
  RedisTier(RedisAddress address, std::chrono::milliseconds timeout);
  ~RedisTier();
  RedisTier(const RedisTier&) = delete;
  RedisTier& operator=(const RedisTier&) = delete;

  const RedisAddress& address() const { return address_; }
  /// The Redis key of an entry.
  static std::string entry_key(const std::string& key_hash);

  /// The entry of `key`, or nullopt (miss, failure, or a bad value: reported once,
  /// removed, counted in stats().corrupt_entries).
  std::optional<CacheEntry> get(const CacheKey& key);
  /// Stores the entry; a failure is reported once and otherwise ignored.
  void put(const CacheKey& key, const CacheEntry& entry);

  /// Who builds `key`. mine: this caller holds the build lock and must put() then
  /// release(). entry: another process published it meanwhile. Neither: Redis is
  /// unavailable, or the lock outlived its time; build without it.
  struct Claim {
    bool mine = false;
    std::string token;
    std::optional<CacheEntry> entry;
  };
  Claim claim(const CacheKey& key);
  void release(const CacheKey& key, const std::string& token);

 private:
  struct Reply;
  std::unique_ptr<Reply> run(const std::vector<std::string_view>& args);
  bool connect_locked();
  void fail_locked(const std::string& why);
  void warn_once(const std::string& category, const std::string& message);

  RedisAddress address_;
  std::chrono::milliseconds timeout_;
  mutable std::mutex mutex_;
  redisContext* context_ = nullptr;
  std::chrono::steady_clock::time_point down_until_{};
  std::set<std::string> warned_;
};

}  // namespace bandjit
