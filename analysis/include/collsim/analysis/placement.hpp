#pragma once
// Finding where ranks should run (issue 20; docs/placement.md): a traffic pattern (which rank
// sends how many bytes to which), the slots of a scenario's nodes, a search for the mapping of
// ranks to slots that makes the exchange fastest, and the mapping as an Open MPI rankfile.
//
// The search minimises a surrogate, the exchange's time if every message ran alone on its route
// (sum over rank pairs of latency + bytes / narrowest link): cheap to update when two ranks swap
// slots. The result is then confirmed by simulating the exchange on the loggp engine, where
// messages share links.

#include "collsim/algorithms/registry.hpp"
#include "collsim/analysis/simulate.hpp"
#include "collsim/core/scenario.hpp"
#include "collsim/core/schedule.hpp"
#include "collsim/core/topology.hpp"
#include "collsim/core/units.hpp"
#include "collsim/core/workload.hpp"

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace collsim::analysis {

/// One collective call: what `collsim sim` takes.
struct CollectiveCall {
  core::CollectiveKind collective = core::CollectiveKind::allreduce;
  std::string algorithm; ///< the registry's name (a library's choice already resolved)
  core::Bytes bytes{0};
  algorithms::RawParams params;
};

/// Bytes each rank sends to each other rank in one exchange (a process graph).
struct TrafficPattern {
  std::string name;
  std::uint32_t ranks = 0;
  std::vector<std::uint64_t> bytes; ///< ranks x ranks, row = sender
  /// The collective call the pattern was taken from, if any: a placement is then confirmed by
  /// simulating the call itself (generated for the mapped ranks, through its library stack),
  /// not the all-at-once exchange.
  std::optional<CollectiveCall> call;
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

/// The bytes every rank-to-rank send of a schedule carries (sends to in-network agents left out).
TrafficPattern schedule_pattern(const core::Schedule& s, std::string name);

/// One call of `collective` by `algorithm` (its registry name, or "auto": the library's choice,
/// analysis/auto_choice.hpp) on `ranks` ranks of `scenario`, as a pattern. UsageError, as the
/// registry gives it, for an algorithm that cannot run the call.
TrafficPattern collective_pattern(const core::Scenario& scenario, core::CollectiveKind collective,
                                  const std::string& algorithm, core::Bytes bytes,
                                  std::uint32_t ranks, const algorithms::RawParams& params,
                                  const algorithms::Registry& registry);

/// One step of a workload (docs/workload-format.md) on `ranks` ranks of `scenario` in block
/// order: every phase's call as the library runs it (auto), times its calls, on every
/// communicator of its group that runs at once (world: the job; node: each node's ranks;
/// across_nodes: each local rank across the nodes; pair: each node's first rank with the next
/// node's), summed. UsageError naming the phase (file:line) when a call cannot be generated.
TrafficPattern workload_pattern(const core::Scenario& scenario, const core::Workload& workload,
                                std::uint32_t ranks, const algorithms::Registry& registry);

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
  /// slots x slots routes, flattened: the directed links from slot a to slot b are
  /// route_links[route_offset[a * slots + b] .. route_offset[a * slots + b + 1]).
  std::vector<std::uint32_t> route_offset;
  std::vector<core::LinkId> route_links;
  [[nodiscard]] std::span<const core::LinkId> route(std::uint32_t a, std::uint32_t b) const {
    const std::size_t k = std::size_t{a} * slots.size() + b;
    return {route_links.data() + route_offset[k], route_links.data() + route_offset[k + 1]};
  }
};

/// The most ranks make_placement_problem takes.
inline constexpr std::uint32_t kMaxPlacementRanks = 4096;

/// The problem of placing `pattern` on `scenario` (a `system` topology; the scenario's placement
/// is replaced by block order, Open MPI's default --map-by core/slot). UsageError when the
/// topology cannot host the pattern's ranks or is a uniform one (it has no places to choose).
PlacementProblem make_placement_problem(const core::Scenario& scenario, TrafficPattern pattern);

/// A mapping: slot_of[rank] indexes PlacementProblem::slots. Block placement is the identity.
using Mapping = std::vector<std::uint32_t>;

/// What the search minimises. `time` (default): the congestion of the exchange, the sum over
/// links of the squared busy time (bytes the mapping puts on the link / its bandwidth), so that
/// messages sharing a link count as they do on the wire. `hop_bytes`: every message alone on its
/// route (surrogate_seconds), the hop-bytes measure weighted by what each route costs.
enum class Objective { time, hop_bytes };
/// "time" or "hop-bytes"; UnknownNameError otherwise.
Objective parse_objective(const std::string& name);

/// The congestion objective: sum over directed links of (bytes on it / bandwidth)^2, s^2.
double congestion_seconds2(const PlacementProblem& p, const Mapping& m);

/// A link and what the exchange puts on it.
struct HotLink {
  std::string from;
  std::string to;
  std::string kind; ///< "memory", "upi", "ib", ...
  std::uint64_t bytes = 0;
  core::Seconds busy{0.0}; ///< bytes / bandwidth: the least time the link needs
};
/// The `count` links with the longest busy time under `m`, busiest first.
std::vector<HotLink> hottest_links(const PlacementProblem& p, const Mapping& m, std::size_t count);

/// The surrogate: sum over ordered pairs with bytes of latency + bytes x seconds per byte, s.
double surrogate_seconds(const PlacementProblem& p, const Mapping& m);

/// Greedy: ranks in order of their traffic, each to the free slot that adds the least surrogate
/// with the ranks already placed.
Mapping place_greedy(const PlacementProblem& p);
/// Simulated annealing of pairwise swaps from `start` minimising `objective` (deterministic for
/// a seed).
Mapping place_anneal(const PlacementProblem& p, Mapping start, std::uint64_t seed,
                     std::uint64_t moves, Objective objective = Objective::time);

// ---- Exact and library searches (placement_exact.cpp, placement_scotch.cpp) ----------------
// All three minimise the surrogate (surrogate_seconds), whatever the Objective.

/// Slots grouped into classes of interchangeable ones: swapping two slots of a class changes no
/// slot-to-slot cost (the cores of one NUMA domain), so only how many ranks a class takes matters.
struct SlotClasses {
  std::vector<std::vector<std::uint32_t>> members; ///< per class, its slots in increasing order
  std::vector<std::uint32_t> class_of;             ///< per slot, its class
};
/// The classes of p's slots, found by comparing latency and seconds per byte exactly.
SlotClasses slot_classes(const PlacementProblem& p);

/// The most assignments of ranks to slot classes place_exhaustive enumerates.
inline constexpr std::uint64_t kExhaustiveMaxAssignments = 50'000'000;
/// The most ranks, and variables, place_mip's model takes; the most seconds CBC runs.
inline constexpr std::uint32_t kMipMaxRanks = 24;
inline constexpr std::size_t kMipMaxVariables = 20'000;
inline constexpr double kMipSeconds = 120.0;
/// The most ranks place_scotch maps (its target is a complete graph of the slots).
inline constexpr std::uint32_t kScotchMaxRanks = 1024;

/// A best mapping by the surrogate, by enumerating every assignment of ranks to slot classes
/// (n! / prod of class sizes!, depth first with the partial cost as a bound): for checking the
/// other searches. UsageError beyond kExhaustiveMaxAssignments assignments.
Mapping place_exhaustive(const PlacementProblem& p);
/// A best mapping by the surrogate, from a mixed-integer model of the assignment of ranks to slot
/// classes solved by COIN-OR CBC. UsageError beyond kMipMaxRanks ranks or kMipMaxVariables
/// variables, or when CBC proves no optimum within kMipSeconds.
Mapping place_mip(const PlacementProblem& p);
/// Scotch's static mapping of the pattern's process graph onto the slots (deterministic for a
/// seed); ranks Scotch puts on a taken slot move to the free slot where they cost least.
/// UsageError beyond kScotchMaxRanks ranks.
Mapping place_scotch(const PlacementProblem& p, std::uint64_t seed = 1);

/// The class of a message's route between two slots, the levels of a machine a placement moves
/// bytes between: "local" (one device), "numa" (shared memory in a NUMA domain), "inter-numa"
/// (NUMA domains of one socket), "inter-socket", "nvlink", "pcie" (GPUs of one node) or
/// "network" (through the NICs).
std::string_view link_class(const PlacementProblem& p, std::uint32_t from_slot,
                            std::uint32_t to_slot);
/// Bytes per link class: each message's bytes counted once, in the class of its route.
std::map<std::string, std::uint64_t> bytes_by_link_class(const PlacementProblem& p,
                                                         const Mapping& m);

/// The pattern's schedule when it has one, else the exchange, simulated on `engine` (a schedule
/// engine of the registry: loggp, simgrid) with the ranks mapped by `m`: every rank sends its bytes
/// to each partner and receives theirs, all at once.
core::Seconds simulate_exchange(const PlacementProblem& p, const Mapping& m,
                                const EngineChoice& engine);

// ---- Launcher files (placement_launchers.cpp): the mapping as Open MPI, MPICH/Hydra and Slurm
// read it, each file headed by comments that say how to launch with it.

/// Where a mapping runs rank `rank`, in the terms launchers use.
struct RankPlace {
  std::uint32_t rank = 0;
  std::uint32_t node = 0;           ///< the scenario's node index
  bool gpu = false;                 ///< a GPU slot (GPU `device`), else a CPU core
  std::uint32_t socket = 0;         ///< CPU cores: the socket
  std::uint32_t core_in_socket = 0; ///< CPU cores: the index within the socket
  std::uint32_t device = 0;         ///< the core's index in its node, socket by socket; the GPU's
  bool operator==(const RankPlace&) const = default;
};
/// Per rank, where `m` runs it.
std::vector<RankPlace> rank_places(const PlacementProblem& p, const Mapping& m);

/// The launchers a mapping is written for: "ompi-rankfile", "mpich-hostfile", "slurm".
enum class LauncherFormat { ompi_rankfile, mpich_hostfile, slurm };
std::vector<std::string> launcher_format_names();
/// A name of launcher_format_names(); UnknownNameError otherwise.
LauncherFormat parse_launcher_format(const std::string& name);

/// What a launcher file names besides the mapping.
struct LaunchNames {
  /// hosts[k] is node k (UsageError when fewer than the nodes, repeated or not a host name);
  /// empty: `+nK` (the allocation's K-th node) for Open MPI, placeholders `nodeK` otherwise.
  std::vector<std::string> hosts;
  std::string file; ///< the file's path, for the launch command in its header ("FILE": unknown)
};

/// Open MPI rankfile, `rank N=HOST slot=SOCKET:CORE` (a GPU index on GPU nodes) in rank order:
/// what mpirun --rankfile and collsim's scenario loader (placement.rankfile) read.
std::string ompi_rankfile(const PlacementProblem& p, const Mapping& m,
                          const LaunchNames& names = {});
/// MPICH/Hydra machinefile (mpiexec -f): `HOST:COUNT binding=user:CPU,...` per run of
/// consecutive ranks on one node.
std::string mpich_hostfile(const PlacementProblem& p, const Mapping& m,
                           const LaunchNames& names = {});
/// Slurm hostfile for SLURM_HOSTFILE and srun --distribution=arbitrary (line i: rank i's host),
/// with the --cpu-bind=map_cpu list in its header when one list fits every node.
std::string slurm_hostfile(const PlacementProblem& p, const Mapping& m,
                           const LaunchNames& names = {});
/// The file of `format`.
std::string launcher_file(const PlacementProblem& p, const Mapping& m, LauncherFormat format,
                          const LaunchNames& names = {});

// ---- Methods by name and one placement run (placement_search.cpp) ----

/// How a search runs.
struct SearchOptions {
  std::string method = "anneal";
  Objective objective = Objective::time; ///< annealing's objective (the exact methods: hop-bytes)
  std::uint64_t seed = 1;
  std::uint64_t moves = 0; ///< annealing moves; 0: 2000 x ranks
};

/// One search method of the registry.
struct PlacementMethod {
  std::string name;
  std::string summary;
  std::function<Mapping(const PlacementProblem&, const SearchOptions&)> run;
};
/// greedy, anneal, scotch, mip, exhaustive.
const std::vector<PlacementMethod>& placement_methods();
std::vector<std::string> placement_method_names();
/// The method called `name`; UnknownNameError (the valid names) otherwise.
const PlacementMethod& find_placement_method(std::string_view name);

/// A mapping with what it does: its simulated time, hop-bytes objective, bytes per link class
/// and hottest links.
struct PlacementOutcome {
  std::string label;
  Mapping mapping;
  double hop_bytes = 0.0; ///< surrogate_seconds, s
  core::Seconds time{0.0};
  std::map<std::string, std::uint64_t> bytes;
  std::vector<HotLink> hottest; ///< busiest first; [0] is the busiest link
};
PlacementOutcome evaluate_placement(const PlacementProblem& p, const EngineChoice& engine,
                                    std::string label, Mapping m);

/// Block placement and the search's mapping, both simulated.
struct PlacementResult {
  PlacementOutcome block;
  PlacementOutcome found;
  /// The search's mapping when the simulation confirms it is faster than block placement, else
  /// block placement: the objectives are estimates (congestion leaves out latency and the order
  /// of messages, hop-bytes also the sharing of links), so a mapping they prefer can run slower.
  [[nodiscard]] const PlacementOutcome& chosen() const {
    return found.time.value < block.time.value ? found : block;
  }
};
PlacementResult run_placement(const PlacementProblem& p, const SearchOptions& options,
                              const EngineChoice& engine);

} // namespace collsim::analysis
