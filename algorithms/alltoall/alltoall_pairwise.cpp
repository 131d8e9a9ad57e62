// Pairwise-exchange alltoall (algorithms.md AA2): p-1 steps; in step i rank r sends its block for
// rank r+i and receives rank r-i's block for it, one sendrecv per step.
//
// Source: Open MPI ompi_coll_base_alltoall_intra_pairwise (coll/tuned alltoall algorithm 2); MPICH
// MPIR_Alltoall_intra_pairwise; SMPI "pair" and "ring" (STAR-MPI's ring is this rotating
// sendrecv, algorithms.md 2.5). Open MPI's shift order (r+i, r-i) is used for every p; MPICH, and
// SMPI's pair (which needs a power of two), pair with r XOR i when p is a power of two: other
// partners, the same steps, messages and cost.
//
// Cost (b = n/p): (p-1)(a + b b) = (p-1)a + (p-1)/p n b, exact: every step is a sendrecv that
// waits for the previous one, and every rank's step i takes one message of b bytes. The local
// copy of the rank's own block is free on `uniform` (copy_bandwidth 0) and off the critical path.
//
// Schedule, rank r, b = n/p (the checker's alltoall needs p | n; other sizes are refused):
//   step i = 1..p-1: send data[(r+i)%p * b, +b) to r+i; recv data[n + (r-i)%p * b, +b) from r-i.
//   last (as Open MPI, whose step p is the sendrecv with itself): copy data[r b, +b) ->
//   data[n + r b, +b).
// Dependencies: a step's send waits for the previous step's send and receive (MPI_Sendrecv is
// blocking); the receive needs none (it issues after the send, and nothing else touches its
// bytes); the copy reads input and writes its own output block, which no message touches.
//
// alltoallv (per-rank counts): the same steps with each pair's count at MPI's contiguous
// displacements (core::BlockLayout), as ompi_coll_base_alltoallv_intra_pairwise (coll/tuned
// alltoallv algorithm 2) does; a zero count is still a (zero-byte) sendrecv there, so it is here.

#include "alltoall/alltoall_algorithms.hpp"
#include "collsim/core/layout.hpp"
#include "generator_support.hpp"

#include <array>

namespace collsim::algorithms {
namespace {

using core::OpKind;
using detail::OpCounts;

constexpr const char* kName = "pairwise";

OpCounts pairwise_counts(std::uint32_t p) {
  const std::uint64_t pp = p;
  // Per rank: p-1 sends, p-1 receives, one copy; sends of steps 2.. have two dependencies.
  return {pp * (2 * pp - 1), p >= 2 ? pp * 2 * (pp - 2) : 0};
}

std::string pairwise_check(const Request& req) {
  if (req.counts.empty() && req.bytes.value % req.ranks != 0) {
    return "alltoall needs bytes divisible by ranks";
  }
  return detail::size_limit_refusal(pairwise_counts(req.ranks));
}

core::Schedule generate_pairwise(const Request& req) {
  const std::uint32_t p = req.ranks;
  core::Schedule s(make_header(req, 0, kName));
  const core::BlockLayout lay(s.header());
  const OpCounts counts = pairwise_counts(p);
  s.reserve(counts.ops, counts.deps);
  std::array<std::uint32_t, 2> dep{};
  for (core::Rank r = 0; r < p; ++r) {
    s.begin_rank(r);
    for (std::uint32_t i = 1; i < p; ++i) {
      const core::Rank to = (r + i) % p;
      const core::Rank from = (r + p - i) % p;
      // Step i's send is local 2(i-1), its receive 2(i-1)+1.
      dep = {2 * i - 4, 2 * i - 3};
      detail::add_op(s, OpKind::send, to,
                     detail::data_range(lay.send_offset(r, to), lay.count(r, to)),
                     std::span(dep.data(), i >= 2 ? 2 : 0));
      detail::add_op(s, OpKind::recv, from,
                     detail::data_range(lay.recv_offset(from, r), lay.count(from, r)), {});
    }
    s.copy(detail::data_range(lay.send_offset(r, r), lay.count(r, r)),
           detail::data_range(lay.recv_offset(r, r), lay.count(r, r)));
  }
  s.finish();
  return s;
}

std::optional<CostTerms> pairwise_cost(const Request& req) {
  if (!req.counts.empty()) {
    return std::nullopt;
  }
  const std::uint64_t p = req.ranks;
  const std::uint64_t b = req.bytes.value / p;
  return CostTerms{static_cast<double>(p - 1), static_cast<double>((p - 1) * b), 0.0};
}

} // namespace

AlgorithmInfo describe_alltoall_pairwise() {
  AlgorithmInfo a;
  a.name = kName;
  a.collective = core::CollectiveKind::alltoall;
  a.summary = "p-1 sendrecv steps: step i sends to r+i and receives from r-i";
  a.source = "Open MPI ompi_coll_base_alltoall_intra_pairwise; MPICH MPIR_Alltoall_intra_pairwise";
  // ucc:pairwise: UCC tl/ucp's alltoall (alltoall_pairwise.c; one send and one receive in flight).
  a.aliases = {"ompi:2",    "ompi:pairwise", "mpich:pairwise",
               "smpi:pair", "smpi:ring",     "ucc:pairwise"};
  a.constraints = {"bytes divisible by ranks (uniform)"};
  a.counts = true;
  a.check = pairwise_check;
  a.generate = generate_pairwise;
  a.cost = pairwise_cost;
  a.cost_formula = "(p-1)a + (p-1)/p n b";
  return a;
}

} // namespace collsim::algorithms
