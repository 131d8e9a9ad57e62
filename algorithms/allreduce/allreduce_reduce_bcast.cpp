// Reduce-then-broadcast allreduce (algorithms.md AR2): a reduce to rank 0 followed by a broadcast
// from rank 0, with no overlap between the two. By default both are binomial trees.
//
// Source: Open MPI ompi_coll_base_allreduce_intra_nonoverlapping (coll/tuned allreduce algorithm 2,
// "nonoverlapping"); SMPI "redbcast". The two halves follow MPICH MPIR_Reduce_intra_binomial
// (algorithms.md RD5) and MPIR_Bcast_intra_binomial (BC7).
//
// Open MPI's nonoverlapping does not pick the two halves itself: it calls the communicator's own
// reduce and bcast (comm->c_coll->coll_reduce, coll_bcast in coll_base_allreduce.c), which under
// coll/tuned are its fixed rules for the same count and datatype: a knomial or split-binary
// broadcast, an in-order binary reduce, etc. Parameters `reduce` and `bcast` name those halves (the
// Open MPI stack sets them from the rules, analysis/ompi_defaults.cpp); another choice than
// binomial runs as coll/tuned's fixed rules call it (ompi_coll_tuned_<coll>_intra_do_this with
// faninout 0 and segsize 0: one segment, chains of fanout 1), composed as two blocking calls
// (compose.hpp). Binomial + binomial is the schedule below.
//
// Cost: 2 ceil(lg p) a + 2 ceil(lg p) n b + ceil(lg p) n g, for every p: rank 0 receives, then
// reduces, one vector from each of its ceil(lg p) children in turn, and each child's subtree is
// complete by the time rank 0 gets to it; the broadcast reaches the deepest rank after ceil(lg p)
// sequential sends.
//
// Schedule, rank r (the root is 0, so relative rank = rank):
//   reduce: for mask = 1, 2, 4, ...: if r has bit mask set, send the accumulated vector to
//           r - mask and stop; otherwise, if r + mask < p, receive from it into tmp and reduce.
//   bcast:  a rank other than 0 receives from r - lowbit(r) into data; then, for
//           m = lowbit(r)/2 down to 1 (rank 0: from bit_ceil(p)/2), sends to r + m if r + m < p.
// Receiving into tmp is what MPICH does; it also keeps two children's vectors from being combined
// into data at the same time.
//
// Dependencies: a receive into tmp waits for the reduction that last read tmp; a reduction waits
// for its receive; the reduce send waits for the last reduction; the broadcast receive overwrites
// data, so it waits for the reduce send; broadcast sends wait for the broadcast receive (rank 0:
// for its last reduction).

#include "allreduce/allreduce_algorithms.hpp"
#include "compose.hpp"
#include "generator_support.hpp"

#include <array>
#include <bit>
#include <numeric>

