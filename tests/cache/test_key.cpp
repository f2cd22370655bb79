#include <functional>
#include <set>

#include "bandjit/bandjit.hpp"
#include "cache/key.hpp"
#include "generator/family_registry.hpp"
#include "runtime/compiler.hpp"
#include "support/catch.hpp"
#include "support/problems.hpp"

using namespace bandjit;

namespace {

Problem base() { return test::band_problem(2, 4, 1000, 64, 32, 16, DType::float16); }

std::string key_of(const std::string& family, const Problem& p, const std::string& arch = "sm_90",
                   const std::string& nvrtc = "13.0") {
  const Source s = find_family(family).generate(p);
  return make_cache_key(s, arch, compile_options(arch), nvrtc).hash;
}

}  // namespace

TEST_CASE("key: the same problem gives the same key", "[key]") {
  CHECK(key_of("band_qk", base()) == key_of("band_qk", base()));
  CHECK(key_of("band_qk", base()).size() == 64);
}

TEST_CASE("key: every problem field, the family, arch and NVRTC version change it", "[key]") {
  const std::vector<std::pair<const char*, std::function<void(Problem&)>>> changes = {
      {"batch", [](Problem& p) { p.batch = 3; }},
      {"heads", [](Problem& p) { p.heads = 5; }},
      {"seq_len", [](Problem& p) { p.seq_len = 1001; }},
      {"head_dim", [](Problem& p) { p.head_dim = 32; }},
      {"window_left", [](Problem& p) { p.window_left = 31; }},
      {"window_right", [](Problem& p) { p.window_right = 0; }},
      {"dilation", [](Problem& p) { p.dilation = {2}; }},
      {"per-head dilation", [](Problem& p) { p.dilation = {1, 1, 1, 2}; }},
      {"dtype", [](Problem& p) { p.dtype = DType::bfloat16; }},
      {"layout", [](Problem& p) { p.layout = Layout::bhnd; }},
  };
  for (const auto& family : families_of_set(kBandSet)) {
    std::set<std::string> keys = {key_of(family, base())};
    for (const auto& [name, change] : changes) {
      Problem p = base();
      change(p);
      INFO(family << ": " << name);
      CHECK(keys.insert(key_of(family, p)).second);
    }
    CHECK(keys.insert(key_of(family, base(), "sm_80")).second);
    CHECK(keys.insert(key_of(family, base(), "sm_90", "13.1")).second);
  }
  CHECK(key_of("band_qk", base()) != key_of("band_pv", base()));
  // Fields a family does not read leave its key alone; those it reads change it.
  Problem scaled = base();
  scaled.scale = 0.125;
  CHECK(key_of("band_qk", scaled) != key_of("band_qk", base()));
  CHECK(key_of("band_softmax", scaled) != key_of("band_softmax", base()));
  CHECK(key_of("band_pv", scaled) == key_of("band_pv", base()));
  Problem masked = base();
  masked.key_mask = KeyMask::boolean;
  CHECK(key_of("band_softmax", masked) != key_of("band_softmax", base()));
  CHECK(key_of("band_qk", masked) == key_of("band_qk", base()));
}

TEST_CASE("key: compile options and templates change it", "[key]") {
  const Source s = generate_band_qk(base());
  const auto options = compile_options("sm_90");
  const auto reference = make_cache_key(s, "sm_90", options, "13.0").hash;
  auto more = options;
  more.push_back("--use_fast_math");
  CHECK(make_cache_key(s, "sm_90", more, "13.0").hash != reference);
  // A source that asks for the arch-specific target (wgmma) compiles as sm_90a on sm_90 only.
  CHECK(compile_options("sm_90", true) != options);
  CHECK(compile_options("sm_90", true).front() == "--gpu-architecture=sm_90a");
  CHECK(compile_options("sm_80", true) == compile_options("sm_80"));

  // A copy of the templates with one byte changed in one file.
  std::vector<TemplateFile> edited = embedded_templates();
  edited.back().text += " ";
  Source t = s;
  t.headers = &edited;
  CHECK(make_cache_key(t, "sm_90", options, "13.0").hash != reference);
  Source u = s;
  u.text += "\n";
  CHECK(make_cache_key(u, "sm_90", options, "13.0").hash != reference);
}

TEST_CASE("key: the document holds no paths", "[key]") {
  const Source s = generate_band_qk(base());
  const std::string doc = make_cache_key(s, "sm_90", compile_options("sm_90"), "13.0").document.dump();
  CHECK(doc.find("/usr") == std::string::npos);
  CHECK(doc.find("-I") == std::string::npos);
  CHECK(doc.find("/tmp") == std::string::npos);
}
