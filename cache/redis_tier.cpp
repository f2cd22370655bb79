#include "cache/redis_tier.hpp"

#include <sys/time.h>
#include <unistd.h>

#include <hiredis/hiredis.h>

#include <cerrno>
#include <cstring>
#include <random>
#include <thread>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "bandjit/errors.hpp"
#include "runtime/stats.hpp"

namespace bandjit {
namespace {

using Clock = std::chrono::steady_clock;

// After a failure the tier is a miss for this long, so a down server costs one timeout
// per period, not one per kernel.
constexpr auto kRetryAfter = std::chrono::seconds(30);
// A build lock expires by itself after this, so a holder that died frees its key.
constexpr auto kLockLife = std::chrono::seconds(120);
constexpr auto kPoll = std::chrono::milliseconds(50);

// Deletes a key only while it still holds `value`: a lock still ours, or the bad bytes we
// read (not a good entry published since).
constexpr const char* kDeleteIfSame =
    "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0";

bool all_digits(std::string_view s) {
  return !s.empty() && s.size() <= 9 && s.find_first_not_of("0123456789") == std::string_view::npos;
}

timeval to_timeval(std::chrono::milliseconds ms) {
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(ms.count() / 1000);
  tv.tv_usec = static_cast<suseconds_t>((ms.count() % 1000) * 1000);
  return tv;
}

// hiredis reports a read or write past its timeout as EAGAIN; say what happened instead.
std::string describe(const redisContext* c, std::chrono::milliseconds timeout) {
  if (!c) return "cannot allocate a connection";
  if (c->err == REDIS_ERR_IO && std::string(c->errstr) == std::strerror(EAGAIN))
    return fmt::format("no reply within {} ms, BANDJIT_REDIS_TIMEOUT_MS", timeout.count());
  return c->errstr;
}

std::string new_token() {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  char host[64] = {0};
  ::gethostname(host, sizeof(host) - 1);
  return fmt::format("{}:{}:{:016x}", host, ::getpid(), rng());
}

}  // namespace

RedisAddress parse_redis_url(const std::string& url) {
  auto bad = [&](const std::string& why) -> RedisAddress {
    throw Error(ErrorKind::usage,
                fmt::format("BANDJIT_REDIS_URL = \"{}\" is not a Redis URL ({}); expected "
                            "redis://[[user]:password@]host[:port][/db], e.g. redis://127.0.0.1:6379/0",
                            url, why),
                {{"field", "BANDJIT_REDIS_URL"}, {"value", url}});
  };
  const std::string scheme = "redis://";
  if (url.compare(0, scheme.size(), scheme) != 0) return bad("it must start with redis://");
  RedisAddress a;
  std::string rest = url.substr(scheme.size());
  if (const auto at = rest.rfind('@'); at != std::string::npos) {
    const std::string userinfo = rest.substr(0, at);
    const auto colon = userinfo.find(':');
    a.user = userinfo.substr(0, colon);
    if (colon != std::string::npos) a.password = userinfo.substr(colon + 1);
    rest = rest.substr(at + 1);
  }
  if (const auto slash = rest.find('/'); slash != std::string::npos) {
    const std::string db = rest.substr(slash + 1);
    if (!db.empty()) {
      if (!all_digits(db)) return bad("the database must be a number");
      a.db = std::stoi(db);
    }
    rest = rest.substr(0, slash);
  }
  std::string port;
  if (!rest.empty() && rest[0] == '[') {
    const auto close = rest.find(']');
    if (close == std::string::npos) return bad("unclosed [ in the host");
    a.host = rest.substr(1, close - 1);
    if (close + 1 < rest.size()) {
      if (rest[close + 1] != ':') return bad("unexpected text after the host");
      port = rest.substr(close + 2);
    }
  } else {
    const auto colon = rest.rfind(':');
    a.host = rest.substr(0, colon);
    if (colon != std::string::npos) port = rest.substr(colon + 1);
  }
  if (a.host.empty()) return bad("no host");
  if (!port.empty() || rest.back() == ':') {
    if (!all_digits(port) || std::stoi(port) < 1 || std::stoi(port) > 65535) return bad("the port must be 1 to 65535");
    a.port = std::stoi(port);
  }
  const bool ipv6 = a.host.find(':') != std::string::npos;
  a.shown = fmt::format("redis://{}{}{}{}:{}/{}", a.user, a.password.empty() ? "" : ":***",
                        a.user.empty() && a.password.empty() ? "" : "@", ipv6 ? "[" + a.host + "]" : a.host, a.port,
                        a.db);
  return a;
}

struct RedisTier::Reply {
  redisReply* r;
  explicit Reply(redisReply* reply) : r(reply) {}
  ~Reply() { freeReplyObject(r); }
  bool is(int type) const { return r->type == type; }
  std::string_view text() const { return {r->str, r->len}; }
};

RedisTier::RedisTier(RedisAddress address, std::chrono::milliseconds timeout)
    : address_(std::move(address)), timeout_(timeout) {}

RedisTier::~RedisTier() {
  if (context_) redisFree(context_);
}

std::string RedisTier::entry_key(const std::string& key_hash) {
  return fmt::format("bandjit:{}:{}", kEntryFormatVersion, key_hash);
}

void RedisTier::warn_once(const std::string& category, const std::string& message) {
  if (warned_.insert(category).second) spdlog::warn("bandjit: {}", message);
  else spdlog::debug("bandjit: {}", message);
}

void RedisTier::fail_locked(const std::string& why) {
  if (context_) redisFree(context_);
  context_ = nullptr;
  down_until_ = Clock::now() + kRetryAfter;
  counters().remote_failures++;
  warn_once("unavailable", fmt::format("Redis at {} is unavailable ({}); using the local cache only, retrying "
                                       "every {} s",
                                       address_.shown, why, kRetryAfter.count()));
}

bool RedisTier::connect_locked() {
  context_ = redisConnectWithTimeout(address_.host.c_str(), address_.port, to_timeval(timeout_));
  if (!context_ || context_->err) {
    fail_locked(describe(context_, timeout_));
    return false;
  }
  redisSetTimeout(context_, to_timeval(timeout_));
  auto setup = [&](std::vector<std::string> args) {
    std::vector<const char*> argv;
    std::vector<size_t> lens;
    for (const auto& a : args) {
      argv.push_back(a.data());
      lens.push_back(a.size());
    }
    auto* r = static_cast<redisReply*>(redisCommandArgv(context_, static_cast<int>(argv.size()), argv.data(), lens.data()));
    if (!r) {
      fail_locked(describe(context_, timeout_));
      return false;
    }
    const bool ok = r->type != REDIS_REPLY_ERROR;
    if (!ok) fail_locked(fmt::format("{} refused: {}", args[0], std::string(r->str, r->len)));
    freeReplyObject(r);
    return ok;
  };
  if (!address_.password.empty()) {
    if (!(address_.user.empty() ? setup({"AUTH", address_.password}) : setup({"AUTH", address_.user, address_.password})))
      return false;
  }
  if (address_.db != 0 && !setup({"SELECT", std::to_string(address_.db)})) return false;
  return true;
}

std::unique_ptr<RedisTier::Reply> RedisTier::run(const std::vector<std::string_view>& args) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (Clock::now() < down_until_) return nullptr;
  if (!context_ && !connect_locked()) return nullptr;
  std::vector<const char*> argv;
  std::vector<size_t> lens;
  for (auto a : args) {
    argv.push_back(a.data());
    lens.push_back(a.size());
  }
  auto* r = static_cast<redisReply*>(redisCommandArgv(context_, static_cast<int>(argv.size()), argv.data(), lens.data()));
  if (!r) {
    fail_locked(describe(context_, timeout_));  // timeout, reset or EOF: the connection is unusable
    return nullptr;
  }
  auto reply = std::make_unique<Reply>(r);
  if (reply->is(REDIS_REPLY_ERROR)) {
    counters().remote_failures++;
    warn_once(fmt::format("error {}", args[0]), fmt::format("Redis at {} refused {}: {}; treated as a miss",
                                                            address_.shown, args[0], reply->text()));
    return nullptr;
  }
  return reply;
}

