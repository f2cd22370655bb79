#include "cache/bundle.hpp"

#include <cstring>

#include <fmt/format.h>

#include "bandjit/errors.hpp"
#include "cache/little_endian.hpp"
#include "cache/sha256.hpp"
#include "generator/json_input.hpp"

namespace bandjit {
namespace {

constexpr char kMagic[8] = {'B', 'J', 'K', 'B', 'U', 'N', 'D', 'L'};

[[noreturn]] void reject(const std::string& path, const std::string& defect) {
  throw Error(ErrorKind::io,
              fmt::format("bundle {} is unusable: {}; nothing was taken from it (make it again with "
                          "`bandjit cache export`)",
                          path, defect),
              {{"path", path}, {"defect", defect}});
}

}  // namespace

std::string serialize_bundle(const Bundle& bundle) {
  std::vector<std::string> entries;
  nlohmann::json kernels = nlohmann::json::array();
  std::uint64_t offset = 0;
  for (const auto& k : bundle.kernels) {
    entries.push_back(serialize_entry(k.entry));
    kernels.push_back({{"family", k.family},
                       {"problem", k.problem},
                       {"key_hash", k.key_hash},
                       {"offset", offset},
                       {"size", entries.back().size()},
                       {"sha256", sha256_hex(entries.back())}});
    offset += entries.back().size();
  }
  const std::string index = nlohmann::json{{"arch", bundle.arch},
                                           {"nvrtc", bundle.nvrtc},
                                           {"generator", bundle.generator},
                                           {"entry_format", kEntryFormatVersion},
                                           {"bandjit", bundle.bandjit_version},
                                           {"created", bundle.created},
                                           {"kernels", kernels}}
                                .dump();
  std::string out(kMagic, sizeof(kMagic));
  put_le<std::uint32_t>(out, kBundleFormatVersion);
  put_le<std::uint64_t>(out, index.size());
  out += index;
  const Digest d = sha256(out);
  out.append(reinterpret_cast<const char*>(d.data()), d.size());
  out.reserve(out.size() + offset);
  for (const auto& e : entries) out += e;
  return out;
}

Bundle parse_bundle(std::string_view in, const std::string& path) {
  if (in.size() < sizeof(kMagic) || std::memcmp(in.data(), kMagic, sizeof(kMagic)) != 0)
    reject(path, in.size() < sizeof(kMagic) ? "truncated (no header)" : "not a bandjit bundle (bad magic)");
  std::size_t pos = sizeof(kMagic);
  std::uint32_t version = 0;
  std::uint64_t index_size = 0;
  if (!get_le(in, pos, version)) reject(path, "truncated (no version)");
  if (version != kBundleFormatVersion)
    reject(path, fmt::format("bundle format version {} (this build reads {})", version, kBundleFormatVersion));
  if (!get_le(in, pos, index_size) || in.size() - pos < index_size || in.size() - pos - index_size < 32)
    reject(path, "truncated (index)");
  const std::string_view index_text = in.substr(pos, index_size);
  pos += index_size;
  const Digest d = sha256(in.substr(0, pos));
  if (std::memcmp(d.data(), in.data() + pos, 32) != 0) reject(path, "index checksum mismatch");
  pos += 32;
  const std::string_view body = in.substr(pos);

  Bundle bundle;
  std::uint64_t expected_offset = 0;
  try {
    const auto index = parse_json_limited(index_text);  // a file from another machine
    bundle.arch = index.at("arch").get<std::string>();
    bundle.nvrtc = index.at("nvrtc").get<std::string>();
    bundle.generator = index.at("generator").get<int>();
    bundle.bandjit_version = index.at("bandjit").get<std::string>();
    bundle.created = index.at("created").get<std::int64_t>();
    if (index.at("entry_format").get<std::uint32_t>() != kEntryFormatVersion)
      reject(path, fmt::format("entry format {} (this build reads {})", index.at("entry_format").dump(),
                               kEntryFormatVersion));
    std::size_t i = 0;
    for (const auto& k : index.at("kernels")) {
      BundledKernel kernel;
      kernel.family = k.at("family").get<std::string>();
      kernel.problem = k.at("problem");
      kernel.key_hash = k.at("key_hash").get<std::string>();
      const auto offset = k.at("offset").get<std::uint64_t>();
      const auto size = k.at("size").get<std::uint64_t>();
      const std::string what = fmt::format("kernel {} ({} {})", i++, kernel.family, kernel.key_hash.substr(0, 16));
      if (offset != expected_offset || size > body.size() - offset) reject(path, what + ": outside the file");
      expected_offset += size;
      const std::string_view bytes = body.substr(offset, size);
      if (sha256_hex(bytes) != k.at("sha256").get<std::string>()) reject(path, what + ": checksum mismatch");
      std::string defect;
      auto entry = parse_entry(bytes, &defect);
      if (!entry) reject(path, what + ": " + defect);
      const auto& key = entry->manifest["key"];
      if (sha256_hex(key.dump()) != kernel.key_hash || entry->manifest.value("key_hash", "") != kernel.key_hash)
        reject(path, what + ": key document does not hash to its key_hash");
      if (key.value("arch", "") != bundle.arch || key.value("nvrtc", "") != bundle.nvrtc)
        reject(path, what + ": made for another arch or NVRTC than the bundle says");
      kernel.entry = std::move(*entry);
      bundle.kernels.push_back(std::move(kernel));
    }
  } catch (const nlohmann::json::exception& e) {
    reject(path, fmt::format("index is malformed ({})", e.what()));
  } catch (const JsonRefused& e) {
    reject(path, fmt::format("index refused ({})", e.what()));
  }
  if (expected_offset != body.size()) reject(path, "trailing bytes after the last kernel");
  return bundle;
}

void check_bundle_target(const Bundle& bundle, const std::string& path, const std::string& arch,
                         const std::string& nvrtc) {
  const bool arch_ok = arch.empty() || arch == bundle.arch;
  if (arch_ok && nvrtc == bundle.nvrtc) return;
  throw Error(ErrorKind::invalid_problem,
              fmt::format("bundle {} was made for {} with NVRTC {}, but this process targets {} with NVRTC {}; "
                          "its kernels cannot serve here: export a bundle on a build machine with NVRTC {} for {}",
                          path, bundle.arch, bundle.nvrtc, arch.empty() ? "any arch" : arch, nvrtc, nvrtc,
                          arch.empty() ? bundle.arch : arch),
              {{"bundle_arch", bundle.arch}, {"bundle_nvrtc", bundle.nvrtc}, {"arch", arch}, {"nvrtc", nvrtc}});
}

}  // namespace bandjit
