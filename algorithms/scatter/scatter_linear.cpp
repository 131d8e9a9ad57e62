// Linear scatter (algorithms.md SC1): the root sends every other rank its block, one blocking send
// after the other.
//
// Source: Open MPI ompi_coll_base_scatter_intra_basic_linear (coll/tuned scatter algorithm 1);
// SMPI "ompi_basic_linear".
//
// Cost (p >= 2): a + (n - the root's block) b on `uniform` (LogGP with o = g = 0), which is
// a + (p-1)/p n b when p divides n: the root's link is the bottleneck and the last block's latency
// overlaps nothing. Each blocking send starts when the previous one has left, so a per-message
// overhead o adds (p-1)o; linear_nb overlaps it instead.
//
// Schedule: the root sends data[block q] to rank q for q = 0..p-1 (not itself: its own block is
// in place); rank q != root receives into data[block q]. Dependency: each of the root's sends waits
// for the one before it (MPI_Send is blocking).

#include "generator_support.hpp"
#include "scatter/scatter_algorithms.hpp"

#include <array>

namespace collsim::algorithms {
namespace {

using detail::OpCounts;

constexpr const char* kName = "linear";

OpCounts linear_counts(std::uint32_t p) {
  if (p < 2) {
    return {};
  }
  const std::uint64_t pp = p;
  return {2 * (pp - 1), pp - 2};
}

core::Schedule generate_linear(const Request& req) {
  const std::uint32_t p = req.ranks;
  const std::uint64_t n = req.bytes.value;
  const core::Rank root = req.root;
  core::Schedule s(make_header(req, 0, kName));
  const OpCounts counts = linear_counts(p);
  s.reserve(counts.ops, counts.deps);
  if (p < 2) {
    s.finish();
    return s;
  }
  const auto block = [&](core::Rank q) {
    const auto [offset, len] = core::block_range(n, p, q);
    return detail::data_range(offset, len);
  };
  std::array<std::uint32_t, 1> dep{};
  for (core::Rank r = 0; r < p; ++r) {
    s.begin_rank(r);
    if (r != root) {
      s.recv(root, block(r));
      continue;
    }
    bool first = true;
    for (core::Rank q = 0; q < p; ++q) {
      if (q != root) {
        dep[0] = detail::add_op(s, core::OpKind::send, q, block(q),
                                std::span(dep.data(), first ? 0 : 1));
        first = false;
      }
    }
  }
  s.finish();
  return s;
}

} // namespace

AlgorithmInfo describe_scatter_linear() {
  AlgorithmInfo a;
  a.name = kName;
  a.collective = core::CollectiveKind::scatter;
  a.summary = "the root sends each rank its block, one blocking send after the other";
  a.source = "Open MPI ompi_coll_base_scatter_intra_basic_linear";
  a.aliases = {"ompi:1", "ompi:basic_linear", "smpi:ompi_basic_linear"};
  a.check = [](const Request& req) { return detail::size_limit_refusal(linear_counts(req.ranks)); };
  a.generate = generate_linear;
  a.cost = detail::linear_rooted_cost;
  a.cost_formula = "a + (n - the root's block) b, i.e. a + (p-1)/p n b when p divides n";
  return a;
}

} // namespace collsim::algorithms
