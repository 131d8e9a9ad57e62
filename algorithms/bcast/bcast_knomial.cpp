// k-nomial tree broadcast (algorithms.md BC8).
//
// Source: Open MPI ompi_coll_base_bcast_intra_knomial (coll/tuned bcast algorithm 7) on
// ompi_coll_base_topo_build_kmtree; Open MPI's radix default (coll_tuned_bcast_knomial_radix) is
// 4. Radix 2 is the binomial tree.
//
// Cost, p = radix^L: L a + L (radix-1) n b, exact on the loggp engine: a rank sends to radix-1
// children per level back to back (their latencies overlap), and the rank reached last is the
// last-served child at every level. The textbook single-port form is L (radix-1)(a + n b). For
// other p the deepest path is shorter and cost() declines.
//
// Schedule, relative rank vr: the parent clears vr's lowest nonzero base-radix digit; a rank
// receives the vector from its parent into data, then sends it to vr + c radix^i for i from the
// level below that digit down to 0 and c = 1..radix-1. Each send waits for the receive.

#include "bcast/bcast_algorithms.hpp"
#include "bcast/bcast_reduce_trees.hpp"

namespace collsim::algorithms {
namespace {

constexpr const char* kName = "knomial";
constexpr std::int64_t kDefaultRadix = 4;

std::uint32_t radix_of(const Request& req) {
  return static_cast<std::uint32_t>(detail::param_or(req, "radix", kDefaultRadix));
}

std::optional<CostTerms> knomial_cost(const Request& req) {
  const std::uint64_t k = radix_of(req);
  std::uint64_t levels = 0;
  std::uint64_t size = 1;
  while (size < req.ranks) {
    size *= k;
    ++levels;
  }
  if (size != req.ranks) {
    return std::nullopt;
  }
  const auto sends = static_cast<double>(levels * (k - 1));
  return CostTerms{static_cast<double>(levels), sends * static_cast<double>(req.bytes.value), 0.0};
}

} // namespace

AlgorithmInfo describe_bcast_knomial() {
  AlgorithmInfo a;
  a.name = kName;
  a.collective = core::CollectiveKind::bcast;
  a.summary = "k-nomial tree: radix-1 children per level, largest subtrees first";
  a.source = "Open MPI ompi_coll_base_bcast_intra_knomial (ompi_coll_base_topo_build_kmtree)";
  // ucc:knomial: UCC tl/ucp's bcast below 32 KiB (bcast_knomial.c, radix 4).
  a.aliases = {"ompi:7", "ompi:knomial", "ucc:knomial"};
  a.params = {{"radix", kDefaultRadix, 2, 1024, "tree radix k (2: binomial)"}};
  a.check = [](const Request& req) {
    return detail::size_limit_refusal(detail::tree_bcast_counts(
        req.ranks, req.root, 1, detail::knomial_tree(radix_of(req), true)));
  };
  a.generate = [](const Request& req) {
    return detail::generate_tree_bcast(req, kName, detail::knomial_tree(radix_of(req), true), 0);
  };
  a.cost = knomial_cost;
  a.cost_formula = "log_k p a + log_k p (k-1) n b, k = radix (exact when p is a power of k)";
  return a;
}

} // namespace collsim::algorithms
