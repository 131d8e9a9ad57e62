// Butterfly reduce-scatter (algorithms.md RS4): recursive vector halving with distance doubling
// (partners rank XOR 1, 2, 4, ...), so rank v ends with the result of region mirror(v), the
// bit-reversal of v; a final exchange by the mirror permutation delivers every block to its owner.
//
// Source: J. L. Traff, "An improved algorithm for (non-commutative) reduce-scatter with an
// application", EuroPVM/MPI 2005; Open MPI ompi_coll_base_reduce_scatter_intra_butterfly
// (M. Kurnosov; coll/tuned reduce_scatter algorithm 4), followed step for step; SMPI
// "ompi_butterfly".
//
// Cost, p = 2^k and p divides n: lg p a + (p-1)/p n b + (p-1)/p n g for the butterfly, plus one
// exchange of n/p bytes for the ranks that mirror(v) != v moves (every p >= 4):
//   p = 2: a + n/2 b + n/2 g;  p = 2^k >= 4: (lg p + 1) a + n b + (p-1)/p n g.
// algorithms.md quotes RS2's cost for it, which leaves the permutation out. Other rank counts add
// Open MPI's whole-vector fold (a + n b + n g) and uneven regions: no exact closed form.
//
// Schedule (Open MPI's), p' = 2^floor(lg p), r = p - p':
//   fold: even ranks below 2r send their whole vector to rank+1, which combines it (vrank
//     rank/2); ranks at or above 2r have vrank rank - r. Region i of the p' regions is blocks 2i
//     and 2i+1 for i < r, block i + r otherwise (contiguous, in order).
//   butterfly: for mask = 1, 2, .., p'/2 the window of regions halves; the vrank whose bit is 0
//     keeps the lower half: send the other half to vrank XOR mask, recv_reduce the kept half in
//     place in `data`. Open MPI ping-pongs two scratch vectors to keep operand order for
//     non-commutative operations; the schedule records no operand order, and in place needs no
//     scratch.
//   mirror exchange: with m = mirror(vrank), the rank holds region m. If m < r it sends block 2m
//     to the excluded rank 2m; if m != vrank it sends the block of m's rank to it and receives its
//     own block from it. Excluded ranks receive their block from the holder of their pair's region.
// Zero-length messages (empty blocks) are kept.
//
// Dependencies: a send waits for the recv_reduce that last wrote its bytes (the previous step's
// or the fold's); a recv_reduce waits for the one before it (same bytes); the final receive waits
// for the butterfly send that read the bytes it overwrites; an excluded rank's receive waits for
// its send of the whole vector.

// MPI_Reduce_scatter (per-rank counts): the regions are the counts' blocks at MPI's contiguous
// displacements (core::BlockLayout), as Open MPI's butterfly builds them from rcounts.

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

constexpr const char* kName = "butterfly";

/// Open MPI's ompi_mirror_perm: the low `bits` bits of x in reverse order.
std::uint32_t mirror(std::uint32_t x, std::uint32_t bits) {
  std::uint32_t out = 0;
  for (std::uint32_t b = 0; b < bits; ++b) {
    out = (out << 1) | ((x >> b) & 1U);
  }
  return out;
}

OpCounts butterfly_counts(std::uint32_t p) {
  if (p < 2) {
    return {};
  }
  const std::uint32_t pof2 = std::bit_floor(p);
  const std::uint32_t rem = p - pof2;
  const std::uint32_t k = detail::floor_log2(p);
  OpCounts c;
  // Excluded ranks: send everything, receive the result (waits for the send).
  c.ops += 2ULL * rem;
  c.deps += rem;
  for (std::uint32_t v = 0; v < pof2; ++v) {
    const bool folded = v < rem;
    // The fold's recv_reduce; the steps (the first waits only when the fold wrote data).
    c.ops += (folded ? 1 : 0) + 2ULL * k;
    c.deps += 2ULL * (k - 1) + (folded ? 2 : 0);
    const std::uint32_t m = mirror(v, k);
    if (m < rem) {
      c.ops += 1; // block 2m to the excluded rank, after the last recv_reduce
      c.deps += 1;
    }
    if (m != v) {
      c.ops += 2; // swap with m: a send and a receive, one dependency each
      c.deps += 2;
    }
  }
  return c;
}

