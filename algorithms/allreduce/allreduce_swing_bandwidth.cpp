// Bandwidth-optimal Swing allreduce (algorithms.md AR22, "bandwidth-optimal variant"): a
// reduce-scatter in lg p steps that halves the data with Swing's peers, then an allgather that
// replays the same exchanges in reverse order (Rabenseifner's structure, AR6, with Swing's peers).
//
// Source: D. De Sensi, T. Bonato, D. Saam and T. Hoefler, "Swing: Short-cutting Rings for Higher
// Bandwidth Allreduce", NSDI'24; libswing ALGO_SWING_B (its per-step block bitmaps and its
// remap_blocks, which makes the blocks of each step contiguous). The fold follows MPICH
// MPIR_Allreduce_intra_recursive_doubling, as libswing's shrink_non_power_of_two does.
//
// Peers and blocks (allreduce/swing_support.hpp): in step s, new rank v talks to pi(v, s) = v +
// rho(s) if v is even, v - rho(s) if odd (mod p'), rho(s) = 1, -1, 3, -5, 11, ... The vector is cut
// into p' blocks; the blocks rank v sends in step s are those its peer reaches through steps
// s+1..lg p'-1, and it keeps those it reaches itself. Numbering the blocks in "slot" order
// (swing_block_slots) makes both sets contiguous: slot j is block_range(n, p', j) of data, and
// rank v ends the reduce-scatter owning slot pos(v). Distances grow as about 2^(s+1)/3 while the
// data halves, so on a ring or torus the big early messages stay short.
//
// Cost: p = 2^k, p divides n: 2 lg p a + 2(p-1)/p n b + (p-1)/p n g, exact on the loggp engine
//       (Rabenseifner's cost; Swing gains only on a topology). Otherwise no closed form: with
//       uneven blocks a step is paced by the larger half, and the fold's ranks start late.
//
// Schedule, with p' = 2^floor(lg p) and r = p - p':
//   fold:   among ranks 0..2r-1, each even rank sends its whole vector to rank+1 and idles; the odd
//           rank receives it into tmp and reduces. Survivors: rank/2 below 2r, rank-r above.
//   reduce-scatter, s = 0..lg p'-1: send the peer's half of the window (slots
//           swing_window(pos(v), s).send) from data; receive the kept half into tmp at the same
//           offsets; reduce it into data. The kept half is the next window.
//   allgather, s = lg p'-1..0: send the half kept in step s, receive the half sent in step s
//           straight into data (it is the final result).
//   unfold: each odd rank below 2r sends the whole result to rank-1.
//
// Dependencies (Rabenseifner's): a send waits for the operation that produced its bytes; a receive
// into tmp waits for the reduction that last read tmp (the fold's, on a folded rank's first step);
// a reduction waits for its receive; a receive into data waits for the reduce-scatter send that
// read those bytes.

#include "allreduce/allreduce_algorithms.hpp"
#include "allreduce/swing_support.hpp"
#include "generator_support.hpp"

#include <array>
#include <bit>

