// Neighbor-exchange allgather (algorithms.md AG5): ranks pair up with alternating neighbours; after
// a first swap of single blocks, every step forwards the two blocks received in the step before,
// so p/2 steps suffice.
//
// Source: J. Chen, L. Zhang, Y. Zhang and W. Yuan, "Performance evaluation of allgather algorithms
// on terascale Linux cluster with fast Ethernet", HPCAsia 2005; Open MPI
// ompi_coll_base_allgather_intra_neighborexchange (coll/tuned allgather algorithm 5); SMPI
// "ompi_neighborexchange".
//
// Cost (p even, p divides n): (p/2) a + (p-1)/p n b. With uneven blocks a step is paced by the
// larger pair in flight, so cost() declines.
//
// Even rank counts only: Open MPI's implementation hands an odd communicator to the ring ("ring"
// here); the request is refused with that advice rather than silently running another algorithm.
// One rank needs no messages and gets the empty schedule.
//
// Schedule (Open MPI's), rank r: an even rank has neighbours (r+1, r-1) and offsets (+2, -2), an
// odd rank (r-1, r+1) and (-2, +2). Step 0: swap the own block with neighbour 0. Step i = 1 ..
// p/2-1, with j = i mod 2: send the pair of blocks received last (the rank's own pair in step 1)
// to neighbour j and receive the pair from[j] += offset[j] from it (from[] starts at r for an even
// rank and at r-1 for an odd one). Pairs are blocks (2m, 2m+1): contiguous in `data`, one message,
// received in place. Zero-length messages (n < p) are kept.
//
// Dependencies (p operations, p/2 - 1 dependencies per rank): the send of step i forwards what
// the receive of step i-1 wrote (in step 1, the own pair: the own block was never written), so it
// waits for that receive. Receives write blocks never touched before.

#include "allgather/allgather_algorithms.hpp"
#include "collsim/core/layout.hpp"
#include "generator_support.hpp"

#include <array>
#include <fmt/format.h>

namespace collsim::algorithms {
namespace {

using core::OpKind;
using detail::OpCounts;

constexpr const char* kName = "neighbor_exchange";

OpCounts neighbor_exchange_counts(std::uint32_t p) {
  if (p < 2) {
    return {};
  }
  const std::uint64_t pp = p;
  return {pp * pp, pp * (pp / 2 - 1)};
}

std::string neighbor_exchange_refusal(const Request& req) {
  if (req.ranks > 1 && req.ranks % 2 != 0) {
    return fmt::format("ranks must be even (got {}); Open MPI runs ring instead for odd rank "
                       "counts: use 'ring'",
                       req.ranks);
  }
  return detail::size_limit_refusal(neighbor_exchange_counts(req.ranks));
}

core::Schedule generate_neighbor_exchange(const Request& req) {
  const std::uint32_t p = req.ranks;
  core::Schedule s(make_header(req, 0, kName));
  const core::BlockLayout lay(s.header());
  const OpCounts counts = neighbor_exchange_counts(p);
  s.reserve(counts.ops, counts.deps);
  if (p < 2) {
    s.finish();
    return s;
  }
  const auto blocks = [&](std::uint32_t first, std::uint32_t count) {
    // Blocks first .. first + count - 1 (first + count <= p). Not block(first + count): with
    // counts there is no block p to start at (AddressSanitizer found the read past the end).
    const std::uint64_t begin = lay.block(first).first;
    const auto last = lay.block(first + count - 1);
    return detail::data_range(begin, last.first + last.second - begin);
  };
  const auto wrap = [p](std::int64_t q) {
    const auto pp = static_cast<std::int64_t>(p);
    return static_cast<std::uint32_t>(((q % pp) + pp) % pp);
  };

  std::array<std::uint32_t, 1> dep{};
  for (core::Rank r = 0; r < p; ++r) {
    s.begin_rank(r);
    const bool even = r % 2 == 0;
    const auto ir = static_cast<std::int64_t>(r);
    const std::array<core::Rank, 2> neighbor{wrap(even ? ir + 1 : ir - 1),
                                             wrap(even ? ir - 1 : ir + 1)};
    const std::array<std::int64_t, 2> offset{even ? 2 : -2, even ? -2 : 2};
    std::array<std::uint32_t, 2> from{even ? r : neighbor[0], even ? r : neighbor[0]};
    detail::add_op(s, OpKind::send, neighbor[0], blocks(r, 1), {});
    dep[0] = detail::add_op(s, OpKind::recv, neighbor[0], blocks(neighbor[0], 1), {});
    std::uint32_t send_from = even ? r : from[0]; // the first block of the rank's own pair
    for (std::uint32_t i = 1; i < p / 2; ++i) {
      const std::uint32_t j = i % 2;
      from[j] = wrap(static_cast<std::int64_t>(from[j]) + offset[j]);
      detail::add_op(s, OpKind::send, neighbor[j], blocks(send_from, 2), dep);
      dep[0] = detail::add_op(s, OpKind::recv, neighbor[j], blocks(from[j], 2), {});
      send_from = from[j];
    }
  }
  s.finish();
  return s;
}

std::optional<CostTerms> neighbor_exchange_cost(const Request& req) {
  if (!req.counts.empty()) {
    return std::nullopt;
  }
  const std::uint64_t p = req.ranks;
  const std::uint64_t n = req.bytes.value;
  if (p == 0 || n % p != 0 || (p > 1 && p % 2 != 0)) {
    return std::nullopt;
  }
  const std::uint64_t block = n / p; // exact: p divides n
  const std::uint64_t steps = p / 2; // p is even (or 1: no steps)
  return CostTerms{static_cast<double>(steps), static_cast<double>((p - 1) * block), 0.0};
}

} // namespace

AlgorithmInfo describe_allgather_neighbor_exchange() {
  AlgorithmInfo a;
  a.name = kName;
  a.collective = core::CollectiveKind::allgather;
  a.summary = "p/2 steps with alternating neighbours, forwarding two blocks a step";
  a.source = "Chen et al., HPCAsia 2005; Open MPI ompi_coll_base_allgather_intra_neighborexchange";
  a.aliases = {"ompi:5", "ompi:neighbor", "smpi:ompi_neighborexchange"};
  a.constraints = {"ranks must be even"};
  a.check = neighbor_exchange_refusal;
  a.counts = true; // allgatherv: Open MPI ompi_coll_base_allgatherv_intra_neighborexchange
  a.generate = generate_neighbor_exchange;
  a.cost = neighbor_exchange_cost;
  a.cost_formula = "(p/2) a + (p-1)/p n b (p even; exact when p divides n)";
  return a;
}

} // namespace collsim::algorithms
