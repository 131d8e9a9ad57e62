// Rabenseifner's allreduce (algorithms.md AR6): a reduce-scatter by recursive vector halving and
// distance doubling, then an allgather by recursive vector doubling and distance halving that
// replays the same exchanges in reverse order.
//
// Source: R. Thakur, R. Rabenseifner and W. Gropp, "Optimization of collective communication
// operations in MPICH", IJHPCA 19(1), 2005; R. Rabenseifner, "Optimization of collective reduction
// operations", ICCS 2004. The schedule follows Open MPI
// ompi_coll_base_allreduce_intra_redscat_allgather (coll/tuned allreduce algorithm 6) step for
// step, including its non-power-of-two fold. MPICH MPIR_Allreduce_intra_reduce_scatter_allgather
// (alias "mpich:reduce_scatter_allgather") sends the same messages when p is a power of two and p
// divides n; otherwise it differs: it folds whole vectors (as recursive_doubling does) and splits
// windows on boundaries of p' blocks of block_range(n, p', i) instead of halving byte counts.
//
// Cost, p' = 2^floor(lg p), exact when p' divides n:
//   p = 2^k:   2 lg p a + 2(p-1)/p n b + (p-1)/p n g.
//   otherwise: (2 lg p' + 3) a + (2 + 2(p'-1)/p') n b + (1/2 + (p'-1)/p') n g.
//   The fold costs 2a + n b + n/2 g on the critical path (exchange halves, reduce, odd rank sends
//   its reduced half), the unfold a + n b. algorithms.md quotes MPICH's comment,
//   (2 floor(lg p)+2) a + (2(p-1)/p + 2) n b + n(1+(p-1)/p) g, which prices MPICH's whole-vector
//   fold (one message of n and a full reduction), not the halves fold built here.
//
// Schedule, with r = p - p':
//   fold (ranks 0..2r-1): an even rank sends the second half of its vector to rank+1 while the odd
//     rank sends its first half to rank-1; each reduces the half it kept; the odd rank sends its
//     reduced second half back and drops out. Survivors: even ranks below 2r as rank/2, ranks at or
//     above 2r as rank-r.
//   reduce-scatter: for mask = 1, 2, ..., p'/2 the partner is vrank XOR mask ("beginning with
//     processes that are distance 1 apart"). The current window [w, w+len) is split at len/2: the
//     lower vrank keeps the first len/2 bytes and sends the rest, the higher one keeps the last
//     len - len/2 bytes and sends the first len/2; each receives the kept part into tmp and reduces
//     it into data. The kept part is the next window. Odd lengths and windows shorter than two
//     bytes are fine: a part may be empty, and its zero-length messages are kept on both sides.
//   allgather: the same exchanges for mask = p'/2 .. 1: send the window kept at that step, receive
//     the part sent away at that step (straight into data: it is the final result).
//   unfold: each even rank below 2r sends the whole result to rank+1.
//
// Dependencies: a send waits for the operation that produced its bytes; a receive into tmp waits
// for the reduction that last read tmp; a reduction waits for its receive (and, on a folded rank's
// first step, for the fold's receive into data, which it overwrites); a receive into data waits for
// the send that read those bytes (which transitively waited for every earlier write to them).

#include "allreduce/allreduce_algorithms.hpp"
#include "generator_support.hpp"

#include <array>
#include <bit>

