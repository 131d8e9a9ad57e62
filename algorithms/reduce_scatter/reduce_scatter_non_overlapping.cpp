// Non-overlapping reduce-scatter (algorithms.md RS1): reduce the whole vector to rank 0, then
// scatter the blocks from rank 0. The two phases do not overlap, hence the name.
//
// Source: Open MPI ompi_coll_base_reduce_scatter_intra_nonoverlapping (coll/tuned reduce_scatter
// algorithm 1, its choice for non-commutative operations and small messages). Open MPI calls the
// communicator's reduce and scatterv; collsim fixes them as a binomial reduce (what coll/tuned's
// fixed rules pick for most commutative sizes from 8 ranks on) and the basic linear scatterv.
//
// Cost: about ceil(lg p)(a + n b + n g) for the reduce plus (p-1)a + (p-1)/p n b for the linear
// scatter at rank 0's port; how many scatter latencies overlap depends on the engine, and the
// reduce's critical path depends on p, so cost() declines.
//
// Schedule, rank r: binomial reduce to rank 0: for mask = 1, 2, 4, ... while r has no bit below
// mask set: recv_reduce data[0, n) from r + mask (when it exists); then, unless r = 0, send
// data[0, n) to r - lowbit(r). Rank 0 then sends data[block q] to q for q = 1..p-1; every other
// rank receives data[block r] from 0.
//
// Dependencies: each recv_reduce writes the whole vector, so it waits for the previous one; a
// send waits for the last recv_reduce; a rank's final receive overwrites bytes its reduce send
// read, so it waits for that send.

// MPI_Reduce_scatter (per-rank counts): the scatter sends each rank its count's block at MPI's
// contiguous displacements (core::BlockLayout); the reduce is unchanged.

#include "collsim/core/layout.hpp"
#include "generator_support.hpp"
#include "reduce_scatter/reduce_scatter_algorithms.hpp"

#include <array>

namespace collsim::algorithms {
namespace {

using detail::OpCounts;

constexpr const char* kName = "non_overlapping";

/// Children of rank r in the binomial tree rooted at 0 (recv_reduce count).
std::uint64_t children(std::uint64_t r, std::uint64_t p) {
  std::uint64_t c = 0;
  for (std::uint64_t mask = 1; mask < p && (r & mask) == 0; mask <<= 1) {
    c += r + mask < p ? 1 : 0;
  }
  return c;
}

OpCounts non_overlapping_counts(std::uint32_t p) {
  if (p < 2) {
    return {};
  }
  OpCounts c;
  const std::uint64_t root_children = children(0, p);
  c.ops += root_children + (p - 1);
  c.deps += (root_children - 1) + (p - 1);
  for (std::uint64_t r = 1; r < p; ++r) {
    const std::uint64_t k = children(r, p);
    c.ops += k + 2;
    c.deps += (k > 0 ? k : 0) + 1; // k-1 between recv_reduces, 1 for the send, 1 for the recv
  }
  return c;
}

core::Schedule generate_non_overlapping(const Request& req) {
  const std::uint32_t p = req.ranks;
  const std::uint64_t n = req.bytes.value;
  core::Schedule s(make_header(req, 0, kName));
  const core::BlockLayout lay(s.header());
  const OpCounts counts = non_overlapping_counts(p);
  s.reserve(counts.ops, counts.deps);
  if (p < 2) {
    s.finish();
    return s;
  }
  const auto block = [&](std::uint64_t b) {
    const auto [offset, length] = lay.block(static_cast<core::Rank>(b));
    return detail::data_range(offset, length);
  };
  const core::Range all = detail::data_range(0, n);
  std::array<std::uint32_t, 1> dep{};
  for (core::Rank r = 0; r < p; ++r) {
    s.begin_rank(r);
    std::size_t ndeps = 0;
    std::uint64_t mask = 1;
    for (; mask < p && (r & mask) == 0; mask <<= 1) {
      if (r + mask < p) {
        dep[0] = detail::add_op(s, core::OpKind::recv_reduce, static_cast<core::Rank>(r + mask),
                                all, std::span(dep.data(), ndeps));
        ndeps = 1;
      }
    }
    if (r == 0) {
      for (core::Rank q = 1; q < p; ++q) {
        detail::add_op(s, core::OpKind::send, q, block(q), std::span(dep.data(), ndeps));
      }
      continue;
    }
    const std::uint32_t sent =
        detail::add_op(s, core::OpKind::send, static_cast<core::Rank>(r - mask), all,
                       std::span(dep.data(), ndeps));
    s.recv(0, block(r), {sent});
  }
  s.finish();
  return s;
}

} // namespace

AlgorithmInfo describe_reduce_scatter_non_overlapping() {
  AlgorithmInfo a;
  a.name = kName;
  a.collective = core::CollectiveKind::reduce_scatter;
  a.summary = "binomial reduce of the whole vector to rank 0, then a linear scatter of the blocks";
  a.source = "Open MPI ompi_coll_base_reduce_scatter_intra_nonoverlapping";
  a.aliases = {"ompi:1", "ompi:non-overlapping"};
  a.counts = true;
  a.check = [](const Request& req) {
    return detail::size_limit_refusal(non_overlapping_counts(req.ranks));
  };
  a.generate = generate_non_overlapping;
  a.cost_formula = "about ceil(lg p)(a + n b + n g) + (p-1)a + (p-1)/p n b (no exact closed form)";
  return a;
}

} // namespace collsim::algorithms
