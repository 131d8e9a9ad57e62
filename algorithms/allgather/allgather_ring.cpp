// Ring allgather (algorithms.md AG4): every block travels p-1 hops around the ring r -> r+1.
//
// Source: R. Thakur, R. Rabenseifner and W. Gropp, "Optimization of collective communication
// operations in MPICH", IJHPCA 19(1), 2005; MPICH MPIR_Allgather_intra_ring; Open MPI
// ompi_coll_base_allgather_intra_ring (coll/tuned allgather algorithm 4); SMPI "NTSLR" and
// "NTSLR_NB" (the same neighbour ring, blocking and non-blocking).
//
// Cost (p divides n): (p-1)a + (p-1)/p n b. When p does not divide n the blocks differ by one byte
// (block_range) and a step is paced by the largest block in flight, so cost() declines.
//
// Schedule, rank r, blocks taken mod p: step s = 0..p-2: send block r-s to r+1; recv block r-s-1
// from r-1, straight into its final place in `data` (no scratch buffer). Blocks shorter than p
// bytes may be empty; their zero-length messages are kept on both sides, as MPICH sends them, so
// the schedule's shape (and its alpha term) does not depend on n.
//
// Dependencies (2(p-1) operations, p-2 dependencies per rank): a send forwards the block the
// previous step received, so it waits for that receive. A receive writes a block this rank has
// never touched before, so it waits for nothing.

#include "allgather/allgather_algorithms.hpp"
#include "generator_support.hpp"

#include <array>
#include <vector>

namespace collsim::algorithms {
namespace {

using core::OpKind;
using detail::OpCounts;

constexpr const char* kName = "ring";

OpCounts ring_counts(std::uint32_t p) {
  if (p < 2) {
    return {};
  }
  const std::uint64_t pp = p;
  return {2 * pp * (pp - 1), pp * (pp - 2)};
}

core::Schedule generate_ring(const Request& req) {
  const std::uint32_t p = req.ranks;
  const std::uint64_t n = req.bytes.value;
  core::Schedule s(make_header(req, 0, kName));
  const OpCounts counts = ring_counts(p);
  s.reserve(counts.ops, counts.deps);
  if (p < 2) {
    s.finish();
    return s;
  }
  const auto block = [&](std::uint32_t b) {
    const auto [offset, length] = core::block_range(n, p, b);
    return detail::data_range(offset, length);
  };
  const auto before = [p](std::uint32_t b) { return b == 0 ? p - 1 : b - 1; };

  std::array<std::uint32_t, 1> dep{};
  for (core::Rank r = 0; r < p; ++r) {
    s.begin_rank(r);
    const core::Rank next = r + 1 == p ? 0 : r + 1;
    const core::Rank prev = before(r);
    std::uint32_t send_block = r;
    for (std::uint32_t step = 0; step + 1 < p; ++step) {
      const std::uint32_t recv_block = before(send_block);
      // Send at local 2s, receive at 2s + 1: step s forwards what step s-1 received.
      dep[0] = step == 0 ? 0 : 2 * step - 1;
      detail::add_op(s, OpKind::send, next, block(send_block),
                     std::span(dep.data(), step == 0 ? 0 : 1));
      detail::add_op(s, OpKind::recv, prev, block(recv_block), {});
      send_block = recv_block;
    }
  }
  s.finish();
  return s;
}

std::optional<CostTerms> ring_cost(const Request& req) {
  const std::uint64_t p = req.ranks;
  const std::uint64_t n = req.bytes.value;
  if (p == 0 || n % p != 0) {
    return std::nullopt;
  }
  const std::uint64_t block = n / p; // exact: p divides n
  return CostTerms{static_cast<double>(p - 1), static_cast<double>((p - 1) * block), 0.0};
}

} // namespace

AlgorithmInfo describe_allgather_ring() {
  AlgorithmInfo a;
  a.name = kName;
  a.collective = core::CollectiveKind::allgather;
  a.summary = "each rank forwards the block it received last to its right neighbour, p-1 steps";
  a.source = "Thakur, Rabenseifner & Gropp, IJHPCA 2005; MPICH MPIR_Allgather_intra_ring; Open MPI "
             "ompi_coll_base_allgather_intra_ring";
  a.aliases = {"ompi:4", "ompi:ring", "mpich:ring", "smpi:NTSLR", "smpi:NTSLR_NB"};
  a.check = [](const Request& req) { return detail::size_limit_refusal(ring_counts(req.ranks)); };
  a.generate = generate_ring;
  a.cost = ring_cost;
  a.cost_formula = "(p-1)a + (p-1)/p n b (exact when p divides n)";
  return a;
}

} // namespace collsim::algorithms
