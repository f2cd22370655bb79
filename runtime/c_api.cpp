// The C ABI (include/bandjit/bandjit.h): each entry point catches everything and turns it
// into a status and a per-thread message.
#include "bandjit/bandjit.h"

#include <cstring>
#include <string>

#include <nlohmann/json.hpp>

#include "bandjit/bandjit.hpp"
#include "bandjit/cache.hpp"
#include "bandjit/errors.hpp"
#include "generator/family_registry.hpp"
#include "generator/json_input.hpp"

struct bandjit_kernel {
  bandjit::Kernel kernel;
};

namespace {

thread_local std::string last_error;

template <class Fn>
bandjit_status guarded(Fn fn) {
  try {
    fn();
    last_error.clear();
    return BANDJIT_OK;
  } catch (const bandjit::Error& e) {
    last_error = e.what();
    return static_cast<bandjit_status>(static_cast<int>(e.kind()));
  } catch (const std::exception& e) {
    last_error = e.what();
    return BANDJIT_ERROR_INTERNAL;
  } catch (...) {
    last_error = "unknown exception";
    return BANDJIT_ERROR_INTERNAL;
  }
}

void require(const void* p, const char* what) {
  if (!p) throw bandjit::Error(bandjit::ErrorKind::usage, std::string(what) + " must not be NULL");
}

bandjit::Problem parse(const char* json) {
  require(json, "problem_json");
  return bandjit::problem_from_json(std::string(json));
}

void copy_out(const std::string& text, char* buffer, std::size_t capacity, std::size_t* needed) {
  if (needed) *needed = text.size() + 1;
  if (capacity < text.size() + 1)
    throw bandjit::Error(bandjit::ErrorKind::usage, "buffer too small: " + std::to_string(text.size() + 1) +
                                                        " bytes needed, " + std::to_string(capacity) + " given");
  require(buffer, "buffer");
  std::memcpy(buffer, text.c_str(), text.size() + 1);
}

const char* origin_name(bandjit::Origin o) {
  switch (o) {
    case bandjit::Origin::memory: return "memory";
    case bandjit::Origin::disk: return "disk";
    case bandjit::Origin::remote: return "redis";
    case bandjit::Origin::compiled: return "compiled";
    default: return "other";
  }
}

}  // namespace

extern "C" {

const char* bandjit_last_error(void) { return last_error.c_str(); }

const char* bandjit_version(void) { return BANDJIT_VERSION; }

bandjit_status bandjit_validate_problem(const char* problem_json) {
  return guarded([&] { parse(problem_json); });
}

bandjit_status bandjit_validate_parameters(const char* family, const char* parameters_json) {
  return guarded([&] {
    require(family, "family");
    require(parameters_json, "parameters_json");
    bandjit::find_family(family).canonical(bandjit::parse_input_json(parameters_json, std::string(family) + " parameters"));
  });
}

bandjit_status bandjit_families_json(char* buffer, size_t capacity, size_t* needed) {
  return guarded([&] { copy_out(bandjit::families_json().dump(), buffer, capacity, needed); });
}

bandjit_status bandjit_pregenerate(const char* family, const char* problem_json, const char* arch,
                                   const char* cache_dir, int* compiled) {
  return guarded([&] {
    require(family, "family");
    require(problem_json, "problem_json");
    bandjit::Options o;
    if (arch) o.arch = arch;
    if (cache_dir) o.cache_dir = cache_dir;
    const auto r = bandjit::pregenerate(family, std::string_view(problem_json), o);
    if (compiled) *compiled = r.origin == bandjit::Origin::compiled ? 1 : 0;
  });
}

bandjit_status bandjit_get_kernel(const char* family, const char* problem_json, const char* cache_dir,
                                  bandjit_kernel** kernel) {
  return guarded([&] {
    require(family, "family");
    require(kernel, "kernel");
    *kernel = nullptr;
    require(problem_json, "problem_json");
    bandjit::Options o;
    if (cache_dir) o.cache_dir = cache_dir;
    *kernel = new bandjit_kernel{bandjit::get_kernel(family, std::string_view(problem_json), o)};
  });
}

bandjit_status bandjit_kernel_launch(const bandjit_kernel* kernel, void* stream, const uint64_t* pointers,
                                     size_t count, int64_t batch) {
  return guarded([&] {
    require(kernel, "kernel");
    if (count) require(pointers, "pointers");
    std::vector<bandjit::DevicePtr> args;
    for (std::size_t i = 0; i < count; ++i) args.emplace_back(static_cast<unsigned long long>(pointers[i]));
    if (batch == 0)
      kernel->kernel.launch(static_cast<bandjit::Stream>(stream), args);
    else
      kernel->kernel.launch(static_cast<bandjit::Stream>(stream), args, batch);
  });
}

bandjit_status bandjit_kernel_info_json(const bandjit_kernel* kernel, char* buffer, size_t capacity, size_t* needed) {
  return guarded([&] {
    require(kernel, "kernel");
    const bandjit::KernelInfo& i = kernel->kernel.info();
    const nlohmann::json doc = {
        {"family", i.family},       {"kernel_name", i.kernel_name},
        {"arguments", i.arguments}, {"grid", {i.grid[0], i.grid[1], i.grid[2]}},
        {"block", {i.block[0], i.block[1], i.block[2]}},
        {"shared_bytes", i.shared_bytes}, {"registers", i.registers},
        {"arch", i.arch},           {"key_hash", i.key_hash},
        {"origin", origin_name(i.origin)},
        {"parameters", nlohmann::json::parse(i.parameters)},
    };
    copy_out(doc.dump(), buffer, capacity, needed);
  });
}

void bandjit_kernel_free(bandjit_kernel* kernel) { delete kernel; }

bandjit_status bandjit_cache_summary_json(const char* cache_dir, char* buffer, size_t capacity, size_t* needed) {
  return guarded([&] {
    const bandjit::CacheSummary s = bandjit::summarize_cache(bandjit::cache_directory(cache_dir ? cache_dir : ""));
    const nlohmann::json doc = {{"dir", s.dir},         {"entries", s.entries},   {"bytes", s.bytes},
                                {"max_bytes", s.max_bytes}, {"invalid", s.invalid}, {"temp_files", s.temp_files}};
    copy_out(doc.dump(), buffer, capacity, needed);
  });
}

}  // extern "C"
