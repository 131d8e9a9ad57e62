// `collsim ingest FILE...`: reads measured logs (nccl-tests, OSU micro-benchmarks, IMB-MPI1) and
// prints their measurements in one normalised form, the input of validation and calibration.
// Warnings go to stderr as "file:line: warning: ..."; a log that cannot be read stops the command
// with its error (exit 2). --ranks and --nodes give counts that the logs do not state.

#include "cli_support.hpp"
#include "commands.hpp"

#include "collsim/io/csv_field.hpp"
#include "collsim/io/logs.hpp"

#include <fmt/format.h>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

namespace collsim::cli {
namespace {

/// All logs of one command, with run numbers counted across files.
struct Ingested {
  std::vector<io::ParsedLog> logs;
  std::size_t runs = 0;
  std::size_t measurements = 0;
  std::size_t warnings = 0;
};

std::string collective_name(const std::optional<core::CollectiveKind>& c) {
  return c ? std::string(core::to_string(*c)) : std::string();
}

/// Shortest text that reads back as the same number, so values print as the log wrote them.
std::string number(double v) {
  return fmt::format("{}", v);
}

std::string optional_number(const std::optional<double>& v) {
  return v ? number(*v) : "-";
}

/// One comment line that says what a run is and where its numbers come from.
std::string describe(const io::ParsedLog& log, const io::LogInfo& info, std::size_t run) {
  std::string s =
      fmt::format("# run {}: {}:{}, {}", run + 1, log.file, info.line, io::to_string(info.format));
  if (!info.tool_version.empty()) {
    s += " " + info.tool_version;
  }
  if (!info.benchmark.empty()) {
    s += ", " + info.benchmark;
  }
  s += fmt::format(": {} (from the {})", info.operation, info.operation_source);
  if (info.ranks > 0) {
    s += info.ranks_source == "--ranks"
             ? fmt::format(", {} ranks (--ranks)", info.ranks)
             : fmt::format(", {} ranks (from the {})", info.ranks, info.ranks_source);
  } else {
    s += ", ranks unknown";
  }
  if (info.nodes > 0) {
    s += fmt::format(", {} node{}{}", info.nodes, info.nodes == 1 ? "" : "s",
                     info.nodes_source == "--nodes" ? " (--nodes)" : "");
  }
  for (const auto& gpu : info.gpus) {
    s += ", " + gpu;
  }
  if (!info.nccl_version.empty()) {
    s += ", NCCL " + info.nccl_version;
  }
  if (!info.mpi_version.empty()) {
    s += ", MPI " + info.mpi_version;
  }
  if (!info.accelerator.empty()) {
    s += ", buffers on " + info.accelerator;
  }
  if (!info.buffers.empty()) {
    s += " (" + info.buffers + ")";
  }
  s += fmt::format(", {}, {} rows\n", info.datatype, info.rows);
  if (!info.env.empty()) {
    s += "#   NCCL environment:";
    for (const io::EnvSetting& e : info.env) {
      s += fmt::format(" {}={} (line {})", e.name, e.value, e.line);
    }
    s += "\n";
  }
  if (!info.mca.empty()) {
    s += "#   Open MPI MCA parameters:";
    for (const io::EnvSetting& e : info.mca) {
      s += fmt::format(" {}={} (line {})", e.name, e.value, e.line);
    }
    s += "\n";
  }
  return s;
}

std::string format_table(const Ingested& in) {
  std::string out =
      fmt::format("# collsim ingest: {} file{}, {} run{}, {} measurements, {} warning{}\n",
                  in.logs.size(), in.logs.size() == 1 ? "" : "s", in.runs, in.runs == 1 ? "" : "s",
                  in.measurements, in.warnings, in.warnings == 1 ? "" : "s");
  out += "# time = average per call; min/max over ranks (OSU -f, IMB); bandwidths in GB/s "
         "(10^9 B/s), algbw of OSU/IMB = their MB/s / 1000\n";
  out += "#\n";
  const auto header = [](auto... titles) {
    std::string line = fmt::format("# {:>12}  {:>12}  {:>12}  {:>9}  {:>5}  {:>4}  {:>5}  {:>5}  "
                                   "{:>10}  {:>10}  {:>10}  {:>8}  {:>8}  {:>6}",
                                   titles...);
    line.erase(line.find_last_not_of(' ') + 1);
    return line + "\n";
  };
  out += header("operation", "size", "count", "type", "redop", "root", "ranks", "place", "time",
                "min", "max", "algbw", "busbw", "line");
  out += header("", "(B)", "(elements)", "", "", "", "", "", "(us)", "(us)", "(us)", "(GB/s)",
                "(GB/s)", "");
  std::size_t first_run = 0;
  for (const io::ParsedLog& log : in.logs) {
    for (std::size_t r = 0; r < log.runs.size(); ++r) {
      out += "#\n" + describe(log, log.runs[r], first_run + r);
      for (const io::Measurement& m : log.measurements) {
        if (m.run != r) {
          continue;
        }
        out += fmt::format("  {:>12}  {:>12}  {:>12}  {:>9}  {:>5}  {:>4}  {:>5}  {:>5}  {:>10}  "
                           "{:>10}  {:>10}  {:>8}  {:>8}  {:>6}\n",
                           m.operation, m.bytes, m.count, m.type, m.redop, m.root, m.ranks,
                           m.in_place ? "in" : "out", number(m.time_us),
                           optional_number(m.min_time_us), optional_number(m.max_time_us),
                           number(m.algbw_GBps), number(m.busbw_GBps), m.line);
      }
    }
    first_run += log.runs.size();
  }
  return out;
}

using io::csv_field;

std::string format_csv(const Ingested& in) {
  std::string out = "file,line,run,format,operation,collective,bytes,count,type,redop,root,ranks,"
                    "in_place,time_us,min_time_us,max_time_us,iterations,algbw_GBps,busbw_GBps\n";
  std::size_t first_run = 0;
  for (const io::ParsedLog& log : in.logs) {
    for (const io::Measurement& m : log.measurements) {
      out += fmt::format(
          "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", csv_field(m.file), m.line,
          first_run + m.run + 1, io::to_string(log.format), csv_field(m.operation),
          collective_name(m.collective), m.bytes, m.count, csv_field(m.type), csv_field(m.redop),
          m.root, m.ranks, m.in_place ? "true" : "false", number(m.time_us),
          m.min_time_us ? number(*m.min_time_us) : "", m.max_time_us ? number(*m.max_time_us) : "",
          m.iterations ? fmt::format("{}", *m.iterations) : "", number(m.algbw_GBps),
          number(m.busbw_GBps));
    }
    first_run += log.runs.size();
  }
  return out;
}

nlohmann::ordered_json env_json(const std::vector<io::EnvSetting>& env) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const io::EnvSetting& e : env) {
    out.push_back({{"name", e.name}, {"value", e.value}, {"line", e.line}, {"column", e.column}});
  }
  return out;
}

