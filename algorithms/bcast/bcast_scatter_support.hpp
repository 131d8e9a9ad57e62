#pragma once
// Internal: the binomial scatter that starts MPICH's two scatter-allgather broadcasts
// (MPII_Scatter_for_bcast in src/mpi/coll/bcast/bcast_utils.c), written once for both, and a
// counting emitter so every generator (reduce's Rabenseifner too) reserves exactly what it builds.
//
// The vector is cut into p blocks of ss = ceil(n/p) bytes (the last ones shorter or empty);
// relative rank vr = (r - root) mod p owns block vr. A rank other than the root receives blocks
// [vr, vr + lowbit(vr)) from vr - lowbit(vr); then, for m = lowbit(vr)/2 down to 1 (the root: from
// bit_ceil(p)/2), it sends blocks [vr + m, vr + 2m) to vr + m. Empty ranges are skipped on both
// sides, as MPICH does.

#include "generator_support.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <span>
#include <vector>

namespace collsim::algorithms::detail {

/// Counts operations and dependencies instead of building them (same interface as ScheduleEmitter).
struct CountingEmitter {
  OpCounts counts;
  std::uint32_t next = 0;
  void begin_rank(core::Rank) { next = 0; }
  std::uint32_t send(core::Rank, core::Range, std::span<const std::uint32_t> deps) {
    return add(deps);
  }
  std::uint32_t recv(core::Rank, core::Range, std::span<const std::uint32_t> deps) {
    return add(deps);
  }
  std::uint32_t reduce(core::Range, core::Range, std::span<const std::uint32_t> deps) {
    return add(deps);
  }
  std::uint32_t add(std::span<const std::uint32_t> deps) {
    ++counts.ops;
    counts.deps += deps.size();
    return next++;
  }
};

/// Appends to a schedule.
struct ScheduleEmitter {
  core::Schedule& s;
  void begin_rank(core::Rank r) { s.begin_rank(r); }
  std::uint32_t send(core::Rank peer, core::Range range, std::span<const std::uint32_t> deps) {
    return add_op(s, core::OpKind::send, peer, range, deps);
  }
  std::uint32_t recv(core::Rank peer, core::Range range, std::span<const std::uint32_t> deps) {
    return add_op(s, core::OpKind::recv, peer, range, deps);
  }
  std::uint32_t reduce(core::Range from, core::Range into, std::span<const std::uint32_t> deps) {
    return reduce_op(s, from, into, deps);
  }
};

/// Blocks of ss = ceil(n/p) bytes on relative ranks.
struct BlockLayout {
  std::uint32_t p = 1;
  core::Rank root = 0;
  std::uint64_t n = 0;
  std::uint64_t ss = 0;
  BlockLayout(std::uint32_t ranks, core::Rank r0, std::uint64_t bytes)
      : p(ranks), root(r0), n(bytes), ss((bytes + ranks - 1) / ranks) {}
  /// Bytes of blocks [a, b), clipped to the vector.
  [[nodiscard]] core::Range blocks(std::uint64_t a, std::uint64_t b) const {
    const std::uint64_t begin = std::min(n, a * ss);
    const std::uint64_t end = std::min(n, b * ss);
    return data_range(begin, end - begin);
  }
  [[nodiscard]] core::Rank real(std::uint64_t vr) const {
    return static_cast<core::Rank>((vr + root) % p);
  }
  /// The size of vr's scatter subtree: lowbit(vr), or bit_ceil(p) for the root.
  [[nodiscard]] std::uint64_t span(std::uint32_t vr) const {
    return vr == 0 ? std::bit_ceil(p) : std::uint64_t{1} << std::countr_zero(vr);
  }
};

/// What the scatter left on one rank: the receive that brought its subtree (if any) and, for each
/// child vr + m, the send that read blocks [vr + m, vr + 2m) (indexed by countr_zero(m)).
struct ScatterOps {
  bool received = false;
  std::uint32_t recv = 0;
  std::array<bool, 32> sent{};
  std::array<std::uint32_t, 32> send{};
};

/// Emits rank vr's part of the binomial scatter.
template <class Emitter>
ScatterOps emit_binomial_scatter(Emitter& e, const BlockLayout& L, std::uint32_t vr) {
  ScatterOps out;
  const std::uint64_t top = L.span(vr);
  std::array<std::uint32_t, 1> dep{};
  if (vr != 0) {
    const core::Range mine = L.blocks(vr, vr + top);
    if (mine.length > 0) {
      out.recv = e.recv(L.real(vr - top), mine, {});
      out.received = true;
    }
  }
  dep[0] = out.recv;
  for (std::uint64_t m = top >> 1; m > 0; m >>= 1) {
    if (vr + m >= L.p) {
      continue;
    }
    const core::Range part = L.blocks(vr + m, vr + 2 * m);
    if (part.length == 0) {
      continue;
    }
    const auto bit = static_cast<std::size_t>(std::countr_zero(m));
    out.send[bit] = e.send(L.real(vr + m), part, std::span(dep.data(), out.received ? 1 : 0));
    out.sent[bit] = true;
  }
  return out;
}

} // namespace collsim::algorithms::detail
