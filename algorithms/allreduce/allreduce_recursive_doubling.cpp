// Recursive-doubling allreduce (algorithms.md AR3): a butterfly that exchanges the full vector.
//
// Source: MPICH MPIR_Allreduce_intra_recursive_doubling (Thakur, Rabenseifner & Gropp,
// "Optimization of collective communication operations in MPICH", IJHPCA 19(1), 2005); Open MPI
// ompi_coll_base_allreduce_intra_recursivedoubling (coll/tuned allreduce algorithm 3); SMPI "rdb".
//
// Cost: p = 2^k:  lg p (a + n b + n g).
//       otherwise at most (floor(lg p)+2) a + (floor(lg p)+2) n b + (floor(lg p)+1) n g
//       (the fold and the unfold add one full-vector message each, the fold one reduction; MPICH's
//       bound: ranks outside the fold start early, so the simulated time is shorter and no exact
//       form is declared).
//
// Schedule, with p' = 2^floor(lg p) and r = p - p' (MPICH, exactly):
//   fold:   among ranks 0..2r-1, each even rank sends its whole vector to rank+1 and idles; the odd
//           rank receives it and reduces. Survivors are renumbered: rank/2 below 2r, rank-r above.
//   main:   lg p' steps; in step k a survivor exchanges the whole vector with new rank XOR 2^k
//           (real rank 2*new+1 below r, new+r otherwise) and reduces.
//   unfold: each odd rank below 2r sends the result to rank-1.
// Receives land in `tmp` (n bytes) and a local reduce folds them into `data`, as MPICH's tmp_buf:
// receiving straight into `data` would overwrite the vector the same step is still sending.
//
// Dependencies: a send waits for the reduction that produced its vector; a receive into `tmp` waits
// for the reduction that last read `tmp`; a reduction waits for its receive and for the step's send
// (it overwrites the vector being sent); the even rank's final receive waits for its fold send.

#include "allreduce/allreduce_algorithms.hpp"
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
  // Ranks at or above 2r run only the main phase: 3 ops per step; the first step's send and
  // receive have nothing to wait for.
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

std::uint32_t xor_peer(std::uint32_t newrank, std::uint32_t step, std::uint32_t /*pof2*/) {
  return newrank ^ (std::uint32_t{1} << step);
}

} // namespace

namespace detail {

std::string full_vector_butterfly_refusal(const Request& req) {
  return size_limit_refusal(collapsed_counts(recursive_doubling_counts(req.ranks), req));
}

Symmetry full_vector_butterfly_symmetry(const Request& req) {
  // On 2^m ranks every rank runs the same lg p exchanges with its rank's bits flipped; the fold
  // of other rank counts sets some ranks apart.
  return {req.ranks >= 2 && std::has_single_bit(req.ranks) ? core::SymmetryKind::xor_blocks
                                                           : core::SymmetryKind::none};
}

core::Schedule full_vector_butterfly(const Request& req, const char* name, ButterflyPeer peer) {
  const std::uint32_t p = req.ranks;
  const std::uint64_t n = req.bytes.value;
  core::Schedule s(make_header(req, p > 1 ? n : 0, name));
  const OpCounts counts = collapsed_counts(recursive_doubling_counts(p), req);
  s.reserve(counts.ops, counts.deps);
  const std::uint32_t pof2 = std::bit_floor(p);
  const std::uint32_t rem = p - pof2;
  const core::Range whole = detail::data_range(0, n);
  const core::Range scratch = detail::tmp_range(0, n);

  std::array<std::uint32_t, 2> dep{};
  // Every rank, or the representatives of a collapsed request (core/collapse.hpp).
  for (core::Rank r = 0; r < s.ranks(); ++r) {
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
    for (std::uint32_t step = 0; (std::uint32_t{1} << step) < pof2; ++step) {
      const std::uint32_t newdst = peer(newrank, step, pof2);
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

} // namespace detail

namespace {

core::Schedule generate_recursive_doubling(const Request& req) {
  return detail::full_vector_butterfly(req, kName, xor_peer);
}

std::optional<CostTerms> recursive_doubling_cost(const Request& req) {
  const std::uint32_t p = req.ranks;
  const auto n = static_cast<double>(req.bytes.value);
  const auto k = static_cast<double>(detail::floor_log2(p));
  if (std::has_single_bit(p)) {
    return CostTerms{k, k * n, k * n};
  }
  // MPICH's (floor(lg p)+2)(a + n b) + (floor(lg p)+1) n g assumes lock-step exchanges; ranks the
  // fold does not involve start the butterfly early, so their first message is already there when
  // a folded rank joins and the real time is shorter. No exact closed form: none is declared.
  return std::nullopt;
}

} // namespace

AlgorithmInfo describe_recursive_doubling() {
  AlgorithmInfo a;
  a.name = kName;
  a.collective = core::CollectiveKind::allreduce;
  a.summary = "butterfly exchanging the whole vector in lg p steps (non-power-of-two: fold first)";
  a.source = "MPICH MPIR_Allreduce_intra_recursive_doubling (Thakur, Rabenseifner & Gropp 2005); "
             "Open MPI ompi_coll_base_allreduce_intra_recursivedoubling";
  // UCC's knomial allreduce is recursive_knomial (its own pattern and radix).
  a.aliases = {"ompi:3", "ompi:recursive_doubling", "mpich:recursive_doubling", "smpi:rdb"};
  a.check = [](const Request& req) { return detail::full_vector_butterfly_refusal(req); };
  a.symmetry = detail::full_vector_butterfly_symmetry;
  a.generate = generate_recursive_doubling;
  a.cost = recursive_doubling_cost;
  a.cost_formula = "p = 2^k: lg p (a + n b + n g); otherwise at most (floor(lg p)+2) a + "
                   "(floor(lg p)+2) n b + (floor(lg p)+1) n g (not exact: no closed form declared)";
  return a;
}

} // namespace collsim::algorithms
