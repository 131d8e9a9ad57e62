// `collsim place` (issue 20; docs/placement.md): where the ranks of a traffic pattern should run
// on a scenario's nodes, the exchange's time before and after, and the mapping as a launcher file
// (Open MPI rankfile, MPICH/Hydra machinefile, Slurm hostfile: analysis/placement_launchers.cpp).

#include "cli_support.hpp"
#include "commands.hpp"
#include "plot_support.hpp"

#include "collsim/algorithms/registry.hpp"
#include "collsim/analysis/placement.hpp"
#include "collsim/core/errors.hpp"
#include "collsim/io/placement_study_loader.hpp"
#include "collsim/io/scenario_loader.hpp"
#include "collsim/io/workload_loader.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <numeric>

namespace collsim::cli {
namespace {

std::string table(const analysis::PlacementProblem& p, const std::string& scenario,
                  const std::string& engine, const std::vector<analysis::PlacementOutcome>& rows) {
  std::string t = fmt::format("# collsim place: {} on scenario '{}', {} ranks, engine {}\n",
                              p.pattern.name, scenario, p.pattern.ranks, engine);
  t += fmt::format("# {:<22} {:>14} {:>14} {:>14}  bytes per link class\n", "placement",
                   "simulated (us)", "busiest (us)", "hop-bytes (us)");
  for (const analysis::PlacementOutcome& r : rows) {
    std::string kinds;
    for (const auto& [kind, bytes] : r.bytes) {
      kinds += fmt::format("{}{} {}", kinds.empty() ? "" : ", ", kind, bytes);
    }
    const double busiest = r.hottest.empty() ? 0.0 : r.hottest.front().busy.value;
    t += fmt::format("  {:<22} {:>14.2f} {:>14.2f} {:>14.2f}  {}\n", r.label, r.time.value * 1e6,
                     busiest * 1e6, r.hop_bytes * 1e6, kinds);
  }
  for (const analysis::PlacementOutcome& r : rows) {
    t += fmt::format("# hottest links, {}:\n", r.label);
    for (const analysis::HotLink& h : r.hottest) {
      t += fmt::format("#   {} -> {} ({}): {} B, busy {:.2f} us\n", h.from, h.to, h.kind, h.bytes,
                       h.busy.value * 1e6);
    }
  }
  const double gain =
      100.0 * (rows.front().time.value - rows.back().time.value) / rows.front().time.value;
  t += gain > 0.0 ? fmt::format("# {} is {:.1f} % faster than {} (simulated): chosen\n",
                                rows.back().label, gain, rows.front().label)
                  : fmt::format("# {} is not faster than {} when simulated ({:+.1f} %): "
                                "{} is kept\n",
                                rows.back().label, rows.front().label, gain == 0.0 ? 0.0 : -gain,
                                rows.front().label);
  return t;
}

std::string json(const analysis::PlacementProblem& p, const std::string& scenario,
                 const std::string& engine, const std::vector<analysis::PlacementOutcome>& rows) {
  nlohmann::json j;
  j["scenario"] = scenario;
  j["engine"] = engine;
  j["pattern"] = p.pattern.name;
  j["ranks"] = p.pattern.ranks;
  for (const analysis::PlacementOutcome& r : rows) {
    nlohmann::json e;
    e["placement"] = r.label;
    e["simulated_us"] = r.time.value * 1e6;
    e["hop_bytes_us"] = r.hop_bytes * 1e6;
    e["bytes_by_link_class"] = r.bytes;
    for (const analysis::HotLink& h : r.hottest) {
      e["hottest_links"].push_back({{"from", h.from},
                                    {"to", h.to},
                                    {"kind", h.kind},
                                    {"bytes", h.bytes},
                                    {"busy_us", h.busy.value * 1e6}});
    }
    nlohmann::json slots = nlohmann::json::array();
    for (const std::uint32_t s : r.mapping) {
      slots.push_back({{"node", p.node[s]}, {"slot", p.local[s]}});
    }
    e["mapping"] = slots;
    j["placements"].push_back(e);
  }
  j["chosen"] =
      rows.back().time.value < rows.front().time.value ? rows.back().label : rows.front().label;
  return j.dump(2) + "\n";
}

/// What the command line names as the traffic: a pattern, a workload's step or a collective.
struct PatternArgs {
  std::string pattern;
  std::string workload;
  std::string collective;
  std::string algorithm = "auto";
  std::string bytes;
  std::vector<std::string> params;
  std::uint32_t ranks = 0;
};

/// The traffic `a` names (PatternArgs, or a study's io::PlacementCase: the same fields).
template <typename Args>
analysis::TrafficPattern traffic(const Args& a, const core::Scenario& scenario) {
  const int given = static_cast<int>(!a.pattern.empty()) + static_cast<int>(!a.workload.empty()) +
                    static_cast<int>(!a.collective.empty());
  if (given != 1) {
    throw core::UsageError("give the traffic to place: --pattern, --workload or --collective");
  }
  if (!a.pattern.empty()) {
    if (a.ranks != 0) {
      throw core::UsageError("--ranks goes with --workload or --collective: a pattern has its "
                             "own ranks");
    }
    return a.pattern.rfind("halo", 0) == 0 ? analysis::parse_pattern(a.pattern)
                                           : analysis::read_pattern_csv(a.pattern);
  }
  if (a.ranks < 2) {
    throw core::UsageError(fmt::format("--{} needs --ranks of at least 2",
                                       a.workload.empty() ? "collective" : "workload"));
  }
  const auto registry = algorithms::make_default_registry();
  if (!a.workload.empty()) {
    return analysis::workload_pattern(scenario, io::load_workload(a.workload), a.ranks, registry);
  }
  if (a.bytes.empty()) {
    throw core::UsageError("--collective needs --bytes");
  }
  return analysis::collective_pattern(scenario, core::collective_from_name(a.collective),
                                      a.algorithm, parse_size(a.bytes, "--bytes"), a.ranks,
                                      parse_params(a.params), registry);
}

/// Runs every case of a placement study: a table (or JSON) of block placement against the
/// placement found per case, and the chart.
void run_study(const std::string& path, const std::string& format, const std::string& output,
               const std::string& engine_name, const PlotOptions& plots) {
  const io::PlacementStudySpec study = io::load_placement_study(path);
  std::vector<std::string> labels;
  std::vector<analysis::PlacementResult> results;
  std::string t = fmt::format("# collsim place --study {}: {} ({} cases, engine {})\n", path,
                              study.name, study.cases.size(), engine_name);
  t += fmt::format("# {:<30} {:>6} {:>14} {:>14} {:>8}  method\n", "case", "ranks", "block (us)",
                   "found (us)", "gain");
  nlohmann::json j;
  j["study"] = study.name;
  j["engine"] = engine_name;
  for (std::size_t i = 0; i < study.cases.size(); ++i) {
    const io::PlacementCase& c = study.cases[i];
    std::cerr << fmt::format("collsim: case {}/{}: {}\n", i + 1, study.cases.size(), c.label);
    analysis::PlacementResult r;
    std::uint32_t ranks = 0;
    try {
      const analysis::EngineChoice engine(engine_name, c.scenario);
      const analysis::PlacementProblem p =
          analysis::make_placement_problem(c.scenario, traffic(c, c.scenario));
      ranks = p.pattern.ranks;
      r = analysis::run_placement(p, {c.method, analysis::parse_objective(c.objective), 1, 0},
                                  engine);
    } catch (const core::UsageError& e) {
      throw core::ScenarioError(c.pos, fmt::format("cases[{}]", i),
                                fmt::format("case '{}': {}", c.label, e.what()));
    }
    const double gain = 100.0 * (r.block.time.value - r.chosen().time.value) / r.block.time.value;
    t += fmt::format("  {:<30} {:>6} {:>14.2f} {:>14.2f} {:>7.1f}%  {}{}\n", c.label, ranks,
                     r.block.time.value * 1e6, r.chosen().time.value * 1e6, gain, c.method,
                     &r.chosen() == &r.block ? " (block kept)" : "");
    j["cases"].push_back({{"label", c.label},
                          {"scenario", c.scenario.name},
                          {"ranks", ranks},
                          {"method", c.method},
                          {"block_us", r.block.time.value * 1e6},
                          {"found_us", r.found.time.value * 1e6},
                          {"chosen", r.chosen().label},
                          {"gain_percent", gain}});
    labels.push_back(c.label);
    results.push_back(std::move(r));
  }
  emit(format == "json" ? j.dump(2) + "\n" : t, output);
  if (!plots.dir.empty()) {
    print_written(write_placement_plot(labels, results, study.name,
                                       fmt::format("{}; engine {}", study.description, engine_name),
                                       plots.dir, plots.format));
  }
}

} // namespace

void add_place(CLI::App& app) {
  struct Args : PatternArgs {
    std::string scenario;
    std::string method = "anneal";
    std::uint64_t seed = 1;
    std::uint64_t moves = 0;
    std::string format = "table";
    std::string output;
    std::string rankfile;
    std::vector<std::string> hosts;
    std::string engine = "simgrid";
    std::string objective = "time";
    std::string study;
    PlotOptions plots;
  };
  auto a = std::make_shared<Args>();
  auto* cmd = app.add_subcommand(
      "place", "Find where the ranks of a traffic pattern should run on a scenario's nodes: the "
               "exchange before (block placement) and after, and the mapping for mpirun, "
               "mpiexec or srun");
  auto* scenario_opt = cmd->add_option("--scenario", a->scenario,
                                       "Scenario (file or preset) with a system topology");
  auto* study_opt = cmd->add_option(
      "--study", a->study,
      "A placement study file (docs/placement.md, \"Studies\"): every case's block placement "
      "against the placement found, as a table and (--plots) a chart");
  study_opt->excludes(scenario_opt);
  auto* pattern_opt = cmd->add_option(
      "--pattern", a->pattern,
      "halo2d:XxY:BYTES or halo3d:XxYxZ:BYTES[:periodic] (the ranks are the grid's), or a CSV "
      "file of P rows of P byte counts");
  auto* workload_opt = cmd->add_option(
      "--workload", a->workload,
      "A workload file (docs/workload-format.md): one step's calls as the library runs them, on "
      "--ranks ranks");
  auto* collective_opt =
      cmd->add_option("--collective", a->collective,
                      "A collective's schedule as the pattern (with --bytes, --ranks)");
  pattern_opt->excludes(workload_opt)->excludes(collective_opt);
  workload_opt->excludes(collective_opt);
  cmd->add_option("--algorithm", a->algorithm,
                  "The collective's algorithm (default auto: the library's choice)")
      ->capture_default_str();
  cmd->add_option("--bytes", a->bytes, "The collective's size (nccl-tests convention)");
  cmd->add_option("--param", a->params, "Algorithm parameter NAME=VALUE (repeatable)");
  cmd->add_option("--ranks", a->ranks, "Ranks of the collective or workload");
  std::string methods;
  for (const analysis::PlacementMethod& m : analysis::placement_methods()) {
    methods += fmt::format("{}{} ({})", methods.empty() ? "" : "; ", m.name, m.summary);
  }
  cmd->add_option("--method", a->method, "The search: " + methods)->capture_default_str();
  cmd->add_option("--seed", a->seed, "Seed of the annealing (the result is the same for a seed)")
      ->capture_default_str();
  cmd->add_option("--moves", a->moves, "Annealing moves (default: 2000 x ranks)");
  cmd->add_option("--objective", a->objective,
                  "What annealing minimises: time (congestion: squared busy time of every link, "
                  "messages sharing links) or hop-bytes (every message alone on its route)")
      ->capture_default_str();
  cmd->add_option("--engine", a->engine,
                  "Engine that confirms the placement: simgrid (links shared by concurrent "
                  "messages) or loggp (every message alone on its route)")
      ->capture_default_str();
  cmd->add_option("--format", a->format,
                  "table or json (the report), or the chosen mapping for a launcher: "
                  "ompi-rankfile, mpich-hostfile or slurm (with -o, the table goes to stdout)")
      ->capture_default_str();
  cmd->add_option("-o,--output", a->output, "Write what --format names to this file");
  cmd->add_option(
      "--rankfile", a->rankfile,
      "Also write the chosen mapping as an Open MPI rankfile, as --format "
      "ompi-rankfile does (mpirun --rankfile FILE, or a scenario's placement.rankfile)");
  cmd->add_option("--hosts", a->hosts,
                  "Host names of the nodes for the launcher files, comma-separated, node k on "
                  "host k (default: +nK for Open MPI, placeholders nodeK for MPICH and Slurm)")
      ->delimiter(',');
  add_plot_options(*cmd, a->plots, "the study's chart (with --study)");
  cmd->callback([a] {
    const bool report = a->format == "table" || a->format == "json";
    std::vector<std::string> formats{"table", "json"};
    for (const std::string& f : analysis::launcher_format_names()) {
      formats.push_back(f);
    }
    if (std::find(formats.begin(), formats.end(), a->format) == formats.end()) {
      throw core::UnknownNameError("format", a->format, formats);
    }
    if (!a->hosts.empty() && report && a->rankfile.empty()) {
      throw core::UsageError("--hosts names the hosts of a launcher file: give --format "
                             "ompi-rankfile, mpich-hostfile or slurm, or --rankfile");
    }
    (void)analysis::find_placement_method(a->method);
    const analysis::Objective objective = analysis::parse_objective(a->objective);
    analysis::check_engine(a->engine);
    if (!a->study.empty()) {
      if (!report || !a->rankfile.empty()) {
        throw core::UsageError("--study reports its cases as a table or JSON: launcher files come "
                               "from one placement (--scenario)");
      }
      run_study(a->study, a->format, a->output, a->engine, a->plots);
      return;
    }
    if (a->scenario.empty()) {
      throw core::UsageError("give --scenario (and the traffic to place), or --study");
    }
    if (!a->plots.dir.empty()) {
      throw core::UsageError("--plots draws a study's chart: give --study");
    }
    const core::Scenario scenario = io::load_scenario(a->scenario);
    const analysis::EngineChoice engine(a->engine, scenario);
    const analysis::PlacementProblem p =
        analysis::make_placement_problem(scenario, traffic(*a, scenario));
    const analysis::PlacementResult result =
        analysis::run_placement(p, {a->method, objective, a->seed, a->moves}, engine);
    const std::vector<analysis::PlacementOutcome> rows{result.block, result.found};
    const std::string text = a->format == "json" ? json(p, scenario.name, a->engine, rows)
                                                 : table(p, scenario.name, a->engine, rows);
    const analysis::Mapping& mapping = result.chosen().mapping;
    if (report) {
      emit(text, a->output);
    } else {
      emit(analysis::launcher_file(p, mapping, analysis::parse_launcher_format(a->format),
                                   {a->hosts, a->output}),
           a->output);
      if (!a->output.empty() && a->output != "-") {
        emit(text, ""); // the file went elsewhere: people still see before and after
        std::cerr << fmt::format("collsim: wrote {}\n", a->output);
      }
    }
    if (!a->rankfile.empty()) {
      emit(analysis::ompi_rankfile(p, mapping, {a->hosts, a->rankfile}), a->rankfile);
      std::cerr << fmt::format("collsim: wrote {}\n", a->rankfile);
    }
  });
}

} // namespace collsim::cli
