#include "bandjit/errors.hpp"

#include <fmt/format.h>

namespace bandjit {
namespace {
std::string render(const std::string& message, const Error::Evidence& evidence) {
  std::string text = message;
  for (const auto& [name, value] : evidence) {
    const bool multiline = value.find('\n') != std::string::npos;
    text += multiline ? fmt::format("\n  {}:\n{}", name, value) : fmt::format("\n  {}: {}", name, value);
  }
  return text;
}
}  // namespace

Error::Error(ErrorKind kind, std::string message, Evidence evidence)
    : std::runtime_error(render(message, evidence)),
      kind_(kind),
      message_(std::move(message)),
      evidence_(std::move(evidence)) {}

std::string Error::evidence_of(const std::string& name) const {
  for (const auto& [n, v] : evidence_)
    if (n == name) return v;
  return {};
}

std::string_view to_string(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::invalid_problem: return "invalid problem";
    case ErrorKind::compile_failed: return "compile failed";
    case ErrorKind::driver_failed: return "CUDA driver error";
    case ErrorKind::io: return "I/O error";
    case ErrorKind::usage: return "usage error";
  }
  return "error";
}
}  // namespace bandjit
