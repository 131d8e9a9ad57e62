// Bruck alltoall (algorithms.md AA3): ceil(lg p) rounds of store-and-forward; in round k every rank
// sends one message holding all its blocks whose (rotated) index has bit k set to r + 2^k.
//
// Source: J. Bruck, C.-T. Ho, S. Kipnis, E. Upfal and D. Weathersby, "Efficient algorithms for
// all-to-all communications in multiport message-passing systems", IEEE TPDS 8(11), 1997; MPICH
// MPIR_Alltoall_intra_brucks; Open MPI ompi_coll_base_alltoall_intra_bruck (coll/tuned alltoall
// algorithm 3, "modified_bruck"); SMPI "bruck".
//
// Cost (b = n/p): ceil(lg p) a + b sum_k c_k b, where c_k = #{i < p : bit k of i is set} is the
// number of blocks sent in round k; lg p a + (n/2) lg p b when p is a power of two. Exact on
// `uniform`: every rank sends c_k blocks in round k, and a round waits for the one before. The
// local packing copies are free there (copy_bandwidth 0); on a real machine they are the price of
// Bruck's few messages.
//
// Schedule, rank r, blocks of b bytes, tmp = [A: n bytes | S: n | R: n]:
//   1. rotate: A[i] = input block (r + i) mod p (two copies, one when r = 0).
//   2. round k (shift 2^k): pack the runs of blocks i with bit k set from A into S (one copy per
//      run), send S to r + 2^k, receive R from r - 2^k, unpack R's runs into the same A positions.
//      Afterwards A[i] holds the block rank r - i sent to rank r.
//   3. output block q = A[(r - q) mod p] (the inverse rotation with the reversal MPICH does):
//      p - 1 copies; the rank's own block is copied straight from its input.
// Dependencies (what makes every A, S, R reuse safe, directly or transitively):
//   pack run, round 0:  both rotation copies (so every later operation, which reaches some round-0
//                       pack through the sends, is ordered after the whole rotation);
//   pack run, round k:  the previous send (S is reused; through it every earlier pack) and the
//                       previous round's unpack of the run's upper half, or the previous receive
//                       when the run has no upper half (either orders every earlier unpack);
//   send:               every pack of its round;
//   receive, round k:   every unpack of round k-1 (R is reused);
//   unpack run:         its receive and the pack of the same run (which read those A bytes);
//   output copy:        the last round's unpack (one run: blocks [2^(K-1), p)).

#include "alltoall/alltoall_algorithms.hpp"
#include "generator_support.hpp"

#include <algorithm>
#include <array>
#include <vector>

namespace collsim::algorithms {
namespace {

using core::OpKind;
using detail::OpCounts;

constexpr const char* kName = "bruck";

/// Emits one rank's program into a schedule, or only counts it (s == nullptr), so that reserve()
/// and check() use exactly what generate() adds.
struct Emitter {
  core::Schedule* s = nullptr;
  OpCounts counts;
  std::uint32_t next = 0;

