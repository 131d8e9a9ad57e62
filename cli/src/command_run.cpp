// `collsim run` (every study of a scenario) and `collsim sim` (one ad-hoc study from flags).

#include "cli_support.hpp"
#include "commands.hpp"
#include "plot_support.hpp"

#include "collsim/analysis/simulate.hpp"
#include "collsim/distributed/session.hpp"
#include "collsim/io/chrome_trace.hpp"
#include "collsim/io/imported_algorithms.hpp"
#include "collsim/io/scenario_loader.hpp"
#include "collsim/io/writers.hpp"

#include <fmt/format.h>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>

namespace collsim::cli {
namespace {

struct OutputOptions {
  std::string format = "table";
  std::string output;
  unsigned threads = 0;
  std::string max_memory;
  int links = -1;    ///< most loaded links shown per run; -1: 5 for simgrid studies, else none
  std::string plots; ///< directory for each study's charts (empty: none)
  std::string plot_format = "png"; ///< png or svg
};

void add_output_options(CLI::App* cmd, OutputOptions& o) {
  cmd->add_option("--format", o.format, "Output format: table (like nccl-tests), csv or json")
      ->capture_default_str();
  cmd->add_option("-o,--output", o.output, "Write to this file instead of standard output");
  cmd->add_option(
         "--threads", o.threads,
         "Worker threads for the sweep (0: all cores; under mpirun or srun: 1 per process)")
      ->capture_default_str();
  add_memory_option(*cmd, o.max_memory);
  cmd->add_option("--links", o.links,
                  "Show the N most loaded links of every run (default: 5 with the simgrid "
                  "engine, none with loggp; 0: none)")
      ->check(CLI::Range(0, 1000000));
  cmd->add_option("--plots", o.plots,
                  "Also write each study's charts (crossover, bus bandwidth, scaling) into this "
                  "directory");
  cmd->add_option("--plot-format", o.plot_format,
                  "Format of the --plots charts: png, svg or png,svg")
      ->capture_default_str();
}

/// How many links to show for a study.
int links_shown(const OutputOptions& o, const core::StudySpec& st) {
  if (o.links >= 0) {
    return st.engine == "analytic" ? 0 : o.links;
  }
  return st.engine == "simgrid" ? 5 : 0;
}

/// The most loaded links of each run, as comment lines under the study's table.
std::string format_link_loads(const analysis::StudyResult& r, int shown) {
  std::string out;
  for (std::size_t i = 0; i < r.rows.size() && i < r.link_loads.size(); ++i) {
    const core::ResultRow& row = r.rows[i];
    const auto& links = r.link_loads[i];
    out += fmt::format("#\n# most loaded links: {}, {} ranks, {}, engine {} ({} links carried "
                       "traffic)\n",
                       row.algorithm, row.ranks, core::format_bytes(row.bytes), row.engine,
                       links.size());
    if (links.empty()) {
      out += "#   (none: a full mesh has no shared links)\n";
      continue;
    }
    out += fmt::format("# {:>44}  {:>7}  {:>10}  {:>14}  {:>10}  {:>6}  {:>6}\n", "link", "kind",
                       "bandwidth", "bytes", "busy", "busy", "util");
    out += fmt::format("# {:>44}  {:>7}  {:>10}  {:>14}  {:>10}  {:>6}  {:>6}\n", "", "", "(GB/s)",
                       "(B)", "(us)", "(%)", "(%)");
    for (std::size_t k = 0; k < links.size() && static_cast<int>(k) < shown; ++k) {
      const analysis::LinkReport& l = links[k];
      const double busy_pct =
          row.time.value > 0.0 ? 100.0 * l.load.busy.value / row.time.value : 0.0;
      out += fmt::format("# {:>44}  {:>7}  {:>10.2f}  {:>14}  {:>10.2f}  {:>6.1f}  {:>6.1f}\n",
                         l.label, l.kind, l.bandwidth.bytes_per_second / 1e9, l.load.bytes,
                         l.load.busy.value * 1e6, busy_pct, 100.0 * l.utilization);
    }
  }
  return out;
}

nlohmann::json link_loads_json(const analysis::StudyResult& r, int shown) {
  nlohmann::json out = nlohmann::json::array();
  for (std::size_t i = 0; i < r.rows.size() && i < r.link_loads.size(); ++i) {
    nlohmann::json links = nlohmann::json::array();
    for (std::size_t k = 0; k < r.link_loads[i].size() && static_cast<int>(k) < shown; ++k) {
      const analysis::LinkReport& l = r.link_loads[i][k];
      links.push_back({{"link", l.label},
                       {"kind", l.kind},
                       {"bandwidth_GBps", l.bandwidth.bytes_per_second / 1e9},
                       {"bytes", l.load.bytes},
                       {"messages", l.load.messages},
                       {"busy_us", l.load.busy.value * 1e6},
                       {"utilization", l.utilization}});
    }
    out.push_back({{"algorithm", r.rows[i].algorithm},
                   {"ranks", r.rows[i].ranks},
                   {"bytes", r.rows[i].bytes.value},
                   {"links", std::move(links)}});
  }
  return out;
}

std::string study_title(std::size_t index, const core::StudySpec& st) {
  std::string ranks;
  for (auto p : st.ranks) {
    ranks += fmt::format("{}{}", ranks.empty() ? "" : " ", p);
  }
  return fmt::format("# study {}{}: {} | algorithms: {} | ranks: {} | {} sizes from {} to {} | "
                     "engine: {}",
                     index + 1, st.name.empty() ? "" : fmt::format(" ({})", st.name),
                     core::to_string(st.collective), fmt::join(st.algorithms, ", "), ranks,
                     st.sizes.size(), core::format_bytes(st.sizes.front()),
                     core::format_bytes(st.sizes.back()), st.engine);
}

/// Runs studies and prints them in the chosen format.
void run_and_print(const core::Scenario& scenario, const OutputOptions& o,
                   std::string_view command) {
  const Format format = parse_format(o.format);
  if (!o.plots.empty()) {
    check_plots_available(o.plot_format);
  }
  algorithms::Registry registry = algorithms::make_default_registry();
  io::add_file_algorithms(registry, scenario);
  std::vector<core::ResultRow> all_rows;
  std::vector<analysis::CrossoverRange> all_cross;
  std::string text;
  if (format == Format::table) {
    text += fmt::format("# collsim {}: scenario '{}'{}, topology {}\n", command, scenario.name,
                        scenario.file.empty() ? "" : fmt::format(" ({})", scenario.file),
                        scenario.topology.kind);
  }
  std::vector<std::string> skipped;
  nlohmann::json all_links = nlohmann::json::array();
  // In an MPI job the points of every study are shared by its processes (docs/distributed.md).
  const std::unique_ptr<analysis::Executor> executor =
      distributed::executor(o.threads, parse_memory_option(o.max_memory));
  for (std::size_t i = 0; i < scenario.studies.size(); ++i) {
    const auto& study = scenario.studies[i];
    const int shown = links_shown(o, study);
    const auto result = analysis::run_study(scenario, study, registry,
                                            terminal_progress(fmt::format("study {}", i + 1)),
                                            o.threads, shown > 0, executor.get());
    if (shown > 0) {
      for (auto& j : link_loads_json(result, shown)) {
        all_links.push_back(std::move(j));
      }
    }
    if (format == Format::table) {
      text += "#\n" + study_title(i, study) + "\n";
      text += io::format_table(result.rows);
      if (shown > 0) {
        text += format_link_loads(result, shown);
      }
      for (const auto& s : result.skipped) {
        text += fmt::format("# skipped: {}\n", s);
      }
      text += "#\n# Crossover summary: the fastest algorithm per size range (speedup = runner-up "
              "time / fastest time)\n";
      text += format_crossovers(result.crossovers);
    }
    if (!o.plots.empty() && distributed::primary()) {
      for (const std::string& file :
           write_study_plots(scenario, i, result, o.plots, o.plot_format)) {
        std::cerr << fmt::format("collsim: wrote {}\n", file);
      }
    }
    all_rows.insert(all_rows.end(), result.rows.begin(), result.rows.end());
    all_cross.insert(all_cross.end(), result.crossovers.begin(), result.crossovers.end());
    skipped.insert(skipped.end(), result.skipped.begin(), result.skipped.end());
  }
  if (format == Format::csv) {
    text = io::format_csv(all_rows);
  } else if (format == Format::json) {
    io::JsonExtras extras;
    extras.string_fields.emplace_back("scenario", scenario.name);
    extras.raw_fields.emplace_back("crossovers", crossovers_json(all_cross));
    extras.raw_fields.emplace_back("skipped", nlohmann::json(skipped).dump());
    if (!all_links.empty()) {
      extras.raw_fields.emplace_back("link_loads", all_links.dump());
    }
    text = io::format_json(all_rows, extras);
  }
  emit(text, o.output);
}

/// `--trace`: one run with its timeline, written as a Chrome trace.
void write_trace(const core::Scenario& scenario, const std::string& path) {
  const core::StudySpec& st = scenario.studies.front();
  if (st.algorithms.size() != 1 || st.ranks.size() != 1 || st.sizes.size() != 1) {
    throw core::UsageError(fmt::format(
        "--trace records one run: give one algorithm, one --ranks value and one --sizes value "
        "(got {} algorithms, {} rank counts, {} sizes)",
        st.algorithms.size(), st.ranks.size(), st.sizes.size()));
  }
  core::RunOptions options;
  options.timeline = true;
  options.messages = true;
  algorithms::Registry registry = algorithms::make_default_registry();
  io::add_file_algorithms(registry, scenario);
  const analysis::PointRun run = analysis::run_point(scenario, st, registry, options);
  std::ostringstream text;
  io::write_chrome_trace(text, run.schedule, run.topology, run.result,
                         {st.engine, run.row.algorithm, scenario.name});
  emit(text.str(), path);
}

} // namespace

void add_run(CLI::App& app) {
  auto* cmd =
      app.add_subcommand("run", "Run every study of a scenario (default: scenarios/default.yaml)");
  auto scenario_path = std::make_shared<std::string>();
  auto out = std::make_shared<OutputOptions>();
  auto stack = std::make_shared<StackOptions>();
  cmd->add_option("scenario", *scenario_path, "Scenario YAML file");
  add_stack_options(*cmd, *stack);
  add_output_options(cmd, *out);
  cmd->callback([scenario_path, out, stack] {
    const std::string path = scenario_path->empty() ? default_scenario_path() : *scenario_path;
    core::Scenario scenario = io::load_scenario(path);
    apply_stack_options(*stack, scenario);
    run_and_print(scenario, *out, "run");
  });
}

void add_sim(CLI::App& app) {
  auto* cmd =
      app.add_subcommand("sim", "Simulate algorithms of one collective over rank counts and sizes");
  struct Args {
    std::string scenario;
    std::string collective = "allreduce";
    std::vector<std::string> algorithms;
    std::string ranks = "8";
    std::string sizes = "8B:1GiB:x2";
    std::string engine = "loggp";
    std::uint32_t root = 0;
    std::vector<std::string> params;
    std::string trace;
    std::string counts;
    std::string skew;
    StackOptions stack;
    OutputOptions out;
  };
  auto a = std::make_shared<Args>();
  cmd->add_option("--scenario", a->scenario,
                  "Scenario whose topology to use (default: scenarios/default.yaml)");
  cmd->add_option("--collective", a->collective, "Collective")->capture_default_str();
  cmd->add_option("--algorithm", a->algorithms,
                  "Algorithm name or alias (repeat or comma-separate for several); auto: what the "
                  "library picks (the stack's library; without --stack NCCL on GPUs, else Open "
                  "MPI 4.1), its choice in the params column")
      ->required()
      ->delimiter(',');
  cmd->add_option("--ranks", a->ranks, "Rank counts: 16, 8,16,64, 1..64 or 2..1024:x2")
      ->capture_default_str();
  cmd->add_option("--sizes", a->sizes,
                  "Message sizes: MIN:MAX:xF, MIN:MAX:+STEP or a comma list (B, KiB, MiB, GiB, KB, "
                  "MB, GB)")
      ->capture_default_str();
  cmd->add_option("--engine", a->engine,
                  "Engine: loggp (LogGP, no contention), simgrid (flow-level, contention) or "
                  "analytic (closed forms)")
      ->capture_default_str();
  cmd->add_option("--trace", a->trace,
                  "Write a Chrome trace (JSON for Perfetto or chrome://tracing) of one run: give "
                  "one algorithm, one rank count and one size");
  cmd->add_option("--root", a->root, "Root rank of rooted collectives")->capture_default_str();
  cmd->add_option("--param", a->params, "Algorithm parameter NAME=VALUE (repeatable)");
  cmd->add_option(
      "--counts", a->counts,
      "Per-rank counts of a v-collective: uniform, zipf:S, normal:CV, one:R, "
      "file:PATH, moe:PATH, cart:DxD[,periodic], graph:PATH, sparse:D (docs/imbalance.md)");
  cmd->add_option("--skew", a->skew,
                  "When the ranks arrive: uniform:T, normal:T, late:T[@R], late:T,k=K, "
                  "file:PATH (docs/imbalance.md)");
  add_stack_options(*cmd, a->stack);
  add_output_options(cmd, a->out);
  cmd->callback([a] {
    core::Scenario scenario =
        io::load_scenario(a->scenario.empty() ? default_scenario_path() : a->scenario);
    apply_stack_options(a->stack, scenario);
    core::StudySpec study;
    const CollectiveOptions chosen = parse_collective_options(a->collective, a->counts, a->skew);
    study.collective = chosen.kind;
    study.counts = chosen.counts;
    study.skew = chosen.skew;
    study.algorithms = a->algorithms;
    study.ranks = parse_ranks(a->ranks, "--ranks");
    study.sizes = parse_sizes(a->sizes, "--sizes");
    study.engine = a->engine;
    study.root = a->root;
    study.params = parse_params(a->params);
    for (auto p : study.ranks) {
      if (study.root >= p) {
        throw core::UsageError(
            fmt::format("--root {} does not exist with {} ranks", study.root, p));
      }
    }
    scenario.studies = {study};
    if (!a->trace.empty()) {
      write_trace(scenario, a->trace);
    }
    run_and_print(scenario, a->out, "sim");
  });
}

} // namespace collsim::cli
