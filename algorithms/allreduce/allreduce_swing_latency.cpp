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
// Generation is recursive doubling's (detail::full_vector_butterfly) with Swing's peer function.
// Dependencies (those of recursive doubling): a send waits for the reduction that produced its
// vector; a receive into tmp waits for the reduction that last read tmp; a reduction waits for its
// receive and for the step's send (it overwrites the vector being sent); the even rank's final
// receive waits for its fold send.

#include "allreduce/allreduce_algorithms.hpp"
#include "allreduce/swing_support.hpp"
#include "generator_support.hpp"

#include <bit>

namespace collsim::algorithms {
namespace {

constexpr const char* kName = "swing_latency";

core::Schedule generate_swing_latency(const Request& req) {
  return detail::full_vector_butterfly(req, kName, detail::swing_peer);
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
  a.check = [](const Request& req) { return detail::full_vector_butterfly_refusal(req); };
  a.generate = generate_swing_latency;
  a.cost = swing_latency_cost;
  a.cost_formula = "p = 2^k: lg p (a + n b + n g); otherwise at most (floor(lg p)+2) a + "
                   "(floor(lg p)+2) n b + (floor(lg p)+1) n g (not exact: no closed form declared)";
  return a;
}

} // namespace collsim::algorithms
