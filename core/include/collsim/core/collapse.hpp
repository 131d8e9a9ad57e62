#pragma once
// Collapsed schedules (issue 23): one program per class of ranks that a symmetry of the algorithm
// and of the machine makes equivalent, in place of one per rank.
//
// A ring allreduce on p ranks is 4p(p-1) operations, yet on a machine where every rank sees the
// same links every rank runs the same program shifted by its rank, and the loggp engine, which
// gives each rank its own ports, times every rank alike. Simulating one representative per class
// gives the same times as the whole schedule at a p-th of the cost: a 131072-rank ring is 524,284
// operations instead of 68.7 billion. (LogGOPSim's and SST's large runs use the same observation;
// here it is exact, not a sample: analysis/src/collapse.cpp admits a collapse only where the
// routes, endpoints and ports are provably invariant, and tests compare it with the full schedule
// wherever both fit.)
//
// The group: rank x's program is rank (x mod k)'s program with every peer y replaced by
// image(x - x mod k, y), where image is
//   rotation:   image(s, y) = (y + s) mod p     (rings: each rank's program is its left
//                                                neighbour's, one place on);
//   xor_blocks: image(s, y) = y XOR s           (butterflies on 2^m ranks: recursive doubling;
//                                                k a power of two, so s has no bit below k).
// A collapsed schedule holds the programs of ranks 0..k-1 (its header's `ranks` is k, `collapse`
// says p and the group). Each message keeps two peers: its `peer`, the representative of the
// partner's class (y mod k), which matching uses (FIFO per representative pair and tag, as the
// full schedule's connections map onto them), and its `route_peer`, the partner y itself, whose
// route, ports and node the engine prices.

#include <cstdint>

namespace collsim::core {

enum class SymmetryKind : std::uint8_t { none, rotation, xor_blocks };

/// What a collapsed schedule stands for (ScheduleHeader::collapse); none: a full schedule.
struct Collapse {
  SymmetryKind kind = SymmetryKind::none;
  std::uint32_t ranks = 0; ///< p: the ranks of the full schedule
  [[nodiscard]] bool active() const { return kind != SymmetryKind::none; }
  bool operator==(const Collapse&) const = default;
};

/// The rank that plays y's part in the program of the rank `shift` places on from rank 0 (see
/// above); ranks is p.
constexpr std::uint32_t symmetry_image(SymmetryKind kind, std::uint32_t ranks, std::uint32_t shift,
                                       std::uint32_t y) {
  switch (kind) {
  case SymmetryKind::rotation:
    return static_cast<std::uint32_t>((std::uint64_t{y} + shift) % ranks);
  case SymmetryKind::xor_blocks: return y ^ shift;
  case SymmetryKind::none: break;
  }
  return y;
}

} // namespace collsim::core
