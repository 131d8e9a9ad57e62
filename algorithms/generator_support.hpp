#pragma once
// Internal helpers shared by the generators: exact operation counts (so every generator reserves
// the schedule's arrays once), the IR's size limits, and integer rank arithmetic.

#include "collsim/algorithms/registry.hpp"
#include "collsim/core/schedule.hpp"

#include <bit>
#include <cstdint>
#include <span>
#include <string>
#include <utility>
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

/// The counts of `full` (every rank's) that a collapsed request (Request::collapse_to) builds:
/// its share of the ranks, every rank of a symmetric schedule running as many operations.
OpCounts collapsed_counts(const OpCounts& full, const Request& req);

/// A stand-in for core::Schedule that only counts what a templated build() would add (its
/// begin_rank and add), so that check() sizes a schedule before anything is allocated.
struct OpCounter {
  OpCounts counts;
  std::uint32_t local = 0;
  void begin_rank(core::Rank /*rank*/) { local = 0; }
  std::uint32_t add(core::OpKind /*kind*/, core::Rank /*peer*/, core::Range /*target*/,
                    core::Range /*source*/, std::span<const std::uint32_t> deps) {
    ++counts.ops;
    counts.deps += deps.size();
    return local++;
  }
};

/// What a templated build (`build(out)` calling begin_rank and add on `out`) adds, counted.
template <class Build>
OpCounts count_ops(Build&& build) {
  OpCounter c;
  build(c);
  return c.counts;
}

/// The schedule a templated build adds to `header`, its arrays reserved to the counted size.
template <class Build>
core::Schedule build_counted(core::ScheduleHeader header, Build&& build) {
  core::Schedule s(std::move(header));
  const OpCounts counts = count_ops(build);
  s.reserve(counts.ops, counts.deps);
  build(s);
  s.finish();
  return s;
}

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

/// The receiving side of a mirrored pair of collectives, whose schedules share one message pattern:
/// the gathering side (allgather, bcast, gather, scatter) stores what arrives, the reducing side
/// (reduce-scatter, reduce) combines it into its own contribution.
enum class Arrive : std::uint8_t { store, combine };
constexpr core::OpKind receive_kind(Arrive a) {
  return a == Arrive::store ? core::OpKind::recv : core::OpKind::recv_reduce;
}

/// The linear rooted exchange shared by linear gather (to_root: every rank sends its block to the
/// root, which receives them in rank order) and linear scatter (the root sends every rank its
/// block in rank order, the others receive it), algorithms.md GA1 and SC1. Each of the root's
/// operations waits for the one before it: Open MPI's loop of blocking MPI_Recv / MPI_Send.
core::Schedule linear_rooted(const Request& req, const char* name, bool to_root);
OpCounts linear_rooted_counts(std::uint32_t p);

/// The ring pass over p blocks shared by ring allgather (store) and ring reduce-scatter (combine),
/// algorithms.md AG4 and RS3. Rank r, blocks taken mod p, step s = 0..p-2: send block r-s
/// (combine: r-s-1) to r+1, receive block r-s-1 (combine: recv_reduce block r-s-2) from r-1,
/// straight into `data`; a send forwards what the previous step received, so it waits for it.
/// Zero-length blocks (fewer bytes than ranks) keep their messages, so the alpha term does not
/// depend on n. With combine, the partial sum of block b starts at rank b+1 and is complete at b.
core::Schedule block_ring_pass(const Request& req, const char* name, Arrive how);

/// The `order` parameter of the block rings (allgather and reduce-scatter `ring`): the ring of
/// ranks r -> r+1 (kRingOrderRank, the default) or renamed_ring_order's (kRingOrderRenamed).
constexpr std::int64_t kRingOrderRank = 0;
constexpr std::int64_t kRingOrderRenamed = 1;
ParamSpec ring_order_param();
/// Its exact operation and dependency counts.
OpCounts block_ring_counts(std::uint32_t p);
/// block_ring_pass's symmetry: rotation in rank order with equal blocks (core/collapse.hpp).
Symmetry block_ring_symmetry(const Request& req);
/// (p-1)a + (p-1)/p n b (+ (p-1)/p n g when combining), exact when p divides n; otherwise a step
/// is paced by the largest block in flight and there is no closed form.
std::optional<CostTerms> block_ring_cost(const Request& req, Arrive how);

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
  if (!req.counts.empty()) {
    // gatherv / scatterv: only non-zero blocks move; one start-up if any does.
    const std::uint64_t moved = n - req.counts[req.root];
    return CostTerms{moved > 0 ? 1.0 : 0.0, static_cast<double>(moved), 0.0};
  }
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

/// A ring order for the request's placement that crosses each node boundary once (the rank
/// renaming of Rico-Gallego and Diaz-Martin, "Improving the performance of MPI_Allreduce through
/// rank renaming", NESUS 2014): the nodes in order of their lowest rank, and in each node its
/// ranks by the device they run on (slot order, so a socket's ranks stay together). Position i of
/// the ring holds rank order[i]. Without a topology, or on a full mesh, the identity.
std::vector<core::Rank> renamed_ring_order(const Request& req);

/// The name of the in-network reducing switch inside topology node `topology_node` (an NVSwitch
/// with NVLink SHARP), or "" when the node has none.
std::string node_reducing_switch(const Request& req, std::uint32_t topology_node);
/// The name of a reducing network switch (InfiniBand SHARP), or "" when there is none.
std::string network_reducing_switch(const Request& req);

} // namespace collsim::algorithms::detail
