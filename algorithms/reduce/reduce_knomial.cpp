// k-nomial tree reduce (algorithms.md RD8).
//
// Source: Open MPI ompi_coll_base_reduce_intra_knomial (coll/tuned reduce algorithm 8) on the
// k-nomial tree of ompi_coll_base_topo_build_kmtree; radix default 4 (MVAPICH2's and SMPI's
// knomial reduce factor). Radix 2 is the binomial tree.
//
// Cost: about ceil(log_k p)(k-1)(a + n b + n g) [algorithms.md]: the root receives and reduces
// radix-1 vectors per level, one after the other. Whether a child's subtree has finished by the
// time its parent turns to it depends on p and k, so no exact closed form is declared.
//
// Schedule, relative rank vr: the children vr + c radix^i (smallest subtrees first, which finish
// first) send their reduced vectors; the rank receives each into one of two scratch vectors,
// reduces it into data, and then sends data to its parent (vr with its lowest nonzero digit
// cleared).

#include "bcast/bcast_reduce_trees.hpp"
#include "reduce/reduce_algorithms.hpp"

namespace collsim::algorithms {
namespace {

constexpr const char* kName = "knomial";
constexpr std::int64_t kDefaultRadix = 4;
constexpr std::uint32_t kBuffers = 2;

std::uint32_t radix_of(const Request& req) {
  return static_cast<std::uint32_t>(detail::param_or(req, "radix", kDefaultRadix));
}

} // namespace

AlgorithmInfo describe_reduce_knomial() {
  AlgorithmInfo a;
  a.name = kName;
  a.collective = core::CollectiveKind::reduce;
  a.summary = "k-nomial tree: each rank reduces up to radix-1 children per level";
  a.source = "Open MPI ompi_coll_base_reduce_intra_knomial (ompi_coll_base_topo_build_kmtree)";
  a.aliases = {"ompi:8", "ompi:knomial"};
  a.params = {{"radix", kDefaultRadix, 2, 1024, "tree radix k (2: binomial)"}};
  a.constraints = {"commutative operation"};
  a.check = [](const Request& req) {
    return detail::size_limit_refusal(detail::tree_reduce_counts(
        req.ranks, req.root, 1, kBuffers, detail::knomial_tree(radix_of(req), false)));
  };
  a.generate = [](const Request& req) {
    return detail::generate_tree_reduce(req, kName, detail::knomial_tree(radix_of(req), false), 0,
                                        kBuffers);
  };
  a.cost = [](const Request&) { return std::optional<CostTerms>{}; };
  a.cost_formula =
      "about ceil(log_k p)(k-1)(a + n b + n g), k = radix (approximate: no exact form)";
  return a;
}

} // namespace collsim::algorithms
