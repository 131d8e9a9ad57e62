// Placement study files (placement_study_loader.hpp; docs/placement.md, "Studies"). A case's
// scenario is read as a compare file's machine is: `scenario:` names a preset or a file, `base:`
// and the keys it changes make a variant (a placement order, a node count).

#include "collsim/io/placement_study_loader.hpp"

#include "collsim/io/scenario_loader.hpp"
#include "scenario_node.hpp"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <array>
#include <fstream>
#include <sstream>

namespace collsim::io {
namespace {

using core::ScenarioError;
using core::SourcePos;

constexpr std::array<std::string_view, 3> kTopKeys{"name", "description", "cases"};
// A case's own keys; every other key belongs to the scenario variant it derives.
constexpr std::array<std::string_view, 11> kCaseKeys{
    "label", "scenario", "pattern", "workload", "collective", "algorithm",
    "bytes", "params",   "ranks",   "method",   "objective"};
// The names `collsim place` takes (cli/src/command_place.cpp checks the same lists).
constexpr std::array<std::string_view, 5> kMethods{"greedy", "anneal", "scotch", "mip",
                                                   "exhaustive"};
constexpr std::array<std::string_view, 2> kObjectives{"time", "hop-bytes"};

class StudyReader {
public:
  explicit StudyReader(std::string file) : file_(std::move(file)) {}

  PlacementStudySpec read(const std::string& text) const {
    YAML::Node root;
    try {
      root = YAML::Load(text);
    } catch (const YAML::Exception& e) {
      throw ScenarioError(pos(e.mark), "", fmt::format("invalid YAML: {}", e.msg));
    }
    if (!root.IsMap()) {
      throw ScenarioError({file_, 1, 1}, "",
                          "expected a placement study (a map with keys name, description, cases)");
    }
    for (auto it = root.begin(); it != root.end(); ++it) {
      check_key(it->first, kTopKeys, "");
    }
    PlacementStudySpec out;
    out.name = root["name"] ? text_of(root["name"], "name") : std::string("placement study");
    if (root["description"]) {
      out.description = text_of(root["description"], "description");
    }
    const YAML::Node cases = root["cases"];
    if (!cases) {
      throw ScenarioError({file_, 1, 1}, "cases",
                          "missing required key 'cases' (the placements to study)");
    }
    if (!cases.IsSequence() || cases.size() == 0) {
      throw ScenarioError(pos(cases.Mark()), "cases", "expected a list of cases, at least one");
    }
    for (std::size_t i = 0; i < cases.size(); ++i) {
      out.cases.push_back(one_case(cases[i], fmt::format("cases[{}]", i)));
    }
    return out;
  }

private:
  [[nodiscard]] SourcePos pos(const YAML::Mark& m) const {
    if (m.is_null() || m.line < 0) {
      return {file_, 0, 0};
    }
    return {file_, static_cast<std::uint32_t>(m.line) + 1,
            static_cast<std::uint32_t>(m.column) + 1};
  }

  template <std::size_t N>
  void check_key(const YAML::Node& key, const std::array<std::string_view, N>& valid,
                 const std::string& path) const {
    const std::string k = key.IsScalar() ? key.Scalar() : std::string();
    if (std::find(valid.begin(), valid.end(), k) == valid.end()) {
      throw ScenarioError(pos(key.Mark()), path.empty() ? k : path + "." + k,
                          core::UnknownNameError("key", k, {valid.begin(), valid.end()}).what());
    }
  }

  [[nodiscard]] std::string text_of(const YAML::Node& n, const std::string& path) const {
    if (!n.IsScalar()) {
      throw ScenarioError(pos(n.Mark()), path, "expected a text value");
    }
    return n.Scalar();
  }

  template <std::size_t N>
  [[nodiscard]] std::string name_of(const YAML::Node& n, const std::string& path,
                                    const std::string& what,
                                    const std::array<std::string_view, N>& valid) const {
    const std::string v = text_of(n, path);
    if (std::find(valid.begin(), valid.end(), v) == valid.end()) {
      throw ScenarioError(pos(n.Mark()), path,
                          core::UnknownNameError(what, v, {valid.begin(), valid.end()}).what());
    }
    return v;
  }

