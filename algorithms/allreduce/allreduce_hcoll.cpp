// HCOLL's hierarchical allreduce (the `hpcx` stack's choice, docs/stacks.md): the message cut
// into payload-buffer fragments, a few in flight; each fragment reduced up the node's shared
// memory to a leader, allreduced among the node leaders over the network, and broadcast back down.
//
// Source: HCOLL is the library form of the Cheetah framework that Open MPI 1.7-1.10 carried as
// coll/ml with bcol/basesmuma, bcol/ptpcoll and sbgp/basesmuma (ORNL and Mellanox; HCOLL keeps
// the HCOLL_BCOL / HCOLL_SBGP names, NVIDIA HPC-X documentation "HCOLL"). From Open MPI v1.8.8:
//   - coll_ml_hier_algorithms_allreduce_setup.c: per hierarchy level going up a REDUCE to the
//     level's leader, at the top level an ALLREDUCE, going down a BCAST;
//   - coll_ml_allreduce.c: messages larger than a payload buffer are fragmented, at most
//     pipeline_depth fragments active; coll_ml_mca.c: payload_buffer_size 4096, pipeline_depth 2;
//   - bcol_basesmuma: the reduction tree of order 2 (order_reduction_tree), the fan-out read tree
//     of radix 3 (radix_read_tree, k_nomial_radix); the peers poll flags in a shared segment and
//     read the payload in place, with no MPI matching (the generated schedule says so through
//     its protocol's intra_node_overhead of 0: a step costs the route's latency, one cache line
//     moving between cores, and its data time);
//   - bcol_ptpcoll_allreduce.c: recursive k-ing with k_nomial_radix 2 (recursive doubling, extra
//     ranks folded in) among the leaders.
//
//   - sbgp_base_frame.c: the default subgroups "basesmsocket,basesmuma,ibnet,p2p": a socket's
//     ranks, then a node's socket leaders, then the node leaders over the network.
//
// Schedule: fragments f = 0, 1, ... of `fragment` bytes (the last shorter); fragment f composed
// (compose.hpp) of binary-tree reduces inside every socket to its lowest rank and among every
// node's socket leaders to the node's lowest rank, recursive doubling among the node leaders, and
// k-nomial bcasts of radix `fanout_radix` back down the node's socket leaders and every socket,
// in lane f mod depth: on each rank a fragment starts when the fragment `depth` before it has
// finished there. A core's socket is its device's host (system topologies); without one a node
// is one group; without a topology every rank is a node of its own: fragmented recursive
// doubling.
//
// Cost (not exact, no closed form): per fragment of s bytes on N nodes of q ranks,
// log2(q) (L_shm + s g) + log2(N) (a + s b + s g) + log3(q) (L_shm + s b_shm); about
// ceil(n / s) / depth fragment times once the pipeline is full.

#include "allreduce/allreduce_algorithms.hpp"
#include "bcast/bcast_algorithms.hpp"
#include "bcast/bcast_reduce_trees.hpp"
#include "compose.hpp"
#include "reduce/reduce_algorithms.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <vector>

