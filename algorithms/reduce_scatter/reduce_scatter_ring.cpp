// Ring reduce-scatter (algorithms.md RS3): the first phase of the ring allreduce, shifted by one
// block so that rank r ends with the reduced block r.
//
// Source: P. Patarasuk and X. Yuan, "Bandwidth optimal all-reduce algorithms for clusters of
// workstations", JPDC 69(2), 2009; Open MPI ompi_coll_base_reduce_scatter_intra_ring (coll/tuned
// reduce_scatter algorithm 3); SMPI "ompi_ring".
//
// Cost (p divides n): (p-1)a + (p-1)/p n b + (p-1)/p n g, bandwidth-optimal. When p does not
// divide n the blocks differ by one byte and a step is paced by the largest block, so cost()
// declines.
//
// Schedule, rank r, blocks taken mod p: step s = 0..p-2: send block r-s-1 to r+1; recv_reduce
// block r-s-2 from r-1. The partial sum of block b starts at rank b+1 and collects one contribution
// a hop until it reaches rank b in step p-2. Received blocks are combined straight into `data`: no
// block is received while a send of the same block is pending, so no scratch buffer is needed.
// Zero-length messages (blocks shorter than p bytes) are kept, so the alpha term does not depend
// on n.
//
// Dependencies (2(p-1) operations, p-2 dependencies per rank): a send forwards the partial sum
// the previous step produced, so it waits for that recv_reduce. A recv_reduce combines into a
// block no earlier operation of this rank touched (its own contribution, not yet sent).

#include "generator_support.hpp"
#include "reduce_scatter/reduce_scatter_algorithms.hpp"

#include <array>

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
    std::uint32_t send_block = prev;
    for (std::uint32_t step = 0; step + 1 < p; ++step) {
      const std::uint32_t recv_block = before(send_block);
      // Send at local 2s, recv_reduce at 2s + 1: step s forwards what step s-1 combined.
      dep[0] = step == 0 ? 0 : 2 * step - 1;
      detail::add_op(s, OpKind::send, next, block(send_block),
                     std::span(dep.data(), step == 0 ? 0 : 1));
      detail::add_op(s, OpKind::recv_reduce, prev, block(recv_block), {});
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
  const std::uint64_t block = n / p;
  const auto moved = static_cast<double>((p - 1) * block); // (p-1)/p n, exact: p divides n
  return CostTerms{static_cast<double>(p - 1), moved, moved};
}

} // namespace

AlgorithmInfo describe_reduce_scatter_ring() {
  AlgorithmInfo a;
  a.name = kName;
  a.collective = core::CollectiveKind::reduce_scatter;
  a.summary = "partial sums travel p-1 hops around the ring, each rank adding its contribution";
  a.source = "Patarasuk & Yuan, JPDC 2009; Open MPI ompi_coll_base_reduce_scatter_intra_ring";
  a.aliases = {"ompi:3", "ompi:ring", "smpi:ompi_ring"};
  a.constraints = {"commutative operation only (ranks combine in ring order)"};
  a.check = [](const Request& req) { return detail::size_limit_refusal(ring_counts(req.ranks)); };
  a.generate = generate_ring;
  a.cost = ring_cost;
  a.cost_formula = "(p-1)a + (p-1)/p n b + (p-1)/p n g (exact when p divides n)";
  return a;
}

} // namespace collsim::algorithms
