// Recursive exchange allreduce (algorithms.md AR10): MPICH's radix-k full-vector butterfly, in
// which ranks above the largest power of k join through a partner in consecutive groups of k
// (step 1 / step 3) and receives are posted two phases ahead.
//
// Source: MPICH MPIR_Allreduce_intra_recexch ("mpich:recexch"; radix MPIR_CVAR_ALLREDUCE_RECEXCH_
// KVAL, default 2; MPIR_CVAR_ALLREDUCE_RECEXCH_SINGLE_PHASE_RECV false, its default) on the
// neighbours of MPII_Recexchalgo_get_neighbors:
//   k = min(k, max(p, 2)) when p < k; p_k = the largest power of k <= p, L = log_k p_k,
//   rem = p - p_k, T = rem k / (k-1). The first T ranks form groups of k consecutive ranks; in each
//   the first k-1 ranks do not take part in step 2 and send their vector to the group's last rank
//   (a partial last group sends to rank T instead, which receives from them in descending order).
//   Participants get step-2 ranks: r / k below T, r - rem from T on; step-2 rank v maps back to
//   v k + k - 1 when v < rem / (k-1), else v + rem.
//   step 1: a non-participant sends its vector to its partner; a participant receives from its
//     senders into tmp slots 0, 1, ... and then reduces them into data one by one.
//   step 2, phase f = 0..L-1: the k-1 neighbours differ from the step-2 rank in base-k digit f
//     (digit values in increasing order). Phases run in pairs: the receives of both phases of a
//     pair are posted first (into slot sets 0 and 1, k-1 vectors each), then data goes to the
//     first phase's neighbours, its vectors are reduced as MPICH's commutative chain (slot 0 into
//     slot 1, ..., slot k-2 into data), then data goes to the second phase's neighbours and the
//     second set is reduced the same way.
//   step 3: participants send the result to their step-1 senders, which receive it into data.
// tmp holds 2(k-1) vectors (MPICH's nbr_buffer). Differences from recursive_multiplying: the
// fold pairs consecutive ranks (not r mod p_k), the chain always ends in data (no copy), and the
// receives of the next phase are already posted.
//
// Dependencies: as MPICH's Waitall: the first reduction of a phase waits for the phase's sends and
// receives, the chain runs in order; sends wait for the last write to data; the receives of a pair
// wait for the last operation before the pair (it read the slots); step 3's sends wait for the last
// reduction; a non-participant's final receive waits for its send.
//
// Cost: about log_k p (k-1)(a + n b + n g) (algorithms.md). Exact only for k = 2 and p a power of
// two: lg p (a + n b + n g). Otherwise the messages to the k-1 neighbours leave the port one after
// another and arrive at different times, or the step-1 fold lets the other ranks start early;
// cost() declines.

#include "allreduce/allreduce_algorithms.hpp"
#include "generator_support.hpp"
#include "recexch_support.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <vector>