namespace collsim::algorithms {
namespace {

using core::CollectiveKind;
using core::OpKind;
using detail::OpCounts;

constexpr const char* kName = "reduce_bcast";
constexpr const char* kReduce = "reduce"; // level parameters; choice 0 is binomial for both
constexpr const char* kBcast = "bcast";

/// Both halves binomial (the default): the hand-written schedule below, with its closed form.
bool binomial_halves(const Request& req) {
  const auto chosen = [&](const char* name) {
    const auto it = req.params.find(name);
    return it == req.params.end() ? 0 : it->second;
  };
  return chosen(kReduce) == 0 && chosen(kBcast) == 0;
}

/// One half as coll/tuned's fixed rules run it: segsize 0 and faninout 0
/// (ompi_coll_tuned_<coll>_intra_do_this(..., faninout, segsize) called with 0, 0 by
/// ompi_coll_tuned_<coll>_intra_dec_fixed in Open MPI 4.1), i.e. one segment, and a chain of
/// fanout 1 (ompi_coll_base_topo_build_chain treats fanout 0 as 1).
compose::Level half(const Request& req, const char* param, CollectiveKind c) {
  const std::vector<compose::LevelChoice> choices = compose::level_choices(c);
  AlgorithmInfo info = choices.at(static_cast<std::size_t>(req.params.at(param))).describe();
  std::map<std::string, std::int64_t> params;
  for (const ParamSpec& p : info.params) {
    if (p.name == "segment_size") {
      params[p.name] = 0;
    } else if (p.name == "chains") {
      params[p.name] = 1;
    }
  }
  return compose::Level(param, std::move(info), std::move(params));
}

/// Another choice than binomial + binomial: the reduce to rank 0, then the bcast from rank 0, on
/// every rank, each rank starting the bcast when it has finished its part of the reduce.
compose::Plan plan_halves(const Request& req) {
  compose::Plan out(req.ranks);
  std::vector<core::Rank> all(req.ranks);
  std::iota(all.begin(), all.end(), core::Rank{0});
  compose::Level reduce = half(req, kReduce, CollectiveKind::reduce);
  compose::Level bcast = half(req, kBcast, CollectiveKind::bcast);
  if (compose::place(out, reduce, all, req.bytes.value, 0, 0, 0)) {
    compose::place(out, bcast, all, req.bytes.value, 0, 0, out.composition.tmp_bytes());
  }
  return out;
}

OpCounts reduce_bcast_counts(std::uint32_t p) {
  if (p < 2) {
    return {};
  }
  const std::uint64_t edges = p - 1;
  // Five operations per tree edge: reduce send, receive, reduction, broadcast receive, broadcast
  // send. With P ranks that have children (rank 0 among them), the dependencies are: receives
  // (p-1) - P (a parent's first receive waits for nothing), reductions p-1, reduce sends P-1 (a
  // leaf sends its own input), broadcast receives p-1, broadcast sends p-1: 4(p-1) - 1 in all.
  return {5 * edges, 4 * edges - 1};
}

core::Schedule generate_reduce_bcast(const Request& req) {
  const std::uint32_t p = req.ranks;
  const std::uint64_t n = req.bytes.value;
  core::Schedule s(make_header(req, p > 1 ? n : 0, kName));
  const OpCounts counts = reduce_bcast_counts(p);
  s.reserve(counts.ops, counts.deps);
  const core::Range whole = detail::data_range(0, n);
  const core::Range scratch = detail::tmp_range(0, n);

  std::array<std::uint32_t, 1> dep{};
  for (core::Rank r = 0; r < p; ++r) {
    s.begin_rank(r);
    // Binomial reduce (MPICH reduce_intra_binomial with root 0).
    bool reduced = false;
    std::uint32_t last_reduce = 0;
    std::uint32_t reduce_send = 0;
    for (std::uint32_t mask = 1; mask < p; mask <<= 1) {
      if ((r & mask) != 0) {
        dep[0] = last_reduce;
        reduce_send = detail::add_op(s, OpKind::send, r - mask, whole,
                                     std::span(dep.data(), reduced ? 1 : 0));
        break;
      }
      if (r + mask < p) {
        dep[0] = last_reduce;
        const std::uint32_t got = detail::add_op(s, OpKind::recv, r + mask, scratch,
                                                 std::span(dep.data(), reduced ? 1 : 0));
        last_reduce = s.reduce(scratch, whole, {got});
        reduced = true;
      }
    }
    // Binomial broadcast (MPICH bcast_intra_binomial with root 0).
    std::uint32_t mask = 0;
    if (r == 0) {
      mask = std::bit_ceil(p) >> 1;
      dep[0] = last_reduce;
    } else {
      const std::uint32_t low = std::uint32_t{1} << std::countr_zero(r);
      dep[0] = s.recv(r - low, whole, {reduce_send});
      mask = low >> 1;
    }
    for (; mask > 0; mask >>= 1) {
      if (r + mask < p) {
        detail::add_op(s, OpKind::send, r + mask, whole, dep);
      }
    }
  }
  s.finish();
  return s;
}

std::optional<CostTerms> reduce_bcast_cost(const Request& req) {
  // Exact only for a power of two: otherwise the subtrees are uneven and the smaller ones finish
  // early, so the textbook count is an upper bound (checked against the loggp engine). Other
  // halves than binomial + binomial declare none.
  if (!std::has_single_bit(req.ranks) || !binomial_halves(req)) {
    return std::nullopt;
  }
  const auto rounds = static_cast<double>(detail::ceil_log2(req.ranks));
  const auto n = static_cast<double>(req.bytes.value);
  return CostTerms{2 * rounds, 2 * rounds * n, rounds * n};
}

} // namespace

AlgorithmInfo describe_reduce_bcast() {
  AlgorithmInfo a;
  a.name = kName;
  a.collective = core::CollectiveKind::allreduce;
  a.summary = "reduce to rank 0, then broadcast from rank 0 (binomial trees unless `reduce` or "
              "`bcast` names another algorithm)";
  a.source = "Open MPI ompi_coll_base_allreduce_intra_nonoverlapping; MPICH "
             "MPIR_Reduce_intra_binomial + MPIR_Bcast_intra_binomial";
  a.aliases = {"ompi:2", "ompi:nonoverlapping", "smpi:redbcast"};
  a.params = {compose::level_param(kReduce, CollectiveKind::reduce, "binomial",
                                   "the reduce to rank 0 (Open MPI: its own reduce rules; another "
                                   "choice than binomial runs unsegmented, chains of fanout 1)"),
              compose::level_param(kBcast, CollectiveKind::bcast, "binomial",
                                   "the broadcast from rank 0 (Open MPI: its own bcast rules; "
                                   "another choice than binomial runs unsegmented, chains of "
                                   "fanout 1)")};
  compose::set_composed(a, plan_halves);
  a.check = [composed = a.check](const Request& req) {
    return binomial_halves(req) ? detail::size_limit_refusal(reduce_bcast_counts(req.ranks))
                                : composed(req);
  };
  a.generate = [composed = a.generate](const Request& req) {
    return binomial_halves(req) ? generate_reduce_bcast(req) : composed(req);
  };
  a.cost = reduce_bcast_cost;
  a.cost_formula = "binomial halves, p = 2^k: 2 lg p a + 2 lg p n b + lg p n g; otherwise at most "
                   "2 ceil(lg p) a + 2 ceil(lg p) n b + ceil(lg p) n g (not exact: no closed form "
                   "declared); other halves: none";
  return a;
}

} // namespace collsim::algorithms
