#include <filesystem>

#include "bandjit/cache.hpp"
#include "support/catch.hpp"
#include "support/run_command.hpp"
#include "support/temp_dir.hpp"

using namespace bandjit;

TEST_CASE("processes: several processes filling one cache leave it valid", "[processes]") {
  test::TempDir dir;
  const std::string shapes = dir / "small.json";
  test::write_text(shapes, R"({"name": "small", "problems": [
    {"batch": 1, "heads": 2, "seq_len": 100, "head_dim": 32, "window_left": 8, "window_right": 8, "dtype": "float16"},
    {"batch": 2, "heads": 3, "seq_len": 77, "head_dim": 64, "window_left": 12, "window_right": 0, "dilation": 2, "dtype": "float32"},
    {"batch": 1, "heads": 4, "seq_len": 129, "head_dim": 16, "window_left": 5, "window_right": 9, "dilation": [1, 2, 3, 4], "dtype": "bfloat16", "layout": "bhnd"}
  ]})");
  const std::string cache = dir / "cache";
  std::string script;
  for (int i = 0; i < 4; ++i)
    script += test::cli_path() + " pregenerate --shapes " + shapes + " --arch sm_90 -j 2 --cache-dir " + cache +
              " > " + dir.path() + "/out" + std::to_string(i) + ".txt 2>&1 & pids=\"$pids $!\"; ";
  script += "for pid in $pids; do wait $pid || exit 1; done";
  const auto r = test::run_command("sh -c '" + script + "'");
  INFO(r.output);
  CHECK(r.exit_code == 0);

  const auto report = verify_cache(cache, false);
  CHECK(report.valid == 9);
  CHECK(report.invalid.empty());
  CHECK(summarize_cache(cache).temp_files == 0);
  // A later run finds everything.
  const auto again = test::run_cli("pregenerate --shapes " + shapes + " --arch sm_90 --cache-dir " + cache);
  CHECK(again.exit_code == 0);
  CHECK(again.output.find("0 compiled, 9 loaded from cache, 0 failed") != std::string::npos);
}
