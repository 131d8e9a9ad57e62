// Shared by validate, calibrate and check (validate_support.hpp).

#include "validate_support.hpp"

#include "collsim/analysis/what_if.hpp"
#include "collsim/distributed/session.hpp"
#include "collsim/io/scenario_loader.hpp"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <fmt/format.h>
#include <iostream>
#include <iterator>

namespace collsim::cli {

void add_prediction_options(CLI::App& cmd, PredictionOptions& o) {
  cmd.add_option("--scenario", o.scenario, "Scenario (file or preset) that models the machine")
      ->required();
  cmd.add_option(
         "--algorithm", o.algorithm,
         "Algorithm name or alias; auto: the measuring library's default choice (NCCL's for "
         "nccl-tests, Open MPI 4.1's for OSU/IMB); fastest: the fastest collsim has")
      ->capture_default_str();
  cmd.add_option("--engine", o.engine, "Engine: loggp, simgrid or analytic")->capture_default_str();
  cmd.add_option("--threads", o.threads,
                 "Worker threads (0: all cores; under mpirun or srun: 1 per process)")
      ->capture_default_str();
  add_memory_option(cmd, o.max_memory);
  add_log_shape_options(cmd, o.shape);
  add_stack_options(cmd, o.stack,
                    "the log's: device for OSU's -d cuda, host for an MPI benchmark without it "
                    "(OSU's default, IMB), device on GPU ranks for nccl-tests");
}

Prediction prediction(const PredictionOptions& o) {
  Prediction p{io::load_scenario(o.scenario), log_shape(o.shape), {}, nullptr};
  apply_stack_options(o.stack, p.scenario);
  p.validate.algorithm = o.algorithm;
  p.validate.engine = analysis::EngineChoice(o.engine, p.scenario);
  p.validate.threads = o.threads;
  p.executor = distributed::executor(o.threads, parse_memory_option(o.max_memory));
  p.validate.executor = p.executor.get();
  return p;
}

/// The measured points of some logs (warnings on stderr; what collsim cannot model in `ignored`).
std::vector<analysis::MeasuredPoint> read_points(const std::vector<std::string>& paths,
                                                 std::vector<std::string>& ignored,
                                                 const io::LogShape& shape) {
  analysis::MeasuredLogs logs = analysis::read_measured_logs(paths, shape);
  for (const std::string& w : logs.warnings) {
    std::cerr << w << "\n";
  }
  ignored.insert(ignored.end(), logs.ignored.begin(), logs.ignored.end());
  return std::move(logs.points);
}

/// Whether --nodes changes the scenario: cluster and system topologies have nodes, a uniform one
/// does not (a warning says so).
bool places_by_nodes(const core::Scenario& scenario, const io::LogShape& shape) {
  if (!shape.nodes) {
    return false;
  }
  if (!analysis::what_if_shape(scenario).nodes) {
    std::cerr << fmt::format("collsim: warning: --nodes {}: scenario '{}' has a {} topology, which "
                             "has no nodes; the node count does not change its predictions\n",
                             *shape.nodes, scenario.name, scenario.topology.kind);
    return false;
  }
  return true;
}

/// The scenario with `ranks` / `nodes` ranks on each node (--nodes): a cluster's devices per node
/// or a system's placement.ranks_per_node.
core::Scenario placed(const core::Scenario& scenario, std::uint32_t ranks, std::uint32_t nodes) {
  analysis::WhatIf change;
  change.ranks_per_node = ranks / nodes;
  try {
    return analysis::apply_what_if(scenario, change);
  } catch (const core::UsageError& e) {
    std::string why = e.what();
    if (why.starts_with("what-if: ")) {
      why = why.substr(9);
    }
    throw core::UsageError(fmt::format("--nodes {} with {} ranks: {} (scenario '{}')", nodes, ranks,
                                       why, scenario.name));
  }
}

/// validate() once per rank count, each with that count placed over `nodes` nodes; rows and
/// skipped points in the order of the rank counts' first points.
analysis::ValidationResult validate_placed(const core::Scenario& scenario,
                                           const std::vector<analysis::MeasuredPoint>& points,
                                           std::uint32_t nodes,
                                           const algorithms::Registry& registry,
                                           const analysis::ValidateOptions& opt) {
  std::vector<std::uint32_t> counts;
  for (const auto& p : points) {
    if (std::find(counts.begin(), counts.end(), p.ranks) == counts.end()) {
      counts.push_back(p.ranks);
    }
  }
  analysis::ValidationResult out;
  for (const std::uint32_t ranks : counts) {
    std::vector<analysis::MeasuredPoint> group;
    std::copy_if(points.begin(), points.end(), std::back_inserter(group),
                 [&](const analysis::MeasuredPoint& p) { return p.ranks == ranks; });
    // A point without a rank count is skipped by validate() whatever the placement.
    const core::Scenario s = ranks == 0 ? scenario : placed(scenario, ranks, nodes);
    analysis::ValidationResult r = analysis::validate(s, group, registry, opt);
    std::move(r.rows.begin(), r.rows.end(), std::back_inserter(out.rows));
    std::move(r.skipped.begin(), r.skipped.end(), std::back_inserter(out.skipped));
  }
  out.summary = analysis::summarize(out.rows);
  out.library = analysis::summarize_library(out.rows);
  return out;
}

analysis::ValidationResult validate_logs(const core::Scenario& scenario,
                                         const std::vector<analysis::MeasuredPoint>& points,
                                         const io::LogShape& shape,
                                         const algorithms::Registry& registry,
                                         const analysis::ValidateOptions& opt) {
  return places_by_nodes(scenario, shape)
             ? validate_placed(scenario, points, *shape.nodes, registry, opt)
             : analysis::validate(scenario, points, registry, opt);
}

} // namespace collsim::cli
