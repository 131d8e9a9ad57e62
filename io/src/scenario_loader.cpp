#include "collsim/io/scenario_loader.hpp"
#include "read_file.hpp"
#include "scenario_node.hpp"

#include "collsim/io/imbalance_files.hpp"

#include "collsim/io/percent.hpp"
#include "collsim/io/presets.hpp"
#include "collsim/io/rankfile.hpp"
#include "collsim/topologies/build.hpp"
#include "collsim/topologies/nic_kinds.hpp"

#include "collsim/core/collective.hpp"
#include "collsim/core/errors.hpp"
#include "collsim/core/layout.hpp"
#include "collsim/core/sizes.hpp"
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
#include <limits>
#include <optional>
#include <span>
#include <system_error>
#include <vector>
#include <yaml-cpp/yaml.h>

namespace collsim::io {
namespace {

using core::ScenarioError;
using core::SourcePos;

// Valid keys per section, in the order docs/scenario-format.md lists them: error messages print
// them in this order, so a user reading "valid keys are: ..." sees the documented order.
constexpr std::array<std::string_view, 11> kScenarioKeys{
    "name", "base",  "description", "topology", "simgrid", "nccl",
    "mpi",  "stack", "buffers",     "accuracy", "studies"};
constexpr std::array<std::string_view, 3> kAccuracyKeys{"measured_on", "below_1MiB", "from_1MiB"};
constexpr std::array<std::string_view, 5> kAccuracyRangeKeys{"rows", "median", "p90", "slower",
                                                             "faster"};
constexpr std::array<std::string_view, 2> kMpiKeys{"call_overhead", "env"};
constexpr std::array<std::string_view, 2> kBufferKinds{"device", "host"};
constexpr std::array<std::string_view, 5> kNcclKeys{"call_overhead", "ll", "ll128", "simple",
                                                    "env"};
constexpr std::array<std::string_view, 2> kNcclProtocolKeys{"latency_factor", "efficiency_factor"};
constexpr std::array<std::string_view, 7> kSimgridKeys{
    "network_model", "tcp_gamma",    "latency_factor", "bandwidth_factor",
    "weight_s",      "crosstraffic", "send_port"};
// SimGrid 3.32's network models that need no extra configuration (ns-3 is not in Debian's build).
constexpr std::array<std::string_view, 5> kSimgridModels{"CM02", "LV08", "SMPI", "IB", "Constant"};
constexpr std::array<std::string_view, 2> kSendPorts{"serial", "shared"};
constexpr std::array<std::string_view, 3> kScenarioRequired{"name", "topology", "studies"};

constexpr std::array<std::string_view, 7> kUniformKeys{
    "kind", "latency", "bandwidth", "reduce_bandwidth", "overhead", "gap", "copy_bandwidth"};
constexpr std::array<std::string_view, 16> kClusterKeys{"kind",
                                                        "nodes",
                                                        "devices_per_node",
                                                        "intra_bandwidth",
                                                        "intra_latency",
                                                        "nics_per_node",
                                                        "nic_bandwidth",
                                                        "nic_latency",
                                                        "switch_latency",
                                                        "reduce_bandwidth",
                                                        "node_switch_reduces",
                                                        "network_switch_reduces",
                                                        "switch_reduce_bandwidth",
                                                        "overhead",
                                                        "gap",
                                                        "copy_bandwidth"};
constexpr std::array<std::string_view, 8> kSystemKeys{
    "kind", "nodes", "node", "network", "placement", "overhead", "gap", "copy_bandwidth"};
constexpr std::array<std::string_view, 10> kNodeKeys{
    "gpus", "reduce_bandwidth", "nvlink",      "pcie",     "cpu",
    "nics", "nic_bandwidth",    "nic_latency", "nic_kind", "nic_efficiency"};
constexpr std::array<std::string_view, 5> kNvlinkKinds{"none", "all_to_all", "switch", "bridges",
                                                       "explicit"};
constexpr std::array<std::string_view, 8> kNvlinkKeys{
    "kind",          "link_bandwidth", "latency", "links_per_pair",
    "links_per_gpu", "links",          "sharp",   "sharp_reduce_bandwidth"};
constexpr std::array<std::string_view, 7> kPcieKeys{"gen", "lanes",   "bandwidth",     "switches",
                                                    "p2p", "latency", "switch_latency"};
constexpr std::array<std::string_view, 9> kCpuKeys{
    "sockets",        "numa_per_socket", "cores_per_socket",       "memory_bandwidth",
    "memory_latency", "inter_socket",    "inter_socket_bandwidth", "inter_socket_latency",
    "core_bandwidth"};
constexpr std::array<std::string_view, 3> kInterSocketKinds{"upi", "infinity_fabric", "xbus"};
constexpr std::array<std::string_view, 5> kNetworkKinds{"switch", "fat_tree", "dragonfly",
                                                        "dragonfly_plus", "torus"};
constexpr std::array<std::string_view, 6> kNetworkCommonKeys{
    "kind", "link_bandwidth", "link_latency", "switch_latency", "sharp", "sharp_reduce_bandwidth"};
constexpr std::array<std::string_view, 2> kRoutings{"minimal", "valiant"};
constexpr std::array<std::string_view, 3> kPlacementKeys{"order", "ranks_per_node", "rankfile"};
constexpr std::array<std::string_view, 3> kPlacementOrders{"block", "cyclic", "numa"};
constexpr std::array<std::string_view, 3> kTopologyKinds{"uniform", "cluster", "system"};
constexpr std::array<std::string_view, 1> kTopologyRequired{"kind"};

constexpr std::array<std::string_view, 11> kStudyKeys{
    "name", "collective", "algorithms", "stacks", "ranks", "sizes",
    "root", "engine",     "params",     "counts", "skew"};
constexpr std::array<std::string_view, 4> kStudyRequired{"collective", "algorithms", "ranks",
                                                         "sizes"};

// Node, device and NIC counts share the rank limit: a topology larger than any study could use is
// a typo, and capping it keeps every product of counts far inside 32 bits.
constexpr std::int64_t kMaxCount = kMaxScenarioRanks;

std::vector<std::string> to_strings(std::span<const std::string_view> names) {
  return {names.begin(), names.end()};
}

bool contains(std::span<const std::string_view> names, std::string_view name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

/// How a node that is not what we expected reads in a message.
std::string describe(const YAML::Node& node) {
  switch (node.Type()) {
  case YAML::NodeType::Null: return "nothing";
  case YAML::NodeType::Sequence: return "a list";
  case YAML::NodeType::Map: return "a map";
  case YAML::NodeType::Scalar: return fmt::format("'{}'", node.Scalar());
  case YAML::NodeType::Undefined: break;
  }
  return "nothing";
}

/// Strict decimal integer: digits with an optional leading '-'; no '+', blanks, fractions or hex.
std::optional<std::int64_t> to_integer(std::string_view text) {
  std::int64_t value = 0;
  const char* last = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), last, value);
  if (text.empty() || ec != std::errc{} || ptr != last) {
    return std::nullopt;
  }
  return value;
}

/// A YAML value with the coordinates a message about it needs.
struct Located {
  YAML::Node node;
  std::string path; ///< "studies[1].sizes"
  SourcePos pos;    ///< the value's start; the key's when the value is empty
};

/// One key of a map, after validation.
struct Field {
  std::string key;
  SourcePos key_pos;
  Located value;
};

/// The validated keys of one YAML map, in file order.
struct Fields {
  std::vector<Field> fields;
  [[nodiscard]] const Field* find(std::string_view key) const {
    for (const auto& f : fields) {
      if (f.key == key) {
        return &f;
      }
    }
    return nullptr;
  }
};

/// Explains a key that is invalid here but valid elsewhere (a cluster key in a uniform topology);
/// returns an empty string when it has nothing better than "unknown key".
using KeyExplainer = std::function<std::string(std::string_view key)>;

core::Scenario load_base(const std::string& name, const std::string& from_file, int depth,
                         const SourcePos& at);
std::vector<core::RankSlot> load_rankfile(const std::string& path, const std::string& from_file,
                                          const SourcePos& at);

/// How many scenarios a `base` chain may stack (a chain longer than this is circular in practice).
constexpr int kMaxBaseDepth = 8;

class Loader {
public:
  explicit Loader(std::string file, int depth = 0) : file_(std::move(file)), depth_(depth) {}

