// Linear gather (algorithms.md GA1): every rank sends its block straight to the root, which
// receives them in rank order.
//
// Source: Open MPI ompi_coll_base_gather_intra_basic_linear (coll/tuned gather algorithm 1); SMPI
// "ompi_basic_linear".
//
// Cost (p >= 2): a + (n - the root's block) b on `uniform` (LogGP with o = g = 0), which is
// a + (p-1)/p n b when p divides n: all blocks leave at once, and the root's link takes them one
// after the other. The textbook (p-1)a of a blocking loop appears here as (p-1)o: the root's
// receives are blocking, each posted when the one before it has completed.
//
// Schedule: rank r != root sends data[block r] to the root; the root receives block q from rank q
// for q = 0..p-1 (its own block is already in place). Dependency: each of the root's receives
// waits for the one before it (Open MPI's blocking MPI_Recv loop).

#include "gather/gather_algorithms.hpp"
#include "generator_support.hpp"

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
      s.send(root, block(r));
      continue;
    }
    bool first = true;
    for (core::Rank q = 0; q < p; ++q) {
      if (q != root) {
        dep[0] = detail::add_op(s, core::OpKind::recv, q, block(q),
                                std::span(dep.data(), first ? 0 : 1));
        first = false;
      }
    }
  }
  s.finish();
  return s;
}

} // namespace

AlgorithmInfo describe_gather_linear() {
  AlgorithmInfo a;
  a.name = kName;
  a.collective = core::CollectiveKind::gather;
  a.summary = "every rank sends its block to the root, which receives them in rank order";
  a.source = "Open MPI ompi_coll_base_gather_intra_basic_linear";
  a.aliases = {"ompi:1", "ompi:basic_linear", "smpi:ompi_basic_linear"};
  a.check = [](const Request& req) { return detail::size_limit_refusal(linear_counts(req.ranks)); };
  a.generate = generate_linear;
  a.cost = detail::linear_rooted_cost;
  a.cost_formula = "a + (n - the root's block) b, i.e. a + (p-1)/p n b when p divides n";
  return a;
}

} // namespace collsim::algorithms
