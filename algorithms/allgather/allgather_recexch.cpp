// Recursive-exchange allgather, radix k (algorithms.md AG10), both of MPICH's variants: distance
// doubling (recexch_doubling) and distance halving (recexch_halving). The generalisation of
// recursive doubling (AG3) to radix k and to any p, with MPICH's step-1/step-3 fold for the ranks
// beyond the largest power of k.
//
// Source: MPICH MPIR_Allgather_intra_recexch (src/mpi/coll/allgather/allgather_intra_recexch.c;
// recexch_type 0 = distance doubling after Thakur, Rabenseifner & Gropp, IJHPCA 2005; 1 = distance
// halving after Sack & Gropp, "Faster topology-aware collective algorithms through non-minimal
// communication", PPoPP 2012), with the rank layout of recexchalgo.c (recexch_support.hpp).
// Parameters as MPICH's CVARs: MPIR_CVAR_ALLGATHER_RECEXCH_KVAL (default 2) and
// MPIR_CVAR_ALLGATHER_RECEXCH_SINGLE_PHASE_RECV (default false: receives are posted two phases at
// a time, modelled here).
//
// Schedule, p' = largest power of k <= p, L = log_k p' phases, range(q, j) = the blocks of the
// original ranks participating rank q stands for at level j (a contiguous run of `data`):
//   non-participating rank r (see recexch_support.hpp): send its block to its step-1 partner, then
//     receive the whole vector (n bytes, its own block included, as MPICH sends recvcount * p)
//     from it.
//   participating rank r:
//     step 1: receive the block of each rank folded into it.
//     halving only: exchange range(r, 0) for range(rev(r), 0) with rev(r), the rank whose step-2
//       rank has r's base-k digits reversed (skipped when rev(r) = r).
//     step 2, phases taken two at a time (j, j+1): post the receives of both phases, send phase
//       j, wait for its receives, send phase j+1, wait for everything.
//       doubling, phase j: with each of the k-1 neighbours q at distance k^j: send range(r, j),
//         receive range(q, j).
//       halving, iteration j: with each neighbour q at distance k^(L-1-j): send range(rev(r), j),
//         receive range(rev(q), j).
//     step 3: send the whole vector to each rank folded into it.
// Dependencies follow MPICH's waits: the receives of a pair of phases and the sends of its first
// phase wait for what was waited for before (step 1, the halving exchange, or the previous pair:
// its sends and its last phase's receives); the sends of the second phase wait for the first
// phase's receives; step 3 waits as the next pair would. A non-participating rank's receive waits
// for its (blocking) send, which reads the block the receive overwrites. Every received range is
// disjoint from what the rank sends concurrently (halving's ranges never cover what rank r still
// has to send), so no other ordering is needed.
//
// Cost (k = 2, p a power of two, p divides n, b = n/p): doubling lg p a + (p-1) b b, the same as
// AG3; halving (p >= 4) adds the digit-reversal exchange: (lg p + 1) a + p b b. Exact on `uniform`
// (every phase is one message each way). Radix k or other p: ~ log_k p (k-1) messages per phase
// through one port, plus a + b b and a + n b for the fold: no closed form declared.

#include "allgather/allgather_recexch.hpp"

#include "generator_support.hpp"
#include "op_sink.hpp"
#include "recexch_support.hpp"

#include <array>
#include <bit>
#include <vector>