  /// A scenario that is one map inside another YAML document (a compare file's variant): its
  /// positions are that document's.
  core::Scenario load_node(const YAML::Node& root, const SourcePos& pos) const {
    return scenario(Located{root, "", pos});
  }

  core::Scenario load(std::string_view text) const {
    std::vector<YAML::Node> documents;
    try {
      documents = YAML::LoadAll(std::string(text));
    } catch (const YAML::Exception& e) {
      throw ScenarioError(pos_of(e.mark), "", fmt::format("invalid YAML: {}", e.msg));
    }
    if (documents.size() > 1) {
      fail(pos_of(documents[1].Mark()), "",
           fmt::format("expected one YAML document, found {}", documents.size()));
    }
    // An empty file has no marks at all; its first character is the best place to point at.
    const YAML::Node root = documents.empty() ? YAML::Node() : documents.front();
    const Located top{root, "",
                      documents.empty() || root.IsNull() ? SourcePos{file_, 1, 1}
                                                         : pos_of(root.Mark())};
    return scenario(top);
  }

private:
  [[nodiscard]] SourcePos pos_of(const YAML::Mark& mark) const {
    if (mark.is_null() || mark.line < 0 || mark.column < 0) {
      return SourcePos{file_, 0, 0};
    }
    // yaml-cpp counts from 0; editors and compilers count from 1.
    return SourcePos{file_, static_cast<std::uint32_t>(mark.line) + 1,
                     static_cast<std::uint32_t>(mark.column) + 1};
  }

  [[noreturn]] static void fail(const SourcePos& pos, const std::string& path,
                                std::string message) {
    throw ScenarioError(pos, path, std::move(message));
  }
  [[noreturn]] static void fail(const Located& at, std::string message) {
    fail(at.pos, at.path, std::move(message));
  }

  static std::string child_path(const std::string& parent, std::string_view key) {
    return parent.empty() ? std::string(key) : fmt::format("{}.{}", parent, key);
  }

  [[nodiscard]] Located element(const Located& list, std::size_t index,
                                const YAML::Node& node) const {
    return Located{node, fmt::format("{}[{}]", list.path, index),
                   node.IsNull() ? list.pos : pos_of(node.Mark())};
  }

  /// One entry of the map at `map`; an empty value is placed at its key, where the user typed.
  [[nodiscard]] Field field(const Located& map, std::string key, const YAML::Node& key_node,
                            const YAML::Node& value) const {
    const SourcePos key_pos = pos_of(key_node.Mark());
    std::string path = child_path(map.path, key);
    return Field{std::move(key), key_pos,
                 Located{value, std::move(path), value.IsNull() ? key_pos : pos_of(value.Mark())}};
  }

