// In-place pairwise alltoall with MPI_Sendrecv_replace (algorithms.md AA7; MPICH
// pairwise_sendrecv_replace, the algorithm MPICH's default selection uses for MPI_IN_PLACE).
// Every pair of ranks {i, j} swaps its two blocks once, in the global order (0,1), (0,2), ...,
// (0,p-1), (1,2), ..., (p-2,p-1), each swap a blocking MPI_Sendrecv_replace on one block of the
// in-place buffer. It conserves memory (one block of scratch), not time.
//
// Source: MPICH MPIR_Alltoall_intra_pairwise_sendrecv_replace
// (src/mpi/coll/alltoall/alltoall_intra_pairwise_sendrecv_replace.c): "for i, for j >= i: if rank
// == i sendrecv_replace block j with j, else if rank == j sendrecv_replace block i with i".
// MPICH's MPIC_Sendrecv_replace packs the block into a temporary buffer, sends it from there and
// receives into the block.
//
// Schedule, rank r, b = n/p (the checker's alltoall needs p | n). collsim's alltoall keeps input
// and output apart (make_header), so the in-place buffer is the output half:
//   copy data[0, n) -> data[n, 2n)            (the user's data in the in-place buffer)
//   for q = 0, 1, ..., p-1, q != r (rank r's pairs in the global order):
//     copy data[n + q b, +b) -> tmp[0, b); send tmp[0, b) to q; recv data[n + q b, +b) from q.
// Dependencies: the first pack copy waits for the initial copy, every later one for the previous
// swap's send (the single scratch block is reused) and receive (the call is blocking); the send
// waits for its pack copy, and so does the receive (it overwrites the block the copy reads).
//
// Cost: rank r's swap with q can start only after r's swaps with 0..q-1 and q's swaps with 0..r-1;
// the last swap, (p-2, p-1), is the (2p-3)-th on the critical path, so roughly
// (2p-3)(a + n/p b). It is not a closed form on the loggp engine: a rank whose partner sent early
// finishes its swap as soon as its own send is out (the message waits for the receive), so the
// time depends on a/b; cost() declines.

#include "alltoall/alltoall_algorithms.hpp"
#include "generator_support.hpp"

#include <array>

namespace collsim::algorithms {
namespace {

using core::OpKind;
using detail::OpCounts;

constexpr const char* kName = "pairwise_sendrecv_replace";

OpCounts replace_counts(std::uint32_t p) {
  if (p < 2) {
    return {1, 0};
  }
  const std::uint64_t pp = p;
  // Per rank: 1 + 3 (p-1) operations; the first pack copy has one dependency, later ones two, and
  // every send and receive one.
  return {pp * (1 + 3 * (pp - 1)), pp * (1 + 2 * (pp - 2) + 2 * (pp - 1))};
}

std::string replace_check(const Request& req) {
  if (req.bytes.value % req.ranks != 0) {
    return "alltoall needs bytes divisible by ranks";
  }
  return detail::size_limit_refusal(replace_counts(req.ranks));
}

core::Schedule generate_replace(const Request& req) {
  const std::uint32_t p = req.ranks;
  const std::uint64_t n = req.bytes.value;
  const std::uint64_t b = n / p;
  core::Schedule s(make_header(req, p > 1 ? b : 0, kName));
  const OpCounts counts = replace_counts(p);
  s.reserve(counts.ops, counts.deps);
  const core::Range scratch = detail::tmp_range(0, b);
  std::array<std::uint32_t, 2> dep{};
  for (core::Rank r = 0; r < p; ++r) {
    s.begin_rank(r);
    dep[0] = s.copy(detail::data_range(0, n), detail::data_range(n, n));
    std::size_t ndeps = 1;
    for (core::Rank q = 0; q < p; ++q) {
      if (q == r) {
        continue;
      }
      const core::Range block = detail::data_range(n + std::uint64_t{q} * b, b);
      const std::uint32_t packed =
          s.add(OpKind::copy, 0, scratch, block, std::span(dep.data(), ndeps));
      const std::uint32_t sent = s.send(q, scratch, {packed});
      const std::uint32_t got = s.recv(q, block, {packed});
      dep = {sent, got};
      ndeps = 2;
    }
  }
  s.finish();
  return s;
}

} // namespace

AlgorithmInfo describe_alltoall_pairwise_sendrecv_replace() {
  AlgorithmInfo a;
  a.name = kName;
  a.collective = core::CollectiveKind::alltoall;
  a.summary = "in place: every pair swaps its blocks once with a blocking sendrecv_replace through "
              "one scratch block, pairs in global (i, j) order";
  a.source = "MPICH MPIR_Alltoall_intra_pairwise_sendrecv_replace";
  a.aliases = {"mpich:pairwise_sendrecv_replace"};
  a.constraints = {"bytes divisible by ranks"};
  a.check = replace_check;
  a.generate = generate_replace;
  a.cost = [](const Request&) { return std::optional<CostTerms>{}; };
  a.cost_formula =
      "about (2p-3)(a + n/p b): pair (i, j) waits for both ranks' earlier pairs; not "
      "exact on loggp (a swap whose partner sent early ends sooner), so no closed form";
  return a;
}

} // namespace collsim::algorithms
