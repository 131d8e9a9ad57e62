// SAG knomial broadcast: UCC's scatter-allgather on its recursive k-nomial pattern, the default
// of UCC's tl/ucp for bcast from 32 KiB ("bcast:0-32k:@0#bcast:32k-inf:@1", radix 4).
//
// Source: UCC v1.1.0 src/components/tl/ucp/bcast/bcast_sag_knomial.c (a k-nomial scatter, then
// the k-nomial allgather of the SRA allreduce with the same radix: "an extension of the
// Bi-nomial SRA algorithm"), src/components/tl/ucp/scatter/scatter_knomial.c,
// src/components/tl/ucp/allgather/allgather_knomial.c, and the pattern of
// src/coll_patterns/recursive_knomial.h and sra_knomial.h (allreduce/ucc_knomial_pattern.hpp):
//   radix = min(k, p), lowered to 2 when the vector is too short to split k ways
//     (ucc_knomial_pattern_get_min_radix, with the count in bytes: OSU broadcasts MPI_CHAR).
//   Ranks are taken relative to the root (scatter_knomial.c's VRANK), so the root is loop rank
//   0. Below 2 n_extra the odd relative ranks ("extra") take no part in the exchange and receive
//   the vector from their even neighbour ("proxy") at the end.
//   Scatter, iteration i = 0 .. P-1 (distance d = k^i): a loop rank l < d holds its block and
//   cuts it as SRA's reduce-scatter does (m members l + j d present, m near-equal segments, the
//   first len mod m one byte longer); it keeps segment 0 and sends segment j to member j. A loop
//   rank d <= l < k d receives its segment at iteration i (scatter_knomial.c's calc_recv_dist)
//   and holds it from then on, so after the scatter every loop rank holds the segment the SRA
//   reduce-scatter would leave it.
//   Allgather: SRA's, iterations backwards: each member sends its segment to the others and
//   receives theirs; a proxy then sends the whole vector to its extra rank.
// UCC runs the allgather on the team's own ranks, the scatter on ranks relative to the root; with
// the root at rank 0 (OSU's osu_bcast) they coincide. collsim runs both relative to the root,
// so that every root broadcasts.
//
// Dependencies: a rank's scatter sends wait for its scatter receive; its allgather sends wait for
// its latest receives; an allgather receive also waits for the scatter sends of its iteration
// (they read the segments it overwrites).
//
// Cost: for p = k^P, 2 P (k-1) messages on the root's path and 2 (p-1)/p n bytes per rank; no
// closed form is declared (a step's k-1 messages leave one port one after another).

#include "allreduce/ucc_knomial_pattern.hpp"
#include "bcast/bcast_algorithms.hpp"
#include "generator_support.hpp"

#include <algorithm>
#include <vector>

namespace collsim::algorithms {
namespace {

using core::OpKind;
using detail::OpCounts;
using detail::UccKnomialPattern;
using detail::UccStep;

constexpr const char* kName = "sag_knomial";
constexpr const char* kRadix = "radix";
constexpr std::int64_t kMaxRadix = 64;

std::uint32_t radix_of(const Request& req) {
  const auto it = req.params.find(kRadix);
  const std::uint64_t cfg = it == req.params.end() ? 4 : static_cast<std::uint64_t>(it->second);
  return detail::ucc_min_radix(cfg, req.ranks, req.bytes.value);
}

template <class Out>
void build(const Request& req, Out& out) {
  const std::uint32_t p = req.ranks;
  const std::uint64_t n = req.bytes.value;
  const core::Rank root = req.root;
  const UccKnomialPattern pat(p, radix_of(req));
  const core::Range whole = detail::data_range(0, n);
  const core::Range none{};
  const auto real = [&](std::uint64_t v) { return static_cast<core::Rank>((v + root) % p); };
  std::vector<std::uint32_t> prev;
  std::vector<UccStep> steps;
  for (core::Rank r = 0; r < p; ++r) {
    out.begin_rank(r);
    if (p < 2) {
      continue;
    }
    const std::uint32_t v = (r + p - root) % p;
    if (pat.extra(v)) {
      out.add(OpKind::recv, real(v - 1), whole, none, {});
      continue;
    }
    const std::uint32_t l = pat.loop_rank(v);
    detail::ucc_steps(pat, l, n, steps);
    // The scatter: receive once (every loop rank but the root), then pass on.
    prev.clear();
    std::uint64_t d = 1;
    for (UccStep& st : steps) {
      if (l >= d && l < d * pat.k) {
        prev.push_back(
            out.add(OpKind::recv, real(pat.rank_of(st.members[0])), st.segment(st.self), none, {}));
      } else if (l < d) {
        for (std::size_t j = 1; j < st.members.size(); ++j) {
          st.sends.push_back(
              out.add(OpKind::send, real(pat.rank_of(st.members[j])), st.segment(j), none, prev));
        }
      }
      d *= pat.k;
    }
    detail::emit_ucc_allgather(out, steps, pat, real, prev);
    if (pat.proxy(v)) {
      out.add(OpKind::send, real(v + 1), whole, none, prev);
    }
  }
}

OpCounts counts_of(const Request& req) {
  return detail::count_ops([&](auto& out) { build(req, out); });
}

core::Schedule generate(const Request& req) {
  return detail::build_counted(make_header(req, 0, kName), [&](auto& out) { build(req, out); });
}

} // namespace

AlgorithmInfo describe_bcast_sag_knomial() {
  AlgorithmInfo a;
  a.name = kName;
  a.collective = core::CollectiveKind::bcast;
  a.summary = "UCC's scatter-allgather on its recursive k-nomial pattern: k-nomial scatter from "
              "the root, then SRA's k-nomial allgather; odd ranks below 2 x extra get the vector "
              "from their even neighbour at the end";
  a.source = "UCC v1.1.0 tl/ucp bcast_sag_knomial.c, scatter_knomial.c, allgather_knomial.c, "
             "coll_patterns/recursive_knomial.h, sra_knomial.h";
  a.aliases = {"ucc:sag_knomial"};
  a.params = {{kRadix, 4, 2, kMaxRadix,
               "radix k (UCC_TL_UCP_BCAST_SAG_KN_RADIX, default 4; lowered to min(k, p), and to 2 "
               "for vectors too short to split k ways)"}};
  a.check = [](const Request& req) { return detail::size_limit_refusal(counts_of(req)); };
  a.generate = generate;
  a.cost_formula = "p = k^P: 2 P (k-1) a + 2 (p-1)/p n b (single-port; not exact: a step's k-1 "
                   "messages leave one port one after another)";
  return a;
}

} // namespace collsim::algorithms
