// Swing allgather (algorithms.md AR22: the allgather half of the bandwidth-optimal Swing allreduce;
// AR23: Bine's butterfly allgather uses the same peers): lg p steps that double the data, with
// Swing's peers, the reduce-scatter of reduce_scatter "swing" played backwards.
//
// Source: D. De Sensi, T. Bonato, D. Saam and T. Hoefler, "Swing: Short-cutting Rings for Higher
// Bandwidth Allreduce", NSDI'24 (libswing's allgather phase and its remap_blocks); the Bine paper
// (SC'25) permutes the output the same way for its allgather.
//
// Peers and blocks (allreduce/swing_support.hpp): in step s rank r talks to pi(r, s) = r + rho(s)
// if r is even, r - rho(s) if odd (mod p), rho(s) = 1, -1, 3, -5, 11, ..., for s = lg p-1 down to 0
// (the largest distance first, with the smallest message). It sends every block it holds and
// receives as many. In slot order (swing_block_slots: rank q's block sits in slot pos(q)) the held
// blocks are contiguous, but slot order is not rank order, so the rank gathers in tmp in slot
// order and copies each received slot to its block of `data`. Copies are local: they cost no
// message.
//
// Power of two only: with a fold the ranks above p' would need the whole result sent back (an
// extra n-byte step); use bruck or ring for other rank counts.
//
// Cost: p = 2^k, p divides n: lg p a + (p-1)/p n b, exact on the loggp engine with free copies;
// with uneven blocks a step is paced by the larger half and cost() declines.
//
// Schedule, rank r, tmp = n bytes in slot order (slot j holds block owner(j), j = pos(owner(j))):
//   copy data block r -> tmp slot pos(r);
//   step s = lg p-1..0: send the half of the step-s window that holds pos(r) from tmp; recv the
//     other half into tmp;
//   unpack: every received slot j -> data block owner(j), in the order received.
// Dependencies (p + 2 lg p - 2 per rank): the first send waits for the copy; later sends for the
// previous send and receive (they wrote or waited for every byte sent); receives write bytes never
// touched before; each unpack copy waits for the receive that brought its slot.

#include "allgather/allgather_algorithms.hpp"
#include "allreduce/swing_support.hpp"
#include "generator_support.hpp"

#include <array>
#include <bit>
#include <fmt/format.h>

namespace collsim::algorithms {
namespace {

using core::OpKind;
using detail::OpCounts;

constexpr const char* kName = "swing";

OpCounts swing_counts(std::uint32_t p) {
  if (p < 2) {
    return {};
  }
  const std::uint64_t pp = p;
  const std::uint64_t k = detail::floor_log2(p);
  return {pp * (pp + 2 * k), pp * (pp + 2 * k - 2)};
}

std::string swing_refusal(const Request& req) {
  if (!std::has_single_bit(req.ranks)) {
    return fmt::format("ranks must be a power of two (got {}): Swing's allgather has no fold "
                       "here; use 'bruck' or 'ring' for other rank counts",
                       req.ranks);
  }
  return detail::size_limit_refusal(swing_counts(req.ranks));
}

core::Schedule generate_swing(const Request& req) {
  const std::uint32_t p = req.ranks;
  const std::uint64_t n = req.bytes.value;
  core::Schedule s(make_header(req, p > 1 ? n : 0, kName));
  const OpCounts counts = swing_counts(p);
  s.reserve(counts.ops, counts.deps);
  if (p < 2) {
    s.finish();
    return s;
  }
  const std::uint32_t steps = detail::floor_log2(p);
  const std::vector<std::uint32_t> slot = detail::swing_block_slots(p);
  std::vector<std::uint32_t> owner(p);
  for (core::Rank q = 0; q < p; ++q) {
    owner[slot[q]] = q;
  }
  const std::vector<std::uint64_t> offset = detail::slot_offsets(n, p, owner);
  const auto slots = [&](std::uint32_t begin, std::uint32_t count) {
    return detail::tmp_range(offset[begin], offset[begin + count] - offset[begin]);
  };
  const auto block = [&](core::Rank q) {
    const auto [b, len] = core::block_range(n, p, q);
    return detail::data_range(b, len);
  };

  std::array<std::uint32_t, 32> received{}; // the receive of each step, by step
  std::array<std::uint32_t, 2> dep{};
  for (core::Rank r = 0; r < p; ++r) {
    s.begin_rank(r);
    const std::uint32_t own = s.copy(block(r), slots(slot[r], 1));
    std::uint32_t last_send = 0;
    for (std::uint32_t step = steps; step-- > 0;) {
      const core::Rank peer = detail::swing_peer(r, step, p);
      const detail::SwingWindow w = detail::swing_window(slot[r], step, steps);
      std::uint32_t waits = 2;
      if (step + 1 == steps) {
        dep[0] = own;
        waits = 1;
      } else {
        dep = {received[step + 1], last_send};
      }
      last_send = detail::add_op(s, OpKind::send, peer, slots(w.keep_begin, w.count),
                                 std::span(dep.data(), waits));
      received[step] = detail::add_op(s, OpKind::recv, peer, slots(w.send_begin, w.count), {});
    }
    // Unpack in the order received.
    for (std::uint32_t step = steps; step-- > 0;) {
      const detail::SwingWindow w = detail::swing_window(slot[r], step, steps);
      for (std::uint32_t j = w.send_begin; j < w.send_begin + w.count; ++j) {
        s.copy(slots(j, 1), block(owner[j]), {received[step]});
      }
    }
  }
  s.finish();
  return s;
}

std::optional<CostTerms> swing_cost(const Request& req) {
  const std::uint64_t p = req.ranks;
  const std::uint64_t n = req.bytes.value;
  if (!std::has_single_bit(p) || n % p != 0) {
    return std::nullopt;
  }
  const auto k = static_cast<double>(detail::floor_log2(req.ranks));
  return CostTerms{k, static_cast<double>((p - 1) * (n / p)), 0.0};
}

} // namespace

AlgorithmInfo describe_allgather_swing() {
  AlgorithmInfo a;
  a.name = kName;
  a.collective = core::CollectiveKind::allgather;
  a.summary = "Swing butterfly: lg p doubling steps with peers r +- rho(s), gathered in slot "
              "order and unpacked (power of two)";
  a.source = "De Sensi, Bonato, Saam & Hoefler, \"Swing: Short-cutting Rings for Higher Bandwidth "
             "Allreduce\", NSDI'24 (libswing allgather phase, remap_blocks)";
  a.constraints = {"ranks must be a power of two"};
  a.check = swing_refusal;
  a.generate = generate_swing;
  a.cost = swing_cost;
  a.cost_formula = "lg p a + (p-1)/p n b (exact when p is a power of two that divides n; the "
                   "local permutation copies are free on the loggp engine's textbook platform)";
  return a;
}

} // namespace collsim::algorithms
