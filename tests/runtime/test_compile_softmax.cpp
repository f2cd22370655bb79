// NVRTC compiles every softmax variant (dtype × mask × causal × the row lengths,
// forward and backward) for sm_80 and sm_90 without spilling: the cluster path on sm_90,
// the two-pass path on sm_80.
#include <atomic>
#include <mutex>
#include <regex>
#include <thread>

#include <nlohmann/json.hpp>

#include "bandjit/errors.hpp"
#include "generator/family_registry.hpp"
#include "runtime/compiler.hpp"
#include "support/catch.hpp"

using namespace bandjit;
using nlohmann::json;

namespace {
struct Job {
  std::string family, arch;
  json params;
};

// Compiles every job on all cores; "family arch params: error" for each failure or spill.
std::vector<std::string> compile_all(const std::vector<Job>& jobs) {
  std::atomic<std::size_t> next{0};
  std::mutex mutex;
  std::vector<std::string> failures;
  auto work = [&] {
    for (std::size_t i = next++; i < jobs.size(); i = next++) {
      const Job& j = jobs[i];
      std::string why;
      try {
        const Cubin c = compile(find_family(j.family).generate(j.params), j.arch);
        if (std::regex_search(c.log, std::regex("[1-9][0-9]* bytes spill"))) why = "spills registers: " + c.log;
        if (c.log.find("spill") == std::string::npos) why = "no ptxas report: " + c.log;
      } catch (const Error& e) {
        why = e.what();
      }
      if (!why.empty()) {
        std::lock_guard<std::mutex> lock(mutex);
        failures.push_back(j.family + " " + j.arch + " " + j.params.dump() + ": " + why);
      }
    }
  };
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < std::max(2u, std::thread::hardware_concurrency()); ++t) pool.emplace_back(work);
  for (auto& t : pool) t.join();
  return failures;
}
}  // namespace

TEST_CASE("nvrtc: every softmax variant of the issue's row lengths compiles for sm_80 and sm_90 without spills",
          "[nvrtc]") {
  std::vector<Job> jobs;
  for (const char* dtype : {"float32", "float16", "bfloat16"})
    for (int L : {32, 100, 768, 1024, 2048, 4096, 5120, 16384, 65536, 131072, 100003}) {
      const json base = {{"batch", 2}, {"heads", 3}, {"queries", 5}, {"row_length", L}, {"dtype", dtype}, {"scale", 0.125}};
      for (const char* arch : {"sm_80", "sm_90"}) {
        // sm_90 every mask (causal with the boolean one); sm_80 the heaviest variant.
        for (const char* mask : {"none", "boolean", "additive"}) {
          if (std::string(arch) == "sm_80" && std::string(mask) != "additive") continue;
          json p = base;
          p["mask"] = mask;
          p["causal"] = std::string(mask) != "none";
          jobs.push_back({"scale_mask_softmax", arch, p});
        }
        jobs.push_back({"scale_mask_softmax_backward", arch, base});
        // sm_80 also at the lengths whose sm_90a build holds its rows (its own layout elsewhere).
        if (std::string(arch) == "sm_90" || L == 16384 || L == 65536)
          jobs.push_back({"softmax", arch, {{"rows", 7}, {"row_length", L}, {"dtype", dtype}}});
      }
    }
  const auto failures = compile_all(jobs);
  for (const auto& f : failures) UNSCOPED_INFO(f);
  CHECK(failures.empty());
}
