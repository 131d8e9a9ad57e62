#pragma once
// What `collsim validate`, `calibrate` and `check` share: measured points from logs, and
// validation with the ranks of each log placed over --nodes nodes.

#include "cli_support.hpp"

#include "collsim/algorithms/registry.hpp"
#include "collsim/analysis/measured_logs.hpp"
#include "collsim/analysis/validate.hpp"
#include "collsim/core/scenario.hpp"
#include "collsim/io/logs.hpp"

#include <memory>
#include <string>
#include <vector>

namespace collsim::cli {

/// What validate and check share: the machine (--scenario, --stack, --buffers), how each row is
/// predicted (--algorithm, --engine, --threads) and the shape of logs that do not state it
/// (--ranks, --nodes).
struct PredictionOptions {
  std::string scenario;
  std::string algorithm = "auto";
  std::string engine = "loggp";
  unsigned threads = 0;
  std::string max_memory; ///< --max-memory (parse_memory_option)
  LogShapeOptions shape;
  StackOptions stack;
};
void add_prediction_options(CLI::App& cmd, PredictionOptions& options);

/// The options read and checked: the scenario under the stack given, the log shape and
/// validate()'s options.
struct Prediction {
  core::Scenario scenario;
  io::LogShape shape;
  analysis::ValidateOptions validate;
  /// In an MPI job, the processes that share the rows (validate.executor points to it).
  std::shared_ptr<const analysis::Executor> executor;
};
Prediction prediction(const PredictionOptions& options);

/// The measured points of some logs (warnings on stderr; what collsim cannot model in `ignored`).
std::vector<analysis::MeasuredPoint> read_points(const std::vector<std::string>& paths,
                                                 std::vector<std::string>& ignored,
                                                 const io::LogShape& shape);

/// Whether --nodes changes the scenario: cluster and system topologies have nodes, a uniform one
/// does not (a warning says so).
bool places_by_nodes(const core::Scenario& scenario, const io::LogShape& shape);

/// The scenario with `ranks` / `nodes` ranks on each node (--nodes): a cluster's devices per node
/// or a system's placement.ranks_per_node.
core::Scenario placed(const core::Scenario& scenario, std::uint32_t ranks, std::uint32_t nodes);

/// validate() once per rank count, each with that count placed over `nodes` nodes; rows and
/// skipped points in the order of the rank counts' first points.
analysis::ValidationResult validate_placed(const core::Scenario& scenario,
                                           const std::vector<analysis::MeasuredPoint>& points,
                                           std::uint32_t nodes,
                                           const algorithms::Registry& registry,
                                           const analysis::ValidateOptions& opt);

/// validate_placed where --nodes places the ranks, else validate().
analysis::ValidationResult validate_logs(const core::Scenario& scenario,
                                         const std::vector<analysis::MeasuredPoint>& points,
                                         const io::LogShape& shape,
                                         const algorithms::Registry& registry,
                                         const analysis::ValidateOptions& opt);

} // namespace collsim::cli
