// Radix-k reduce-scatter + allgather allreduce (algorithms.md AR11): Rabenseifner's algorithm with
// radix k, on MPICH's recursive-exchange partners.
//
// Source: MPICH MPIR_Allreduce_intra_k_reduce_scatter_allgather ("mpich:k_reduce_scatter_
// allgather"; radix MPIR_CVAR_ALLREDUCE_RECEXCH_KVAL, default 2; receives posted two phases ahead,
// MPICH's default), with the step-1/step-3 fold and the step-2 neighbours of recexch (see
// allreduce_recexch.cpp and detail::recexch_neighbours):
//   blocks: the p_k participants own one block each, in step-2 rank order; block i is
//     [i q, (i+1) q) with q = floor(count / p_k) elements, the last block taking the remainder
//     (MPICH's cnts, in elements of the datatype: collsim's collectives are 4-byte floats, as
//     nccl-tests and OSU run them, core/result.hpp; a vector of fewer elements than blocks is all
//     in the last block).
//   R(v): step-2 rank v with its L = log_k p_k base-k digits reversed. The window of u at level j
//     is the k^j blocks starting at floor(u / k^j) k^j.
//   step 1: a non-participant sends its vector to its partner; a participant receives each of its
//     senders' vectors into tmp and reduces it into data, one at a time.
//   reduce-scatter, phase f = 0..L-1 (j = L-1-f), for each neighbour w of phase f in turn (digit
//     order), a blocking exchange: send the window of R(w) at level j, receive the window of R(v)
//     at level j into the same bytes of tmp, wait for both, reduce it into data. After the last
//     phase rank v owns block R(v).
//   allgather, step j = 0..L-1 with the neighbours of phase L-1-j (the farthest first): send the
//     window of R(v) at level j to each; receive each neighbour w's window of R(w) at level j into
//     data.
//   step 3: participants send the result to their step-1 senders.
// tmp holds one vector (MPICH's tmp_recvbuf).
//
// Dependencies: each reduce-scatter exchange waits for the previous reduction (MPICH's blocking
// loop: it wrote data and read tmp); a reduction waits for its send and receive. An allgather
// receive from w overwrites exactly the window the reduce-scatter sent to w, so it waits for that
// send; allgather sends wait for the previous step's receives and sends (the final reduction for
// the first step); step 3's sends likewise wait for the last step.
//
// Cost: about 2 log_k p (k-1) a + 2(p-1)/p n b + (p-1)/p n g (algorithms.md). Exact for k = 2, p a
// power of two and p dividing the element count n / 4: 2 lg p a + 2(p-1)/p n b + (p-1)/p n g
// (Rabenseifner). With k > 2 a rank meets its k-1 neighbours in digit order while each neighbour
// does the same, so ranks wait on one another unevenly; with a fold, the ranks it does not involve
// start early; cost() declines.

#include "allreduce/allreduce_algorithms.hpp"
#include "generator_support.hpp"

#include <array>
#include <bit>
#include <vector>