namespace collsim::algorithms {
namespace {

constexpr const char* kName = "hcoll";
constexpr std::int64_t kFragment = 4096; // coll/ml payload_buffer_size
constexpr std::int64_t kDepth = 2;       // coll/ml pipeline_depth
constexpr std::int64_t kFanoutRadix = 3; // bcol/basesmuma radix_read_tree
/// Fragments of one call the generator accepts (a 1 GiB message in 4 KiB buffers).
constexpr std::uint64_t kMaxFragments = std::uint64_t{1} << 18;

/// HCOLL's subgroups below the network (sbgp "basesmsocket,basesmuma": the ranks of a socket,
/// then the socket leaders of a node), each ascending with its leader (lowest rank) first. On a
/// topology whose cores do not name their socket, every node is one group.
struct Hierarchy {
  std::vector<std::vector<core::Rank>> sockets; ///< per socket with more than one rank
  std::vector<std::vector<core::Rank>> nodes;   ///< per node: its socket leaders
  std::vector<core::Rank> leaders;              ///< per node: its lowest rank
};

Hierarchy hierarchy(const Request& req) {
  const detail::NodeLayout layout = detail::node_layout(req);
  Hierarchy h;
  h.leaders = compose::leaders(layout, 0);
  for (const auto& members : layout.members) {
    std::map<core::DeviceId, std::vector<core::Rank>> by_socket; // ordered by first rank below
    std::vector<core::DeviceId> order;
    for (const core::Rank r : members) {
      const core::DeviceId socket = req.topology != nullptr && !req.topology->is_full_mesh()
                                        ? req.topology->devices()[req.topology->device_of(r)].host
                                        : core::kNoDevice;
      auto [it, fresh] = by_socket.try_emplace(socket);
      if (fresh) {
        order.push_back(socket);
      }
      it->second.push_back(r);
    }
    std::vector<core::Rank> socket_leaders;
    for (const core::DeviceId socket : order) {
      const auto& group = by_socket.at(socket);
      socket_leaders.push_back(group.front());
      if (group.size() > 1) {
        h.sockets.push_back(group);
      }
    }
    h.nodes.push_back(std::move(socket_leaders));
  }
  return h;
}

compose::Plan plan_hcoll(const Request& req) {
  compose::Plan out(req.ranks);
  const Hierarchy h = hierarchy(req);
  const std::uint64_t n = req.bytes.value;
  const auto fragment = static_cast<std::uint64_t>(detail::param_or(req, "fragment", kFragment));
  const auto depth = static_cast<std::uint32_t>(detail::param_or(req, "depth", kDepth));
  const std::int64_t radix = detail::param_or(req, "fanout_radix", kFanoutRadix);
  if (n > 0 && (n + fragment - 1) / fragment > kMaxFragments) {
    out.refusal =
        fmt::format("{} B in {} B fragments is more than {} fragments", n, fragment, kMaxFragments);
    return out;
  }
  compose::Level up("reduce", describe_reduce_binary(), {});
  compose::Level top("allreduce", describe_recursive_doubling(), {});
  compose::Level down("bcast", describe_bcast_knomial(), {{"radix", radix}});
  compose::place_segments(
      out, n, fragment, depth,
      [&](std::uint64_t at, std::uint64_t len, std::uint32_t lane, std::uint64_t tmp) {
        const auto place = [&](compose::Level& level, const std::vector<core::Rank>& ranks) {
          return compose::place(out, level, ranks, len, 0, at, tmp, {}, lane);
        };
        const auto place_all = [&](compose::Level& level,
                                   const std::vector<std::vector<core::Rank>>& groups) {
          return std::all_of(groups.begin(), groups.end(),
                             [&](const std::vector<core::Rank>& g) { return place(level, g); });
        };
        // Up the sockets and the nodes, across the network, down the nodes and the sockets.
        return place_all(up, h.sockets) && place_all(up, h.nodes) && place(top, h.leaders) &&
               place_all(down, h.nodes) && place_all(down, h.sockets);
      });
  return out;
}

} // namespace

AlgorithmInfo describe_allreduce_hcoll() {
  AlgorithmInfo a;
  a.name = kName;
  a.collective = core::CollectiveKind::allreduce;
  a.summary = "HCOLL's hierarchical allreduce: payload-buffer fragments (two in flight), each "
              "reduced up binary trees in shared memory (each socket, then the node's socket "
              "leaders), recursive doubling among node leaders, broadcast down radix-3 trees";
  a.source = "HCOLL (HPC-X) as Open MPI v1.8.8 coll/ml + bcol/basesmuma + bcol/ptpcoll "
             "(coll_ml_hier_algorithms_allreduce_setup.c, coll_ml_allreduce.c, coll_ml_mca.c, "
             "bcol_basesmuma_component.c, bcol_ptpcoll_allreduce.c, sbgp_base_frame.c)";
  a.aliases = {"hcoll:allreduce"};
  a.params = {{"fragment", kFragment, 1, std::int64_t{1} << 30,
               "payload buffer bytes per fragment (coll/ml payload_buffer_size, default 4096)"},
              {"depth", kDepth, 1, 32, "fragments in flight (coll/ml pipeline_depth, default 2)"},
              {"fanout_radix", kFanoutRadix, 2, 64,
               "radix of the shared-memory broadcast tree (basesmuma radix_read_tree, default 3)"}};
  a.constraints = {"commutative operations only (the fan-in reduces children in arrival order)"};
  compose::set_composed(a, plan_hcoll);
  // basesmuma's peers poll flags in shared memory: no MPI send/receive overhead inside a node.
  detail::over_shared_memory_flags(a);
  a.cost_formula = "per s-byte fragment: log2(q) (L_shm + s g) + log2(N) (a + s b + s g) + "
                   "log3(q) (L_shm + s b_shm); ceil(n/s)/depth fragments once the pipeline is full "
                   "(not exact)";
  return a;
}

} // namespace collsim::algorithms