std::string format_json(const Ingested& in) {
  using Json = nlohmann::ordered_json;
  const auto optional = [](const auto& v) { return v ? Json(*v) : Json(nullptr); };
  Json logs = Json::array();
  Json measurements = Json::array();
  Json warnings = Json::array();
  std::size_t first_run = 0;
  for (const io::ParsedLog& log : in.logs) {
    for (std::size_t r = 0; r < log.runs.size(); ++r) {
      const io::LogInfo& i = log.runs[r];
      logs.push_back({{"run", first_run + r + 1},
                      {"file", log.file},
                      {"line", i.line},
                      {"format", io::to_string(i.format)},
                      {"benchmark", i.benchmark},
                      {"operation", i.operation},
                      {"collective", i.collective ? Json(collective_name(i.collective)) : Json()},
                      {"operation_source", i.operation_source},
                      {"tool_version", i.tool_version},
                      {"nccl_version", i.nccl_version},
                      {"mpi_version", i.mpi_version},
                      {"datatype", i.datatype},
                      {"accelerator", i.accelerator},
                      {"buffers", i.buffers},
                      {"gpus", i.gpus},
                      {"nodes", i.nodes},
                      {"nodes_source", i.nodes_source},
                      {"ranks", i.ranks},
                      {"ranks_source", i.ranks_source},
                      {"command", i.command},
                      {"env", env_json(i.env)},
                      {"mca", env_json(i.mca)},
                      {"out_of_place", i.out_of_place},
                      {"in_place", i.in_place},
                      {"rows", i.rows}});
    }
    for (const io::Measurement& m : log.measurements) {
      measurements.push_back(
          {{"file", m.file},
           {"line", m.line},
           {"run", first_run + m.run + 1},
           {"operation", m.operation},
           {"collective", m.collective ? Json(collective_name(m.collective)) : Json()},
           {"bytes", m.bytes},
           {"count", m.count},
           {"type", m.type},
           {"redop", m.redop},
           {"root", m.root},
           {"ranks", m.ranks},
           {"in_place", m.in_place},
           {"time_us", m.time_us},
           {"min_time_us", optional(m.min_time_us)},
           {"max_time_us", optional(m.max_time_us)},
           {"iterations", optional(m.iterations)},
           {"algbw_GBps", m.algbw_GBps},
           {"busbw_GBps", m.busbw_GBps}});
    }
    for (const io::LogWarning& w : log.warnings) {
      warnings.push_back({{"file", log.file}, {"line", w.line}, {"text", w.text}});
    }
    first_run += log.runs.size();
  }
  Json doc = {{"measurements", std::move(measurements)},
              {"logs", std::move(logs)},
              {"warnings", std::move(warnings)}};
  // Log text may hold bytes that are not UTF-8; they are replaced rather than failing the dump.
  return doc.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

} // namespace

void add_ingest(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "ingest", "Read measured logs (nccl-tests, OSU micro-benchmarks, IMB-MPI1) and print their "
                "measurements in one normalised form");
  struct Args {
    std::vector<std::string> files;
    std::string format = "table";
    std::string output;
    LogShapeOptions shape;
  };
  auto a = std::make_shared<Args>();
  cmd->add_option("files", a->files, "Log files (the format of each is detected)")->required();
  add_log_shape_options(*cmd, a->shape);
  cmd->add_option("--format", a->format, "Output format: table, csv or json")
      ->capture_default_str();
  cmd->add_option("-o,--output", a->output, "Write to this file instead of standard output");
  cmd->callback([a] {
    const Format format = parse_format(a->format);
    const io::LogShape shape = log_shape(a->shape);
    Ingested in;
    for (const std::string& file : a->files) {
      io::ParsedLog log = io::load_log(file);
      io::apply_log_shape(log, shape);
      for (const io::LogWarning& w : log.warnings) {
        std::cerr << io::format_warning(log, w) << '\n';
      }
      in.runs += log.runs.size();
      in.measurements += log.measurements.size();
      in.warnings += log.warnings.size();
      in.logs.push_back(std::move(log));
    }
    const std::string text = format == Format::csv    ? format_csv(in)
                             : format == Format::json ? format_json(in)
                                                      : format_table(in);
    emit(text, a->output);
  });
}

} // namespace collsim::cli
