// Swing reduce-scatter (algorithms.md AR22: the reduce-scatter half of the bandwidth-optimal Swing
// allreduce; AR23: Bine's butterfly reduce-scatter uses the same peers): lg p steps that halve the
// data, with Swing's peers.
//
// Source: D. De Sensi, T. Bonato, D. Saam and T. Hoefler, "Swing: Short-cutting Rings for Higher
// Bandwidth Allreduce", NSDI'24 (libswing's reduce-scatter phase and its remap_blocks); the Bine
// paper (SC'25) permutes the input the same way for its reduce-scatter.
//
// Peers and blocks (allreduce/swing_support.hpp): in step s rank r talks to pi(r, s) = r + rho(s)
// if r is even, r - rho(s) if odd (mod p), rho(s) = 1, -1, 3, -5, 11, ...; it sends the blocks
// its peer reaches through steps s+1..lg p-1 and keeps the ones it reaches itself. In slot order
// (swing_block_slots: rank q's block sits in slot pos(q)) both sets are contiguous, but slot order
// is not rank order, and a reduce_scatter must leave rank r's block at block r of `data`. So the
// rank first copies its input into tmp in slot order (p local copies), runs the butterfly in tmp,
// and copies its reduced slot pos(r) back to block r. Copies are local: they cost no message.
//
// Power of two only: the fold of the allreduce (swing_bandwidth) would leave the folded ranks'
// blocks with their survivors and need an extra scatter step; use recursive_halving, which folds,
// for other rank counts.
//
// Cost: p = 2^k, p divides n: lg p a + (p-1)/p n b + (p-1)/p n g, exact on the loggp engine with
// free copies; with uneven blocks a step is paced by the larger half and cost() declines.
//
// Schedule, rank r, tmp = n bytes in slot order (slot j holds block owner(j), j = pos(owner(j))):
//   copies: data block owner(j) -> tmp slot j, first the slots sent in step 0, then the kept ones,
//     each copy after the previous one (a memcpy loop);
//   step s = 0..lg p-1: send the peer's half of the window from tmp; recv_reduce the kept half
//     into tmp;
//   final copy: tmp slot pos(r) -> data block r.
// Dependencies (p + 2 lg p per rank): each copy waits for the one before; the step-0 send for the
// copy of its last slot, the step-0 recv_reduce for the last copy; later sends and recv_reduces
// for the previous recv_reduce (it wrote the bytes they read or overwrite); the final copy for the
// last recv_reduce.

#include "allreduce/swing_support.hpp"
#include "generator_support.hpp"
#include "reduce_scatter/reduce_scatter_algorithms.hpp"

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
  return {pp * (pp + 2 * k + 1), pp * (pp + 2 * k)};
}

std::string swing_refusal(const Request& req) {
  if (!std::has_single_bit(req.ranks)) {
    return fmt::format("ranks must be a power of two (got {}): Swing's reduce-scatter has no fold "
                       "here; use 'recursive_halving' for other rank counts",
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

  std::array<std::uint32_t, 1> dep{};
  for (core::Rank r = 0; r < p; ++r) {
    s.begin_rank(r);
    const detail::SwingWindow first = detail::swing_window(slot[r], 0, steps);
    // Permute the input into slot order: the half sent in step 0 first.
    std::uint32_t last_copy = 0;
    std::uint32_t send_ready = 0;
    for (const std::uint32_t begin : {first.send_begin, first.keep_begin}) {
      for (std::uint32_t j = begin; j < begin + first.count; ++j) {
        const bool chained = j != first.send_begin;
        dep[0] = last_copy;
        last_copy = s.add(OpKind::copy, 0, slots(j, 1), block(owner[j]),
                          std::span(dep.data(), chained ? 1 : 0));
      }
      if (begin == first.send_begin) {
        send_ready = last_copy;
      }
    }
    std::uint32_t last_reduce = 0;
    for (std::uint32_t step = 0; step < steps; ++step) {
      const core::Rank peer = detail::swing_peer(r, step, p);
      const detail::SwingWindow w = detail::swing_window(slot[r], step, steps);
      dep[0] = step == 0 ? send_ready : last_reduce;
      detail::add_op(s, OpKind::send, peer, slots(w.send_begin, w.count), dep);
      dep[0] = step == 0 ? last_copy : last_reduce;
      last_reduce = detail::add_op(s, OpKind::recv_reduce, peer, slots(w.keep_begin, w.count), dep);
    }
    s.copy(slots(slot[r], 1), block(r), {last_reduce});
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
  const auto part = static_cast<double>((p - 1) * (n / p)); // (p-1)/p n, exactly
  return CostTerms{k, part, part};
}

} // namespace

AlgorithmInfo describe_reduce_scatter_swing() {
  AlgorithmInfo a;
  a.name = kName;
  a.collective = core::CollectiveKind::reduce_scatter;
  a.summary = "Swing butterfly: lg p halving steps with peers r +- rho(s), input permuted into "
              "slot order so each step is one message (power of two)";
  a.source = "De Sensi, Bonato, Saam & Hoefler, \"Swing: Short-cutting Rings for Higher Bandwidth "
             "Allreduce\", NSDI'24 (libswing reduce-scatter phase, remap_blocks)";
  a.constraints = {"ranks must be a power of two"};
  a.check = swing_refusal;
  a.generate = generate_swing;
  a.cost = swing_cost;
  a.cost_formula = "lg p a + (p-1)/p n b + (p-1)/p n g (exact when p is a power of two that "
                   "divides n; the local permutation copies are free on the loggp engine's "
                   "textbook platform)";
  return a;
}

} // namespace collsim::algorithms