  /// Checks that `at` is a map whose keys are unique and in `valid` (any key when `valid` is
  /// empty), and that every key in `required` is present. Unknown keys are reported before missing
  /// ones because a misspelt required key is both, and "did you mean" is the useful message.
  [[nodiscard]] Fields read_map(const Located& at, std::span<const std::string_view> valid,
                                std::span<const std::string_view> required,
                                const KeyExplainer& explain = {}) const {
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

  /// The first entry with this key, before the map as a whole is checked.
  [[nodiscard]] std::optional<Field> find_key(const Located& map, std::string_view key) const {
    for (auto it = map.node.begin(); it != map.node.end(); ++it) {
      if (it->first.IsScalar() && it->first.Scalar() == key) {
        return field(map, std::string(key), it->first, it->second);
      }
    }
    return std::nullopt;
  }

  // ---- scalars -------------------------------------------------------------------------------

  static std::string scalar(const Located& at, std::string_view expected) {
    if (!at.node.IsScalar()) {
      fail(at, fmt::format("expected {}, got {}", expected, describe(at.node)));
    }
    return at.node.Scalar();
  }

  static std::int64_t integer(const Located& at, std::string_view expected) {
    const std::string text = scalar(at, expected);
    const auto value = to_integer(text);
    if (!value) {
      fail(at, fmt::format("expected {}, got '{}'", expected, text));
    }
    return *value;
  }

  /// A count such as nodes or devices_per_node: an integer in [1, kMaxCount].
  static std::uint32_t count(const Located& at) {
    const std::int64_t v = integer(at, "an integer");
    if (v < 1) {
      fail(at, fmt::format("must be at least 1, got {}", v));
    }
    if (v > kMaxCount) {
      fail(at, fmt::format("must be at most {}, got {}", kMaxCount, v));
    }
    return static_cast<std::uint32_t>(v);
  }

  static bool boolean(const Located& at) {
    const std::string text = scalar(at, "true or false");
    if (text == "true") {
      return true;
    }
    if (text == "false") {
      return false;
    }
    fail(at, fmt::format("expected true or false, got '{}'", text));
  }

  static core::Seconds seconds(const Located& at) {
    const auto parsed = core::parse_seconds(scalar(at, "a duration like '1.5 us'"));
    if (!parsed.ok()) {
      fail(at, parsed.error);
    }
    return parsed.value;
  }

  static core::Bandwidth bandwidth(const Located& at) {
    const auto parsed = core::parse_bandwidth(scalar(at, "a bandwidth like '25 GB/s'"));
    if (!parsed.ok()) {
      fail(at, parsed.error);
    }
    return parsed.value;
  }

  /// A name from a fixed list; `what` names the list in messages ("engine", "topology kind") and
  /// `expected` describes a valid value ("an engine name").
  static std::string one_of(const Located& at, std::string_view what, std::string_view expected,
                            std::span<const std::string_view> valid) {
    std::string name = scalar(at, expected);
    if (!contains(valid, name)) {
      fail(at, core::UnknownNameError(what, name, to_strings(valid)).what());
    }
    return name;
  }

  // ---- sections ------------------------------------------------------------------------------

  core::Scenario scenario(const Located& top) const {
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

  /// What the scenario's predictions were measured to miss by (core::AccuracySpec).
  core::AccuracySpec accuracy(const Field& section) const {
    const Located& at = section.value;
    if (!at.node.IsMap()) {
      fail(at, fmt::format("expected a map, got {}", describe(at.node)));
    }
    core::AccuracySpec out;
    out.pos = section.key_pos;
    for (const auto& f : read_map(at, kAccuracyKeys, {}).fields) {
      if (f.key == "measured_on") {
        out.measured_on = scalar(f.value, "which rows were measured, in words");
      } else {
        (f.key == "below_1MiB" ? out.below_1MiB : out.from_1MiB) = accuracy_range(f.value);
      }
    }
    return out;
  }

  core::AccuracyRange accuracy_range(const Located& at) const {
    if (!at.node.IsMap()) {
      fail(at, fmt::format("expected a map with keys {}, got {}",
                           fmt::join(kAccuracyRangeKeys, ", "), describe(at.node)));
    }
    core::AccuracyRange out;
    for (const auto& f : read_map(at, kAccuracyRangeKeys, kAccuracyRangeKeys).fields) {
      if (f.key == "rows") {
        out.rows = count(f.value);
      } else {
        (f.key == "median"   ? out.median_pct
         : f.key == "p90"    ? out.p90_pct
         : f.key == "slower" ? out.slower_pct
                             : out.faster_pct) = percent(f.value);
      }
    }
    // The largest |error| is the larger extreme: nothing lies above it.
    const double largest = std::max(out.slower_pct, out.faster_pct);
    if (out.median_pct > out.p90_pct || out.p90_pct > largest) {
      fail(at, fmt::format("expected median <= p90 <= the larger of slower and faster, got "
                           "median {:g} %, p90 {:g} %, slower {:g} %, faster {:g} %",
                           out.median_pct, out.p90_pct, out.slower_pct, out.faster_pct));
    }
    return out;
  }

  /// A percentage such as "7.4 %" (the sign may be left out): a finite number >= 0.
  static double percent(const Located& at) {
    const auto value = parse_percent(scalar(at, "a percentage like '7.4 %'"));
    if (!value) {
      fail(at, fmt::format("expected a percentage like '7.4 %', got '{}'", at.node.Scalar()));
    }
    return *value;
  }

  /// The SimGrid engine's settings; keys not written keep `base`'s values (the defaults, or the
  /// base scenario's).
  core::SimgridSpec simgrid(const Located& at, core::SimgridSpec out) const {
    if (!at.node.IsMap()) {
      fail(at, fmt::format("expected a map, got {}", describe(at.node)));
    }
    const Fields fields = read_map(at, kSimgridKeys, {});
    for (const auto& f : fields.fields) {
      const Located& v = f.value;
      if (f.key == "network_model") {
        out.network_model = one_of(v, "SimGrid network model", "a network model", kSimgridModels);
      } else if (f.key == "tcp_gamma") {
        const auto parsed = core::parse_bytes(scalar(v, "a size like '4 MiB' (0: no bound)"));
        if (!parsed.ok()) {
          fail(v, parsed.error);
        }
        out.tcp_gamma = static_cast<double>(parsed.value.value);
      } else if (f.key == "latency_factor") {
        out.latency_factor = factor(v);
      } else if (f.key == "bandwidth_factor") {
        out.bandwidth_factor = factor(v);
      } else if (f.key == "weight_s") {
        out.weight_s = real(v, "a number of at least 0", 0.0, false);
      } else if (f.key == "crosstraffic") {
        out.crosstraffic = boolean(v);
      } else if (f.key == "send_port") {
        out.send_port = one_of(v, "send port", "serial or shared", kSendPorts);
      }
    }
    return out;
  }

  /// Corrections to the NCCL protocol model; keys not written keep `out`'s values.
  core::NcclSpec nccl(const Located& at, core::NcclSpec out) const {
    if (!at.node.IsMap()) {
      fail(at, fmt::format("expected a map, got {}", describe(at.node)));
    }
    const Fields fields = read_map(at, kNcclKeys, {});
    for (const auto& f : fields.fields) {
      if (f.key == "call_overhead") {
        out.call_overhead = seconds(f.value);
      } else if (f.key == "env") {
        nccl_env(f.value, out);
      } else {
        core::NcclProtocolSpec& p = f.key == "ll"      ? out.ll
                                    : f.key == "ll128" ? out.ll128
                                                       : out.simple;
        p = nccl_protocol(f.value, p);
      }
    }
    return out;
  }

  /// What the MPI stacks read; keys not written keep `out`'s values.
  core::MpiSpec mpi(const Located& at, core::MpiSpec out) const {
    if (!at.node.IsMap()) {
      fail(at, fmt::format("expected a map, got {}", describe(at.node)));
    }
    const Fields fields = read_map(at, kMpiKeys, {});
    for (const auto& f : fields.fields) {
      if (f.key == "call_overhead") {
        out.call_overhead = seconds(f.value);
      } else {
        // Environment variables of the MPI library and its transports; the stacks read them
        // (stacks/mpi_env.hpp) and report bad values at the positions kept here.
        for (const auto& v : read_map(f.value, {}, {}).fields) {
          const bool named = !v.key.empty() && std::all_of(v.key.begin(), v.key.end(), [](char c) {
            return (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
          });
          if (!named) {
            fail(v.key_pos, v.value.path,
                 fmt::format("'{}' is not an environment variable name (such as UCX_TLS)", v.key));
          }
          out.env[v.key] = scalar(v.value, "a value such as 16k or rc,sm");
          out.env_pos[v.key] = v.value.pos;
        }
      }
    }
    return out;
  }

  /// NCCL environment variables: a map of NCCL_* names to scalars. Their values are read by
  /// NCCL's model (analysis/nccl_env.hpp), which reports bad ones at the positions kept here.
  void nccl_env(const Located& at, core::NcclSpec& out) const {
    const Fields fields = read_map(at, {}, {});
    for (const auto& f : fields.fields) {
      if (f.key.rfind("NCCL_", 0) != 0) {
        fail(
            f.key_pos, f.value.path,
            fmt::format("'{}' is not an NCCL environment variable (they start with NCCL_)", f.key));
      }
      out.env[f.key] = scalar(f.value, "a value such as Ring or 16");
      out.env_pos[f.key] = f.value.pos;
    }
  }

  core::NcclProtocolSpec nccl_protocol(const Located& at, core::NcclProtocolSpec out) const {
    if (!at.node.IsMap()) {
      fail(at, fmt::format("expected a map, got {}", describe(at.node)));
    }
    const Fields fields = read_map(at, kNcclProtocolKeys, {});
    for (const auto& f : fields.fields) {
      if (f.key == "latency_factor") {
        out.latency_factor = factor(f.value);
      } else {
        out.efficiency_factor = real(f.value, "a number greater than 0 and at most 1", 0.0, true);
        if (out.efficiency_factor > 1.0) {
          fail(f.value, fmt::format("expected a number greater than 0 and at most 1, got {}",
                                    scalar(f.value, "a number")));
        }
      }
    }
    return out;
  }

  /// A multiplier such as SimGrid's latency or bandwidth factor: a number > 0.
  static double factor(const Located& at) { return real(at, "a number greater than 0", 0.0, true); }

  /// A finite number >= min (> min when `exclusive`).
  static double real(const Located& at, std::string_view expected, double min, bool exclusive) {
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

  /// The topology section; `base` is the topology it overrides (a derived scenario): keys not
  /// written keep the base's values, unless the kind changes, which starts from the defaults.
  core::TopologySpec topology(const Field& section, const core::TopologySpec* base) const {
    const Located& at = section.value;
    if (!at.node.IsMap()) {
      fail(at, fmt::format("expected a map, got {}", describe(at.node)));
    }
    // The valid keys depend on the kind, so the kind is read first. Without one, check the keys
    // against every kind's so that a misspelt 'kind' still gets its "did you mean".
    const std::optional<Field> kind = find_key(at, "kind");
    if (!kind && base == nullptr) {
      std::vector<std::string_view> all;
      for (const auto& keys : {std::span<const std::string_view>(kUniformKeys),
                               std::span<const std::string_view>(kClusterKeys),
                               std::span<const std::string_view>(kSystemKeys)}) {
        for (const auto key : keys) {
          if (!contains(all, key)) {
            all.push_back(key);
          }
        }
      }
      (void)read_map(at, all, kTopologyRequired); // throws: 'kind' is missing
      fail(at, "missing required key 'kind'");
    }
    const std::string kind_name =
        kind ? one_of(kind->value, "topology kind", "a topology kind", kTopologyKinds) : base->kind;
    core::TopologySpec out;
    if (base != nullptr && base->kind == kind_name) {
      out = *base;
    }
    out.kind = kind_name;
    out.pos = section.key_pos;
    const auto keys_of = [](std::string_view k) -> std::span<const std::string_view> {
      if (k == "uniform") {
        return kUniformKeys;
      }
      if (k == "cluster") {
        return kClusterKeys;
      }
      return kSystemKeys;
    };
    const KeyExplainer explain = [&](std::string_view key) -> std::string {
      for (const auto other : kTopologyKinds) {
        if (other != out.kind && contains(keys_of(other), key)) {
          return fmt::format("key '{}' is not valid for a {} topology (it is a {} key)", key,
                             out.kind, other);
        }
      }
      return {};
    };
    const Fields fields = read_map(at, keys_of(out.kind), {}, explain);
    for (const auto& f : fields.fields) {
      const std::string& k = f.key;
      const Located& v = f.value;
      out.value_pos[v.path] = v.pos;
      if (k == "kind") {
        continue;
      }
      // The endpoint keys first: every kind shares them.
      if (k == "overhead") {
        out.endpoint.overhead = seconds(v);
      } else if (k == "gap") {
        out.endpoint.gap = seconds(v);
      } else if (k == "copy_bandwidth") {
        out.endpoint.copy_bandwidth = bandwidth(v);
      } else if (out.kind == "uniform") {
        if (k == "latency") {
          out.uniform.latency = seconds(v);
        } else if (k == "bandwidth") {
          out.uniform.bandwidth = bandwidth(v);
        } else if (k == "reduce_bandwidth") {
          out.uniform.reduce_bandwidth = bandwidth(v);
        }
      } else if (out.kind == "cluster") {
        cluster_key(f, out.cluster);
      } else {
        system_key(f, out);
      }
    }
    if (out.kind == "cluster") {
      check_cluster(fields, out.cluster);
    }
    return out;
  }

  // ---- kind: system --------------------------------------------------------------------------

  /// Reads a section map, recording where every value is so that later checks can point at it.
  Fields section(const Located& at, std::span<const std::string_view> valid,
                 core::TopologySpec& spec, const KeyExplainer& explain = {}) const {
    const Fields fields = read_map(at, valid, {}, explain);
    for (const auto& f : fields.fields) {
      spec.value_pos[f.value.path] = f.value.pos;
    }
    return fields;
  }

  void system_key(const Field& f, core::TopologySpec& spec) const {
    core::SystemSpec& sys = spec.system;
    if (f.key == "nodes") {
      sys.nodes = count(f.value);
    } else if (f.key == "node") {
      node_section(f.value, spec);
    } else if (f.key == "network") {
      network_section(f.value, spec);
    } else if (f.key == "placement") {
      placement_section(f.value, spec);
    }
  }

  /// A count that may be 0 ("none"), up to kMaxCount.
  static std::uint32_t count0(const Located& at) {
    const std::int64_t v = integer(at, "an integer");
    if (v < 0) {
      fail(at, fmt::format("must be at least 0, got {}", v));
    }
    if (v > kMaxCount) {
      fail(at, fmt::format("must be at most {}, got {}", kMaxCount, v));
    }
    return static_cast<std::uint32_t>(v);
  }

  void node_section(const Located& at, core::TopologySpec& spec) const {
    core::NodeSpec& n = spec.system.node;
    const Fields fields = section(at, kNodeKeys, spec);
    for (const auto& f : fields.fields) {
      const std::string& k = f.key;
      const Located& v = f.value;
      if (k == "gpus") {
        n.gpus = count0(v);
      } else if (k == "reduce_bandwidth") {
        n.reduce_bandwidth = bandwidth(v);
      } else if (k == "nvlink") {
        nvlink_section(v, spec);
      } else if (k == "pcie") {
        pcie_section(v, spec);
      } else if (k == "cpu") {
        cpu_section(v, spec);
      } else if (k == "nics") {
        n.nics = count0(v);
      } else if (k == "nic_bandwidth") {
        n.nic_bandwidth = bandwidth(v);
      } else if (k == "nic_latency") {
        n.nic_latency = seconds(v);
      } else if (k == "nic_kind") {
        n.nic_kind = nic_kind(v);
      } else if (k == "nic_efficiency") {
        n.nic_efficiency = real(v, "a number greater than 0 and at most 1", 0.0, true);
        if (n.nic_efficiency > 1.0) {
          fail(v, fmt::format("expected a number greater than 0 and at most 1, got {}",
                              scalar(v, "a number")));
        }
      }
    }
    // A kind written here gives the NIC values not written beside it (in a derived scenario it
    // replaces the base's: a new kind is a new NIC).
    if (fields.find("nic_kind") != nullptr) {
      const topologies::NicKind* kind = topologies::find_nic_kind(n.nic_kind);
      if (fields.find("nic_bandwidth") == nullptr) {
        n.nic_bandwidth = kind->line_rate;
      }
      if (fields.find("nic_latency") == nullptr) {
        n.nic_latency = kind->latency;
      }
      if (fields.find("nic_efficiency") == nullptr) {
        n.nic_efficiency = kind->efficiency;
      }
    }
  }

  /// A NIC kind name (topologies/nic_kinds.hpp).
  static std::string nic_kind(const Located& at) {
    std::vector<std::string_view> names;
    for (const auto& k : topologies::nic_kinds()) {
      names.push_back(k.name);
    }
    return one_of(at, "NIC kind", "a NIC kind", names);
  }

  void nvlink_section(const Located& at, core::TopologySpec& spec) const {
    core::NvlinkSpec& nv = spec.system.node.nvlink;
    if (at.node.IsMap()) {
      if (const auto kind = find_key(at, "kind")) {
        const std::string name = one_of(kind->value, "NVLink kind", "an NVLink kind", kNvlinkKinds);
        if (name != nv.kind) {
          nv = core::NvlinkSpec{};
          nv.kind = name;
        }
      }
    }
    // Which keys each kind takes: a links_per_gpu on an all-to-all board is a mistake.
    const auto takes = [&](std::string_view key) {
      if (key == "kind" || key == "link_bandwidth" || key == "latency") {
        return true;
      }
      if (key == "links_per_pair") {
        return nv.kind == "all_to_all" || nv.kind == "bridges";
      }
      if (key == "links") {
        return nv.kind == "explicit";
      }
      return nv.kind == "switch"; // links_per_gpu, sharp, sharp_reduce_bandwidth
    };
    std::vector<std::string_view> valid;
    for (const auto key : kNvlinkKeys) {
      if (takes(key)) {
        valid.push_back(key);
      }
    }
    const KeyExplainer explain = [&](std::string_view key) -> std::string {
      if (!contains(kNvlinkKeys, key)) {
        return {};
      }
      return fmt::format("key '{}' is not valid for NVLink kind '{}'", key, nv.kind);
    };
    const Fields fields = section(at, valid, spec, explain);
    for (const auto& f : fields.fields) {
      const std::string& k = f.key;
      const Located& v = f.value;
      if (k == "link_bandwidth") {
        nv.link_bandwidth = bandwidth(v);
      } else if (k == "latency") {
        nv.latency = seconds(v);
      } else if (k == "links_per_pair") {
        nv.links_per_pair = count(v);
      } else if (k == "links_per_gpu") {
        nv.links_per_gpu = count(v);
      } else if (k == "sharp") {
        nv.sharp = boolean(v);
      } else if (k == "sharp_reduce_bandwidth") {
        nv.sharp_reduce_bandwidth = bandwidth(v);
      } else if (k == "links") {
        nv.links = nvlink_pairs(v, spec);
      }
    }
  }

  /// The explicit NVLink list: entries [gpu, gpu, links].
  std::vector<core::NvlinkSpec::Pair> nvlink_pairs(const Located& at,
                                                   core::TopologySpec& spec) const {
    if (!at.node.IsSequence()) {
      fail(at,
           fmt::format("expected a list of [gpu, gpu, links] entries, got {}", describe(at.node)));
    }
    std::vector<core::NvlinkSpec::Pair> out;
    for (std::size_t i = 0; i < at.node.size(); ++i) {
      const Located e = element(at, i, at.node[i]);
      spec.value_pos[e.path] = e.pos;
      if (!e.node.IsSequence() || e.node.size() != 3) {
        fail(e, fmt::format("expected [gpu, gpu, links], got {}",
                            e.node.IsSequence() ? fmt::format("a list of {}", e.node.size())
                                                : describe(e.node)));
      }
      core::NvlinkSpec::Pair p;
      p.a = count0(element(e, 0, e.node[0]));
      p.b = count0(element(e, 1, e.node[1]));
      p.links = count(element(e, 2, e.node[2]));
      out.push_back(p);
    }
    return out;
  }

  void pcie_section(const Located& at, core::TopologySpec& spec) const {
    core::PcieSpec& pcie = spec.system.node.pcie;
    const Fields fields = section(at, kPcieKeys, spec);
    for (const auto& f : fields.fields) {
      const std::string& k = f.key;
      const Located& v = f.value;
      if (k == "gen") {
        const std::int64_t gen = integer(v, "a PCIe generation (3, 4, 5 or 6)");
        if (gen < 3 || gen > 6) {
          fail(v, fmt::format("PCIe gen must be 3, 4, 5 or 6, got {}", gen));
        }
        pcie.gen = static_cast<std::uint32_t>(gen);
      } else if (k == "lanes") {
        const std::int64_t lanes = integer(v, "a lane count (1, 2, 4, 8 or 16)");
        if (lanes != 1 && lanes != 2 && lanes != 4 && lanes != 8 && lanes != 16) {
          fail(v, fmt::format("PCIe lanes must be 1, 2, 4, 8 or 16, got {}", lanes));
        }
        pcie.lanes = static_cast<std::uint32_t>(lanes);
      } else if (k == "bandwidth") {
        pcie.bandwidth = bandwidth(v);
      } else if (k == "switches") {
        pcie.switches = count0(v);
      } else if (k == "p2p") {
        pcie.p2p = boolean(v);
      } else if (k == "latency") {
        pcie.latency = seconds(v);
      } else if (k == "switch_latency") {
        pcie.switch_latency = seconds(v);
      }
    }
  }

  void cpu_section(const Located& at, core::TopologySpec& spec) const {
    core::CpuSpec& cpu = spec.system.node.cpu;
    const Fields fields = section(at, kCpuKeys, spec);
    for (const auto& f : fields.fields) {
      const std::string& k = f.key;
      const Located& v = f.value;
      if (k == "sockets") {
        cpu.sockets = count(v);
      } else if (k == "numa_per_socket") {
        cpu.numa_per_socket = count(v);
      } else if (k == "cores_per_socket") {
        cpu.cores_per_socket = count(v);
      } else if (k == "memory_bandwidth") {
        cpu.memory_bandwidth = bandwidth(v);
      } else if (k == "memory_latency") {
        cpu.memory_latency = seconds(v);
      } else if (k == "inter_socket") {
        cpu.inter_socket = one_of(v, "inter-socket link", "a link kind", kInterSocketKinds);
      } else if (k == "inter_socket_bandwidth") {
        cpu.inter_socket_bandwidth = bandwidth(v);
      } else if (k == "inter_socket_latency") {
        cpu.inter_socket_latency = seconds(v);
      } else if (k == "core_bandwidth") {
        cpu.core_bandwidth = bandwidth(v);
      }
    }
  }

  /// The keys a network kind takes besides the common ones.
  static std::vector<std::string_view> network_keys(std::string_view kind) {
    std::vector<std::string_view> keys(kNetworkCommonKeys.begin(), kNetworkCommonKeys.end());
    if (kind == "fat_tree") {
      keys.insert(keys.end(), {"rail_optimized", "levels", "radix", "taper"});
    } else if (kind == "dragonfly") {
      keys.insert(keys.end(), {"groups", "routers_per_group", "hosts_per_router",
                               "global_links_per_router", "routing"});
    } else if (kind == "dragonfly_plus") {
      keys.insert(keys.end(), {"groups", "leaves_per_group", "spines_per_group", "hosts_per_leaf",
                               "global_links_per_spine", "routing"});
    } else if (kind == "torus") {
      keys.insert(keys.end(), {"dims", "hosts_per_router"});
    }
    return keys;
  }

  void network_section(const Located& at, core::TopologySpec& spec) const {
    core::NetworkSpec& net = spec.system.network;
    if (at.node.IsMap()) {
      if (const auto kind = find_key(at, "kind")) {
        const std::string name =
            one_of(kind->value, "network kind", "a network kind", kNetworkKinds);
        if (name != net.kind) {
          net = core::NetworkSpec{};
          net.kind = name;
        }
      }
    }
    const std::vector<std::string_view> valid = network_keys(net.kind);
    const KeyExplainer explain = [&](std::string_view key) -> std::string {
      for (const auto other : kNetworkKinds) {
        const auto keys = network_keys(other);
        if (other != net.kind && std::find(keys.begin(), keys.end(), key) != keys.end()) {
          return fmt::format("key '{}' is not valid for a {} network (it is a {} key)", key,
                             net.kind, other);
        }
      }
      return {};
    };
    const Fields fields = section(at, valid, spec, explain);
    for (const auto& f : fields.fields) {
      const std::string& k = f.key;
      const Located& v = f.value;
      if (k == "link_bandwidth") {
        net.link_bandwidth = bandwidth(v);
      } else if (k == "link_latency") {
        net.link_latency = seconds(v);
      } else if (k == "switch_latency") {
        net.switch_latency = seconds(v);
      } else if (k == "sharp") {
        net.sharp = boolean(v);
      } else if (k == "sharp_reduce_bandwidth") {
        net.sharp_reduce_bandwidth = bandwidth(v);
      } else if (k == "rail_optimized") {
        net.rail_optimized = boolean(v);
      } else if (k == "levels") {
        const std::int64_t levels = integer(v, "1, 2 or 3");
        if (levels < 1 || levels > 3) {
          fail(v, fmt::format("a fat-tree has 1, 2 or 3 levels, got {}", levels));
        }
        net.levels = static_cast<std::uint32_t>(levels);
      } else if (k == "radix") {
        net.radix = count(v);
      } else if (k == "taper") {
        net.taper = ratio(v);
      } else if (k == "groups") {
        net.groups = count0(v);
      } else if (k == "routers_per_group") {
        net.routers_per_group = count(v);
      } else if (k == "hosts_per_router") {
        net.hosts_per_router = count(v);
      } else if (k == "global_links_per_router") {
        net.global_links_per_router = count(v);
      } else if (k == "leaves_per_group") {
        net.leaves_per_group = count(v);
      } else if (k == "spines_per_group") {
        net.spines_per_group = count(v);
      } else if (k == "hosts_per_leaf") {
        net.hosts_per_leaf = count(v);
      } else if (k == "global_links_per_spine") {
        net.global_links_per_spine = count(v);
      } else if (k == "routing") {
        net.routing = one_of(v, "routing", "a routing name", kRoutings);
      } else if (k == "dims") {
        net.dims = dims(v, spec);
      }
    }
  }

  /// A taper (oversubscription) as a number >= 1 or a ratio 'down:up' such as '2:1' or '33:7'.
  static double ratio(const Located& at) {
    const std::string text = scalar(at, "a ratio like '2:1' or a number >= 1");
    const auto colon = text.find(':');
    const auto number = [&](std::string_view part) -> std::optional<double> {
      double value = 0.0;
      const char* last = part.data() + part.size();
      auto [ptr, ec] = std::from_chars(part.data(), last, value);
      if (part.empty() || ec != std::errc{} || ptr != last || !(value > 0.0)) {
        return std::nullopt;
      }
      return value;
    };
    std::optional<double> value;
    if (colon == std::string::npos) {
      value = number(text);
    } else {
      const auto down = number(std::string_view(text).substr(0, colon));
      const auto up = number(std::string_view(text).substr(colon + 1));
      if (down && up) {
        value = *down / *up;
      }
    }
    if (!value) {
      fail(at, fmt::format("expected a ratio like '2:1' or a number >= 1, got '{}'", text));
    }
    if (*value < 1.0) {
      fail(at, fmt::format("a taper is down:up at the leaves and at least 1 (1:1 is "
                           "non-blocking), got '{}'",
                           text));
    }
    return *value;
  }

  std::vector<std::uint32_t> dims(const Located& at, core::TopologySpec& spec) const {
    if (!at.node.IsSequence()) {
      fail(at, fmt::format("expected a list of 2 or 3 extents like [8, 8, 8], got {}",
                           describe(at.node)));
    }
    if (at.node.size() != 2 && at.node.size() != 3) {
      fail(at, fmt::format("a torus has 2 or 3 dimensions, got {}", at.node.size()));
    }
    std::vector<std::uint32_t> out;
    for (std::size_t i = 0; i < at.node.size(); ++i) {
      const Located e = element(at, i, at.node[i]);
      spec.value_pos[e.path] = e.pos;
      const std::uint32_t extent = count(e);
      if (extent < 2) {
        fail(e, fmt::format("a torus dimension has at least 2 routers, got {}", extent));
      }
      out.push_back(extent);
    }
    return out;
  }

  void placement_section(const Located& at, core::TopologySpec& spec) const {
    core::PlacementSpec& pl = spec.system.placement;
    const Fields fields = section(at, kPlacementKeys, spec);
    const Field* order = fields.find("order");
    const Field* rankfile = fields.find("rankfile");
    if (order != nullptr && rankfile != nullptr) {
      fail(order->value, "give either 'order' or 'rankfile', not both (a rankfile is the order)");
    }
    if (order != nullptr) {
      pl.order = one_of(order->value, "placement order", "a placement order", kPlacementOrders);
      pl.rankfile.clear();
      pl.slots.clear();
    }
    if (const Field* rpn = fields.find("ranks_per_node")) {
      pl.ranks_per_node = count(rpn->value);
    }
    if (rankfile != nullptr) {
      pl.rankfile = scalar(rankfile->value, "a rankfile path");
      pl.order = "rankfile";
      pl.slots = load_rankfile(pl.rankfile, file_, rankfile->value.pos);
    }
  }

  static void cluster_key(const Field& f, core::ClusterSpec& c) {
    const std::string& k = f.key;
    const Located& v = f.value;
    if (k == "nodes") {
      c.nodes = count(v);
    } else if (k == "devices_per_node") {
      c.devices_per_node = count(v);
    } else if (k == "intra_bandwidth") {
      c.intra_bandwidth = bandwidth(v);
    } else if (k == "intra_latency") {
      c.intra_latency = seconds(v);
    } else if (k == "nics_per_node") {
      c.nics_per_node = count(v);
    } else if (k == "nic_bandwidth") {
      c.nic_bandwidth = bandwidth(v);
    } else if (k == "nic_latency") {
      c.nic_latency = seconds(v);
    } else if (k == "switch_latency") {
      c.switch_latency = seconds(v);
    } else if (k == "reduce_bandwidth") {
      c.reduce_bandwidth = bandwidth(v);
    } else if (k == "node_switch_reduces") {
      c.node_switch_reduces = boolean(v);
    } else if (k == "network_switch_reduces") {
      c.network_switch_reduces = boolean(v);
    } else if (k == "switch_reduce_bandwidth") {
      c.switch_reduce_bandwidth = bandwidth(v);
    }
  }

  /// Checks between cluster keys, once every key has its value (defaults included).
  static void check_cluster(const Fields& fields, const core::ClusterSpec& c) {
    if (c.nics_per_node > c.devices_per_node) {
      fail(fields.find("nics_per_node")->value,
           fmt::format("nics_per_node ({}) cannot exceed devices_per_node ({})", c.nics_per_node,
                       c.devices_per_node));
    }
    const std::uint64_t devices = std::uint64_t{c.nodes} * c.devices_per_node;
    if (devices > static_cast<std::uint64_t>(kMaxCount)) {
      fail(fields.find("nodes")->value,
           fmt::format("{} nodes x {} devices_per_node is {} devices; at most {} are supported",
                       c.nodes, c.devices_per_node, devices, kMaxCount));
    }
  }

  std::vector<core::StudySpec> studies(const Located& at) const {
    if (!at.node.IsSequence()) {
      fail(at, fmt::format("expected a list of studies, got {}", describe(at.node)));
    }
    if (at.node.size() == 0) {
      fail(at, "expected at least one study");
    }
    std::vector<core::StudySpec> out;
    for (std::size_t i = 0; i < at.node.size(); ++i) {
      out.push_back(study(element(at, i, at.node[i])));
    }
    return out;
  }

  core::StudySpec study(const Located& at) const {
    const Fields fields = read_map(at, kStudyKeys, kStudyRequired);
    core::StudySpec out;
    out.pos = at.pos;
    out.engine_pos = at.pos;
    const Field* root = nullptr;
    core::CollectiveName named;
    const Located* collective_at = nullptr;
    const Located* counts_at = nullptr;
    for (const auto& f : fields.fields) {
      const std::string& k = f.key;
      const Located& v = f.value;
      if (k == "name") {
        out.name = scalar(v, "a study name");
      } else if (k == "collective") {
        const std::string name = scalar(v, "a collective name");
        const auto kind = core::parse_collective_name(name);
        if (!kind) {
          std::vector<std::string> valid;
          valid.reserve(core::kAllCollectives.size());
          for (const auto c : core::kAllCollectives) {
            valid.emplace_back(core::to_string(c));
          }
          fail(v, core::UnknownNameError("collective", name, std::move(valid)).what());
        }
        out.collective = kind->kind;
        named = *kind;
        collective_at = &v;
      } else if (k == "counts") {
        const core::Parsed<core::CountsSpec> c = core::parse_counts_spec(scalar(v, "counts"));
        if (!c.ok()) {
          fail(v, c.error);
        }
        out.counts = c.value;
        io::load_counts_data(out.counts, file_, v.pos);
        counts_at = &v;
      } else if (k == "skew") {
        const core::Parsed<core::SkewSpec> s = core::parse_skew_spec(scalar(v, "skew"));
        if (!s.ok()) {
          fail(v, s.error);
        }
        out.skew = s.value;
        io::load_skew_data(out.skew, file_, v.pos);
      } else if (k == "algorithms") {
        algorithms(v, out);
      } else if (k == "stacks") {
        stacks(v, out);
      } else if (k == "ranks") {
        out.ranks = ranks(v);
        out.ranks_pos = v.pos;
      } else if (k == "sizes") {
        out.sizes = sizes(v);
        out.sizes_pos = v.pos;
      } else if (k == "root") {
        root = &f;
      } else if (k == "engine") {
        out.engine = one_of(v, "engine", "an engine name", kScenarioEngines);
        out.engine_pos = v.pos;
      } else if (k == "params") {
        params(v, out);
      }
    }
    // A v-name without counts is its uniform case; counts need a collective with a v-variant; a
    // neighbourhood collective needs its process graph.
    using CK = core::CountsSpec::Kind;
    const bool graph = out.counts.kind == CK::cart || out.counts.kind == CK::graph ||
                       out.counts.kind == CK::sparse;
    if (named.neighbor && !graph) {
      fail(counts_at != nullptr ? *counts_at : *collective_at,
           "a neighbourhood collective needs its process graph: counts: cart:DxD[,periodic], "
           "graph:PATH or sparse:D");
    }
    if (counts_at != nullptr && out.counts.kind != CK::none &&
        !core::has_counts_variant(out.collective)) {
      fail(*counts_at, fmt::format("{} has no v-variant: counts apply to allgather, gather, "
                                   "scatter, reduce_scatter and alltoall",
                                   core::to_string(out.collective)));
    }
    if (graph && out.collective != core::CollectiveKind::alltoall) {
      fail(*counts_at, "a process graph's counts belong to an alltoall (neighbor_alltoall)");
    }
    if (named.v && out.counts.kind == CK::none) {
      out.counts.kind = CK::uniform;
      out.counts.text = "uniform";
    }
    // The root is checked last: its valid range depends on the rank counts.
    if (root != nullptr) {
      const std::int64_t r = integer(root->value, "a root rank (an integer >= 0)");
      if (r < 0) {
        fail(root->value, fmt::format("must be at least 0, got {}", r));
      }
      const std::uint32_t smallest = *std::min_element(out.ranks.begin(), out.ranks.end());
      if (r >= smallest) {
        fail(root->value,
             fmt::format("root {} is out of range for {} ranks (valid roots are 0..{})", r,
                         smallest, smallest - 1));
      }
      out.root = static_cast<std::uint32_t>(r);
    }
    return out;
  }

  void algorithms(const Located& at, core::StudySpec& out) const {
    auto one = [&](const Located& name_at) {
      const std::string name = scalar(name_at, "an algorithm name");
      if (name.empty()) {
        fail(name_at, "expected an algorithm name, got ''");
      }
      out.algorithms.push_back(name);
      out.algorithm_pos.push_back(name_at.pos);
    };
    if (at.node.IsScalar()) {
      one(at);
      return;
    }
    if (!at.node.IsSequence()) {
      fail(at, fmt::format("expected a list of algorithm names, got {}", describe(at.node)));
    }
    if (at.node.size() == 0) {
      fail(at, "expected at least one algorithm");
    }
    for (std::size_t i = 0; i < at.node.size(); ++i) {
      one(element(at, i, at.node[i]));
    }
  }

  /// Stack names, checked where the study runs (the loader does not link the stacks).
  void stacks(const Located& at, core::StudySpec& out) const {
    auto one = [&](const Located& name_at) {
      const std::string name = scalar(name_at, "a stack name");
      if (name.empty()) {
        fail(name_at, "expected a stack name, got ''");
      }
      out.stacks.push_back(name);
      out.stack_pos.push_back(name_at.pos);
    };
    if (at.node.IsScalar()) {
      one(at);
      return;
    }
    if (!at.node.IsSequence()) {
      fail(at, fmt::format("expected a list of stack names, got {}", describe(at.node)));
    }
    if (at.node.size() == 0) {
      fail(at, "expected at least one stack");
    }
    for (std::size_t i = 0; i < at.node.size(); ++i) {
      one(element(at, i, at.node[i]));
    }
  }

  std::vector<std::uint32_t> ranks(const Located& at) const {
    auto one = [](const Located& v) {
      const std::int64_t n = integer(v, "a rank count (an integer >= 1)");
      if (n < 1) {
        fail(v, fmt::format("a rank count must be at least 1, got {}", n));
      }
      if (n > kMaxScenarioRanks) {
        fail(v, fmt::format("a study can simulate at most {} ranks, got {}", kMaxScenarioRanks, n));
      }
      return static_cast<std::uint32_t>(n);
    };
    if (at.node.IsScalar()) {
      return {one(at)};
    }
    if (!at.node.IsSequence()) {
      fail(at, fmt::format("expected a rank count or a list of rank counts, got {}",
                           describe(at.node)));
    }
    if (at.node.size() == 0) {
      fail(at, "expected at least one rank count");
    }
    std::vector<std::uint32_t> out;
    for (std::size_t i = 0; i < at.node.size(); ++i) {
      out.push_back(one(element(at, i, at.node[i])));
    }
    return out;
  }

  std::vector<core::Bytes> sizes(const Located& at) const {
    if (at.node.IsScalar()) {
      auto parsed = core::parse_size_sweep(at.node.Scalar());
      if (!parsed.ok()) {
        fail(at, parsed.error);
      }
      return std::move(parsed.value);
    }
    if (!at.node.IsSequence()) {
      fail(at, fmt::format("expected a size sweep like '8B:1GiB:x2' or a list of sizes, got {}",
                           describe(at.node)));
    }
    if (at.node.size() == 0) {
      fail(at, "expected at least one size");
    }
    std::vector<core::Bytes> out;
    for (std::size_t i = 0; i < at.node.size(); ++i) {
      const Located v = element(at, i, at.node[i]);
      const auto parsed = core::parse_bytes(scalar(v, "a size like '64 KiB'"));
      if (!parsed.ok()) {
        fail(v, parsed.error);
      }
      out.push_back(parsed.value);
    }
    return out;
  }

  /// Algorithm parameters: names and values are checked later by the registry, which knows each
  /// algorithm's parameters (integers, sizes, or names for enumerations such as `inter: ring`);
  /// here only the shape is: a map of scalars that read as an integer, a size or a name.
  void params(const Located& at, core::StudySpec& out) const {
    const Fields fields = read_map(at, {}, {});
    for (const auto& f : fields.fields) {
      const std::string text = scalar(f.value, "an integer, a size like '64 KiB' or a name");
      const bool is_name =
          !text.empty() && std::isalpha(static_cast<unsigned char>(text.front())) != 0 &&
          std::all_of(text.begin(), text.end(), [](char c) {
            return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '-';
          });
      if (!to_integer(text) && !core::parse_bytes(text).ok() && !is_name) {
        fail(f.value,
             fmt::format("expected an integer, a size like '64 KiB' or a name, got '{}'", text));
      }
      out.params[f.key] = text;
      out.param_pos[f.key] = f.value.pos;
    }
  }

  std::string file_;
  int depth_ = 0;
};

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

} // namespace

namespace {

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
