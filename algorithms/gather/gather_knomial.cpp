// K-nomial gather: UCC tl/ucp's gather (its only one in v1.1.0), radix 4.
//
// Source: UCC v1.1.0 src/components/tl/ucp/gather/gather_knomial.c
// (ucc_tl_ucp_gather_knomial_progress) and gather.c (radix min(UCC_TL_UCP_GATHER_KN_RADIX, p),
// default 4 in tl_ucp.c). Over relative ranks v = (r - root) mod p, at distances d = 1, k, k^2,
// ... < p: a rank with v mod d = 0 and digit (v / d) mod k = 0 receives from each child
// v + i d (i = 1 .. k-1, while below p) its subtree of min(d, p - v - i d) blocks; a rank whose
// digit is not 0 sends its subtree of min(d, p - v) blocks to v - digit x d and is done. The root
// receives each subtree straight into the result at its ranks' places, in two messages when the
// subtree's ranks wrap past rank p-1 (the child then sends it in the same two pieces).
//
// Schedule: as gather_binomial.cpp, a rank with children gathers in `tmp` laid out in relative
// order (relative block j = block (j + root) mod p, at rel_off[j]); it first copies its own block
// there. A rank without children sends its block straight from `data`.
// Dependencies: a rank's sends wait for its copy and all its receives; receives need none (their
// ranges are disjoint).
//
// Cost (p a power of k, p | n): the root receives k-1 subtrees per level, the subtrees of level
// L being k^L blocks: log_k p levels; no closed form is declared (a level's k-1 messages reach
// one port one after another).

#include "gather/gather_algorithms.hpp"
#include "generator_support.hpp"

#include <algorithm>
#include <array>
#include <vector>

namespace collsim::algorithms {
namespace {

using core::OpKind;
using detail::OpCounts;

constexpr const char* kName = "knomial";
constexpr const char* kRadix = "radix";
constexpr std::int64_t kMaxRadix = 1024;

std::uint32_t radix_of(const Request& req) {
  const auto it = req.params.find(kRadix);
  const std::int64_t cfg = it == req.params.end() ? 4 : it->second;
  return static_cast<std::uint32_t>(std::max<std::int64_t>(
      2, std::min<std::int64_t>(cfg, std::max<std::uint32_t>(req.ranks, 2))));
}

template <class Out>
void build(const Request& req, Out& out) {
  const std::uint32_t p = req.ranks;
  const std::uint64_t n = req.bytes.value;
  const core::Rank root = req.root;
  const std::uint64_t k = radix_of(req);
  // rel_off[j]: where relative block j starts in the relative layout of `tmp`.
  std::vector<std::uint64_t> rel_off(static_cast<std::size_t>(p) + 1, 0);
  for (std::uint32_t j = 0; j < p; ++j) {
    rel_off[j + 1] = rel_off[j] + core::block_range(n, p, (j + root) % p).second;
  }
  const auto rel_tmp = [&](std::uint64_t lo, std::uint64_t hi) {
    return detail::tmp_range(rel_off[lo], rel_off[hi] - rel_off[lo]);
  };
  const auto real = [&](std::uint64_t v) { return static_cast<core::Rank>((v + root) % p); };
  // Relative blocks [lo, hi) received straight into `data` from byte `at`.
  const auto into_data = [&](std::uint64_t lo, std::uint64_t hi, std::uint64_t at) {
    return detail::data_range(at, rel_off[hi] - rel_off[lo]);
  };
  const core::Range none{};
  std::vector<std::uint32_t> deps;
  for (core::Rank r = 0; r < p; ++r) {
    out.begin_rank(r);
    if (p < 2) {
      continue;
    }
    const std::uint64_t v = (r + p - root) % p;
    const auto [own, own_len] = core::block_range(n, p, r);
    deps.clear();
    bool gathered = false; // own block copied into tmp
    for (std::uint64_t d = 1; d < p; d *= k) {
      if (v % d != 0) {
        break;
      }
      const std::uint64_t pos = (v / d) % k;
      if (pos != 0) {
        // Send the subtree to the parent, in two pieces where it reaches the root wrapped.
        const std::uint64_t count = std::min(d, p - v);
        const core::Rank parent = real(v - pos * d);
        if (!gathered) {
          out.add(OpKind::send, parent, detail::data_range(own, own_len), none, deps);
          break;
        }
        const std::uint64_t to_end = p - r; // blocks r .. p-1 come first at the root
        if (v - pos * d == 0 && count > to_end) {
          out.add(OpKind::send, parent, rel_tmp(v, v + to_end), none, deps);
          out.add(OpKind::send, parent, rel_tmp(v + to_end, v + count), none, deps);
        } else {
          out.add(OpKind::send, parent, rel_tmp(v, v + count), none, deps);
        }
        break;
      }
      for (std::uint64_t i = 1; i < k; ++i) {
        const std::uint64_t c = v + i * d;
        if (c >= p) {
          break;
        }
        const std::uint64_t count = std::min(d, p - c);
        if (v == 0) {
          // The root: straight into the result at the ranks' places.
          const core::Rank child = real(c);
          const std::uint64_t to_end = p - child;
          const auto at = core::block_range(n, p, child).first;
          if (count > to_end) {
            out.add(OpKind::recv, child, into_data(c, c + to_end, at), none, {});
            out.add(OpKind::recv, child, into_data(c + to_end, c + count, 0), none, {});
          } else {
            out.add(OpKind::recv, child, into_data(c, c + count, at), none, {});
          }
          continue;
        }
        if (!gathered) {
          deps.push_back(
              out.add(OpKind::copy, 0, rel_tmp(v, v + 1), detail::data_range(own, own_len), {}));
          gathered = true;
        }
        deps.push_back(out.add(OpKind::recv, real(c), rel_tmp(c, c + count), none, {}));
      }
    }
  }
}

OpCounts counts_of(const Request& req) {
  return detail::count_ops([&](auto& out) { build(req, out); });
}

core::Schedule generate(const Request& req) {
  return detail::build_counted(make_header(req, req.ranks > 2 ? req.bytes.value : 0, kName),
                               [&](auto& out) { build(req, out); });
}

} // namespace

AlgorithmInfo describe_gather_knomial() {
  AlgorithmInfo a;
  a.name = kName;
  a.collective = core::CollectiveKind::gather;
  a.summary = "k-nomial tree over relative ranks: each parent takes its k-1 children's subtrees "
              "per level, the root straight into the result";
  a.source = "UCC v1.1.0 tl/ucp gather_knomial.c, gather.c";
  // No ucc: alias: UCC 1.1's TUNE cannot name a gather algorithm (ucc_tl_ucp_alg_id_to_init in
  // tl_ucp_coll.c selects for allreduce, bcast, alltoall and reduce_scatter only), and a
  // `ucc-tune` file writes under the ucc: aliases.
  a.params = {{kRadix, 4, 2, kMaxRadix,
               "tree radix k (UCC_TL_UCP_GATHER_KN_RADIX, default 4; lowered to p)"}};
  a.check = [](const Request& req) { return detail::size_limit_refusal(counts_of(req)); };
  a.generate = generate;
  a.cost_formula = "log_k p levels of k-1 subtrees (none declared: a level's messages reach one "
                   "port one after another)";
  return a;
}

} // namespace collsim::algorithms
