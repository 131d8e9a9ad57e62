// Recursive-halving reduce-scatter (algorithms.md RS2): in each step a rank sends the half of its
// current window that the partner's half of the subcube owns, and combines the half it keeps;
// distances p'/2, p'/4, ..., 1.
//
// Source: R. Thakur, R. Rabenseifner and W. Gropp, "Optimization of collective communication
// operations in MPICH", IJHPCA 19(1), 2005; MPICH MPIR_Reduce_scatter_intra_recursive_halving;
// Open MPI ompi_coll_base_reduce_scatter_intra_basic_recursivehalving (coll/tuned reduce_scatter
// algorithm 2, derived from MPICH's); SMPI "ompi_basic_recursivehalving".
//
// Cost:
//   p = 2^k, p divides n: lg p a + (p-1)/p n b + (p-1)/p n g.
//   otherwise no exact closed form: the fold costs a + n b + n g, after which the p' regions are
//   one or two blocks long, so the halves are uneven. MPICH's comment gives
//   (floor(lg p)+2) a + n(1 + (p-1+n)/p) b + n(1 + (p-1)/p) g as an approximation (algorithms.md
//   reads (p-1+n)/p as a typo for (p-1)/p); cost() declines.
//
// Schedule (MPICH's), p' = 2^floor(lg p), r = p - p':
//   fold: the even ranks below 2r send their whole vector to rank+1, which combines it into its own
//     (recv_reduce into data) and takes new rank rank/2; ranks at or above 2r take rank - r.
//   New rank i owns region i: blocks 2i and 2i+1 for i < r (the pair's), block i + r otherwise, so
//     the regions are contiguous and in order.
//   halving: for mask = p'/2 .. 1, partner newrank XOR mask. The window (a run of regions) splits
//     at its middle region; the lower new rank keeps the lower half. Send the other half,
//     recv_reduce the kept half straight into data (it is not being sent, so no scratch buffer is
//     needed). After the last step the window is the rank's region.
//   unfold: the odd ranks below 2r send block rank-1 of their region to rank-1.
// Zero-length messages (empty blocks) are kept.
//
// Dependencies: a send waits for the recv_reduce that last wrote its bytes (the previous step's,
// or the fold's); a recv_reduce waits for the one before it, which wrote the same bytes; the even
// folded rank's final receive waits for its send of the whole vector, which read those bytes.

#include "collsim/core/layout.hpp"
#include "generator_support.hpp"
#include "reduce_scatter/reduce_scatter_algorithms.hpp"

#include <array>
#include <bit>
#include <vector>

