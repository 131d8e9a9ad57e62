#pragma once
// Helpers for the tests of the composed (hierarchical and multi-dimensional) algorithms: a cluster
// topology, requests on it, inter-node traffic, and a sweep over every level choice.

#include "algorithm_test_support.hpp"
#include "collsim/algorithms/registry.hpp"
#include "collsim/core/verify.hpp"
#include "collsim/topologies/build.hpp"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

namespace collsim::testing {

/// A cluster of `per_node` ranks per node (the last node holds the rest).
inline core::Topology cluster_topology(std::uint32_t ranks, std::uint32_t per_node = 4) {
  core::ClusterSpec spec;
  spec.devices_per_node = per_node;
  return topologies::build_cluster(spec, core::EndpointSpec{}, ranks);
}

inline algorithms::Request request(core::CollectiveKind c, std::uint32_t ranks, std::uint64_t bytes,
                                   core::Rank root = 0, const core::Topology* topology = nullptr) {
  algorithms::Request req = allreduce_request(ranks, bytes);
  req.collective = c;
  req.root = root;
  req.topology = topology;
  return req;
}

/// Per rank: bytes sent to ranks of other nodes (nodes of `per_node` consecutive ranks).
inline std::vector<std::uint64_t> inter_node_bytes(const core::Schedule& s,
                                                   std::uint32_t per_node) {
  std::vector<std::uint64_t> out(s.ranks());
  for (core::Rank r = 0; r < s.ranks(); ++r) {
    for (core::OpId id = s.rank_begin(r); id < s.rank_end(r); ++id) {
      if (s.kind(id) == core::OpKind::send && s.peer(id) / per_node != r / per_node) {
        out[r] += s.length(id);
      }
    }
  }
  return out;
}

/// Per rank: bytes sent to ranks of the same node.
inline std::vector<std::uint64_t> intra_node_bytes(const core::Schedule& s,
                                                   std::uint32_t per_node) {
  std::vector<std::uint64_t> out(s.ranks());
  for (core::Rank r = 0; r < s.ranks(); ++r) {
    for (core::OpId id = s.rank_begin(r); id < s.rank_end(r); ++id) {
      if (s.kind(id) == core::OpKind::send && s.peer(id) / per_node == r / per_node) {
        out[r] += s.length(id);
      }
    }
  }
  return out;
}

/// For every choice of every enumeration parameter of `algo` (the others at their defaults), on
/// clusters of 4 ranks per node with `rank_counts` ranks, a few sizes and roots: the request is
/// either refused with a reason or generates a schedule that passes check_semantics. Returns how
/// many schedules were checked. The defaults must never be refused.
inline std::size_t check_every_choice(const algorithms::Registry& reg,
                                      const algorithms::AlgorithmInfo& algo,
                                      const std::vector<std::uint32_t>& rank_counts) {
  std::size_t checked = 0;
  for (const std::uint32_t p : rank_counts) {
    const core::Topology topo = cluster_topology(p);
    for (const algorithms::ParamSpec& param : algo.params) {
      for (std::int64_t choice = 0; choice < static_cast<std::int64_t>(param.choices.size());
           ++choice) {
        for (const std::uint64_t n : {std::uint64_t{0}, std::uint64_t{7}, std::uint64_t{1003}}) {
          for (const core::Rank root : {core::Rank{0}, p / 2, p - 1}) {
            algorithms::Request req =
                request(algo.collective, p, n, core::has_root(algo.collective) ? root : 0, &topo);
            req.params[param.name] = choice;
            INFO(algo.name << " " << param.name << "=" << param.choices[choice] << " p=" << p
                           << " n=" << n << " root=" << req.root);
            const std::string why = reg.refusal(algo, req);
            if (!why.empty()) {
              CHECK(choice != param.default_value);
              continue;
            }
            const core::VerifyReport report = core::check_semantics(reg.generate(algo, req));
            CHECK(report.summary() == "");
            ++checked;
          }
        }
      }
    }
  }
  return checked;
}

} // namespace collsim::testing
