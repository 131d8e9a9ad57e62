#include "explorer.hpp"

#include "collsim/analysis/auto_choice.hpp"
#include "collsim/analysis/tune.hpp"
#include "collsim/core/errors.hpp"
#include "collsim/core/layout.hpp"
#include "collsim/core/text.hpp"
#include "collsim/io/imbalance_files.hpp"
#include "collsim/io/presets.hpp"
#include "collsim/io/scenario_loader.hpp"
#include "collsim/io/tuning_formats.hpp"
#include "collsim/topologies/build.hpp"

#include <algorithm>
#include <bit>
#include <charconv>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <set>

namespace collsim::gui {
namespace {

using core::split_trimmed;
using core::trim_blanks;

/// The power of two nearest to `v` on a log scale (at least 1).
std::uint64_t nearest_power_of_two(std::uint64_t v) {
  if (v <= 1) {
    return 1;
  }
  const std::uint64_t lo = std::bit_floor(v);
  if (lo == v || lo > (std::uint64_t{1} << 62)) {
    return lo;
  }
  // v / lo < sqrt(2): the lower power is nearer on a log scale.
  return static_cast<double>(v) / static_cast<double>(lo) < std::sqrt(2.0) ? lo : lo * 2;
}

/// The candidate set and writer of a tuning format.
/// A format of tuning_formats(): the writer, with the Open MPI or MPICH version it names.
struct TuneTarget {
  io::TuningFormat format = io::TuningFormat::table;
  core::OmpiVersion ompi = core::OmpiVersion::v4_1;
  core::MpichVersion mpich = core::MpichVersion::latest;
};

TuneTarget tune_target(std::string_view name) {
  const std::vector<std::string> names = tuning_formats();
  if (std::find(names.begin(), names.end(), name) == names.end()) {
    throw core::UnknownNameError("tuning format", name, names);
  }
  const std::size_t space = name.find(' ');
  TuneTarget t;
  t.format = io::tuning_format_from_name(name.substr(0, space));
  if (space != std::string_view::npos) {
    const std::string_view version = name.substr(space + 1);
    if (t.format == io::TuningFormat::ompi_rules) {
      t.ompi = analysis::ompi_version_from_name(version);
    } else {
      t.mpich = analysis::mpich_version_from_name(version);
    }
  }
  return t;
}

} // namespace

core::Scenario load_preset(const std::string& name) {
  const auto text = io::preset_text(name);
  if (!text) {
    throw core::UnknownNameError("preset", name, io::preset_names());
  }
  return io::parse_scenario(*text, io::preset_file(name));
}

core::Scenario load_scenario_or_preset(const std::string& word) {
  // io::load_scenario reads a file, or a preset when no file has that name; checked first only
  // for a message that lists the presets.
  std::error_code ec;
  if (!std::filesystem::exists(word, ec) && !io::preset_text(word)) {
    throw core::UsageError(fmt::format("'{}' is neither a scenario file nor a preset; the presets "
                                       "are: {}",
                                       word, fmt::join(io::preset_names(), ", ")));
  }
  return io::load_scenario(word);
}

StudyControls default_controls(const core::Scenario& scenario,
                               const algorithms::Registry& registry) {
  StudyControls c;
  if (scenario.studies.empty()) {
    for (const auto* a : registry.list(c.collective)) {
      if (c.algorithms.size() < 4) {
        c.algorithms.push_back(a->name);
      }
    }
    return c;
  }
  const core::StudySpec& s = scenario.studies.front();
  c.collective = s.collective;
  for (const std::string& name : s.algorithms) {
    const auto* a = registry.try_find(s.collective, name);
    const std::string canonical = a != nullptr ? a->name : name;
    if (std::find(c.algorithms.begin(), c.algorithms.end(), canonical) == c.algorithms.end()) {
      c.algorithms.push_back(canonical);
    }
  }
  c.params = params_text(s.params);
  c.engine = s.engine;
  for (const std::string& name : s.stacks) {
    c.stacks += (c.stacks.empty() ? "" : ",") + name;
  }
  std::string ranks;
  for (std::uint32_t p : s.ranks) {
    ranks += (ranks.empty() ? "" : ",") + std::to_string(p);
  }
  if (!ranks.empty()) {
    c.ranks = ranks;
  }
  if (!s.sizes.empty()) {
    const auto [lo, hi] = std::minmax_element(s.sizes.begin(), s.sizes.end());
    c.min_bytes = nearest_power_of_two(lo->value);
    c.max_bytes = std::max(c.min_bytes, nearest_power_of_two(hi->value));
    c.size_count = static_cast<int>(s.sizes.size());
  }
  if (s.counts.kind != core::CountsSpec::Kind::none) {
    c.counts = s.counts.text;
  }
  if (s.skew.kind != core::SkewSpec::Kind::none) {
    c.skew = s.skew.text;
  }
  return c;
}

void check_first_study(const core::Scenario& scenario, const algorithms::Registry& registry) {
  if (scenario.studies.empty()) {
    return;
  }
  const core::StudySpec& s = scenario.studies.front();
  for (std::size_t i = 0; i < s.algorithms.size(); ++i) {
    if (s.algorithms[i] == analysis::kAutoAlgorithm) {
      continue; // the library's own choice, resolved per point
    }
    try {
      (void)registry.find(s.collective, s.algorithms[i]);
    } catch (const core::UnknownNameError& e) {
      const core::SourcePos pos = i < s.algorithm_pos.size() ? s.algorithm_pos[i] : s.pos;
      if (pos.file.empty()) {
        throw;
      }
      throw core::ScenarioError(pos, fmt::format("studies[0].algorithms[{}]", i), e.what());
    }
  }
}

std::map<std::string, std::string> parse_params(std::string_view text) {
  std::map<std::string, std::string> out;
  if (trim_blanks(text).empty()) {
    return out;
  }
  for (std::string_view item : split_trimmed(text, ',')) {
    if (item.empty()) {
      continue;
    }
    const std::size_t eq = item.find('=');
    if (eq == std::string_view::npos) {
      throw core::UsageError(
          fmt::format("parameters: expected NAME=VALUE items separated by commas, got '{}'", item));
    }
    const std::string_view name = trim_blanks(item.substr(0, eq));
    const std::string_view value = trim_blanks(item.substr(eq + 1));
    if (name.empty() || value.empty()) {
      throw core::UsageError(
          fmt::format("parameters: '{}' needs a name and a value (NAME=VALUE)", item));
    }
    out[std::string(name)] = std::string(value);
  }
  return out;
}

std::string params_text(const std::map<std::string, std::string>& params) {
  std::string out;
  for (const auto& [name, value] : params) {
    out += (out.empty() ? "" : ",") + name + "=" + value;
  }
  return out;
}

std::vector<std::uint32_t> parse_rank_list(std::string_view text) {
  std::vector<std::uint32_t> out;
  for (std::string_view word : split_trimmed(text, ',')) {
    if (word.empty()) {
      continue;
    }
    std::uint64_t v = 0;
    const auto [ptr, ec] = std::from_chars(word.data(), word.data() + word.size(), v);
    if (ec != std::errc() || ptr != word.data() + word.size()) {
      throw core::UsageError(
          fmt::format("ranks: expected rank counts separated by commas, got '{}'", word));
    }
    if (v == 0 || v > io::kMaxScenarioRanks) {
      throw core::UsageError(
          fmt::format("ranks: {} is not between 1 and {}", v, io::kMaxScenarioRanks));
    }
    const auto p = static_cast<std::uint32_t>(v);
    if (std::find(out.begin(), out.end(), p) == out.end()) {
      out.push_back(p);
    }
  }
  if (out.empty()) {
    throw core::UsageError("ranks: give at least one rank count, e.g. 8,16,64");
  }
  return out;
}

std::vector<core::Bytes> power_of_two_sizes(core::Bytes min, core::Bytes max, int count) {
  if (!std::has_single_bit(min.value) || !std::has_single_bit(max.value)) {
    throw core::UsageError(fmt::format("sizes: {} and {} must be powers of two",
                                       core::format_bytes(min), core::format_bytes(max)));
  }
  if (min > max) {
    throw core::UsageError(fmt::format("sizes: the smallest size ({}) is above the largest ({})",
                                       core::format_bytes(min), core::format_bytes(max)));
  }
  if (count < 1) {
    throw core::UsageError("sizes: the number of sizes must be at least 1");
  }
  const int lo = std::countr_zero(min.value);
  const int hi = std::countr_zero(max.value);
  std::vector<core::Bytes> out;
  if (count == 1 || lo == hi) {
    out.push_back(min);
    return out;
  }
  for (int i = 0; i < count; ++i) {
    // Integer rounding of lo + i (hi - lo) / (count - 1): exact at both ends.
    const int e = lo + ((hi - lo) * i * 2 + (count - 1)) / (2 * (count - 1));
    const core::Bytes b{std::uint64_t{1} << e};
    if (out.empty() || out.back() != b) {
      out.push_back(b);
    }
  }
  return out;
}

core::StudySpec make_study(const StudyControls& controls) {
  if (controls.algorithms.empty()) {
    throw core::UsageError(
        fmt::format("select at least one {} algorithm", core::to_string(controls.collective)));
  }
  analysis::check_engine(controls.engine);
  core::StudySpec s;
  s.name = "collsim-gui";
  s.collective = controls.collective;
  s.algorithms = controls.algorithms;
  s.params = parse_params(controls.params);
  s.ranks = parse_rank_list(controls.ranks);
  s.sizes = power_of_two_sizes(core::Bytes{controls.min_bytes}, core::Bytes{controls.max_bytes},
                               controls.size_count);
  s.engine = controls.engine;
  if (!controls.counts.empty()) {
    const core::Parsed<core::CountsSpec> c = core::parse_counts_spec(controls.counts);
    if (!c.error.empty()) {
      throw core::UsageError(fmt::format("counts '{}': {}", controls.counts, c.error));
    }
    if (!core::has_counts_variant(controls.collective)) {
      throw core::UsageError(fmt::format("counts: {} has no v-variant (counts apply to "
                                         "allgather, gather, scatter, reduce_scatter and alltoall)",
                                         core::to_string(controls.collective)));
    }
    s.counts = c.value;
    io::load_counts_data(s.counts, "");
  }
  if (!controls.skew.empty()) {
    const core::Parsed<core::SkewSpec> k = core::parse_skew_spec(controls.skew);
    if (!k.error.empty()) {
      throw core::UsageError(fmt::format("skew '{}': {}", controls.skew, k.error));
    }
    s.skew = k.value;
    io::load_skew_data(s.skew, "");
  }
  // Stack names are checked where the study runs (UnknownNameError with the valid names).
  std::string_view rest = controls.stacks;
  while (!rest.empty()) {
    const auto comma = rest.find(',');
    std::string_view name = rest.substr(0, comma);
    while (!name.empty() && name.front() == ' ') {
      name.remove_prefix(1);
    }
    while (!name.empty() && name.back() == ' ') {
      name.remove_suffix(1);
    }
    if (!name.empty()) {
      s.stacks.emplace_back(name);
    }
    rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
  }
  return s;
}

SweepResult compute_sweep(const core::Scenario& base, const analysis::WhatIf& what_if,
                          const core::StudySpec& study, const algorithms::Registry& registry,
                          const analysis::Progress& progress, unsigned threads) {
  const auto start = std::chrono::steady_clock::now();
  SweepResult out;
  out.scenario = analysis::apply_what_if(base, what_if);
  out.study = study;
  out.result = analysis::run_study(out.scenario, out.study, registry, progress, threads);
  out.tables.title = fmt::format("{}: {}", out.scenario.name, core::to_string(study.collective));
  out.tables.rows = out.result.rows;
  out.tables.crossovers = out.result.crossovers;
  std::uint32_t largest = 0;
  for (std::uint32_t p : study.ranks) {
    try {
      out.limits.emplace(p, analysis::busbw_limit(topologies::build(out.scenario.topology, p)));
      largest = std::max(largest, p);
    } catch (const core::Error&) {
      // run_study built every rank count already; a topology that cannot be built has no limit.
    }
  }
  if (const auto it = out.limits.find(largest); it != out.limits.end()) {
    out.tables.limit = it->second;
  }
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return out;
}

SweepCharts sweep_charts(const SweepResult& sweep, std::uint32_t ranks, core::Bytes scaling_bytes) {
  SweepCharts out;
  std::uint32_t shown = ranks;
  if (shown == 0) {
    for (const auto& r : sweep.result.rows) {
      shown = std::max(shown, r.ranks);
    }
  }
  charts::StudyTables at_ranks = sweep.tables;
  if (const auto it = sweep.limits.find(shown); it != sweep.limits.end()) {
    at_ranks.limit = it->second;
  } else {
    at_ranks.limit.reset();
  }
  out.crossover = charts::crossover_chart(at_ranks, shown);
  out.busbw = charts::busbw_chart(at_ranks, shown);
  out.scaling = charts::scaling_chart(sweep.tables, scaling_bytes);
  return out;
}

std::vector<std::string> tuning_formats() {
  return {"table",
          "csv",
          "json",
          "ompi-rules 4.1",
          "ompi-rules 5.0",
          "mpich-json 4.0",
          "mpich-json latest",
          "smpi-cfg",
          "nccl-tuner",
          "ucc-tune"};
}

std::string tuning_file_suffix(std::string_view format) {
  switch (tune_target(format).format) {
  case io::TuningFormat::csv:
  case io::TuningFormat::nccl_tuner: return ".csv";
  case io::TuningFormat::json:
  case io::TuningFormat::mpich_json: return ".json";
  case io::TuningFormat::ompi_rules: return ".rules";
  case io::TuningFormat::smpi_cfg: return ".cfg";
  case io::TuningFormat::table:
  case io::TuningFormat::ucc_tune: break;
  }
  return ".txt";
}

core::TuneTable compute_tuning(const core::Scenario& scenario, const core::StudySpec& study,
                               std::string_view format, const algorithms::Registry& registry,
                               const analysis::Progress& progress, unsigned threads) {
  const TuneTarget target = tune_target(format);
  analysis::TuneOptions options;
  options.collectives = {study.collective};
  options.ranks = study.ranks;
  options.sizes = study.sizes;
  options.engine = study.engine;
  options.root = study.root;
  options.counts = study.counts;
  options.skew = study.skew;
  options.threads = threads;
  options.progress = progress;
  options.candidates = analysis::library_candidates(io::tuning_format_library(target.format),
                                                    target.ompi, target.mpich);
  return analysis::tune(scenario, options, registry);
}

std::string format_tuning(const core::TuneTable& table, std::string_view format) {
  const TuneTarget t = tune_target(format);
  return io::format_tuning(table, t.format, t.ompi, t.mpich);
}

charts::TimelineModel compute_timeline(const core::Scenario& scenario, const core::StudySpec& study,
                                       std::uint32_t ranks, core::Bytes bytes,
                                       const algorithms::Registry& registry) {
  if (study.algorithms.empty()) {
    throw core::UsageError("the timeline needs a selected algorithm");
  }
  core::StudySpec one = study;
  one.algorithms = {study.algorithms.front()};
  one.algorithm_pos.clear();
  one.ranks = {ranks};
  one.sizes = {bytes};
  if (one.engine == "analytic") {
    one.engine = "loggp";
  }
  // Parameters none of this algorithm's take belong to the study's other algorithms; `auto`
  // takes none (the library's choice sets them).
  const bool automatic = one.algorithms.front() == analysis::kAutoAlgorithm;
  const auto* algo = automatic ? nullptr : &registry.find(one.collective, one.algorithms.front());
  std::erase_if(one.params, [&](const auto& kv) {
    return algo == nullptr || std::none_of(algo->params.begin(), algo->params.end(),
                                           [&](const auto& p) { return p.name == kv.first; });
  });
  core::RunOptions options;
  options.timeline = true;
  options.messages = true; // bars over the time data is on the wire (charts::timeline_model)
  const analysis::PointRun run = analysis::run_point(scenario, one, registry, options);
  return charts::timeline_model(
      run, fmt::format("{}: {} {} at {} ranks, {} ({})", scenario.name,
                       core::collective_display_name(one.collective, run.row.varying),
                       automatic ? run.row.params : algo->name, ranks, core::format_bytes(bytes),
                       one.engine));
}

ValidationOutput compute_validation(const core::Scenario& scenario,
                                    const std::vector<analysis::MeasuredPoint>& points,
                                    const std::string& engine, const algorithms::Registry& registry,
                                    unsigned threads) {
  ValidationOutput out;
  analysis::ValidateOptions options;
  options.algorithm = "auto";
  options.engine = analysis::EngineChoice(engine, scenario);
  options.threads = threads;
  out.result = analysis::validate(scenario, points, registry, options);
  const auto& s = out.result.summary;
  out.chart = charts::validation_chart(
      fmt::format("{}: measured against collsim (auto, {})", scenario.name, engine),
      out.result.rows, s);
  out.summary = fmt::format("{} points: median |error| {:.1f} %, p90 |error| {:.1f} %",
                            s.all.points, s.all.median_abs_err_pct, s.all.p90_abs_err_pct);
  if (!out.result.skipped.empty()) {
    out.summary += fmt::format(" ({} skipped)", out.result.skipped.size());
  }
  return out;
}

} // namespace collsim::gui
