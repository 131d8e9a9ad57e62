// Workload files (workload_loader.hpp; docs/workload-format.md).

#include "collsim/io/workload_loader.hpp"

#include "collsim/core/errors.hpp"
#include "collsim/core/units.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <fstream>
#include <sstream>
#include <utility>

namespace collsim::io {
namespace {

using core::ScenarioError;
using core::SourcePos;

constexpr std::array<std::string_view, 4> kWorkloadKeys{"name", "description", "compute", "phases"};
constexpr std::array<std::string_view, 9> kPhaseKeys{
    "name", "collective", "bytes", "count", "dtype", "calls", "group", "ranks", "overlap"};
constexpr std::array<std::string_view, 7> kDataParallelKeys{
    "generator", "name", "parameters", "dtype", "bucket", "group", "overlap"};
constexpr std::array<std::string_view, 14> kTransformerKeys{
    "generator", "name",     "layers", "hidden",     "sequence", "micro_batch", "micro_batches",
    "tensor",    "pipeline", "data",   "parameters", "dtype",    "grad_dtype",  "data_overlap"};
constexpr std::array<std::string_view, 13> kMoeKeys{
    "generator", "name",  "moe_layers",      "hidden",  "sequence", "micro_batch", "micro_batches",
    "top_k",     "dtype", "capacity_factor", "experts", "group",    "overlap"};
constexpr std::array<std::string_view, 10> kMdKeys{
    "generator", "name",      "particles", "density",       "ghost_width",
    "dims",      "precision", "md_steps",  "rebuild_every", "check_every"};
constexpr std::array<std::string_view, 8> kStencilKeys{
    "generator", "name", "points", "dims", "halo", "bytes_per_point", "fields", "exchanges"};
constexpr std::array<std::string_view, 5> kGenerators{"data_parallel", "transformer_3d",
                                                      "moe_alltoall", "md_halo", "stencil_halo"};
constexpr std::array<std::string_view, 4> kGroups{"world", "node", "across_nodes", "pair"};
/// PyTorch DDP's default bucket_cap_mb = 25, in MiB (torch/nn/parallel/distributed.py:
/// bucket_cap_mb * 1024 * 1024).
constexpr std::uint64_t kDdpBucketBytes = 25ULL << 20;
constexpr std::uint32_t kMaxCalls = 1U << 24;

struct DtypeName {
  std::string_view name;
  std::uint32_t bytes;
};
// nccl-tests' type names (src/common.cu, test_typenames) and the usual aliases.
constexpr std::array<DtypeName, 17> kDtypes{{{"int8", 1},
                                             {"uint8", 1},
                                             {"int32", 4},
                                             {"uint32", 4},
                                             {"int64", 8},
                                             {"uint64", 8},
                                             {"half", 2},
                                             {"float", 4},
                                             {"double", 8},
                                             {"bfloat16", 2},
                                             {"fp8_e4m3", 1},
                                             {"fp8_e5m2", 1},
                                             {"fp32", 4},
                                             {"fp16", 2},
                                             {"bf16", 2},
                                             {"fp64", 8},
                                             {"fp8", 1}}};

class Loader {
public:
  explicit Loader(std::string file) : file_(std::move(file)) {}

  core::Workload load(std::string_view text) {
    YAML::Node root;
    try {
      root = YAML::Load(std::string(text));
    } catch (const YAML::Exception& e) {
      throw ScenarioError({file_, static_cast<std::uint32_t>(e.mark.line + 1),
                           static_cast<std::uint32_t>(e.mark.column + 1)},
                          "", fmt::format("invalid YAML: {}", e.msg));
    }
    if (!root.IsMap()) {
      fail(root, "",
           fmt::format("expected a workload (a map with keys {})", fmt::join(kWorkloadKeys, ", ")));
    }
    check_keys(root, "", kWorkloadKeys, {"name", "phases"});
    core::Workload w;
    w.file = file_;
    w.name = text_of(root["name"], "name", "a workload name");
    if (root["description"]) {
      w.description = text_of(root["description"], "description", "a description");
    }
    if (root["compute"]) {
      w.compute = seconds(root["compute"], "compute");
    }
    const YAML::Node phases = root["phases"];
    if (!phases.IsSequence() || phases.size() == 0) {
      fail(phases, "phases", "expected a list of phases (at least one)");
    }
    for (std::size_t i = 0; i < phases.size(); ++i) {
      const std::string path = fmt::format("phases[{}]", i);
      const YAML::Node p = phases[i];
      if (!p.IsMap()) {
        fail(p, path, "expected a phase (a map with collective and bytes) or a generator");
      }
      if (p["generator"]) {
        for (auto& made : generator(p, path)) {
          w.phases.push_back(std::move(made));
        }
      } else {
        w.phases.push_back(phase(p, path));
      }
    }
    return w;
  }

private:
  std::string file_;