namespace collsim::algorithms::detail {
namespace {

constexpr const char* kRadix = "radix";
constexpr std::int64_t kMaxRadix = 1024;

std::uint32_t radix_of(const Request& req) {
  const auto it = req.params.find(kRadix);
  return it == req.params.end() ? 2U : static_cast<std::uint32_t>(it->second);
}

/// Emits rank r's program into `sink`.
void recexch_program(OpSink& sink, const RecexchLayout& lay, core::Rank r, std::uint32_t p,
                     std::uint64_t n, bool halving) {
  const auto blocks = [&](std::uint32_t first, std::uint32_t count) {
    const std::uint64_t begin = core::block_range(n, p, first).first;
    const std::uint64_t end = first + count == p ? n : core::block_range(n, p, first + count).first;
    return data_range(begin, end - begin);
  };
  const auto level_blocks = [&](std::uint32_t q, std::uint32_t level) {
    const RecexchLayout::RankRange rr = lay.level_range(q, level);
    return blocks(rr.first, rr.count);
  };
  const std::int64_t sendto = lay.step1_sendto(r);
  if (sendto >= 0) {
    const auto to = static_cast<core::Rank>(sendto);
    const std::uint32_t sent = sink.send(to, blocks(r, 1));
    const std::array<std::uint32_t, 1> dep{sent};
    sink.recv(to, data_range(0, n), dep);
    return;
  }
  const std::vector<std::uint32_t> folded = lay.step1_recvfrom(r);
  std::vector<std::uint32_t> waited;
  for (const std::uint32_t f : folded) {
    waited.push_back(sink.recv(f, blocks(f, 1)));
  }
  const std::uint32_t me = halving ? lay.reversed(r) : r;
  if (halving && me != r) {
    const std::uint32_t a = sink.send(me, level_blocks(r, 0), waited);
    const std::uint32_t b = sink.recv(me, level_blocks(me, 0), waited);
    waited = {a, b};
  }
  const std::uint32_t phases = lay.phases();
  const auto neighbour_phase = [&](std::uint32_t level) {
    return halving ? phases - 1 - level : level;
  };
  std::vector<std::uint32_t> first_recvs;
  std::vector<std::uint32_t> second_recvs;
  std::vector<std::uint32_t> next;
  for (std::uint32_t j = 0; j < phases; j += 2) {
    first_recvs.clear();
    second_recvs.clear();
    for (std::uint32_t level = j; level < j + 2 && level < phases; ++level) {
      for (const std::uint32_t q : lay.neighbours(r, neighbour_phase(level))) {
        const std::uint32_t got =
            sink.recv(q, level_blocks(halving ? lay.reversed(q) : q, level), waited);
        (level == j ? first_recvs : second_recvs).push_back(got);
      }
    }
    next.clear();
    for (const std::uint32_t q : lay.neighbours(r, neighbour_phase(j))) {
      next.push_back(sink.send(q, level_blocks(me, j), waited));
    }
    if (j + 1 < phases) {
      for (const std::uint32_t q : lay.neighbours(r, neighbour_phase(j + 1))) {
        next.push_back(sink.send(q, level_blocks(me, j + 1), first_recvs));
      }
      next.insert(next.end(), second_recvs.begin(), second_recvs.end());
    } else {
      next.insert(next.end(), first_recvs.begin(), first_recvs.end());
    }
    waited.swap(next);
  }
  for (const std::uint32_t f : folded) {
    sink.send(f, data_range(0, n), waited);
  }
}

OpCounts recexch_counts(const Request& req, bool halving) {
  OpSink sink;
  const std::uint32_t p = req.ranks;
  if (p < 2) {
    return {};
  }
  const RecexchLayout lay(p, radix_of(req));
  for (core::Rank r = 0; r < p; ++r) {
    sink.begin_rank(r);
    recexch_program(sink, lay, r, p, req.bytes.value, halving);
  }
  return sink.counts();
}

core::Schedule generate_recexch(const Request& req, bool halving) {
  const std::uint32_t p = req.ranks;
  core::Schedule s(make_header(req, 0, halving ? "recexch_halving" : "recexch_doubling"));
  const OpCounts counts = recexch_counts(req, halving);
  s.reserve(counts.ops, counts.deps);
  if (p >= 2) {
    const RecexchLayout lay(p, radix_of(req));
    OpSink sink(s);
    for (core::Rank r = 0; r < p; ++r) {
      sink.begin_rank(r);
      recexch_program(sink, lay, r, p, req.bytes.value, halving);
    }
  }
  s.finish();
  return s;
}

std::optional<CostTerms> recexch_cost(const Request& req, bool halving) {
  const std::uint64_t p = req.ranks;
  const std::uint64_t n = req.bytes.value;
  if (p < 2) {
    return CostTerms{};
  }
  if (radix_of(req) != 2 || !std::has_single_bit(p) || n % p != 0) {
    return std::nullopt;
  }
  const std::uint64_t b = n / p;
  const double lg = floor_log2(req.ranks);
  if (halving && p >= 4) {
    return CostTerms{lg + 1, static_cast<double>(p * b), 0.0};
  }
  return CostTerms{lg, static_cast<double>((p - 1) * b), 0.0};
}

} // namespace

AlgorithmInfo describe_allgather_recexch(bool halving) {
  AlgorithmInfo a;
  a.name = halving ? "recexch_halving" : "recexch_doubling";
  a.collective = core::CollectiveKind::allgather;
  a.summary = halving ? "radix-k recursive exchange, distances k^(L-1) .. 1 after a digit-reversal "
                        "swap; any p via MPICH's fold"
                      : "radix-k recursive exchange, distances 1, k, k^2, ...; any p via MPICH's "
                        "fold";
  a.source = halving ? "MPICH MPIR_Allgather_intra_recexch (distance halving); Sack & Gropp, PPoPP "
                       "2012"
                     : "MPICH MPIR_Allgather_intra_recexch (distance doubling); Thakur, "
                       "Rabenseifner & Gropp, IJHPCA 2005";
  a.aliases = {halving ? "mpich:recexch_halving" : "mpich:recexch_doubling"};
  a.params = {{kRadix,
               2,
               2,
               kMaxRadix,
               "k: peers per phase plus one (MPIR_CVAR_ALLGATHER_RECEXCH_KVAL, default 2); "
               "lowered to p when p < k",
               {}}};
  a.check = [halving](const Request& req) {
    return size_limit_refusal(recexch_counts(req, halving));
  };
  a.generate = [halving](const Request& req) { return generate_recexch(req, halving); };
  a.cost = [halving](const Request& req) { return recexch_cost(req, halving); };
  a.cost_formula =
      halving ? "radix 2, p a power of two >= 4: (lg p + 1) a + n b (the digit-reversal swap adds "
                "a + n/p b); exact when p divides n. Other radices or p: log_k p' phases of k-1 "
                "messages plus the fold, no closed form"
              : "radix 2, p a power of two: lg p a + (p-1)/p n b; exact when p divides n. Other "
                "radices or p: log_k p' phases of k-1 messages plus the fold (a + n/p b and "
                "a + n b), no closed form";
  return a;
}

} // namespace collsim::algorithms::detail
