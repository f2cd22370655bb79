#include "support/run_command.hpp"

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <cstdlib>

namespace bandjit::test {

CommandResult run_command(const std::string& command) {
  CommandResult r;
  FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
  if (!pipe) return r;
  std::array<char, 4096> buf{};
  std::size_t n = 0;
  while ((n = std::fread(buf.data(), 1, buf.size(), pipe)) > 0) r.output.append(buf.data(), n);
  const int status = ::pclose(pipe);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

std::string cli_path() {
  const char* path = std::getenv("BANDJIT_CLI");
  return path && *path ? path : BANDJIT_CLI;
}

CommandResult run_cli(const std::string& args) { return run_command(cli_path() + " " + args); }

}  // namespace bandjit::test
