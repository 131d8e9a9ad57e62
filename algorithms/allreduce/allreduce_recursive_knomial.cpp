// Recursive k-nomial allreduce: UCC's knomial allreduce, the default of UCC's tl/ucp below 4 KiB
// ("allreduce:0-4k:@0", radix 4).
//
// Source: UCC v1.1.0 src/components/tl/ucp/allreduce/allreduce_knomial.c on the pattern of
// src/coll_patterns/recursive_knomial.h (allreduce/ucc_knomial_pattern.hpp), step for step:
//   radix = min(k, p) (UCC_TL_UCP_ALLREDUCE_KN_RADIX, default 4).
//   Extras (odd ranks below 2 n_extra) send their vector to their proxy (the even rank before
//   them) and receive the result from it at the end; the proxy reduces the extra's vector into
//   its own first.
//   Iteration i (distance k^i): the rank sends its whole vector to each member of its group that
//   is present, receives theirs into scratch slots (UCC's (k-1) x n scratch), and reduces them
//   all into its vector once every transfer of the iteration has completed (reduce_multi).
//
// Dependencies: as UCC's progress: an iteration's sends and receives wait for the previous
// iteration's reduction, the reductions for all the iteration's transfers.
//
// Cost: for p = k^P, P (k-1) messages of n bytes per rank and P (k-1) n reduced (no closed form
// is declared: a step's k-1 messages leave one port one after another).

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

constexpr const char* kName = "recursive_knomial";
constexpr const char* kRadix = "radix";
constexpr std::int64_t kMaxRadix = 64;

std::uint32_t radix_of(const Request& req) {
  const auto it = req.params.find(kRadix);
  const std::uint64_t cfg = it == req.params.end() ? 4 : static_cast<std::uint64_t>(it->second);
  return static_cast<std::uint32_t>(
      std::min<std::uint64_t>(cfg, std::max<std::uint32_t>(req.ranks, 2)));
}

template <class Out>
void build(const Request& req, Out& out) {
  const std::uint32_t p = req.ranks;
  const std::uint64_t n = req.bytes.value;
  const UccKnomialPattern pat(p, radix_of(req));
  const core::Range whole = detail::data_range(0, n);
  const auto slot = [n](std::size_t i) { return detail::tmp_range(i * n, n); };
  const core::Range none{};
  std::vector<std::uint32_t> prev;
  std::vector<std::uint32_t> members;
  std::vector<std::uint32_t> round;
  for (core::Rank r = 0; r < p; ++r) {
    out.begin_rank(r);
    if (p < 2) {
      continue;
    }
    if (pat.extra(r)) {
      const std::uint32_t sent = out.add(OpKind::send, r - 1, whole, none, {});
      out.add(OpKind::recv, r - 1, whole, none, std::span(&sent, 1));
      continue;
    }
    prev.clear();
    if (pat.proxy(r)) {
      const std::uint32_t in = out.add(OpKind::recv, r + 1, slot(0), none, {});
      prev.push_back(out.add(OpKind::reduce, 0, whole, slot(0), std::span(&in, 1)));
    }
    const std::uint32_t l = pat.loop_rank(r);
    std::uint64_t d = 1;
    for (std::uint32_t i = 0; i < pat.iterations; ++i, d *= pat.k) {
      pat.members(l, d, members);
      round.clear();
      for (const std::uint32_t m : members) {
        if (m != l) {
          round.push_back(out.add(OpKind::send, pat.rank_of(m), whole, none, prev));
        }
      }
      std::size_t slots = 0;
      for (const std::uint32_t m : members) {
        if (m != l) {
          round.push_back(out.add(OpKind::recv, pat.rank_of(m), slot(slots++), none, prev));
        }
      }
      for (std::size_t s = 0; s < slots; ++s) {
        const std::uint32_t red = s == 0 ? out.add(OpKind::reduce, 0, whole, slot(s), round)
                                         : out.add(OpKind::reduce, 0, whole, slot(s), prev);
        prev.assign(1, red);
      }
    }
    if (pat.proxy(r)) {
      out.add(OpKind::send, r + 1, whole, none, prev);
    }
  }
}

OpCounts counts_of(const Request& req) {
  return detail::count_ops([&](auto& out) { build(req, out); });
}

core::Schedule generate(const Request& req) {
  const std::uint64_t slots = req.ranks > 1 ? radix_of(req) - 1 : 0;
  return detail::build_counted(make_header(req, slots * req.bytes.value, kName),
                               [&](auto& out) { build(req, out); });
}

} // namespace

AlgorithmInfo describe_allreduce_recursive_knomial() {
  AlgorithmInfo a;
  a.name = kName;
  a.collective = core::CollectiveKind::allreduce;
  a.summary = "UCC's recursive k-nomial allreduce: whole-vector exchanges within groups of k at "
              "distances 1, k, k^2, ...; odd ranks below 2 x extra fold into their even "
              "neighbour";
  a.source = "UCC v1.1.0 tl/ucp allreduce_knomial.c, coll_patterns/recursive_knomial.h";
  a.aliases = {"ucc:knomial"};
  a.params = {{kRadix, 4, 2, kMaxRadix,
               "radix k (UCC_TL_UCP_ALLREDUCE_KN_RADIX, default 4; lowered to min(k, p))"}};
  a.check = [](const Request& req) { return detail::size_limit_refusal(counts_of(req)); };
  a.generate = generate;
  a.cost_formula = "p = k^P: P (k-1) (a + n b + n g) (single-port textbook form; not exact: a "
                   "step's k-1 messages leave one port one after another)";
  return a;
}

} // namespace collsim::algorithms
