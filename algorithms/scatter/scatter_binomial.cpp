// Binomial-tree scatter (algorithms.md SC2), the mirror image of the binomial gather: over
// relative ranks vr = (r - root) mod p, the root sends the blocks of relative ranks [p'/2, p) ...
// to vr + p'/2, then the next half to vr + p'/4, and so on; every receiver keeps its own block and
// forwards the rest of its subtree the same way.
//
// Source: MPICH MPIR_Scatter_intra_binomial; Open MPI ompi_coll_base_scatter_intra_binomial
// (coll/tuned scatter algorithm 2); SMPI "ompi_binomial".
//
// Cost (p a power of two, p | n): lg p a + (p-1)/p n b, exact: every rank sends its largest
// subtree first, so the slowest path is root -> vr p/2 -> ... -> vr p-1, lg p messages of n/2,
// n/4, ..., n/p bytes. For other p, cost() declines.
//
// Schedule: subtrees are contiguous in relative order, so a rank with children receives its
// subtree into `tmp` in the relative layout (relative block j = block (j + root) mod p, at
// rel_off[j], as MPICH's tmp_buf), sends its children's parts from there, largest first, and copies
// its own block into `data`. A rank without children receives straight into its block of `data`.
// The root sends from `data` directly, except the one subtree whose blocks may wrap past rank
// p-1: it copies that subtree's two pieces into `tmp` first.
// Dependencies: sends and the copy wait for the receive that filled `tmp`; the root's wrapped
// send waits for its two copies.
//
// Not derived from the binomial gather by reversing time (issue 24 asked where such a fold keeps
// every schedule): the gather's programs read backwards, sends and receives swapped, are these
// but for the root's two copies of a subtree that wraps past rank p-1, which come out second
// piece first. A generic reversal would change one of the two schedules. (The tree bcast and
// reduce already share one generator, bcast_reduce_trees.hpp; the linear gather and scatter share
// their exchange, generator_support.hpp.)

#include "generator_support.hpp"
#include "scatter/scatter_algorithms.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <vector>

