// Shape files of SPEC §6, read as they are: {"name", "problems": [{fields…, "ops"?}]}.
#include <algorithm>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "bandjit/errors.hpp"
#include "generator/family_registry.hpp"
#include "generator/problem_json.hpp"

namespace bandjit {

ShapeFile load_shape_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw Error(ErrorKind::io, fmt::format("cannot read shape file {}", path), {{"path", path}});
  std::stringstream text;
  text << in.rdbuf();
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(text.str());
  } catch (const nlohmann::json::parse_error& e) {
    throw Error(ErrorKind::invalid_problem, fmt::format("{} is not valid JSON: {}", path, e.what()),
                {{"path", path}});
  }
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
    entry.problem = problem_from_json(problems[i], where);
    if (auto it = problems[i].find("ops"); it != problems[i].end()) {
      if (!it->is_array() || it->empty())
        throw Error(ErrorKind::invalid_problem, fmt::format("{}: ops must be a non-empty list of family names", where));
      for (const auto& op : *it) {
        if (!op.is_string())
          throw Error(ErrorKind::invalid_problem, fmt::format("{}: ops must hold family names", where));
        for (const auto& name : expand_family_names(op.get<std::string>(), where))
          if (std::find(entry.ops.begin(), entry.ops.end(), name) == entry.ops.end()) entry.ops.push_back(name);
      }
    } else {
      entry.ops = default_family_names();
    }
    file.entries.push_back(std::move(entry));
  }
  return file;
}

}  // namespace bandjit
