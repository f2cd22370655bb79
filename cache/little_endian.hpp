// Fixed-width little-endian integers in byte strings: the cache entry and bundle formats.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace bandjit {

template <class U>
void put_le(std::string& out, U value) {
  for (std::size_t i = 0; i < sizeof(U); ++i) out.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}

/// Reads a U at `pos` and advances it; false (pos unchanged) when fewer bytes remain.
template <class U>
bool get_le(std::string_view in, std::size_t& pos, U& value) {
  if (in.size() - pos < sizeof(U)) return false;
  value = 0;
  for (std::size_t i = 0; i < sizeof(U); ++i)
    value |= static_cast<U>(static_cast<unsigned char>(in[pos + i])) << (8 * i);
  pos += sizeof(U);
  return true;
}

}  // namespace bandjit
