// Bruck allgather, radix k (algorithms.md AG2): the blocks are kept rotated, rank r's block first,
// so that what a rank holds is always a prefix; in the step of distance d = 1, k, k^2, ... it sends
// that prefix to r - i d and receives the peer's prefix from r + i d (i = 1..k-1), then a final
// local rotation puts the blocks in place.
//
// Source: J. Bruck, C.-T. Ho, S. Kipnis, E. Upfal and D. Weathersby, "Efficient algorithms for
// all-to-all communications in multiport message-passing systems", IEEE TPDS 8(11), 1997; Open MPI
// ompi_coll_base_allgather_intra_k_bruck (coll/tuned allgather algorithm 2, "bruck-k-fanout"; the
// fixed decision uses radix 2); MPICH MPIR_Allgather_intra_brucks (radix 2) and
// MPIR_Allgather_intra_k_brucks; SMPI "bruck" (radix 2).
//
// Cost, radix 2 (p divides n, local copies free): ceil(lg p) a + (p-1)/p n b, plus the copies of
// n bytes (own block in, rotation out) at the copy rate. Radix k: ceil(log_k p) steps of up to k-1
// messages each; MPICH quotes log_k p a + (p-1)/p n log_k p b (sic). How the k-1 messages of a step
// share a port is the engine's business, so cost() declines for k > 2.
//
// Schedule, rank r. `tmp` holds the rotated vector: local block j is block (r + j) mod p, at the
// offset where the sizes of blocks r .. r+j-1 end (blocks may differ by one byte, so the layout
// is per rank; a prefix of j blocks has the same length on every rank that holds them).
//   copy data[block r] -> tmp[local 0]
//   for d = 1, k, k^2, ... < p, for i = 1..k-1 with i d < p, c = min(d, p - i d) blocks:
//     send tmp[local 0 .. c) to r - i d; recv tmp[local i d .. i d + c) from r + i d
//   copy tmp[local 1 .. p-r) -> data[blocks r+1 .. p) and tmp[local p-r .. p) -> data[blocks 0 ..
//   r)
//     (rank 0 has no second part, rank p-1 no first).
// Zero-length messages (n < p) are kept.
//
// Dependencies: a send of step t reads every block received so far, so it waits for the receives
// of step t-1 and, to be ordered after earlier steps too, for the first send of step t-1 (the
// first step's sends wait for the initial copy). Receives write local blocks nothing has touched.
// The final copies wait as a send of one step more would.

#include "allgather/allgather_algorithms.hpp"
#include "collsim/core/layout.hpp"
#include "generator_support.hpp"

#include <algorithm>
#include <vector>

