#pragma once
// Internal: the generator shared by SMPI's allgather 2dmesh and 3dmesh (STAR-MPI, Faraj & Yuan,
// ICS 2005): a sequence of direct ("simple") allgathers, each among the ranks of one grid line,
// every rank passing on the blocks gathered by the earlier phases.
//
// One phase, rank r, its line's other members q in SMPI's order: post a receive from every q of
// q's contribution, then send r's contribution to every q (SMPI: irecvs, blocking sends, waitall).
// A member's contribution is the blocks of the `width` consecutive ranks aligned at its rank
// (width 1: its own block; then its row; then its plane): contiguous in `data`.
// Dependencies: the receives and the sends of a phase wait for the previous phase's receives (the
// waitall; the sends also read what those brought). Received blocks are never read or written by
// anything else, so nothing more is needed.
//
// Cost on `uniform` (o = g = 0, p divides n, b = n/p), from the LogGP rules: in a phase over G
// ranks sending m bytes each to every member in increasing rank order, all starting together, the
// member at position c finishes at a + (G-1) m b (c = 0) or a + (G + c - 2) m b (c >= 1): every
// sender reaches a low position first, so the last one's receive port queues up (2G-3) m b in the
// worst case. A phase whose partners are taken in rotated order (SMPI's third 3dmesh phase)
// finishes at a + (G-1) m b for everyone. A line's members always finish the earlier phases
// together, so the time is the sum of the per-phase worst cases.

#include "generator_support.hpp"
#include "op_sink.hpp"

#include <vector>

namespace collsim::algorithms::detail {

/// One phase of a mesh allgather as rank r sees it.
struct MeshPhase {
  std::vector<core::Rank> peers; ///< the line's other members, in SMPI's send order
  std::uint32_t width = 1;       ///< ranks per contribution
};

/// Emits rank r's program for the given phases into `sink`.
inline void mesh_allgather_program(OpSink& sink, core::Rank r, std::uint32_t p, std::uint64_t n,
                                   const std::vector<MeshPhase>& phases) {
  const auto contribution = [&](core::Rank q, std::uint32_t width) {
    const std::uint32_t first = q / width * width;
    const std::uint64_t begin = core::block_range(n, p, first).first;
    const std::uint64_t end = first + width >= p ? n : core::block_range(n, p, first + width).first;
    return data_range(begin, end - begin);
  };
  std::vector<std::uint32_t> waited;
  std::vector<std::uint32_t> recvs;
  for (const MeshPhase& phase : phases) {
    if (phase.peers.empty()) {
      continue;
    }
    recvs.clear();
    for (const core::Rank q : phase.peers) {
      recvs.push_back(sink.recv(q, contribution(q, phase.width), waited));
    }
    for (const core::Rank q : phase.peers) {
      sink.send(q, contribution(r, phase.width), waited);
    }
    waited.swap(recvs);
  }
}

/// The worst finishing time, in units of (a, m b), of a phase over `members` ranks sending in
/// increasing order: a + (2G-3) m b for G >= 2.
constexpr double mesh_ordered_phase_beta_units(std::uint32_t members) {
  return members >= 2 ? 2.0 * members - 3.0 : 0.0;
}

} // namespace collsim::algorithms::detail
