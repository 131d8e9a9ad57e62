// `collsim check` (is a measured run healthy: every row within the band of what the scenario
// expects) and `collsim expect` (the expectation itself, as thresholds other tools load);
// docs/health-check.md, issue 19.

#include "cli_support.hpp"
#include "commands.hpp"
#include "validate_support.hpp"

#include "collsim/analysis/health.hpp"
#include "collsim/analysis/workload.hpp"
#include "collsim/core/collective.hpp"
#include "collsim/io/percent.hpp"
#include "collsim/io/scenario_loader.hpp"

#include <cmath>
#include <fmt/format.h>
#include <memory>
#include <nlohmann/json.hpp>

namespace collsim::cli {
namespace {

/// --tolerance: "auto" (-1: the scenario's measured accuracy) or a percentage in [0, 100).
double parse_tolerance(const std::string& text) {
  if (text == "auto") {
    return -1.0;
  }
  const auto value = io::parse_percent(text);
  if (!value || *value >= 100.0) {
    throw core::UsageError(fmt::format(
        "--tolerance: expected auto or a percentage from 0 up to 100 (such as 10 %), got '{}'",
        text));
  }
  return *value;
}

/// Where the band comes from, in words, for the report's header.
std::string tolerance_text(double fixed_pct, const core::Scenario& scenario) {
  if (fixed_pct >= 0.0) {
    return fmt::format("{:g} % (--tolerance)", fixed_pct);
  }
  if (scenario.accuracy.empty()) {
    return "auto: the scenario records no accuracy";
  }
  return fmt::format("auto: how far scenario '{}' was measured to miss, on {}", scenario.name,
                     scenario.accuracy.measured_on.empty() ? std::string("its measured rows")
                                                           : scenario.accuracy.measured_on);
}

/// The size ranges a check needed a band for and the scenario has none.
std::string missing_ranges(const analysis::HealthResult& r) {
  bool below = false;
  bool from = false;
  for (const auto& h : r.rows) {
    if (h.verdict == analysis::Verdict::unjudged) {
      (h.row.measured.bytes.value < (1U << 20) ? below : from) = true;
    }
  }
  return below && from ? "below or from 1 MiB" : below ? "below 1 MiB" : "from 1 MiB";
}

double busbw_gbps(core::CollectiveKind c, std::uint32_t ranks, core::Bytes bytes, double seconds) {
  if (!(seconds > 0.0) || !std::isfinite(seconds)) {
    return 0.0;
  }
  return static_cast<double>(bytes.value) / seconds * core::busbw_factor(c, ranks) / 1e9;
}

/// The verdict as JSON names it (the table's words are for people: SLOW stands out, - is
/// unjudged).
const char* verdict_name(analysis::Verdict v) {
  switch (v) {
  case analysis::Verdict::ok: return "ok";
  case analysis::Verdict::slow: return "slow";
  case analysis::Verdict::fast: return "fast";
  case analysis::Verdict::unjudged: return "unjudged";
  }
  return "unjudged";
}

nlohmann::json band_json(std::optional<double> band) {
  return band ? nlohmann::json(*band) : nlohmann::json(nullptr);
}

/// The slow side of a band, the one health turns on.
std::optional<double> slower(const std::optional<analysis::Band>& band) {
  return band ? std::optional<double>(band->slower_pct) : std::nullopt;
}

/// "7.4" when both sides are equal, else "-7.4/+12.0" (slower / faster), "-" without a band.
std::string band_text(const std::optional<analysis::Band>& band) {
  if (!band) {
    return "-";
  }
  return band->slower_pct == band->faster_pct
             ? fmt::format("{:.1f}", band->slower_pct)
             : fmt::format("-{:.1f}/+{:.1f}", band->slower_pct, band->faster_pct);
}

std::string check_report(const analysis::HealthResult& r, const core::Scenario& scenario,
                         const std::string& engine, const std::string& algorithm, double fixed_pct,
                         const std::string& format) {
  if (format == "json") {
    nlohmann::json rows = nlohmann::json::array();
    for (const auto& h : r.rows) {
      const auto& m = h.row.measured;
      const double predicted = h.row.predicted.value;
      nlohmann::json j{
          {"collective", analysis::operation_name(m)},
          {"ranks", m.ranks},
          {"bytes", m.bytes.value},
          {"algorithm", h.row.algorithm},
          {"measured_us", m.time.value * 1e6},
          {"expected_us", predicted * 1e6},
          {"error_pct", h.row.error_pct},
          {"measured_busbw_gbps", busbw_gbps(m.collective, m.ranks, m.bytes, m.time.value)},
          {"expected_busbw_gbps", busbw_gbps(m.collective, m.ranks, m.bytes, predicted)},
          {"band_slower_pct", band_json(slower(h.band))},
          {"band_faster_pct",
           band_json(h.band ? std::optional<double>(h.band->faster_pct) : std::nullopt)},
          {"verdict", verdict_name(h.verdict)},
          {"file", m.file},
          {"line", m.line}};
      if (h.band) {
        j["slowest_healthy_us"] = analysis::slowest_healthy(predicted, h.band->slower_pct) * 1e6;
      }
      rows.push_back(std::move(j));
    }
    return nlohmann::json{
               {"scenario", scenario.name},
               {"engine", engine},
               {"algorithm", algorithm},
               {"tolerance", fixed_pct >= 0.0 ? nlohmann::json(fixed_pct) : nlohmann::json("auto")},
               {"rows", rows},
               {"ok", r.ok},
               {"slow", r.slow},
               {"fast", r.fast},
               {"unjudged", r.unjudged},
               {"healthy", r.healthy()},
               {"skipped", r.skipped}}
               .dump(2) +
           "\n";
  }
  std::string text =
      fmt::format("# collsim check: scenario '{}', engine {}, algorithm {}\n# tolerance {}\n",
                  scenario.name, engine, algorithm, tolerance_text(fixed_pct, scenario));
  text += fmt::format("# {:>10} {:>6} {:>12} {:>10} {:>10} {:>10} {:>8} {:>8} {:>11} {:<7} {}\n",
                      "collective", "ranks", "size (B)", "measured", "expected", "slowest", "busbw",
                      "expected", "band", "verdict", "source");
  text += fmt::format("# {:>10} {:>6} {:>12} {:>10} {:>10} {:>10} {:>8} {:>8} {:>11}\n", "", "", "",
                      "(us)", "(us)", "ok (us)", "(GB/s)", "(GB/s)", "(%)");
  for (const auto& h : r.rows) {
    const auto& m = h.row.measured;
    const double predicted = h.row.predicted.value;
    const std::string slowest =
        h.band
            ? fmt::format("{:.2f}", analysis::slowest_healthy(predicted, h.band->slower_pct) * 1e6)
            : std::string("-");
    text += fmt::format(
        "  {:>10} {:>6} {:>12} {:>10.2f} {:>10.2f} {:>10} {:>8.2f} {:>8.2f} {:>11} {:<7} {}:{}\n",
        analysis::operation_name(m), m.ranks, m.bytes.value, m.time.value * 1e6, predicted * 1e6,
        slowest, busbw_gbps(m.collective, m.ranks, m.bytes, m.time.value),
        busbw_gbps(m.collective, m.ranks, m.bytes, predicted), band_text(h.band),
        analysis::to_string(h.verdict), m.file, m.line);
  }
  text += fmt::format("#\n# {} rows: {} ok, {} slow, {} fast, {} unjudged: {}\n", r.rows.size(),
                      r.ok, r.slow, r.fast, r.unjudged, r.healthy() ? "healthy" : "NOT HEALTHY");
  if (r.unjudged > 0) {
    text += fmt::format("# unjudged: no band {} (give --tolerance)\n", missing_ranges(r));
  }
  for (const auto& s : r.skipped) {
    text += fmt::format("# skipped: {}\n", s);
  }
  return text;
}

} // namespace

void add_check(CLI::App& app) {
  struct Args {
    std::vector<std::string> logs;
    std::string tolerance = "auto";
    std::string format = "table";
    std::string output;
    PredictionOptions predict;
  };
  auto a = std::make_shared<Args>();
  auto* cmd = app.add_subcommand(
      "check", "Is a measured run healthy? Every row of a log against the time the scenario "
               "expects, within its measured accuracy; exit 0 healthy, 1 not");
  cmd->add_option("log", a->logs, "Measured log (nccl-tests, OSU, IMB); several may be given")
      ->required();
  cmd->add_option("--tolerance", a->tolerance,
                  "auto (how far the scenario's accuracy: section says its predictions were "
                  "measured to miss, per size range) or a percentage such as 10 %")
      ->capture_default_str();
  cmd->add_option("--format", a->format, "table or json")->capture_default_str();
  cmd->add_option("-o,--output", a->output, "Write to this file instead of standard output");
  add_prediction_options(*cmd, a->predict);
  cmd->callback([a] {
    if (a->format != "table" && a->format != "json") {
      throw core::UnknownNameError("format", a->format, {"table", "json"});
    }
    const double fixed = parse_tolerance(a->tolerance);
    const Prediction p = prediction(a->predict);
    const core::Scenario& scenario = p.scenario;
    std::vector<std::string> ignored;
    const auto points = read_points(a->logs, ignored, p.shape);
    const algorithms::Registry registry = algorithms::make_default_registry();
    analysis::ValidationResult v = validate_logs(scenario, points, p.shape, registry, p.validate);
    v.skipped.insert(v.skipped.begin(), ignored.begin(), ignored.end());
    const analysis::HealthResult r = analysis::judge(v, scenario.accuracy, fixed);
    if (r.ok + r.fast + r.slow == 0) {
      throw core::UsageError(
          r.rows.empty()
              ? fmt::format("no row of the log could be predicted on scenario '{}'{}",
                            scenario.name,
                            r.skipped.empty() ? std::string() : " (first: " + r.skipped[0] + ")")
              : fmt::format("scenario '{}' records no accuracy {} (its accuracy: section), so no "
                            "row can be judged: give --tolerance PCT",
                            scenario.name, missing_ranges(r)));
    }
    emit(check_report(r, scenario, a->predict.engine, a->predict.algorithm, fixed, a->format),
         a->output);
    if (!r.healthy()) {
      throw CommandFailed(fmt::format("{} of {} rows slower than expected beyond the band: the "
                                      "run is not healthy",
                                      r.slow, r.rows.size()));
    }
  });
}

void add_expect(CLI::App& app) {
  struct Args {
    std::string scenario;
    std::string collective = "allreduce";
    std::string ranks;
    std::string sizes = "8B:128MiB:x2";
    std::string library;
    std::string tolerance = "auto";
    PrintOptions out;
  };
  auto a = std::make_shared<Args>();
  auto* cmd = app.add_subcommand(
      "expect", "The time and busbw a healthy run should reach per size, with the band and the "
                "busbw floor (table, CSV or JSON thresholds for health checkers)");
  cmd->add_option("--scenario", a->scenario, "Scenario (file or preset) that models the machine")
      ->required();
  cmd->add_option("--collective", a->collective, "Collective")->capture_default_str();
  cmd->add_option("--ranks", a->ranks, "Rank count (one)")->required();
  cmd->add_option("--sizes", a->sizes,
                  "Message sizes: MIN:MAX:xF, MIN:MAX:+STEP or a comma list (nccl-tests' S)")
      ->capture_default_str();
  cmd->add_option("--library", a->library,
                  "Whose choice runs: nccl (nccl-tests) or mpi (OSU, IMB); default nccl on GPU "
                  "ranks, mpi on CPU ranks (a --stack or scenario stack: that stack's choice)");
  cmd->add_option("--tolerance", a->tolerance,
                  "auto (the scenario's measured accuracy) or a percentage such as 10 %")
      ->capture_default_str();
  add_print_options(*cmd, a->out, "table, csv or json");
  cmd->callback([a] {
    const Format format = parse_format(a->out.format);
    analysis::ExpectRequest req;
    req.fixed_pct = parse_tolerance(a->tolerance);
    req.collective = core::collective_from_name(a->collective);
    const auto ranks = parse_ranks(a->ranks, "--ranks");
    if (ranks.size() != 1) {
      throw core::UsageError(
          fmt::format("--ranks: expect takes one rank count, got {}", ranks.size()));
    }
    req.ranks = ranks.front();
    req.sizes = parse_sizes(a->sizes, "--sizes");
    core::Scenario scenario = io::load_scenario(a->scenario);
    apply_stack_options(a->out.stack, scenario);
    if (a->library.empty()) {
      req.library = analysis::default_library(scenario, req.ranks);
    } else if (a->library == "nccl" || a->library == "mpi") {
      req.library = a->library == "nccl" ? analysis::Library::nccl : analysis::Library::mpi;
    } else {
      throw core::UnknownNameError("library", a->library, {"nccl", "mpi"});
    }
    analysis::ValidateOptions opt;
    opt.engine = analysis::EngineChoice(a->out.engine, scenario);
    opt.threads = a->out.threads;
    const algorithms::Registry registry = algorithms::make_default_registry();
    const analysis::ExpectResult r = analysis::expect(scenario, req, registry, opt);
    if (r.rows.empty()) {
      throw core::UsageError(
          fmt::format("scenario '{}' cannot predict any size: {}", scenario.name,
                      r.skipped.empty() ? std::string("no sizes") : r.skipped.front()));
    }
    // Elements as nccl-tests counts them (4-byte floats).
    const auto row_values = [&](const analysis::Expectation& e) {
      const auto& m = e.row.measured;
      const double t = e.row.predicted.value;
      const double busbw = busbw_gbps(m.collective, m.ranks, m.bytes, t);
      struct Values {
        double time_us, algbw, busbw;
        std::optional<double> min_busbw, max_time_us;
      } v{t * 1e6, static_cast<double>(m.bytes.value) / t / 1e9, busbw, std::nullopt, std::nullopt};
      if (e.band) {
        v.min_busbw = busbw * (1.0 - e.band->slower_pct / 100.0);
        v.max_time_us = analysis::slowest_healthy(t, e.band->slower_pct) * 1e6;
      }
      return v;
    };
    const std::string lib = req.library == analysis::Library::nccl ? "nccl" : "mpi";
    std::string text;
    if (format == Format::json) {
      nlohmann::json rows = nlohmann::json::array();
      for (const auto& e : r.rows) {
        const auto v = row_values(e);
        rows.push_back({{"collective", core::to_string(e.row.measured.collective)},
                        {"ranks", e.row.measured.ranks},
                        {"bytes", e.row.measured.bytes.value},
                        {"count", e.row.measured.bytes.value / 4},
                        {"type", "float"},
                        {"algorithm", e.row.algorithm},
                        {"chosen_by", e.row.chosen_by},
                        {"time_us", v.time_us},
                        {"algbw_gbps", v.algbw},
                        {"busbw_gbps", v.busbw},
                        {"band_slower_pct", band_json(slower(e.band))},
                        {"min_busbw_gbps", band_json(v.min_busbw)},
                        {"max_time_us", band_json(v.max_time_us)}});
      }
      text = nlohmann::json{{"scenario", scenario.name},
                            {"library", lib},
                            {"engine", a->out.engine},
                            {"tolerance", req.fixed_pct >= 0.0 ? nlohmann::json(req.fixed_pct)
                                                               : nlohmann::json("auto")},
                            {"rows", rows},
                            {"skipped", r.skipped}}
                 .dump(2) +
             "\n";
    } else if (format == Format::csv) {
      const auto cell = [](std::optional<double> x) {
        return x ? fmt::format("{:.6g}", *x) : std::string();
      };
      text = "collective,ranks,size_bytes,count,type,algorithm,time_us,algbw_gbps,busbw_gbps,"
             "band_slower_pct,min_busbw_gbps,max_time_us\n";
      for (const auto& e : r.rows) {
        const auto v = row_values(e);
        text += fmt::format("{},{},{},{},float,{},{:.6g},{:.6g},{:.6g},{},{},{}\n",
                            core::to_string(e.row.measured.collective), e.row.measured.ranks,
                            e.row.measured.bytes.value, e.row.measured.bytes.value / 4,
                            e.row.algorithm, v.time_us, v.algbw, v.busbw, cell(slower(e.band)),
                            cell(v.min_busbw), cell(v.max_time_us));
      }
    } else {
      const auto show = [](std::optional<double> x) {
        return x ? fmt::format("{:.2f}", *x) : std::string("-");
      };
      text = fmt::format("# collsim expect: scenario '{}', {} {} ranks, {}'s choice, engine {}\n"
                         "# tolerance {}\n",
                         scenario.name, a->collective, req.ranks, lib, a->out.engine,
                         tolerance_text(req.fixed_pct, scenario));
      text += fmt::format("# {:>12} {:>12} {:>6}  {:<40} {:>10} {:>8} {:>8} {:>6} {:>9} {:>10}\n",
                          "size (B)", "count", "type", "algorithm", "time", "algbw", "busbw",
                          "band", "min busbw", "max time");
      text +=
          fmt::format("# {:>12} {:>12} {:>6}  {:<40} {:>10} {:>8} {:>8} {:>6} {:>9} {:>10}\n", "",
                      "(elements)", "", "", "(us)", "(GB/s)", "(GB/s)", "(%)", "(GB/s)", "(us)");
      for (const auto& e : r.rows) {
        const auto v = row_values(e);
        std::string label = e.row.algorithm;
        for (const auto& [name, value] : e.row.params) {
          label += fmt::format(" {}={}", name, value);
        }
        text += fmt::format(
            "  {:>12} {:>12} {:>6}  {:<40} {:>10.2f} {:>8.2f} {:>8.2f} {:>6} {:>9} {:>10}\n",
            e.row.measured.bytes.value, e.row.measured.bytes.value / 4, "float", label, v.time_us,
            v.algbw, v.busbw, e.band ? fmt::format("{:.1f}", e.band->slower_pct) : std::string("-"),
            show(v.min_busbw), show(v.max_time_us));
      }
      for (const auto& s : r.skipped) {
        text += fmt::format("# skipped: {}\n", s);
      }
    }
    emit(text, a->out.output);
  });
}

} // namespace collsim::cli
