#include <filesystem>
#include <string>
#include <tuple>

#include <nlohmann/json.hpp>

#include "bandjit/bandjit.hpp"
#include "support/catch.hpp"
#include "support/run_command.hpp"
#include "support/temp_dir.hpp"

using namespace bandjit;
using test::run_cli;

namespace {
bool has(const std::string& text, const std::string& piece) { return text.find(piece) != std::string::npos; }
const char* kProblem =
    R"({"batch": 1, "heads": 2, "seq_len": 64, "head_dim": 32, "window_left": 4, "window_right": 4, "dtype": "float16"})";
}  // namespace

TEST_CASE("cli: usage errors exit 2 with a hint", "[cli]") {
  auto r = run_cli("");
  CHECK(r.exit_code == 2);
  CHECK(has(r.output, "--help"));
  r = run_cli("pregenerate");
  CHECK(r.exit_code == 2);
  CHECK(has(r.output, "--shapes"));
  r = run_cli("pregenerate --shapes /no/such/file.json --arch sm_90");
  CHECK(r.exit_code == 2);
  CHECK(has(r.output, "/no/such/file.json"));
  r = run_cli("frobnicate");
  CHECK(r.exit_code == 2);
  CHECK(has(r.output, "unknown command \"frobnicate\""));
  for (const char* line : {"cache frobnicate", "cache --cache-dir /tmp frobnicate"}) {
    r = run_cli(line);
    CHECK(r.exit_code == 2);
    CHECK(has(r.output, "unknown cache command \"frobnicate\""));
  }
  r = run_cli("cache --max-size 1G prune");  // an option's value is not taken for a subcommand
  CHECK(r.exit_code == 2);
  CHECK_FALSE(has(r.output, "unknown cache command"));
  CHECK(has(r.output, "--max-size"));
  r = run_cli("emit --shapes " + test::source_path("shapes/longformer-base-4096.json") + " --index -1");
  CHECK(r.exit_code == 2);
  CHECK(has(r.output, "--index"));
  r = run_cli("cache prune --max-size lots");
  CHECK(r.exit_code == 2);
  CHECK(has(r.output, "lots"));
  CHECK(run_cli("--help").exit_code == 0);
}

TEST_CASE("cli: a bad tuning knob is one usage error before any kernel is generated", "[cli]") {
  test::TempDir dir;
  const std::string shapes = test::source_path("tests/shapes/three-problems.json");
  for (const char* knob : {"BANDJIT_ROW_PIECES=3", "BANDJIT_TPV_TILING=128,32", "BANDJIT_TPV_TILING=128,32,5",
                           "BANDJIT_TPV_TILING=a,b,c", "BANDJIT_TILE_ROWS=48", "BANDJIT_PV_WHOLE_ROWS=2"}) {
    INFO(knob);
    const auto r = test::run_command(std::string("env ") + knob + " " + test::cli_path() +
                                     " pregenerate --arch sm_90 --cache-dir " + dir.path() +
                                     " --shapes " + shapes);
    CHECK(r.exit_code == 2);
    const std::string name = std::string(knob).substr(0, std::string(knob).find('='));
    CHECK(has(r.output, name));
    CHECK(has(r.output, "allowed"));
    CHECK(!has(r.output, "compiled"));  // nothing was generated
  }
  // --help still works with a bad knob in the environment.
  CHECK(test::run_command("env BANDJIT_ROW_PIECES=3 " + test::cli_path() + " pregenerate --help").exit_code == 0);
  // A good one is accepted.
  CHECK(test::run_command("env BANDJIT_TPV_TILING=64,32,3 " + test::cli_path() + " emit --problem '" +
                          std::string(kProblem) + "' --family band_tpv")
            .exit_code == 0);
  // The band_pv switch reaches the source, each value against the default: 1 gives the seed
  // (513 diagonals, slabs by default) whole rows, 0 takes them from w = 64 (129, whole).
  const auto pv_source = [](const char* value, int window) {
    const std::string problem = R"({"batch":1,"heads":12,"seq_len":4096,"head_dim":64,"window_left":)" +
                                std::to_string(window) + R"(,"window_right":)" + std::to_string(window) +
                                R"(,"dtype":"float16"})";
    return test::run_command(std::string("env BANDJIT_PV_WHOLE_ROWS=") + value + " " + test::cli_path() +
                             " emit --family band_pv --problem '" + problem + "'");
  };
  for (const auto& [value, window, whole] : {std::tuple{"1", 256, true}, {"", 256, false}, {"0", 64, false},
                                             {"", 64, true}}) {
    INFO(value << " " << window);
    const auto r = pv_source(value, window);
    CHECK(r.exit_code == 0);
    CHECK(has(r.output, std::string("kWgmmaWholeRows = ") + (whole ? "true" : "false")));
  }
}

