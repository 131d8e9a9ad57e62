// `collsim workload run` (issue 19; docs/workload-format.md): one step of a workload on a
// scenario, per phase and in total.

#include "cli_support.hpp"
#include "commands.hpp"
#include "plot_support.hpp"

#include "collsim/analysis/what_if.hpp"
#include "collsim/analysis/workload.hpp"
#include "collsim/io/scenario_loader.hpp"
#include "collsim/io/workload_loader.hpp"

#include <fmt/format.h>
#include <memory>
#include <nlohmann/json.hpp>

namespace collsim::cli {
namespace {

const char* group_name(core::WorkloadGroup g) {
  switch (g) {
  case core::WorkloadGroup::world: return "world";
  case core::WorkloadGroup::node: return "node";
  case core::WorkloadGroup::across_nodes: return "across_nodes";
  case core::WorkloadGroup::pair: return "pair";
  }
  return "world";
}

std::string label(const analysis::PhaseTiming& p) {
  std::string out = p.algorithm;
  for (const auto& [name, value] : p.params) {
    out += fmt::format(" {}={}", name, value);
  }
  return out;
}

std::string report(const analysis::WorkloadTiming& t, const core::Workload& w,
                   const core::Scenario& s, const analysis::WorkloadJob& job,
                   const std::string& engine, const std::string& format) {
  const double share = t.step.value > 0.0 ? 100.0 * t.exposed.value / t.step.value : 0.0;
  if (format == "json") {
    nlohmann::json phases = nlohmann::json::array();
    for (const auto& p : t.phases) {
      phases.push_back({{"name", p.phase.name},
                        {"collective", core::to_string(p.phase.collective)},
                        {"group", group_name(p.phase.group)},
                        {"ranks", p.ranks},
                        {"bytes", p.phase.bytes.value},
                        {"calls", p.phase.calls},
                        {"algorithm", p.algorithm},
                        {"params", p.params},
                        {"chosen_by", p.chosen_by},
                        {"per_call_us", p.per_call.value * 1e6},
                        {"total_us", p.total.value * 1e6},
                        {"overlap", p.phase.overlap}});
    }
    return nlohmann::json{{"workload", w.name},
                          {"scenario", s.name},
                          {"nodes", job.nodes},
                          {"ranks_per_node", job.ranks_per_node},
                          {"engine", engine},
                          {"phases", phases},
                          {"compute_us", t.compute.value * 1e6},
                          {"communication_us", t.communication.value * 1e6},
                          {"overlapped_us", t.overlapped.value * 1e6},
                          {"exposed_us", t.exposed.value * 1e6},
                          {"step_us", t.step.value * 1e6},
                          {"exposed_share_pct", share}}
               .dump(2) +
           "\n";
  }
  std::string text = fmt::format(
      "# collsim workload run: '{}' on scenario '{}', {} node(s) x {} ranks, engine {}\n", w.name,
      s.name, job.nodes, job.ranks_per_node, engine);
  text += fmt::format("# {:<28} {:<14} {:<12} {:>6} {:>12} {:>7}  {:<36} {:>12} {:>12} {:>7}\n",
                      "phase", "collective", "group", "ranks", "size (B)", "calls", "algorithm",
                      "per call", "total", "overlap");
  text += fmt::format("# {:<28} {:<14} {:<12} {:>6} {:>12} {:>7}  {:<36} {:>12} {:>12}\n", "", "",
                      "", "", "", "", "", "(us)", "(us)");
  for (const auto& p : t.phases) {
    text += fmt::format("  {:<28} {:<14} {:<12} {:>6} {:>12} {:>7}  {:<36} {:>12.2f} {:>12.2f} "
                        "{:>7.2f}\n",
                        p.phase.name, core::to_string(p.phase.collective),
                        group_name(p.phase.group), p.ranks, p.phase.bytes.value, p.phase.calls,
                        label(p), p.per_call.value * 1e6, p.total.value * 1e6, p.phase.overlap);
  }
  text += "#\n";
  text += fmt::format("# compute          {:>14.2f} us\n", t.compute.value * 1e6);
  text += fmt::format("# communication    {:>14.2f} us\n", t.communication.value * 1e6);
  text += fmt::format("# overlapped       {:>14.2f} us   (hidden under the compute)\n",
                      t.overlapped.value * 1e6);
  text += fmt::format("# exposed          {:>14.2f} us   ({:.1f} % of the step)\n",
                      t.exposed.value * 1e6, share);
  text +=
      fmt::format("# step             {:>14.2f} us   (compute + exposed)\n", t.step.value * 1e6);
  return text;
}

} // namespace

void add_workload(CLI::App& app) {
  struct Args {
    std::string workload;
    std::string scenario;
    std::string nodes;
    std::string ranks_per_node;
    PrintOptions out;
    PlotOptions plots;
  };
  auto a = std::make_shared<Args>();
  auto* group = app.add_subcommand(
      "workload", "Workloads: the collective calls of a training step or application iteration");
  group->require_subcommand(1);
  auto* cmd = group->add_subcommand(
      "run", "Time one step of a workload on a scenario: per phase, the library's algorithm and "
             "time, and the step with its exposed communication");
  cmd->add_option("workload", a->workload, "Workload file (docs/workload-format.md)")->required();
  cmd->add_option("--scenario", a->scenario, "Scenario (file or preset) that models the machine")
      ->required();
  cmd->add_option("--nodes", a->nodes,
                  "Nodes of the job (default 1; a uniform topology has no nodes: use "
                  "--ranks-per-node for its rank count)");
  cmd->add_option("--ranks-per-node", a->ranks_per_node,
                  "Ranks on each node (default: the scenario's placement, else every GPU or core)");
  add_print_options(*cmd, a->out, "table or json");
  add_plot_options(*cmd, a->plots,
                   "the step's breakdown chart (communication per phase, exposed and overlapped; "
                   "compute; the step) as workload-breakdown.png");
  cmd->callback([a] {
    if (a->out.format != "table" && a->out.format != "json") {
      throw core::UnknownNameError("format", a->out.format, {"table", "json"});
    }
    if (!a->plots.dir.empty()) {
      check_plots_available(a->plots.format);
    }
    const core::Workload w = io::load_workload(a->workload);
    core::Scenario scenario = io::load_scenario(a->scenario);
    apply_stack_options(a->out.stack, scenario);
    const auto one = [](const std::string& text, const char* option) {
      const auto v = parse_ranks(text, option);
      if (v.size() != 1) {
        throw core::UsageError(fmt::format("{}: expected one count, got {}", option, v.size()));
      }
      return v.front();
    };
    analysis::WorkloadJob job;
    job.nodes = a->nodes.empty() ? 1 : one(a->nodes, "--nodes");
    const analysis::WhatIfShape shape = analysis::what_if_shape(scenario);
    if (!shape.nodes && job.nodes != 1) {
      throw core::UsageError(fmt::format("--nodes {}: scenario '{}' has a {} topology, which has "
                                         "no nodes (give the rank count as --ranks-per-node)",
                                         job.nodes, scenario.name, scenario.topology.kind));
    }
    job.ranks_per_node = a->ranks_per_node.empty() ? analysis::ranks_per_node(scenario)
                                                   : one(a->ranks_per_node, "--ranks-per-node");
    if (job.ranks_per_node == 0) {
      throw core::UsageError(fmt::format(
          "scenario '{}' does not say how many ranks a node holds: give --ranks-per-node",
          scenario.name));
    }
    if (shape.nodes && !a->ranks_per_node.empty()) {
      analysis::WhatIf change;
      change.ranks_per_node = job.ranks_per_node;
      scenario = analysis::apply_what_if(scenario, change);
    }
    analysis::ValidateOptions opt;
    opt.engine = analysis::EngineChoice(a->out.engine, scenario);
    opt.threads = a->out.threads;
    const algorithms::Registry registry = algorithms::make_default_registry();
    const auto t = analysis::run_workload(scenario, w, job, registry, opt);
    emit(report(t, w, scenario, job, a->out.engine, a->out.format), a->out.output);
    if (!a->plots.dir.empty()) {
      const double share = t.step.value > 0.0 ? 100.0 * t.exposed.value / t.step.value : 0.0;
      const std::string subtitle =
          fmt::format("{} x {} ranks of {}; step {}, {:.1f} % of it exposed communication",
                      job.nodes, job.ranks_per_node, scenario.name,
                      t.step.value >= 10e-3 ? fmt::format("{:.3f} ms", t.step.value * 1e3)
                                            : fmt::format("{:.2f} us", t.step.value * 1e6),
                      share);
      print_written(write_workload_plot(t, fmt::format("Workload {}: one step", w.name), subtitle,
                                        a->plots.dir, a->plots.format));
    }
  });

  add_workload_import(*group);
}

} // namespace collsim::cli
