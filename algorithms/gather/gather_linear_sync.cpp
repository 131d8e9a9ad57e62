// Linear gather with synchronisation (algorithms.md GA3): the root asks each rank in turn for its
// block with a zero-byte go-ahead; the rank sends a first segment, then the rest, and the root
// moves on to the next rank once the first segment is in.
//
// Source: Open MPI ompi_coll_base_gather_intra_linear_sync (coll/tuned gather algorithm 3); SMPI
// "ompi_linear_sync". Open MPI's fixed decision passes segsize 0, so the first segment is the
// whole block and the second message is empty; `first_segment` sets it as
// coll_tuned_gather_algorithm_segmentsize does (COLL_BASE_COMPUTED_SEGCOUNT: a first segment of
// at least the block, or 0, means the whole block).
//
// Cost: no closed form is declared. Each rank's first segment costs a round trip after the one
// before it, about 2(p-1)a + (p-1)/p n b (algorithms.md, derived), but the second segments overlap
// later handshakes by amounts that depend on the sizes.
//
// Schedule: rank q != root: receive a zero-byte message from the root; send the first segment of
// block q; send the rest. The root, for q = 0..p-1 except itself: receive q's first segment, send
// q the go-ahead, receive the rest (each into its place in data[block q]).
// Dependencies: a rank's first send waits for the go-ahead, its second for its first (blocking
// sends); the root's receive of a first segment waits for the previous rank's first segment (Open
// MPI waits for it before the next iteration).

#include "gather/gather_algorithms.hpp"
#include "generator_support.hpp"

#include <array>

namespace collsim::algorithms {
namespace {

using core::OpKind;
using detail::OpCounts;

constexpr const char* kName = "linear_sync";
constexpr const char* kFirst = "first_segment";

OpCounts linear_sync_counts(std::uint32_t p) {
  if (p < 2) {
    return {};
  }
  const std::uint64_t pp = p;
  return {6 * (pp - 1), 2 * (pp - 1) + (pp - 2)};
}

core::Schedule generate_linear_sync(const Request& req) {
  const std::uint32_t p = req.ranks;
  const std::uint64_t n = req.bytes.value;
  const core::Rank root = req.root;
  const auto it = req.params.find(kFirst);
  const std::uint64_t first_segment = it == req.params.end() ? 0 : it->second;
  core::Schedule s(make_header(req, 0, kName));
  const OpCounts counts = linear_sync_counts(p);
  s.reserve(counts.ops, counts.deps);
  if (p < 2) {
    s.finish();
    return s;
  }
  // Block q split into [offset, offset + first) and the rest.
  const auto split = [&](core::Rank q) {
    const auto [offset, len] = core::block_range(n, p, q);
    const std::uint64_t first = first_segment == 0 || first_segment >= len ? len : first_segment;
    return std::array<core::Range, 2>{detail::data_range(offset, first),
                                      detail::data_range(offset + first, len - first)};
  };
  const core::Range none = detail::data_range(0, 0);
  std::array<std::uint32_t, 1> dep{};
  for (core::Rank r = 0; r < p; ++r) {
    s.begin_rank(r);
    if (r != root) {
      const auto parts = split(r);
      const std::uint32_t go = s.recv(root, none);
      const std::uint32_t first = s.send(root, parts[0], {go});
      s.send(root, parts[1], {first});
      continue;
    }
    bool waited = false;
    for (core::Rank q = 0; q < p; ++q) {
      if (q == root) {
        continue;
      }
      const auto parts = split(q);
      dep[0] = detail::add_op(s, OpKind::recv, q, parts[0], std::span(dep.data(), waited ? 1 : 0));
      waited = true;
      s.send(q, none);
      s.recv(q, parts[1]);
    }
  }
  s.finish();
  return s;
}

} // namespace

AlgorithmInfo describe_gather_linear_sync() {
  AlgorithmInfo a;
  a.name = kName;
  a.collective = core::CollectiveKind::gather;
  a.summary = "the root sends each rank a go-ahead in turn; the rank answers with its block in two "
              "segments";
  a.source = "Open MPI ompi_coll_base_gather_intra_linear_sync";
  a.aliases = {"ompi:3", "ompi:linear_sync", "smpi:ompi_linear_sync"};
  a.params = {{kFirst, 0, 0, std::int64_t{1} << 30,
               "bytes of each rank's first segment; 0 = the whole block (Open MPI's fixed "
               "decision)"}};
  a.check = [](const Request& req) {
    return detail::size_limit_refusal(linear_sync_counts(req.ranks));
  };
  a.generate = generate_linear_sync;
  a.cost_formula = "none declared (about 2(p-1)a + (p-1)/p n b)";
  return a;
}

} // namespace collsim::algorithms