  [[nodiscard]] SourcePos pos(const YAML::Node& n) const {
    const YAML::Mark m = n.Mark();
    return {file_, static_cast<std::uint32_t>(m.line + 1),
            static_cast<std::uint32_t>(m.column + 1)};
  }

  [[noreturn]] void fail(const YAML::Node& n, const std::string& path,
                         const std::string& message) const {
    throw ScenarioError(pos(n), path, message);
  }

  /// Unknown keys first (with the valid ones), then missing required keys.
  void check_keys(const YAML::Node& map, const std::string& path,
                  std::span<const std::string_view> valid,
                  std::initializer_list<std::string_view> required) const {
    for (const auto& kv : map) {
      const std::string key = kv.first.Scalar();
      if (std::find(valid.begin(), valid.end(), key) == valid.end()) {
        const std::vector<std::string> names(valid.begin(), valid.end());
        const std::string close = core::closest_match(key, names);
        fail(kv.first, path.empty() ? key : path + "." + key,
             fmt::format("unknown key '{}'{}; valid keys are: {}", key,
                         close.empty() ? "" : fmt::format(" (did you mean '{}'?)", close),
                         fmt::join(valid, ", ")));
      }
    }
    for (const auto key : required) {
      if (!map[std::string(key)]) {
        fail(map, path, fmt::format("missing required key '{}'", key));
      }
    }
  }

  std::string text_of(const YAML::Node& n, const std::string& path,
                      std::string_view expected) const {
    if (!n.IsScalar() || n.Scalar().empty()) {
      fail(n, path, fmt::format("expected {}", expected));
    }
    return n.Scalar();
  }

  core::Seconds seconds(const YAML::Node& n, const std::string& path) const {
    const auto parsed = core::parse_seconds(n.IsScalar() ? n.Scalar() : std::string());
    if (!n.IsScalar() || !parsed.ok() || parsed.value.value < 0.0) {
      fail(n, path,
           fmt::format("expected a duration like '120 ms' or '1.5 us', got '{}'",
                       n.IsScalar() ? n.Scalar() : std::string("a ") + kind(n)));
    }
    return parsed.value;
  }

  core::Bytes bytes(const YAML::Node& n, const std::string& path) const {
    const auto parsed = core::parse_bytes(n.IsScalar() ? n.Scalar() : std::string());
    if (!n.IsScalar() || !parsed.ok() || parsed.value.value == 0) {
      fail(n, path,
           fmt::format("expected a size of at least 1 B like '25 MiB', got '{}'",
                       n.IsScalar() ? n.Scalar() : std::string("a ") + kind(n)));
    }
    return parsed.value;
  }

  double number(const YAML::Node& n, const std::string& path, std::string_view expected, double min,
                double max) const {
    double v = 0.0;
    const std::string text = n.IsScalar() ? n.Scalar() : std::string();
    const char* last = text.data() + text.size();
    const auto [ptr, ec] = std::from_chars(text.data(), last, v);
    if (text.empty() || ec != std::errc() || ptr != last || !std::isfinite(v) || v < min ||
        v > max) {
      fail(n, path, fmt::format("expected {}, got '{}'", expected, text));
    }
    return v;
  }

  /// A whole number from 1 to `max`.
  std::uint32_t whole(const YAML::Node& n, const std::string& path, std::uint32_t max) const {
    const std::string expected = fmt::format("a whole number from 1 to {}", max);
    const double v = number(n, path, expected, 1, max);
    if (n.Scalar().find_first_not_of("0123456789") != std::string::npos) {
      fail(n, path, fmt::format("expected {}, got '{}'", expected, n.Scalar()));
    }
    return static_cast<std::uint32_t>(v);
  }

  std::uint32_t dtype(const YAML::Node& n, const std::string& path) const {
    const std::string name = text_of(n, path, "a data type such as bfloat16 or float");
    const std::uint32_t b = dtype_bytes(name);
    if (b == 0) {
      std::vector<std::string> names;
      for (const auto& d : kDtypes) {
        names.emplace_back(d.name);
      }
      fail(n, path, core::UnknownNameError("data type", name, names).what());
    }
    return b;
  }

