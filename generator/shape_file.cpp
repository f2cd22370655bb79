// Shape files of SPEC §6, read as they are: {"name", "problems": [{fields…, "ops"?}]}.
#include <algorithm>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <set>
#include <nlohmann/json.hpp>

#include "bandjit/errors.hpp"
#include "generator/family_registry.hpp"
#include "generator/json_input.hpp"
#include "generator/problem_json.hpp"

namespace bandjit {

ShapeFile load_shape_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw Error(ErrorKind::io, fmt::format("cannot read shape file {}", path), {{"path", path}});
  std::stringstream text;
  text << in.rdbuf();
  const nlohmann::json doc = parse_input_json(text.str(), path, {{"path", path}});
  if (!doc.is_object() || !doc.contains("problems") || !doc["problems"].is_array())
    throw Error(ErrorKind::invalid_problem,
                fmt::format("{}: expected an object with a \"problems\" list (SPEC §6)", path), {{"path", path}});
  ShapeFile file;
  file.path = path;
  if (doc.contains("name") && !doc["name"].is_string())
    throw Error(ErrorKind::invalid_problem, fmt::format("{}: \"name\" must be a string", path), {{"path", path}});
  file.name = doc.value("name", path);
  const auto& problems = doc["problems"];
  if (problems.empty())
    throw Error(ErrorKind::invalid_problem, fmt::format("{}: the \"problems\" list is empty", path), {{"path", path}});
  for (std::size_t i = 0; i < problems.size(); ++i) {
    const auto where = fmt::format("{} problems[{}]", path, i);
    ShapeEntry entry;
    if (!problems[i].is_object())
      throw Error(ErrorKind::invalid_problem, fmt::format("{}: a problem must be a JSON object", where));
    nlohmann::json params = problems[i];
    if (auto it = params.find("parameter_set"); it != params.end()) {
      if (!it->is_string() || families_of_set(it->get<std::string>()).empty()) {
        std::set<std::string> sets;
        for (const auto& f : all_families()) sets.insert(f.parameter_set);
        throw Error(ErrorKind::invalid_problem,
                    fmt::format("{}: parameter_set = {} is not valid; allowed: {}", where, it->dump(),
                                fmt::join(sets, ", ")),
                    {{"field", "parameter_set"}, {"value", it->dump()}});
      }
      entry.parameter_set = it->get<std::string>();
      params.erase(it);
    }
    std::vector<std::string> ops;
    if (auto it = params.find("ops"); it != params.end()) {
      if (!it->is_array() || it->empty())
        throw Error(ErrorKind::invalid_problem, fmt::format("{}: ops must be a non-empty list of family names", where));
      for (const auto& op : *it) {
        if (!op.is_string())
          throw Error(ErrorKind::invalid_problem, fmt::format("{}: ops must hold family names", where));
        for (const auto& name : expand_ops(op.get<std::string>(), entry.parameter_set, where))
          if (std::find(ops.begin(), ops.end(), name) == ops.end()) ops.push_back(name);
      }
      params.erase(it);
    } else {
      ops = default_ops(entry.parameter_set);
    }
    entry.ops = std::move(ops);
    // Every family of a set takes the same parameters: the set's first family validates them.
    const Family& first = find_family(families_of_set(entry.parameter_set).front());
    const nlohmann::json canonical = first.canonical(params, where);
    for (const auto& op : entry.ops)
      if (op != kAttentionBackward) find_family(op).canonical(params, where);
    entry.parameters = canonical.dump();
    if (entry.parameter_set == kBandSet) entry.problem = problem_from_json(params, where);
    file.entries.push_back(std::move(entry));
  }
  return file;
}

}  // namespace bandjit
