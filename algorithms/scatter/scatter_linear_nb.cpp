// Non-blocking linear scatter (algorithms.md SC3): the root posts a non-blocking send of each
// rank's block and waits for them all.
//
// Source: Open MPI ompi_coll_base_scatter_intra_linear_nb (coll/tuned scatter algorithm 3); SMPI
// "ompi_linear_nb".
//
// Cost (p >= 2): a + (n - the root's block) b on `uniform` (LogGP with o = g = 0), which is
// a + (p-1)/p n b when p divides n, as for the blocking linear scatter: the root's link is the
// bottleneck. What differs is the overhead: here the root's p-1 overheads o overlap the injection
// of the blocks before them (algorithms.md: "linear_nb overlaps the a costs").
//
// Schedule: the root sends data[block q] to rank q for q = 0..p-1 (not itself); rank q != root
// receives into data[block q]. No dependencies: MPI_Isend followed by MPI_Waitall.

#include "generator_support.hpp"
#include "scatter/scatter_algorithms.hpp"

namespace collsim::algorithms {
namespace {

using detail::OpCounts;

constexpr const char* kName = "linear_nb";

OpCounts linear_nb_counts(std::uint32_t p) {
  if (p < 2) {
    return {};
  }
  return {2 * (std::uint64_t{p} - 1), 0};
}

core::Schedule generate_linear_nb(const Request& req) {
  const std::uint32_t p = req.ranks;
  const std::uint64_t n = req.bytes.value;
  const core::Rank root = req.root;
  core::Schedule s(make_header(req, 0, kName));
  const OpCounts counts = linear_nb_counts(p);
  s.reserve(counts.ops, counts.deps);
  if (p < 2) {
    s.finish();
    return s;
  }
  const auto block = [&](core::Rank q) {
    const auto [offset, len] = core::block_range(n, p, q);
    return detail::data_range(offset, len);
  };
  for (core::Rank r = 0; r < p; ++r) {
    s.begin_rank(r);
    if (r != root) {
      s.recv(root, block(r));
      continue;
    }
    for (core::Rank q = 0; q < p; ++q) {
      if (q != root) {
        s.send(q, block(q));
      }
    }
  }
  s.finish();
  return s;
}

} // namespace

AlgorithmInfo describe_scatter_linear_nb() {
  AlgorithmInfo a;
  a.name = kName;
  a.collective = core::CollectiveKind::scatter;
  a.summary = "the root posts a non-blocking send to every rank, then waits for all";
  a.source = "Open MPI ompi_coll_base_scatter_intra_linear_nb";
  a.aliases = {"ompi:3", "ompi:linear_nb", "smpi:ompi_linear_nb"};
  a.check = [](const Request& req) {
    return detail::size_limit_refusal(linear_nb_counts(req.ranks));
  };
  a.generate = generate_linear_nb;
  a.cost = detail::linear_rooted_cost;
  a.cost_formula = "a + (n - the root's block) b, i.e. a + (p-1)/p n b when p divides n";
  return a;
}

} // namespace collsim::algorithms