  core::WorkloadGroup group(const YAML::Node& n, const std::string& path) const {
    const std::string name = text_of(n, path, "a group: world, node, across_nodes or pair");
    for (std::size_t i = 0; i < kGroups.size(); ++i) {
      if (name == kGroups[i]) {
        return static_cast<core::WorkloadGroup>(i);
      }
    }
    fail(n, path, core::UnknownNameError("group", name, {kGroups.begin(), kGroups.end()}).what());
  }

  static const char* kind(const YAML::Node& n) {
    return n.IsMap() ? "map" : n.IsSequence() ? "list" : "nothing";
  }

  core::WorkloadPhase phase(const YAML::Node& p, const std::string& path) const {
    check_keys(p, path, kPhaseKeys, {"collective"});
    core::WorkloadPhase out;
    out.pos = pos(p);
    const std::string coll = text_of(p["collective"], path + ".collective", "a collective");
    try {
      out.collective = core::collective_from_name(coll);
    } catch (const core::UnknownNameError& e) {
      fail(p["collective"], path + ".collective", e.what());
    }
    out.name = p["name"] ? text_of(p["name"], path + ".name", "a phase name") : coll;
    if (p["bytes"] && (p["count"] || p["dtype"])) {
      fail(p, path, "give bytes, or count and dtype, not both");
    }
    if (p["bytes"]) {
      out.bytes = bytes(p["bytes"], path + ".bytes");
    } else if (p["count"] && p["dtype"]) {
      const double count = number(p["count"], path + ".count", "a count of at least 1", 1, 1e18);
      if (count != std::floor(count)) {
        fail(p["count"], path + ".count", "expected a whole number of elements");
      }
      out.bytes =
          core::Bytes{static_cast<std::uint64_t>(count) * dtype(p["dtype"], path + ".dtype")};
    } else {
      fail(p, path, "missing the size: give bytes, or count and dtype");
    }
    if (p["calls"]) {
      out.calls = static_cast<std::uint32_t>(
          number(p["calls"], path + ".calls", fmt::format("a whole number from 1 to {}", kMaxCalls),
                 1, kMaxCalls));
      if (p["calls"].Scalar().find_first_not_of("0123456789") != std::string::npos) {
        fail(p["calls"], path + ".calls",
             fmt::format("expected a whole number from 1 to {}, got '{}'", kMaxCalls,
                         p["calls"].Scalar()));
      }
    }
    if (p["group"]) {
      out.group = group(p["group"], path + ".group");
    }
    if (p["ranks"]) {
      out.ranks = whole(p["ranks"], path + ".ranks", 1U << 24);
    }
    if (p["overlap"]) {
      out.overlap = number(p["overlap"], path + ".overlap", "a share from 0 to 1", 0.0, 1.0);
    }
    return out;
  }

  std::vector<core::WorkloadPhase> generator(const YAML::Node& p, const std::string& path) const {
    const std::string kind_name = text_of(p["generator"], path + ".generator", "a generator name");
    if (std::find(kGenerators.begin(), kGenerators.end(), kind_name) == kGenerators.end()) {
      fail(p["generator"], path + ".generator",
           core::UnknownNameError("generator", kind_name, {kGenerators.begin(), kGenerators.end()})
               .what());
    }
    if (kind_name == "transformer_3d") {
      return transformer(p, path);
    }
    if (kind_name == "moe_alltoall") {
      return moe(p, path);
    }
    if (kind_name == "md_halo") {
      return md(p, path);
    }
    if (kind_name == "stencil_halo") {
      return stencil(p, path);
    }
    check_keys(p, path, kDataParallelKeys, {"parameters"});
    const double params =
        number(p["parameters"], path + ".parameters", "a parameter count of at least 1", 1, 1e15);
    const std::uint32_t size = p["dtype"] ? dtype(p["dtype"], path + ".dtype") : 2;
    const core::Bytes bucket =
        p["bucket"] ? bytes(p["bucket"], path + ".bucket") : core::Bytes{kDdpBucketBytes};
    const double overlap =
        p["overlap"] ? number(p["overlap"], path + ".overlap", "a share from 0 to 1", 0.0, 1.0)
                     : 1.0;
    const core::WorkloadGroup g =
        p["group"] ? group(p["group"], path + ".group") : core::WorkloadGroup::world;
    auto out = data_parallel_phases(params, size, bucket, overlap, g, pos(p));
    if (p["name"]) {
      const std::string name = text_of(p["name"], path + ".name", "a phase name");
      for (auto& ph : out) {
        ph.name = name + (ph.overlap == 0.0 && out.size() > 1 ? " (last bucket)" : "");
      }
    }
    return out;
  }

