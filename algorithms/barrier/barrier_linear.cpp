// Linear barrier (algorithms.md BA1): every rank checks in with rank 0, which releases them all
// once it has heard from everyone.
//
// Source: Open MPI ompi_coll_base_barrier_intra_basic_linear (coll/tuned barrier algorithm 1);
// SMPI "ompi_basic_linear".
//
// Cost (p >= 2): 2a on `uniform` (LogGP with o = g = 0): all check-ins travel at once, then all
// releases. Rank 0 handles its 2(p-1) messages one after the other, so a per-message overhead o
// adds 2(p-1)o; the textbook 2(p-1)a counts those as full start-ups.
//
// Schedule: rank r != 0 sends a zero-byte message to 0, then receives one from 0. Rank 0 receives
// from 1, ..., p-1, then sends to 1, ..., p-1. Dependencies: each of rank 0's receives waits for
// the one before (so the last one carries every check-in), and its sends wait for the last
// receive; a rank's receive waits for its own send (Open MPI's blocking send).

#include "barrier/barrier_algorithms.hpp"
#include "generator_support.hpp"

#include <array>

namespace collsim::algorithms {
namespace {

using detail::OpCounts;

constexpr const char* kName = "linear";

OpCounts linear_counts(std::uint32_t p) {
  if (p < 2) {
    return {};
  }
  const std::uint64_t pp = p;
  // Rank 0: p-2 chained receives, p-1 sends; every other rank: one dependency.
  return {4 * (pp - 1), (pp - 2) + (pp - 1) + (pp - 1)};
}

core::Schedule generate_linear(const Request& req) {
  const std::uint32_t p = req.ranks;
  core::Schedule s(make_header(req, 0, kName));
  const OpCounts counts = linear_counts(p);
  s.reserve(counts.ops, counts.deps);
  if (p < 2) {
    s.finish();
    return s;
  }
  const core::Range none = detail::data_range(0, 0);
  std::array<std::uint32_t, 1> dep{};
  s.begin_rank(0);
  for (core::Rank q = 1; q < p; ++q) {
    dep[0] = detail::add_op(s, core::OpKind::recv, q, none, std::span(dep.data(), q > 1 ? 1 : 0));
  }
  for (core::Rank q = 1; q < p; ++q) {
    detail::add_op(s, core::OpKind::send, q, none, dep);
  }
  for (core::Rank r = 1; r < p; ++r) {
    s.begin_rank(r);
    const std::uint32_t sent = s.send(0, none);
    s.recv(0, none, {sent});
  }
  s.finish();
  return s;
}

} // namespace

AlgorithmInfo describe_barrier_linear() {
  AlgorithmInfo a;
  a.name = kName;
  a.collective = core::CollectiveKind::barrier;
  a.summary = "every rank checks in with rank 0, which then releases them all";
  a.source = "Open MPI ompi_coll_base_barrier_intra_basic_linear";
  a.aliases = {"ompi:1", "ompi:linear", "smpi:ompi_basic_linear"};
  a.check = [](const Request& req) { return detail::size_limit_refusal(linear_counts(req.ranks)); };
  a.generate = generate_linear;
  a.cost = [](const Request& req) -> std::optional<CostTerms> {
    return CostTerms{req.ranks > 1 ? 2.0 : 0.0, 0.0, 0.0};
  };
  a.cost_formula = "2a (LogGP without overhead; rank 0's 2(p-1) messages cost 2(p-1)o)";
  return a;
}

} // namespace collsim::algorithms