namespace collsim::algorithms {
namespace {

using core::OpKind;
using detail::OpCounts;

constexpr const char* kName = "rabenseifner";

OpCounts rabenseifner_counts(std::uint32_t p) {
  if (p < 2) {
    return {};
  }
  const std::uint64_t pof2 = std::bit_floor(p);
  const std::uint64_t rem = p - pof2;
  const std::uint64_t k = detail::floor_log2(p);
  OpCounts c;
  // Ranks at or above 2r: reduce-scatter 3 ops a step (3k - 2 deps: the first step's send and
  // receive wait for nothing), allgather 2 ops a step (3k - 1 deps).
  c.ops += (pof2 - rem) * 5 * k;
  c.deps += (pof2 - rem) * (6 * k - 3);
  // Even ranks below 2r: fold 4 ops (2 deps), reduce-scatter (3k + 2 deps: the first send and
  // the first reduction also wait for the fold's writes), allgather, unfold send (2 deps).
  c.ops += rem * (5 * k + 5);
  c.deps += rem * (6 * k + 5);
  // Odd ranks below 2r: fold 4 ops (2 deps) and the final receive (2 deps).
  c.ops += rem * 5;
  c.deps += rem * 4;
  return c;
}

/// One reduce-scatter step of a surviving rank, in bytes, and the local ids of its operations.
struct Step {
  core::Rank peer = 0;
  std::uint64_t send_offset = 0;
  std::uint64_t send_length = 0;
  std::uint64_t keep_offset = 0;
  std::uint64_t keep_length = 0;
  std::uint32_t send_op = 0;
  std::uint32_t reduce_op = 0;
};

core::Schedule generate_rabenseifner(const Request& req) {
  const std::uint32_t p = req.ranks;
  const std::uint64_t n = req.bytes.value;
  core::Schedule s(make_header(req, p > 1 ? n : 0, kName));
  const OpCounts counts = detail::collapsed_counts(rabenseifner_counts(p), req);
  s.reserve(counts.ops, counts.deps);
  const std::uint32_t pof2 = std::bit_floor(p);
  const std::uint32_t rem = p - pof2;
  const std::uint64_t lhalf = n / 2; // Open MPI's count_lhalf
  const std::uint64_t rhalf = n - lhalf;

  std::array<Step, 32> steps{};
  std::array<std::uint32_t, 2> dep{};
  // Every rank, or the representatives of a collapsed request (core/collapse.hpp).
  for (core::Rank r = 0; r < s.ranks(); ++r) {
    s.begin_rank(r);
    if (p < 2) {
      continue;
    }
    std::uint32_t vrank = 0;
    bool folded = false;                        // an even rank below 2r, holding both halves
    std::array<std::uint32_t, 2> fold_writes{}; // its fold reduction and fold receive
    if (r < 2 * rem) {
      if (r % 2 != 0) {
        // Odd: give the first half away, reduce the second half, return it, drop out.
        const std::uint32_t sent_first =
            detail::add_op(s, OpKind::send, r - 1, detail::data_range(0, lhalf), {});
        const std::uint32_t got =
            detail::add_op(s, OpKind::recv, r - 1, detail::tmp_range(lhalf, rhalf), {});
        const std::uint32_t red =
            s.reduce(detail::tmp_range(lhalf, rhalf), detail::data_range(lhalf, rhalf), {got});
        const std::uint32_t sent_second = s.send(r - 1, detail::data_range(lhalf, rhalf), {red});
        s.recv(r - 1, detail::data_range(0, n), {sent_first, sent_second});
        continue;
      }
      // Even: give the second half away, reduce the first half, take the reduced second half.
      const std::uint32_t sent =
          detail::add_op(s, OpKind::send, r + 1, detail::data_range(lhalf, rhalf), {});
      const std::uint32_t got =
          detail::add_op(s, OpKind::recv, r + 1, detail::tmp_range(0, lhalf), {});
      const std::uint32_t red =
          s.reduce(detail::tmp_range(0, lhalf), detail::data_range(0, lhalf), {got});
      const std::uint32_t back = s.recv(r + 1, detail::data_range(lhalf, rhalf), {sent});
      fold_writes = {red, back};
      folded = true;
      vrank = r / 2;
    } else {
      vrank = r - rem;
    }

    // Reduce-scatter by recursive halving, distance doubling.
    std::uint32_t nsteps = 0;
    std::uint64_t window_offset = 0;
    std::uint64_t window_length = n;
    for (std::uint32_t mask = 1; mask < pof2; mask <<= 1, ++nsteps) {
      Step& st = steps[nsteps];
      const std::uint32_t vdest = vrank ^ mask;
      st.peer = vdest < rem ? vdest * 2 : vdest + rem;
      const std::uint64_t half = window_length / 2;
      if (vrank < vdest) {
        st.keep_offset = window_offset;
        st.keep_length = half;
        st.send_offset = window_offset + half;
        st.send_length = window_length - half;
      } else {
        st.send_offset = window_offset;
        st.send_length = half;
        st.keep_offset = window_offset + half;
        st.keep_length = window_length - half;
      }
      // Each step waits for the previous reduction (it wrote the window being sent and read tmp).
      // The first step of a folded rank waits for the fold instead: its send and its reduction for
      // both fold writes to data, its receive for the fold reduction, the last reader of tmp.
      std::uint32_t send_deps = 1;
      std::uint32_t recv_deps = 1;
      std::uint32_t reduce_deps = 1;
      if (nsteps == 0) {
        dep = fold_writes;
        send_deps = folded ? 2 : 0;
        recv_deps = folded ? 1 : 0;
        reduce_deps = folded ? 2 : 1;
      } else {
        dep[0] = steps[nsteps - 1].reduce_op;
      }
      st.send_op = detail::add_op(s, OpKind::send, st.peer,
                                  detail::data_range(st.send_offset, st.send_length),
                                  std::span(dep.data(), send_deps));
      const std::uint32_t got = detail::add_op(s, OpKind::recv, st.peer,
                                               detail::tmp_range(st.keep_offset, st.keep_length),
                                               std::span(dep.data(), recv_deps));
      dep = {got, fold_writes[1]};
      st.reduce_op = detail::reduce_op(s, detail::tmp_range(st.keep_offset, st.keep_length),
                                       detail::data_range(st.keep_offset, st.keep_length),
                                       std::span(dep.data(), reduce_deps));
      window_offset = st.keep_offset;
      window_length = st.keep_length;
    }

    // Allgather by recursive doubling: replay the steps backwards, swapping the roles of the parts.
    std::uint32_t last_send = 0;
    std::uint32_t last_recv = 0;
    for (std::uint32_t i = nsteps; i-- > 0;) {
      const Step& st = steps[i];
      std::uint32_t send_deps = 2;
      if (i + 1 == nsteps) {
        dep[0] = st.reduce_op; // the final reduction produced the rank's own part
        send_deps = 1;
      } else {
        dep = {last_recv, last_send}; // the window is the last received part plus the last sent one
      }
      last_send = detail::add_op(s, OpKind::send, st.peer,
                                 detail::data_range(st.keep_offset, st.keep_length),
                                 std::span(dep.data(), send_deps));
      dep[0] = st.send_op; // the reduce-scatter send that read these bytes
      last_recv = detail::add_op(s, OpKind::recv, st.peer,
                                 detail::data_range(st.send_offset, st.send_length),
                                 std::span(dep.data(), 1));
    }

    if (r < 2 * rem) {
      s.send(r + 1, detail::data_range(0, n), {last_send, last_recv});
    }
  }
  s.finish();
  return s;
}

std::optional<CostTerms> rabenseifner_cost(const Request& req) {
  const std::uint32_t p = req.ranks;
  const std::uint64_t n = req.bytes.value;
  const std::uint64_t pof2 = std::bit_floor(p);
  if (p == 0 || n % pof2 != 0) {
    return std::nullopt;
  }
  // Integer arithmetic first: the terms are exact when p' divides n (and then 2 divides n too).
  const std::uint64_t block = n / pof2;
  const std::uint64_t half = n / 2;
  const auto k = static_cast<double>(detail::floor_log2(p));
  const auto part = static_cast<double>((pof2 - 1) * block); // (p'-1)/p' n
  if (pof2 == p) {
    return CostTerms{2 * k, 2 * part, part};
  }
  const auto whole = static_cast<double>(n);
  return CostTerms{2 * k + 3, 2 * whole + 2 * part, static_cast<double>(half) + part};
}

} // namespace

AlgorithmInfo describe_rabenseifner() {
  AlgorithmInfo a;
  a.name = kName;
  a.collective = core::CollectiveKind::allreduce;
  a.summary = "recursive-halving reduce-scatter then recursive-doubling allgather";
  a.source = "Thakur, Rabenseifner & Gropp, IJHPCA 2005; Open MPI "
             "ompi_coll_base_allreduce_intra_redscat_allgather; MPICH "
             "MPIR_Allreduce_intra_reduce_scatter_allgather";
  a.aliases = {"ompi:6", "ompi:rabenseifner", "mpich:reduce_scatter_allgather", "smpi:rab_rdb"};
  a.check = [](const Request& req) {
    return detail::size_limit_refusal(
        detail::collapsed_counts(rabenseifner_counts(req.ranks), req));
  };
  // On 2^m ranks with n a multiple of p every halving step splits equal halves: rank r runs rank
  // 0's exchanges with its bits flipped, keeping the other half where its bit is set (the same
  // lengths; only offsets differ).
  a.symmetry = [](const Request& req) {
    const bool even =
        req.ranks >= 2 && std::has_single_bit(req.ranks) && req.bytes.value % req.ranks == 0;
    return Symmetry{even ? core::SymmetryKind::xor_blocks : core::SymmetryKind::none};
  };
  a.generate = generate_rabenseifner;
  a.cost = rabenseifner_cost;
  a.cost_formula = "p = 2^k: 2 lg p a + 2(p-1)/p n b + (p-1)/p n g; otherwise, with p' = "
                   "2^floor(lg p): (2 lg p' + 3) a + (2 + 2(p'-1)/p') n b + (1/2 + (p'-1)/p') n g "
                   "(exact when p' divides n)";
  return a;
}

} // namespace collsim::algorithms
