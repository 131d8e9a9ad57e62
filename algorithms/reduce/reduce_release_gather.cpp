// MPICH's shared-memory reduce (ch4 POSIX "release_gather", the gather step): inside a node every
// rank owns cells of a shared reduce buffer; a rank waits for its children's flags, reduces their
// cells into its own, and raises its flag for its parent, chunk by chunk.
//
// Source: MPICH v4.2.3 src/mpid/ch4/shm/posix/release_gather/release_gather.c (the gather step,
// MPIDI_POSIX_mpi_release_gather_gather; cvars MPIR_CVAR_REDUCE_INTRANODE_TREE_TYPE kary,
// MPIR_CVAR_REDUCE_INTRANODE_TREE_KVAL 4, MPIR_CVAR_REDUCE_INTRANODE_BUFFER_TOTAL_SIZE 32768 in
// MPIR_CVAR_REDUCE_INTRANODE_NUM_CELLS 4 cells) and posix_coll_release_gather.h (the chunk loop
// MPIR_Algo_calculate_pipeline_chunk_info over cells of TOTAL_SIZE / NUM_CELLS = 8 KiB);
// maint/tuning/coll/ch4/posix_generic.json selects it for commutative reductions.
//
// Tree: MPIR_Treealgo's k-ary tree on relative ranks l = (r - root) mod p: parent (l - 1) / k,
// children l k + 1 .. l k + k (< p), the same shape as bcast `tree`.
// Schedule: the generic segmented tree reduce (bcast_reduce_trees.hpp) on that tree in `cell`
// byte segments, each child's segment read from its own cell (one scratch vector per child).
// The peers poll flags and read the payload in place, with no MPI matching: the protocol's
// intra_node_overhead is 0 (a step costs the route's latency and its data time), as for HCOLL's
// basesmuma (allreduce_hcoll.cpp).
//
// Cost (not exact, no closed form): about (h + K - 1)(L + k c g + c b) for K cells of c bytes
// down a k-ary tree of height h.

#include "bcast/bcast_reduce_trees.hpp"
#include "reduce/reduce_algorithms.hpp"

namespace collsim::algorithms {
namespace {

constexpr const char* kName = "release_gather";
constexpr std::int64_t kRadix = 4;   // MPIR_CVAR_REDUCE_INTRANODE_TREE_KVAL
constexpr std::int64_t kCell = 8192; // 32768 B buffer / 4 cells

std::uint32_t radix_of(const Request& req) {
  return static_cast<std::uint32_t>(detail::param_or(req, "radix", kRadix));
}
std::uint64_t cell_of(const Request& req) {
  return static_cast<std::uint64_t>(detail::param_or(req, "cell", kCell));
}

} // namespace

AlgorithmInfo describe_reduce_release_gather() {
  AlgorithmInfo a;
  a.name = kName;
  a.collective = core::CollectiveKind::reduce;
  a.summary = "MPICH's shared-memory reduce: 8 KiB cells reduced up a k-ary tree (k = 4), each "
              "rank reading its children's cells in place";
  a.source = "MPICH v4.2.3 ch4 POSIX release_gather (release_gather.c, "
             "posix_coll_release_gather.h; maint/tuning/coll/ch4/posix_generic.json)";
  a.aliases = {"mpich:release_gather"};
  a.params = {{"radix", kRadix, 2, 1024,
               "k: children per rank (MPIR_CVAR_REDUCE_INTRANODE_TREE_KVAL, default 4)"},
              {"cell", kCell, 1, std::int64_t{1} << 30,
               "bytes per cell, the pipeline chunk (MPIR_CVAR_REDUCE_INTRANODE_BUFFER_TOTAL_SIZE "
               "/ NUM_CELLS, default 8192)"}};
  a.constraints = {"commutative operation", "ranks sharing one node's memory (the engines price "
                                            "it anywhere, as point-to-point messages)"};
  a.check = [](const Request& req) {
    const std::uint32_t k = radix_of(req);
    return detail::size_limit_refusal(detail::tree_reduce_counts(
        req.ranks, req.root, detail::segment_count(req.bytes.value, cell_of(req)), k,
        detail::heap_kary_tree(k)));
  };
  a.generate = [](const Request& req) {
    const std::uint32_t k = radix_of(req);
    return detail::generate_tree_reduce(req, kName, detail::heap_kary_tree(k), cell_of(req), k);
  };
  detail::over_shared_memory_flags(a); // flags and cells in shared memory
  a.cost = [](const Request&) { return std::optional<CostTerms>{}; };
  a.cost_formula = "about (h + K - 1)(L + k c g + c b), K = ceil(n/c) cells of c bytes, h the "
                   "k-ary tree's height (approximate: no exact form)";
  return a;
}

} // namespace collsim::algorithms