  std::vector<core::WorkloadPhase> stencil(const YAML::Node& p, const std::string& path) const {
    check_keys(p, path, kStencilKeys, {"points"});
    StencilHalo st;
    st.points = whole(p["points"], path + ".points", 1U << 24);
    const auto opt_whole = [&](const char* key, std::uint32_t fallback, std::uint32_t most) {
      return p[key] ? whole(p[key], path + "." + key, most) : fallback;
    };
    st.dims = opt_whole("dims", 3, 3);
    if (st.dims < 2) {
      fail(p["dims"], path + ".dims", "a stencil halo has 2 or 3 dimensions");
    }
    st.halo = opt_whole("halo", 1, 1U << 16);
    st.bytes_per_point = opt_whole("bytes_per_point", 8, 1U << 16);
    st.fields = opt_whole("fields", 1, 1U << 16);
    st.exchanges = opt_whole("exchanges", 1, 1U << 20);
    auto out = stencil_halo_phases(st, pos(p));
    if (p["name"]) {
      out.front().name = text_of(p["name"], path + ".name", "a phase name");
    }
    return out;
  }

  std::vector<core::WorkloadPhase> md(const YAML::Node& p, const std::string& path) const {
    check_keys(p, path, kMdKeys, {"particles", "density", "ghost_width"});
    MdHalo m;
    m.particles =
        number(p["particles"], path + ".particles", "a particle count of at least 1", 1, 1e15);
    m.density = number(p["density"], path + ".density", "a number density above 0", 1e-12, 1e12);
    m.ghost_width =
        number(p["ghost_width"], path + ".ghost_width", "a length above 0", 1e-12, 1e12);
    // Wider than half the domain, the ghost layers of opposite faces overlap and the counts
    // below (density x width x face area) exceed what a rank holds; HOOMD-blue refuses such a box.
    if (const double side = std::cbrt(m.particles / m.density); 2 * m.ghost_width > side) {
      fail(p["ghost_width"], path + ".ghost_width",
           fmt::format("a ghost width of {:g} is more than half the side of a rank's domain, {:g} "
                       "((particles / density)^(1/3))",
                       m.ghost_width, side));
    }
    const auto opt_whole = [&](const char* key, std::uint32_t fallback, std::uint32_t most) {
      return p[key] ? whole(p[key], path + "." + key, most) : fallback;
    };
    m.dims = opt_whole("dims", 3, 3);
    m.md_steps = opt_whole("md_steps", 1, 1U << 20);
    m.check_every = opt_whole("check_every", 1, 1U << 20);
    if (p["rebuild_every"]) {
      m.rebuild_every = whole(p["rebuild_every"], path + ".rebuild_every", 1U << 20);
    }
    if (p["precision"]) {
      const std::string prec = text_of(p["precision"], path + ".precision", "single or double");
      if (prec != "single" && prec != "double") {
        fail(p["precision"], path + ".precision",
             core::UnknownNameError("precision", prec, {"single", "double"}).what());
      }
      m.scalar_size = prec == "single" ? 4 : 8;
    }
    auto out = md_halo_phases(m, pos(p));
    if (p["name"]) {
      const std::string name = text_of(p["name"], path + ".name", "a phase name");
      for (auto& ph : out) {
        ph.name = name + ": " + ph.name;
      }
    }
    return out;
  }

