#pragma once
// Finding where ranks should run (issue 20; docs/placement.md): a traffic pattern (which rank
// sends how many bytes to which), the slots of a scenario's nodes, a search for the mapping of
// ranks to slots that makes the exchange fastest, and the mapping as an Open MPI rankfile.
//
// The search minimises a surrogate, the exchange's time if every message ran alone on its route
// (sum over rank pairs of latency + bytes / narrowest link): cheap to update when two ranks swap
// slots. The result is then confirmed by simulating the exchange on the loggp engine, where
// messages share links.

#include "collsim/core/scenario.hpp"
#include "collsim/core/topology.hpp"
#include "collsim/core/units.hpp"

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace collsim::analysis {

/// Bytes each rank sends to each other rank in one exchange (a process graph).
struct TrafficPattern {
  std::string name;
  std::uint32_t ranks = 0;
  std::vector<std::uint64_t> bytes; ///< ranks x ranks, row = sender
  [[nodiscard]] std::uint64_t at(std::uint32_t from, std::uint32_t to) const {
    return bytes[std::size_t{from} * ranks + to];
  }
};

/// The halo exchange of a block-decomposed grid of dims[0] x dims[1] x dims[2] ranks (rank =
/// x + X (y + Y z); a 2D grid has dims[2] = 1): each rank sends `bytes` to the neighbour across
/// each face, wrapping around when `periodic` (HOOMD-blue's and most stencil codes' layout).
TrafficPattern halo_pattern(std::array<std::uint32_t, 3> dims, std::uint64_t bytes, bool periodic);

/// A pattern from its command-line form: "halo3d:4x4x4:64KiB", "halo2d:8x8:1MiB", with
/// ":periodic" appended for a torus; UsageError naming what is wrong.
TrafficPattern parse_pattern(const std::string& spec);

/// Reads a rank-to-rank byte matrix: one CSV row of P byte counts per sending rank, P rows; '#'
/// lines are comments. Throws core::LogParseError at the offending cell.
TrafficPattern read_pattern_csv(const std::string& path);

/// The slots ranks can take and what a message between two of them costs.
struct PlacementProblem {
  core::Topology topology;              ///< built for the pattern's ranks, block placement
  std::vector<core::DeviceId> slots;    ///< slot i = the device block placement gives rank i
  std::vector<std::uint32_t> node;      ///< per slot: its node
  std::vector<std::uint32_t> local;     ///< per slot: its index within the node (rankfile slot)
  std::vector<double> seconds_per_byte; ///< slots x slots: 1 / narrowest link of the route
  std::vector<double> latency;          ///< slots x slots: the route's latency, s
  TrafficPattern pattern;
  /// Per rank, the ranks it exchanges bytes with (either direction).
  std::vector<std::vector<std::uint32_t>> partners;
};

/// The problem of placing `pattern` on `scenario` (a `system` topology; the scenario's placement
/// is replaced by block order, Open MPI's default --map-by core/slot). UsageError when the
/// topology cannot host the pattern's ranks or is a uniform one (it has no places to choose).
PlacementProblem make_placement_problem(const core::Scenario& scenario, TrafficPattern pattern);

/// A mapping: slot_of[rank] indexes PlacementProblem::slots. Block placement is the identity.
using Mapping = std::vector<std::uint32_t>;

/// The surrogate: sum over ordered pairs with bytes of latency + bytes x seconds per byte, s.
double surrogate_seconds(const PlacementProblem& p, const Mapping& m);

/// Greedy: ranks in order of their traffic, each to the free slot that adds the least surrogate
/// with the ranks already placed.
Mapping place_greedy(const PlacementProblem& p);
/// Simulated annealing of pairwise swaps from `start` (deterministic for a seed).
Mapping place_anneal(const PlacementProblem& p, Mapping start, std::uint64_t seed,
                     std::uint64_t moves);
/// The best mapping by trying every permutation (at most 10 ranks): for checking the heuristics.
Mapping place_exhaustive(const PlacementProblem& p);

/// Bytes per link kind ("memory", "upi", "ib", ...): each message's bytes counted once for every
/// kind of link its route crosses; "local" for messages between ranks of one slot's device.
std::map<std::string, std::uint64_t> bytes_by_link_kind(const PlacementProblem& p,
                                                        const Mapping& m);

/// The exchange simulated on the loggp engine with the ranks mapped by `m`: every rank sends
/// its bytes to each partner and receives theirs, all at once.
core::Seconds simulate_exchange(const PlacementProblem& p, const Mapping& m);

/// The mapping as an Open MPI rankfile (`rank N=+nK slot=S`, relative node names, as mpirun
/// --rankfile and collsim's scenario loader read them).
std::string ompi_rankfile(const PlacementProblem& p, const Mapping& m);

} // namespace collsim::analysis