namespace collsim::algorithms {
namespace {

using core::OpKind;
using detail::OpCounts;

constexpr const char* kName = "k_reduce_scatter_allgather";
constexpr const char* kRadix = "radix";
constexpr std::int64_t kMaxRadix = 64;
constexpr std::uint64_t kElement = 4; // bytes of one element (MPI_FLOAT)

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

/// Reverses the `digits` base-k digits of `v`.
std::uint64_t reverse_digits(std::uint64_t v, std::uint32_t k, std::uint32_t digits) {
  std::uint64_t out = 0;
  for (std::uint32_t i = 0; i < digits; ++i) {
    out = out * k + v % k;
    v /= k;
  }
  return out;
}

template <class Out>
void build(const Request& req, Out& out) {
  const std::uint32_t p = req.ranks;
  const std::uint64_t n = req.bytes.value;
  const std::uint32_t k = radix_of(req);
  const core::Range data = detail::data_range(0, n);
  const core::Range none{};
  std::array<std::uint32_t, 1> dep{};
  std::vector<std::uint32_t> wait;
  std::vector<std::vector<std::uint32_t>> rs_send; // [phase][neighbour]
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
    const std::uint64_t blocks = nb.power;
    const std::uint64_t q = n / kElement / blocks * kElement; // bytes of a block but the last
    const auto phases = static_cast<std::uint32_t>(nb.step2.size());
    // Bytes of the window of u at level j: blocks [floor(u / k^j) k^j, + k^j).
    const auto window = [&](std::uint64_t u, std::uint32_t j, core::Buffer buffer) {
      std::uint64_t size = 1;
      for (std::uint32_t i = 0; i < j; ++i) {
        size *= k;
      }
      const std::uint64_t first = u / size * size;
      const std::uint64_t begin = first * q;
      const std::uint64_t end = first + size == blocks ? n : (first + size) * q;
      return core::Range{buffer, begin, end - begin};
    };
    const std::uint64_t me = reverse_digits(nb.step2_rank, k, phases);

    bool has_last = false;
    std::uint32_t last = 0; // the last reduction
    const auto last_dep = [&]() {
      dep[0] = last;
      return std::span<const std::uint32_t>(dep.data(), has_last ? 1 : 0);
    };
    // Step 1: one blocking receive and reduction per folded rank.
    for (const core::Rank from : nb.step1_recvfrom) {
      const std::uint32_t got =
          out.add(OpKind::recv, from, detail::tmp_range(0, n), none, last_dep());
      dep[0] = got;
      last = out.add(OpKind::reduce, 0, data, detail::tmp_range(0, n), dep);
      has_last = true;
    }
    // Reduce-scatter.
    rs_send.assign(phases, {});
    for (std::uint32_t f = 0; f < phases; ++f) {
      const std::uint32_t j = phases - 1 - f;
      const core::Range mine = window(me, j, core::Buffer::data);
      const core::Range scratch{core::Buffer::tmp, mine.offset, mine.length};
      for (std::uint32_t i = 0; i < nb.step2[f].size(); ++i) {
        const std::uint64_t theirs = reverse_digits(nb.step2_rank_of[f][i], k, phases);
        std::array<std::uint32_t, 2> both{};
        both[0] = out.add(OpKind::send, nb.step2[f][i], window(theirs, j, core::Buffer::data), none,
                          last_dep());
        both[1] = out.add(OpKind::recv, nb.step2[f][i], scratch, none, last_dep());
        rs_send[f].push_back(both[0]);
        last = out.add(OpKind::reduce, 0, mine, scratch, both);
        has_last = true;
      }
    }
    // Allgather: the previous step's receives and first send, or the last reduction.
    wait.clear();
    if (has_last) {
      wait.push_back(last);
    }
    for (std::uint32_t j = 0; j < phases; ++j) {
      const std::uint32_t f = phases - 1 - j;
      std::vector<std::uint32_t> received;
      for (std::uint32_t i = 0; i < nb.step2[f].size(); ++i) {
        const std::uint64_t theirs = reverse_digits(nb.step2_rank_of[f][i], k, phases);
        dep[0] = rs_send[f][i];
        received.push_back(out.add(OpKind::recv, nb.step2[f][i],
                                   window(theirs, j, core::Buffer::data), none, dep));
      }
      std::uint32_t first_send = 0;
      for (std::uint32_t i = 0; i < nb.step2[f].size(); ++i) {
        const std::uint32_t sent =
            out.add(OpKind::send, nb.step2[f][i], window(me, j, core::Buffer::data), none, wait);
        if (i == 0) {
          first_send = sent;
        }
      }
      wait = std::move(received);
      wait.push_back(first_send);
    }
    // Step 3.
    for (const core::Rank to : nb.step1_recvfrom) {
      out.add(OpKind::send, to, data, none, wait);
    }
  }
}

OpCounts k_rsag_counts(const Request& req) {
  Counter c;
  build(req, c);
  return c.counts;
}

core::Schedule generate_k_rsag(const Request& req) {
  core::Schedule s(make_header(req, req.ranks > 1 ? req.bytes.value : 0, kName));
  const OpCounts counts = k_rsag_counts(req);
  s.reserve(counts.ops, counts.deps);
  build(req, s);
  s.finish();
  return s;
}

std::optional<CostTerms> k_rsag_cost(const Request& req) {
  const std::uint32_t p = req.ranks;
  const std::uint64_t n = req.bytes.value;
  if (p == 1) {
    return CostTerms{};
  }
  if (radix_of(req) != 2 || !std::has_single_bit(p) || n % (kElement * p) != 0) {
    return std::nullopt;
  }
  const auto lg = static_cast<double>(detail::floor_log2(p));
  const auto moved = static_cast<double>((p - 1) * (n / p));
  return CostTerms{2.0 * lg, 2.0 * moved, moved};
}

} // namespace

AlgorithmInfo describe_allreduce_k_reduce_scatter_allgather() {
  AlgorithmInfo a;
  a.name = kName;
  a.collective = core::CollectiveKind::allreduce;
  a.summary = "radix-k Rabenseifner: k-way recursive reduce-scatter, then the mirrored allgather, "
              "on recursive-exchange partners";
  a.source = "MPICH MPIR_Allreduce_intra_k_reduce_scatter_allgather";
  a.aliases = {"mpich:k_reduce_scatter_allgather"};
  a.params = {{kRadix, 2, 2, kMaxRadix, "radix k (MPIR_CVAR_ALLREDUCE_RECEXCH_KVAL, default 2)"}};
  a.constraints = {"commutative operations only (MPICH asserts it)"};
  a.check = [](const Request& req) { return detail::size_limit_refusal(k_rsag_counts(req)); };
  a.generate = generate_k_rsag;
  a.cost = k_rsag_cost;
  a.cost_formula = "k = 2, p = 2^m dividing the element count n/4: 2 lg p a + 2(p-1)/p n b + "
                   "(p-1)/p n g; otherwise "
                   "about 2 log_k p (k-1) a + 2(p-1)/p n b + (p-1)/p n g (not exact)";
  return a;
}

} // namespace collsim::algorithms