std::optional<CacheEntry> RedisTier::get(const CacheKey& key) {
  const std::string name = entry_key(key.hash);
  auto reply = run({"GET", name});
  if (!reply || !reply->is(REDIS_REPLY_STRING)) return std::nullopt;
  std::string defect;
  auto entry = parse_entry_for_key(reply->text(), key.document, &defect);
  if (entry) {
    counters().remote_hits++;
    return entry;
  }
  counters().corrupt_entries++;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    warn_once("bad " + name, fmt::format("Redis value {} at {} is unusable ({}); removed, it will be rebuilt", name,
                                         address_.shown, defect));
  }
  run({"EVAL", kDeleteIfSame, "1", name, reply->text()});
  return std::nullopt;
}

void RedisTier::put(const CacheKey& key, const CacheEntry& entry) {
  const std::string bytes = serialize_entry(entry);
  run({"SET", entry_key(key.hash), bytes});
}

RedisTier::Claim RedisTier::claim(const CacheKey& key) {
  const std::string lock_name = entry_key(key.hash) + ":lock";
  const std::string token = new_token();
  const std::string life = std::to_string(std::chrono::milliseconds(kLockLife).count());
  const auto deadline = Clock::now() + kLockLife + std::chrono::seconds(1);
  while (Clock::now() < deadline) {
    auto taken = run({"SET", lock_name, token, "NX", "PX", life});
    if (!taken) return {};
    if (taken->is(REDIS_REPLY_STATUS)) {
      if (auto entry = get(key)) {  // published between our miss and our lock
        release(key, token);
        return {false, {}, std::move(entry)};
      }
      return {true, token, std::nullopt};
    }
    // Another process builds it: wait for its entry, or for its lock to go.
    while (Clock::now() < deadline) {
      std::this_thread::sleep_for(kPoll);
      if (auto entry = get(key)) return {false, {}, std::move(entry)};
      auto held = run({"EXISTS", lock_name});
      if (!held) return {};
      if (held->is(REDIS_REPLY_INTEGER) && held->r->integer == 0) break;
    }
  }
  return {};
}

void RedisTier::release(const CacheKey& key, const std::string& token) {
  run({"EVAL", kDeleteIfSame, "1", entry_key(key.hash) + ":lock", token});
}

}  // namespace bandjit
