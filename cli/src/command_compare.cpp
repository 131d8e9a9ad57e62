// `collsim compare` (issue 19; docs/workload-format.md, "Comparing machines"): one workload's
// step on several scenarios side by side, with the time and cost of many steps.

#include "cli_support.hpp"
#include "commands.hpp"
#include "plot_support.hpp"

#include "collsim/analysis/compare.hpp"
#include "collsim/analysis/workload.hpp"
#include "collsim/io/compare_loader.hpp"
#include "collsim/io/csv_field.hpp"
#include "collsim/io/scenario_loader.hpp"
#include "collsim/io/workload_loader.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>

namespace collsim::cli {
namespace {

/// One machine of the comparison: "SCENARIO", "SCENARIO:NODES" or "SCENARIO:NODES:WORKLOAD" (a
/// step of its own: a job of another size splits the model differently and computes longer).
struct Machine {
  std::string scenario;
  std::uint32_t nodes = 0; ///< 0: --nodes
  std::string workload;    ///< empty: --workload
  std::string label;       ///< "dgx-h100 x 64"
};

std::vector<Machine> parse_machines(const std::vector<std::string>& items,
                                    std::uint32_t default_nodes) {
  std::vector<Machine> out;
  for (const std::string& item : items) {
    Machine m;
    std::vector<std::string> fields;
    for (std::size_t at = 0;;) {
      const auto colon = item.find(':', at);
      fields.push_back(item.substr(at, colon - at));
      if (colon == std::string::npos) {
        break;
      }
      at = colon + 1;
    }
    if (fields.size() > 3 || fields[0].empty()) {
      throw core::UsageError(fmt::format(
          "--scenarios: '{}': expected SCENARIO, SCENARIO:NODES or SCENARIO:NODES:WORKLOAD", item));
    }
    m.scenario = fields[0];
    m.nodes = default_nodes;
    if (fields.size() > 1) {
      const auto counts = parse_ranks(fields[1], "--scenarios");
      if (counts.size() != 1) {
        throw core::UsageError(
            fmt::format("--scenarios: '{}': expected one node count, got {}", item, counts.size()));
      }
      m.nodes = counts.front();
    }
    if (fields.size() > 2) {
      m.workload = fields[2];
    }
    out.push_back(m);
  }
  if (out.empty()) {
    throw core::UsageError("--scenarios: give at least one scenario");
  }
  return out;
}

/// --price NAME=VALUE: the price per node-hour of a scenario (by the name --scenarios gives it).
std::map<std::string, double> parse_prices(const std::vector<std::string>& items,
                                           const std::vector<Machine>& machines) {
  std::map<std::string, double> out;
  for (const std::string& item : items) {
    const auto eq = item.find('=');
    const std::string name = eq == std::string::npos ? std::string() : item.substr(0, eq);
    double v = -1.0;
    if (eq != std::string::npos) {
      const std::string text = item.substr(eq + 1);
      const char* last = text.data() + text.size();
      const auto [ptr, ec] = std::from_chars(text.data(), last, v);
      if (text.empty() || ec != std::errc() || ptr != last || !std::isfinite(v)) {
        v = -1.0;
      }
    }
    if (name.empty() || v < 0.0) {
      throw core::UsageError(fmt::format(
          "--price: expected SCENARIO=PRICE (per node-hour, a number >= 0), got '{}'", item));
    }
    bool known = false;
    for (const Machine& m : machines) {
      known = known || m.scenario == name;
    }
    if (!known) {
      std::vector<std::string> names;
      for (const Machine& m : machines) {
        names.push_back(m.scenario);
      }
      throw core::UnknownNameError("scenario in --price", name, names);
    }
    out[name] = v;
  }
  return out;
}

std::string report(const std::vector<analysis::CompareRow>& rows, std::uint64_t steps,
                   const std::string& format) {
  std::vector<std::string> names;
  for (const analysis::CompareRow& r : rows) {
    if (std::find(names.begin(), names.end(), r.workload) == names.end()) {
      names.push_back(r.workload);
    }
  }
  const std::string workloads = fmt::format("{}", fmt::join(names, ", "));
  const auto hours = [&](const analysis::CompareRow& r) { return r.hours(steps); };
  if (format == "json") {
    nlohmann::json out = nlohmann::json::array();
    for (const analysis::CompareRow& r : rows) {
      nlohmann::json j{{"scenario", r.scenario},
                       {"workload", r.workload},
                       {"label", r.label},
                       {"nodes", r.job.nodes},
                       {"ranks_per_node", r.job.ranks_per_node},
                       {"step_us", r.timing.step.value * 1e6},
                       {"compute_us", r.timing.compute.value * 1e6},
                       {"communication_us", r.timing.communication.value * 1e6},
                       {"exposed_us", r.timing.exposed.value * 1e6},
                       {"steps", steps},
                       {"hours", hours(r)},
                       {"dominant_phase", r.dominant}};
      if (r.price) {
        j["price_per_node_hour"] = *r.price;
        j["cost"] = hours(r) * r.job.nodes * *r.price;
      }
      out.push_back(std::move(j));
    }
    return nlohmann::json{{"steps", steps}, {"machines", out}}.dump(2) + "\n";
  }
  if (format == "csv") {
    std::string text =
        "scenario,workload,label,nodes,ranks_per_node,step_us,compute_us,communication_us,"
        "exposed_us,steps,hours,price_per_node_hour,cost,dominant_phase\n";
    for (const analysis::CompareRow& r : rows) {
      text += fmt::format(
          "{},{},{},{},{},{:.6g},{:.6g},{:.6g},{:.6g},{},{:.6g},{},{},{}\n",
          io::csv_field(r.scenario), io::csv_field(r.workload), io::csv_field(r.label), r.job.nodes,
          r.job.ranks_per_node, r.timing.step.value * 1e6, r.timing.compute.value * 1e6,
          r.timing.communication.value * 1e6, r.timing.exposed.value * 1e6, steps, hours(r),
          r.price ? fmt::format("{:g}", *r.price) : std::string(),
          r.price ? fmt::format("{:.6g}", hours(r) * r.job.nodes * *r.price) : std::string(),
          io::csv_field(r.dominant));
    }
    return text;
  }
  std::string text = fmt::format("# collsim compare: workload {}, {} steps\n", workloads, steps);
  text += fmt::format("# {:<44} {:>6} {:>12} {:>12} {:>12} {:>8} {:>10} {:>12}  {}\n", "machine",
                      "ranks", "step", "comm.", "exposed", "exposed", "time", "cost",
                      "most communication");
  text += fmt::format("# {:<44} {:>6} {:>12} {:>12} {:>12} {:>8} {:>10} {:>12}\n", "", "", "(ms)",
                      "(ms)", "(ms)", "(%)", "(h)", "");
  for (const analysis::CompareRow& r : rows) {
    const double share =
        r.timing.step.value > 0 ? 100.0 * r.timing.exposed.value / r.timing.step.value : 0.0;
    text += fmt::format(
        "  {:<44} {:>6} {:>12.3f} {:>12.3f} {:>12.3f} {:>8.1f} {:>10.2f} {:>12}  {}\n", r.label,
        r.job.nodes * r.job.ranks_per_node, r.timing.step.value * 1e3,
        r.timing.communication.value * 1e3, r.timing.exposed.value * 1e3, share, hours(r),
        r.price ? fmt::format("{:.2f}", hours(r) * r.job.nodes * *r.price) : std::string("-"),
        r.dominant);
  }
  text += "# cost = time x nodes x --price (per node-hour); comm. = every call, exposed = what the "
          "compute does not hide\n";
  return text;
}

} // namespace

void add_compare(CLI::App& app) {
  struct Args {
    std::string workload;
    std::string file;
    std::vector<std::string> scenarios;
    std::string nodes;
    std::vector<std::string> prices;
    std::uint64_t steps = 1000;
    PrintOptions out;
    PlotOptions plots;
  };
  auto a = std::make_shared<Args>();
  auto* cmd = app.add_subcommand(
      "compare", "One workload's step on several machines side by side: step time, exposed "
                 "communication, and the time and cost of many steps");
  cmd->add_option("--workload", a->workload,
                  "Workload file (docs/workload-format.md) for the machines that name none");
  auto* scen =
      cmd->add_option(
             "--scenarios", a->scenarios,
             "Machines: SCENARIO, SCENARIO:NODES or SCENARIO:NODES:WORKLOAD, comma-separated "
             "(a scenario may appear with several node counts)")
          ->delimiter(',');
  auto* file = cmd->add_option(
      "--file", a->file,
      "A compare file: the workload and the machines, each a scenario or a variant of one "
      "(docs/workload-format.md, \"Variants\")");
  scen->excludes(file);
  file->excludes(scen);
  cmd->add_option("--nodes", a->nodes, "Nodes of a machine that names none (default 1)");
  cmd->add_option("--price", a->prices,
                  "SCENARIO=PRICE: the price of one node-hour of that scenario (repeatable)")
      ->delimiter(',');
  auto* steps_option = cmd->add_option("--steps", a->steps,
                                       "Steps to price (a training run, a simulation campaign)");
  steps_option->capture_default_str()->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1} << 40));
  add_print_options(*cmd, a->out, "table, csv or json");
  add_plot_options(*cmd, a->plots,
                   "a chart of one step per machine (compute and exposed communication stacked) "
                   "as compare.png");
  cmd->callback([a, steps_option] {
    const bool steps_given = steps_option->count() > 0;
    (void)parse_format(a->out.format);
    if (!a->plots.dir.empty()) {
      check_plots_available(a->plots.format);
    }
    std::uint32_t nodes = 1;
    if (!a->nodes.empty()) {
      const auto v = parse_ranks(a->nodes, "--nodes");
      if (v.size() != 1) {
        throw core::UsageError(fmt::format("--nodes: expected one count, got {}", v.size()));
      }
      nodes = v.front();
    }
    if (a->file.empty() && a->scenarios.empty()) {
      throw core::UsageError("compare: give --scenarios or --file");
    }
    std::vector<Machine> machines;
    std::vector<core::Scenario> scenarios; // --file: each machine's scenario or variant
    std::vector<std::optional<double>> file_prices;
    std::uint64_t steps = a->steps;
    std::string workload = a->workload;
    if (!a->file.empty()) {
      const io::CompareSpec spec = io::load_compare(a->file);
      if (workload.empty()) {
        workload = spec.workload;
      }
      if (steps_given) {
        steps = a->steps;
      } else {
        steps = spec.steps;
      }
      for (const io::CompareMachine& cm : spec.machines) {
        Machine m;
        m.scenario = cm.scenario.name;
        m.nodes = cm.nodes != 0 ? cm.nodes : (a->nodes.empty() ? spec.nodes : nodes);
        m.workload = cm.workload;
        m.label = cm.label;
        machines.push_back(m);
        scenarios.push_back(cm.scenario);
        file_prices.push_back(cm.price);
      }
    } else {
      machines = parse_machines(a->scenarios, nodes);
    }
    const std::map<std::string, double> prices = parse_prices(a->prices, machines);
    std::map<std::string, core::Workload> workloads;
    for (const Machine& m : machines) {
      const std::string& path = m.workload.empty() ? workload : m.workload;
      if (path.empty()) {
        throw core::UsageError(a->file.empty()
                                   ? fmt::format("--scenarios: '{}' names no workload: give "
                                                 "--workload or SCENARIO:NODES:WORKLOAD",
                                                 m.scenario)
                                   : fmt::format("{}: variant '{}' names no workload: give the "
                                                 "file a 'workload:' or --workload",
                                                 a->file, m.label));
      }
      if (!workloads.contains(path)) {
        workloads.emplace(path, io::load_workload(path));
      }
    }
    std::vector<analysis::CompareEntry> entries;
    for (std::size_t i = 0; i < machines.size(); ++i) {
      const Machine& m = machines[i];
      analysis::CompareEntry e;
      e.label = m.label;
      e.scenario = scenarios.empty() ? io::load_scenario(m.scenario) : scenarios[i];
      apply_stack_options(a->out.stack, e.scenario);
      e.nodes = m.nodes;
      e.workload = &workloads.at(m.workload.empty() ? workload : m.workload);
      e.own_workload = !m.workload.empty();
      if (const auto it = prices.find(m.scenario); it != prices.end()) {
        e.price = it->second;
      } else if (!file_prices.empty()) {
        e.price = file_prices[i];
      }
      entries.push_back(std::move(e));
    }
    const algorithms::Registry registry = algorithms::make_default_registry();
    const auto rows = analysis::compare_machines(entries, registry, a->out.engine, a->out.threads);
    emit(report(rows, steps, a->out.format), a->out.output);
    if (!a->plots.dir.empty()) {
      const std::string subtitle = rows.empty() ? std::string{}
                                                : fmt::format("workload {}; engine {}",
                                                              rows.front().workload, a->out.engine);
      print_written(write_compare_plot(rows, "One step per machine", subtitle, a->plots.dir,
                                       a->plots.format));
    }
  });
}

} // namespace collsim::cli
