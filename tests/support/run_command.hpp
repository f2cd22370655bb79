// Runs the `bandjit` command line (or any shell command) and captures what it printed.
#pragma once

#include <string>

namespace bandjit::test {

struct CommandResult {
  int exit_code = -1;
  std::string output;  ///< stdout and stderr together
};

/// Runs `command` through /bin/sh with stderr merged into stdout.
CommandResult run_command(const std::string& command);

/// The built `bandjit` binary ($BANDJIT_CLI overrides the build-time path).
std::string cli_path();

/// Runs the built `bandjit` binary with `args` (shell-quoted by the caller).
CommandResult run_cli(const std::string& args);

}  // namespace bandjit::test
