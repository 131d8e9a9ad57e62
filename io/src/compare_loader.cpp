// Compare files: the machines of `collsim compare --file`, each a scenario (`scenario:`, a preset
// or a file) or a variant of one (`base:` plus the keys it changes, read by the scenario loader
// as a derived scenario, so every key of docs/scenario-format.md can vary: the NIC rate, the GPUs
// per node, the NVLink generation, the fabric's taper), with its own node count and price.

#include "collsim/io/compare_loader.hpp"

#include "collsim/io/scenario_loader.hpp"
#include "scenario_node.hpp"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <array>
#include <cmath>
#include <fstream>
#include <sstream>

namespace collsim::io {
namespace {

using core::ScenarioError;
using core::SourcePos;

constexpr std::array<std::string_view, 6> kTopKeys{"name",  "description", "workload",
                                                   "nodes", "steps",       "variants"};
// A variant's own keys; every other key belongs to the scenario it derives.
constexpr std::array<std::string_view, 5> kVariantKeys{"label", "scenario", "nodes", "price",
                                                       "workload"};

class CompareReader {
public:
  explicit CompareReader(std::string file) : file_(std::move(file)) {}

  CompareSpec read(const std::string& text) const {
    YAML::Node root;
    try {
      root = YAML::Load(text);
    } catch (const YAML::Exception& e) {
      throw ScenarioError(pos(e.mark), "", fmt::format("invalid YAML: {}", e.msg));
    }
    if (!root.IsMap()) {
      throw ScenarioError(
          {file_, 1, 1}, "",
          "expected a compare file (a map with keys name, workload, nodes, steps, variants)");
    }
    CompareSpec out;
    for (auto it = root.begin(); it != root.end(); ++it) {
      const YAML::Node key = it->first;
      const std::string k = key.Scalar();
      if (std::find(kTopKeys.begin(), kTopKeys.end(), k) == kTopKeys.end()) {
        throw core::ScenarioError(
            pos(key.Mark()), k,
            core::UnknownNameError("key", k, {kTopKeys.begin(), kTopKeys.end()}).what());
      }
    }
    if (!root["variants"]) {
      throw ScenarioError({file_, 1, 1}, "variants",
                          "missing required key 'variants' (the machines to compare)");
    }
    out.name = root["name"] ? text_of(root["name"], "name") : std::string("compare");
    if (root["workload"]) {
      out.workload = path_relative_to(text_of(root["workload"], "workload"), file_);
    }
    if (root["nodes"]) {
      out.nodes = static_cast<std::uint32_t>(whole(root["nodes"], "nodes", 1U << 24));
    }
    if (root["steps"]) {
      out.steps = whole(root["steps"], "steps", std::uint64_t{1} << 40);
    }
    const YAML::Node variants = root["variants"];
    if (!variants.IsSequence() || variants.size() == 0) {
      throw ScenarioError(pos(variants.Mark()), "variants",
                          "expected a list of machines, at least one");
    }
    for (std::size_t i = 0; i < variants.size(); ++i) {
      out.machines.push_back(machine(variants[i], fmt::format("variants[{}]", i)));
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

  [[nodiscard]] std::string text_of(const YAML::Node& n, const std::string& path) const {
    if (!n.IsScalar()) {
      throw ScenarioError(pos(n.Mark()), path, "expected a text value");
    }
    return n.Scalar();
  }

  [[nodiscard]] std::uint64_t whole(const YAML::Node& n, const std::string& path,
                                    std::uint64_t most) const {
    const std::string t = n.IsScalar() ? n.Scalar() : std::string();
    std::uint64_t v = 0;
    const bool digits = !t.empty() && t.find_first_not_of("0123456789") == std::string::npos;
    if (digits) {
      std::istringstream(t) >> v;
    }
    if (!digits || v < 1 || v > most) {
      throw ScenarioError(pos(n.Mark()), path,
                          fmt::format("expected a whole number from 1 to {}, got '{}'", most, t));
    }
    return v;
  }

  CompareMachine machine(const YAML::Node& v, const std::string& path) const {
    CompareMachine m;
    m.pos = pos(v.Mark());
    if (!v.IsMap()) {
      throw ScenarioError(
          m.pos, path,
          "expected a machine: a map with label and scenario (or base and the keys it changes)");
    }
    if (!v["label"]) {
      throw ScenarioError(m.pos, path, "missing required key 'label'");
    }
    m.label = text_of(v["label"], path + ".label");
    if (v["nodes"]) {
      m.nodes = static_cast<std::uint32_t>(whole(v["nodes"], path + ".nodes", 1U << 24));
    }
    if (v["price"]) {
      const YAML::Node p = v["price"];
      double price = -1.0;
      try {
        price = p.as<double>();
      } catch (const YAML::Exception&) {
        price = -1.0;
      }
      if (!std::isfinite(price) || price < 0.0) {
        throw ScenarioError(pos(p.Mark()), path + ".price",
                            fmt::format("expected a price per node-hour (a number >= 0), got '{}'",
                                        p.IsScalar() ? p.Scalar() : ""));
      }
      m.price = price;
    }
    if (v["workload"]) {
      m.workload = path_relative_to(text_of(v["workload"], path + ".workload"), file_);
    }
    // The rest is the scenario: a named one, or a variant derived from a base.
    m.scenario = entry_scenario(v, {kVariantKeys.begin(), kVariantKeys.end()},
                                {"machine", path, m.label}, m.pos, file_);
    return m;
  }

  std::string file_;
};

} // namespace

CompareSpec load_compare(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw ScenarioError({path, 0, 0}, "", "cannot open the compare file");
  }
  std::stringstream text;
  text << in.rdbuf();
  return CompareReader(path).read(text.str());
}

} // namespace collsim::io
