// SHA-256 through OpenSSL: the cache key and every entry's checksum.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace bandjit {

using Digest = std::array<std::uint8_t, 32>;

Digest sha256(std::string_view bytes);
std::string to_hex(const Digest& digest);
inline std::string sha256_hex(std::string_view bytes) { return to_hex(sha256(bytes)); }

}  // namespace bandjit
