// Tree barrier (algorithms.md BA6): a binomial fan-in to rank 0, then the mirror-image fan-out.
//
// Source: Open MPI ompi_coll_base_barrier_intra_tree (coll/tuned barrier algorithm 6); SMPI
// "ompi_tree".
//
// Cost: 2 lg p a for p a power of two, exact: rank 0 hears from its subtrees after 1, 2, ..., lg p
// latencies, and the release reaches rank p-1 after lg p more. For other p the subtrees are
// uneven and cost() declines (the textbook bound is 2 ceil(lg p) a).
//
// Schedule (Open MPI, exactly), with partner = r XOR jump taken only when partner < p and its low
// bits below jump are zero:
//   fan-in,  jump = 1, 2, ..., p'/2 (p' = bit_ceil(p)): receive from a higher partner, or send to a
//            lower one (and stop receiving).
//   fan-out, jump = p'/2, ..., 1: send to a higher partner, or receive from a lower one.
// Dependencies: every operation but a rank's first waits for the one before it (Open MPI's calls
// are blocking), except that the release sends all wait for the release receive (rank 0: for its
// last check-in), so what a rank has heard travels on.

#include "barrier/barrier_algorithms.hpp"
#include "generator_support.hpp"

#include <array>
#include <bit>

namespace collsim::algorithms {
namespace {

using detail::OpCounts;

constexpr const char* kName = "tree";

OpCounts tree_counts(std::uint32_t p) {
  if (p < 2) {
    return {};
  }
  const std::uint64_t pp = p;
  // Four operations per tree edge; each depends on one other, except every rank's first.
  return {4 * (pp - 1), 4 * (pp - 1) - pp};
}

/// Open MPI's partner rule: r XOR jump, if it exists and its bits below jump are zero.
bool is_partner(core::Rank partner, std::uint32_t jump, std::uint32_t p) {
  return (partner & (jump - 1)) == 0 && partner < p;
}

core::Schedule generate_tree(const Request& req) {
  const std::uint32_t p = req.ranks;
  core::Schedule s(make_header(req, 0, kName));
  const OpCounts counts = tree_counts(p);
  s.reserve(counts.ops, counts.deps);
  if (p < 2) {
    s.finish();
    return s;
  }
  const core::Range none = detail::data_range(0, 0);
  const std::uint32_t depth = std::bit_ceil(p);
  std::array<std::uint32_t, 1> dep{};
  for (core::Rank r = 0; r < p; ++r) {
    s.begin_rank(r);
    std::size_t known = 0; // 1 once dep[0] holds the last operation
    for (std::uint32_t jump = 1; jump < depth; jump <<= 1) {
      const core::Rank partner = r ^ jump;
      if (!is_partner(partner, jump, p)) {
        continue;
      }
      const core::OpKind kind = partner > r ? core::OpKind::recv : core::OpKind::send;
      dep[0] = detail::add_op(s, kind, partner, none, std::span(dep.data(), known));
      known = 1;
    }
    for (std::uint32_t jump = depth >> 1; jump > 0; jump >>= 1) {
      const core::Rank partner = r ^ jump;
      if (!is_partner(partner, jump, p)) {
        continue;
      }
      if (partner > r) {
        detail::add_op(s, core::OpKind::send, partner, none, dep);
      } else {
        dep[0] = s.recv(partner, none, {dep[0]});
      }
    }
  }
  s.finish();
  return s;
}

std::optional<CostTerms> tree_cost(const Request& req) {
  if (!std::has_single_bit(req.ranks)) {
    return std::nullopt;
  }
  return CostTerms{2.0 * detail::floor_log2(req.ranks), 0.0, 0.0};
}

} // namespace

AlgorithmInfo describe_barrier_tree() {
  AlgorithmInfo a;
  a.name = kName;
  a.collective = core::CollectiveKind::barrier;
  a.summary = "binomial fan-in to rank 0, then binomial fan-out";
  a.source = "Open MPI ompi_coll_base_barrier_intra_tree";
  a.aliases = {"ompi:6", "ompi:tree", "smpi:ompi_tree"};
  a.check = [](const Request& req) { return detail::size_limit_refusal(tree_counts(req.ranks)); };
  a.generate = generate_tree;
  a.cost = tree_cost;
  a.cost_formula = "2 lg p a (exact when p is a power of two)";
  return a;
}

} // namespace collsim::algorithms
