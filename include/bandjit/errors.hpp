// bandjit/errors.hpp — one exception type; its kind maps to the CLI's exit codes.
#pragma once

#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace bandjit {

/// What went wrong, and the exit code the command line returns for it (docs/cli.md).
enum class ErrorKind {
  invalid_problem = 3,  ///< a problem field is out of range, or a family is unknown
  compile_failed = 4,   ///< NVRTC rejected the generated source (evidence: log, options)
  driver_failed = 5,    ///< a CUDA Driver API call failed, or no GPU/driver is present
  io = 6,               ///< a file or the cache directory could not be read or written
  usage = 2,            ///< wrong use of the API (argument count, alignment)
};

/// Error with its evidence: ordered (name, value) pairs such as stage, problem, options,
/// NVRTC log, CUDA error string. what() holds the message followed by the evidence.
class Error : public std::runtime_error {
 public:
  using Evidence = std::vector<std::pair<std::string, std::string>>;
  Error(ErrorKind kind, std::string message, Evidence evidence = {});

  ErrorKind kind() const noexcept { return kind_; }
  const std::string& message() const noexcept { return message_; }
  const Evidence& evidence() const noexcept { return evidence_; }
  /// The value of one evidence item, or "" when absent.
  std::string evidence_of(const std::string& name) const;

 private:
  ErrorKind kind_;
  std::string message_;
  Evidence evidence_;
};

std::string_view to_string(ErrorKind kind);

}  // namespace bandjit