TEST_CASE("cli: invalid problems exit 3 naming the file, index and field", "[cli]") {
  test::TempDir dir;
  test::write_text(dir / "bad.json", R"({"name": "bad", "problems": [
      {"batch": 1, "heads": 2, "seq_len": 64, "head_dim": 32, "window_left": 64, "window_right": 4, "dtype": "float16"}]})");
  auto r = run_cli("pregenerate --arch sm_90 --cache-dir " + dir.path() + "/c --shapes " + dir / "bad.json");
  CHECK(r.exit_code == 3);
  CHECK(has(r.output, "bad.json problems[0]"));
  CHECK(has(r.output, "window_left = 64"));
  CHECK(has(r.output, "0 … 63"));

  test::write_text(dir / "broken.json", "{ not json");
  r = run_cli("pregenerate --arch sm_90 --shapes " + dir / "broken.json");
  CHECK(r.exit_code == 3);
  CHECK(has(r.output, "not valid JSON"));

  r = run_cli("pregenerate --arch sm_52 --cache-dir " + dir.path() + "/c --shapes " +
              test::source_path("shapes/longformer-base-4096.json"));
  CHECK(r.exit_code == 3);
  CHECK(has(r.output, "arch = \"sm_52\""));

  r = run_cli(std::string("emit --family band_qkv --problem '") + kProblem + "'");
  CHECK(r.exit_code == 3);
  CHECK(has(r.output, "band_qk, band_softmax, band_pv"));
}

TEST_CASE("cli: pregenerate reports each kernel, then finds them all in the cache", "[cli]") {
  test::TempDir dir;
  test::write_text(dir / "one.json", std::string(R"({"name": "one", "problems": [)") + kProblem + "]}");
  const std::string args = "pregenerate --arch sm_90 --cache-dir " + dir.path() + "/c --shapes " + dir / "one.json" +
                           " --json " + dir / "out.json";
  auto r = run_cli(args);
  INFO(r.output);
  CHECK(r.exit_code == 0);
  CHECK(has(r.output, "[   1/3] compiled band_qk"));
  CHECK(has(r.output, "3 kernels: 3 compiled, 0 loaded from cache, 0 failed"));
  CHECK(has(r.output, " s for sm_90"));  // the summary names the target
  CHECK(has(r.output, "pregenerate: cache directory " + dir.path() + "/c"));
  r = test::run_command("BANDJIT_LOG_LEVEL=loud " + std::string(BANDJIT_CLI) + " " + args);
  CHECK(r.exit_code == 2);  // an unknown log level is refused, not read as "off"
  CHECK(has(r.output, "BANDJIT_LOG_LEVEL = \"loud\""));
  r = run_cli(args);
  CHECK(has(r.output, "3 kernels: 0 compiled, 3 loaded from cache, 0 failed"));
  CHECK(has(test::run_command("cat " + dir / "out.json").output, "\"cached\": 3"));

  r = run_cli("cache list --cache-dir " + dir.path() + "/c");
  CHECK(has(r.output, "3 entries"));
  r = run_cli("cache verify --cache-dir " + dir.path() + "/c");
  CHECK(r.exit_code == 0);
  CHECK(has(r.output, "3 valid, 0 invalid"));
  r = run_cli("cache stats --cache-dir " + dir.path() + "/c");
  CHECK(has(r.output, "entries      3"));
  r = run_cli("cache clear --cache-dir " + dir.path() + "/c");
  CHECK(has(r.output, "removed 3 files"));
}

TEST_CASE("cli: a corrupt entry makes verify exit 1 until removed", "[cli]") {
  test::TempDir dir;
  test::write_text(dir / "one.json", std::string(R"({"name": "one", "problems": [)") + kProblem + "]}");
  run_cli("pregenerate --arch sm_90 --cache-dir " + dir.path() + "/c --shapes " + dir / "one.json");
  test::run_command("f=$(ls " + dir.path() + "/c/*/*.bjk | head -1); head -c 100 $f > $f.cut; mv $f.cut $f");
  auto r = run_cli("cache verify --cache-dir " + dir.path() + "/c");
  CHECK(r.exit_code == 1);
  CHECK(has(r.output, "truncated"));
  r = run_cli("cache verify --remove --cache-dir " + dir.path() + "/c");
  CHECK(r.exit_code == 0);
  CHECK(run_cli("cache verify --cache-dir " + dir.path() + "/c").exit_code == 0);
}

