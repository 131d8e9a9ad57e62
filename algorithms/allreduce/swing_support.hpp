#pragma once
// Internal: the Swing butterfly (algorithms.md AR22, AR23) shared by the Swing allreduces, the
// Swing reduce_scatter and allgather, and the Bine broadcast.
//
// Source: D. De Sensi, T. Bonato, D. Saam and T. Hoefler, "Swing: Short-cutting Rings for Higher
// Bandwidth Allreduce", NSDI'24 (the peer formula, confirmed in libswing's rhos[] = {1, -1, 3, -5,
// 11, -21, 43, ...}); the Bine paper (SC'25) reuses the same negabinary butterfly.
//
// Peers: in step s rank r talks to pi(r, s) = r + rho(s) (mod p) when r is even and r - rho(s)
// (mod p) when r is odd, rho(s) = sum_{i=0..s} (-2)^i = (1 - (-2)^(s+1)) / 3. rho(s) is odd, so for
// even p the peer has the other parity and pi(pi(r, s), s) = r.
//
// Block layout (libswing's remap_blocks, computed here by merging components rather than by a
// DFS): for p = 2^L, the ranks connected by steps s..L-1 form a group of 2^(L-s) ranks, and step s
// joins two groups of step s+1. Numbering the groups so that each one is a contiguous range of
// "slots" (the group holding the smaller rank first) gives every rank a slot pos(r) such that in
// step s of a reduce-scatter rank r keeps the slots of its step-(s+1) group and sends the slots
// of its peer's: both are contiguous, so each step is one message each way. A rank's reduced block
// ends in slot pos(r), which is not r: an allreduce does not mind, a reduce_scatter or allgather
// permutes into and out of slot order with local copies.

#include "collsim/core/errors.hpp"
#include "collsim/core/schedule.hpp"
#include "generator_support.hpp"

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

namespace collsim::algorithms::detail {

/// rho(s) = (1 - (-2)^(s+1)) / 3: 1, -1, 3, -5, 11, -21, ... (s < 62).
constexpr std::int64_t swing_rho(std::uint32_t s) {
  std::int64_t power = 1; // (-2)^(s+1)
  for (std::uint32_t i = 0; i <= s; ++i) {
    power *= -2;
  }
  return (1 - power) / 3;
}

/// The Swing peer pi(r, s) of rank r in step s over p ranks.
constexpr core::Rank swing_peer(core::Rank r, std::uint32_t s, std::uint32_t p) {
  const auto pp = static_cast<std::int64_t>(p);
  const std::int64_t rho = swing_rho(s) % pp;
  const std::int64_t q =
      r % 2 == 0 ? static_cast<std::int64_t>(r) + rho : static_cast<std::int64_t>(r) - rho;
  return static_cast<core::Rank>(((q % pp) + pp) % pp);
}

/// For p = 2^L: the slot of every rank (see the head comment). Throws InternalError if the peers do
/// not form a butterfly, which would be a bug in swing_peer.
inline std::vector<std::uint32_t> swing_block_slots(std::uint32_t p) {
  const std::uint32_t levels = floor_log2(p);
  std::vector<std::uint32_t> pos(p, 0);
  std::vector<std::uint32_t> group(p); // the smallest rank of the rank's group
  std::iota(group.begin(), group.end(), 0U);
  std::vector<std::uint32_t> merged(p);
  std::vector<std::uint32_t> joins(p); // per group: the group its members' peers are in
  for (std::uint32_t s = levels; s-- > 0;) {
    const std::uint32_t bit = 1U << (levels - 1 - s);
    std::fill(joins.begin(), joins.end(), p);
    for (core::Rank r = 0; r < p; ++r) {
      const core::Rank q = swing_peer(r, s, p);
      const std::uint32_t mine = group[r];
      const std::uint32_t theirs = group[q];
      if (mine == theirs || (joins[mine] != p && joins[mine] != theirs)) {
        throw core::InternalError("swing: the peers of step " + std::to_string(s) + " over " +
                                  std::to_string(p) + " ranks do not form a butterfly");
      }
      joins[mine] = theirs;
      merged[r] = std::min(mine, theirs);
      if (mine > theirs) {
        pos[r] |= bit;
      }
    }
    group.swap(merged);
  }
  return pos;
}

/// The slots [begin, begin + count) of rank r's group before step s (window), after it (kept) and
/// the peer's group of step s+1 (sent), for p = 2^levels.
struct SwingWindow {
  std::uint32_t keep_begin = 0;
  std::uint32_t send_begin = 0;
  std::uint32_t count = 0; ///< slots in each of the two halves
};
constexpr SwingWindow swing_window(std::uint32_t slot, std::uint32_t s, std::uint32_t levels) {
  const std::uint32_t half = 1U << (levels - 1 - s);
  const std::uint32_t keep = slot & ~(half - 1);
  return {keep, keep ^ half, half};
}

/// Byte offsets of p slots over n bytes: slot j is [offset[j], offset[j + 1]), j = 0..p-1, with
/// slot j sized as the block of `owner[j]` (block_range(n, p, owner[j])); owner empty: block j.
inline std::vector<std::uint64_t> slot_offsets(std::uint64_t n, std::uint32_t p,
                                               const std::vector<std::uint32_t>& owner = {}) {
  std::vector<std::uint64_t> off(static_cast<std::size_t>(p) + 1, 0);
  for (std::uint32_t j = 0; j < p; ++j) {
    const std::uint32_t b = owner.empty() ? j : owner[j];
    off[j + 1] = off[j] + core::block_range(n, p, b).second;
  }
  return off;
}

} // namespace collsim::algorithms::detail