  std::vector<core::WorkloadPhase> moe(const YAML::Node& p, const std::string& path) const {
    check_keys(p, path, kMoeKeys, {"moe_layers", "hidden", "sequence", "experts"});
    MoeAllToAll m;
    m.moe_layers = whole(p["moe_layers"], path + ".moe_layers", 1U << 20);
    m.hidden = whole(p["hidden"], path + ".hidden", 1U << 24);
    m.sequence = whole(p["sequence"], path + ".sequence", 1U << 24);
    m.experts = whole(p["experts"], path + ".experts", 1U << 24);
    const auto opt_whole = [&](const char* key, std::uint32_t fallback) {
      return p[key] ? whole(p[key], path + "." + key, 1U << 20) : fallback;
    };
    m.micro_batch = opt_whole("micro_batch", 1);
    m.micro_batches = opt_whole("micro_batches", 1);
    m.top_k = opt_whole("top_k", 2);
    m.capacity_factor = p["capacity_factor"]
                            ? number(p["capacity_factor"], path + ".capacity_factor",
                                     "a capacity factor from 0.01 to 64", 0.01, 64.0)
                            : 1.0;
    m.dtype_size = p["dtype"] ? dtype(p["dtype"], path + ".dtype") : 2;
    m.group = p["group"] ? group(p["group"], path + ".group") : core::WorkloadGroup::world;
    m.overlap = p["overlap"]
                    ? number(p["overlap"], path + ".overlap", "a share from 0 to 1", 0.0, 1.0)
                    : 0.0;
    if (m.top_k > m.experts) {
      fail(p["top_k"] ? p["top_k"] : p["experts"], path + (p["top_k"] ? ".top_k" : ".experts"),
           fmt::format("top_k {} is more than the {} experts", m.top_k, m.experts));
    }
    auto out = moe_alltoall_phases(m, pos(p));
    if (p["name"]) {
      out.front().name = text_of(p["name"], path + ".name", "a phase name");
    }
    return out;
  }

  std::vector<core::WorkloadPhase> transformer(const YAML::Node& p, const std::string& path) const {
    check_keys(p, path, kTransformerKeys,
               {"layers", "hidden", "sequence", "micro_batches", "parameters"});
    Transformer3d t;
    t.layers = whole(p["layers"], path + ".layers", 1U << 20);
    t.hidden = whole(p["hidden"], path + ".hidden", 1U << 24);
    t.sequence = whole(p["sequence"], path + ".sequence", 1U << 24);
    t.micro_batches = whole(p["micro_batches"], path + ".micro_batches", 1U << 20);
    t.parameters =
        number(p["parameters"], path + ".parameters", "a parameter count of at least 1", 1, 1e15);
    const auto opt_whole = [&](const char* key, std::uint32_t fallback) {
      return p[key] ? whole(p[key], path + "." + key, 1U << 20) : fallback;
    };
    t.micro_batch = opt_whole("micro_batch", 1);
    t.tensor = opt_whole("tensor", 1);
    t.pipeline = opt_whole("pipeline", 1);
    t.data = opt_whole("data", 1);
    t.dtype_size = p["dtype"] ? dtype(p["dtype"], path + ".dtype") : 2;
    t.grad_dtype_size =
        p["grad_dtype"] ? dtype(p["grad_dtype"], path + ".grad_dtype") : t.dtype_size;
    t.data_overlap = p["data_overlap"] ? number(p["data_overlap"], path + ".data_overlap",
                                                "a share from 0 to 1", 0.0, 1.0)
                                       : 0.0;
    if (t.layers % t.pipeline != 0) {
      fail(p["pipeline"], path + ".pipeline",
           fmt::format("{} pipeline stages do not divide {} layers", t.pipeline, t.layers));
    }
    if (t.micro_batch * t.sequence * t.hidden % t.tensor != 0) {
      fail(p["tensor"], path + ".tensor",
           fmt::format("{}-way tensor parallelism does not divide the {} activations of a "
                       "micro-batch",
                       t.tensor, t.micro_batch * t.sequence * t.hidden));
    }
    const std::uint64_t calls = 4ULL * (t.layers / t.pipeline) * t.micro_batches;
    if (calls > kMaxCalls) {
      fail(p, path,
           fmt::format("{} tensor-parallel calls per step, above the {} collsim takes", calls,
                       kMaxCalls));
    }
    auto out = transformer_3d_phases(t, pos(p));
    if (p["name"]) {
      const std::string name = text_of(p["name"], path + ".name", "a phase name");
      for (auto& ph : out) {
        ph.name = name + ": " + ph.name;
      }
    }
    return out;
  }
};

} // namespace

std::uint32_t dtype_bytes(std::string_view name) {
  for (const auto& d : kDtypes) {
    if (d.name == name) {
      return d.bytes;
    }
  }
  return 0;
}

core::Workload parse_workload(std::string_view yaml_text, std::string_view file_name) {
  return Loader(std::string(file_name)).load(yaml_text);
}

core::Workload load_workload(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw ScenarioError({path, 0, 0}, "",
                        fmt::format("cannot open the workload file: {}", std::strerror(errno)));
  }
  std::stringstream text;
  text << in.rdbuf();
  return parse_workload(text.str(), path);
}

} // namespace collsim::io
