// Direct-messaging allgather (algorithms.md AG8): every rank posts a receive from and a send to
// every other rank at once, in the rotated order r-i / r+i, and waits for all of them.
//
// Source: Open MPI ompi_coll_base_allgather_intra_direct_messaging (coll/tuned allgather
// algorithm 8, "direct-messaging"); SMPI "spreading_simple", and SMPI's allgather "ring" (STAR-MPI:
// step i sends to r+i and receives from r-i, a rotating direct exchange, not the neighbour ring).
//
// Cost (p divides n): a + (p-1)/p n b on a single-port, uncontended model: the p-1 sends of a rank
// leave back to back and so do the p-1 arrivals, one latency apart. The total traffic is p(p-1)
// blocks at once, so on a real network contention decides (Open MPI's comment); engines with a
// topology price that, the closed form does not.
//
// Schedule, rank r, i = 1..p-1: recv data[block r-i] from r-i; send data[block r] to r+i. All
// operations touch distinct bytes except the sends, which only read, so nothing waits for anything
// (2(p-1) operations, no dependencies per rank). Zero-length messages (n < p) are kept.

#include "allgather/allgather_algorithms.hpp"
#include "generator_support.hpp"

namespace collsim::algorithms {
namespace {

using detail::OpCounts;

constexpr const char* kName = "direct";

OpCounts direct_counts(std::uint32_t p) {
  const std::uint64_t pp = p;
  return {p < 2 ? 0 : 2 * pp * (pp - 1), 0};
}

core::Schedule generate_direct(const Request& req) {
  const std::uint32_t p = req.ranks;
  const std::uint64_t n = req.bytes.value;
  core::Schedule s(make_header(req, 0, kName));
  const OpCounts counts = direct_counts(p);
  s.reserve(counts.ops, counts.deps);
  const auto block = [&](std::uint64_t b) {
    const auto [offset, length] = core::block_range(n, p, b);
    return detail::data_range(offset, length);
  };
  for (core::Rank r = 0; r < p; ++r) {
    s.begin_rank(r);
    for (std::uint64_t i = 1; i < p; ++i) {
      const auto from = static_cast<core::Rank>((r + p - i) % p);
      const auto to = static_cast<core::Rank>((r + i) % p);
      s.recv(from, block(from));
      s.send(to, block(r));
    }
  }
  s.finish();
  return s;
}

std::optional<CostTerms> direct_cost(const Request& req) {
  const std::uint64_t p = req.ranks;
  const std::uint64_t n = req.bytes.value;
  if (p == 0 || n % p != 0) {
    return std::nullopt;
  }
  const std::uint64_t block = n / p; // exact: p divides n
  return CostTerms{p > 1 ? 1.0 : 0.0, static_cast<double>((p - 1) * block), 0.0};
}

} // namespace

AlgorithmInfo describe_allgather_direct() {
  AlgorithmInfo a;
  a.name = kName;
  a.collective = core::CollectiveKind::allgather;
  a.summary = "every rank sends its block to all others at once (p-1 sends, p-1 receives)";
  a.source = "Open MPI ompi_coll_base_allgather_intra_direct_messaging; STAR-MPI ring in SMPI";
  a.aliases = {"ompi:8", "ompi:direct-messaging", "smpi:spreading_simple", "smpi:ring"};
  a.check = [](const Request& req) { return detail::size_limit_refusal(direct_counts(req.ranks)); };
  a.generate = generate_direct;
  a.cost = direct_cost;
  a.cost_formula = "a + (p-1)/p n b on an uncontended single-port model (exact when p divides n)";
  return a;
}

} // namespace collsim::algorithms
