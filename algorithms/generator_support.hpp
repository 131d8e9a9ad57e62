#pragma once
// Internal helpers shared by the generators: exact operation counts (so every generator reserves
// the schedule's arrays once), the IR's size limits, and integer rank arithmetic.

#include "collsim/algorithms/registry.hpp"
#include "collsim/core/schedule.hpp"

#include <bit>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace collsim::algorithms::detail {

/// Exact totals over all ranks of a schedule a generator is about to build.
struct OpCounts {
  std::uint64_t ops = 0;
  std::uint64_t deps = 0;
};

/// "" when a schedule of this size fits the IR (at most core::Schedule::kMaxOps operations), else
/// the reason it does not. Generators call it from check(), so an oversized request is refused
/// before anything is allocated.
std::string size_limit_refusal(const OpCounts& counts);

/// ceil(lg p) for p >= 1: the number of rounds of a binomial tree over p ranks.
constexpr std::uint32_t ceil_log2(std::uint32_t p) {
  return p <= 1 ? 0U : static_cast<std::uint32_t>(std::bit_width(p - 1));
}

/// floor(lg p) for p >= 1.
constexpr std::uint32_t floor_log2(std::uint32_t p) {
  return static_cast<std::uint32_t>(std::countr_zero(std::bit_floor(p)));
}

constexpr core::Range data_range(std::uint64_t offset, std::uint64_t length) {
  return core::Range{core::Buffer::data, offset, length};
}
constexpr core::Range tmp_range(std::uint64_t offset, std::uint64_t length) {
  return core::Range{core::Buffer::tmp, offset, length};
}

/// Appends one operation to the current rank with a dependency list computed at run time
/// (`deps` may be empty); returns its local index.
inline std::uint32_t add_op(core::Schedule& s, core::OpKind kind, core::Rank peer,
                            core::Range target, std::span<const std::uint32_t> deps) {
  return s.add(kind, peer, target, core::Range{}, deps);
}

/// Appends a local reduction `from` -> `into` (into := into (+) from) with computed dependencies.
inline std::uint32_t reduce_op(core::Schedule& s, core::Range from, core::Range into,
                               std::span<const std::uint32_t> deps) {
  return s.add(core::OpKind::reduce, 0, into, from, deps);
}

/// The root exchanges one block with every other rank, all messages in flight at once: one
/// start-up, and the root's port carries everything but its own block. Shared by linear gather,
/// linear scatter and linear_nb scatter (on the loggp engine the latencies overlap; o = g = 0).
inline std::optional<CostTerms> linear_rooted_cost(const Request& req) {
  const std::uint64_t p = req.ranks;
  if (p < 2) {
    return CostTerms{};
  }
  const std::uint64_t n = req.bytes.value;
  return CostTerms{1.0, static_cast<double>(n - core::block_range(n, p, req.root).second), 0.0};
}

/// Where the request's ranks sit (algorithms.md 1.10 item 3): the ranks of each node in rank order.
/// Nodes are numbered 0, 1, ... in order of their lowest rank. Without a topology, or on a full
/// mesh, every rank is a node of its own. Hierarchical, NCCL and in-network generators read this;
/// they never assume a layout.
struct NodeLayout {
  std::vector<std::vector<core::Rank>> members; ///< per node: its ranks, ascending
  std::vector<std::uint32_t> node;              ///< per rank: its node index
  std::vector<std::uint32_t> local;             ///< per rank: its index within the node
  std::vector<std::uint32_t> topology_node;     ///< per node index: core::Device::node
  [[nodiscard]] std::uint32_t nodes() const { return static_cast<std::uint32_t>(members.size()); }
  /// The largest number of ranks on one node.
  [[nodiscard]] std::uint32_t max_per_node() const;
  /// True when every node holds the same number of ranks.
  [[nodiscard]] bool uniform() const;
};
NodeLayout node_layout(const Request& req);

/// The name of the in-network reducing switch inside topology node `topology_node` (an NVSwitch
/// with NVLink SHARP), or "" when the node has none.
std::string node_reducing_switch(const Request& req, std::uint32_t topology_node);
/// The name of a reducing network switch (InfiniBand SHARP), or "" when there is none.
std::string network_reducing_switch(const Request& req);

} // namespace collsim::algorithms::detail
