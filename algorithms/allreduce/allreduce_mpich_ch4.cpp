// MPICH 4's default allreduce on the ch4 device (the `mpich-4` stack's choice, docs/stacks.md):
// a shared-memory reduce inside each node, an allreduce among the node roots over the network,
// a shared-memory broadcast back; on a communicator inside one node, the shared-memory allreduce
// alone.
//
// Source: MPICH v4.2.3.
//   - maint/tuning/coll/ch4/generic.json (compiled in as the default selection,
//     maint/tuning/coll/json_gen.sh): a communicator of one node's size runs
//     MPIDI_Allreduce_intra_composition_gamma; the parent communicator with a commutative
//     operation runs composition_alpha (beta, the netmod's allreduce on every rank, is for
//     non-commutative operations);
//   - src/mpid/ch4/src/ch4_coll_impl.h: alpha = MPIDI_SHM_mpi_reduce on node_comm to local rank
//     0, MPIDI_NM_mpi_allreduce in place on node_roots_comm, MPIDI_SHM_mpi_bcast on node_comm;
//     gamma = MPIDI_SHM_mpi_allreduce;
//   - the shared-memory level, maint/tuning/coll/ch4/posix_generic.json: POSIX release_gather
//     (reduce `release_gather`: 8 KiB cells up a 4-ary tree; the bcast's release step: 8 KiB
//     cells down a 64-ary tree, MPIR_CVAR_BCAST_INTRANODE_TREE_KVAL 64 and
//     BCAST_INTRANODE_BUFFER_TOTAL_SIZE 32768 in 4 cells, release_gather.c), priced as bcast
//     `pipelined_tree` of radix 64 and 8 KiB chunks with no matching overhead;
//     gamma (posix_coll_release_gather.h) runs gather then release per 8 KiB chunk;
//   - the network level, MPIR_Allreduce_impl with maint/tuning/coll/mpir/generic.json: recursive
//     doubling up to 8 bytes or while the element count is below the leaders' power of two,
//     reduce_scatter_allgather (collsim's `rabenseifner`) above.
// The element size (parameter element_bytes, 4: osu_allreduce's MPI_FLOAT) decides the count.
//
// Schedule: alpha composed (compose.hpp) of release_gather reduces on every node of more than one
// rank, the network allreduce among the node leaders (local rank 0), the 64-ary bcasts; gamma as
// 8 KiB segments each reduced and broadcast (one segment at a time on a rank). Without a
// topology every rank is a node of its own: the network allreduce alone. All intra-node steps are
// flags and cells in shared memory: the schedule's protocol sets intra_node_overhead 0.
//
// Cost (not exact, no closed form): T_reduce,shm(q, n) + T_allreduce,net(N, n) + T_bcast,shm(q, n).

#include "allreduce/allreduce_algorithms.hpp"
#include "bcast/bcast_algorithms.hpp"
#include "bcast/bcast_reduce_trees.hpp"
#include "compose.hpp"
#include "reduce/reduce_algorithms.hpp"

#include <fmt/format.h>

#include <bit>