namespace collsim::algorithms {
namespace {

using core::OpKind;
using detail::OpCounts;

constexpr const char* kName = "recexch";
constexpr const char* kRadix = "radix";
constexpr std::int64_t kMaxRadix = 64;

std::uint32_t radix_of(const Request& req) {
  const auto it = req.params.find(kRadix);
  return detail::recexch_radix(req.ranks,
                               it == req.params.end() ? 2 : static_cast<std::uint32_t>(it->second));
}

/// Counts what build() would add (check() sizes the schedule before anything is allocated).
struct Counter {
  OpCounts counts;
  std::uint32_t local = 0;
  void begin_rank(core::Rank /*rank*/) { local = 0; }
  std::uint32_t add(OpKind /*kind*/, core::Rank /*peer*/, core::Range /*target*/,
                    core::Range /*source*/, std::span<const std::uint32_t> deps) {
    ++counts.ops;
    counts.deps += deps.size();
    return local++;
  }
};

template <class Out>
void build(const Request& req, Out& out) {
  const std::uint32_t p = req.ranks;
  const std::uint64_t n = req.bytes.value;
  const std::uint32_t k = radix_of(req);
  const core::Range data = detail::data_range(0, n);
  const auto slot = [n](std::uint64_t i) { return detail::tmp_range(i * n, n); };
  const core::Range none{};
  std::array<std::uint32_t, 1> dep{};
  std::vector<std::uint32_t> wait;
  std::array<std::vector<std::uint32_t>, 2> posted; // receives of each slot set
  for (core::Rank r = 0; r < p; ++r) {
    out.begin_rank(r);
    if (p < 2) {
      continue;
    }
    const detail::RecexchNeighbours nb = detail::recexch_neighbours(p, k, r);
    if (!nb.participant) {
      dep[0] = out.add(OpKind::send, nb.step1_sendto, data, none, {});
      out.add(OpKind::recv, nb.step1_sendto, data, none, dep);
      continue;
    }
    bool has_last = false;
    std::uint32_t last = 0; // the last reduction (it wrote data and read tmp)
    const auto last_dep = [&]() {
      dep[0] = last;
      return std::span<const std::uint32_t>(dep.data(), has_last ? 1 : 0);
    };
    // Step 1.
    wait.clear();
    for (std::uint32_t i = 0; i < nb.step1_recvfrom.size(); ++i) {
      wait.push_back(out.add(OpKind::recv, nb.step1_recvfrom[i], slot(i), none, {}));
    }
    for (std::uint32_t i = 0; i < nb.step1_recvfrom.size(); ++i) {
      if (i == 0) {
        last = out.add(OpKind::reduce, 0, data, slot(i), wait);
      } else {
        last = out.add(OpKind::reduce, 0, data, slot(i), last_dep());
      }
      has_last = true;
    }
    // Step 2, phases in pairs.
    const auto phases = static_cast<std::uint32_t>(nb.step2.size());
    for (std::uint32_t f = 0; f < phases; f += 2) {
      for (std::uint32_t j = 0; j < 2; ++j) {
        posted[j].clear();
        if (f + j >= phases) {
          continue;
        }
        for (std::uint32_t i = 0; i + 1 < k; ++i) {
          posted[j].push_back(out.add(OpKind::recv, nb.step2[f + j][i],
                                      slot(std::uint64_t{j} * (k - 1) + i), none, last_dep()));
        }
      }
      for (std::uint32_t j = 0; j < 2 && f + j < phases; ++j) {
        wait = posted[j];
        for (std::uint32_t i = 0; i + 1 < k; ++i) {
          wait.push_back(out.add(OpKind::send, nb.step2[f + j][i], data, none, last_dep()));
        }
        // MPICH's do_reduce with the rank's index at k-1 (commutative operation).
        const std::uint64_t base = std::uint64_t{j} * (k - 1);
        for (std::uint32_t i = 0; i + 1 < k; ++i) {
          const core::Range into = i + 2 < k ? slot(base + i + 1) : data;
          if (i == 0) {
            last = out.add(OpKind::reduce, 0, into, slot(base + i), wait);
          } else {
            last = out.add(OpKind::reduce, 0, into, slot(base + i), last_dep());
          }
          has_last = true;
        }
      }
    }
    // Step 3.
    for (const core::Rank to : nb.step1_recvfrom) {
      out.add(OpKind::send, to, data, none, last_dep());
    }
  }
}

OpCounts recexch_counts(const Request& req) {
  Counter c;
  build(req, c);
  return c.counts;
}

core::Schedule generate_recexch(const Request& req) {
  const std::uint64_t k = radix_of(req);
  core::Schedule s(make_header(req, req.ranks > 1 ? 2 * (k - 1) * req.bytes.value : 0, kName));
  const OpCounts counts = recexch_counts(req);
  s.reserve(counts.ops, counts.deps);
  build(req, s);
  s.finish();
  return s;
}

std::optional<CostTerms> recexch_cost(const Request& req) {
  const std::uint32_t p = req.ranks;
  if (radix_of(req) != 2 || !std::has_single_bit(p)) {
    return std::nullopt;
  }
  const auto lg = static_cast<double>(detail::floor_log2(p));
  const auto n = static_cast<double>(req.bytes.value);
  return CostTerms{lg, lg * n, lg * n};
}

} // namespace

namespace detail {

std::uint32_t recexch_radix(std::uint32_t p, std::uint32_t k) {
  return RecexchLayout(p, k).radix();
}

RecexchNeighbours recexch_neighbours(std::uint32_t p, std::uint32_t k, core::Rank r) {
  // One layout for every recexch algorithm (recexch_support.hpp); this is its per-rank view.
  const RecexchLayout layout(p, k);
  RecexchNeighbours nb;
  nb.radix = layout.radix();
  nb.power = layout.participants();
  if (const std::int64_t to = layout.step1_sendto(r); to >= 0) {
    nb.participant = false;
    nb.step1_sendto = static_cast<core::Rank>(to);
    return nb;
  }
  nb.step1_recvfrom = layout.step1_recvfrom(r);
  nb.step2_rank = layout.to_step2(r);
  for (std::uint32_t phase = 0; phase < layout.phases(); ++phase) {
    std::vector<core::Rank> list = layout.neighbours(r, phase);
    std::vector<std::uint32_t> step2_ranks;
    step2_ranks.reserve(list.size());
    for (const core::Rank q : list) {
      step2_ranks.push_back(layout.to_step2(q));
    }
    nb.step2.push_back(std::move(list));
    nb.step2_rank_of.push_back(std::move(step2_ranks));
  }
  return nb;
}

} // namespace detail

AlgorithmInfo describe_allreduce_recexch() {
  AlgorithmInfo a;
  a.name = kName;
  a.collective = core::CollectiveKind::allreduce;
  a.summary = "recursive exchange: radix-k whole-vector butterfly; extra ranks join through the "
              "last rank of their group of k; receives posted two phases ahead";
  a.source = "MPICH MPIR_Allreduce_intra_recexch (MPII_Recexchalgo_get_neighbors)";
  a.aliases = {"mpich:recexch"};
  a.params = {{kRadix, 2, 2, kMaxRadix, "radix k (MPIR_CVAR_ALLREDUCE_RECEXCH_KVAL, default 2)"}};
  a.constraints = {"commutative operations only as generated (MPICH reorders the chain for "
                   "non-commutative or floating-point operations)"};
  a.check = [](const Request& req) { return detail::size_limit_refusal(recexch_counts(req)); };
  a.generate = generate_recexch;
  a.cost = recexch_cost;
  a.cost_formula = "k = 2, p = 2^m: lg p (a + n b + n g); otherwise about log_k p (k-1)(a + n b + "
                   "n g) (single-port textbook form; not exact)";
  return a;
}

} // namespace collsim::algorithms