core::Schedule generate_butterfly(const Request& req) {
  const std::uint32_t p = req.ranks;
  const std::uint64_t n = req.bytes.value;
  core::Schedule s(make_header(req, 0, kName));
  const core::BlockLayout lay(s.header());
  const OpCounts counts = butterfly_counts(p);
  s.reserve(counts.ops, counts.deps);
  if (p < 2) {
    s.finish();
    return s;
  }
  const std::uint32_t pof2 = std::bit_floor(p);
  const std::uint32_t rem = p - pof2;
  const std::uint32_t k = detail::floor_log2(p);
  const auto real_rank = [rem](std::uint32_t v) { return v < rem ? 2 * v + 1 : v + rem; };
  std::vector<std::uint64_t> region_begin(static_cast<std::size_t>(pof2) + 1);
  for (std::uint32_t i = 0; i < pof2; ++i) {
    region_begin[i] = lay.block(i < rem ? 2 * i : i + rem).first;
  }
  region_begin[pof2] = n;
  const auto regions = [&](std::uint32_t first, std::uint32_t count) {
    return detail::data_range(region_begin[first],
                              region_begin[first + count] - region_begin[first]);
  };
  const auto block = [&](std::uint32_t b) {
    const auto [offset, length] = lay.block(static_cast<core::Rank>(b));
    return detail::data_range(offset, length);
  };

  std::array<std::uint32_t, 1> dep{};
  for (core::Rank r = 0; r < p; ++r) {
    s.begin_rank(r);
    if (r < 2 * rem && r % 2 == 0) {
      // Excluded: the holder of region r/2 (this rank's pair's) sends the result.
      const std::uint32_t sent = s.send(r + 1, detail::data_range(0, n));
      s.recv(real_rank(mirror(r / 2, k)), block(r), {sent});
      continue;
    }
    std::size_t ndeps = 0;
    std::uint32_t vrank = r - rem;
    if (r < 2 * rem) {
      dep[0] = s.recv_reduce(r - 1, detail::data_range(0, n));
      ndeps = 1;
      vrank = r / 2;
    }
    std::uint32_t nblocks = pof2;
    std::uint32_t window = 0;   // first region of the current window
    std::uint32_t own_sent = 0; // the send that read this rank's own region
    for (std::uint32_t mask = 1; mask < pof2; mask <<= 1) {
      const std::uint32_t vpeer = vrank ^ mask;
      nblocks /= 2;
      const bool keep_lower = (vrank & mask) == 0;
      const std::uint32_t send_first = keep_lower ? window + nblocks : window;
      const std::uint32_t keep_first = keep_lower ? window : window + nblocks;
      const std::uint32_t sent =
          detail::add_op(s, OpKind::send, real_rank(vpeer), regions(send_first, nblocks),
                         std::span(dep.data(), ndeps));
      if (vrank >= send_first && vrank < send_first + nblocks) {
        own_sent = sent;
      }
      dep[0] = detail::add_op(s, OpKind::recv_reduce, real_rank(vpeer),
                              regions(keep_first, nblocks), std::span(dep.data(), ndeps));
      ndeps = 1;
      window = keep_first;
    }
    // The window is region mirror(vrank): deliver it.
    const std::uint32_t m = mirror(vrank, k);
    const core::Rank holder_of_mine = real_rank(m); // mirror is an involution
    if (m < rem) {
      s.send(2 * m, block(2 * m), {dep[0]});
    }
    if (m != vrank) {
      s.send(holder_of_mine, block(real_rank(m)), {dep[0]});
      s.recv(holder_of_mine, block(r), {own_sent});
    }
  }
  s.finish();
  return s;
}

std::optional<CostTerms> butterfly_cost(const Request& req) {
  if (!req.counts.empty()) {
    return std::nullopt;
  }
  const std::uint64_t p = req.ranks;
  const std::uint64_t n = req.bytes.value;
  if (p < 2 || n % p != 0 || !std::has_single_bit(p)) {
    return p == 1 ? std::optional<CostTerms>(CostTerms{}) : std::nullopt;
  }
  const auto lg = static_cast<double>(detail::floor_log2(req.ranks));
  const std::uint64_t block = n / p;
  const auto moved = static_cast<double>((p - 1) * block); // (p-1)/p n, exact: p divides n
  if (p == 2) {
    return CostTerms{lg, moved, moved};
  }
  return CostTerms{lg + 1, static_cast<double>(n), moved};
}

} // namespace

AlgorithmInfo describe_reduce_scatter_butterfly() {
  AlgorithmInfo a;
  a.name = kName;
  a.collective = core::CollectiveKind::reduce_scatter;
  a.summary = "recursive halving at distances 1, 2, 4, ..., then a mirror-permutation exchange";
  a.source = "Traff, EuroPVM/MPI 2005; Open MPI ompi_coll_base_reduce_scatter_intra_butterfly";
  a.aliases = {"ompi:4", "ompi:butterfly", "smpi:ompi_butterfly"};
  a.constraints = {"other than a power of two: the first 2(p - 2^floor(lg p)) ranks fold in pairs"};
  a.counts = true;
  a.check = [](const Request& req) {
    return detail::size_limit_refusal(butterfly_counts(req.ranks));
  };
  a.generate = generate_butterfly;
  a.cost = butterfly_cost;
  a.cost_formula = "p = 2: a + n/2 b + n/2 g; p = 2^k >= 4: (lg p + 1) a + n b + (p-1)/p n g "
                   "(exact when p divides n); otherwise no closed form";
  return a;
}

} // namespace collsim::algorithms
