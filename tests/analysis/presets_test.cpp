// Every preset of scenarios/ loads by name, builds at every rank count of its studies, runs its
// studies (at small sizes, so the default test run stays short), and no simulated bandwidth beats
// what the topology physically allows for that placement.

#include "collsim/analysis/simulate.hpp"
#include "collsim/io/presets.hpp"
#include "collsim/io/scenario_loader.hpp"
#include "collsim/topologies/build.hpp"

#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <limits>
#include <map>

using namespace collsim;

namespace {

/// Sum of the bandwidths of the links leaving device d.
double egress(const core::Topology& t, core::DeviceId d) {
  double sum = 0.0;
  for (const core::LinkId id : t.out_links(d)) {
    sum += t.links()[id].bandwidth.bytes_per_second;
  }
  return sum;
}

/// Per node hosting ranks: its rank count and its injection bandwidth (NIC links into the network).
struct NodeShare {
  std::uint32_t ranks = 0;
  double injection = 0.0;
};

std::map<std::uint32_t, NodeShare> nodes_of(const core::Topology& t) {
  std::map<std::uint32_t, NodeShare> out;
  for (core::Rank r = 0; r < t.rank_count(); ++r) {
    ++out[t.node_of(r)].ranks;
  }
  for (const auto& l : t.links()) {
    const auto& from = t.devices()[l.from];
    if (from.kind == core::DeviceKind::nic && t.devices()[l.to].node == core::kNetworkNode) {
      auto it = out.find(from.node);
      if (it != out.end()) {
        it->second.injection += l.bandwidth.bytes_per_second;
      }
    }
  }
  return out;
}

bool in_network(const std::string& algorithm) {
  return algorithm.find("nvls") != std::string::npos ||
         algorithm.find("collnet") != std::string::npos ||
         algorithm.find("sharp") != std::string::npos;
}

/// The largest bus bandwidth (algorithm bandwidth for in-network algorithms, whose busbw is not a
/// wire rate) the topology allows for this row, B/s:
///   * every rank sends (and receives) at least busbw x time bytes (nccl-tests' busbw is defined
///   so),
///     so busbw <= the smallest total egress of a rank's device; an in-network algorithm still
///     sends its whole buffer once: algbw <= that egress;
///   * across N nodes (Patarasuk & Yuan 2009 with nodes as participants): allreduce and allgather
///     move at least (N-1)/N of the data (twice for allreduce) through each node's NICs, so
///     busbw <= injection x N(p-1) / ((N-1)p); alltoall sends ppn x (p-ppn)/p of the data out of
///     a node of ppn ranks; in-network: algbw <= injection.
double bound(const core::Topology& t, const core::ResultRow& row) {
  if (t.is_full_mesh()) { // p - 1 implicit links per rank
    return t.route_cost(0, 1).bottleneck.bytes_per_second * (row.ranks - 1);
  }
  double rank_egress = std::numeric_limits<double>::infinity();
  for (core::Rank r = 0; r < t.rank_count(); ++r) {
    rank_egress = std::min(rank_egress, egress(t, t.device_of(r)));
  }
  double b = rank_egress;
  const auto nodes = nodes_of(t);
  const double p = row.ranks;
  const double n_nodes = static_cast<double>(nodes.size());
  if (nodes.size() >= 2) {
    for (const auto& [node, share] : nodes) {
      const double inj = share.injection;
      if (in_network(row.algorithm)) {
        b = std::min(b, inj);
      } else if (row.collective == core::CollectiveKind::allreduce ||
                 row.collective == core::CollectiveKind::allgather) {
        b = std::min(b, inj * n_nodes * (p - 1) / ((n_nodes - 1) * p));
      } else if (row.collective == core::CollectiveKind::alltoall) {
        const double ppn = share.ranks;
        b = std::min(b, inj * (p - 1) / (ppn * (p - ppn)));
      }
    }
  }
  return b;
}

} // namespace

TEST_CASE("every preset loads by name, builds, runs its studies and respects physical bounds",
          "[analysis][presets]") {
  const auto registry = algorithms::make_default_registry();
  const auto names = io::preset_names();
  // The presets the issue asks for, and the files behind them.
  for (const char* expected :
       {"juwels-booster", "dgx-a100",      "dgx-h100", "dgx1-v100",      "pcie-gpu-node",
        "gadi",           "nscc-aspire2a", "qiming",   "dragonfly-1024", "fat-tree-tapered",
        "default",        "hgx-h200",      "dgx-b200", "gb200-nvl72",    "aws-p4d",
        "aws-p5",         "gcp-a3-mega",   "gcp-a3",   "oci-a100-roce",  "pcie3-2gpu-nop2p",
        "jsc-mpi-as-api"}) {
    CHECK(std::find(names.begin(), names.end(), expected) != names.end());
    CHECK(std::filesystem::exists(std::string(COLLSIM_SOURCE_DIR) + "/scenarios/" + expected +
                                  ".yaml"));
  }
  for (const auto& name : names) {
    INFO("preset " << name);
    const auto scenario = io::load_scenario(name);
    CHECK(scenario.file == "scenarios/" + name + ".yaml");
    // The compiled-in copy is the file in the source tree.
    auto from_file = io::load_scenario(std::string(COLLSIM_SOURCE_DIR) + "/" + scenario.file);
    from_file.file = scenario.file;
    for (auto& [path, pos] : from_file.topology.value_pos) {
      pos.file = scenario.topology.where(path).file;
    }
    from_file.topology.pos.file = scenario.topology.pos.file;
    CHECK(from_file.topology == scenario.topology);
    CHECK(from_file.name == scenario.name);
    REQUIRE_FALSE(scenario.studies.empty());
    for (auto study : scenario.studies) {
      // Small sizes only: a small message and one of 1 MiB (or the study's largest below it).
      std::vector<core::Bytes> sizes;
      sizes.push_back(study.sizes.front());
      core::Bytes mid{0};
      for (const auto s : study.sizes) {
        if (s.value <= (1U << 20)) {
          mid = s;
        }
      }
      if (mid.value > sizes.front().value) {
        sizes.push_back(mid);
      }
      study.sizes = sizes;
      const auto result = analysis::run_study(scenario, study, registry, {}, 2);
      const std::size_t stacks = std::max<std::size_t>(study.stacks.size(), 1);
      CHECK(result.rows.size() + result.skipped.size() ==
            study.algorithms.size() * stacks * study.ranks.size() * sizes.size());
      CHECK(result.rows.size() >= study.ranks.size() * sizes.size());
      std::map<std::uint32_t, core::Topology> topologies;
      for (const auto& row : result.rows) {
        INFO(row.algorithm << " at " << row.ranks << " ranks, " << row.bytes.value << " B");
        CHECK(row.time.value > 0.0);
        if (row.ranks < 2) {
          continue;
        }
        auto it = topologies.find(row.ranks);
        if (it == topologies.end()) {
          it = topologies.emplace(row.ranks, topologies::build(scenario.topology, row.ranks)).first;
        }
        if (row.varying) {
          continue; // a v-collective's busbw is the uniform factor on S, not a link's share
        }
        const double limit = bound(it->second, row) * (1 + 1e-9);
        const double seen =
            in_network(row.algorithm) ? row.algbw.bytes_per_second : row.busbw.bytes_per_second;
        CHECK(seen <= limit);
      }
    }
  }
}
