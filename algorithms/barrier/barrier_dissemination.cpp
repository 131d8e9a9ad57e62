// Dissemination barrier (algorithms.md BA4), radix k: in round j (shift s = k^j) rank i sends a
// zero-byte message to i + m s and receives one from i - m s (mod p) for m = 1..k-1 with m s < p.
// After round j, rank i has heard (directly or not) from ranks i - [0, k^(j+1)), so
// ceil(log_k p) rounds reach everyone, for any p.
//
// Source: Hensgen, Finkel & Manber, "Two algorithms for barrier synchronization", IJPP 17(1),
// 1988; MPICH MPIR_Barrier_intra_k_dissemination (default k = 2); Open MPI
// ompi_coll_base_barrier_intra_bruck (coll/tuned barrier algorithm 4, k = 2); SMPI "ompi_bruck".
//
// Cost: ceil(log_k p) a on `uniform` (LogGP with o = g = 0), exact: each round's k-1 zero-byte
// messages leave together and the next round waits for all of them. With o > 0 a round costs
// a + (k-1)o (algorithms.md: "alpha_k, the cost of k-1 concurrent messages").
//
// Dependencies: a round's sends wait for every send and receive of the round before (MPICH's
// MPI_Waitall); that is also how what the rank has heard reaches its next messages. Receives need
// none.

#include "barrier/barrier_algorithms.hpp"
#include "generator_support.hpp"

#include <algorithm>
#include <vector>

namespace collsim::algorithms {
namespace {

using detail::OpCounts;

constexpr const char* kName = "dissemination";
constexpr const char* kRadix = "radix";

/// Messages rank i sends in the round with shift s: m = 1..k-1 with m s < p.
std::uint64_t round_messages(std::uint64_t p, std::uint64_t k, std::uint64_t shift) {
  return std::min(k - 1, (p - 1) / shift);
}

OpCounts dissemination_counts(std::uint32_t p, std::uint64_t k) {
  OpCounts c;
  std::uint64_t before = 0; // messages of the previous round
  for (std::uint64_t shift = 1; shift < p; shift *= k) {
    const std::uint64_t m = round_messages(p, k, shift);
    c.ops += 2 * m;
    c.deps += m * 2 * before;
    before = m;
  }
  c.ops *= p;
  c.deps *= p;
  return c;
}

std::uint64_t radix_of(const Request& req) {
  const auto it = req.params.find(kRadix);
  return it == req.params.end() ? 2 : static_cast<std::uint64_t>(it->second);
}

core::Schedule generate_dissemination(const Request& req) {
  const std::uint32_t p = req.ranks;
  const std::uint64_t k = radix_of(req);
  core::Schedule s(make_header(req, 0, kName));
  const OpCounts counts = dissemination_counts(p, k);
  s.reserve(counts.ops, counts.deps);
  const core::Range none = detail::data_range(0, 0);
  std::vector<std::uint32_t> previous;
  std::vector<std::uint32_t> current;
  for (core::Rank r = 0; r < p; ++r) {
    s.begin_rank(r);
    previous.clear();
    for (std::uint64_t shift = 1; shift < p; shift *= k) {
      current.clear();
      const std::uint64_t messages = round_messages(p, k, shift);
      for (std::uint64_t m = 1; m <= messages; ++m) {
        const auto step = static_cast<std::uint32_t>(m * shift); // < p
        current.push_back(detail::add_op(s, core::OpKind::send, (r + step) % p, none, previous));
        current.push_back(s.recv((r + p - step) % p, none));
      }
      previous.swap(current);
    }
  }
  s.finish();
  return s;
}

std::optional<CostTerms> dissemination_cost(const Request& req) {
  std::uint64_t rounds = 0;
  for (std::uint64_t shift = 1; shift < req.ranks; shift *= radix_of(req)) {
    ++rounds;
  }
  return CostTerms{static_cast<double>(rounds), 0.0, 0.0};
}

} // namespace

AlgorithmInfo describe_barrier_dissemination() {
  AlgorithmInfo a;
  a.name = kName;
  a.collective = core::CollectiveKind::barrier;
  a.summary = "ceil(log_k p) rounds; in round j rank i signals i + m k^j, m = 1..k-1";
  a.source = "Hensgen, Finkel & Manber, IJPP 1988; MPICH MPIR_Barrier_intra_k_dissemination; "
             "Open MPI ompi_coll_base_barrier_intra_bruck";
  // mpich:dissemination: MPICH 4.0's MPIR_Barrier_intra_dissemination (Debian 12's libmpich12);
  // later releases call it k_dissemination (algorithms.md 2.2).
  a.aliases = {"ompi:4", "ompi:bruck", "mpich:k_dissemination", "mpich:dissemination",
               "smpi:ompi_bruck"};
  a.params = {{kRadix, 2, 2, 1024,
               "k: messages per round plus one (2 = Open MPI's bruck and MPICH's default)"}};
  a.check = [](const Request& req) {
    return detail::size_limit_refusal(dissemination_counts(req.ranks, radix_of(req)));
  };
  a.generate = generate_dissemination;
  a.cost = dissemination_cost;
  a.cost_formula = "ceil(log_k p) a";
  return a;
}

} // namespace collsim::algorithms
