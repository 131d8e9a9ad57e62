// Scenario files into core::Scenario (docs/scenario-format.md): the file, its top-level keys and
// its `base` chain. Each section has its own file: scenario_loader_topology.cpp (`topology`),
// scenario_loader_studies.cpp (`studies`), scenario_loader_runtime.cpp (`simgrid`, `nccl`, `mpi`,
// `accuracy`); scenario_loader_parts.hpp holds the valid keys and the Loader they share.

#include "collsim/io/scenario_loader.hpp"
#include "read_file.hpp"
#include "scenario_loader_parts.hpp"
#include "scenario_node.hpp"

#include "collsim/io/presets.hpp"
#include "collsim/io/rankfile.hpp"
#include "collsim/topologies/build.hpp"

#include "collsim/core/errors.hpp"
#include "collsim/core/units.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fmt/format.h>
#include <functional>
#include <optional>
#include <span>
#include <sstream>
#include <system_error>
#include <vector>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

namespace collsim::io {
namespace {

using core::ScenarioError;
using core::SourcePos;

/// A listener of yaml-cpp's parser that notes where each document starts and ignores the rest.
class DocumentStarts : public YAML::EventHandler {
public:
  std::vector<YAML::Mark> marks;
  void OnDocumentStart(const YAML::Mark& mark) override { marks.push_back(mark); }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& /*mark*/, YAML::anchor_t /*anchor*/) override {}
  void OnAlias(const YAML::Mark& /*mark*/, YAML::anchor_t /*anchor*/) override {}
  void OnScalar(const YAML::Mark& /*mark*/, const std::string& /*tag*/, YAML::anchor_t /*anchor*/,
                const std::string& /*value*/) override {}
  void OnSequenceStart(const YAML::Mark& /*mark*/, const std::string& /*tag*/,
                       YAML::anchor_t /*anchor*/, YAML::EmitterStyle::value /*style*/) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark& /*mark*/, const std::string& /*tag*/, YAML::anchor_t /*anchor*/,
                  YAML::EmitterStyle::value /*style*/) override {}
  void OnMapEnd() override {}
};

/// Where yaml-cpp's parser stops moving in `text`, if it does. YAML::LoadAll of yaml-cpp 0.7
/// (Debian 12) never returns when the parser cannot start a node at the top of a document (a stray
/// ','), allocating until memory runs out: the parser hands out one empty document after another at
/// the same place (yaml-cpp issue 1040; fixed in 0.8 by pull request 1319; found here by fuzzing,
/// tests/fuzz). Two documents starting at one place is that loop.
std::optional<YAML::Mark> stuck_at(const std::string& text) {
  std::istringstream in(text);
  YAML::Parser parser(in);
  DocumentStarts starts;
  while (parser.HandleNextDocument(starts)) {
    const auto n = starts.marks.size();
    if (n >= 2 && starts.marks[n - 1].pos == starts.marks[n - 2].pos) {
      return starts.marks.back();
    }
  }
  return std::nullopt;
}

/// The whole file at `path`; `cannot_open(errno)` makes the error when it cannot be read.
std::string read_text(const std::string& path,
                      const std::function<ScenarioError(int)>& cannot_open) {
  return detail::read_file_text(path, [&](int err) { throw cannot_open(err); });
}

/// read_text for a file named in a scenario: the error points at where it was named.
std::string read_named(const std::string& path, std::string_view what, const SourcePos& at,
                       const std::string& yaml_path) {
  return read_text(path, [&](int err) {
    return ScenarioError(
        at.file.empty() ? SourcePos{path, 0, 0} : at, yaml_path,
        fmt::format("cannot open {} '{}': {}", what, path, std::generic_category().message(err)));
  });
}

/// A path written in `from_file`, taken relative to that file's directory.
std::string relative_to(const std::string& path, const std::string& from_file) {
  if (path.empty() || path.front() == '/') {
    return path;
  }
  const auto slash = from_file.rfind('/');
  return slash == std::string::npos ? path : from_file.substr(0, slash + 1) + path;
}

/// A preset name is a bare word (letters, digits, '-', '_'); anything else is a path.
bool looks_like_preset(std::string_view name) {
  return !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '-' || c == '_';
  });
}