namespace collsim::algorithms {
namespace {

constexpr const char* kName = "mpich_ch4";
constexpr std::int64_t kCell = 8192;      // release_gather: 32768 B / 4 cells
constexpr std::int64_t kBcastRadix = 64;  // MPIR_CVAR_BCAST_INTRANODE_TREE_KVAL
constexpr std::int64_t kElementBytes = 4; // MPI_FLOAT
constexpr std::uint64_t kSmallBytes = 8;  // mpir/generic.json avg_msg_size<=8
constexpr std::uint64_t kMaxSegments = std::uint64_t{1} << 18;

/// MPIR_Allreduce_impl's default choice among `leaders` ranks (mpir/generic.json).
AlgorithmInfo network_allreduce(std::uint32_t leaders, std::uint64_t n, std::uint64_t element) {
  const std::uint64_t pof2 = leaders == 0 ? 1 : std::bit_floor(std::uint64_t{leaders});
  if (n <= kSmallBytes || n / element < pof2) {
    return describe_recursive_doubling();
  }
  return describe_rabenseifner();
}

compose::Plan plan_mpich_ch4(const Request& req) {
  compose::Plan out(req.ranks);
  const detail::NodeLayout layout = detail::node_layout(req);
  const std::uint64_t n = req.bytes.value;
  const std::int64_t cell = detail::param_or(req, "cell", kCell);
  const auto element =
      static_cast<std::uint64_t>(detail::param_or(req, "element_bytes", kElementBytes));
  compose::Level reduce("shm_reduce", describe_reduce_release_gather(), {{"cell", cell}});
  compose::Level bcast(
      "shm_bcast", describe_bcast_pipelined_tree(),
      {{"radix", detail::param_or(req, "bcast_radix", kBcastRadix)}, {"chunk_size", cell}});
  if (layout.nodes() == 1 && req.ranks > 1) {
    // composition_gamma: release_gather's allreduce, gather then release per cell.
    const auto c = static_cast<std::uint64_t>(cell);
    if (n > 0 && (n + c - 1) / c > kMaxSegments) {
      out.refusal = fmt::format("{} B in {} B cells is more than {} cells", n, c, kMaxSegments);
      return out;
    }
    const std::vector<core::Rank>& all = layout.members.front();
    compose::place_segments(
        out, n, c, 1,
        [&](std::uint64_t at, std::uint64_t len, std::uint32_t lane, std::uint64_t tmp) {
          return compose::place(out, reduce, all, len, 0, at, tmp, {}, lane) &&
                 compose::place(out, bcast, all, len, 0, at, tmp, {}, lane);
        });
    return out;
  }
  for (const auto& members : layout.members) {
    if (!compose::place(out, reduce, members, n, 0, 0, 0)) {
      return out;
    }
  }
  const std::vector<core::Rank> leaders = compose::leaders(layout, 0);
  compose::Level net("network", network_allreduce(layout.nodes(), n, element), {});
  if (!compose::place(out, net, leaders, n, 0, 0, out.composition.tmp_bytes())) {
    return out;
  }
  const std::uint64_t tmp = out.composition.tmp_bytes();
  for (const auto& members : layout.members) {
    if (!compose::place(out, bcast, members, n, 0, 0, tmp)) {
      return out;
    }
  }
  return out;
}

} // namespace

AlgorithmInfo describe_allreduce_mpich_ch4() {
  AlgorithmInfo a;
  a.name = kName;
  a.collective = core::CollectiveKind::allreduce;
  a.summary = "MPICH 4 ch4's default: shared-memory release_gather reduce in each node, "
              "recursive doubling or Rabenseifner among node roots, shared-memory broadcast back "
              "(one node: release_gather's allreduce)";
  a.source = "MPICH v4.2.3 src/mpid/ch4/src/ch4_coll_impl.h (composition_alpha, gamma), "
             "maint/tuning/coll/ch4/generic.json, posix_generic.json, mpir/generic.json, "
             "src/mpid/ch4/shm/posix/release_gather";
  a.aliases = {"mpich:composition_alpha", "mpich:composition_gamma"};
  a.params = {{"cell", kCell, 1, std::int64_t{1} << 30,
               "bytes per shared-memory cell (release_gather, default 8192)"},
              {"bcast_radix", kBcastRadix, 2, 1024,
               "k of the shared-memory bcast tree (MPIR_CVAR_BCAST_INTRANODE_TREE_KVAL, 64)"},
              {"element_bytes", kElementBytes, 1, 64,
               "datatype size: the count below the leaders' power of two selects recursive "
               "doubling (default 4, MPI_FLOAT)"}};
  a.constraints = {"commutative operations only (MPICH runs composition_beta otherwise)"};
  compose::set_composed(a, plan_mpich_ch4);
  detail::over_shared_memory_flags(a); // release_gather: flags and cells in shared memory
  a.cost_formula = "T_reduce,shm(q, n) + T_allreduce,net(N, n) + T_bcast,shm(q, n) (composition "
                   "alpha; one node: per 8 KiB cell a reduce and a bcast; not exact)";
  return a;
}

} // namespace collsim::algorithms
