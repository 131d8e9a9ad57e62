// Pairwise-exchange allgather (algorithms.md AG9): in step i = 1..p-1 rank r swaps its own block
// with rank r XOR i. Every pair of ranks meets exactly once.
//
// Source: SimGrid SMPI allgather "pair" (from STAR-MPI, Faraj, Patarasuk & Yuan, "A study of
// process arrival patterns for MPI collective operations", ICS 2007), which refuses rank counts
// that are not a power of two.
//
// Cost (p = 2^k, p divides n): (p-1)a + (p-1)/p n b. With uneven blocks a step is paced by the
// larger of the two blocks, so cost() declines.
//
// Schedule, rank r, i = 1..p-1: send data[block r] to r XOR i; recv data[block r XOR i] from it,
// in place. Zero-length messages (n < p) are kept.
//
// Dependencies (2(p-1) operations, p-2 dependencies per rank): no two operations touch the same
// bytes with a write, so none is needed for correctness; SMPI runs the steps as blocking
// sendrecvs, so each send waits for the previous step's receive (without it every send would
// leave at once, which is the direct algorithm).

#include "allgather/allgather_algorithms.hpp"
#include "generator_support.hpp"

#include <array>
#include <bit>
#include <fmt/format.h>

namespace collsim::algorithms {
namespace {

using core::OpKind;
using detail::OpCounts;

constexpr const char* kName = "pair";

OpCounts pair_counts(std::uint32_t p) {
  if (p < 2) {
    return {};
  }
  const std::uint64_t pp = p;
  return {2 * pp * (pp - 1), pp * (pp - 2)};
}

std::string pair_refusal(const Request& req) {
  if (!std::has_single_bit(req.ranks)) {
    return fmt::format("ranks must be a power of two (got {}), as SMPI's pair requires", req.ranks);
  }
  return detail::size_limit_refusal(pair_counts(req.ranks));
}

core::Schedule generate_pair(const Request& req) {
  const std::uint32_t p = req.ranks;
  const std::uint64_t n = req.bytes.value;
  core::Schedule s(make_header(req, 0, kName));
  const OpCounts counts = pair_counts(p);
  s.reserve(counts.ops, counts.deps);
  const auto block = [&](std::uint32_t b) {
    const auto [offset, length] = core::block_range(n, p, b);
    return detail::data_range(offset, length);
  };
  std::array<std::uint32_t, 1> dep{};
  for (core::Rank r = 0; r < p; ++r) {
    s.begin_rank(r);
    for (std::uint32_t i = 1; i < p; ++i) {
      const core::Rank peer = r ^ i;
      detail::add_op(s, OpKind::send, peer, block(r), std::span(dep.data(), i == 1 ? 0 : 1));
      dep[0] = detail::add_op(s, OpKind::recv, peer, block(peer), {});
    }
  }
  s.finish();
  return s;
}

std::optional<CostTerms> pair_cost(const Request& req) {
  const std::uint64_t p = req.ranks;
  const std::uint64_t n = req.bytes.value;
  if (p == 0 || n % p != 0 || !std::has_single_bit(p)) {
    return std::nullopt;
  }
  const std::uint64_t block = n / p; // exact: p divides n
  return CostTerms{static_cast<double>(p - 1), static_cast<double>((p - 1) * block), 0.0};
}

} // namespace

AlgorithmInfo describe_allgather_pair() {
  AlgorithmInfo a;
  a.name = kName;
  a.collective = core::CollectiveKind::allgather;
  a.summary = "p-1 steps: swap the own block with rank r XOR i";
  a.source = "SMPI allgather pair (STAR-MPI; Faraj, Patarasuk & Yuan, ICS 2007)";
  a.aliases = {"smpi:pair"};
  a.constraints = {"ranks must be a power of two"};
  a.check = pair_refusal;
  a.generate = generate_pair;
  a.cost = pair_cost;
  a.cost_formula = "(p-1)a + (p-1)/p n b (p a power of two; exact when p divides n)";
  return a;
}

} // namespace collsim::algorithms
