#include <atomic>
#include <mutex>
#include <regex>
#include <set>
#include <thread>

#include "bandjit/bandjit.hpp"
#include "generator/family_registry.hpp"
#include "runtime/compiler.hpp"
#include "support/catch.hpp"
#include "support/problems.hpp"
#include "support/temp_dir.hpp"

using namespace bandjit;

namespace {
// Runs job(i) for every (family, problem) job on all cores; returns "family slug: error"
// for each job that threw.
template <class Job>
std::vector<std::string> run_jobs(const std::vector<std::pair<std::string, Problem>>& jobs, Job job) {
  std::atomic<std::size_t> next{0};
  std::mutex mutex;
  std::vector<std::string> failures;
  auto work = [&] {
    for (std::size_t i = next++; i < jobs.size(); i = next++) {
      try {
        job(i);
      } catch (const Error& e) {
        std::lock_guard<std::mutex> lock(mutex);
        failures.push_back(jobs[i].first + " " + slug(jobs[i].second) + ": " + e.what());
      }
    }
  };
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < std::max(2u, std::thread::hardware_concurrency()); ++t) pool.emplace_back(work);
  for (auto& t : pool) t.join();
  return failures;
}
}  // namespace

TEST_CASE("nvrtc: every kernel of the four shape files compiles for sm_90", "[nvrtc]") {
  std::vector<std::pair<std::string, Problem>> jobs;
  for (const char* file : {"shapes/longformer-base-4096.json", "shapes/longformer-large-4096.json",
                           "shapes/longformer-charlm-small.json", "shapes/seed-workload-grid.json"})
    for (const auto& entry : load_shape_file(test::source_path(file)).entries)
      for (const auto& op : entry.ops) jobs.emplace_back(op, entry.problem);
  REQUIRE(jobs.size() == 3 * (6 + 4 + 6 + 51));

  test::TempDir dir;
  Options options;
  options.arch = "sm_90";
  options.cache_dir = dir.path();
  std::vector<Origin> origins(jobs.size());
  const auto failures =
      run_jobs(jobs, [&](std::size_t i) { origins[i] = pregenerate(jobs[i].first, jobs[i].second, options).origin; });
  for (const auto& f : failures) UNSCOPED_INFO(f);
  CHECK(failures.empty());
  // Problems that differ only in fields a family ignores share one kernel; all the rest compiled.
  CHECK(std::count(origins.begin(), origins.end(), Origin::compiled) > 150);

  // The second pass finds every kernel on disk.
  for (const auto& [family, problem] : jobs) CHECK(pregenerate(family, problem, options).origin == Origin::disk);
}

TEST_CASE("nvrtc: every backward kernel of the edge cases and longformer-base compiles for sm_90", "[nvrtc]") {
  // attention_backward's kernels (band_qk at scale 1, band_softmax_backward, band_pv,
  // band_tpv) and the standalone families, through the same job list as `pregenerate --ops backward`.
  // band_pv's forward problems are among them (same kernels): its spills are checked here.
  std::vector<std::pair<std::string, Problem>> jobs;
  std::set<std::string> seen;
  for (const char* file : {"tests/shapes/edge-cases.json", "shapes/longformer-base-4096.json"})
    for (const auto& entry : load_shape_file(test::source_path(file)).entries)
      for (const auto& op : expand_family_names("backward", file))
        for (const auto& k : kernels_of_op(op, entry.problem))
          if (seen.insert(k.family + to_json(k.problem)).second &&
              !(k.family == "band_qk" && entry.problem.scale == 1.0))  // the forward test compiles those
            jobs.emplace_back(k.family, k.problem);
  REQUIRE(jobs.size() >= 2 * 66);

  test::TempDir dir;
  Options options;
  options.arch = "sm_90";
  options.cache_dir = dir.path();
  const auto failures = run_jobs(jobs, [&](std::size_t i) {
    const Source s = find_family(jobs[i].first).generate(jobs[i].second);
    const Cubin c = compile(s, "sm_90");
    // No kernel may spill: ptxas reports it in the log.
    if (std::regex_search(c.log, std::regex("[1-9][0-9]* bytes spill")))
      throw Error(ErrorKind::compile_failed, "spills registers: " + c.log);
    // The Hopper paths of band_qk, band_pv and band_tpv compile for sm_90a (wgmma), the rest for
    // sm_90; ptxas must not have serialised their wgmma (its C75xx "Potential Performance Loss").
    if (c.log.find(s.arch_specific ? "for 'sm_90a'" : "for 'sm_90'") == std::string::npos)
      throw Error(ErrorKind::compile_failed, "not compiled for the expected target: " + c.log);
    if (c.log.find("(C75") != std::string::npos)
      throw Error(ErrorKind::compile_failed, "wgmma serialised: " + c.log);
    if (c.log.find("spill") == std::string::npos) throw Error(ErrorKind::compile_failed, "no ptxas report: " + c.log);
  });
  for (const auto& f : failures) UNSCOPED_INFO(f);
  CHECK(failures.empty());
  for (const char* family : {"band_tpv", "band_pv"})
    CHECK(std::count_if(jobs.begin(), jobs.end(), [family](const auto& j) {
            return j.first == family && find_family(j.first).generate(j.second).arch_specific;
          }) > 5);
}

