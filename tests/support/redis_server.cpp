#include "support/redis_server.hpp"

#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <hiredis/hiredis.h>

#include <chrono>
#include <stdexcept>
#include <thread>

#include "support/run_command.hpp"

namespace bandjit::test {

int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof(addr);
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0)
    throw std::runtime_error("free_port: cannot bind a loopback socket");
  ::close(fd);
  return ntohs(addr.sin_port);
}

RedisServer::RedisServer() {
  for (int attempt = 0; attempt < 5 && pid_ < 0; ++attempt) {
    port_ = free_port();
    const std::string port = std::to_string(port_);
    const pid_t pid = ::fork();
    if (pid == 0) {
      ::execlp("redis-server", "redis-server", "--port", port.c_str(), "--bind", "127.0.0.1", "--save", "",
               "--appendonly", "no", "--dir", dir_.path().c_str(), "--logfile", (dir_ / "redis.log").c_str(),
               static_cast<char*>(nullptr));
      ::_exit(127);
    }
    for (int i = 0; i < 100; ++i) {  // up to 5 s
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      int status = 0;
      if (::waitpid(pid, &status, WNOHANG) == pid) break;  // exited: port taken, or no redis-server
      if (cli("PING") == "PONG") {
        pid_ = pid;
        break;
      }
    }
    if (pid_ < 0) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
    }
  }
  if (pid_ < 0)
    throw std::runtime_error("cannot start redis-server on loopback (is it installed? scripts/install-deps installs it)");
}

RedisServer::~RedisServer() {
  ::kill(pid_, SIGCONT);
  ::kill(pid_, SIGKILL);
  ::waitpid(pid_, nullptr, 0);
}

void RedisServer::pause() { ::kill(pid_, SIGSTOP); }
void RedisServer::resume() { ::kill(pid_, SIGCONT); }

std::string RedisServer::cli(const std::string& args) const {
  auto r = run_command("redis-cli -h 127.0.0.1 -p " + std::to_string(port_) + " " + args);
  while (!r.output.empty() && (r.output.back() == '\n' || r.output.back() == '\r')) r.output.pop_back();
  return r.output;
}

namespace {
struct Connection {
  redisContext* c;
  explicit Connection(int port) : c(redisConnect("127.0.0.1", port)) {
    if (!c || c->err) throw std::runtime_error("cannot connect to the test redis-server");
  }
  ~Connection() { redisFree(c); }
};
}  // namespace

std::string RedisServer::get(const std::string& key) const {
  Connection conn(port_);
  auto* r = static_cast<redisReply*>(redisCommand(conn.c, "GET %b", key.data(), key.size()));
  if (!r) throw std::runtime_error("GET failed");
  std::string value = r->type == REDIS_REPLY_STRING ? std::string(r->str, r->len) : std::string();
  freeReplyObject(r);
  return value;
}

void RedisServer::set(const std::string& key, const std::string& value) const {
  Connection conn(port_);
  auto* r = static_cast<redisReply*>(redisCommand(conn.c, "SET %b %b", key.data(), key.size(), value.data(), value.size()));
  if (!r) throw std::runtime_error("SET failed");
  freeReplyObject(r);
}

}  // namespace bandjit::test
