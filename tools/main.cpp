// `bandjit`: pregenerate, warmup, cache, emit, check, families, info, bench (docs/cli.md).
#include <iostream>
#include <string_view>

#include <fmt/format.h>

#include "bandjit/errors.hpp"
#include "runtime/kernel_cache.hpp"
#include "tools/cli_common.hpp"

namespace {

// Whether `name` is one of `app`'s subcommands (CLI11 would call an unknown one "a subcommand
// is required"; bandjit names it instead).
bool names_subcommand(const CLI::App& app, const char* name) {
  for (const auto* sub : app.get_subcommands({}))
    if (sub->check_name(name)) return true;
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"bandjit — JIT-generated banded (sliding-window, dilated) attention kernels"};
  app.require_subcommand(1);
  app.set_version_flag("--version", BANDJIT_VERSION);
  int exit_code = bandjit::cli::kOk;
  bandjit::cli::add_pregenerate(app, exit_code);
  bandjit::cli::add_warmup(app, exit_code);
  bandjit::cli::add_cache(app, exit_code);
  bandjit::cli::add_emit(app, exit_code);
  bandjit::cli::add_check(app, exit_code);
  bandjit::cli::add_families(app, exit_code);
  bandjit::cli::add_info(app, exit_code);
  bandjit::cli::add_bench(app, exit_code);
  // A bad tuning knob (BANDJIT_TILE_*, BANDJIT_ROW_*, BANDJIT_TPV_TILING, the BANDJIT_*_WGMMA
  // switches, …) is a usage error of the whole command, reported once before any kernel is
  // generated (exit 2), not a failure of every kernel. Runs after parsing, so --help works.
  app.parse_complete_callback([&app] {
    for (const auto* sub : app.get_subcommands())
      for (const char* name : {"pregenerate", "warmup", "emit", "check", "bench"})
        if (sub->get_name() == name) (void)bandjit::current_tuning();
  });
  if (argc > 1 && argv[1][0] != '-' && !names_subcommand(app, argv[1])) {
    std::cerr << "bandjit: unknown command \"" << argv[1] << "\"\nRun with --help for the commands.\n";
    return bandjit::cli::kUsage;
  }
  // The same for `cache`'s subcommands. Its one option, --cache-dir, may come before them; at
  // any other option the scan stops and CLI11 reports what is wrong (or prints the help).
  if (argc > 2 && std::string_view(argv[1]) == "cache") {
    const auto* cache = app.get_subcommand("cache");
    for (int i = 2; i < argc; ++i) {
      const std::string_view arg = argv[i];
      if (arg == "--cache-dir") {
        ++i;  // its value
        continue;
      }
      if (arg.rfind("--cache-dir=", 0) == 0) continue;
      if (arg.empty() || arg[0] == '-') break;
      if (!names_subcommand(*cache, argv[i])) {
        std::cerr << "bandjit: unknown cache command \"" << arg << "\"\nRun `bandjit cache --help` for them.\n";
        return bandjit::cli::kUsage;
      }
      break;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "bandjit: " << e.what() << "\nRun with --help for usage.\n";
    return bandjit::cli::kUsage;
  } catch (const bandjit::Error& e) {
    std::cerr << "bandjit: " << bandjit::to_string(e.kind()) << ": " << e.what() << "\n";
    return static_cast<int>(e.kind());
  } catch (const std::exception& e) {
    std::cerr << "bandjit: " << e.what() << "\n";
    return bandjit::cli::kFailed;
  }
  return exit_code;
}
