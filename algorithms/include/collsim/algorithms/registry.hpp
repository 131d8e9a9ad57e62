#pragma once
// The algorithm registry: an object built by a function (no static registration), that a session
// owns. Each algorithm is one file under algorithms/<collective>/ exporting a describe_<name>()
// function, plus one line in registry.cpp (ARCHITECTURE.md, "Extending").

#include "collsim/core/collective.hpp"
#include "collsim/core/schedule.hpp"
#include "collsim/core/topology.hpp"
#include "collsim/core/units.hpp"

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace collsim::algorithms {

/// A self-describing algorithm parameter (ns-3 style: name, default, range, help).
///
/// A parameter with `choices` is an enumeration: users write one of the names (e.g.
/// `inter=ring`), and the value the generator sees is its index; min and max must be 0 and
/// choices.size() - 1.
struct ParamSpec {
  std::string name;
  std::int64_t default_value = 0;
  std::int64_t min = 0;
  std::int64_t max = 0;
  std::string help;
  std::vector<std::string> choices{};
};

/// What to generate: a collective over `ranks` ranks of `bytes` (nccl-tests' S convention).
struct Request {
  core::CollectiveKind collective = core::CollectiveKind::allreduce;
  std::uint32_t ranks = 1;
  core::Bytes bytes{0};
  core::Rank root = 0;
  std::map<std::string, std::int64_t> params; ///< missing ones take their defaults
  const core::Topology* topology = nullptr;   ///< for topology-aware generators (may be null)
  /// A v-collective's per-rank counts (core::ScheduleHeader::counts; empty: uniform). Only
  /// algorithms with AlgorithmInfo::counts take them; `bytes` must agree (core::counts_bytes).
  std::vector<std::uint64_t> counts{};
  /// When each rank enters the call, in seconds from the first (empty: all at once). The engines
  /// see arrivals through the schedule (analysis::apply_arrivals); only imbalance-aware
  /// generators read them here, to order their combining by arrival.
  std::vector<double> arrivals{};
  /// The sweep point's memory meter (core/memory_meter.hpp): make_header puts it in the
  /// schedule's header, which reports its arrays as they grow. None by default.
  core::MeterRef meter{};
  /// Generate the collapsed schedule (core/collapse.hpp): the programs of ranks 0..collapse_to-1
  /// only, one per class of the algorithm's symmetry (AlgorithmInfo::symmetry), which
  /// analysis::collapse_programs chooses; 0: every rank.
  std::uint32_t collapse_to = 0;
  /// The symmetry of a collapsed request (Registry::refusal fills it from AlgorithmInfo).
  core::SymmetryKind symmetry = core::SymmetryKind::none;
  /// The message size that NCCL's size-dependent rules see (its chunk sizes, enqueue.cc), 0:
  /// `bytes`. A steady-state run (analysis/steady_state.hpp) times fewer loops of a larger
  /// message and keeps that message's chunks.
  std::uint64_t chunk_basis = 0;
};

/// A closed-form alpha-beta-gamma cost:
/// time = alpha_terms * alpha + beta_bytes * beta + gamma_bytes * gamma.
struct CostTerms {
  double alpha_terms = 0.0; ///< number of message start-ups on the critical path
  double beta_bytes = 0.0;  ///< bytes transferred on the critical path
  double gamma_bytes = 0.0; ///< bytes reduced on the critical path
};

/// An algorithm's rank symmetry for a request (core/collapse.hpp): rank x's program is rank
/// (x mod k)'s with its peers moved, for every k that is a multiple of `period` and divides p.
/// Rings over nodes (NCCL's, entering each node at another GPU per channel) repeat every node.
struct Symmetry {
  core::SymmetryKind kind = core::SymmetryKind::none;
  std::uint32_t period = 1;
};

struct AlgorithmInfo {
  std::string name; ///< canonical name, e.g. "ring"
  core::CollectiveKind collective = core::CollectiveKind::allreduce;
  std::string summary; ///< one line
  std::string source;  ///< paper or library function it follows
  /// Library names, e.g. "ompi:4", "ompi:ring", "mpich:ring", "smpi:lr".
  std::vector<std::string> aliases;
  std::vector<ParamSpec> params;
  std::vector<std::string> constraints; ///< human-readable, e.g. "ranks must be a power of two"
  /// Returns an empty string if the request is acceptable, else the reason it is refused.
  std::function<std::string(const Request&)> check;
  std::function<core::Schedule(const Request&)> generate;
  /// Closed form, when one is known for this request (nullopt: none for these ranks/size).
  std::function<std::optional<CostTerms>(const Request&)> cost;
  /// The closed form as text, e.g. "2(p-1)a + 2(p-1)/p n b + (p-1)/p n g".
  std::string cost_formula;
  /// The group under which every rank's program is its representative's with its peers moved
  /// (core/collapse.hpp), where the request has one; none (or unset): no collapsed form.
  std::function<Symmetry(const Request&)> symmetry;
  /// The bytes one loop of the algorithm's chunk pipeline carries for this request (its chunk
  /// sizes fixed by Request::chunk_basis): the schedule for `bytes` - L is this one with one
  /// loop fewer, the same first loops and the same last one (analysis/steady_state.hpp). Unset
  /// or 0: no such loop.
  std::function<std::uint64_t(const Request&)> loop_bytes;
  /// Takes per-rank counts (Request::counts): the algorithm also runs the collective's v-variant
  /// (allgatherv, gatherv, scatterv, alltoallv, MPI_Reduce_scatter).
  bool counts = false;
};

/// Parameter values as users write them ("65536", "64KiB", "ring"), by name.
using RawParams = std::map<std::string, std::string>;

/// Resolves `raw` for `algo`: integers, sizes ("64 KiB") and, for parameters with choices, the
/// choice names (by index). Parameters `algo` does not take are left out (a study passes one set to
/// several algorithms). Throws UsageError naming the parameter when a value does not parse or is
/// not one of the choices (with the valid names and the closest match).
std::map<std::string, std::int64_t> resolve_params(const AlgorithmInfo& algo, const RawParams& raw);

/// The parameter's value as users write it (the choice name, or the integer).
std::string param_value_text(const ParamSpec& p, std::int64_t value);

class Registry {
public:
  /// Adds an algorithm; throws InternalError on a duplicate name or alias within a collective.
  void add(AlgorithmInfo info);
  /// Finds by canonical name or alias; throws UnknownNameError with the valid names and closest
  /// match.
  [[nodiscard]] const AlgorithmInfo& find(core::CollectiveKind c, std::string_view name) const;
  [[nodiscard]] const AlgorithmInfo* try_find(core::CollectiveKind c, std::string_view name) const;
  /// The collectives that have at least one algorithm, in canonical order.
  [[nodiscard]] std::vector<std::string> collectives_with_algorithms() const;
  /// All algorithms, or those of one collective, in registration order.
  [[nodiscard]] std::vector<const AlgorithmInfo*>
  list(std::optional<core::CollectiveKind> c = std::nullopt) const;
  /// Fills defaults, checks parameter ranges and the algorithm's constraints (UsageError with the
  /// reason), generates the schedule and stamps the header's algorithm name.
  [[nodiscard]] core::Schedule generate(const AlgorithmInfo& algo, Request request) const;
  /// The closed-form cost for `request`, if the algorithm declares one that is exact for it;
  /// throws UsageError, as generate() does, when the request is refused.
  [[nodiscard]] std::optional<CostTerms> cost(const AlgorithmInfo& algo, Request request) const;
  /// Checks parameters and constraints without generating; returns the reason or "". Fills the
  /// defaults of missing parameters into `request.params`. Order: collective, unknown parameter
  /// names (with "did you mean"), parameter ranges, ranks >= 1, root < ranks, algo.check.
  [[nodiscard]] std::string refusal(const AlgorithmInfo& algo, Request& request) const;

private:
  std::vector<AlgorithmInfo> algorithms_;
};

/// The registry with every algorithm collsim ships.
Registry make_default_registry();

/// The header every generator starts from. `data_bytes` is `r.bytes` for every collective (the
/// buffer is in place: allgather/gather/reduce_scatter/scatter hold the whole p-block vector, each
/// rank's block at block_range(bytes, ranks, rank), or at core::BlockLayout::block for counts)
/// except alltoall, whose buffer holds the input in [0, bytes) and the output after it (2 * bytes
/// uniform; bytes plus the largest column sum of the counts). The counts are copied. `tmp_bytes` is
/// the scratch size per rank; `algorithm` is the canonical name to stamp (Registry::generate checks
/// it).
core::ScheduleHeader make_header(const Request& r, std::uint64_t tmp_bytes,
                                 std::string algorithm = {});

} // namespace collsim::algorithms
