// Scatter + recursive-doubling allgather broadcast (van de Geijn; algorithms.md BC9).
//
// Source: M. Barnett, L. Shuler, R. van de Geijn, S. Gupta, D. Payne, J. Watts, "Interprocessor
// collective communication library (InterCom)", SHPCC 1994; MPICH
// MPIR_Bcast_intra_scatter_recursive_doubling_allgather; Open MPI
// ompi_coll_base_bcast_intra_scatter_allgather (coll/tuned bcast algorithm 8); SMPI
// "scatter_rdb_allgather".
//
// Cost (p a power of two, p dividing n): 2 lg p a + 2 (p-1)/p n b: the binomial scatter takes lg p
// steps and moves (p-1)/p n along its critical path, the allgather lg p steps of 2^k n/p bytes.
// Otherwise the blocks are uneven or the fix-up steps below add rounds, and cost() declines.
//
// Schedule, relative rank vr, blocks of ss = ceil(n/p) bytes (bcast_scatter_support.hpp):
//   scatter: binomial, vr ends up with blocks [vr, vr + lowbit(vr)).
//   allgather, mask = 1, 2, 4, ... < p, subtree roots my = vr with the low lg(mask) bits cleared
//   and theirs = my ^ mask: if the partner vr ^ mask exists, send blocks [my, my + mask) and
//   receive [theirs, theirs + mask). When the partner subtree is incomplete (theirs + mask > p),
//   the first p - my - mask ranks of this subtree got the data and pass it to the others by
//   recursive halving (MPICH's "haves send to have-nots" step), which handles every p.
// Empty ranges are skipped on both sides. Everything lands in `data`: a receive that overwrites
// blocks still held from the scatter (the root's and a subtree root's copies) waits for the
// scatter send that read them; a send waits for every earlier receive, all of which brought bytes
// it sends.

#include "bcast/bcast_algorithms.hpp"
#include "bcast/bcast_scatter_support.hpp"

#include <vector>

namespace collsim::algorithms {
namespace {

using detail::BlockLayout;

constexpr const char* kName = "scatter_allgather";

template <class Emitter>
void emit(Emitter& e, const BlockLayout& L) {
  const std::uint32_t p = L.p;
  std::vector<std::uint32_t> received; // every receive so far on this rank
  std::array<std::uint32_t, 1> dep{};
  for (core::Rank r = 0; r < p; ++r) {
    e.begin_rank(r);
    const std::uint32_t vr = r >= L.root ? r - L.root : r + p - L.root;
    const detail::ScatterOps sc = detail::emit_binomial_scatter(e, L, vr);
    received.clear();
    if (sc.received) {
      received.push_back(sc.recv);
    }
    std::uint32_t i = 0;
    for (std::uint64_t mask = 1; mask < p; mask <<= 1, ++i) {
      const std::uint64_t my_root = (vr >> i) << i;
      const std::uint64_t dst = vr ^ mask;
      const std::uint64_t dst_root = (dst >> i) << i;
      if (dst < p) {
        const core::Range mine = L.blocks(my_root, my_root + mask);
        const core::Range theirs = L.blocks(dst_root, dst_root + mask);
        if (mine.length > 0) {
          e.send(L.real(dst), mine, received);
        }
        if (theirs.length > 0) {
          // Inside vr's scatter subtree these blocks went to child vr + mask; wait for that send.
          const bool overwrite = dst_root == vr + mask && sc.sent[i];
          dep[0] = sc.send[i];
          received.push_back(e.recv(L.real(dst), theirs, std::span(dep.data(), overwrite ? 1 : 0)));
        }
      }
      if (dst_root + mask <= p || p < my_root + mask) {
        continue; // the partner subtree is complete, or nobody here has its data
      }
      const std::uint64_t completed = p - my_root - mask; // ranks my_root .. that got the data
      const core::Range fwd = L.blocks(my_root + mask, my_root + 2 * mask);
      if (completed == 0 || fwd.length == 0) {
        continue;
      }
      std::uint32_t k = i;
      for (std::uint64_t tmp_mask = mask >> 1; tmp_mask > 0; tmp_mask >>= 1, --k) {
        const std::uint64_t rdst = vr ^ tmp_mask;
        const std::uint64_t tree_root = (std::uint64_t{vr} >> k) << k;
        const std::uint64_t have = tree_root + completed;
        if (rdst > vr && vr < have && rdst >= have) {
          dep[0] = received.back(); // the receive that brought these blocks
          e.send(L.real(rdst), fwd, dep);
        } else if (rdst < vr && rdst < have && vr >= have) {
          received.push_back(e.recv(L.real(rdst), fwd, {}));
        }
      }
    }
  }
}

detail::OpCounts counts(const Request& req) {
  detail::CountingEmitter c;
  if (req.ranks > 1) {
    emit(c, BlockLayout(req.ranks, req.root, req.bytes.value));
  }
  return c.counts;
}

core::Schedule generate(const Request& req) {
  core::Schedule s(make_header(req, 0, kName));
  const detail::OpCounts c = counts(req);
  s.reserve(c.ops, c.deps);
  if (req.ranks > 1) {
    detail::ScheduleEmitter e{s};
    emit(e, BlockLayout(req.ranks, req.root, req.bytes.value));
  }
  s.finish();
  return s;
}

std::optional<CostTerms> cost(const Request& req) {
  const std::uint64_t p = req.ranks;
  const std::uint64_t n = req.bytes.value;
  if (n == 0 || p == 1) {
    return CostTerms{}; // nothing is sent
  }
  if (!std::has_single_bit(p) || n % p != 0) {
    return std::nullopt;
  }
  const auto rounds = static_cast<double>(detail::floor_log2(req.ranks));
  return CostTerms{2 * rounds, 2.0 * static_cast<double>((p - 1) * (n / p)), 0.0};
}

} // namespace

AlgorithmInfo describe_bcast_scatter_allgather() {
  AlgorithmInfo a;
  a.name = kName;
  a.collective = core::CollectiveKind::bcast;
  a.summary = "binomial scatter of p blocks, then recursive-doubling allgather (van de Geijn)";
  a.source = "Barnett et al. (InterCom), SHPCC 1994; MPICH "
             "MPIR_Bcast_intra_scatter_recursive_doubling_allgather; Open MPI "
             "ompi_coll_base_bcast_intra_scatter_allgather";
  a.aliases = {"ompi:8", "ompi:scatter_allgather", "mpich:scatter_recursive_doubling_allgather",
               "smpi:scatter_rdb_allgather"};
  a.constraints = {"blocks of ceil(n/p) bytes: with n < p some ranks' blocks are empty",
                   "non-power-of-two p adds MPICH's recursive-halving fix-up inside each step"};
  a.check = [](const Request& req) { return detail::size_limit_refusal(counts(req)); };
  a.generate = generate;
  a.cost = cost;
  a.cost_formula = "2 lg p a + 2 (p-1)/p n b (exact for p a power of two dividing n)";
  return a;
}

} // namespace collsim::algorithms