TEST_CASE("cli: emit prints the generated source", "[cli]") {
  auto r = run_cli(std::string("emit --family band_softmax --problem '") + kProblem + "'");
  CHECK(r.exit_code == 0);
  CHECK(has(r.output, "extern \"C\" __global__"));
  CHECK(has(r.output, "kSeqLen = 64;"));
  r = run_cli("emit --shapes " + test::source_path("shapes/longformer-charlm-small.json") + " --index 5");
  CHECK(has(r.output, "bj_dilation[8] = {1, 1, 1, 1, 1, 1, 4, 4}"));
  r = run_cli("emit --shapes " + test::source_path("shapes/longformer-charlm-small.json") + " --index 6");
  CHECK(r.exit_code == 2);
  CHECK(has(r.output, "0 … 5"));
  // The band families first; the other sets' families follow (tools/test_cli_softmax.cpp).
  CHECK(run_cli("families --names").output.rfind("band_qk\nband_softmax\nband_pv\nband_tpv\nband_softmax_backward\n", 0) == 0);
}

TEST_CASE("cli: emit of a family from another parameter set names both sets", "[cli]") {
  const auto r = run_cli("emit --family softmax --shapes " + test::source_path("tests/shapes/layer-norm.json") +
                         " --index 0");
  CHECK(r.exit_code == 3);
  CHECK(has(r.output, "softmax takes the \"softmax\" parameters, not parameter_set = \"layer_norm\""));
  CHECK(has(r.output, "layer-norm.json problem 0"));
}

TEST_CASE("cli: families lists each parameter with its range and default, and each family's arguments", "[cli]") {
  auto r = run_cli("families --json /no/such/dir/families.json");
  CHECK(r.exit_code == 6);
  CHECK(has(r.output, "/no/such/dir/families.json"));
  CHECK_FALSE(has(r.output, "parameters \"band\":"));  // refused before the listing
  r = run_cli("families");
  CHECK(r.exit_code == 0);
  CHECK(has(r.output, "parameters \"band\":"));
  CHECK(has(r.output, "head_dim       integer  16 … 256, a multiple of 16 (required)"));
  CHECK(has(r.output, "band_softmax                 (s, p, [mask: key_mask])"));
  r = run_cli("families --json -");
  CHECK(r.exit_code == 0);
  const auto doc = nlohmann::json::parse(r.output.substr(r.output.find('[')));
  CHECK(doc.size() == bandjit::families().size());
  CHECK(doc[0]["name"] == "band_qk");
  CHECK(doc[0]["parameters"][0]["name"] == "batch");
  CHECK(doc[0]["arguments"] == nlohmann::json{"q", "k", "s"});
}

TEST_CASE("cli: GPU commands say so without a GPU; a missing NVRTC fails each kernel with its message", "[cli]") {
  const std::string shapes = test::source_path("shapes/longformer-base-4096.json");
  const auto no_driver = test::run_command("ls /dev/nvidia0 >/dev/null 2>&1").exit_code != 0;
  if (no_driver) {
    auto r = run_cli("check --shapes " + shapes);
    CHECK(r.exit_code == 5);
    CHECK(has(r.output, "needs a GPU"));
    test::TempDir bad;  // the input is checked first: a bad shape file is exit 3 here too
    test::write_text(bad / "bad.json", R"({"problems": [{"batch": 0, "heads": 2, "seq_len": 64, "head_dim": 32,)"
                                       R"( "window_left": 4, "window_right": 0, "dtype": "float16"}]})");
    for (const char* command : {"check", "bench"}) {
      r = run_cli(std::string(command) + " --shapes " + bad / "bad.json");
      CHECK(r.exit_code == 3);
      CHECK(has(r.output, "batch"));
    }
    r = run_cli("pregenerate --shapes " + shapes);  // no --arch and no GPU to ask
    CHECK(r.exit_code == 2);
    CHECK(has(r.output, "--arch sm_90"));
  }
  test::TempDir dir;
  auto r = test::run_command("BANDJIT_NVRTC_LIBRARY=/no/libnvrtc.so " + test::cli_path() +
                             " pregenerate --arch sm_90 --cache-dir " + dir.path() + " --shapes " + shapes);
  CHECK(r.exit_code == 1);
  CHECK(has(r.output, "cannot load NVRTC"));
  CHECK(has(r.output, "/no/libnvrtc.so"));
  // An NVRTC older than the kernels' PTX (12.0: no st.async) counts as not found, named with
  // its version.
  const std::string old_nvrtc = std::string("BANDJIT_NVRTC_LIBRARY=") + BANDJIT_OLD_NVRTC + " ";
  r = test::run_command(old_nvrtc + test::cli_path() + " pregenerate --arch sm_90 --cache-dir " + dir.path() +
                        " --shapes " + shapes);
  CHECK(r.exit_code == 1);
  CHECK(has(r.output, "cannot load NVRTC 12.1 or later"));
  CHECK(has(r.output, std::string(BANDJIT_OLD_NVRTC) + ": NVRTC 12.0, older than 12.1"));
  r = test::run_command(old_nvrtc + test::cli_path() + " info");
  CHECK(r.exit_code == 0);
  CHECK(has(r.output, "not found: cannot load NVRTC 12.1 or later"));
  // Found first on the library path, an old NVRTC gives way to the build's own toolkit.
  test::TempDir path;
  std::filesystem::create_symlink(BANDJIT_OLD_NVRTC, path / BANDJIT_NVRTC_SONAME);
  r = test::run_command("LD_LIBRARY_PATH=" + path.path() + " " + test::cli_path() + " info");
  CHECK(r.exit_code == 0);
  CHECK(has(r.output, std::string("(") + BANDJIT_TOOLKIT_NVRTC_DIR + "/" + BANDJIT_NVRTC_SONAME + ")"));
  CHECK_FALSE(has(r.output, "not found"));
}

