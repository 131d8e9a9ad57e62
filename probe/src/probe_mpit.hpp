#pragma once
// Forcing Open MPI's coll/tuned algorithm from inside the program, through the MPI tool
// interface (MPI_T control variables). What works with Open MPI 4.1 (tested with Debian's 4.1.4):
//
//  * coll_tuned_<collective>_algorithm has scope MPI_T_SCOPE_ALL: MPI_T_cvar_write sets it, after
//    MPI_Init as well as before.
//  * coll_tuned_use_dynamic_rules, without which the forced value is ignored, is read-only
//    (MPI_T_SCOPE_READONLY; a write fails with MPI_T_ERR_CVAR_SET_NEVER). It is set the way
//    mpirun's
//    `--mca` sets it, as OMPI_MCA_coll_tuned_use_dynamic_rules=1 in the environment, which the
//    program does before MPI_Init.
//  * coll/tuned copies the forced values into a communicator's module when the communicator is
//    created, so a value written after MPI_Init applies to communicators created afterwards: the
//    probe writes the variable, then times on a fresh MPI_Comm_dup(MPI_COMM_WORLD).
//
// Checked by the result, not only by reading the variable back: allreduce of floats whose rounded
// sum depends on the order of reduction gives different bits under basic_linear and ring
// (tests/probe/probe_mpi_test.cpp).

#include "collsim/core/collective.hpp"

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace collsim::probe {

/// The environment variable that turns on coll/tuned's dynamic (forceable) decision rules.
inline constexpr const char* kDynamicRulesEnv = "OMPI_MCA_coll_tuned_use_dynamic_rules";

/// One value of an MPI_T enumeration, e.g. coll_tuned_allreduce_algorithm's 4 "ring".
struct EnumItem {
  int value = 0;
  std::string name;
  bool operator==(const EnumItem&) const = default;
};

/// The MPI_T control-variable interface: initialised by the constructor (after MPI_Init),
/// finalised by the destructor (before MPI_Finalize). Errors throw core::Error subclasses.
class ControlVariables {
public:
  ControlVariables();
  ~ControlVariables();
  ControlVariables(const ControlVariables&) = delete;
  ControlVariables& operator=(const ControlVariables&) = delete;

  /// The index of the variable called `name`, if the library has one.
  [[nodiscard]] std::optional<int> find(std::string_view name) const;
  /// The values an enumerated variable accepts (empty when it is not enumerated).
  [[nodiscard]] std::vector<EnumItem> enum_items(int index) const;
  /// An integer or boolean variable's value (booleans read as 0 or 1).
  [[nodiscard]] long long read_int(int index) const;
  /// A string variable's value.
  [[nodiscard]] std::string read_string(int index) const;
  /// Sets an integer variable; throws when the library refuses.
  void write_int(int index, int value) const;

private:
  std::map<std::string, int, std::less<>> index_;
};

/// An algorithm to force for one collective.
struct ForcedAlgorithm {
  core::CollectiveKind collective = core::CollectiveKind::allreduce;
  int id = 0;
  std::string name;     ///< "ring"; empty when the library does not name its values
  std::string variable; ///< "coll_tuned_allreduce_algorithm"
  int variable_index = -1;
};

/// Open MPI coll/tuned forcing on top of the control variables.
class OmpiAlgorithmForcing {
public:
  explicit OmpiAlgorithmForcing(const ControlVariables& cvars);

  /// `token` is an id ("4") or a name ("ring") of coll/tuned's algorithms for `c`; throws
  /// core::UsageError naming the valid ones.
  [[nodiscard]] ForcedAlgorithm resolve(core::CollectiveKind c, std::string_view token) const;
  /// Writes the variable and checks that it reads back and that dynamic rules are on.
  void apply(const ForcedAlgorithm& a) const;
  /// The header line for a table timed under `a`.
  [[nodiscard]] static std::string describe(const ForcedAlgorithm& a);
  /// Notes on coll components of higher priority than coll/tuned (han, hcoll, ucc, ...), which
  /// may run the collective instead of the forced algorithm.
  [[nodiscard]] std::vector<std::string>
  competing_components(const std::vector<core::CollectiveKind>& collectives) const;

private:
  const ControlVariables& cvars_;
};

} // namespace collsim::probe
