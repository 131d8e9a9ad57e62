// Latency-optimal Swing allreduce (algorithms.md AR22, "latency-optimal variant"): the butterfly of
// recursive doubling (AR3), exchanging the full vector in lg p steps, with Swing's peers instead of
// rank XOR 2^s.
//
// Source: D. De Sensi, T. Bonato, D. Saam and T. Hoefler, "Swing: Short-cutting Rings for Higher
// Bandwidth Allreduce", NSDI'24; libswing ALGO_SWING_L. The fold follows MPICH
// MPIR_Allreduce_intra_recursive_doubling, as libswing's shrink_non_power_of_two does.
//
// Peers (allreduce/swing_support.hpp): in step s, rank r talks to pi(r, s) = r + rho(s) if r is
// even, r - rho(s) if odd (mod p'), rho(s) = (1 - (-2)^(s+1))/3 = 1, -1, 3, -5, 11, ... The
// distances 1, 1, 3, 5, 11, 21 grow as about 2^(s+1)/3 instead of recursive doubling's 2^s, so on
// a ring or torus the messages travel fewer hops. pi(pi(r, s), s) = r for even p'.
//
// Cost: p = 2^k:  lg p (a + n b + n g), exact on the loggp engine (every step is one exchange of n
//       bytes and a reduction, as in recursive doubling; the peers only matter on a topology).
//       otherwise at most (floor(lg p)+2) a + (floor(lg p)+2) n b + (floor(lg p)+1) n g; not exact
//       (ranks outside the fold start the butterfly early), so no closed form is declared.
//
// Schedule, with p' = 2^floor(lg p) and r = p - p':
//   fold:   among ranks 0..2r-1, each even rank sends its whole vector to rank+1 and idles; the odd
//           rank receives it into tmp and reduces. Survivors: rank/2 below 2r, rank-r above.
//   main:   lg p' steps; in step s a survivor exchanges the whole vector with new rank pi(new, s)
//           (real rank 2*new+1 below r, new+r otherwise): receive into tmp, reduce into data.
//   unfold: each odd rank below 2r sends the result to rank-1.
//
// Dependencies (those of recursive doubling): a send waits for the reduction that produced its
// vector; a receive into tmp waits for the reduction that last read tmp; a reduction waits for its
// receive and for the step's send (it overwrites the vector being sent); the even rank's final
// receive waits for its fold send.

#include "allreduce/allreduce_algorithms.hpp"
#include "allreduce/swing_support.hpp"
#include "generator_support.hpp"

#include <array>
#include <bit>

namespace collsim::algorithms {
namespace {

using core::OpKind;
using detail::OpCounts;

constexpr const char* kName = "swing_latency";

OpCounts swing_latency_counts(std::uint32_t p) {
  if (p < 2) {
    return {};
  }
  const std::uint64_t pof2 = std::bit_floor(p);
  const std::uint64_t rem = p - pof2;
  const std::uint64_t k = detail::floor_log2(p);
  OpCounts c;
  // Ranks at or above 2r: 3 ops a step; the first step's send and receive wait for nothing.
  c.ops += (pof2 - rem) * 3 * k;
  c.deps += (pof2 - rem) * (4 * k - 2);
  // Odd ranks below 2r: fold (recv, reduce), main (every step waits), unfold (send).
  c.ops += rem * (3 * k + 3);
  c.deps += rem * (4 * k + 2);
  // Even ranks below 2r: fold send, final receive.
  c.ops += rem * 2;
  c.deps += rem * 1;
  return c;
}

core::Schedule generate_swing_latency(const Request& req) {
  const std::uint32_t p = req.ranks;
  const std::uint64_t n = req.bytes.value;
  core::Schedule s(make_header(req, p > 1 ? n : 0, kName));
  const OpCounts counts = swing_latency_counts(p);
  s.reserve(counts.ops, counts.deps);
  const std::uint32_t pof2 = std::bit_floor(p);
  const std::uint32_t rem = p - pof2;
  const std::uint32_t steps = detail::floor_log2(p);
  const core::Range whole = detail::data_range(0, n);
  const core::Range scratch = detail::tmp_range(0, n);

  std::array<std::uint32_t, 2> dep{};
  for (core::Rank r = 0; r < p; ++r) {
    s.begin_rank(r);
    std::uint32_t newrank = 0;
    bool reduced = false; // has this rank reduced yet (is there a last_reduce)?
    std::uint32_t last_reduce = 0;
    if (r < 2 * rem) {
      if (r % 2 == 0) {
        const std::uint32_t sent = detail::add_op(s, OpKind::send, r + 1, whole, {});
        dep[0] = sent;
        detail::add_op(s, OpKind::recv, r + 1, whole, std::span(dep.data(), 1));
        continue;
      }
      const std::uint32_t got = detail::add_op(s, OpKind::recv, r - 1, scratch, {});
      last_reduce = s.reduce(scratch, whole, {got});
      reduced = true;
      newrank = r / 2;
    } else {
      newrank = r - rem;
    }
    for (std::uint32_t step = 0; step < steps; ++step) {
      const std::uint32_t newdst = detail::swing_peer(newrank, step, pof2);
      const core::Rank dst = newdst < rem ? newdst * 2 + 1 : newdst + rem;
      dep[0] = last_reduce;
      const auto wait = std::span(dep.data(), reduced ? 1 : 0);
      const std::uint32_t sent = detail::add_op(s, OpKind::send, dst, whole, wait);
      const std::uint32_t got = detail::add_op(s, OpKind::recv, dst, scratch, wait);
      last_reduce = s.reduce(scratch, whole, {got, sent});
      reduced = true;
    }
    if (r < 2 * rem) {
      s.send(r - 1, whole, {last_reduce});
    }
  }
  s.finish();
  return s;
}

std::optional<CostTerms> swing_latency_cost(const Request& req) {
  const std::uint32_t p = req.ranks;
  if (!std::has_single_bit(p)) {
    return std::nullopt; // the fold's ranks start late: see the head comment
  }
  const auto n = static_cast<double>(req.bytes.value);
  const auto k = static_cast<double>(detail::floor_log2(p));
  return CostTerms{k, k * n, k * n};
}

} // namespace

AlgorithmInfo describe_allreduce_swing_latency() {
  AlgorithmInfo a;
  a.name = kName;
  a.collective = core::CollectiveKind::allreduce;
  a.summary = "Swing butterfly exchanging the whole vector in lg p steps with peers r +- rho(s) "
              "(non-power-of-two: fold first)";
  a.source = "De Sensi, Bonato, Saam & Hoefler, \"Swing: Short-cutting Rings for Higher Bandwidth "
             "Allreduce\", NSDI'24 (libswing ALGO_SWING_L)";
  a.constraints = {"other than a power of two: the first 2(p - 2^floor(lg p)) ranks fold in pairs"};
  a.check = [](const Request& req) {
    return detail::size_limit_refusal(swing_latency_counts(req.ranks));
  };
  a.generate = generate_swing_latency;
  a.cost = swing_latency_cost;
  a.cost_formula = "p = 2^k: lg p (a + n b + n g); otherwise at most (floor(lg p)+2) a + "
                   "(floor(lg p)+2) n b + (floor(lg p)+1) n g (not exact: no closed form declared)";
  return a;
}

} // namespace collsim::algorithms
