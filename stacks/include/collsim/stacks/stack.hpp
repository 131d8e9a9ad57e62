#pragma once
// Library execution models (ARCHITECTURE.md, "Stack"): the schedule says what moves, a stack says
// how the library that runs it moves it on this hardware (protocols, pipelining, per-call costs),
// by lowering the schedule into the program every engine prices. Stacks are found through a
// Registry built by a function (no static registrars); `collsim stacks` lists them with sources.

#include "collsim/algorithms/registry.hpp"
#include "collsim/core/scenario.hpp"
#include "collsim/core/schedule.hpp"
#include "collsim/core/topology.hpp"

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace collsim::stacks {

/// Where the collective's buffers live: GPU memory (the default on GPU ranks) or host memory.
enum class Buffers : std::uint8_t { device, host };
/// "device" or "host"; UsageError otherwise.
Buffers buffers_from_name(std::string_view name);

/// Whose algorithm choice `--algorithm auto` stands for under a stack.
enum class Chooser : std::uint8_t {
  machine, ///< NCCL's where the ranks sit on GPUs, else Open MPI 4.1's (no stack named)
  nccl,    ///< NCCL's tuning model
  ompi41,  ///< Open MPI 4.1 coll/tuned's fixed rules
  ucc,     ///< UCC 1.1's tl/ucp selection
  hcoll,   ///< HCOLL's (HPC-X): its hierarchical allreduce, Open MPI 4.1's rules otherwise
  ompi50,  ///< Open MPI 5.0: coll/han's allreduce across nodes, coll/tuned's rules otherwise
  mpich4,  ///< MPICH 4 ch4: its allreduce composition, Open MPI 4.1's rules otherwise
};

/// What a stack is, for listings and messages.
struct StackInfo {
  std::string name;    ///< "direct", "nccl", "openmpi-4.1", ...
  std::string summary; ///< one line
  std::string source;  ///< the library source files or papers its model follows
  Chooser chooser = Chooser::machine;
  /// Tried, in registration order, for the algorithms of a scenario that names no stack (the
  /// NCCL stack for NCCL's algorithms, direct for the rest); the library stacks run only when
  /// named.
  bool implicit = false;
};

/// What a stack lowers a schedule against.
struct LowerContext {
  const core::Topology& topology;
  const core::NcclSpec& nccl;                 ///< the scenario's corrections to NCCL's protocols
  const algorithms::AlgorithmInfo& algorithm; ///< the generator of the schedule
  /// The scenario's topology section where known (what a library reads beyond the graph, such
  /// as the CPU vendor); may be null.
  const core::TopologySpec* topology_spec = nullptr;
  /// The engine shares links among the flows crossing them (simgrid): a stack then leaves the
  /// sharing of links to it instead of booking it in the lowered schedule (loggp).
  bool engine_shares_links = false;
  Buffers buffers = Buffers::device;
  /// The scenario's `mpi:` section (the MPI stacks' thresholds and per-call cost); may be null.
  const core::MpiSpec* mpi = nullptr;
};

class Stack {
public:
  virtual ~Stack() = default;
  [[nodiscard]] virtual const StackInfo& info() const = 0;
  /// Whether the library this stack models runs the algorithm's schedules (NCCL: its own
  /// algorithms; the direct stack: every algorithm).
  [[nodiscard]] virtual bool runs(const algorithms::AlgorithmInfo& algo) const = 0;
  /// Why it does not run `algo`, for the message that refuses it.
  [[nodiscard]] virtual std::string refusal(const algorithms::AlgorithmInfo& algo) const;
  /// The schedule as the library moves it; the result passes core::validate and
  /// core::check_semantics whenever the input does.
  [[nodiscard]] virtual core::Schedule lower(core::Schedule schedule,
                                             const LowerContext& ctx) const = 0;
};

/// The stacks collsim knows, in the order they are tried: the first whose runs() accepts an
/// algorithm is the one that runs it, so the library-specific ones come before "direct".
class Registry {
public:
  /// Adds a stack; InternalError on a duplicate name.
  void add(std::unique_ptr<Stack> stack);
  /// By name; UnknownNameError with the valid names and the closest match.
  [[nodiscard]] const Stack& find(std::string_view name) const;
  /// The stack that runs `algo` when none is named: the first implicit one that runs() it.
  [[nodiscard]] const Stack& stack_for(const algorithms::AlgorithmInfo& algo) const;
  /// The stack called `name` (stack_for(algo) when empty); UnknownNameError for a name it does
  /// not know, UsageError with the stack's refusal when it does not run `algo`.
  [[nodiscard]] const Stack& resolve(std::string_view name,
                                     const algorithms::AlgorithmInfo& algo) const;
  [[nodiscard]] std::vector<std::string> names() const;
  [[nodiscard]] const std::vector<std::unique_ptr<Stack>>& all() const { return stacks_; }

private:
  std::vector<std::unique_ptr<Stack>> stacks_;
};

/// "nccl" and "direct" (implicit), then the library stacks: "openmpi-4.1", "openmpi-4.1+ucc",
/// "openmpi-4.1+ucc+nccl", "hpcx", "openmpi-5.0", "mpich-4", "mvapich2-gdr".
Registry default_stacks();

/// The schedule generated by `algo`, lowered by the stack called `stack` (the implicit one that
/// runs `algo` when empty): what every engine prices.
core::Schedule lower(const Registry& stacks, core::Schedule schedule, const LowerContext& ctx,
                     std::string_view stack = {});

std::unique_ptr<Stack> make_direct_stack();
std::unique_ptr<Stack> make_nccl_stack();
std::unique_ptr<Stack> make_openmpi41_stack();
std::unique_ptr<Stack> make_openmpi41_ucc_stack();
std::unique_ptr<Stack> make_openmpi41_ucc_nccl_stack();
std::unique_ptr<Stack> make_hpcx_stack();
std::unique_ptr<Stack> make_openmpi50_stack();
std::unique_ptr<Stack> make_mpich4_stack();
std::unique_ptr<Stack> make_mvapich2_gdr_stack();

} // namespace collsim::stacks
