// Two-process allgather (algorithms.md AG6): the two ranks swap their blocks in one exchange.
//
// Source: Open MPI ompi_coll_base_allgather_intra_two_procs (coll/tuned allgather algorithm 6, its
// fixed decision for 2 ranks), which returns MPI_ERR_UNSUPPORTED_OPERATION for any other size.
//
// Cost (n even): a + n/2 b; with an odd n the larger block paces the step, so cost() declines.
//
// Schedule, rank r of 2: send data[block r] to 1-r; recv data[block 1-r] from it. The two ranges
// are disjoint, so nothing waits for anything (2 operations, 0 dependencies per rank).

#include "allgather/allgather_algorithms.hpp"
#include "collsim/core/layout.hpp"
#include "generator_support.hpp"

#include <fmt/format.h>

namespace collsim::algorithms {
namespace {

constexpr const char* kName = "two_proc";

core::Schedule generate_two_proc(const Request& req) {
  core::Schedule s(make_header(req, 0, kName));
  const core::BlockLayout lay(s.header());
  s.reserve(4, 0);
  const auto block = [&](std::uint32_t b) {
    const auto [offset, length] = lay.block(b);
    return detail::data_range(offset, length);
  };
  for (core::Rank r = 0; r < 2; ++r) {
    s.begin_rank(r);
    s.send(1 - r, block(r));
    s.recv(1 - r, block(1 - r));
  }
  s.finish();
  return s;
}

} // namespace

AlgorithmInfo describe_allgather_two_proc() {
  AlgorithmInfo a;
  a.name = kName;
  a.collective = core::CollectiveKind::allgather;
  a.summary = "two ranks swap their blocks in one exchange";
  a.source = "Open MPI ompi_coll_base_allgather_intra_two_procs";
  a.aliases = {"ompi:6", "ompi:two_proc"};
  a.constraints = {"exactly 2 ranks"};
  a.counts = true; // allgatherv: ompi_coll_base_allgatherv_intra_two_procs (coll/tuned id 5)
  a.check = [](const Request& req) {
    return req.ranks == 2
               ? std::string{}
               : fmt::format("needs exactly 2 ranks (got {}), as Open MPI's does", req.ranks);
  };
  a.generate = generate_two_proc;
  a.cost = [](const Request& req) -> std::optional<CostTerms> {
    if (!req.counts.empty() || req.bytes.value % 2 != 0) {
      return std::nullopt;
    }
    const std::uint64_t half = req.bytes.value / 2; // exact: n is even
    return CostTerms{1.0, static_cast<double>(half), 0.0};
  };
  a.cost_formula = "a + n/2 b (exact when n is even)";
  return a;
}

} // namespace collsim::algorithms
