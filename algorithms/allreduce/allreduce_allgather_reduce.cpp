// Allgather-then-reduce allreduce (algorithms.md AR8): every rank gathers all p vectors and reduces
// them locally. Trades bandwidth ((p-1) n bytes in per rank) for latency; Open MPI uses it only in
// its decision for disjoint (one rank per node) communicators, for 3 <= p <= 64 and small n.
//
// Source: Open MPI ompi_coll_base_allreduce_intra_allgather_reduce (coll/tuned allreduce
// algorithm 7, "allgather_reduce"): copy the input to a scratch vector, allgather the p vectors
// into a p n scratch buffer with the communicator's allgather, reduce vectors 1..p-1 into vector 0
// in order, copy vector 0 to the receive buffer. For 3 <= p < 32 Open MPI's fixed allgather
// decision picks recursive doubling (allgather algorithm 3), which falls back to Bruck when p is
// not a power of two (algorithms.md 2.1); this generator does the same for every p:
//   p = 2^k: recursive doubling. Rank r's vector starts in slot r of tmp (slot i = tmp[i n, (i+1)
//     n)); in step j it exchanges its 2^j slots starting at (r >> j) << j with rank r XOR 2^j.
//   otherwise: Bruck. Rank r's vector starts in slot 0; in step j (d = 2^j < p) it sends slots
//     [0, min(d, p-d)) to rank r-d and receives as many into slots [d, ...) from rank r+d. Open
//     MPI's allgather then rotates the slots into rank order; the sum does not depend on the
//     order, so the rotation (free local copies) is left out.
// Then slots 1..p-1 are reduced into slot 0 one after another and slot 0 is copied to data.
//
// Dependencies: a send waits for the copy of the rank's vector into tmp and for every earlier
// receive (the slots it sends); the first reduction waits for the whole allgather (it writes slot
// 0, which sends may still read), each later one for the one before; the final copy for the last.
//
// Cost: ceil(lg p) a + (p-1) n b + (p-1) n g, exact for every p on the loggp engine: every step
// is symmetric (all ranks send and receive the same amount at the same time), and copies are free.

#include "allreduce/allreduce_algorithms.hpp"
#include "generator_support.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <vector>

namespace collsim::algorithms {
namespace {

using core::OpKind;
using detail::OpCounts;

constexpr const char* kName = "allgather_reduce";

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
  const bool doubling = std::has_single_bit(p);
  const auto slots = [n](std::uint64_t first, std::uint64_t count) {
    return detail::tmp_range(first * n, count * n);
  };
  const core::Range none{};
  std::vector<std::uint32_t> before; // the copy in and every receive so far
  std::vector<std::uint32_t> gather; // every allgather operation
  std::array<std::uint32_t, 1> dep{};
  for (core::Rank r = 0; r < p; ++r) {
    out.begin_rank(r);
    if (p < 2) {
      continue;
    }
    before.clear();
    const std::uint32_t own = doubling ? r : 0;
    before.push_back(out.add(OpKind::copy, 0, slots(own, 1), detail::data_range(0, n), {}));
    gather = before;
    for (std::uint32_t d = 1; d < p; d <<= 1) {
      core::Rank to = 0;
      core::Rank from = 0;
      std::uint64_t send_first = 0;
      std::uint64_t recv_first = 0;
      std::uint64_t count = 0;
      if (doubling) {
        to = from = r ^ d;
        send_first = r & ~(d - 1);
        recv_first = to & ~(d - 1);
        count = d;
      } else {
        to = (r + p - d) % p;
        from = (r + d) % p;
        send_first = 0;
        recv_first = d;
        count = std::min<std::uint64_t>(d, p - d);
      }
      gather.push_back(out.add(OpKind::send, to, slots(send_first, count), none, before));
      const std::uint32_t got = out.add(OpKind::recv, from, slots(recv_first, count), none, {});
      before.push_back(got);
      gather.push_back(got);
    }
    std::uint32_t last = 0;
    for (std::uint32_t t = 1; t < p; ++t) {
      dep[0] = last;
      if (t == 1) {
        last = out.add(OpKind::reduce, 0, slots(0, 1), slots(t, 1), gather);
      } else {
        last = out.add(OpKind::reduce, 0, slots(0, 1), slots(t, 1), dep);
      }
    }
    dep[0] = last;
    out.add(OpKind::copy, 0, detail::data_range(0, n), slots(0, 1), dep);
  }
}

OpCounts allgather_reduce_counts(const Request& req) {
  Counter c;
  build(req, c);
  return c.counts;
}

core::Schedule generate_allgather_reduce(const Request& req) {
  const std::uint64_t p = req.ranks;
  core::Schedule s(make_header(req, p > 1 ? p * req.bytes.value : 0, kName));
  const OpCounts counts = allgather_reduce_counts(req);
  s.reserve(counts.ops, counts.deps);
  build(req, s);
  s.finish();
  return s;
}

std::optional<CostTerms> allgather_reduce_cost(const Request& req) {
  const std::uint64_t p = req.ranks;
  const auto moved = static_cast<double>((p - 1) * req.bytes.value);
  return CostTerms{static_cast<double>(detail::ceil_log2(req.ranks)), moved, moved};
}

} // namespace

AlgorithmInfo describe_allreduce_allgather_reduce() {
  AlgorithmInfo a;
  a.name = kName;
  a.collective = core::CollectiveKind::allreduce;
  a.summary = "allgather every vector (recursive doubling, or Bruck for non-powers of two), then "
              "reduce all p locally";
  a.source = "Open MPI ompi_coll_base_allreduce_intra_allgather_reduce";
  a.aliases = {"ompi:7", "ompi:allgather_reduce"};
  a.check = [](const Request& req) {
    return detail::size_limit_refusal(allgather_reduce_counts(req));
  };
  a.generate = generate_allgather_reduce;
  a.cost = allgather_reduce_cost;
  a.cost_formula = "ceil(lg p) a + (p-1) n b + (p-1) n g";
  return a;
}

} // namespace collsim::algorithms
