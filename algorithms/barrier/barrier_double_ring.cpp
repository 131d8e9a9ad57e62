// Double-ring barrier (algorithms.md BA2): a zero-byte token goes around the ring twice; the first
// lap collects every rank's entry, the second releases them.
//
// Source: Open MPI ompi_coll_base_barrier_intra_doublering (coll/tuned barrier algorithm 2); SMPI
// "ompi_doublering".
//
// Cost (p >= 2): 2p a, exact: the token makes 2p hops, one after the other.
//
// Schedule (Open MPI, exactly), left = r-1, right = r+1 (mod p):
//   rank 0:   send right; recv left; send right; recv left.
//   rank r>0: recv left; send right; recv left; send right.
// Dependencies: each send waits for the receive before it (blocking calls; the token carries what
// its sender has heard). Rank 0's first send starts the token and waits for nothing.

#include "barrier/barrier_algorithms.hpp"
#include "generator_support.hpp"

namespace collsim::algorithms {
namespace {

using detail::OpCounts;

constexpr const char* kName = "double_ring";

OpCounts double_ring_counts(std::uint32_t p) {
  if (p < 2) {
    return {};
  }
  const std::uint64_t pp = p;
  return {4 * pp, 2 * pp - 1};
}

core::Schedule generate_double_ring(const Request& req) {
  const std::uint32_t p = req.ranks;
  core::Schedule s(make_header(req, 0, kName));
  const OpCounts counts = double_ring_counts(p);
  s.reserve(counts.ops, counts.deps);
  if (p < 2) {
    s.finish();
    return s;
  }
  const core::Range none = detail::data_range(0, 0);
  for (core::Rank r = 0; r < p; ++r) {
    s.begin_rank(r);
    const core::Rank left = r == 0 ? p - 1 : r - 1;
    const core::Rank right = r + 1 == p ? 0 : r + 1;
    if (r == 0) {
      s.send(right, none);
      const std::uint32_t lap = s.recv(left, none);
      s.send(right, none, {lap});
      s.recv(left, none);
    } else {
      for (int lap = 0; lap < 2; ++lap) {
        const std::uint32_t got = s.recv(left, none);
        s.send(right, none, {got});
      }
    }
  }
  s.finish();
  return s;
}

} // namespace

AlgorithmInfo describe_barrier_double_ring() {
  AlgorithmInfo a;
  a.name = kName;
  a.collective = core::CollectiveKind::barrier;
  a.summary = "a zero-byte token circles the ring twice, starting at rank 0";
  a.source = "Open MPI ompi_coll_base_barrier_intra_doublering";
  a.aliases = {"ompi:2", "ompi:double_ring", "smpi:ompi_doublering"};
  a.check = [](const Request& req) {
    return detail::size_limit_refusal(double_ring_counts(req.ranks));
  };
  a.generate = generate_double_ring;
  a.cost = [](const Request& req) -> std::optional<CostTerms> {
    return CostTerms{req.ranks > 1 ? 2.0 * req.ranks : 0.0, 0.0, 0.0};
  };
  a.cost_formula = "2p a";
  return a;
}

} // namespace collsim::algorithms
