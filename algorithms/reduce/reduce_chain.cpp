// Segmented multi-chain reduce (algorithms.md RD2).
//
// Source: Open MPI ompi_coll_base_reduce_intra_chain (coll/tuned reduce algorithm 2) on
// ompi_coll_base_topo_build_chain: `chains` chains of consecutive relative ranks end at the root,
// which reduces the segment of every chain head in turn; Open MPI's generic reduce with two
// receive buffers. Defaults: fanout 4 (coll_tuned_reduce_chain_fanout), 64 KiB segments (SMPI
// "ompi_chain").
//
// Cost, f = min(chains, p-1), k = ceil(n/s): approximately (ceil((p-1)/f) + f(k-1))(a + s(b + g))
// [algorithms.md, derived]. The root serialises f receptions and reductions per segment while each
// chain forwards one, so the slots do not line up and no exact closed form is declared.
//
// Schedule: the generic segmented tree reduce on the chain tree: a chain rank receives each
// segment from its successor into tmp, reduces it into data and sends it towards the root; the
// root receives chain heads 0..f-1 alternately into two tmp vectors.

#include "bcast/bcast_reduce_trees.hpp"
#include "reduce/reduce_algorithms.hpp"

namespace collsim::algorithms {
namespace {

constexpr const char* kName = "chain";
constexpr std::int64_t kDefaultSegment = std::int64_t{64} << 10;
constexpr std::int64_t kDefaultChains = 4;
constexpr std::uint32_t kBuffers = 2;

std::uint64_t segment_of(const Request& req) {
  return static_cast<std::uint64_t>(detail::param_or(req, "segment_size", kDefaultSegment));
}
std::uint32_t chains_of(const Request& req) {
  return static_cast<std::uint32_t>(detail::param_or(req, "chains", kDefaultChains));
}

} // namespace

AlgorithmInfo describe_reduce_chain() {
  AlgorithmInfo a;
  a.name = kName;
  a.collective = core::CollectiveKind::reduce;
  a.summary = "`chains` pipelined chains of consecutive ranks end at the root, segment by segment";
  a.source = "Open MPI ompi_coll_base_reduce_intra_chain (ompi_coll_base_topo_build_chain)";
  a.aliases = {"ompi:2", "ompi:chain", "smpi:ompi_chain"};
  a.params = {{"chains", kDefaultChains, 1, 1024, "number of chains that end at the root (fanout)"},
              {"segment_size", kDefaultSegment, 0, std::int64_t{1} << 30,
               "bytes per pipeline segment (0: the whole vector in one message)"}};
  a.constraints = {"commutative operation", "chains is capped at p-1",
                   "the last segment is shorter when segment_size does not divide n"};
  a.check = [](const Request& req) {
    const std::uint64_t k = detail::segment_count(req.bytes.value, segment_of(req));
    return detail::size_limit_refusal(detail::tree_reduce_counts(
        req.ranks, req.root, k, kBuffers, detail::chain_tree(chains_of(req))));
  };
  a.generate = [](const Request& req) {
    return detail::generate_tree_reduce(req, kName, detail::chain_tree(chains_of(req)),
                                        segment_of(req), kBuffers);
  };
  a.cost = [](const Request&) { return std::optional<CostTerms>{}; };
  a.cost_formula = "about (ceil((p-1)/f) + f(k-1))(a + s b + s g), f = min(chains, p-1), "
                   "k = ceil(n/s) (approximate: no exact form)";
  return a;
}

} // namespace collsim::algorithms
