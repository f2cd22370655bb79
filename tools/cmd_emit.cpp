// bandjit emit [--family F] (--problem JSON | --shapes FILE [--index I]) [--standalone]: print the
// generated source.
#include <iostream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "bandjit/errors.hpp"
#include "generator/family_registry.hpp"
#include "generator/json_input.hpp"
#include "tools/cli_common.hpp"

namespace bandjit::cli {

void add_emit(CLI::App& app, int& exit_code) {
  struct Args {
    std::string family;
    std::string problem;
    std::string shapes;
    std::size_t index = 0;
    bool standalone = false;
  };
  auto args = std::make_shared<Args>();
  auto* cmd = app.add_subcommand("emit", "Print the generated CUDA source of one kernel");
  cmd->add_option("--family", args->family,
                  "Kernel family (see `bandjit families`); default: the first of the problem's parameter set (band_qk)");
  auto* problem = cmd->add_option("--problem", args->problem, "Problem as JSON: SPEC §2 fields, or the family's parameters (`bandjit families`)");
  auto* shapes = cmd->add_option("--shapes", args->shapes, "Shape file to take the problem from")->check(CLI::ExistingFile);
  cmd->add_option("--index", args->index, "Problem index in the shape file")
      ->needs(shapes)
      ->check(CLI::Range(0LL, 1000000000LL));  // as a signed number first: a negative index would wrap around
  problem->excludes(shapes);
  cmd->add_flag("--standalone", args->standalone, "Inline the templates: one file that nvcc compiles on its own");
  cmd->callback([args, &exit_code] {
    std::string params, set = kBandSet;
    if (!args->problem.empty()) {
      params = args->problem;
      const auto doc = parse_input_json(params, "--problem");
      if (doc.is_object() && doc.contains("parameter_set") && doc["parameter_set"].is_string())
        set = doc["parameter_set"].get<std::string>();
    } else if (!args->shapes.empty()) {
      const auto file = load_shape_file(args->shapes);
      if (args->index >= file.entries.size())
        throw Error(ErrorKind::usage, fmt::format("--index {} is out of range; {} holds problems 0 … {}", args->index,
                                                  args->shapes, file.entries.size() - 1));
      params = file.entries[args->index].parameters;
      set = file.entries[args->index].parameter_set;
    } else {
      throw Error(ErrorKind::usage, "emit needs --problem JSON or --shapes FILE");
    }
    std::string family = args->family;
    if (!family.empty() && !args->shapes.empty() && find_family(family).parameter_set != set)
      throw Error(ErrorKind::invalid_problem,
                  fmt::format("{} problem {}: {} takes the \"{}\" parameters, not parameter_set = \"{}\"", args->shapes,
                              args->index, family, find_family(family).parameter_set, set));
    if (family.empty()) {
      const auto in_set = families_of_set(set);
      if (in_set.empty()) throw Error(ErrorKind::invalid_problem, fmt::format("parameter_set \"{}\" has no families", set));
      family = in_set.front();
    }
    std::cout << emit_source(family, params, args->standalone);
    exit_code = kOk;
  });
}

void add_families(CLI::App& app, int& exit_code) {
  auto json_out = std::make_shared<std::string>();
  auto names_only = std::make_shared<bool>(false);
  auto* cmd = app.add_subcommand("families", "List the kernel families with their parameters and arguments");
  cmd->add_flag("--names", *names_only, "Print only the names, one per line");
  cmd->add_option("--json", *json_out, "Also write them as JSON to this file (- = stdout)");
  cmd->callback([json_out, names_only, &exit_code] {
    check_output_file(*json_out);  // before the listing: a bad path fails with nothing printed
    const auto infos = family_infos();
    const nlohmann::json doc = families_json();
    if (*json_out == "-") {
      write_json("-", doc);
    } else if (*names_only) {
      for (const auto& f : infos) std::cout << f.name << "\n";
    } else {
      std::string last_set;
      for (const auto& f : infos) {
        if (f.parameter_set != last_set) {
          std::cout << fmt::format("{}parameters \"{}\":\n", last_set.empty() ? "" : "\n", f.parameter_set);
          for (const auto& p : f.parameters)
            std::cout << fmt::format("  {:<14} {:<8} {}{}  — {}\n", p.name, p.type, p.allowed,
                                     p.default_value.empty() ? " (required)" : " (default " + p.default_value + ")",
                                     p.doc);
          last_set = f.parameter_set;
        }
        std::cout << fmt::format("  {:<28} ({})\n      {}\n      reference: {}\n", f.name, fmt::join(f.arguments, ", "),
                                 f.summary, f.reference);
      }
    }
    if (!json_out->empty() && *json_out != "-") write_json(*json_out, doc);
    exit_code = kOk;
  });
}

}  // namespace bandjit::cli
