// Non-commutative reduce-scatter (algorithms.md RS7): Traff's butterfly on a copy of the vector
// whose blocks are placed in bit-reversed (mirror) order, so that recursive halving with distance
// doubling leaves every rank with its own block, combining contiguous rank ranges in order.
//
// Source: J. L. Traff, "An improved algorithm for (non-commutative) reduce-scatter with an
// application", EuroPVM/MPI 2005; MPICH MPIR_Reduce_scatter_intra_noncommutative (MPICH's choice
// for non-commutative operations on a power of two with equal blocks); SMPI "mpich_noncomm".
//
// Cost (p = 2^k, local copies free): lg p a + (p-1)/p n b + (p-1)/p n g: step k exchanges
// n / 2^(k+1) bytes. MPICH's comment (quoted in algorithms.md) gives n(lg p - (p-1)/p) b + ...,
// the cost of recursive doubling it was copied from; the schedule halves the data every step.
//
// Power of two and block-regular only (p divides n), as MPICH's implementation: other requests
// are refused with that reason.
//
// Schedule, rank r, b = n/p, tmp = [work (n) | incoming (n)]:
//   copy data[block i] -> tmp[mirror(i) b ..] for i = 0..p-1 (the permutation)
//   for k = 0..lg p - 1, peer r XOR 2^k, the window [w, w + size) halves: the higher rank keeps
//     the upper half, the lower rank the lower half; send the other half of work to the peer,
//     receive the kept half into incoming, reduce it into work.
//   copy the window (position mirror(r), holding block r) -> data[block r].
// MPICH swaps two buffers to keep the operands in rank order; the schedule records no operand
// order, so one work area and one incoming area suffice.
//
// Dependencies: the permutation copies run one after another (MPICH's loop) and the first step
// waits for the last of them; afterwards each send, receive and reduction waits for the previous
// step's reduction (the last writer of the work area and last reader of the incoming area), each
// reduction for its receive, the final copy for the last reduction.

#include "generator_support.hpp"
#include "reduce_scatter/reduce_scatter_algorithms.hpp"

#include <array>
#include <bit>
#include <fmt/format.h>

namespace collsim::algorithms {
namespace {

using core::OpKind;
using detail::OpCounts;

constexpr const char* kName = "noncommutative";

/// The low `bits` bits of x in reverse order (MPICH's MPL_mirror_permutation).
std::uint64_t mirror(std::uint64_t x, std::uint32_t bits) {
  std::uint64_t out = 0;
  for (std::uint32_t b = 0; b < bits; ++b) {
    out = (out << 1) | ((x >> b) & 1U);
  }
  return out;
}

OpCounts noncommutative_counts(std::uint32_t p) {
  if (p < 2) {
    return {};
  }
  const std::uint64_t pp = p;
  const std::uint64_t lg = detail::floor_log2(p);
  return {pp * (pp + 3 * lg + 1), pp * (pp + 3 * lg)};
}

std::string noncommutative_refusal(const Request& req) {
  if (!std::has_single_bit(req.ranks)) {
    return fmt::format("ranks must be a power of two (got {}), as MPICH's noncommutative "
                       "requires; use 'recursive_doubling' for other rank counts",
                       req.ranks);
  }
  if (req.bytes.value % req.ranks != 0) {
    return fmt::format("blocks must be equal, as MPICH's noncommutative requires: {} bytes is not "
                       "a multiple of {} ranks",
                       req.bytes.value, req.ranks);
  }
  return detail::size_limit_refusal(noncommutative_counts(req.ranks));
}

core::Schedule generate_noncommutative(const Request& req) {
  const std::uint32_t p = req.ranks;
  const std::uint64_t n = req.bytes.value;
  core::Schedule s(make_header(req, p > 1 ? 2 * n : 0, kName));
  const OpCounts counts = noncommutative_counts(p);
  s.reserve(counts.ops, counts.deps);
  if (p < 2) {
    s.finish();
    return s;
  }
  const std::uint64_t b = n / p;
  const std::uint32_t lg = detail::floor_log2(p);
  std::array<std::uint32_t, 2> dep{};
  for (core::Rank r = 0; r < p; ++r) {
    s.begin_rank(r);
    for (std::uint64_t i = 0; i < p; ++i) {
      dep[0] = static_cast<std::uint32_t>(i) - 1; // the previous copy
      s.add(OpKind::copy, 0, detail::tmp_range(mirror(i, lg) * b, b), detail::data_range(i * b, b),
            std::span(dep.data(), i == 0 ? 0 : 1));
    }
    std::uint32_t previous = p - 1; // the last copy, then each step's reduction
    std::uint64_t window = 0;
    std::uint64_t size = n;
    for (std::uint32_t k = 0; k < lg; ++k) {
      const core::Rank peer = r ^ (1U << k);
      size /= 2;
      const bool keep_upper = r > peer;
      const std::uint64_t keep = keep_upper ? window + size : window;
      const std::uint64_t give = keep_upper ? window : window + size;
      dep[0] = previous;
      detail::add_op(s, OpKind::send, peer, detail::tmp_range(give, size),
                     std::span(dep.data(), 1));
      // The first receive writes an area nothing touched yet; later ones the one the previous
      // reduction read.
      const std::uint32_t got =
          detail::add_op(s, OpKind::recv, peer, detail::tmp_range(n + keep, size),
                         std::span(dep.data(), k == 0 ? 0 : 1));
      dep = {got, previous};
      // In the first step the reduction also overwrites bytes the permutation copied.
      previous =
          detail::reduce_op(s, detail::tmp_range(n + keep, size), detail::tmp_range(keep, size),
                            std::span(dep.data(), k == 0 ? 2 : 1));
      window = keep;
    }
    dep[0] = previous;
    s.add(OpKind::copy, 0, detail::data_range(std::uint64_t{r} * b, b),
          detail::tmp_range(window, b), std::span(dep.data(), 1));
  }
  s.finish();
  return s;
}

std::optional<CostTerms> noncommutative_cost(const Request& req) {
  const std::uint64_t p = req.ranks;
  const std::uint64_t n = req.bytes.value;
  if (p == 0 || n % p != 0 || !std::has_single_bit(p)) {
    return std::nullopt;
  }
  const std::uint64_t block = n / p;
  const auto moved = static_cast<double>((p - 1) * block); // (p-1)/p n, exact: p divides n
  return CostTerms{static_cast<double>(detail::floor_log2(req.ranks)), moved, moved};
}

} // namespace

AlgorithmInfo describe_reduce_scatter_noncommutative() {
  AlgorithmInfo a;
  a.name = kName;
  a.collective = core::CollectiveKind::reduce_scatter;
  a.summary = "Traff's butterfly on bit-reversed blocks: recursive halving in rank order";
  a.source = "Traff, EuroPVM/MPI 2005; MPICH MPIR_Reduce_scatter_intra_noncommutative";
  a.aliases = {"mpich:noncommutative", "smpi:mpich_noncomm"};
  a.constraints = {"ranks must be a power of two", "bytes must be a multiple of ranks"};
  a.check = noncommutative_refusal;
  a.generate = generate_noncommutative;
  a.cost = noncommutative_cost;
  a.cost_formula = "lg p a + (p-1)/p n b + (p-1)/p n g (p a power of two dividing n; local copies "
                   "free)";
  return a;
}

} // namespace collsim::algorithms
