#include "generator_support.hpp"

#include "collsim/core/layout.hpp"

#include <algorithm>
#include <array>
#include <fmt/format.h>
#include <map>
#include <numeric>

namespace collsim::algorithms::detail {

std::string size_limit_refusal(const OpCounts& counts) {
  if (counts.ops > core::Schedule::kMaxOps) {
    return fmt::format("the schedule would need {} operations; a schedule holds at most {}",
                       counts.ops, core::Schedule::kMaxOps);
  }
  return {};
}

OpCounts collapsed_counts(const OpCounts& full, const Request& req) {
  if (req.collapse_to == 0 || req.ranks == 0) {
    return full;
  }
  return {full.ops / req.ranks * req.collapse_to, full.deps / req.ranks * req.collapse_to};
}

std::uint32_t NodeLayout::max_per_node() const {
  std::size_t most = 0;
  for (const auto& m : members) {
    most = std::max(most, m.size());
  }
  return static_cast<std::uint32_t>(most);
}

bool NodeLayout::uniform() const {
  return std::all_of(members.begin(), members.end(),
                     [&](const auto& m) { return m.size() == members.front().size(); });
}

NodeLayout node_layout(const Request& req) {
  NodeLayout out;
  const std::uint32_t p = req.ranks;
  out.node.resize(p);
  out.local.resize(p);
  const core::Topology* t = req.topology;
  const bool per_rank = t == nullptr || t->is_full_mesh() || t->rank_count() < p;
  std::map<std::uint32_t, std::uint32_t> index; // topology node -> node index
  for (core::Rank r = 0; r < p; ++r) {
    const std::uint32_t tn = per_rank ? r : t->node_of(r);
    const auto [it, fresh] = index.try_emplace(tn, static_cast<std::uint32_t>(out.members.size()));
    if (fresh) {
      out.members.emplace_back();
      out.topology_node.push_back(tn);
    }
    out.node[r] = it->second;
    out.local[r] = static_cast<std::uint32_t>(out.members[it->second].size());
    out.members[it->second].push_back(r);
  }
  return out;
}

std::vector<core::Rank> renamed_ring_order(const Request& req) {
  NodeLayout layout = node_layout(req);
  const core::Topology* t = req.topology;
  const bool devices = t != nullptr && !t->is_full_mesh() && t->rank_count() >= req.ranks;
  std::vector<core::Rank> order;
  order.reserve(req.ranks);
  for (std::vector<core::Rank>& m : layout.members) {
    if (devices) {
      std::stable_sort(m.begin(), m.end(), [t](core::Rank a, core::Rank b) {
        return t->device_of(a) < t->device_of(b);
      });
    }
    order.insert(order.end(), m.begin(), m.end());
  }
  return order;
}

std::string node_reducing_switch(const Request& req, std::uint32_t topology_node) {
  const core::Topology* t = req.topology;
  if (t == nullptr || t->is_full_mesh()) {
    return {};
  }
  for (core::DeviceId d : t->reducing_switches()) {
    const core::Device& dev = t->devices()[d];
    if (dev.kind != core::DeviceKind::network_switch && dev.node == topology_node) {
      return dev.name;
    }
  }
  return {};
}

std::string network_reducing_switch(const Request& req) {
  const core::Topology* t = req.topology;
  if (t == nullptr || t->is_full_mesh()) {
    return {};
  }
  for (core::DeviceId d : t->reducing_switches()) {
    const core::Device& dev = t->devices()[d];
    if (dev.kind == core::DeviceKind::network_switch) {
      return dev.name;
    }
  }
  return {};
}

OpCounts linear_rooted_counts(std::uint32_t p) {
  if (p < 2) {
    return {};
  }
  const std::uint64_t pp = p;
  return {2 * (pp - 1), pp - 2};
}

core::Schedule linear_rooted(const Request& req, const char* name, bool to_root) {
  const std::uint32_t p = req.ranks;
  const core::Rank root = req.root;
  core::Schedule s(make_header(req, 0, name));
  const OpCounts counts = linear_rooted_counts(p);
  s.reserve(counts.ops, counts.deps);
  if (p < 2) {
    s.finish();
    return s;
  }
  const core::BlockLayout lay(s.header());
  const auto block = [&](core::Rank q) {
    const auto [offset, len] = lay.block(q);
    return data_range(offset, len);
  };
  // gatherv / scatterv (Open MPI coll/basic gatherv and scatterv): a zero count moves no message
  // either way. The uniform collectives keep their zero-byte messages (n < p).
  const auto skipped = [&](core::Rank q) { return lay.varying() && lay.block(q).second == 0; };
  std::array<std::uint32_t, 1> dep{};
  for (core::Rank r = 0; r < p; ++r) {
    s.begin_rank(r);
    if (r != root) {
      if (!skipped(r)) {
        add_op(s, to_root ? core::OpKind::send : core::OpKind::recv, root, block(r), {});
      }
      continue;
    }
    bool first = true;
    for (core::Rank q = 0; q < p; ++q) {
      if (q != root && !skipped(q)) {
        dep[0] = add_op(s, to_root ? core::OpKind::recv : core::OpKind::send, q, block(q),
                        std::span(dep.data(), first ? 0 : 1));
        first = false;
      }
    }
  }
  s.finish();
  return s;
}

OpCounts block_ring_counts(std::uint32_t p) {
  if (p < 2) {
    return {};
  }
  const std::uint64_t pp = p;
  return {2 * pp * (pp - 1), pp * (pp - 2)};
}

core::Schedule block_ring_pass(const Request& req, const char* name, Arrive how) {
  const std::uint32_t p = req.ranks;
  core::Schedule s(make_header(req, 0, name));
  const OpCounts counts = collapsed_counts(block_ring_counts(p), req);
  s.reserve(counts.ops, counts.deps);
  if (p < 2) {
    s.finish();
    return s;
  }
  // Blocks at their counts for allgatherv and MPI_Reduce_scatter (core::BlockLayout): the ring
  // moves a zero-count block as a zero-byte message, as Open MPI's allgatherv and
  // reduce_scatter rings do (their sendrecv does not skip it).
  const core::BlockLayout lay(s.header());
  const auto block = [&](std::uint32_t b) {
    const auto [offset, length] = lay.block(b);
    return data_range(offset, length);
  };
  const auto before = [p](std::uint32_t b) { return b == 0 ? p - 1 : b - 1; };
  // The ring runs over positions; position i holds rank sigma[i] and that rank's block, so the
  // collective's result is the same for any order (block r stays rank r's).
  const auto order = req.params.find("order");
  std::vector<core::Rank> sigma(p);
  if (order != req.params.end() && order->second == kRingOrderRenamed) {
    sigma = renamed_ring_order(req);
  } else {
    std::iota(sigma.begin(), sigma.end(), core::Rank{0});
  }
  std::vector<std::uint32_t> position(p);
  for (std::uint32_t i = 0; i < p; ++i) {
    position[sigma[i]] = i;
  }
  std::array<std::uint32_t, 1> dep{};
  // Every rank, or the representatives of a collapsed request (block_ring_symmetry).
  for (core::Rank r = 0; r < s.ranks(); ++r) {
    s.begin_rank(r);
    const std::uint32_t i = position[r];
    const core::Rank next = sigma[i + 1 == p ? 0 : i + 1];
    const core::Rank prev = sigma[before(i)];
    std::uint32_t send_pos = how == Arrive::store ? i : before(i);
    for (std::uint32_t step = 0; step + 1 < p; ++step) {
      const std::uint32_t recv_pos = before(send_pos);
      // Send at local 2s, receive at 2s + 1: step s forwards what step s-1 received (or combined).
      dep[0] = step == 0 ? 0 : 2 * step - 1;
      add_op(s, core::OpKind::send, next, block(sigma[send_pos]),
             std::span(dep.data(), step == 0 ? 0 : 1));
      add_op(s, receive_kind(how), prev, block(sigma[recv_pos]), {});
      send_pos = recv_pos;
    }
  }
  s.finish();
  return s;
}

Symmetry block_ring_symmetry(const Request& req) {
  // In rank order with equal blocks, rank r's pass is rank 0's moved by r (the renamed order
  // and unequal blocks set ranks apart).
  const auto order = req.params.find("order");
  const bool renamed = order != req.params.end() && order->second == kRingOrderRenamed;
  const bool equal = req.ranks >= 2 && req.counts.empty() && req.bytes.value % req.ranks == 0;
  return {equal && !renamed ? core::SymmetryKind::rotation : core::SymmetryKind::none};
}

ParamSpec ring_order_param() {
  return {"order",
          kRingOrderRank,
          kRingOrderRank,
          kRingOrderRenamed,
          "rank: the ring r -> r+1; renamed: the placement's ranks node by node, in slot order "
          "within a node (each node boundary crossed once)",
          {"rank", "renamed"}};
}

std::optional<CostTerms> block_ring_cost(const Request& req, Arrive how) {
  const std::uint64_t p = req.ranks;
  const std::uint64_t n = req.bytes.value;
  if (p == 0 || n % p != 0 || !req.counts.empty()) {
    return std::nullopt; // unequal blocks: each step is paced by its largest block
  }
  const auto moved = static_cast<double>((p - 1) * (n / p)); // (p-1)/p n, exact: p divides n
  return CostTerms{static_cast<double>(p - 1), moved, how == Arrive::combine ? moved : 0.0};
}

} // namespace collsim::algorithms::detail
