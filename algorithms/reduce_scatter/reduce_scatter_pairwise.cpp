// Pairwise-exchange reduce-scatter (algorithms.md RS5): in step i = 1..p-1 rank r sends its
// contribution to block r+i to rank r+i and combines rank r-i's contribution to block r.
//
// Source: R. Thakur, R. Rabenseifner and W. Gropp, "Optimization of collective communication
// operations in MPICH", IJHPCA 19(1), 2005; MPICH MPIR_Reduce_scatter_intra_pairwise (MPICH's
// default for long commutative messages); SMPI "mpich_pair".
//
// Cost (p divides n): (p-1)a + (p-1)/p n b + (p-1)/p n g. With uneven blocks a step is paced by
// the larger of the two blocks in flight, so cost() declines.
//
// Schedule, rank r: step i = 1..p-1: send data[block r+i] to r+i; recv_reduce data[block r] from
// r-i. MPICH receives into a scratch block and then reduces; the fused recv_reduce costs the same
// and needs no scratch buffer. Zero-length messages (empty blocks) are kept.
//
// Dependencies (2(p-1) operations, 2(p-2) dependencies per rank): MPICH runs the steps as
// blocking sendrecvs, so the send of step i waits for the combination of step i-1 (without it all
// sends would leave at once, which is the direct algorithm, not this one); each recv_reduce writes
// block r, as the previous one did, so it waits for it.

#include "collsim/core/layout.hpp"
#include "generator_support.hpp"
#include "reduce_scatter/reduce_scatter_algorithms.hpp"

#include <array>

namespace collsim::algorithms {
namespace {

using core::OpKind;
using detail::OpCounts;

constexpr const char* kName = "pairwise";

OpCounts pairwise_counts(std::uint32_t p) {
  if (p < 2) {
    return {};
  }
  const std::uint64_t pp = p;
  return {2 * pp * (pp - 1), 2 * pp * (pp - 2)};
}

core::Schedule generate_pairwise(const Request& req) {
  const std::uint32_t p = req.ranks;
  core::Schedule s(make_header(req, 0, kName));
  const core::BlockLayout lay(s.header());
  const OpCounts counts = pairwise_counts(p);
  s.reserve(counts.ops, counts.deps);
  const auto block = [&](core::Rank b) {
    const auto [offset, length] = lay.block(b);
    return detail::data_range(offset, length);
  };

  std::array<std::uint32_t, 1> dep{};
  for (core::Rank r = 0; r < p; ++r) {
    s.begin_rank(r);
    for (std::uint64_t i = 1; i < p; ++i) {
      const auto to = static_cast<core::Rank>((r + i) % p);
      const auto from = static_cast<core::Rank>((r + p - i) % p);
      const std::span<const std::uint32_t> wait(dep.data(), i == 1 ? 0 : 1);
      detail::add_op(s, OpKind::send, to, block(to), wait);
      dep[0] = detail::add_op(s, OpKind::recv_reduce, from, block(r), wait);
    }
  }
  s.finish();
  return s;
}

std::optional<CostTerms> pairwise_cost(const Request& req) {
  if (!req.counts.empty()) {
    return std::nullopt;
  }
  const std::uint64_t p = req.ranks;
  const std::uint64_t n = req.bytes.value;
  if (p == 0 || n % p != 0) {
    return std::nullopt;
  }
  const std::uint64_t block = n / p;
  const auto moved = static_cast<double>((p - 1) * block); // (p-1)/p n, exact: p divides n
  return CostTerms{static_cast<double>(p - 1), moved, moved};
}

} // namespace

AlgorithmInfo describe_reduce_scatter_pairwise() {
  AlgorithmInfo a;
  a.name = kName;
  a.collective = core::CollectiveKind::reduce_scatter;
  a.summary = "p-1 steps: send block r+i to rank r+i, combine rank r-i's block r";
  a.source = "Thakur, Rabenseifner & Gropp, IJHPCA 2005; MPICH MPIR_Reduce_scatter_intra_pairwise";
  a.aliases = {"mpich:pairwise", "smpi:mpich_pair"};
  a.constraints = {"commutative operation only"};
  a.check = [](const Request& req) {
    return detail::size_limit_refusal(pairwise_counts(req.ranks));
  };
  a.counts = true; // MPI_Reduce_scatter's counts: MPICH MPIR_Reduce_scatter_intra_pairwise takes
                   // recvcounts
  a.generate = generate_pairwise;
  a.cost = pairwise_cost;
  a.cost_formula = "(p-1)a + (p-1)/p n b + (p-1)/p n g (exact when p divides n)";
  return a;
}

} // namespace collsim::algorithms
