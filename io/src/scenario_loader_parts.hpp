#pragma once
// The scenario loader's parts (io/src/scenario_loader*.cpp, one file per section of
// docs/scenario-format.md): the valid keys of every section, the located YAML values messages
// point at, and the Loader that reads one scenario file. Internal to the io layer.

#include "collsim/core/errors.hpp"
#include "collsim/core/scenario.hpp"
#include "collsim/core/units.hpp"
#include "collsim/io/scenario_loader.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdint>
#include <fmt/format.h>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>
#include <yaml-cpp/yaml.h>

namespace collsim::io::scenario_detail {

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
constexpr std::array<std::string_view, 10> kNcclKeys{
    "call_overhead", "net_latency", "net_step", "net_step_simple", "group_launch",
    "version",       "ll",          "ll128",    "simple",          "env"};
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
constexpr std::array<std::string_view, 11> kNodeKeys{
    "gpus",          "reduce_bandwidth", "nvlink",   "pcie",           "cpu",      "nics",
    "nic_bandwidth", "nic_latency",      "nic_kind", "nic_efficiency", "nic_ports"};
constexpr std::array<std::string_view, 5> kNvlinkKinds{"none", "all_to_all", "switch", "bridges",
                                                       "explicit"};
constexpr std::array<std::string_view, 8> kNvlinkKeys{
    "kind",          "link_bandwidth", "latency", "links_per_pair",
    "links_per_gpu", "links",          "sharp",   "sharp_reduce_bandwidth"};
constexpr std::array<std::string_view, 9> kPcieKeys{"gen",
                                                    "lanes",
                                                    "bandwidth",
                                                    "switches",
                                                    "p2p",
                                                    "gdr",
                                                    "latency",
                                                    "switch_latency",
                                                    "staged_duplex_efficiency"};
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

inline std::vector<std::string> to_strings(std::span<const std::string_view> names) {
  return {names.begin(), names.end()};
}

inline bool contains(std::span<const std::string_view> names, std::string_view name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

/// How a node that is not what we expected reads in a message.
inline std::string describe(const YAML::Node& node) {
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
inline std::optional<std::int64_t> to_integer(std::string_view text) {
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
  core::Scenario load_node(const YAML::Node& root, const SourcePos& pos) const;

  core::Scenario load(std::string_view text) const;

private:
  [[nodiscard]] SourcePos pos_of(const YAML::Mark& mark) const;

  [[noreturn]] static void fail(const SourcePos& pos, const std::string& path, std::string message);
  [[noreturn]] static void fail(const Located& at, std::string message);

  static std::string child_path(const std::string& parent, std::string_view key);

  [[nodiscard]] Located element(const Located& list, std::size_t index,
                                const YAML::Node& node) const;

  /// One entry of the map at `map`; an empty value is placed at its key, where the user typed.
  [[nodiscard]] Field field(const Located& map, std::string key, const YAML::Node& key_node,
                            const YAML::Node& value) const;

  /// Checks that `at` is a map whose keys are unique and in `valid` (any key when `valid` is
  /// empty), and that every key in `required` is present. Unknown keys are reported before missing
  /// ones because a misspelt required key is both, and "did you mean" is the useful message.
  [[nodiscard]] Fields read_map(const Located& at, std::span<const std::string_view> valid,
                                std::span<const std::string_view> required,
                                const KeyExplainer& explain = {}) const;

  /// The first entry with this key, before the map as a whole is checked.
  [[nodiscard]] std::optional<Field> find_key(const Located& map, std::string_view key) const;

  // ---- scalars -------------------------------------------------------------------------------

  static std::string scalar(const Located& at, std::string_view expected);

  static std::int64_t integer(const Located& at, std::string_view expected);

  /// A count such as nodes or devices_per_node: an integer in [1, kMaxCount].
  static std::uint32_t count(const Located& at);

  static bool boolean(const Located& at);

  static core::Seconds seconds(const Located& at);

  static core::Bandwidth bandwidth(const Located& at);

  /// A name from a fixed list; `what` names the list in messages ("engine", "topology kind") and
  /// `expected` describes a valid value ("an engine name").
  static std::string one_of(const Located& at, std::string_view what, std::string_view expected,
                            std::span<const std::string_view> valid);

  // ---- sections ------------------------------------------------------------------------------

  core::Scenario scenario(const Located& top) const;

  /// What the scenario's predictions were measured to miss by (core::AccuracySpec).
  core::AccuracySpec accuracy(const Field& section) const;

  core::AccuracyRange accuracy_range(const Located& at) const;

  /// A percentage such as "7.4 %" (the sign may be left out): a finite number >= 0.
  static double percent(const Located& at);

  /// The SimGrid engine's settings; keys not written keep `base`'s values (the defaults, or the
  /// base scenario's).
  core::SimgridSpec simgrid(const Located& at, core::SimgridSpec out) const;

  /// Corrections to the NCCL protocol model; keys not written keep `out`'s values.
  core::NcclSpec nccl(const Located& at, core::NcclSpec out) const;

  /// What the MPI stacks read; keys not written keep `out`'s values.
  core::MpiSpec mpi(const Located& at, core::MpiSpec out) const;

  /// NCCL environment variables: a map of NCCL_* names to scalars. Their values are read by
  /// NCCL's model (analysis/nccl_env.hpp), which reports bad ones at the positions kept here.
  void nccl_env(const Located& at, core::NcclSpec& out) const;

  core::NcclProtocolSpec nccl_protocol(const Located& at, core::NcclProtocolSpec out) const;

  /// A multiplier such as SimGrid's latency or bandwidth factor: a number > 0.
  static double factor(const Located& at) { return real(at, "a number greater than 0", 0.0, true); }

  /// A finite number >= min (> min when `exclusive`).
  static double real(const Located& at, std::string_view expected, double min, bool exclusive);

  /// A share of a rate (an efficiency): a number greater than 0 and at most 1.
  static double share(const Located& at);

  /// The topology section; `base` is the topology it overrides (a derived scenario): keys not
  /// written keep the base's values, unless the kind changes, which starts from the defaults.
  core::TopologySpec topology(const Field& section, const core::TopologySpec* base) const;

  // ---- kind: system --------------------------------------------------------------------------

  /// Reads a section map, recording where every value is so that later checks can point at it.
  Fields section(const Located& at, std::span<const std::string_view> valid,
                 core::TopologySpec& spec, const KeyExplainer& explain = {}) const;

  void system_key(const Field& f, core::TopologySpec& spec) const;

  /// A count that may be 0 ("none"), up to kMaxCount.
  static std::uint32_t count0(const Located& at);

  void node_section(const Located& at, core::TopologySpec& spec) const;

  /// A NIC kind name (topologies/nic_kinds.hpp).
  static std::string nic_kind(const Located& at);

  void nvlink_section(const Located& at, core::TopologySpec& spec) const;

  /// The explicit NVLink list: entries [gpu, gpu, links].
  std::vector<core::NvlinkSpec::Pair> nvlink_pairs(const Located& at,
                                                   core::TopologySpec& spec) const;

  void pcie_section(const Located& at, core::TopologySpec& spec) const;

  void cpu_section(const Located& at, core::TopologySpec& spec) const;

  /// The keys a network kind takes besides the common ones.
  static std::vector<std::string_view> network_keys(std::string_view kind);

  void network_section(const Located& at, core::TopologySpec& spec) const;

  /// A taper (oversubscription) as a number >= 1 or a ratio 'down:up' such as '2:1' or '33:7'.
  static double ratio(const Located& at);

  std::vector<std::uint32_t> dims(const Located& at, core::TopologySpec& spec) const;

  void placement_section(const Located& at, core::TopologySpec& spec) const;

  static void cluster_key(const Field& f, core::ClusterSpec& c);

  /// Checks between cluster keys, once every key has its value (defaults included).
  static void check_cluster(const Fields& fields, const core::ClusterSpec& c);

  std::vector<core::StudySpec> studies(const Located& at) const;

  core::StudySpec study(const Located& at) const;

  void algorithms(const Located& at, core::StudySpec& out) const;

  /// Stack names, checked where the study runs (the loader does not link the stacks).
  void stacks(const Located& at, core::StudySpec& out) const;

  std::vector<std::uint32_t> ranks(const Located& at) const;

  std::vector<core::Bytes> sizes(const Located& at) const;

  /// Algorithm parameters: names and values are checked later by the registry, which knows each
  /// algorithm's parameters (integers, sizes, or names for enumerations such as `inter: ring`);
  /// here only the shape is: a map of scalars that read as an integer, a size or a name.
  void params(const Located& at, core::StudySpec& out) const;

  std::string file_;
  int depth_ = 0;
};

} // namespace collsim::io::scenario_detail