namespace collsim::algorithms {
namespace {

using core::OpKind;
using detail::OpCounts;

constexpr const char* kName = "bruck";
constexpr std::int64_t kMaxRadix = 1024;

std::uint32_t radix_of(const Request& req) {
  const auto it = req.params.find("radix");
  return it == req.params.end() ? 2U : static_cast<std::uint32_t>(it->second);
}

/// Messages per step: steps[t] is the number of (send, recv) pairs of the step of distance k^t.
std::vector<std::uint32_t> step_sizes(std::uint32_t p, std::uint32_t radix) {
  std::vector<std::uint32_t> steps;
  for (std::uint64_t d = 1; d < p; d *= radix) {
    steps.push_back(static_cast<std::uint32_t>(std::min<std::uint64_t>(radix - 1, (p - 1) / d)));
  }
  return steps;
}

OpCounts bruck_counts(std::uint32_t p, std::uint32_t radix) {
  if (p < 2) {
    return {};
  }
  const std::uint64_t pp = p;
  const std::vector<std::uint32_t> steps = step_sizes(p, radix);
  std::uint64_t ops = 1;  // the initial copy
  std::uint64_t deps = 0; // per rank, before the final copies
  std::uint64_t previous = 0;
  for (std::size_t t = 0; t < steps.size(); ++t) {
    ops += 2ULL * steps[t];
    deps += steps[t] * (t == 0 ? 1 : previous + 1);
    previous = steps[t];
  }
  // 2p - 2 final copies over all ranks, each waiting for the last step's receives and first send.
  return {pp * ops + 2 * (pp - 1), pp * deps + 2 * (pp - 1) * (previous + 1)};
}

core::Schedule generate_bruck(const Request& req) {
  const std::uint32_t p = req.ranks;
  const std::uint64_t n = req.bytes.value;
  const std::uint32_t radix = radix_of(req);
  core::Schedule s(make_header(req, p > 1 ? n : 0, kName));
  const core::BlockLayout lay(s.header());
  const OpCounts counts = bruck_counts(p, radix);
  s.reserve(counts.ops, counts.deps);
  if (p < 2) {
    s.finish();
    return s;
  }
  const std::vector<std::uint32_t> steps = step_sizes(p, radix);
  std::vector<std::uint64_t> local(static_cast<std::size_t>(p) + 1); // rotated block offsets
  std::vector<std::uint32_t> deps;
  std::vector<std::uint32_t> next_deps;
  for (core::Rank r = 0; r < p; ++r) {
    s.begin_rank(r);
    for (std::uint32_t j = 0; j < p; ++j) {
      local[j + 1] =
          local[j] + lay.block(static_cast<core::Rank>((std::uint64_t{r} + j) % p)).second;
    }
    // Local blocks [first, first + count) of tmp.
    const auto rotated = [&](std::uint64_t first, std::uint64_t count) {
      return detail::tmp_range(local[first], local[first + count] - local[first]);
    };
    const auto [own_offset, own_length] = lay.block(r);
    const std::uint64_t own_end = own_offset + own_length;
    deps.assign(1, s.copy(detail::data_range(own_offset, own_length), rotated(0, 1)));
    std::uint64_t d = 1;
    for (const std::uint32_t messages : steps) {
      next_deps.clear();
      std::uint32_t first_send = 0;
      for (std::uint64_t i = 1; i <= messages; ++i) {
        const std::uint64_t count = std::min<std::uint64_t>(d, p - i * d); // i d < p
        const auto to = static_cast<core::Rank>((r + p - i * d) % p);
        const auto from = static_cast<core::Rank>((r + i * d) % p);
        const std::uint32_t sent = detail::add_op(s, OpKind::send, to, rotated(0, count), deps);
        first_send = i == 1 ? sent : first_send;
        next_deps.push_back(detail::add_op(s, OpKind::recv, from, rotated(i * d, count), {}));
      }
      next_deps.push_back(first_send);
      deps.swap(next_deps);
      d *= radix;
    }
    // Rotate back: local blocks 1 .. p-r-1 are blocks r+1 .. p-1, the rest are blocks 0 .. r-1.
    if (r + 1 < p) {
      s.add(OpKind::copy, 0, detail::data_range(own_end, n - own_end), rotated(1, p - r - 1), deps);
    }
    if (r > 0) {
      s.add(OpKind::copy, 0, detail::data_range(0, own_offset), rotated(p - r, r), deps);
    }
  }
  s.finish();
  return s;
}

std::optional<CostTerms> bruck_cost(const Request& req) {
  if (!req.counts.empty()) {
    return std::nullopt;
  }
  const std::uint64_t p = req.ranks;
  const std::uint64_t n = req.bytes.value;
  if (p == 0 || n % p != 0 || radix_of(req) != 2) {
    return std::nullopt;
  }
  const std::uint64_t block = n / p; // exact: p divides n
  return CostTerms{static_cast<double>(detail::ceil_log2(req.ranks)),
                   static_cast<double>((p - 1) * block), 0.0};
}

} // namespace

AlgorithmInfo describe_allgather_bruck() {
  AlgorithmInfo a;
  a.name = kName;
  a.collective = core::CollectiveKind::allgather;
  a.summary = "ceil(log_k p) steps at distances 1, k, k^2, ... on a rotated copy, then one local "
              "rotation";
  a.source = "Bruck et al., IEEE TPDS 1997; Open MPI ompi_coll_base_allgather_intra_k_bruck; MPICH "
             "MPIR_Allgather_intra_brucks and MPIR_Allgather_intra_k_brucks";
  a.aliases = {"ompi:2", "ompi:bruck-k-fanout", "mpich:brucks", "mpich:k_brucks", "smpi:bruck"};
  a.params = {{"radix", 2, 2, kMaxRadix,
               "k: peers per step (k-1 messages) and growth of the distance (Open MPI and MPICH's "
               "default 2 is classic Bruck)"}};
  a.check = [](const Request& req) {
    return detail::size_limit_refusal(bruck_counts(req.ranks, radix_of(req)));
  };
  a.counts = true; // allgatherv: Open MPI ompi_coll_base_allgatherv_intra_bruck; MPICH
                   // MPIR_Allgatherv_intra_brucks
  a.generate = generate_bruck;
  a.cost = bruck_cost;
  a.cost_formula = "radix 2: ceil(lg p) a + (p-1)/p n b, plus two local copies of n (exact when p "
                   "divides n and copies are free); radix k: ceil(log_k p) steps of up to k-1 "
                   "messages, no closed form here";
  return a;
}

} // namespace collsim::algorithms