namespace collsim::algorithms {
namespace {

using detail::OpCounts;

constexpr const char* kName = "binomial";

/// The size of vr's subtree: min(lowbit(vr), p - vr); the root's is p.
std::uint32_t subtree(std::uint32_t vr, std::uint32_t p) {
  if (vr == 0) {
    return p;
  }
  return std::min(std::uint32_t{1} << std::countr_zero(vr), p - vr);
}

/// Children of vr: vr + m for m = (its lowbit, or bit_ceil(p) for the root) / 2 down to 1, while
/// vr + m < p.
std::uint32_t child_count(std::uint32_t vr, std::uint32_t p) {
  std::uint32_t c = 0;
  for (std::uint32_t m = 1; m < subtree(vr, p); m <<= 1) {
    ++c; // vr + m < vr + subtree(vr) <= p
  }
  return c;
}

bool wraps(std::uint32_t lo, std::uint32_t hi, core::Rank root, std::uint32_t p) {
  const std::uint64_t start = (std::uint64_t{lo} + root) % p;
  return start + (hi - lo) > p;
}

OpCounts binomial_counts(std::uint32_t p, core::Rank root) {
  OpCounts c;
  if (p < 2) {
    return c;
  }
  for (std::uint32_t vr = 1; vr < p; ++vr) {
    const std::uint64_t kids = child_count(vr, p);
    // A leaf: one receive. Otherwise receive, sends and a copy, each waiting for the receive.
    c.ops += kids == 0 ? 1 : kids + 2;
    c.deps += kids == 0 ? 0 : kids + 1;
  }
  for (std::uint32_t m = 1; m < p; m <<= 1) {
    c.ops += 1;
    if (wraps(m, std::min(2 * m, p), root, p)) {
      c.ops += 2;
      c.deps += 2;
    }
  }
  return c;
}

core::Schedule generate_binomial(const Request& req) {
  const std::uint32_t p = req.ranks;
  const std::uint64_t n = req.bytes.value;
  const core::Rank root = req.root;
  core::Schedule s(make_header(req, p > 2 ? n : 0, kName));
  const OpCounts counts = binomial_counts(p, root);
  s.reserve(counts.ops, counts.deps);
  if (p < 2) {
    s.finish();
    return s;
  }
  std::vector<std::uint64_t> rel_off(static_cast<std::size_t>(p) + 1, 0);
  for (std::uint32_t j = 0; j < p; ++j) {
    rel_off[j + 1] = rel_off[j] + core::block_range(n, p, (j + root) % p).second;
  }
  const auto rel_tmp = [&](std::uint32_t lo, std::uint32_t hi) {
    return detail::tmp_range(rel_off[lo], rel_off[hi] - rel_off[lo]);
  };
  const std::uint32_t top = std::bit_ceil(p) >> 1;
  for (core::Rank r = 0; r < p; ++r) {
    s.begin_rank(r);
    const std::uint32_t vr = (r + p - root) % p;
    const auto [own, own_len] = core::block_range(n, p, r);
    if (vr == 0) {
      for (std::uint32_t m = top; m > 0; m >>= 1) {
        const std::uint32_t hi = std::min(2 * m, p);
        const core::Rank child = (m + root) % p;
        const std::uint64_t start = core::block_range(n, p, child).first;
        if (!wraps(m, hi, root, p)) {
          s.send(child, detail::data_range(start, rel_off[hi] - rel_off[m]));
          continue;
        }
        const std::uint32_t split = p - root; // relative index of block 0
        const std::array<std::uint32_t, 2> packed{
            s.copy(detail::data_range(start, rel_off[split] - rel_off[m]), rel_tmp(m, split)),
            s.copy(detail::data_range(0, rel_off[hi] - rel_off[split]), rel_tmp(split, hi))};
        detail::add_op(s, core::OpKind::send, child, rel_tmp(m, hi), packed);
      }
      continue;
    }
    const std::uint32_t size = subtree(vr, p);
    const std::uint32_t low = std::uint32_t{1} << std::countr_zero(vr);
    const core::Rank parent = (vr - low + root) % p;
    if (size == 1) {
      s.recv(parent, detail::data_range(own, own_len));
      continue;
    }
    const std::uint32_t got = s.recv(parent, rel_tmp(vr, vr + size));
    for (std::uint32_t m = std::bit_floor(size - 1); m > 0; m >>= 1) {
      s.send((vr + m + root) % p, rel_tmp(vr + m, std::min(vr + 2 * m, vr + size)), {got});
    }
    s.copy(rel_tmp(vr, vr + 1), detail::data_range(own, own_len), {got});
  }
  s.finish();
  return s;
}

std::optional<CostTerms> binomial_cost(const Request& req) {
  const std::uint64_t p = req.ranks;
  const std::uint64_t n = req.bytes.value;
  if (!std::has_single_bit(p) || n % p != 0) {
    return std::nullopt;
  }
  return CostTerms{static_cast<double>(detail::floor_log2(req.ranks)),
                   static_cast<double>((p - 1) * (n / p)), 0.0};
}

} // namespace

AlgorithmInfo describe_scatter_binomial() {
  AlgorithmInfo a;
  a.name = kName;
  a.collective = core::CollectiveKind::scatter;
  a.summary = "binomial tree over relative ranks; the root sends half the data first";
  a.source = "MPICH MPIR_Scatter_intra_binomial; Open MPI ompi_coll_base_scatter_intra_binomial";
  a.aliases = {"ompi:2", "ompi:binomial", "mpich:binomial", "smpi:ompi_binomial"};
  a.check = [](const Request& req) {
    return detail::size_limit_refusal(binomial_counts(req.ranks, req.root));
  };
  a.generate = generate_binomial;
  a.cost = binomial_cost;
  a.cost_formula = "lg p a + (p-1)/p n b (exact when p is a power of two dividing n)";
  return a;
}

} // namespace collsim::algorithms
