// `collsim place` (issue 20; docs/placement.md): where the ranks of a traffic pattern should run
// on a scenario's nodes, the exchange's time before and after, and the mapping as an Open MPI
// rankfile.

#include "cli_support.hpp"
#include "commands.hpp"

#include "collsim/analysis/placement.hpp"
#include "collsim/core/errors.hpp"
#include "collsim/io/scenario_loader.hpp"

#include <fmt/format.h>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <numeric>

namespace collsim::cli {
namespace {

struct Placed {
  std::string label;
  analysis::Mapping mapping;
  double surrogate = 0.0;
  core::Seconds time{0.0};
  std::map<std::string, std::uint64_t> bytes;
};

Placed evaluate(const analysis::PlacementProblem& p, std::string label, analysis::Mapping m) {
  Placed out;
  out.label = std::move(label);
  out.surrogate = analysis::surrogate_seconds(p, m);
  out.time = analysis::simulate_exchange(p, m);
  out.bytes = analysis::bytes_by_link_kind(p, m);
  out.mapping = std::move(m);
  return out;
}

/// The search's mapping when the simulation confirms it is faster than block placement, else
/// block placement: the surrogate ignores links shared by concurrent messages, so a mapping it
/// prefers can run slower.
const Placed& chosen(const std::vector<Placed>& rows) {
  return rows.back().time.value < rows.front().time.value ? rows.back() : rows.front();
}

std::string table(const analysis::PlacementProblem& p, const std::string& scenario,
                  const std::vector<Placed>& rows) {
  std::string t = fmt::format("# collsim place: {} on scenario '{}', {} ranks, engine loggp\n",
                              p.pattern.name, scenario, p.pattern.ranks);
  t += fmt::format("# {:<22} {:>14} {:>14}  bytes per link kind crossed\n", "placement",
                   "exchange (us)", "surrogate (us)");
  for (const Placed& r : rows) {
    std::string kinds;
    for (const auto& [kind, bytes] : r.bytes) {
      kinds += fmt::format("{}{} {}", kinds.empty() ? "" : ", ", kind, bytes);
    }
    t += fmt::format("  {:<22} {:>14.2f} {:>14.2f}  {}\n", r.label, r.time.value * 1e6,
                     r.surrogate * 1e6, kinds);
  }
  const double gain =
      100.0 * (rows.front().time.value - rows.back().time.value) / rows.front().time.value;
  t += gain > 0.0 ? fmt::format("# {} is {:.1f} % faster than {} (simulated exchange): chosen\n",
                                rows.back().label, gain, rows.front().label)
                  : fmt::format("# {} is not faster than {} in the simulated exchange ({:+.1f} %): "
                                "{} is kept\n",
                                rows.back().label, rows.front().label, gain == 0.0 ? 0.0 : -gain,
                                rows.front().label);
  return t;
}

std::string json(const analysis::PlacementProblem& p, const std::string& scenario,
                 const std::vector<Placed>& rows) {
  nlohmann::json j;
  j["scenario"] = scenario;
  j["pattern"] = p.pattern.name;
  j["ranks"] = p.pattern.ranks;
  for (const Placed& r : rows) {
    nlohmann::json e;
    e["placement"] = r.label;
    e["exchange_us"] = r.time.value * 1e6;
    e["surrogate_us"] = r.surrogate * 1e6;
    e["bytes_by_link_kind"] = r.bytes;
    nlohmann::json slots = nlohmann::json::array();
    for (const std::uint32_t s : r.mapping) {
      slots.push_back({{"node", p.node[s]}, {"slot", p.local[s]}});
    }
    e["mapping"] = slots;
    j["placements"].push_back(e);
  }
  j["chosen"] = chosen(rows).label;
  return j.dump(2) + "\n";
}

} // namespace

void add_place(CLI::App& app) {
  struct Args {
    std::string scenario;
    std::string pattern;
    std::string method = "anneal";
    std::uint64_t seed = 1;
    std::uint64_t moves = 0;
    std::string format = "table";
    std::string output;
    std::string rankfile;
  };
  auto a = std::make_shared<Args>();
  auto* cmd = app.add_subcommand(
      "place", "Find where the ranks of a traffic pattern should run on a scenario's nodes: the "
               "exchange before (block placement) and after, and an Open MPI rankfile");
  cmd->add_option("--scenario", a->scenario, "Scenario (file or preset) with a system topology")
      ->required();
  cmd->add_option("--pattern", a->pattern,
                  "halo2d:XxY:BYTES or halo3d:XxYxZ:BYTES[:periodic] (the ranks are the grid's), "
                  "or a CSV file of P rows of P byte counts")
      ->required();
  cmd->add_option("--method", a->method, "greedy, or anneal (greedy, then simulated annealing)")
      ->capture_default_str();
  cmd->add_option("--seed", a->seed, "Seed of the annealing (the result is the same for a seed)")
      ->capture_default_str();
  cmd->add_option("--moves", a->moves, "Annealing moves (default: 2000 x ranks)");
  cmd->add_option("--format", a->format, "table or json")->capture_default_str();
  cmd->add_option("-o,--output", a->output, "Write the table or JSON to this file");
  cmd->add_option("--rankfile", a->rankfile,
                  "Write the placement found as an Open MPI rankfile (mpirun --rankfile FILE, or "
                  "a scenario's placement.rankfile)");
  cmd->callback([a] {
    if (a->format != "table" && a->format != "json") {
      throw core::UnknownNameError("format", a->format, {"table", "json"});
    }
    if (a->method != "greedy" && a->method != "anneal") {
      throw core::UnknownNameError("placement method", a->method, {"greedy", "anneal"});
    }
    const core::Scenario scenario = io::load_scenario(a->scenario);
    analysis::TrafficPattern pattern = a->pattern.rfind("halo", 0) == 0
                                           ? analysis::parse_pattern(a->pattern)
                                           : analysis::read_pattern_csv(a->pattern);
    const analysis::PlacementProblem p =
        analysis::make_placement_problem(scenario, std::move(pattern));
    analysis::Mapping block(p.pattern.ranks);
    std::iota(block.begin(), block.end(), 0U);
    std::vector<Placed> rows{evaluate(p, "block (by core/slot)", block)};
    analysis::Mapping found = analysis::place_greedy(p);
    if (a->method == "anneal") {
      const std::uint64_t moves = a->moves > 0 ? a->moves : 2000ULL * p.pattern.ranks;
      found = analysis::place_anneal(p, std::move(found), a->seed, moves);
    }
    rows.push_back(evaluate(p, a->method, std::move(found)));
    emit(a->format == "json" ? json(p, scenario.name, rows) : table(p, scenario.name, rows),
         a->output);
    if (!a->rankfile.empty()) {
      emit(analysis::ompi_rankfile(p, chosen(rows).mapping), a->rankfile);
      std::cerr << fmt::format("collsim: wrote {}\n", a->rankfile);
    }
  });
}

} // namespace collsim::cli