namespace collsim::algorithms {
namespace {

using core::OpKind;
using detail::OpCounts;

constexpr const char* kName = "swing_bandwidth";

OpCounts swing_bandwidth_counts(std::uint32_t p) {
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
  // Odd ranks below 2r: fold (recv, reduce: 1 dep), reduce-scatter (3k deps: the first send and
  // receive wait for the fold's reduction), allgather, unfold send (2 deps).
  c.ops += rem * (5 * k + 3);
  c.deps += rem * (6 * k + 2);
  // Even ranks below 2r: fold send, final receive (1 dep).
  c.ops += rem * 2;
  c.deps += rem * 1;
  return c;
}

core::Schedule generate_swing_bandwidth(const Request& req) {
  const std::uint32_t p = req.ranks;
  const std::uint64_t n = req.bytes.value;
  core::Schedule s(make_header(req, p > 1 ? n : 0, kName));
  const OpCounts counts = swing_bandwidth_counts(p);
  s.reserve(counts.ops, counts.deps);
  if (p < 2) {
    s.finish();
    return s;
  }
  const std::uint32_t pof2 = std::bit_floor(p);
  const std::uint32_t rem = p - pof2;
  const std::uint32_t steps = detail::floor_log2(p);
  const std::vector<std::uint32_t> slot = detail::swing_block_slots(pof2);
  const std::vector<std::uint64_t> offset = detail::slot_offsets(n, pof2);
  const auto slots = [&](core::Buffer b, std::uint32_t begin, std::uint32_t count) {
    return core::Range{b, offset[begin], offset[begin + count] - offset[begin]};
  };
  const core::Range whole = detail::data_range(0, n);
  const core::Range scratch = detail::tmp_range(0, n);

  struct Step {
    core::Rank peer = 0;
    detail::SwingWindow window;
    std::uint32_t send_op = 0;
    std::uint32_t reduce_op = 0;
  };
  std::array<Step, 32> plan{};
  std::array<std::uint32_t, 2> dep{};
  for (core::Rank r = 0; r < p; ++r) {
    s.begin_rank(r);
    std::uint32_t newrank = 0;
    bool folded = false; // an odd rank below 2r: its fold reduction came first
    std::uint32_t fold_reduce = 0;
    if (r < 2 * rem) {
      if (r % 2 == 0) {
        const std::uint32_t sent = detail::add_op(s, OpKind::send, r + 1, whole, {});
        dep[0] = sent;
        detail::add_op(s, OpKind::recv, r + 1, whole, std::span(dep.data(), 1));
        continue;
      }
      const std::uint32_t got = detail::add_op(s, OpKind::recv, r - 1, scratch, {});
      fold_reduce = s.reduce(scratch, whole, {got});
      folded = true;
      newrank = r / 2;
    } else {
      newrank = r - rem;
    }

    // Reduce-scatter: distances 1, 1, 3, 5, ... while the data halves.
    for (std::uint32_t step = 0; step < steps; ++step) {
      Step& st = plan[step];
      const std::uint32_t newdst = detail::swing_peer(newrank, step, pof2);
      st.peer = newdst < rem ? newdst * 2 + 1 : newdst + rem;
      st.window = detail::swing_window(slot[newrank], step, steps);
      const bool waits = step > 0 || folded;
      dep[0] = step > 0 ? plan[step - 1].reduce_op : fold_reduce;
      const auto wait = std::span(dep.data(), waits ? 1 : 0);
      const core::Range sent = slots(core::Buffer::data, st.window.send_begin, st.window.count);
      const core::Range kept = slots(core::Buffer::tmp, st.window.keep_begin, st.window.count);
      st.send_op = detail::add_op(s, OpKind::send, st.peer, sent, wait);
      const std::uint32_t got = detail::add_op(s, OpKind::recv, st.peer, kept, wait);
      st.reduce_op =
          s.reduce(kept, slots(core::Buffer::data, st.window.keep_begin, st.window.count), {got});
    }

    // Allgather: the same exchanges backwards, the kept half out, the sent half in.
    std::uint32_t last_send = 0;
    std::uint32_t last_recv = 0;
    for (std::uint32_t i = steps; i-- > 0;) {
      const Step& st = plan[i];
      std::uint32_t send_deps = 2;
      if (i + 1 == steps) {
        dep[0] = st.reduce_op; // the final reduction produced the rank's own slot
        send_deps = 1;
      } else {
        dep = {last_recv, last_send}; // the last received half plus the last sent one
      }
      last_send = detail::add_op(s, OpKind::send, st.peer,
                                 slots(core::Buffer::data, st.window.keep_begin, st.window.count),
                                 std::span(dep.data(), send_deps));
      dep[0] = st.send_op; // the reduce-scatter send that read these bytes
      last_recv = detail::add_op(s, OpKind::recv, st.peer,
                                 slots(core::Buffer::data, st.window.send_begin, st.window.count),
                                 std::span(dep.data(), 1));
    }

    if (r < 2 * rem) {
      s.send(r - 1, whole, {last_send, last_recv});
    }
  }
  s.finish();
  return s;
}

std::optional<CostTerms> swing_bandwidth_cost(const Request& req) {
  const std::uint64_t p = req.ranks;
  const std::uint64_t n = req.bytes.value;
  if (!std::has_single_bit(p) || n % p != 0) {
    return std::nullopt;
  }
  const auto k = static_cast<double>(detail::floor_log2(req.ranks));
  const auto part = static_cast<double>((p - 1) * (n / p)); // (p-1)/p n, exactly
  return CostTerms{2 * k, 2 * part, part};
}

} // namespace

AlgorithmInfo describe_allreduce_swing_bandwidth() {
  AlgorithmInfo a;
  a.name = kName;
  a.collective = core::CollectiveKind::allreduce;
  a.summary = "Swing reduce-scatter (halving data, peers r +- rho(s)) then the allgather in "
              "reverse (non-power-of-two: fold first)";
  a.source = "De Sensi, Bonato, Saam & Hoefler, \"Swing: Short-cutting Rings for Higher Bandwidth "
             "Allreduce\", NSDI'24 (libswing ALGO_SWING_B)";
  a.constraints = {"other than a power of two: the first 2(p - 2^floor(lg p)) ranks fold in pairs"};
  a.check = [](const Request& req) {
    return detail::size_limit_refusal(swing_bandwidth_counts(req.ranks));
  };
  a.generate = generate_swing_bandwidth;
  a.cost = swing_bandwidth_cost;
  a.cost_formula = "2 lg p a + 2(p-1)/p n b + (p-1)/p n g (exact when p is a power of two that "
                   "divides n)";
  return a;
}

} // namespace collsim::algorithms
