// A real redis-server on loopback for one test: a free port, no persistence, stopped (and
// its files removed) at scope exit. redis-server comes from scripts/install-deps.
#pragma once

#include <sys/types.h>

#include <string>

#include "support/temp_dir.hpp"

namespace bandjit::test {

class RedisServer {
 public:
  RedisServer();  ///< starts it and waits until it answers PING; throws when it cannot
  ~RedisServer();
  RedisServer(const RedisServer&) = delete;
  RedisServer& operator=(const RedisServer&) = delete;

  int port() const { return port_; }
  std::string url() const { return "redis://127.0.0.1:" + std::to_string(port_); }
  /// SIGSTOP / SIGCONT: a server that accepts connections but never answers.
  void pause();
  void resume();

  /// One command through redis-cli (binary-safe values go through get/set below).
  std::string cli(const std::string& args) const;
  /// GET and SET of raw bytes (hiredis).
  std::string get(const std::string& key) const;
  void set(const std::string& key, const std::string& value) const;

 private:
  TempDir dir_;
  int port_ = 0;
  pid_t pid_ = -1;
};

/// A TCP port on 127.0.0.1 that nothing listens on (bound and released).
int free_port();

}  // namespace bandjit::test