  std::uint32_t op(OpKind kind, core::Rank peer, core::Range target, core::Range source,
                   std::span<const std::uint32_t> deps) {
    ++counts.ops;
    counts.deps += deps.size();
    if (s != nullptr) {
      return s->add(kind, peer, target, source, deps);
    }
    return next++;
  }
};

/// Runs of block indices in [0, p) with bit k set: [j 2^(k+1) + 2^k, min((j+1) 2^(k+1), p)).
struct Run {
  std::uint32_t begin;
  std::uint32_t end;
};
std::vector<Run> runs(std::uint32_t p, std::uint32_t k) {
  std::vector<Run> out;
  const std::uint64_t half = std::uint64_t{1} << k;
  for (std::uint64_t start = half; start < p; start += 2 * half) {
    out.push_back({static_cast<std::uint32_t>(start),
                   static_cast<std::uint32_t>(std::min<std::uint64_t>(start + half, p))});
  }
  return out;
}

void emit_rank(Emitter& e, core::Rank r, std::uint32_t p, std::uint64_t n) {
  const std::uint64_t b = n / p;
  const auto a_blocks = [&](std::uint32_t lo, std::uint32_t hi) {
    return detail::tmp_range(lo * b, (hi - lo) * b);
  };
  // Own block: straight from the input, nothing to wait for.
  e.op(OpKind::copy, 0, detail::data_range(n + r * b, b), detail::data_range(r * b, b), {});
  if (p < 2) {
    return;
  }
  // 1. Rotation: A[0, p-r) <- input[r, p); A[p-r, p) <- input[0, r).
  std::vector<std::uint32_t> rotation;
  rotation.push_back(
      e.op(OpKind::copy, 0, a_blocks(0, p - r), detail::data_range(r * b, (p - r) * b), {}));
  if (r > 0) {
    rotation.push_back(e.op(OpKind::copy, 0, a_blocks(p - r, p), detail::data_range(0, r * b), {}));
  }
  // 2. Rounds.
  const std::uint32_t rounds = detail::ceil_log2(p);
  std::vector<std::uint32_t> prev_unpacks;
  std::uint32_t prev_send = 0;
  std::uint32_t prev_recv = 0;
  std::vector<std::uint32_t> packs;
  std::vector<std::uint32_t> deps;
  for (std::uint32_t k = 0; k < rounds; ++k) {
    const std::vector<Run> cur = runs(p, k);
    packs.clear();
    std::uint64_t packed = 0; // bytes of S used so far
    for (std::size_t j = 0; j < cur.size(); ++j) {
      const Run& run = cur[j];
      if (k == 0) {
        deps = rotation;
      } else {
        // The previous round's runs start at 2^(k-1) + i 2^k: the one in this run's upper half
        // is number 2j + 1. Without it, the previous receive orders the older unpacks.
        const std::size_t upper = 2 * j + 1;
        deps = {prev_send, upper < prev_unpacks.size() ? prev_unpacks[upper] : prev_recv};
      }
      const std::uint64_t len = (run.end - run.begin) * b;
      packs.push_back(e.op(OpKind::copy, 0, detail::tmp_range(n + packed, len),
                           a_blocks(run.begin, run.end), deps));
      packed += len;
    }
    const std::uint32_t shift = std::uint32_t{1} << k;
    prev_send = e.op(OpKind::send, (r + shift) % p, detail::tmp_range(n, packed), {}, packs);
    prev_recv =
        e.op(OpKind::recv, (r + p - shift) % p, detail::tmp_range(2 * n, packed), {}, prev_unpacks);
    std::vector<std::uint32_t> unpacks;
    std::uint64_t unpacked = 0;
    for (std::size_t i = 0; i < cur.size(); ++i) {
      const std::uint64_t len = (cur[i].end - cur[i].begin) * b;
      const std::array<std::uint32_t, 2> d{prev_recv, packs[i]};
      unpacks.push_back(e.op(OpKind::copy, 0, a_blocks(cur[i].begin, cur[i].end),
                             detail::tmp_range(2 * n + unpacked, len), d));
      unpacked += len;
    }
    prev_unpacks = std::move(unpacks);
  }
  // 3. Output: block q (from rank q) is A[(r - q) mod p]; the last round unpacked one run.
  const std::array<std::uint32_t, 1> last{prev_unpacks.back()};
  for (core::Rank q = 0; q < p; ++q) {
    if (q != r) {
      const std::uint32_t i = (r + p - q) % p;
      e.op(OpKind::copy, 0, detail::data_range(n + q * b, b), a_blocks(i, i + 1), last);
    }
  }
}

/// The operation count in closed form, for check(): per rank its own block, the rotation (two
/// copies, one on rank 0), per round 2 R_k copies plus a send and a receive (R_k runs), and p-1
/// output copies. check() must not run the O(ops) dry run on a request it is about to refuse.
std::uint64_t bruck_op_count(std::uint32_t p) {
  if (p < 2) {
    return p;
  }
  const std::uint64_t pp = p;
  std::uint64_t per_round = 0;
  for (std::uint32_t k = 0; k < detail::ceil_log2(p); ++k) {
    const std::uint64_t half = std::uint64_t{1} << k;
    const std::uint64_t run_count = (pp - half + 2 * half - 1) / (2 * half); // starts below p
    per_round += 2 * run_count + 2;
  }
  return pp * pp + (2 * pp - 1) + pp * per_round;
}

/// Exact totals, by a dry run of the generator (reserve() gets exactly what generate() adds).
OpCounts bruck_counts(std::uint32_t p, std::uint64_t n) {
  OpCounts total;
  for (core::Rank r = 0; r < p; ++r) {
    Emitter e;
    emit_rank(e, r, p, n);
    total.ops += e.counts.ops;
    total.deps += e.counts.deps;
  }
  return total;
}

core::Schedule generate_bruck(const Request& req) {
  const std::uint32_t p = req.ranks;
  const std::uint64_t n = req.bytes.value;
  core::Schedule s(make_header(req, p > 1 ? 3 * n : 0, kName));
  const OpCounts counts = bruck_counts(p, n);
  s.reserve(counts.ops, counts.deps);
  for (core::Rank r = 0; r < p; ++r) {
    s.begin_rank(r);
    Emitter e{&s, {}, 0};
    emit_rank(e, r, p, n);
  }
  s.finish();
  return s;
}

std::optional<CostTerms> bruck_cost(const Request& req) {
  const std::uint32_t p = req.ranks;
  const std::uint64_t b = req.bytes.value / p;
  const std::uint32_t rounds = detail::ceil_log2(p);
  std::uint64_t blocks = 0;
  for (std::uint32_t k = 0; k < rounds; ++k) {
    for (const Run& run : runs(p, k)) {
      blocks += run.end - run.begin;
    }
  }
  return CostTerms{static_cast<double>(rounds), static_cast<double>(blocks * b), 0.0};
}

} // namespace

AlgorithmInfo describe_alltoall_bruck() {
  AlgorithmInfo a;
  a.name = kName;
  a.collective = core::CollectiveKind::alltoall;
  a.summary = "ceil(lg p) rounds; round k forwards every block whose index has bit k set";
  a.source = "Bruck et al., IEEE TPDS 1997; MPICH MPIR_Alltoall_intra_brucks; Open MPI "
             "ompi_coll_base_alltoall_intra_bruck";
  a.aliases = {"ompi:3", "ompi:modified_bruck", "mpich:brucks", "smpi:bruck"};
  a.constraints = {"bytes divisible by ranks"};
  a.check = [](const Request& req) -> std::string {
    if (req.bytes.value % req.ranks != 0) {
      return "alltoall needs bytes divisible by ranks";
    }
    return detail::size_limit_refusal({bruck_op_count(req.ranks), 0});
  };
  a.generate = generate_bruck;
  a.cost = bruck_cost;
  a.cost_formula = "ceil(lg p) a + (n/p) sum_k #{i < p : bit k of i set} b (lg p a + (n/2) lg p b "
                   "for p a power of two)";
  return a;
}

} // namespace collsim::algorithms
