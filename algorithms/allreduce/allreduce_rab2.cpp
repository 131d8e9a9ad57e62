// rab2 allreduce (algorithms.md AR7, "Rabenseifner variant 2"): a reduce-scatter done as an
// all-to-all of the p blocks followed by local reductions, then an allgather of the reduced blocks.
//
// Source: SimGrid SMPI allreduce__rab2 (smpi/colls/allreduce/allreduce-rab2.cpp, "smpi:rab2"):
// alltoall of n/p-element blocks into a scratch buffer, reduce the p received blocks into the
// rank's own block, allgather. SMPI delegates the alltoall and the allgather to the configured
// algorithms; this generator fixes them to the pairwise exchange (as algorithms.md's cost assumes)
// and the ring. When p does not divide n SMPI pads every block to (n+p)/p elements (p when n < p)
// and sends the padding; here the blocks are block_range(n, p, i) instead (the MPI convention:
// the first n mod p blocks one byte longer) and nothing is padded.
//
// Schedule, rank r, block i = block_range(n, p, i) of data, b_r its own block's length:
//   alltoall, steps s = 1..p-1 (a sendrecv each, so step s waits for step s-1): send block r+s to
//     rank r+s; receive rank r-s's copy of block r into tmp slot r-s (tmp = p slots of b_0 bytes).
//   reduce: after the last step, reduce the p-1 received slots into block r of data, in order of
//     the steps.
//   allgather (ring, a sendrecv per step): for k = 0..p-2 send block r-k to r+1, receive block
//     r-k-1 from r-1 into data.
//
// Dependencies: each alltoall step's send and receive wait for the previous step's (sendrecv);
// the first reduction waits for the last step, each later one for the one before (they all write
// block r); the first allgather send waits for the last reduction; each later allgather step
// waits for the previous step's receive and send; the first allgather receive waits for the last
// reduction, which transitively follows every alltoall send that read data.
//
// Cost: 2(p-1) a + 2(p-1)/p n b + (p-1)/p n g, exact on the loggp engine when p divides n (all
// ranks run the same steps in lock step). Otherwise the blocks differ by a byte, the steps are
// paced by the longest, and cost() declines.

#include "allreduce/allreduce_algorithms.hpp"
#include "generator_support.hpp"

#include <array>

namespace collsim::algorithms {
namespace {

using core::OpKind;
using detail::OpCounts;

constexpr const char* kName = "rab2";

OpCounts rab2_counts(std::uint32_t p) {
  if (p < 2) {
    return {};
  }
  const std::uint64_t pp = p;
  // Per rank: alltoall 2(p-1) ops (the first step's two wait for nothing, the others two each),
  // p-1 reductions (the first waits for the last step's two operations), 2(p-1) allgather ops
  // (the first send and receive wait for the last reduction, the others for two each).
  OpCounts c;
  c.ops = pp * 5 * (pp - 1);
  c.deps = pp * (4 * (pp - 2) + (pp - 1) + 1 + 2 + 4 * (pp - 2));
  return c;
}

core::Schedule generate_rab2(const Request& req) {
  const std::uint32_t p = req.ranks;
  const std::uint64_t n = req.bytes.value;
  const std::uint64_t slot = core::block_range(n, p == 0 ? 1 : p, 0).second;
  core::Schedule s(make_header(req, p > 1 ? std::uint64_t{p} * slot : 0, kName));
  const OpCounts counts = rab2_counts(p);
  s.reserve(counts.ops, counts.deps);
  const auto block = [&](std::uint32_t b) {
    const auto [offset, length] = core::block_range(n, p, b);
    return detail::data_range(offset, length);
  };
  std::array<std::uint32_t, 2> dep{};
  for (core::Rank r = 0; r < p; ++r) {
    s.begin_rank(r);
    if (p < 2) {
      continue;
    }
    const core::Range own = block(r);
    const auto slot_of = [&](std::uint32_t from) {
      return detail::tmp_range(from * slot, own.length);
    };
    // Alltoall by pairwise exchange.
    std::uint32_t sent = 0;
    std::uint32_t got = 0;
    for (std::uint32_t step = 1; step < p; ++step) {
      const core::Rank to = (r + step) % p;
      const core::Rank from = (r + p - step) % p;
      dep = {sent, got};
      const auto wait = std::span(dep.data(), step == 1 ? 0 : 2);
      sent = detail::add_op(s, OpKind::send, to, block(to), wait);
      got = detail::add_op(s, OpKind::recv, from, slot_of(from), wait);
    }
    // Local reduction of the received copies of block r.
    std::uint32_t last = 0;
    for (std::uint32_t step = 1; step < p; ++step) {
      const core::Rank from = (r + p - step) % p;
      if (step == 1) {
        last = s.reduce(slot_of(from), own, {sent, got});
      } else {
        last = s.reduce(slot_of(from), own, {last});
      }
    }
    // Ring allgather.
    sent = last;
    got = last;
    for (std::uint32_t k = 0; k + 1 < p; ++k) {
      dep = {sent, got};
      const auto wait = std::span(dep.data(), k == 0 ? 1 : 2);
      sent = detail::add_op(s, OpKind::send, (r + 1) % p, block((r + p - k) % p), wait);
      got = detail::add_op(s, OpKind::recv, (r + p - 1) % p, block((r + 2 * p - k - 1) % p), wait);
    }
  }
  s.finish();
  return s;
}

std::optional<CostTerms> rab2_cost(const Request& req) {
  const std::uint64_t p = req.ranks;
  const std::uint64_t n = req.bytes.value;
  if (p == 0 || n % p != 0) {
    return std::nullopt;
  }
  const auto moved = static_cast<double>((p - 1) * (n / p));
  return CostTerms{2.0 * static_cast<double>(p - 1), 2.0 * moved, moved};
}

} // namespace

AlgorithmInfo describe_allreduce_rab2() {
  AlgorithmInfo a;
  a.name = kName;
  a.collective = core::CollectiveKind::allreduce;
  a.summary = "reduce-scatter as a pairwise alltoall of blocks plus local reductions, then a ring "
              "allgather";
  a.source = "SimGrid SMPI allreduce__rab2 (Rabenseifner's variant 2)";
  a.aliases = {"smpi:rab2"};
  a.constraints = {"commutative operations only (each block is reduced in a rotated rank order)"};
  a.check = [](const Request& req) { return detail::size_limit_refusal(rab2_counts(req.ranks)); };
  a.generate = generate_rab2;
  a.cost = rab2_cost;
  a.cost_formula = "2(p-1)a + 2(p-1)/p n b + (p-1)/p n g (exact when p divides n)";
  return a;
}

} // namespace collsim::algorithms
