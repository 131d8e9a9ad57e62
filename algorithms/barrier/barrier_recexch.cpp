// Recursive-exchange barrier, radix k (algorithms.md BA7; MPICH recexch): MPICH runs its
// recursive-exchange allreduce (AR10) on zero bytes. The p' = largest power of k <= p
// participating ranks do log_k p' phases of zero-byte exchanges with the k-1 ranks differing in
// one base-k digit; the other p - p' ranks check in with a participant first (step 1) and are
// released by it at the end (step 3).
//
// Source: MPICH MPIR_Barrier_intra_recexch -> MPIR_Allreduce_intra_recexch(count = 0)
// (src/mpi/coll/barrier/barrier_intra_recexch.c, src/mpi/coll/allreduce/allreduce_intra_recexch.c),
// with the rank layout of recexchalgo.c (recexch_support.hpp). Parameters as MPICH's CVARs:
// MPIR_CVAR_BARRIER_RECEXCH_KVAL (default 2); single-phase receives off (receives are posted two
// phases at a time, modelled here).
//
// Schedule (zero-byte messages), rank r:
//   non-participating: send to its step-1 partner, then receive from it (blocking send first).
//   participating: receive from each rank folded into it; then for phases taken two at a time
//     (j, j+1): post the receives of both phases (from the k-1 neighbours at distance k^j and
//     k^(j+1)), send to phase j's neighbours, wait for phase j's sends and receives, send to phase
//     j+1's, wait for those; finally send to each folded rank.
// Dependencies follow MPICH's waits: a pair's receives and first sends wait for what was waited
// for before (step 1, or the previous pair's second-phase sends and receives); the second phase's
// sends wait for the first phase's sends and receives; step 3 waits as the next pair would.
//
// Cost: p a power of k (k lowered to p when p < k): log_k p a on `uniform`, exact (each phase's
// k-1 zero-byte messages leave together). Otherwise about (log_k p' + 2) a, but a late start of
// the ranks that collect in step 1 only delays the ranks it reaches, so the exact count depends on
// the layout: no closed form declared.

#include "barrier/barrier_algorithms.hpp"
#include "generator_support.hpp"
#include "op_sink.hpp"
#include "recexch_support.hpp"

#include <array>
#include <vector>

namespace collsim::algorithms {
namespace {

using detail::OpCounts;
using detail::OpSink;

constexpr const char* kName = "recexch";
constexpr const char* kRadix = "radix";

std::uint32_t radix_of(const Request& req) {
  const auto it = req.params.find(kRadix);
  return it == req.params.end() ? 2U : static_cast<std::uint32_t>(it->second);
}

void recexch_program(OpSink& sink, const detail::RecexchLayout& lay, core::Rank r) {
  const core::Range none = detail::data_range(0, 0);
  const std::int64_t sendto = lay.step1_sendto(r);
  if (sendto >= 0) {
    const auto to = static_cast<core::Rank>(sendto);
    const std::array<std::uint32_t, 1> dep{sink.send(to, none)};
    sink.recv(to, none, dep);
    return;
  }
  const std::vector<std::uint32_t> folded = lay.step1_recvfrom(r);
  std::vector<std::uint32_t> waited;
  for (const std::uint32_t f : folded) {
    waited.push_back(sink.recv(f, none));
  }
  const std::uint32_t phases = lay.phases();
  std::vector<std::uint32_t> first;
  std::vector<std::uint32_t> second;
  for (std::uint32_t j = 0; j < phases; j += 2) {
    first.clear();
    second.clear();
    for (const std::uint32_t q : lay.neighbours(r, j)) {
      first.push_back(sink.recv(q, none, waited));
    }
    if (j + 1 < phases) {
      for (const std::uint32_t q : lay.neighbours(r, j + 1)) {
        second.push_back(sink.recv(q, none, waited));
      }
    }
    std::vector<std::uint32_t> done = first;
    for (const std::uint32_t q : lay.neighbours(r, j)) {
      done.push_back(sink.send(q, none, waited));
    }
    if (j + 1 < phases) {
      waited = second;
      for (const std::uint32_t q : lay.neighbours(r, j + 1)) {
        waited.push_back(sink.send(q, none, done));
      }
    } else {
      waited = done;
    }
  }
  for (const std::uint32_t f : folded) {
    sink.send(f, none, waited);
  }
}

void emit(OpSink& sink, const Request& req) {
  if (req.ranks < 2) {
    return;
  }
  const detail::RecexchLayout lay(req.ranks, radix_of(req));
  for (core::Rank r = 0; r < req.ranks; ++r) {
    sink.begin_rank(r);
    recexch_program(sink, lay, r);
  }
}

core::Schedule generate_recexch(const Request& req) {
  core::Schedule s(make_header(req, 0, kName));
  OpSink counter;
  emit(counter, req);
  s.reserve(counter.counts().ops, counter.counts().deps);
  OpSink sink(s);
  emit(sink, req);
  s.finish();
  return s;
}

std::optional<CostTerms> recexch_cost(const Request& req) {
  if (req.ranks < 2) {
    return CostTerms{};
  }
  const detail::RecexchLayout lay(req.ranks, radix_of(req));
  if (lay.extra() != 0) {
    return std::nullopt;
  }
  return CostTerms{static_cast<double>(lay.phases()), 0.0, 0.0};
}

} // namespace

AlgorithmInfo describe_barrier_recexch() {
  AlgorithmInfo a;
  a.name = kName;
  a.collective = core::CollectiveKind::barrier;
  a.summary = "radix-k recursive exchange of zero-byte messages among the largest power of k "
              "ranks; the rest check in before and are released after";
  a.source = "MPICH MPIR_Barrier_intra_recexch (MPIR_Allreduce_intra_recexch on zero bytes)";
  a.aliases = {"mpich:recexch"};
  a.params = {{kRadix,
               2,
               2,
               1024,
               "k: neighbours per phase plus one (MPIR_CVAR_BARRIER_RECEXCH_KVAL, default 2); "
               "lowered to p when p < k",
               {}}};
  a.check = [](const Request& req) {
    OpSink sink;
    emit(sink, req);
    return detail::size_limit_refusal(sink.counts());
  };
  a.generate = generate_recexch;
  a.cost = recexch_cost;
  a.cost_formula =
      "log_k p a when p is a power of k (exact); otherwise about (log_k p' + 2) a with "
      "p' the largest power of k <= p, no closed form";
  return a;
}

} // namespace collsim::algorithms