TEST_CASE("cli: sizes that would wrap around are refused", "[cli]") {
  test::TempDir dir;
  for (const char* bad : {"16777216T", "-1", " 5", "5X", "99999999999999999999"}) {
    const auto r = run_cli(std::string("cache prune --cache-dir ") + dir.path() + " --max-size '" + bad + "'");
    INFO(bad << ": " << r.output);
    CHECK(r.exit_code == 2);
    CHECK(has(r.output, "is not a size"));
  }
}

TEST_CASE("cli: pregenerate fails when the size cap evicts its own kernels", "[cli]") {
  test::TempDir dir;
  test::write_text(dir / "one.json", std::string(R"({"name": "one", "problems": [)") + kProblem + "]}");
  const auto r = test::run_command("BANDJIT_CACHE_MAX_SIZE=1K " + test::cli_path() + " pregenerate --arch sm_90 --cache-dir " +
                                   dir.path() + "/c --shapes " + dir / "one.json");
  CHECK(r.exit_code == 1);
  CHECK(has(r.output, "evicted 2 of these kernels"));
}

TEST_CASE("cli: shape-file values out of any range are named", "[cli]") {
  test::TempDir dir;
  test::write_text(dir / "big.json", R"({"name": "big", "problems": [{"batch": 18446744073709551615, "heads": 2,
      "seq_len": 64, "head_dim": 32, "window_left": 4, "window_right": 4, "dtype": "float16"}]})");
  auto r = run_cli("emit --shapes " + dir / "big.json");
  CHECK(r.exit_code == 3);
  CHECK(has(r.output, "batch = 18446744073709551615"));
  test::write_text(dir / "name.json", std::string(R"({"name": 5, "problems": [)") + kProblem + "]}");
  r = run_cli("emit --shapes " + dir / "name.json");
  CHECK(r.exit_code == 3);
  CHECK(has(r.output, "\"name\" must be a string"));
}

TEST_CASE("cli: --ops training pregenerates the forward, the backward families and attention_backward's kernels", "[cli]") {
  test::TempDir dir;
  // scale 0.5: attention_backward needs band_qk at scale 1 besides the forward's band_qk.
  test::write_text(dir / "one.json", R"({"name": "one", "problems": [{"batch": 1, "heads": 2, "seq_len": 64,
      "head_dim": 32, "window_left": 4, "window_right": 0, "dtype": "float16", "scale": 0.5}]})");
  auto r = run_cli("pregenerate --arch sm_90 --cache-dir " + dir.path() + "/c --shapes " + dir / "one.json" +
                   " --ops training");
  INFO(r.output);
  CHECK(r.exit_code == 0);
  CHECK(has(r.output, "6 kernels: 6 compiled"));
  CHECK(has(r.output, "band_tpv"));
  CHECK(has(r.output, "band_softmax_backward"));
  CHECK(has(r.output, "band_qk               b1_h2_n64_d32_wl4_wr0_dil1_f16_bnhd  "));  // the scale-1 band_qk
  r = run_cli("pregenerate --arch sm_90 --cache-dir " + dir.path() + "/c --shapes " + dir / "one.json" +
              " --ops attention_backward");
  CHECK(has(r.output, "4 kernels: 0 compiled, 4 loaded from cache"));
  r = run_cli("pregenerate --arch sm_90 --cache-dir " + dir.path() + "/c --shapes " + dir / "one.json" + " --ops everything");
  CHECK(r.exit_code == 3);
  CHECK(has(r.output, "--ops"));
  CHECK(has(r.output, "training"));
}
