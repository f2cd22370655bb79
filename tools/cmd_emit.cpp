// bandjit emit [--family F] (--problem JSON | --shapes FILE [--index I]) [--standalone]: print the
// generated source.
#include <iostream>

#include <fmt/format.h>

#include "bandjit/errors.hpp"
#include "tools/cli_common.hpp"

namespace bandjit::cli {

void add_emit(CLI::App& app, int& exit_code) {
  struct Args {
    std::string family = "band_qk";
    std::string problem;
    std::string shapes;
    std::size_t index = 0;
    bool standalone = false;
  };
  auto args = std::make_shared<Args>();
  auto* cmd = app.add_subcommand("emit", "Print the generated CUDA source of one kernel");
  cmd->add_option("--family", args->family, "Kernel family (see `bandjit families`)");
  auto* problem = cmd->add_option("--problem", args->problem, "Problem as JSON (SPEC §2 fields)");
  auto* shapes = cmd->add_option("--shapes", args->shapes, "Shape file to take the problem from")->check(CLI::ExistingFile);
  cmd->add_option("--index", args->index, "Problem index in the shape file")->needs(shapes);
  problem->excludes(shapes);
  cmd->add_flag("--standalone", args->standalone, "Inline the templates: one file that nvcc compiles on its own");
  cmd->callback([args, &exit_code] {
    Problem p;
    if (!args->problem.empty()) {
      p = problem_from_json(args->problem);
    } else if (!args->shapes.empty()) {
      const auto file = load_shape_file(args->shapes);
      if (args->index >= file.entries.size())
        throw Error(ErrorKind::usage, fmt::format("--index {} is out of range; {} holds problems 0 … {}", args->index,
                                                  args->shapes, file.entries.size() - 1));
      p = file.entries[args->index].problem;
    } else {
      throw Error(ErrorKind::usage, "emit needs --problem JSON or --shapes FILE");
    }
    std::cout << emit_source(args->family, p, args->standalone);
    exit_code = kOk;
  });
}

void add_families(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("families", "List the kernel families");
  cmd->callback([&exit_code] {
    for (const auto& name : families()) std::cout << name << "\n";
    exit_code = kOk;
  });
}

}  // namespace bandjit::cli
