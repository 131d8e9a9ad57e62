// Bine tree broadcast (algorithms.md AR23, "To implement"): the first-contact spanning tree of the
// Swing butterfly, run with distances shrinking.
//
// Source: the Bine paper ("binomial negabinary" trees, SC'25) by the authors of Swing (De Sensi,
// Bonato, Saam & Hoefler, NSDI'24). algorithms.md summarises its bcast as "rank r receives at step
// s - u, where u is the number of equal trailing bits of rank2nb(r)"; building the tree as below
// reproduces exactly that for p = 2^L (for p = 8: relative rank 3 = 111 in negabinary receives
// first, 4 = 100 and 7 = 011 next, 1, 2, 5, 6 last; bcast_bine_test checks it up to p = 128).
//
// Tree, over relative ranks v = (r - root) mod p, with p' = 2^floor(lg p) and L = lg p':
//   for s = L-1 down to 0, every v < p' that holds the vector sends it to pi(v, s) (mod p'), where
//   pi(v, s) = v + rho(s) if v is even, v - rho(s) if odd, rho(s) = 1, -1, 3, -5, 11, ...
//   (allreduce/swing_support.hpp). In a butterfly the holders after steps L-1..s+1 are one group of
//   2^(L-1-s) ranks and step s maps it onto another group, so every holder sends in every later
//   step and every rank receives exactly once (the generator checks it): the same shape as the
//   binomial tree (a rank reached in step t has children in steps t-1..0, the biggest subtree
//   first), with the root's first message going |rho(L-1)| ~ p/3 away instead of p/2 and the
//   distances shrinking as 2^(s+1)/3, which is what saves global links on Dragonfly, fat tree and
//   torus in the paper.
//   Other p (the fold of algorithms.md 1.10 item 2): the ranks v >= p' receive from v - p' after
//   that rank has served its tree children, one extra step, ceil(lg p) in all.
// Each rank receives the whole vector into data and forwards it; each send waits for the receive
// (generate_tree_bcast, unsegmented).
//
// Cost: p = 2^k: lg p a + lg p n b, exact on the loggp engine as for the binomial tree (same
// shape: the rank reached last is lg p hops away and every hop is its sender's next message). For
// other p the extra step overlaps with the tree and cost() declines.

#include "allreduce/swing_support.hpp"
#include "bcast/bcast_algorithms.hpp"
#include "bcast/bcast_reduce_trees.hpp"

#include <bit>
#include <memory>
#include <string>
#include <vector>

namespace collsim::algorithms {
namespace {

constexpr const char* kName = "bine";

/// The tree over relative ranks 0..p-1: each rank's parent and children in send order.
struct BineTree {
  std::vector<std::uint32_t> parent; // relative; the root's entry is unused
  std::vector<std::vector<std::uint32_t>> children;
};

std::shared_ptr<const BineTree> build_bine_tree(std::uint32_t p) {
  auto tree = std::make_shared<BineTree>();
  tree->parent.assign(p, 0);
  tree->children.resize(p);
  if (p < 2) {
    return tree;
  }
  const std::uint32_t pof2 = std::bit_floor(p);
  const std::uint32_t levels = detail::floor_log2(p);
  std::vector<bool> has(pof2, false);
  std::vector<std::uint32_t> holders{0};
  holders.reserve(pof2);
  has[0] = true;
  for (std::uint32_t s = levels; s-- > 0;) {
    const std::size_t count = holders.size();
    for (std::size_t i = 0; i < count; ++i) {
      const std::uint32_t v = holders[i];
      const std::uint32_t q = detail::swing_peer(v, s, pof2);
      if (has[q]) {
        throw core::InternalError("bine: rank " + std::to_string(q) + " of " +
                                  std::to_string(pof2) + " would receive twice in step " +
                                  std::to_string(s));
      }
      has[q] = true;
      tree->parent[q] = v;
      tree->children[v].push_back(q);
      holders.push_back(q);
    }
  }
  if (holders.size() != pof2) {
    throw core::InternalError("bine: the first-contact tree misses ranks");
  }
  for (std::uint32_t v = pof2; v < p; ++v) {
    tree->parent[v] = v - pof2;
    tree->children[v - pof2].push_back(v);
  }
  return tree;
}

detail::TreeShape bine_shape(std::uint32_t p) {
  std::shared_ptr<const BineTree> tree = build_bine_tree(p);
  return [tree](std::uint32_t ranks, core::Rank root, core::Rank r, detail::TreeLinks& out) {
    const auto real = [&](std::uint32_t v) { return static_cast<core::Rank>((v + root) % ranks); };
    const std::uint32_t v = (r + ranks - root) % ranks;
    out.has_parent = v != 0;
    out.parent = out.has_parent ? real(tree->parent[v]) : 0;
    out.children.clear();
    for (const std::uint32_t c : tree->children[v]) {
      out.children.push_back(real(c));
    }
  };
}

std::optional<CostTerms> bine_cost(const Request& req) {
  if (!std::has_single_bit(req.ranks)) {
    return std::nullopt;
  }
  const auto rounds = static_cast<double>(detail::floor_log2(req.ranks));
  return CostTerms{rounds, rounds * static_cast<double>(req.bytes.value), 0.0};
}

} // namespace

AlgorithmInfo describe_bcast_bine() {
  AlgorithmInfo a;
  a.name = kName;
  a.collective = core::CollectiveKind::bcast;
  a.summary = "Bine tree: first-contact tree of the Swing butterfly, distances shrinking "
              "(~p/3, ..., 3, 1, 1)";
  a.source = "Bine trees (SC'25; De Sensi et al.), on the Swing peers of NSDI'24";
  a.constraints = {"other than a power of two: ranks 2^floor(lg p).. receive in one extra step"};
  a.check = [](const Request& req) {
    return detail::size_limit_refusal(
        detail::tree_bcast_counts(req.ranks, req.root, 1, bine_shape(req.ranks)));
  };
  a.generate = [](const Request& req) {
    return detail::generate_tree_bcast(req, kName, bine_shape(req.ranks), 0);
  };
  a.cost = bine_cost;
  a.cost_formula = "lg p a + lg p n b (exact when p is a power of two)";
  return a;
}

} // namespace collsim::algorithms