TEST_CASE("nvrtc: sliding_window_attention compiles without spills for every problem, sm_80 and sm_90", "[nvrtc]") {
  // The portable kernel, for the shape files, the edge cases and each dtype: the tiling must
  // fit shared memory and the registers must hold (head_dim up to 128) on both targets.
  std::vector<std::pair<std::string, Problem>> jobs;
  std::set<std::string> seen;
  for (const char* file : {"shapes/longformer-base-4096.json", "shapes/longformer-large-4096.json",
                           "shapes/longformer-charlm-small.json", "shapes/seed-workload-grid.json",
                           "tests/shapes/edge-cases.json"})
    for (const auto& entry : load_shape_file(test::source_path(file)).entries)
      for (const char* arch : {"sm_90", "sm_80"}) {
        const Source s = generate_sliding_window_attention(entry.problem);
        if (seen.insert(arch + s.key_fields.dump()).second) jobs.emplace_back(arch, entry.problem);
      }
  REQUIRE(jobs.size() >= 2 * 60);
  CHECK(std::count_if(jobs.begin(), jobs.end(), [](const auto& j) {
          return generate_sliding_window_attention(j.second).arch_specific;
        }) > 40);
  const auto failures = run_jobs(jobs, [&](std::size_t i) {
    const Source s = generate_sliding_window_attention(jobs[i].second);
    const Cubin c = compile(s, jobs[i].first);
    if (jobs[i].second.head_dim <= 128 && std::regex_search(c.log, std::regex("[1-9][0-9]* bytes spill")))
      throw Error(ErrorKind::compile_failed, "spills registers: " + c.log);
    // The Hopper kernel's problems compile for sm_90a on sm_90 (wgmma), the rest as asked.
    const bool hopper = s.arch_specific && jobs[i].first == "sm_90";
    if (c.log.find(hopper ? "for 'sm_90a'" : "for '" + jobs[i].first + "'") == std::string::npos)
      throw Error(ErrorKind::compile_failed, "not compiled for the expected target: " + c.log);
    if (c.log.find("spill") == std::string::npos) throw Error(ErrorKind::compile_failed, "no ptxas report: " + c.log);
  });
  for (const auto& f : failures) UNSCOPED_INFO(f);
  CHECK(failures.empty());
}

TEST_CASE("nvrtc: a compile error carries the log, the options and the source name", "[nvrtc]") {
  Problem p;
  p.heads = 1;
  p.seq_len = 32;
  p.head_dim = 16;
  Source s = generate_band_qk(p);
  s.text += "\nthis is not CUDA;\n";
  try {
    compile(s, "sm_90");
    FAIL("compiled broken source");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::compile_failed);
    CHECK(e.evidence_of("log").find("error") != std::string::npos);
    CHECK(e.evidence_of("log").find(s.name) != std::string::npos);  // file and line of the error
    CHECK(e.evidence_of("options").find("--gpu-architecture=sm_90") != std::string::npos);
    CHECK(e.evidence_of("options").find("-I") != std::string::npos);
    CHECK(std::string(e.what()).find(s.name) != std::string::npos);
  }
}

TEST_CASE("nvrtc: the target architecture is validated before NVRTC runs", "[nvrtc]") {
  for (const char* bad : {"sm_52", "sm_75", "compute_90", "gfx90a", "sm90", "", "sm_90a", "sm_200"}) {
    INFO(bad);
    try {
      validate_arch(bad);
      FAIL("accepted " << bad);
    } catch (const Error& e) {
      CHECK(e.kind() == ErrorKind::invalid_problem);
      CHECK(e.evidence_of("field") == "arch");
    }
  }
  for (const char* good : {"sm_80", "sm_86", "sm_89", "sm_90", "sm_100", "sm_120"}) CHECK_NOTHROW(validate_arch(good));
}

TEST_CASE("nvrtc: emitted standalone sources compile without the embedded templates", "[nvrtc]") {
  Problem p = test::band_problem(1, 3, 200, 32, 9, 4, DType::float32, {1, 2, 3});
  for (DType d : {DType::float32, DType::float16, DType::bfloat16})
    for (const auto& family : families_of_set(kBandSet)) {
      p.dtype = d;
      Source s = find_family(family).generate(p);
      s.text = standalone_text(s);
      static const std::vector<TemplateFile> none;
      s.headers = &none;
      INFO(family << " " << to_string(d));
      CHECK(s.text.find("#include \"bandjit/") == std::string::npos);
      CHECK_NOTHROW(compile(s, "sm_90"));
    }
}

TEST_CASE("nvrtc: the cubin and resource usage are returned", "[nvrtc]") {
  const Problem p = test::band_problem(1, 2, 100, 64, 10, 10, DType::float16);
  const Cubin c = compile(generate_band_pv(p), "sm_90");
  CHECK(c.image.size() > 1000);
  CHECK(c.image.compare(0, 4, "\x7f" "ELF") == 0);
  CHECK(c.registers > 0);
  CHECK(c.registers <= 255);
  CHECK(registers_from_log("ptxas info    : Used 57 registers, used 1 barriers") == 57);
  CHECK(registers_from_log("no such line") == -1);
}