namespace collsim::algorithms {
namespace {

using core::OpKind;
using detail::OpCounts;

constexpr const char* kName = "recursive_halving";

OpCounts recursive_halving_counts(std::uint32_t p) {
  if (p < 2) {
    return {};
  }
  const std::uint64_t pof2 = std::bit_floor(p);
  const std::uint64_t rem = p - pof2;
  const std::uint64_t k = detail::floor_log2(p);
  OpCounts c;
  // Ranks at or above 2r: a send and a recv_reduce a step, each waiting for the previous
  // recv_reduce except in the first step.
  c.ops += (pof2 - rem) * 2 * k;
  c.deps += (pof2 - rem) * 2 * (k - 1);
  // Odd ranks below 2r: the fold's recv_reduce, the steps (the first waits for the fold), the
  // final send (one dependency).
  c.ops += rem * (2 * k + 2);
  c.deps += rem * (2 * k + 1);
  // Even ranks below 2r: send everything, receive the result (waits for the send).
  c.ops += rem * 2;
  c.deps += rem;
  return c;
}

core::Schedule generate_recursive_halving(const Request& req) {
  const std::uint32_t p = req.ranks;
  const std::uint64_t n = req.bytes.value;
  core::Schedule s(make_header(req, 0, kName));
  const core::BlockLayout lay(s.header());
  const OpCounts counts = recursive_halving_counts(p);
  s.reserve(counts.ops, counts.deps);
  if (p < 2) {
    s.finish();
    return s;
  }
  const std::uint32_t pof2 = std::bit_floor(p);
  const std::uint32_t rem = p - pof2;
  // Region i (of new rank i) starts at region_begin[i]; region pof2 ends the vector.
  std::vector<std::uint64_t> region_begin(static_cast<std::size_t>(pof2) + 1);
  for (std::uint32_t i = 0; i < pof2; ++i) {
    const std::uint32_t first_block = i < rem ? 2 * i : i + rem;
    region_begin[i] = lay.block(first_block).first;
  }
  region_begin[pof2] = n;
  const auto regions = [&](std::uint32_t first, std::uint32_t last) {
    return detail::data_range(region_begin[first], region_begin[last] - region_begin[first]);
  };
  const auto block = [&](std::uint32_t b) {
    const auto [offset, length] = lay.block(b);
    return detail::data_range(offset, length);
  };

  std::array<std::uint32_t, 1> dep{};
  for (core::Rank r = 0; r < p; ++r) {
    s.begin_rank(r);
    std::uint32_t newrank = r - rem;
    std::size_t ndeps = 0; // the first step waits only when the fold wrote data
    if (r < 2 * rem) {
      if (r % 2 == 0) {
        const std::uint32_t sent = s.send(r + 1, detail::data_range(0, n));
        s.recv(r + 1, block(r), {sent});
        continue;
      }
      dep[0] = s.recv_reduce(r - 1, detail::data_range(0, n));
      ndeps = 1;
      newrank = r / 2;
    }
    std::uint32_t window_first = 0;
    std::uint32_t window_last = pof2;
    for (std::uint32_t mask = pof2 >> 1; mask > 0; mask >>= 1) {
      const std::uint32_t newpeer = newrank ^ mask;
      const core::Rank peer = newpeer < rem ? 2 * newpeer + 1 : newpeer + rem;
      const std::uint32_t middle = window_first + mask;
      const bool keep_lower = newrank < newpeer;
      const core::Range send_part =
          keep_lower ? regions(middle, window_last) : regions(window_first, middle);
      const core::Range keep_part =
          keep_lower ? regions(window_first, middle) : regions(middle, window_last);
      detail::add_op(s, OpKind::send, peer, send_part, std::span(dep.data(), ndeps));
      dep[0] =
          detail::add_op(s, OpKind::recv_reduce, peer, keep_part, std::span(dep.data(), ndeps));
      ndeps = 1;
      if (keep_lower) {
        window_last = middle;
      } else {
        window_first = middle;
      }
    }
    if (r < 2 * rem) {
      s.send(r - 1, block(r - 1), {dep[0]});
    }
  }
  s.finish();
  return s;
}

std::optional<CostTerms> recursive_halving_cost(const Request& req) {
  if (!req.counts.empty()) {
    return std::nullopt;
  }
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

AlgorithmInfo describe_reduce_scatter_recursive_halving() {
  AlgorithmInfo a;
  a.name = kName;
  a.collective = core::CollectiveKind::reduce_scatter;
  a.summary = "lg p steps at distances p/2, p/4, ..., 1, each sending half the current window";
  a.source = "Thakur, Rabenseifner & Gropp, IJHPCA 2005; MPICH "
             "MPIR_Reduce_scatter_intra_recursive_halving; Open MPI "
             "ompi_coll_base_reduce_scatter_intra_basic_recursivehalving";
  a.aliases = {"ompi:2", "ompi:recursive_halving", "mpich:recursive_halving",
               "smpi:ompi_basic_recursivehalving"};
  a.constraints = {"commutative operation only",
                   "other than a power of two: the first 2(p - 2^floor(lg p)) ranks fold in pairs"};
  a.check = [](const Request& req) {
    return detail::size_limit_refusal(recursive_halving_counts(req.ranks));
  };
  a.counts = true; // MPI_Reduce_scatter's counts: Open MPI
                   // ompi_coll_base_reduce_scatter_intra_basic_recursivehalving takes rcounts
  a.generate = generate_recursive_halving;
  a.cost = recursive_halving_cost;
  a.cost_formula = "p = 2^k: lg p a + (p-1)/p n b + (p-1)/p n g (exact when p divides n); "
                   "otherwise about (floor(lg p)+2) a + n(1 + (p-1)/p) b + n(1 + (p-1)/p) g";
  return a;
}

} // namespace collsim::algorithms
