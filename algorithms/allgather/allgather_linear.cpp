// Linear allgather (algorithms.md AG1): a linear gather to rank 0 followed by a linear broadcast of
// the whole vector from rank 0.
//
// Source: Open MPI ompi_coll_base_allgather_intra_basic_linear (coll/tuned allgather algorithm 1:
// ompi_coll_base_gather_intra_basic_linear, then ompi_coll_base_bcast_intra_basic_linear); SMPI
// "GB" (gather + bcast).
//
// Cost: T_gather + T_bcast, both bound by rank 0's port: about 2(p-1)a + (p-1)/p n b + (p-1) n b
// in the single-port alpha-beta model. How many of the 2(p-1) latencies overlap depends on the
// engine (LogGP overlaps the ones of messages in flight together), so cost() declines.
//
// Schedule. Rank 0: recv data[block q] from q for q = 1..p-1, one after another (Open MPI's
// blocking receives), then send data[0, n) to q = 1..p-1, all at once (isend + waitall). Rank
// q > 0: send data[block q] to 0; recv data[0, n) from 0.
//
// Dependencies: each of rank 0's receives waits for the previous one (the gather's blocking loop);
// its sends read every block, so they wait for the last receive (which waited for the others). A
// rank q > 0 receives the whole vector over the block its send reads, so the receive waits for
// the send. Rank 0: 2(p-1) operations, 2p-3 dependencies; others: 2 operations, 1 dependency.

#include "allgather/allgather_algorithms.hpp"
#include "generator_support.hpp"

#include "collsim/core/layout.hpp"

#include <optional>

namespace collsim::algorithms {
namespace {

using detail::OpCounts;

constexpr const char* kName = "linear";

OpCounts linear_counts(std::uint32_t p) {
  if (p < 2) {
    return {};
  }
  const std::uint64_t pp = p;
  return {2 * (pp - 1) + 2 * (pp - 1), (2 * pp - 3) + (pp - 1)};
}

core::Schedule generate_linear(const Request& req) {
  const std::uint32_t p = req.ranks;
  const std::uint64_t n = req.bytes.value;
  core::Schedule s(make_header(req, 0, kName));
  const core::BlockLayout lay(s.header());
  const OpCounts counts = linear_counts(p);
  s.reserve(counts.ops, counts.deps);
  if (p < 2) {
    s.finish();
    return s;
  }
  const auto block = [&](std::uint32_t b) {
    const auto [offset, length] = lay.block(b);
    return detail::data_range(offset, length);
  };
  // allgatherv: a rank with nothing to contribute sends nothing and rank 0 posts no receive for
  // it (Open MPI's gatherv: `if (scount > 0)` / `if (rcounts[i] > 0)`); uniform blocks always go.
  const auto gathered = [&](core::Rank q) { return !lay.varying() || lay.block(q).second > 0; };
  s.begin_rank(0);
  std::optional<std::uint32_t> last;
  for (core::Rank q = 1; q < p; ++q) {
    if (!gathered(q)) {
      continue;
    }
    last = last ? s.recv(q, block(q), {*last}) : s.recv(q, block(q));
  }
  for (core::Rank q = 1; q < p; ++q) {
    if (last) {
      s.send(q, detail::data_range(0, n), {*last});
    } else {
      s.send(q, detail::data_range(0, n));
    }
  }
  for (core::Rank q = 1; q < p; ++q) {
    s.begin_rank(q);
    if (gathered(q)) {
      const std::uint32_t sent = s.send(0, block(q));
      s.recv(0, detail::data_range(0, n), {sent});
    } else {
      s.recv(0, detail::data_range(0, n));
    }
  }
  s.finish();
  return s;
}

} // namespace

AlgorithmInfo describe_allgather_linear() {
  AlgorithmInfo a;
  a.name = kName;
  a.collective = core::CollectiveKind::allgather;
  a.summary = "linear gather to rank 0, then rank 0 sends the whole vector to every rank";
  a.source = "Open MPI ompi_coll_base_allgather_intra_basic_linear";
  a.aliases = {"ompi:1", "ompi:linear", "smpi:GB"};
  // allgatherv: Open MPI's coll/tuned allgatherv algorithm 1 ("default",
  // ompi_coll_base_allgatherv_intra_basic_default) is this gather then a broadcast of the vector.
  a.counts = true;
  a.check = [](const Request& req) { return detail::size_limit_refusal(linear_counts(req.ranks)); };
  a.generate = generate_linear;
  a.cost_formula = "about 2(p-1)a + (p-1)/p n b + (p-1) n b (rank 0's port; no exact closed form)";
  return a;
}

} // namespace collsim::algorithms
