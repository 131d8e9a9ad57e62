// Recursive-doubling barrier (algorithms.md BA3): zero-byte pairwise exchanges with r XOR 2^k;
// for other p the ranks above the largest power of two p' first check in with r - p' and are
// released by it at the end.
//
// Source: Open MPI ompi_coll_base_barrier_intra_recursivedoubling (coll/tuned barrier algorithm
// 3); SMPI "ompi_recursivedoubling".
//
// Cost: lg p a for p a power of two, exact: every exchange waits for the one before it. Otherwise
// at most (floor(lg p) + 2) a (the fold and the release add one message each), but the ranks
// without an extra partner run ahead, so their messages are often in early and the critical path
// is shorter (3 ranks: 2a, not 3a); cost() declines there.
//
// Schedule, with p' = 2^floor(lg p) (Open MPI, exactly):
//   rank r >= p':     send to r - p', then receive from it (Open MPI's sendrecv).
//   rank r <  p - p': receive from r + p' first.
//   rank r <  p':     for mask = 1, 2, ..., p'/2: send to r XOR mask, receive from it.
//   rank r <  p - p': finally send to r + p'.
// All messages are zero bytes long. Knowledge of who has entered flows only along dependencies and
// messages, so each send waits for the send and the receive of the exchange before it (MPI_Sendrecv
// completes both; a receive alone carries only what its sender knew); receives need no dependency.

#include "barrier/barrier_algorithms.hpp"
#include "generator_support.hpp"

#include <array>
#include <bit>

namespace collsim::algorithms {
namespace {

using core::OpKind;
using detail::OpCounts;

constexpr const char* kName = "recursive_doubling";

OpCounts recursive_doubling_counts(std::uint32_t p) {
  if (p < 2) {
    return {};
  }
  const std::uint64_t pof2 = std::bit_floor(p);
  const std::uint64_t rem = p - pof2;
  const std::uint64_t k = detail::floor_log2(p);
  OpCounts c;
  // Every rank below p' exchanges k times; every send but the first waits for the send and the
  // receive before it.
  c.ops += pof2 * 2 * k;
  c.deps += pof2 * 2 * (k - 1);
  // Ranks below rem also receive the fold first (their first send then waits for it) and send the
  // release last (waiting for the last exchange's send and receive).
  c.ops += rem * 2;
  c.deps += rem * 3;
  // Ranks at or above p': send, receive.
  c.ops += rem * 2;
  return c;
}

core::Schedule generate_recursive_doubling(const Request& req) {
  const std::uint32_t p = req.ranks;
  core::Schedule s(make_header(req, 0, kName));
  const OpCounts counts = recursive_doubling_counts(p);
  s.reserve(counts.ops, counts.deps);
  if (p < 2) {
    s.finish();
    return s;
  }
  const std::uint32_t pof2 = std::bit_floor(p);
  const std::uint32_t rem = p - pof2;
  const core::Range none = detail::data_range(0, 0);
  std::array<std::uint32_t, 2> dep{};
  for (core::Rank r = 0; r < p; ++r) {
    s.begin_rank(r);
    if (r >= pof2) {
      s.send(r - pof2, none);
      s.recv(r - pof2, none);
      continue;
    }
    // dep = {previous send, previous receive}: what this rank has heard so far.
    std::size_t known = 0;
    if (r < rem) {
      dep[0] = s.recv(r + pof2, none);
      known = 1;
    }
    for (std::uint32_t mask = 1; mask < pof2; mask <<= 1) {
      const std::uint32_t sent =
          detail::add_op(s, OpKind::send, r ^ mask, none, std::span(dep.data(), known));
      dep = {sent, s.recv(r ^ mask, none)};
      known = 2;
    }
    if (r < rem) {
      detail::add_op(s, OpKind::send, r + pof2, none, dep);
    }
  }
  s.finish();
  return s;
}

std::optional<CostTerms> recursive_doubling_cost(const Request& req) {
  if (!std::has_single_bit(req.ranks)) {
    return std::nullopt;
  }
  return CostTerms{static_cast<double>(detail::floor_log2(req.ranks)), 0.0, 0.0};
}

} // namespace

AlgorithmInfo describe_barrier_recursive_doubling() {
  AlgorithmInfo a;
  a.name = kName;
  a.collective = core::CollectiveKind::barrier;
  a.summary = "zero-byte exchanges with r XOR 2^k; extra ranks fold in and are released";
  a.source = "Open MPI ompi_coll_base_barrier_intra_recursivedoubling";
  a.aliases = {"ompi:3", "ompi:recursive_doubling", "smpi:ompi_recursivedoubling"};
  a.check = [](const Request& req) {
    return detail::size_limit_refusal(recursive_doubling_counts(req.ranks));
  };
  a.generate = generate_recursive_doubling;
  a.cost = recursive_doubling_cost;
  a.cost_formula = "lg p a (exact when p is a power of two; at most (floor(lg p) + 2) a otherwise)";
  return a;
}

} // namespace collsim::algorithms