  [[nodiscard]] std::uint32_t ranks_of(const YAML::Node& n, const std::string& path) const {
    const std::string t = n.IsScalar() ? n.Scalar() : std::string();
    const bool digits =
        !t.empty() && t.size() <= 7 && t.find_first_not_of("0123456789") == std::string::npos;
    const std::uint32_t v = digits ? static_cast<std::uint32_t>(std::stoul(t)) : 0;
    if (v < 2) {
      throw ScenarioError(pos(n.Mark()), path,
                          fmt::format("expected a rank count of at least 2, got '{}'", t));
    }
    return v;
  }

  PlacementCase one_case(const YAML::Node& v, const std::string& path) const {
    PlacementCase c;
    c.pos = pos(v.Mark());
    if (!v.IsMap()) {
      throw ScenarioError(c.pos, path,
                          "expected a case: a map with label, scenario (or base and the keys it "
                          "changes) and pattern, workload or collective");
    }
    if (!v["label"]) {
      throw ScenarioError(c.pos, path, "missing required key 'label'");
    }
    c.label = text_of(v["label"], path + ".label");
    const int traffic = static_cast<int>(static_cast<bool>(v["pattern"])) +
                        static_cast<int>(static_cast<bool>(v["workload"])) +
                        static_cast<int>(static_cast<bool>(v["collective"]));
    if (traffic != 1) {
      throw ScenarioError(c.pos, path,
                          "a case places exactly one of 'pattern', 'workload' or 'collective'");
    }
    if (v["pattern"]) {
      c.pattern = text_of(v["pattern"], path + ".pattern");
      if (c.pattern.rfind("halo", 0) != 0) {
        c.pattern = path_relative_to(c.pattern, file_);
      }
    }
    if (v["workload"]) {
      c.workload = path_relative_to(text_of(v["workload"], path + ".workload"), file_);
    }
    if (v["collective"]) {
      c.collective = text_of(v["collective"], path + ".collective");
      if (!v["bytes"]) {
        throw ScenarioError(c.pos, path, "a collective case needs 'bytes'");
      }
    }
    if ((v["workload"] || v["collective"]) && !v["ranks"]) {
      throw ScenarioError(c.pos, path, "a workload or collective case needs 'ranks'");
    }
    if (v["ranks"]) {
      if (v["pattern"]) {
        throw ScenarioError(pos(v["ranks"].Mark()), path + ".ranks",
                            "a pattern has its own ranks: 'ranks' goes with workload or "
                            "collective");
      }
      c.ranks = ranks_of(v["ranks"], path + ".ranks");
    }
    if (v["algorithm"]) {
      c.algorithm = text_of(v["algorithm"], path + ".algorithm");
    }
    if (v["bytes"]) {
      c.bytes = text_of(v["bytes"], path + ".bytes");
    }
    if (const YAML::Node p = v["params"]; p) {
      if (!p.IsMap()) {
        throw ScenarioError(pos(p.Mark()), path + ".params", "expected a map of parameter: value");
      }
      for (auto it = p.begin(); it != p.end(); ++it) {
        c.params.push_back(it->first.Scalar() + "=" +
                           text_of(it->second, path + ".params." + it->first.Scalar()));
      }
    }
    if (v["method"]) {
      c.method = name_of(v["method"], path + ".method", "placement method", kMethods);
    }
    if (v["objective"]) {
      c.objective =
          name_of(v["objective"], path + ".objective", "placement objective", kObjectives);
    }
    c.scenario = entry_scenario(v, {kCaseKeys.begin(), kCaseKeys.end()}, {"case", path, c.label},
                                c.pos, file_);
    return c;
  }

  std::string file_;
};

} // namespace

PlacementStudySpec load_placement_study(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw ScenarioError({path, 0, 0}, "", "cannot open the placement study");
  }
  std::stringstream text;
  text << in.rdbuf();
  return StudyReader(path).read(text.str());
}

} // namespace collsim::io
