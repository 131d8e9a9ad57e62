// Binomial-tree gather (algorithms.md GA2): over relative ranks vr = (r - root) mod p, in step k a
// rank with bit k of vr set sends its accumulated subtree to vr - 2^k and stops; otherwise it
// receives the subtree of vr + 2^k (if that rank exists).
//
// Source: MPICH MPIR_Gather_intra_binomial; Open MPI ompi_coll_base_gather_intra_binomial
// (coll/tuned gather algorithm 2); SMPI "ompi_binomial".
//
// Cost (p a power of two, p | n): lg p a + (p-1)/p n b, exact: the root receives subtrees of
// b, 2b, 4b, ... bytes one after the other, and each arrives just as the previous one is in.
// For other p the tree has ceil(lg p) levels of uneven subtrees and cost() declines.
//
// Schedule: subtrees are contiguous in relative order, so every rank with children gathers in
// `tmp` laid out in relative order (relative block j = block (j + root) mod p, at rel_off[j], as
// MPICH's tmp_buf). A rank without children sends its block straight from `data`; one with
// children first copies its own block into `tmp`. The root receives each subtree straight into
// `data` when its blocks do not wrap past rank p-1; the one subtree that may wrap goes to `tmp`
// and is copied into `data` in two pieces.
// Dependencies: a rank's send waits for its copy and all its receives; the root's two copies wait
// for the receive they unpack. Receives need none: their ranges are disjoint.

#include "gather/gather_algorithms.hpp"
#include "generator_support.hpp"

#include <algorithm>
#include <bit>
#include <vector>

namespace collsim::algorithms {
namespace {

using core::OpKind;
using detail::OpCounts;

constexpr const char* kName = "binomial";

/// Children of relative rank vr (a binomial tree over p ranks), and whether vr is the root.
std::uint32_t child_count(std::uint32_t vr, std::uint32_t p) {
  std::uint32_t c = 0;
  for (std::uint32_t mask = 1; mask < p; mask <<= 1) {
    if ((vr & mask) != 0) {
      break;
    }
    if (vr + mask < p) {
      ++c;
    }
  }
  return c;
}

/// True when the relative subtree [lo, hi) maps to blocks that wrap past rank p-1.
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
    // A leaf: one send. Otherwise copy, receives, and a send that waits for all of them.
    c.ops += kids == 0 ? 1 : kids + 2;
    c.deps += kids == 0 ? 0 : kids + 1;
  }
  for (std::uint32_t mask = 1; mask < p; mask <<= 1) {
    c.ops += 1;
    if (wraps(mask, std::min(2 * mask, p), root, p)) {
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
  // rel_off[j]: where relative block j starts in the relative layout of `tmp`.
  std::vector<std::uint64_t> rel_off(static_cast<std::size_t>(p) + 1, 0);
  for (std::uint32_t j = 0; j < p; ++j) {
    rel_off[j + 1] = rel_off[j] + core::block_range(n, p, (j + root) % p).second;
  }
  const auto rel_tmp = [&](std::uint32_t lo, std::uint32_t hi) {
    return detail::tmp_range(rel_off[lo], rel_off[hi] - rel_off[lo]);
  };
  std::vector<std::uint32_t> deps;
  for (core::Rank r = 0; r < p; ++r) {
    s.begin_rank(r);
    const std::uint32_t vr = (r + p - root) % p;
    const auto [own, own_len] = core::block_range(n, p, r);
    if (vr == 0) {
      for (std::uint32_t mask = 1; mask < p; mask <<= 1) {
        const std::uint32_t hi = std::min(2 * mask, p);
        const core::Rank child = (mask + root) % p;
        const std::uint64_t len = rel_off[hi] - rel_off[mask];
        if (!wraps(mask, hi, root, p)) {
          s.recv(child, detail::data_range(core::block_range(n, p, child).first, len));
          continue;
        }
        // Blocks child..p-1 land at the end of data, blocks 0.. at its start.
        const std::uint32_t split = p - root; // relative index of block 0
        const std::uint32_t got = s.recv(child, rel_tmp(mask, hi));
        s.copy(rel_tmp(mask, split),
               detail::data_range(core::block_range(n, p, child).first,
                                  rel_off[split] - rel_off[mask]),
               {got});
        s.copy(rel_tmp(split, hi), detail::data_range(0, rel_off[hi] - rel_off[split]), {got});
      }
      continue;
    }
    if (child_count(vr, p) == 0) {
      const std::uint32_t low = std::uint32_t{1} << std::countr_zero(vr);
      s.send((vr - low + root) % p, detail::data_range(own, own_len));
      continue;
    }
    deps.clear();
    deps.push_back(s.copy(detail::data_range(own, own_len), rel_tmp(vr, vr + 1)));
    for (std::uint32_t mask = 1;; mask <<= 1) {
      if ((vr & mask) != 0) {
        detail::add_op(s, OpKind::send, (vr - mask + root) % p, rel_tmp(vr, std::min(vr + mask, p)),
                       deps);
        break;
      }
      if (vr + mask < p) {
        deps.push_back(
            s.recv((vr + mask + root) % p, rel_tmp(vr + mask, std::min(vr + 2 * mask, p))));
      }
    }
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

AlgorithmInfo describe_gather_binomial() {
  AlgorithmInfo a;
  a.name = kName;
  a.collective = core::CollectiveKind::gather;
  a.summary = "binomial tree over relative ranks; each rank forwards its whole subtree once";
  a.source = "MPICH MPIR_Gather_intra_binomial; Open MPI ompi_coll_base_gather_intra_binomial";
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