/// What every loaded scenario must also satisfy once it is complete.
core::Scenario checked(core::Scenario out) {
  topologies::validate(out.topology);
  // A study asking for more ranks than the machine has is wrong in the file, not at run time.
  if (const std::uint64_t capacity = topologies::rank_capacity(out.topology); capacity != 0) {
    for (std::size_t i = 0; i < out.studies.size(); ++i) {
      const auto& study = out.studies[i];
      const std::uint32_t most = *std::max_element(study.ranks.begin(), study.ranks.end());
      if (most > capacity) {
        throw ScenarioError(study.ranks_pos, fmt::format("studies[{}].ranks", i),
                            fmt::format("{} ranks, but the topology has room for {} ({})", most,
                                        capacity,
                                        out.topology.kind == "cluster" ? "nodes x devices_per_node"
                                                                       : "nodes x ranks per node"));
      }
    }
  }
  return out;
}

} // namespace

namespace scenario_detail {

core::Scenario Loader::load_node(const YAML::Node& root, const SourcePos& pos) const {
  return scenario(Located{root, "", pos});
}

core::Scenario Loader::load(std::string_view text) const {
  std::vector<YAML::Node> documents;
  try {
    const std::string whole(text);
    if (const auto stuck = stuck_at(whole)) {
      throw ScenarioError(pos_of(*stuck), "",
                          fmt::format("invalid YAML: unexpected '{}'",
                                      static_cast<std::size_t>(stuck->pos) < whole.size()
                                          ? whole.substr(static_cast<std::size_t>(stuck->pos), 1)
                                          : std::string("end of file")));
    }
    documents = YAML::LoadAll(whole);
  } catch (const YAML::Exception& e) {
    throw ScenarioError(pos_of(e.mark), "", fmt::format("invalid YAML: {}", e.msg));
  }
  if (documents.size() > 1) {
    fail(pos_of(documents[1].Mark()), "",
         fmt::format("expected one YAML document, found {}", documents.size()));
  }
  // An empty file has no marks at all; its first character is the best place to point at.
  const YAML::Node root = documents.empty() ? YAML::Node() : documents.front();
  const Located top{
      root, "", documents.empty() || root.IsNull() ? SourcePos{file_, 1, 1} : pos_of(root.Mark())};
  return scenario(top);
}

SourcePos Loader::pos_of(const YAML::Mark& mark) const {
  if (mark.is_null() || mark.line < 0 || mark.column < 0) {
    return SourcePos{file_, 0, 0};
  }
  // yaml-cpp counts from 0; editors and compilers count from 1.
  return SourcePos{file_, static_cast<std::uint32_t>(mark.line) + 1,
                   static_cast<std::uint32_t>(mark.column) + 1};
}

void Loader::fail(const SourcePos& pos, const std::string& path, std::string message) {
  throw ScenarioError(pos, path, std::move(message));
}

void Loader::fail(const Located& at, std::string message) {
  fail(at.pos, at.path, std::move(message));
}

std::string Loader::child_path(const std::string& parent, std::string_view key) {
  return parent.empty() ? std::string(key) : fmt::format("{}.{}", parent, key);
}

Located Loader::element(const Located& list, std::size_t index, const YAML::Node& node) const {
  return Located{node, fmt::format("{}[{}]", list.path, index),
                 node.IsNull() ? list.pos : pos_of(node.Mark())};
}

Field Loader::field(const Located& map, std::string key, const YAML::Node& key_node,
                    const YAML::Node& value) const {
  const SourcePos key_pos = pos_of(key_node.Mark());
  std::string path = child_path(map.path, key);
  return Field{std::move(key), key_pos,
               Located{value, std::move(path), value.IsNull() ? key_pos : pos_of(value.Mark())}};
}

Fields Loader::read_map(const Located& at, std::span<const std::string_view> valid,
                        std::span<const std::string_view> required,
                        const KeyExplainer& explain) const {
  if (!at.node.IsMap()) {
    fail(at, fmt::format("expected a map, got {}", describe(at.node)));
  }
  Fields out;
  for (auto it = at.node.begin(); it != at.node.end(); ++it) {
    // A copy, not a reference: yaml-cpp's iterator returns its pair through a temporary proxy
    // that dies at the end of this statement (AddressSanitizer: stack-use-after-scope).
    const YAML::Node key_node = it->first;
    const SourcePos key_pos = pos_of(key_node.Mark());
    if (!key_node.IsScalar()) {
      fail(key_pos, at.path, fmt::format("expected a key name, got {}", describe(key_node)));
    }
    const std::string key = key_node.Scalar();
    const std::string path = child_path(at.path, key);
    // yaml-cpp keeps both entries of a repeated key and lookups see only the first one, so a
    // second value would be silently ignored.
    if (const Field* first = out.find(key)) {
      fail(key_pos, path,
           fmt::format("duplicate key '{}' (first given on line {})", key, first->key_pos.line));
    }
    if (!valid.empty() && !contains(valid, key)) {
      const std::string valid_list = fmt::format("{}", fmt::join(valid, ", "));
      std::string better = explain ? explain(key) : std::string();
      if (!better.empty()) {
        fail(key_pos, path, fmt::format("{}; valid keys are: {}", better, valid_list));
      }
      const auto names = to_strings(valid);
      const std::string close = core::closest_match(key, names);
      fail(key_pos, path,
           fmt::format("unknown key '{}'{}; valid keys are: {}", key,
                       close.empty() ? "" : fmt::format(" (did you mean '{}'?)", close),
                       valid_list));
    }
    out.fields.push_back(field(at, key, key_node, it->second));
  }
  for (const auto& key : required) {
    if (out.find(key) == nullptr) {
      fail(at, fmt::format("missing required key '{}'", key));
    }
  }
  return out;
}

std::optional<Field> Loader::find_key(const Located& map, std::string_view key) const {
  for (auto it = map.node.begin(); it != map.node.end(); ++it) {
    if (it->first.IsScalar() && it->first.Scalar() == key) {
      return field(map, std::string(key), it->first, it->second);
    }
  }
  return std::nullopt;
}

std::string Loader::scalar(const Located& at, std::string_view expected) {
  if (!at.node.IsScalar()) {
    fail(at, fmt::format("expected {}, got {}", expected, describe(at.node)));
  }
  return at.node.Scalar();
}

std::int64_t Loader::integer(const Located& at, std::string_view expected) {
  const std::string text = scalar(at, expected);
  const auto value = to_integer(text);
  if (!value) {
    fail(at, fmt::format("expected {}, got '{}'", expected, text));
  }
  return *value;
}

std::uint32_t Loader::count(const Located& at) {
  const std::int64_t v = integer(at, "an integer");
  if (v < 1) {
    fail(at, fmt::format("must be at least 1, got {}", v));
  }
  if (v > kMaxCount) {
    fail(at, fmt::format("must be at most {}, got {}", kMaxCount, v));
  }
  return static_cast<std::uint32_t>(v);
}

bool Loader::boolean(const Located& at) {
  const std::string text = scalar(at, "true or false");
  if (text == "true") {
    return true;
  }
  if (text == "false") {
    return false;
  }
  fail(at, fmt::format("expected true or false, got '{}'", text));
}

core::Seconds Loader::seconds(const Located& at) {
  const auto parsed = core::parse_seconds(scalar(at, "a duration like '1.5 us'"));
  if (!parsed.ok()) {
    fail(at, parsed.error);
  }
  return parsed.value;
}

core::Bandwidth Loader::bandwidth(const Located& at) {
  const auto parsed = core::parse_bandwidth(scalar(at, "a bandwidth like '25 GB/s'"));
  if (!parsed.ok()) {
    fail(at, parsed.error);
  }
  return parsed.value;
}

std::string Loader::one_of(const Located& at, std::string_view what, std::string_view expected,
                           std::span<const std::string_view> valid) {
  std::string name = scalar(at, expected);
  if (!contains(valid, name)) {
    fail(at, core::UnknownNameError(what, name, to_strings(valid)).what());
  }
  return name;
}

core::Scenario Loader::scenario(const Located& top) const {
  if (!top.node.IsMap()) {
    fail(top, fmt::format("expected a scenario (a map with keys {}), got {}",
                          fmt::join(kScenarioKeys, ", "), describe(top.node)));
  }
  // A scenario may start from another one (a preset or a file) and override parts of it, so the
  // required keys are only required of a scenario that starts from nothing.
  const bool derived = find_key(top, "base").has_value();
  const Fields fields =
      read_map(top, kScenarioKeys,
               derived ? std::span<const std::string_view>{} : std::span(kScenarioRequired));
  core::Scenario out;
  if (const Field* base = fields.find("base")) {
    const std::string name = scalar(base->value, "a preset name or a scenario file");
    if (depth_ >= kMaxBaseDepth) {
      fail(base->value,
           fmt::format("'base' chain deeper than {} scenarios (is it circular?)", kMaxBaseDepth));
    }
    try {
      out = load_base(name, file_, depth_ + 1, base->value.pos);
    } catch (const core::UnknownNameError& e) {
      fail(base->value, e.what());
    }
    // The base's measured accuracy is the base's: a derived scenario predicts differently.
    out.accuracy = {};
  }
  out.file = file_;
  for (const auto& f : fields.fields) {
    if (f.key == "name") {
      out.name = scalar(f.value, "a scenario name");
      if (out.name.empty()) {
        fail(f.value, "expected a scenario name, got ''");
      }
    } else if (f.key == "description") {
      out.description = scalar(f.value, "a description");
    } else if (f.key == "topology") {
      out.topology = topology(f, derived ? &out.topology : nullptr);
    } else if (f.key == "simgrid") {
      out.simgrid = simgrid(f.value, out.simgrid);
    } else if (f.key == "nccl") {
      out.nccl = nccl(f.value, out.nccl);
    } else if (f.key == "mpi") {
      out.mpi = mpi(f.value, out.mpi);
    } else if (f.key == "stack") {
      // The name is checked against the stack registry where the scenario is used (the
      // loader does not link the stacks); the position goes with it for that message.
      out.stack = scalar(f.value, "a stack name");
      out.stack_pos = f.value.pos;
    } else if (f.key == "buffers") {
      out.buffers = one_of(f.value, "buffer location", "device or host", kBufferKinds);
      out.buffers_pos = f.value.pos;
    } else if (f.key == "accuracy") {
      out.accuracy = accuracy(f);
    } else if (f.key == "studies") {
      out.studies = studies(f.value);
    }
  }
  return out;
}

double Loader::real(const Located& at, std::string_view expected, double min, bool exclusive) {
  const std::string text = scalar(at, expected);
  double value = 0.0;
  const char* last = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), last, value);
  if (ec != std::errc() || ptr != last || !std::isfinite(value)) {
    fail(at, fmt::format("expected {}, got '{}'", expected, text));
  }
  if (value < min || (exclusive && value == min)) {
    fail(at, fmt::format("expected {}, got {}", expected, text));
  }
  return value;
}

