// Traffic patterns from what a job runs (placement.hpp; docs/placement.md): a collective's own
// schedule, and a workload's step, both as the bytes each rank sends each other rank.

#include "collsim/analysis/auto_choice.hpp"
#include "collsim/analysis/placement.hpp"
#include "collsim/analysis/workload.hpp"
#include "collsim/core/errors.hpp"
#include "collsim/topologies/build.hpp"

#include <fmt/format.h>

namespace collsim::analysis {
namespace {

/// Adds `times` x the bytes of every rank-to-rank send of `s` to `t`, schedule rank i standing for
/// world rank members[i]. Sends to in-network agents (SHARP, NVLS) leave the ranks' devices but
/// reach no rank: they are not rank-to-rank traffic and are left out.
void add_schedule(TrafficPattern& t, const core::Schedule& s,
                  const std::vector<std::uint32_t>& members, std::uint64_t times) {
  for (core::Rank r = 0; r < s.ranks(); ++r) {
    for (core::OpId id = s.rank_begin(r); id < s.rank_end(r); ++id) {
      if (s.kind(id) != core::OpKind::send || s.peer(id) >= s.ranks()) {
        continue;
      }
      t.bytes[std::size_t{members[r]} * t.ranks + members[s.peer(id)]] += s.length(id) * times;
    }
  }
}

std::vector<std::uint32_t> first(std::uint32_t n) {
  std::vector<std::uint32_t> out(n);
  for (std::uint32_t i = 0; i < n; ++i) {
    out[i] = i;
  }
  return out;
}

/// The world ranks of every communicator of `group` that runs at once in a job of `nodes` x
/// `per_node` ranks in block order, each cut into parts of `size` ranks: world (one), node (one per
/// node), across_nodes (one per local rank: that rank on every node), pair (each node's first rank
/// with the next node's, the boundary between neighbouring stages).
std::vector<std::vector<std::uint32_t>> instances(core::WorkloadGroup group, std::uint32_t nodes,
                                                  std::uint32_t per_node, std::uint32_t size) {
  std::vector<std::vector<std::uint32_t>> groups;
  switch (group) {
  case core::WorkloadGroup::world: groups.push_back(first(nodes * per_node)); break;
  case core::WorkloadGroup::node:
    for (std::uint32_t n = 0; n < nodes; ++n) {
      groups.emplace_back();
      for (std::uint32_t l = 0; l < per_node; ++l) {
        groups.back().push_back(n * per_node + l);
      }
    }
    break;
  case core::WorkloadGroup::across_nodes:
    for (std::uint32_t l = 0; l < per_node; ++l) {
      groups.emplace_back();
      for (std::uint32_t n = 0; n < nodes; ++n) {
        groups.back().push_back(n * per_node + l);
      }
    }
    break;
  case core::WorkloadGroup::pair:
    for (std::uint32_t n = 0; n + 1 < nodes; ++n) {
      groups.push_back({n * per_node, (n + 1) * per_node});
    }
    break;
  }
  std::vector<std::vector<std::uint32_t>> out;
  for (const auto& g : groups) {
    for (std::size_t at = 0; at + size <= g.size(); at += size) {
      out.emplace_back(g.begin() + static_cast<std::ptrdiff_t>(at),
                       g.begin() + static_cast<std::ptrdiff_t>(at + size));
    }
  }
  return out;
}

/// The schedule `algorithm` ("auto": the library's choice) runs for one call on `scenario`.
core::Schedule call_schedule(const core::Scenario& scenario, core::CollectiveKind collective,
                             const std::string& algorithm, core::Bytes bytes, std::uint32_t ranks,
                             algorithms::RawParams& raw, const algorithms::Registry& registry) {
  const core::Topology topo = topologies::build(scenario.topology, ranks);
  std::string name = algorithm;
  if (algorithm == kAutoAlgorithm) {
    std::string why;
    const auto choice = auto_choice(scenario, topo, collective, ranks, bytes, registry, &why);
    if (!choice) {
      throw core::UsageError(fmt::format("no library choice for {} of {} B on {} ranks: {}",
                                         core::to_string(collective), bytes.value, ranks, why));
    }
    name = choice->algorithm;
    raw.insert(choice->params.begin(), choice->params.end());
  }
  const algorithms::AlgorithmInfo& algo = registry.find(collective, name);
  algorithms::Request req;
  req.collective = collective;
  req.ranks = ranks;
  req.bytes = bytes;
  req.topology = &topo;
  req.params = algorithms::resolve_params(algo, raw);
  return registry.generate(algo, req);
}

} // namespace

TrafficPattern schedule_pattern(const core::Schedule& s, std::string name) {
  TrafficPattern t;
  t.name = std::move(name);
  t.ranks = s.ranks();
  t.bytes.assign(std::size_t{t.ranks} * t.ranks, 0);
  add_schedule(t, s, first(t.ranks), 1);
  return t;
}

TrafficPattern collective_pattern(const core::Scenario& scenario, core::CollectiveKind collective,
                                  const std::string& algorithm, core::Bytes bytes,
                                  std::uint32_t ranks, const algorithms::RawParams& params,
                                  const algorithms::Registry& registry) {
  algorithms::RawParams raw = params;
  const core::Schedule s =
      call_schedule(scenario, collective, algorithm, bytes, ranks, raw, registry);
  TrafficPattern t =
      schedule_pattern(s, fmt::format("{} {} of {} B ({})", core::to_string(collective),
                                      s.header().algorithm, bytes.value, ranks));
  t.call = CollectiveCall{collective, s.header().algorithm, bytes, raw};
  return t;
}

TrafficPattern workload_pattern(const core::Scenario& scenario, const core::Workload& workload,
                                std::uint32_t ranks, const algorithms::Registry& registry) {
  const std::uint32_t per_node_max = ranks_per_node(scenario);
  const std::uint32_t per_node = per_node_max == 0 ? ranks : std::min(per_node_max, ranks);
  if (ranks % per_node != 0) {
    throw core::UsageError(
        fmt::format("{} ranks do not fill whole nodes of {} ranks", ranks, per_node));
  }
  const WorkloadJob job{ranks / per_node, per_node};
  TrafficPattern t;
  t.name = fmt::format("workload {} ({} x {} ranks)", workload.name, job.nodes, job.ranks_per_node);
  t.ranks = ranks;
  t.bytes.assign(std::size_t{ranks} * ranks, 0);
  for (const core::WorkloadPhase& phase : workload.phases) {
    try {
      const auto [s, size] = communicator(scenario, job, phase.group, phase.ranks);
      if (size < 2) {
        continue; // a one-rank communicator sends nothing
      }
      algorithms::RawParams raw;
      const core::Schedule one = call_schedule(s, phase.collective, std::string(kAutoAlgorithm),
                                               phase.bytes, size, raw, registry);
      for (const auto& members : instances(phase.group, job.nodes, job.ranks_per_node, size)) {
        add_schedule(t, one, members, phase.calls);
      }
    } catch (const core::UsageError& e) {
      throw core::UsageError(
          fmt::format("{}: phase '{}': {}", core::to_string(phase.pos), phase.name, e.what()));
    }
  }
  return t;
}

} // namespace collsim::analysis
