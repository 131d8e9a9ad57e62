// SRA knomial allreduce: UCC's scatter-reduce-allgather on its recursive k-nomial pattern, the
// default of UCC's tl/ucp for allreduce from 4 KiB ("allreduce:4k-inf:@1", radix 4).
//
// Source: UCC v1.1.0 src/components/tl/ucp/allreduce/allreduce_sra_knomial.c (a k-nomial
// reduce-scatter followed by a k-nomial allgather with the same radix),
// src/components/tl/ucp/reduce_scatter/reduce_scatter_knomial.c,
// src/components/tl/ucp/allgather/allgather_knomial.c, and the pattern in
// src/coll_patterns/recursive_knomial.h and sra_knomial.h, step for step:
//   radix = min(k, p), lowered to 2 when the vector is too short to split k ways
//     (ucc_knomial_pattern_get_min_radix; count in 4-byte elements).
//   P = the smallest power with k^P >= p; full = k^P if that is p, else k^(P-1);
//   n_extra = p - floor(p / full) full. Ranks below 2 n_extra pair up: the odd one ("extra")
//   sends its vector to the even one ("proxy") before and receives the result after; the others
//   keep the loop rank r - n_extra, proxies r / 2.
//   Iteration i = 0 .. P-1 (distance d = k^i): the peers of loop rank l are
//   (l + s d) mod (k d) + (l - l mod (k d)) for s = 1 .. k-1, those >= p - n_extra absent. With m
//   the members present, the rank's current block is cut into m near-equal segments (the first
//   len mod m one byte longer), member j = (l mod k d) / d keeps segment j: it sends segment j'
//   to member j' and reduces the members' copies of segment j into its own.
//   The allgather runs the iterations backwards: each member sends its segment to the others
//   and receives theirs.
// Below P-1 every group is full (p - n_extra is a multiple of k^(P-1)); only the last iteration
// may have fewer than k members.
//
// Dependencies: an iteration's sends and first receive wait for the previous iteration's last
// receive (they wrote the block); the receives that reduce into one segment wait for one another;
// an allgather receive also waits for the reduce-scatter sends of its iteration (they read the
// segment it overwrites).
//
// Cost: for p = k^P, 2 P (k-1) messages and 2 (p-1)/p n bytes per rank, (p-1)/p n reduced; no
// closed form is declared (the k-1 messages of a step leave one port one after another).

#include "allreduce/allreduce_algorithms.hpp"
#include "allreduce/ucc_knomial_pattern.hpp"
#include "generator_support.hpp"

#include <algorithm>
#include <vector>

namespace collsim::algorithms {
namespace {

using core::OpKind;
using detail::OpCounts;
using detail::UccKnomialPattern;
using detail::UccStep;

constexpr const char* kName = "sra_knomial";
constexpr const char* kRadix = "radix";
constexpr std::int64_t kMaxRadix = 64;

std::uint32_t radix_of(const Request& req) {
  const auto it = req.params.find(kRadix);
  const std::uint64_t cfg = it == req.params.end() ? 4 : static_cast<std::uint64_t>(it->second);
  return detail::ucc_min_radix(cfg, req.ranks, req.bytes.value / 4);
}

template <class Out>
void build(const Request& req, Out& out) {
  const std::uint32_t p = req.ranks;
  const std::uint64_t n = req.bytes.value;
  const UccKnomialPattern pat(p, radix_of(req));
  const core::Range whole = detail::data_range(0, n);
  const core::Range none{};
  const auto same = [](core::Rank r) { return r; };
  std::vector<std::uint32_t> prev;
  std::vector<UccStep> steps;
  for (core::Rank r = 0; r < p; ++r) {
    out.begin_rank(r);
    if (p < 2) {
      continue;
    }
    const core::Rank partner = r + 1;
    if (pat.extra(r)) {
      const std::uint32_t sent = out.add(OpKind::send, r - 1, whole, none, {});
      out.add(OpKind::recv, r - 1, whole, none, std::span<const std::uint32_t>(&sent, 1));
      continue;
    }
    prev.clear();
    if (pat.proxy(r)) {
      prev.push_back(out.add(OpKind::recv_reduce, partner, whole, none, {}));
    }
    detail::ucc_steps(pat, pat.loop_rank(r), n, steps);
    for (UccStep& st : steps) {
      for (std::size_t j = 0; j < st.members.size(); ++j) {
        if (j != st.self) {
          st.sends.push_back(
              out.add(OpKind::send, pat.rank_of(st.members[j]), st.segment(j), none, prev));
        }
      }
      // The members' copies of my segment are reduced into it one after another (UCC's
      // reduce_multi over them all).
      for (std::size_t j = 0; j < st.members.size(); ++j) {
        if (j != st.self) {
          const std::uint32_t red = out.add(OpKind::recv_reduce, pat.rank_of(st.members[j]),
                                            st.segment(st.self), none, prev);
          prev.assign(1, red);
        }
      }
    }
    detail::emit_ucc_allgather(out, steps, pat, same, prev);
    if (pat.proxy(r)) {
      out.add(OpKind::send, partner, whole, none, prev);
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

AlgorithmInfo describe_allreduce_sra_knomial() {
  AlgorithmInfo a;
  a.name = kName;
  a.collective = core::CollectiveKind::allreduce;
  a.summary = "UCC's scatter-reduce-allgather on its recursive k-nomial pattern: k-nomial "
              "reduce-scatter, then the mirrored allgather; odd ranks below 2 x extra fold into "
              "their even neighbour";
  a.source = "UCC v1.1.0 tl/ucp allreduce_sra_knomial.c, reduce_scatter_knomial.c, "
             "allgather_knomial.c, coll_patterns/recursive_knomial.h, sra_knomial.h";
  a.aliases = {"ucc:sra_knomial"};
  a.params = {{kRadix, 4, 2, kMaxRadix,
               "radix k (UCC_TL_UCP_ALLREDUCE_SRA_KN_RADIX, default 4; lowered to min(k, p), "
               "and to 2 for vectors too short to split k ways)"}};
  a.constraints = {"commutative operations only (segments are reduced in arrival order)"};
  a.check = [](const Request& req) { return detail::size_limit_refusal(counts_of(req)); };
  a.generate = generate;
  a.cost_formula = "p = k^P: 2 P (k-1) a + 2(p-1)/p n b + (p-1)/p n g (single-port; not exact: "
                   "a step's k-1 messages leave one port one after another)";
  return a;
}

} // namespace collsim::algorithms