double Loader::share(const Located& at) {
  constexpr std::string_view kExpected = "a number greater than 0 and at most 1";
  const double value = real(at, kExpected, 0.0, true);
  if (value > 1.0) {
    fail(at, fmt::format("expected {}, got {}", kExpected, scalar(at, "a number")));
  }
  return value;
}

Fields Loader::section(const Located& at, std::span<const std::string_view> valid,
                       core::TopologySpec& spec, const KeyExplainer& explain) const {
  const Fields fields = read_map(at, valid, {}, explain);
  for (const auto& f : fields.fields) {
    spec.value_pos[f.value.path] = f.value.pos;
  }
  return fields;
}

core::Scenario load_base(const std::string& name, const std::string& from_file, int depth,
                         const SourcePos& at) {
  if (looks_like_preset(name)) {
    const auto text = preset_text(name);
    if (!text) {
      throw core::UnknownNameError("preset", name, preset_names());
    }
    return Loader(preset_file(name), depth).load(*text);
  }
  const std::string path = relative_to(name, from_file);
  return Loader(path, depth).load(read_named(path, "base scenario", at, "base"));
}

std::vector<core::RankSlot> load_rankfile(const std::string& path, const std::string& from_file,
                                          const SourcePos& at) {
  const std::string full = relative_to(path, from_file);
  return parse_rankfile(read_named(full, "rankfile", at, "topology.placement.rankfile"), full);
}

} // namespace scenario_detail

using scenario_detail::Loader;

core::Scenario parse_scenario(std::string_view yaml_text, std::string_view file_name) {
  return checked(Loader(std::string(file_name)).load(yaml_text));
}

core::Scenario parse_scenario_node(const YAML::Node& node, const core::SourcePos& pos,
                                   const std::string& file) {
  return checked(Loader(file).load_node(node, pos));
}

std::string path_relative_to(const std::string& path, const std::string& from_file) {
  return relative_to(path, from_file);
}

core::Scenario load_scenario(const std::string& path) {
  // A bare name that is not a file is a preset: `collsim run juwels-booster`.
  if (looks_like_preset(path) && preset_text(path).has_value()) {
    std::FILE* probe = std::fopen(path.c_str(), "rb");
    if (probe == nullptr) {
      return parse_scenario(*preset_text(path), preset_file(path));
    }
    std::fclose(probe);
  }
  const std::string text = read_text(path, [&](int err) {
    return ScenarioError(
        SourcePos{path, 0, 0}, "",
        fmt::format("cannot open scenario file: {}", std::generic_category().message(err)));
  });
  return parse_scenario(text, path);
}

} // namespace collsim::io
