#include "cache/sha256.hpp"

#include <openssl/evp.h>

#include "bandjit/errors.hpp"

namespace bandjit {

Digest sha256(std::string_view bytes) {
  Digest d{};
  unsigned int len = 0;
  if (EVP_Digest(bytes.data(), bytes.size(), d.data(), &len, EVP_sha256(), nullptr) != 1 || len != d.size())
    throw Error(ErrorKind::io, "SHA-256 failed (OpenSSL EVP_Digest)");
  return d;
}

std::string to_hex(const Digest& digest) {
  static const char* hex = "0123456789abcdef";
  std::string s;
  s.reserve(64);
  for (auto b : digest) {
    s.push_back(hex[b >> 4]);
    s.push_back(hex[b & 15]);
  }
  return s;
}

}  // namespace bandjit
